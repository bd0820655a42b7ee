"""Benchmark: ``cxreval localize`` on 10^4 and 10^5 heatmaps of 32 x 32 -> boxes -> Acc / AFP.

Synthetic, seeded inputs: map ``i`` is a Gaussian blob (random centre, width 1.5-4 cells) plus uniform
noise of 5 % of its peak, float32, keyed ``"<image id>/<finding>"`` (the eight ChestX-ray8 findings in
turn); the reference box of each map is the blob's 2-sigma square in pixels of the 1024 x 1024 image.
The maps are written once into one ``.npz`` (NumPy's ``savez`` layout, stored, as ``np.savez`` writes
it) and a ``BBox_List_2017``-style CSV.

Each measured run is a fresh ``python -m cxreval localize ...`` subprocess started by a fresh wrapper;
recorded: wall time, CPU time (user + system of the command and the processes it waited for), the peak RSS of the largest single process (``getrusage(RUSAGE_CHILDREN).ru_maxrss``
of the wrapper: the command, or its biggest worker), the peak of the whole process tree's summed RSS
(sampled every 50 ms with psutil: command + pool / Dask workers and scheduler), and how many of the
processes it started are still alive one second after it exited (left behind). Compared side by side in one run:

* ``this``: the working tree's ``cxreval`` (streamed maps), with ``--executor serial``, ``process:2``
  and ``dask:local:2``;
* ``base``: another checkout's ``cxreval`` (``--base-src``, e.g. ``/work/main/src``: main's code, which
  loads every map) with its own options.

Outputs of every run are compared with the first run's (``localization.csv`` and ``boxes.csv`` byte for
byte).

Run: ``.venv/bin/python bench/scale_localize.py --sizes 10000,100000 --base-src /work/main/src``
"""

from __future__ import annotations

import argparse
import filecmp
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

import numpy as np

__all__ = ["main", "make_inputs", "run_localize"]

FINDINGS = (
    "Atelectasis",
    "Cardiomegaly",
    "Effusion",
    "Infiltration",
    "Mass",
    "Nodule",
    "Pneumonia",
    "Pneumothorax",
)
IMAGE = 1024
SIDE = 32

_WRAPPER = r"""
import os, resource, subprocess, sys, time, json
try:
    import psutil
except ImportError:
    psutil = None
t0 = time.perf_counter()
env = dict(os.environ, PYTHONPATH=sys.argv[1]) if sys.argv[1] else None
proc = subprocess.Popen(sys.argv[2:], env=env, stdout=subprocess.DEVNULL)
tree, seen = 0.0, {}
while proc.poll() is None:
    if psutil is not None:
        try:
            p = psutil.Process(proc.pid)
            rss = p.memory_info().rss
            for c in p.children(recursive=True):
                try:
                    rss += c.memory_info().rss
                    seen[c.pid] = c
                except psutil.Error:
                    pass
            tree = max(tree, rss / 2**20)
        except psutil.Error:
            pass
    time.sleep(0.05)
wall = time.perf_counter() - t0
time.sleep(1.0)
left = []
for c in seen.values():   # every process the command started, still alive a second after it exited?
    try:
        if c.is_running() and c.status() != psutil.STATUS_ZOMBIE:
            left.append(c.pid)
    except psutil.Error:
        pass
ru = resource.getrusage(resource.RUSAGE_CHILDREN)
print(json.dumps({"rc": proc.returncode, "wall_s": wall, "cpu_s": ru.ru_utime + ru.ru_stime, "tree_rss_mib": tree,
                  "left_behind": len(left), "peak_rss_mib": ru.ru_maxrss / 1024}))
"""


def make_inputs(folder: Path, n: int, *, rng: object = 0, side: int = SIDE) -> tuple[Path, Path]:
    """Write ``maps.npz`` (``n`` maps) and ``boxes.csv`` into ``folder``; return both paths.

    Maps are generated and written in blocks of 4,096, so the generator itself stays small.
    """
    gen = np.random.default_rng(rng)
    folder.mkdir(parents=True, exist_ok=True)
    npz, csv = folder / "maps.npz", folder / "boxes.csv"
    yy, xx = np.mgrid[0:side, 0:side].astype(np.float64)
    cell = IMAGE / side
    with (
        zipfile.ZipFile(npz, "w", compression=zipfile.ZIP_STORED, allowZip64=True) as z,
        open(csv, "w") as fh,
    ):
        fh.write("Image Index,Finding Label,Bbox [x,y,w,h],,,\n")
        for b0 in range(0, n, 4096):
            m = min(4096, n - b0)
            cy = gen.uniform(4, side - 4, m)
            cx = gen.uniform(4, side - 4, m)
            sd = gen.uniform(1.5, 4.0, m)
            noise = gen.uniform(0, 0.05, (m, side, side))
            maps = (
                np.exp(
                    -((yy - cy[:, None, None]) ** 2 + (xx - cx[:, None, None]) ** 2)
                    / (2 * sd[:, None, None] ** 2)
                )
                + noise
            )
            for j in range(m):
                i = b0 + j
                key = f"{i // len(FINDINGS):08d}.png/{FINDINGS[i % len(FINDINGS)]}"
                with z.open(key + ".npy", "w", force_zip64=True) as f:
                    np.lib.format.write_array(f, maps[j].astype(np.float32), allow_pickle=False)
                x0 = max(0.0, (cx[j] + 0.5 - 2 * sd[j]) * cell)
                y0 = max(0.0, (cy[j] + 0.5 - 2 * sd[j]) * cell)
                x1 = min(float(IMAGE), (cx[j] + 0.5 + 2 * sd[j]) * cell)
                y1 = min(float(IMAGE), (cy[j] + 0.5 + 2 * sd[j]) * cell)
                fh.write(
                    f"{key.split('/')[0]},{FINDINGS[i % len(FINDINGS)]},{x0:.1f},{y0:.1f},"
                    f"{x1 - x0:.1f},{y1 - y0:.1f}\n"
                )
    return npz, csv


