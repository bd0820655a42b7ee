"""Benchmark: start-up time of ``cxreval --version`` and ``cxreval --help`` (issue 17: --version < 0.3 s).

The command modules are imported only when their command runs (or help lists them all), so ``--version``
imports neither pandas nor numpy. Reported: the minimum and median wall time and the median CPU time
(user + system) of N runs of each, beside ``python -c pass`` (the interpreter's own start-up) in the same run.
On a loaded machine the wall time includes waiting for a core; the CPU time does not.

    .venv/bin/python bench/cli_startup.py [--runs 20]
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time


def _times(cmd: list[str], runs: int) -> tuple[list[float], list[float]]:
    """Wall time and CPU time (user + system, of the child) of each run."""
    wall, cpu = [], []
    for _ in range(runs):
        r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        subprocess.run(cmd, check=True, capture_output=True)
        wall.append(time.perf_counter() - t0)
        r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu.append((r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime))
    return wall, cpu


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=20)
    args = ap.parse_args()
    cases = {"python -c pass": [sys.executable, "-c", "pass"],
             "cxreval --version": [sys.executable, "-m", "cxreval", "--version"],
             "cxreval --help (imports every command)": [sys.executable, "-m", "cxreval", "--help"]}
    res = {name: _times(cmd, args.runs) for name, cmd in cases.items()}
    print("## CLI start-up: lazy command import (issue 17)\n")
    load = os.getloadavg()[0]
    print(f"`python bench/cli_startup.py --runs {args.runs}` (`python -m cxreval`, {args.runs} runs each; load "
          f"average {load:.1f} on {os.cpu_count()} cores at the end).\n")
    print("| command | wall min (s) | wall median (s) | CPU median (s) |\n|---|---:|---:|---:|")
    for name, (wall, cpu) in res.items():
        print(f"| {name} | {min(wall):.3f} | {statistics.median(wall):.3f} | {statistics.median(cpu):.3f} |")


if __name__ == "__main__":
    main()
