"""Compare the demo's ``chexpert_fusion`` tables before issue 13 (the demo's own schema) with the
``FusionResult`` schema after it, on the rows both hold: ``python bench/compare_fusion_demo.py OLD NEW``.

Before issue 13 the demo fused the CheXpert readers by hand and wrote ``fused_labels`` as
``study_id, finding, state (code), method`` and ``fusion_agreement`` with ``micro``/``macro`` rows and no
``finding_set``; since then it writes the files of ``cxreval fuse`` (``FusionResult``): ``fused_labels`` is a long
label table (``study_id, patient_id, finding, source = fused_<method>, state`` as a name) and ``fusion_agreement``
has ``finding_set`` (macro/micro over the XQA selected findings present, and over all). This script maps the old
rows onto the new ones and checks that every old row is there with the same values: the fused states exactly;
the agreement rows exactly except the per-method ``macro`` means, which may differ by one unit in the last place
(the old demo averaged with pandas' compensated ``groupby().mean()``, compute_agreement with ``np.nanmean``).
Exit status 0 when all hold.
"""

from __future__ import annotations

import sys

import numpy as np
import pandas as pd

__all__ = ["main"]

STATES = {"negative": 0, "uncertain": 1, "positive": 2}


def main(old: str, new: str) -> int:
    ok = True
    for ext, read in ((".csv", pd.read_csv), (".parquet", pd.read_parquet)):
        a = read(f"{old}/chexpert_fusion/fusion_agreement{ext}").set_index(["method", "finding"]).sort_index()
        b = read(f"{new}/chexpert_fusion/fusion_agreement{ext}")
        sets = b["finding_set"].fillna("")
        b = b[sets.isin(["", "all"])].drop(columns="finding_set").set_index(["method", "finding"]).sort_index()
        same_rows = a.index.equals(b.index)
        diff = (a - b).abs() if same_rows else None
        exact = diff is not None and bool((diff.drop(index="macro", level="finding") == 0).all().all())
        macro = diff is not None and bool((diff.xs("macro", level="finding").to_numpy()
                                           <= np.spacing(np.abs(a.xs("macro", level="finding").to_numpy()))).all())
        print(f"fusion_agreement{ext}: {len(a)} old rows found: {same_rows}; per-finding and micro rows equal: "
              f"{exact}; macro rows within 1 ulp: {macro} (max |diff| {float(diff.max().max()) if diff is not None else '-'})")
        fa = read(f"{old}/chexpert_fusion/fused_labels{ext}")
        fb = read(f"{new}/chexpert_fusion/fused_labels{ext}")
        fb = pd.DataFrame({"study_id": fb["study_id"], "finding": fb["finding"],
                           "state": fb["state"].map(STATES), "method": fb["source"].str.removeprefix("fused_")})
        labels_equal = fa.astype({"state": int}).equals(fb.astype({"state": int}))
        print(f"fused_labels{ext}: {len(fa)} rows, same states in the same order: {labels_equal}")
        ok = ok and same_rows and exact and macro and labels_equal
    return 0 if ok else 1


if __name__ == "__main__":
    if len(sys.argv) != 3:
        raise SystemExit(__doc__)
    raise SystemExit(main(sys.argv[1], sys.argv[2]))
