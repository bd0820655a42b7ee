"""Benchmark: ``cxreval predict`` vs a plain TorchXRayVision loop, and memory while streaming many images.

(1) Throughput, CPU, DenseNet-121 at 224 x 224: the same synthetic 8-bit PNGs (512 x 512) and the same
DenseNet-121 weights (fixed random, saved under the file name of ``densenet121-res224-all`` so that both
sides load them through torchxrayvision's own named-weights path) go through

* the plain xrv loop: ``skimage.io.imread`` -> ``xrv.datasets.normalize(img, 255)`` -> ``XRayCenterCrop`` ->
  ``XRayResizer(224)`` -> batches of the same size -> ``model(x)`` under ``torch.no_grad()``;
* ``cxreval.predict.predict`` (read, preprocess, batch, infer, store, write predictions.csv/.parquet).

Both are timed end to end (model loading included), interleaved ``--repeats`` times; the best time of each side
is reported and the scores of both sides are compared.

(2) Memory: peak RSS (``VmHWM`` of a fresh child process, before and after the run) of ``cxreval predict --heatmaps`` over 1,000 and
10,000 synthetic 256 x 256 8-bit images (a small CNN at 16 x 16 input, with CAM heatmaps), batch 64. Streaming means the peak does not grow with the
number of images: only one batch is in memory, batches go to disk at once, and the heatmap ``.npz`` is written
one array at a time.

Run: ``.venv/bin/python bench/predict.py [--n 32] [--repeats 3] [--threads 1] [--skip-rss]``
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import numpy as np
from PIL import Image

TINY = textwrap.dedent("""
    import torch
    from torch import nn

    def build():
        return nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(),
                             nn.Linear(8, 3))
""")

CHILD = textwrap.dedent("""
    import sys, time
    from cxreval.predict import load_model, predict

    def hwm():   # VmHWM: this process's peak RSS in KiB (ru_maxrss would include the parent's across exec)
        with open("/proc/self/status") as fh:
            return int(next(ln for ln in fh if ln.startswith("VmHWM")).split()[1])

    load_model("torch:" + sys.argv[2])            # baseline: python, torch, cxreval and the model loaded
    base = hwm()
    t = time.perf_counter()
    res = predict(sys.argv[1], ["torch:" + sys.argv[2]], out=sys.argv[3], heatmaps=True, batch_size=64)
    dt = time.perf_counter() - t
    print(len(res.predictions), dt, hwm(), base)
