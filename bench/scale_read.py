"""Peak memory of reading + preparing the inputs of ``cxreval classify`` at MIMIC-CXR-like sizes.

Each measurement runs in a fresh process and reports its wall time and peak RSS (``ru_maxrss``): the inputs
(``bench/_scale_data.py``: 20 models × 14 findings, two label sources, ~3.5 studies per patient, ~1 % blank
states read as missing) are read and laid out as the arrays the AUC computation uses by
:func:`cxreval.stats.prepare_from_files` (one vectorised pass over each file), with the ``PYTHONPATH``
given (``--src``, default this interpreter's cxreval), so another source tree can be measured side by side.

Usage::

    python bench/scale_read.py --sizes 10000,50000 --fmt csv --data /tmp/scale [--src OTHER/src]
    python bench/run.py scale:read_inputs [--quick]
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
pred, lab = sys.argv[1], sys.argv[2]
t0 = time.perf_counter()
from cxreval.stats import prepare_from_files
prep = prepare_from_files([pred], [lab], blank_state="missing", studies="each")
wall = time.perf_counter() - t0
print(json.dumps({"wall_s": wall, "peak_rss_gib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20,
                  "S_gib": prep.S.nbytes / 2**30, "Y_gib": prep.Y.nbytes / 2**30, "n_studies": len(prep.studies),
                  "n_patients": int(prep.patient_of.nunique())}))
"""


def measure(pred: Path, lab: Path, *, src: str | None = None) -> dict:
    """Read and prepare ``pred`` and ``lab`` in a fresh process (``src`` first on its ``PYTHONPATH``)."""
    env = dict(os.environ)
    if src:
        env["PYTHONPATH"] = src
    out = subprocess.run(
        [sys.executable, "-c", _CHILD, str(pred), str(lab)],
        env=env,
        check=True,
        capture_output=True,
        text=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="10000,50000")
    ap.add_argument("--fmt", choices=("csv", "parquet"), default="csv")
    ap.add_argument("--data", default="/tmp/cxreval-scale", help="Folder of the generated inputs (reused).")
    ap.add_argument(
        "--src", default=None, help="A source tree's src folder to measure instead of this cxreval."
    )
    a = ap.parse_args()
    for n in (int(x) for x in a.sizes.split(",")):
        folder = Path(a.data) / str(n) / a.fmt
        pred, lab = folder / f"predictions.{a.fmt}", folder / f"labels.{a.fmt}"
        if not (pred.exists() and lab.exists()):
            write_scale_inputs(folder, n, fmt=a.fmt)
        print(json.dumps({"fmt": a.fmt, "studies": n, **measure(pred, lab, src=a.src)}), flush=True)


if __name__ == "__main__":
    main()
