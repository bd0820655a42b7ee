"""Benchmark: what importing each cxreval package costs, and the start-up of the CLI commands.

For every top-level package ``X`` of cxreval: the medians over N fresh interpreters of the total import time
that ``python -X importtime -c "import cxreval.X"`` reports (every module the import loads, numpy and pandas
included, which nearly every package needs) and of the interpreter's CPU time (user + system), and the heavy
dependencies the import loads. Then the median wall and CPU times of ``cxreval CMD --help`` for every command
(what a command loads before it parses its options) and of one ``cxreval synth`` run, beside ``python -c
pass``. On a loaded machine the wall times (import times included) include waiting for a core; the CPU
times do not.

    .venv/bin/python bench/import_time.py [--runs 5]
"""

from __future__ import annotations

import argparse
import json
import os
import pkgutil
import re
import resource
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


def _run(cmd: list[str]) -> tuple[float, float, subprocess.CompletedProcess[str]]:
    """Wall and CPU time (user + system of the child) of one run."""
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    r = subprocess.run(cmd, check=True, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime), r


def _import(name: str) -> tuple[float, float, list[str]]:
    """Total import time (s, the top-level entries of -X importtime) of ``import name``, the CPU time of the
    interpreter, and the heavy modules loaded."""
    code = f"import sys, json, {name}; print(json.dumps([h for h in {HEAVY!r} if h in sys.modules]))"
    _, cpu, r = _run([sys.executable, "-X", "importtime", "-c", code])
    total = sum(int(m.group(1)) for m in map(_LINE.match, r.stderr.splitlines()) if m)
    return total / 1e6, cpu, json.loads(r.stdout)


def _times(cmd: list[str], runs: int) -> str:
    res = [_run(cmd)[:2] for _ in range(runs)]
    return f"{statistics.median(w for w, _ in res):.3f} | {statistics.median(c for _, c in res):.3f}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    names = sorted(m.name for m in pkgutil.iter_modules(cxreval.__path__) if m.name != "__main__")
    print("## Import weight of each package\n")
    print(f"`python bench/import_time.py --runs {args.runs}` (medians of {args.runs} fresh interpreters; load average "
          f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} cores at the start).\n")
    print("| import | import time (s) | CPU (s) | heavy dependencies loaded |\n|---|---:|---:|---|")
    for name in ["numpy", "pandas"] + [f"cxreval.{n}" for n in names]:
        res = [_import(name) for _ in range(args.runs)]
        print(f"| `{name}` | {statistics.median(t for t, _, _ in res):.3f} | "
              f"{statistics.median(c for _, c, _ in res):.3f} | {', '.join(res[0][2]) or '-'} |")
    print("\n| command | wall median (s) | CPU median (s) |\n|---|---:|---:|")
    cli = [sys.executable, "-m", "cxreval"]
    print(f"| `python -c pass` | {_times([sys.executable, '-c', 'pass'], args.runs)} |")
    print(f"| `cxreval --version` | {_times([*cli, '--version'], args.runs)} |")
    for c in COMMANDS:
        print(f"| `cxreval {c} --help` | {_times([*cli, c, '--help'], args.runs)} |")
    with tempfile.TemporaryDirectory() as d:
        synth = [*cli, "synth", "-o", str(Path(d) / "s"), "--overwrite"]
        print(f"| `cxreval synth -o DIR` | {_times(synth, args.runs)} |")


if __name__ == "__main__":
    main()
