"""Show that the demo's localization tables changed only by the one-schema pass (issue 13).

``python bench/compare_localization_schema.py OLD_DEMO NEW_DEMO``: maps the old tables of the demo's two
localization sections into the one localization schema / box schema and compares them exactly with the new:

- ``localization_synthetic/localization.csv``: old ``finding`` ``'<size> boxes'`` -> ``'synthetic <size>'``,
  ``T`` ``'1/10'`` -> 0.1, ``size`` dropped; new columns ``T_iou`` (= T), ``n_boxes`` = ``n_afp`` = ``n_images``,
  ``fp_without_box`` = 0 and ``median_area_fraction`` are checked against what they must be;
- ``localization_synthetic/boxes.csv``: ``size`` -> ``finding`` (``'synthetic <size>'``), new ``study_id``;
- ``localization_real_boxes/localization.csv``: ``localizer`` ``'heatmap bilinear'`` -> ``'heatmap'`` with
  ``upsampling`` ``'bilinear'``; new ``T_iou``, ``hits``, ``false_positives``, ``n_afp``, ``fp_without_box``
  checked (hits = acc * n_boxes, false_positives = afp * n_images).

Exit 0 when every old value is found unchanged in the new table.
"""

from __future__ import annotations

import sys
from fractions import Fraction
from pathlib import Path

import numpy as np
import pandas as pd

__all__ = ["main"]


def _eq(old: pd.DataFrame, new: pd.DataFrame, cols: list[str], what: str) -> list[str]:
    bad = []
    for c in cols:
        a, b = old[c].reset_index(drop=True), new[c].reset_index(drop=True)
        try:
            pd.testing.assert_series_equal(a, b, check_exact=True, check_dtype=False, check_names=False)
        except AssertionError as exc:
            bad.append(f"{what}: column {c!r} differs: {str(exc).splitlines()[0]}")
    return bad


def main(argv: list[str] | None = None) -> int:
    old_dir, new_dir = (Path(a) for a in (argv if argv is not None else sys.argv[1:]))
    problems: list[str] = []
    # synthetic localization.csv
    o = pd.read_csv(old_dir / "localization_synthetic" / "localization.csv", dtype={"threshold": str})
    n = pd.read_csv(new_dir / "localization_synthetic" / "localization.csv", dtype={"threshold": str})
    o = o.assign(finding="synthetic " + o["size"], T=[float(Fraction(t)) for t in o["T"]])
    problems += _eq(o, n, ["variant", "localizer", "upsampling", "threshold", "finding", "rule", "T", "acc", "afp",
                           "hits", "false_positives", "n_images"], "synthetic localization.csv")
    derived = {"T_iou": n["T"], "n_boxes": n["n_images"], "n_afp": n["n_images"], "fp_without_box": 0 * n["hits"]}
    problems += [f"synthetic localization.csv: {c} is not as derived" for c, v in derived.items()
                 if not (n[c].to_numpy() == v.to_numpy()).all()]
    # synthetic boxes.csv
    o = pd.read_csv(old_dir / "localization_synthetic" / "boxes.csv", dtype={"threshold": str})
    n = pd.read_csv(new_dir / "localization_synthetic" / "boxes.csv", dtype={"threshold": str})
    o = o.assign(finding="synthetic " + o["size"])
    problems += _eq(o, n, [c for c in o.columns if c != "size"], "synthetic boxes.csv")
    # real localization.csv
    o = pd.read_csv(old_dir / "localization_real_boxes" / "localization.csv", dtype={"threshold": str})
    n = pd.read_csv(new_dir / "localization_real_boxes" / "localization.csv", dtype={"threshold": str})
    heat = o["localizer"] == "heatmap bilinear"
    o = o.assign(localizer=np.where(heat, "heatmap", o["localizer"]))
    problems += _eq(o, n, list(o.columns), "real localization.csv")
    ok = (np.rint(n["acc"] * n["n_boxes"]) == n["hits"]).all() and (
        np.rint(n["afp"] * n["n_images"]) == n["false_positives"]).all() and (n["T_iou"] == n["T"]).all()
    if not ok:
        problems.append("real localization.csv: hits / false_positives / T_iou are not as derived")
    for p in problems:
        print("DIFF ", p)
    print(f"{len(problems)} difference(s) beyond the declared schema change")
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
