"""Peak memory of reading + preparing the inputs of ``cxreval classify`` at MIMIC-CXR-like sizes (issue 18).

Each measurement runs in a fresh process and reports its wall time and peak RSS (``ru_maxrss``): the inputs
(``bench/_scale_data.py``: 20 models × 14 findings, two label sources, ~3.5 studies per patient) are read and
laid out as the arrays the AUC computation uses (``classification._Prepared``), with

* ``new``: :func:`cxreval.classification.prepare_from_files` (one vectorised pass over each file);
* ``old``: the reading of ``cxreval classify`` before issue 18 (``cli.classify.load_inputs`` + ``_prepare``),
  run from a source tree given with ``--old-src`` (e.g. ``git archive 18fd52a src | tar -x -C /tmp/old``).
  It needs ~20 GiB at 228k studies: do not run it above 50k on a shared machine.

Usage::

    python bench/scale_read.py --sizes 10000,50000 --impl new --fmt csv --data /tmp/scale
    python bench/scale_read.py --sizes 10000,50000 --impl both --old-src /tmp/old/src --data /tmp/scale
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _scale_data import write_scale_inputs  # noqa: E402

_CHILD = r"""
import json, resource, sys, time
impl, pred, lab = sys.argv[1], sys.argv[2], sys.argv[3]
t0 = time.perf_counter()
if impl == "new":
    from cxreval.classification import prepare_from_files
    prep = prepare_from_files([pred], [lab], blank_state="missing")
else:
    from cxreval.cli.classify import load_inputs
    from cxreval.classification import _prepare
    p, l, g, _ = load_inputs([pred], [lab], None)
    prep = _prepare(p, l, references=None, findings=None, policy="exclude", not_mentioned="negative",
                    model_groups=None, unlabeled="error")
wall = time.perf_counter() - t0
print(json.dumps({"wall_s": wall, "peak_rss_gib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20,
                  "S_gib": prep.S.nbytes / 2**30, "Y_gib": prep.Y.nbytes / 2**30, "n_studies": len(prep.studies),
                  "n_patients": int(prep.patient_of.nunique())}))
"""


def measure(impl: str, pred: Path, lab: Path, *, old_src: str | None = None) -> dict:
    env = dict(os.environ)
    if impl == "old":
        if not old_src:
            raise SystemExit("--impl old needs --old-src")
        env["PYTHONPATH"] = old_src
    out = subprocess.run([sys.executable, "-c", _CHILD, impl, str(pred), str(lab)], env=env, check=True,
                         capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="10000,50000")
    ap.add_argument("--impl", choices=("new", "old", "both"), default="new",
                    help="both: old then new on each size, with the ratios (side by side in one run).")
    ap.add_argument("--fmt", choices=("csv", "parquet"), default="csv")
    ap.add_argument("--data", default="/tmp/cxreval-scale", help="Folder of the generated inputs (reused).")
    ap.add_argument("--old-src", default=None)
    a = ap.parse_args()
    for n in (int(x) for x in a.sizes.split(",")):
        folder = Path(a.data) / str(n) / a.fmt
        pred, lab = folder / f"predictions.{a.fmt}", folder / f"labels.{a.fmt}"
        if not (pred.exists() and lab.exists()):
            write_scale_inputs(folder, n, fmt=a.fmt)
        res = {}
        for impl in (("old", "new") if a.impl == "both" else (a.impl,)):
            res[impl] = r = measure(impl, pred, lab, old_src=a.old_src)
            print(json.dumps({"impl": impl, "fmt": a.fmt, "studies": n, **r}), flush=True)
        if len(res) == 2:
            print(f"{n} studies ({a.fmt}): peak RSS old/new = {res['old']['peak_rss_gib'] / res['new']['peak_rss_gib']:.1f}x, "
                  f"wall old/new = {res['old']['wall_s'] / res['new']['wall_s']:.1f}x", flush=True)


if __name__ == "__main__":
    main()
