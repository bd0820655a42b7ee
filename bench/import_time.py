"""Benchmark: what importing each cxreval package costs, and the start-up of the CLI commands.

For every top-level package ``X`` of cxreval: the median over N fresh interpreters of the total import time
that ``python -X importtime -c "import cxreval.X"`` reports (every module the import loads, numpy and pandas
included, which nearly every package needs), and the heavy dependencies the import loads. Then the median wall
time of ``cxreval CMD --help`` for every command (what a command loads before it parses its options) and of
one ``cxreval synth`` run, beside ``python -c pass``. On a loaded machine the times include waiting for a core.

    .venv/bin/python bench/import_time.py [--runs 5]
"""

from __future__ import annotations

import argparse
import json
import os
import pkgutil
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import cxreval

HEAVY = ("scipy.stats", "scipy.ndimage", "scipy.sparse", "scipy.optimize", "scipy.special", "scipy.fft", "skimage",
         "sklearn", "plotly", "torch", "matplotlib", "dask")
COMMANDS = ("classify", "rank", "agree", "fuse", "localize", "synth", "iqa", "label-reports", "predict", "finetune",
            "report", "demo", "data", "reader")
_LINE = re.compile(r"import time:\s+\d+ \|\s+(\d+) \| (\S.*)$")


def _import(name: str) -> tuple[float, list[str]]:
    """Total import time (s, the top-level entries of -X importtime) of ``import name`` and the heavy modules."""
    code = f"import sys, json, {name}; print(json.dumps([h for h in {HEAVY!r} if h in sys.modules]))"
    r = subprocess.run([sys.executable, "-X", "importtime", "-c", code], capture_output=True, text=True, check=True)
    total = sum(int(m.group(1)) for m in map(_LINE.match, r.stderr.splitlines()) if m)
    return total / 1e6, json.loads(r.stdout)


def _wall(cmd: list[str], runs: int) -> float:
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        subprocess.run(cmd, check=True, capture_output=True)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    names = sorted(m.name for m in pkgutil.iter_modules(cxreval.__path__) if m.name != "__main__")
    print("## Import weight of each package\n")
    print(f"`python bench/import_time.py --runs {args.runs}` (medians of {args.runs} fresh interpreters; load average "
          f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} cores at the start).\n")
    print("| import | total import time (s) | heavy dependencies loaded |\n|---|---:|---|")
    for name in ["numpy", "pandas"] + [f"cxreval.{n}" for n in names]:
        res = [_import(name) for _ in range(args.runs)]
        print(f"| `{name}` | {statistics.median(t for t, _ in res):.3f} | {', '.join(res[0][1]) or '-'} |")
    print("\n| command | wall median (s) |\n|---|---:|")
    cli = [sys.executable, "-m", "cxreval"]
    print(f"| `python -c pass` | {_wall([sys.executable, '-c', 'pass'], args.runs):.3f} |")
    print(f"| `cxreval --version` | {_wall([*cli, '--version'], args.runs):.3f} |")
    for c in COMMANDS:
        print(f"| `cxreval {c} --help` | {_wall([*cli, c, '--help'], args.runs):.3f} |")
    with tempfile.TemporaryDirectory() as d:
        synth = [*cli, "synth", "-o", str(Path(d) / "s"), "--overwrite"]
        print(f"| `cxreval synth -o DIR` | {_wall(synth, args.runs):.3f} |")


if __name__ == "__main__":
    main()