""")


def make_images(folder: Path, n: int, size: int, *, rng: int = 0) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    g = np.random.default_rng(rng)
    yy, xx = np.mgrid[0:size, 0:size]
    for i in range(n):
        base = 90 + 60 * np.exp(-(((yy - size / 2) / (size / 3)) ** 2 + ((xx - size / 2) / (size / 4)) ** 2))
        img = np.clip(base + 12 * g.standard_normal((size, size)), 0, 255).astype(np.uint8)
        Image.fromarray(img).save(folder / f"img{i:05d}.png")


def xrv_loop(folder: Path, weights_dir: Path, batch_size: int) -> tuple[float, float, np.ndarray]:
    import skimage.io
    import torch
    import torchvision
    import torchxrayvision as xrv

    t, c = time.perf_counter(), time.process_time()
    model = xrv.models.DenseNet(weights="densenet121-res224-all", cache_dir=str(weights_dir)).eval()
    tf = torchvision.transforms.Compose([xrv.datasets.XRayCenterCrop(), xrv.datasets.XRayResizer(224)])
    paths = sorted(folder.glob("*.png"))
    out = []
    for i in range(0, len(paths), batch_size):
        xs = []
        for p in paths[i : i + batch_size]:
            img = xrv.datasets.normalize(skimage.io.imread(p), 255)
            xs.append(tf(img[None, ...]))
        with torch.no_grad():
            out.append(model(torch.from_numpy(np.stack(xs))).numpy())
    return time.perf_counter() - t, time.process_time() - c, np.concatenate(out)


def cxreval_run(
    folder: Path, weights_dir: Path, out: Path, batch_size: int, workers: int
) -> tuple[float, float, np.ndarray]:
    from cxreval.predict import predict

    t, c = time.perf_counter(), time.process_time()
    res = predict(
        folder,
        ["xrv:densenet121-res224-all"],
        out=out,
        overwrite=True,
        weights_dir=weights_dir,
        download=False,
        batch_size=batch_size,
        workers=workers,
    )
    dt, dc = time.perf_counter() - t, time.process_time() - c
    p = res.predictions
    order = list(dict.fromkeys(p.finding))
    wide = p.pivot(index="study_id", columns="finding", values="score")[order]
    return dt, dc, wide.to_numpy()


def throughput(args: argparse.Namespace, tmp: Path) -> dict[str, float]:
    import torch
    import torchxrayvision as xrv

    imgs = tmp / "imgs224"
    make_images(imgs, args.n, 512)
    wdir = tmp / "weights"
    wdir.mkdir()
    torch.manual_seed(0)
    net = xrv.models.DenseNet(weights=None, num_classes=18)
    with torch.no_grad():
        net.classifier.weight.mul_(2e-3)
    torch.save(net, wdir / os.path.basename(xrv.models.model_urls["densenet121-res224-all"]["weights_url"]))
    t_x, t_c, c_x, c_c = [], [], [], []
    for r in range(args.repeats):
        first_xrv = r % 2 == 0  # alternate the order: neither side always runs first
        for side in ("xrv", "cxreval") if first_xrv else ("cxreval", "xrv"):
            if side == "xrv":
                dt, dc, ref = xrv_loop(imgs, wdir, args.batch_size)
                t_x.append(dt)
                c_x.append(dc)
            else:
                dt, dc, ours = cxreval_run(imgs, wdir, tmp / "out", args.batch_size, args.workers)
                t_c.append(dt)
                c_c.append(dc)
        print(
            f"  repeat {r}: xrv loop {t_x[-1]:.1f} s wall / {c_x[-1]:.1f} s CPU, cxreval {t_c[-1]:.1f} s wall / "
            f"{c_c[-1]:.1f} s CPU",
            flush=True,
        )
    diff = float(np.max(np.abs(ref - ours)))
    bx, bc = min(t_x), min(t_c)
    paired = np.median(np.array(t_x) / np.array(t_c))
    print(
        f"THROUGHPUT n={args.n} batch={args.batch_size} workers={args.workers} torch_threads="
        f"{torch.get_num_threads()} repeats={args.repeats}: best wall time: xrv loop {args.n / bx:.2f} img/s, "
        f"cxreval {args.n / bc:.2f} img/s, ratio cxreval/xrv {bx / bc:.2f}; median of paired ratios "
        f"{paired:.2f}; CPU time: xrv {min(c_x):.1f} s, cxreval {min(c_c):.1f} s, ratio {min(c_x) / min(c_c):.2f}; "
        f"max |score difference| {diff:.2e}"
    )
    return {
        "n": args.n,
        "batch_size": args.batch_size,
        "torch_threads": torch.get_num_threads(),
        "repeats": args.repeats,
        "xrv_img_s": args.n / bx,
        "cxreval_img_s": args.n / bc,
        "ratio": bx / bc,
        "paired_ratio": float(paired),
        "xrv_cpu_s": min(c_x),
        "cxreval_cpu_s": min(c_c),
        "max_abs_diff": diff,
        "torchxrayvision": xrv.__version__ if hasattr(xrv, "__version__") else "",
        "torch": torch.__version__,
    }


def rss(args: argparse.Namespace, tmp: Path) -> list[dict[str, float]]:
    import torch
    import yaml

    arch = tmp / "tiny.py"
    arch.write_text(TINY)
    sys.path.insert(0, str(tmp))
    import tiny  # type: ignore[import-not-found]

    torch.manual_seed(0)
    torch.save(tiny.build().state_dict(), tmp / "tiny.pt")
    (tmp / "tiny.yaml").write_text(
        yaml.safe_dump(
            {
                "name": "tiny",
                "checkpoint": "tiny.pt",
                "architecture": "tiny.py:build",
                "input": {"size": 16, "channels": 1, "normalization": "xrv"},
                "findings": ["Atelectasis", "Effusion", "Mass"],
                "target_layer": "0",
            }
        )
    )
    child = tmp / "child.py"
    child.write_text(CHILD)
    out = []
    for n in getattr(args, "rss_sizes", (1000, 10000)):
        folder = tmp / f"tiny{n}"
        t = time.perf_counter()
        make_images(folder, n, 256, rng=n)  # 64 KiB of pixels each: kept images would show at once
        mk = time.perf_counter() - t
        r = subprocess.run(
            [sys.executable, str(child), str(folder), str(tmp / "tiny.yaml"), str(tmp / f"o{n}")],
            capture_output=True,
            text=True,
            check=True,
        )
        rows, dt, kb, base = r.stdout.split()
        npz = (tmp / f"o{n}" / "heatmaps" / "tiny.npz").stat().st_size
        print(
            f"RSS n={n}: peak RSS {int(kb) / 1024:.0f} MiB (baseline after loading torch and the model "
            f"{int(base) / 1024:.0f} MiB, growth {(int(kb) - int(base)) / 1024:.0f} MiB), {rows} scores, {float(dt):.1f} s "
            f"({n / float(dt):.0f} img/s), heatmaps.npz {npz / 2**20:.1f} MiB (images made in {mk:.1f} s)",
            flush=True,
        )
        out.append(
            {
                "n": n,
                "peak_rss_mib": int(kb) / 1024,
                "baseline_mib": int(base) / 1024,
                "growth_mib": (int(kb) - int(base)) / 1024,
                "scores": int(rows),
                "seconds": float(dt),
                "heatmaps_mib": npz / 2**20,
            }
        )
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=32, help="images for the throughput comparison")
    ap.add_argument("--batch-size", type=int, default=16)
    ap.add_argument("--workers", type=int, default=0, help="cxreval reading threads")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument(
        "--threads",
        type=int,
        default=1,
        help="torch intra-op threads for both sides (1: CPU time is "
        "the work done, not threads spinning on a shared machine)",
    )
    ap.add_argument("--skip-rss", action="store_true")
    ap.add_argument("--skip-throughput", action="store_true")
    args = ap.parse_args()
    import torch

    torch.set_num_threads(args.threads)
    with tempfile.TemporaryDirectory() as t:
        tmp = Path(t)
        if not args.skip_throughput:
            throughput(args, tmp)
        if not args.skip_rss:
            rss(args, tmp)


if __name__ == "__main__":
    main()