def run_localize(src: str, npz: Path, csv: Path, out: Path, extra: list[str]) -> dict:
    """One ``cxreval localize`` in a fresh process (``src``: a ``PYTHONPATH`` or '' for this venv)."""
    cmd = [
        sys.executable,
        "-m",
        "cxreval",
        "localize",
        "--heatmaps",
        str(npz),
        "--boxes",
        str(csv),
        "-o",
        str(out),
        "--overwrite",
        *extra,
    ]
    res = subprocess.run(
        [sys.executable, "-c", _WRAPPER, src, *cmd], capture_output=True, text=True, check=True
    )
    return json.loads(res.stdout.strip().splitlines()[-1])


def _same(a: Path, b: Path) -> bool:
    return all(filecmp.cmp(a / f, b / f, shallow=False) for f in ("localization.csv", "boxes.csv"))


def main(argv: list[str] | None = None) -> list[dict]:
    """Run the benchmark; print one line per run and a Markdown table; return the rows."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="10000,100000", help="comma-separated numbers of maps")
    ap.add_argument(
        "--executors",
        default="serial,process:2,dask:local:2",
        help="comma-separated --executor specs for this tree's runs",
    )
    ap.add_argument("--this-src", default="", help="src folder of this code (default: the installed cxreval)")
    ap.add_argument(
        "--base-src", default="", help="src folder of the code to compare with (e.g. /work/main/src)"
    )
    ap.add_argument(
        "--base-options", default="--workers 1", help="options for the base runs, e.g. '--workers 1'"
    )
    ap.add_argument("--base-max", type=int, default=100000, help="largest size the base code runs at")
    ap.add_argument("--workdir", default="", help="where inputs and outputs go (default: a temporary folder)")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    work = Path(args.workdir) if args.workdir else Path(tempfile.mkdtemp(prefix="cxreval-scale-localize-"))
    rows: list[dict] = []
    try:
        for n in [int(s) for s in args.sizes.split(",")]:
            t0 = time.perf_counter()
            npz, csv = make_inputs(work / f"in-{n}", n, rng=args.seed)
            print(
                f"# {n} maps: inputs written in {time.perf_counter() - t0:.1f} s "
                f"({npz.stat().st_size / 2**20:.0f} MiB npz)",
                flush=True,
            )
            first: Path | None = None
            runs = [("this", args.this_src, ["--executor", e]) for e in args.executors.split(",") if e]
            if args.base_src and n <= args.base_max:
                runs.insert(0, ("base", args.base_src, args.base_options.split()))
            for who, src, extra in runs:
                out = work / f"out-{n}-{who}-{'-'.join(extra).replace(':', '_').replace('-', '')}"
                r = run_localize(src, npz, csv, out, extra)
                same = None
                if r["rc"] == 0:
                    if first is None:
                        first = out
                    else:
                        same = _same(first, out)
                row = {"maps": n, "code": who, "options": " ".join(extra), **r, "same_as_first": same}
                rows.append(row)
                print(json.dumps(row), flush=True)
            for d in work.glob(f"out-{n}-*"):
                shutil.rmtree(d, ignore_errors=True)
            shutil.rmtree(work / f"in-{n}", ignore_errors=True)
    finally:
        if not args.workdir:
            shutil.rmtree(work, ignore_errors=True)
    print(
        "\n| maps | code | options | wall (s) | CPU (s) | peak RSS, largest process (MiB) | peak RSS, process tree "
        "(MiB) | left behind | output = first run |\n|---|---|---|---|---|---|---|---|---|"
    )
    for r in rows:
        print(
            f"| {r['maps']:,} | {r['code']} | `{r['options']}` | {r['wall_s']:.1f} | {r['cpu_s']:.1f} | "
            f"{r['peak_rss_mib']:.0f} | "
            f"{r['tree_rss_mib']:.0f} | {r['left_behind']} | "
            f"{'rc ' + str(r['rc']) if r['rc'] else ('first' if r['same_as_first'] is None else r['same_as_first'])} |"
        )
    return rows


if __name__ == "__main__":
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    main()
