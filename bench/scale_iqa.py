"""Scale bench for ``cxreval iqa score``: one pairs file, every executor, same run.

Synthetic, seeded radiograph-like 16-bit images (smooth anatomy-like structure plus texture) at
``--size``² pixels: ``--n-pairs`` pairs made of ``--n-pairs / 4`` references x 4 degradations (blur, noise,
gamma, blur + noise), written as 16-bit PNG. The command ``cxreval iqa score --metrics all`` is run as a
subprocess once per executor (``serial``, ``process:2``, ``dask:local:2`` by default); for each the wall
time, the peak RSS of the command's own process and the peak of the summed RSS of its whole process tree
(worker processes and a LocalCluster's nanny/scheduler included; psutil, sampled every 0.1 s) are
measured, with the CPU seconds of the whole tree (``RUSAGE_CHILDREN``) and the load average when it started, and the output files (all but run.json) are compared with the serial run's, byte for byte.

Run::

    .venv/bin/python bench/scale_iqa.py                  # 40 pairs of 1024² 16-bit images, all metrics
    .venv/bin/python bench/scale_iqa.py --n-pairs 8 --size 256   # a quick look

It prints a markdown section for ``bench/RESULTS.md``.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np
import pandas as pd
import psutil
from scipy import ndimage

from cxreval.io.images import write_image
from cxreval.iqa import list_metrics, select_metrics

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_v] = "1"  # one thread per process: the executors are the only parallelism


def make_pairs(folder: Path, n_pairs: int, size: int, seed: int = 0) -> Path:
    """``n_pairs`` (reference, test) 16-bit PNG pairs under ``folder``; returns pairs.csv (relative paths)."""
    rng = np.random.default_rng(seed)
    n_refs = -(-n_pairs // 4)
    rows = []
    yy, xx = np.mgrid[0:size, 0:size] / size
    for r in range(n_refs):
        body = np.exp(-(((xx - 0.5) / 0.35) ** 2 + ((yy - 0.55) / 0.45) ** 2))  # a bright thorax-like blob
        lungs = sum(np.exp(-(((xx - cx) / 0.13) ** 2 + ((yy - 0.5) / 0.3) ** 2)) for cx in (0.33, 0.67))
        texture = ndimage.gaussian_filter(rng.normal(size=(size, size)), 2 + r % 3)
        x = 0.25 + 0.5 * body - 0.3 * lungs + 0.04 * texture / texture.std()
        x = np.clip((x - x.min()) / (x.max() - x.min()), 0, 1)
        write_image(folder / f"ref{r}.png", x, data_range=1.0, dtype="uint16")
        tests = [
            ndimage.gaussian_filter(x, 1.5),
            x + rng.normal(0, 0.03, x.shape),
            x**1.4,
            ndimage.gaussian_filter(x, 0.8) + rng.normal(0, 0.01, x.shape),
        ]
        for k, t in enumerate(tests):
            if len(rows) == n_pairs:
                break
            write_image(folder / f"ref{r}_d{k}.png", np.clip(t, 0, 1), data_range=1.0, dtype="uint16")
            rows.append({"reference": f"ref{r}.png", "test": f"ref{r}_d{k}.png"})
    p = folder / "pairs.csv"
    pd.DataFrame(rows).to_csv(p, index=False)
    return p


def _tree_rss(proc: psutil.Process) -> tuple[int, int]:
    """(RSS of ``proc``, summed RSS of ``proc`` and all its descendants), bytes."""
    try:
        own = proc.memory_info().rss
        total = own
        for c in proc.children(recursive=True):
            try:
                total += c.memory_info().rss
            except psutil.Error:
                pass
        return own, total
    except psutil.Error:
        return 0, 0


def run(pairs: Path, out: Path, executor: str) -> dict[str, float]:
    cmd = [
        sys.executable,
        "-m",
        "cxreval",
        "iqa",
        "score",
        "--pairs",
        str(pairs),
        "--metrics",
        "all",
        "--executor",
        executor,
        "-o",
        str(out),
    ]
    load = os.getloadavg()[0]
    ru0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    ps = psutil.Process(p.pid)
    peak = [0, 0]
    stop = threading.Event()

    def sample() -> None:
        while not stop.is_set():
            own, total = _tree_rss(ps)
            peak[0], peak[1] = max(peak[0], own), max(peak[1], total)
            time.sleep(0.1)

    th = threading.Thread(target=sample, daemon=True)
    th.start()
    _, err = p.communicate()
    wall = time.perf_counter() - t0
    stop.set()
    th.join()
    ru1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    if p.returncode != 0:
        raise SystemExit(f"{executor}: exit {p.returncode}\n{err}")
    cpu = (ru1.ru_utime - ru0.ru_utime) + (ru1.ru_stime - ru0.ru_stime)  # the whole (reaped) process tree
    return {
        "wall_s": wall,
        "cpu_s": cpu,
        "load": load,
        "rss_main_mib": peak[0] / 2**20,
        "rss_tree_mib": peak[1] / 2**20,
    }


def _files(folder: Path) -> dict[str, bytes]:
    return {f.name: f.read_bytes() for f in sorted(folder.iterdir()) if f.name != "run.json"}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n-pairs", type=int, default=40)
    ap.add_argument("--size", type=int, default=1024)
    ap.add_argument("--executors", default="serial,process:2,dask:local:2")
    args = ap.parse_args()
    selection = select_metrics("all")
    names, skipped = list(selection.names), list(selection.skipped)
    with tempfile.TemporaryDirectory(prefix="cxreval-scale-iqa-") as tmp:
        d = Path(tmp)
        (d / "img").mkdir()
        pairs = make_pairs(d / "img", args.n_pairs, args.size)
        rows, first = [], None
        for ex in args.executors.split(","):
            res = run(pairs, d / ex.replace(":", "_"), ex)
            files = _files(d / ex.replace(":", "_"))
            first = files if first is None else first
            res["identical"] = files == first
            rows.append({"executor": ex, **res})
            print(f"{ex}: {res}", file=sys.stderr, flush=True)
        n_scores = len(pd.read_csv(d / args.executors.split(",")[0].replace(":", "_") / "scores.csv"))
    base = rows[0]["wall_s"]
    load = os.getloadavg()
    print("## Scale: iqa score\n")
    print(
        f"`.venv/bin/python bench/scale_iqa.py --n-pairs {args.n_pairs} --size {args.size}`: "
        f"{args.n_pairs} pairs of synthetic seeded {args.size}x{args.size} 16-bit PNGs, `cxreval iqa score "
        f"--metrics all` ({len(names)} metrics: {', '.join(names)}; skipped, need weights: "
        f"{', '.join(skipped)}; {n_scores} scores) as a subprocess per executor, same run, one BLAS thread per "
        f"process. RSS: peak of the command's own process, and peak of the summed RSS of its process tree "
        f"(workers, LocalCluster nanny and scheduler included), psutil every 0.1 s. The machine has "
        f"{os.cpu_count()} cores shared by ~7 engineers working at the same time (load average at the end "
        f"{load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f}), so the wall times and speed-ups are noisy lower "
        "bounds of what a quiet machine gives.\n"
    )
    print(
        "| executor | wall s | speed-up vs serial | CPU s (process tree) | cores used (CPU s / wall s) | "
        "load average at start | peak RSS, command MiB | peak RSS, process tree MiB | output == serial (bytes) |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(
            f"| {r['executor']} | {r['wall_s']:.1f} | {base / r['wall_s']:.2f} | {r['cpu_s']:.0f} | "
            f"{r['cpu_s'] / r['wall_s']:.2f} | {r['load']:.1f} | {r['rss_main_mib']:.0f} | "
            f"{r['rss_tree_mib']:.0f} | {'yes' if r['identical'] else 'NO'} |"
        )
    print(
        f"\nPairs are streamed in blocks of 32 (the command holds one block's scores, never the images of "
        f"all pairs); each worker reads its own two images per pair. Registered metrics: {len(list_metrics())}."
    )


if __name__ == "__main__":
    main()
