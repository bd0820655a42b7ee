"""Benchmark: the cost of atomic output folders + run.json on the demo (issue 17: < 5 %).

Two ways of writing the same demo, alternated (ABBA order) so that drift on a shared machine hits both alike:

- ``in place``: ``run_demo(out)`` writes its section folders and report.html straight into ``out`` (what every
  command did before issue 17);
- ``atomic``: what ``cxreval demo`` does now: ``output_folder(out)`` (path checks, lock, temporary sibling
  folder) around ``run_demo(tmp)``, then run.json (file list) and the rename into place.

Reported: median wall time of each and their ratio (end to end, noisy on a loaded machine), and, measured
directly inside the atomic runs, the output layer's own time (everything ``output_folder`` does before and
after the demo's body) as a fraction of the whole run -- the overhead the acceptance criterion is about.

Run (needs the shared data mirror and ``cxreval data fetch``)::

    .venv/bin/python bench/atomic_outputs.py [--repeats 2] [--n-resamples 200] [--sections a,b]

It prints a markdown section for ``bench/RESULTS.md``.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from cxreval.datasets.mirror import default_mirror
from cxreval.demo import SECTIONS, run_demo
from cxreval.outputs import output_folder


def _in_place(out: Path, kw: dict) -> dict:
    t0 = time.perf_counter()
    run_demo(out, **kw)
    return {"wall": time.perf_counter() - t0, "layer": 0.0}


def _atomic(out: Path, kw: dict) -> dict:
    t0 = time.perf_counter()
    with output_folder(out, overwrite=False, argv=["bench"]) as d:
        t1 = time.perf_counter()
        run_demo(d, **kw)
        t2 = time.perf_counter()
    t3 = time.perf_counter()
    return {"wall": t3 - t0, "layer": (t1 - t0) + (t3 - t2), "n_files": sum(1 for p in out.rglob("*") if p.is_file())}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=2, help="ABBA blocks (each runs both modes twice).")
    ap.add_argument("--n-resamples", type=int, default=200)
    ap.add_argument("--sections", default=None, help="Comma-separated demo sections (default all).")
    args = ap.parse_args()
    sections = args.sections.split(",") if args.sections else None
    kw = dict(data_mirror=default_mirror(None), n_resamples=args.n_resamples, rng=0, download=False,
              sections=sections)
    root = Path(tempfile.mkdtemp(prefix="cxreval-bench-atomic-"))
    runs: dict[str, list[dict]] = {"in place": [], "atomic": []}
    try:
        k = 0
        for _ in range(args.repeats):
            for mode in ("in place", "atomic", "atomic", "in place"):
                k += 1
                out = root / f"run{k}"
                runs[mode].append((_in_place if mode == "in place" else _atomic)(out, kw))
                shutil.rmtree(out)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    med = {m: statistics.median(r["wall"] for r in rs) for m, rs in runs.items()}
    layer = [r["layer"] / r["wall"] for r in runs["atomic"]]
    n_files = runs["atomic"][0]["n_files"]
    print("## Atomic outputs + run.json: overhead on the demo (issue 17)\n")
    print(f"`python bench/atomic_outputs.py --repeats {args.repeats} --n-resamples {args.n_resamples}"
          + (f" --sections {args.sections}" if args.sections else "") + "`; sections: "
          + ", ".join(sections or [k for k, _, _ in SECTIONS]) + f"; {n_files} files per run; ABBA order, "
          f"{len(runs['atomic'])} runs per mode.\n")
    mins = {m: min(r["wall"] for r in rs) for m, rs in runs.items()}
    print("| mode | min wall (s) | median wall (s) | runs in order (s) |\n|---|---:|---:|---|")
    for m, rs in runs.items():
        walls = ", ".join(f"{r['wall']:.2f}" for r in rs)
        print(f"| {m} | {mins[m]:.2f} | {med[m]:.2f} | {walls} |")
    spread = max(max(r["wall"] for r in rs) / min(r["wall"] for r in rs) for rs in runs.values())
    print(f"\n- end to end: atomic / in place = {mins['atomic'] / mins['in place']:.3f} (min), "
          f"{med['atomic'] / med['in place']:.3f} (median); the same mode varied by up to {spread:.2f}x between "
          "runs here, so the end-to-end ratio only bounds the overhead loosely")
    print(f"- output layer's own time (checks, lock, temp folder, run.json, rename), measured inside the atomic runs: "
          f"{1000 * statistics.median(r['layer'] for r in runs['atomic']):.1f} ms median = "
          f"{100 * max(layer):.3f} % of the run at most (acceptance: < 5 %)")


if __name__ == "__main__":
    main()
