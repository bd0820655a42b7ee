"""Predict: ``cxreval.predict.predict`` beside a plain TorchXRayVision loop, and memory while streaming images.

Needs torch and torchxrayvision (not cxreval's core dependencies): in this interpreter or one given with
``--peer-python``; without them the parts record the peer as unavailable. Weights are fixed random (no download).
"""

from __future__ import annotations

import argparse
import os
import time

from suites._common import (
    SHARED,
    Context,
    Figures,
    Part,
    Peer,
    bench_module,
    missing,
    module_version,
    peer_unavailable,
)

TITLE = "Predict: inference on radiographs"

__all__ = ["PARTS", "TITLE"]


def _torch_missing(module: str) -> Figures | None:
    try:
        __import__(module)
    except ImportError:
        p = peer_unavailable(module, module)
        return Figures(peer=p, unavailable=p.unavailable)
    return None


def throughput(ctx: Context) -> Figures:
    fig = _torch_missing("torchxrayvision")
    if fig:
        return fig
    import torch

    torch.set_num_threads(1)
    b = bench_module("predict")
    args = argparse.Namespace(n=ctx.size(16, 32), batch_size=16, workers=0, repeats=ctx.size(1, 3))
    r = b.throughput(args, ctx.tmp)
    fig = Figures(peer=Peer("torchxrayvision loop", f"{r['torchxrayvision']} (torch {r['torch']})"))
    t = fig.table(
        f"DenseNet-121 at 224 x 224 on {r['n']} synthetic 512 x 512 PNGs, batch {r['batch_size']}, "
        f"{r['torch_threads']} torch thread(s), best of {r['repeats']}",
        ["side", "images/s", "CPU s"],
    )
    t.add("torchxrayvision loop", round(r["xrv_img_s"], 2), round(r["xrv_cpu_s"], 1))
    t.add("cxreval predict", round(r["cxreval_img_s"], 2), round(r["cxreval_cpu_s"], 1))
    t.notes.append(
        f"max |score difference| {r['max_abs_diff']:.1e}; median of paired wall-time ratios "
        f"{r['paired_ratio']:.2f}"
    )
    fig.ratios["xrv loop s / cxreval s"] = r["ratio"]
    fig.checked["scores equal to 1e-5"] = str(r["max_abs_diff"] <= 1e-5)
    return fig


def streaming_rss(ctx: Context) -> Figures:
    fig = _torch_missing("torch")
    if fig:
        return fig
    b = bench_module("predict")
    args = argparse.Namespace(rss_sizes=ctx.size((100, 400), (1000, 10000)))
    rows = b.rss(args, ctx.tmp)
    fig = Figures()
    t = fig.table(
        "`cxreval predict --heatmaps`, a small CNN at 16 x 16 with CAM heatmaps, batch 64, 256 x 256 "
        "images: peak RSS of a fresh process",
        [
            "images",
            "peak RSS MiB",
            "after loading torch + model MiB",
            "growth MiB",
            "images/s",
            "heatmaps.npz MiB",
        ],
    )
    for r in rows:
        t.add(
            r["n"],
            round(r["peak_rss_mib"]),
            round(r["baseline_mib"]),
            round(r["growth_mib"]),
            round(r["n"] / r["seconds"]),
            round(r["heatmaps_mib"], 1),
        )
        fig.checked[f"{r['n']} images | scores"] = str(r["scores"])
    t.notes.append("streaming: the peak does not grow with the number of images")
    return fig


def finetune(ctx: Context) -> Figures:
    fig = _torch_missing("torchvision")
    if fig:
        return fig
    images = SHARED / "images" / "nih"
    why = missing(images)
    if why:
        return Figures(unavailable=why)
    import torch

    from cxreval.datasets import nih
    from cxreval.findings import CHESTXRAY8
    from cxreval.labels import write_labels
    from cxreval.predict import finetune as run_finetune
    from cxreval.predict import predict

    device = "cuda" if torch.cuda.is_available() else "cpu"
    n, size, batch = ctx.size(8, 39), ctx.size(128, 1024), 4
    ids = sorted(p.name for p in images.glob("*.png"))[:n]
    (ctx.tmp / "imgs").mkdir()
    for i in ids:
        (ctx.tmp / "imgs" / i).symlink_to(images / i)
    try:
        lab = nih.load_labels().table
    except Exception as exc:
        return Figures(unavailable=f"data unavailable: {exc} (run `cxreval data fetch`)")
    write_labels(lab[lab.study_id.isin(ids) & lab.finding.isin(CHESTXRAY8)], ctx.tmp / "labels.parquet")
    w0, c0 = time.perf_counter(), time.process_time()
    res = run_finetune(
        ctx.tmp / "imgs",
        ctx.tmp / "labels.parquet",
        out=ctx.tmp / "cx8",
        recipe="chestxray8",
        arch="resnet50",
        input_size=size,
        epochs=1,
        batch_size=batch,
        device=device,
        val_fraction=0.2,
        rng=ctx.seed,
    )
    w1, c1 = time.perf_counter(), time.process_time()
    predict(
        ctx.tmp / "imgs",
        [f"torch:{ctx.tmp / 'cx8' / 'model.yaml'}"],
        out=ctx.tmp / "pred",
        batch_size=batch,
        device=device,
    )
    w2, c2 = time.perf_counter(), time.process_time()
    n_tr, epochs = res.settings["n_train"], int(res.table.epoch.max())
    fig = Figures()
    t = fig.table(
        f"the ChestX-ray8 recipe (ResNet-50, W-CEL, random initialisation) on {n} NIH radiographs at "
        f"{size} x {size}, batch {batch}, {epochs} epoch(s), device {device}, torch {torch.__version__}, "
        f"{torch.get_num_threads()} thread(s) on {os.cpu_count()} CPUs",
        ["step", "images", "wall s", "CPU s", "wall s per image", "CPU s per image"],
    )
    t.add(
        "finetune (per training image and epoch)",
        n_tr,
        round(w1 - w0, 1),
        round(c1 - c0, 1),
        round((w1 - w0) / (n_tr * epochs), 3),
        round((c1 - c0) / (n_tr * epochs), 3),
    )
    t.add(
        "predict with the written model",
        n,
        round(w2 - w1, 1),
        round(c2 - c1, 1),
        round((w2 - w1) / n, 3),
        round((c2 - c1) / n, 3),
    )
    fig.checked["train / validation images"] = f"{n_tr} / {res.settings['n_val']}"
    return fig


def linear_probe(ctx: Context) -> Figures:
    """The linear probe's fit on cached features beside scikit-learn's LogisticRegression on the same features."""
    import numpy as np
    from sklearn.linear_model import LogisticRegression

    from cxreval.predict import fit_linear_probe

    sizes = ctx.size([(31, 512, 4)], [(31, 512, 4), (500, 512, 12), (3000, 768, 12)])
    repeats, wd = ctx.size(3, 5), 1e-2
    fig = Figures(
        peer=Peer(
            "scikit-learn LogisticRegression (lbfgs, tol 1e-12)", module_version("sklearn", "scikit-learn")
        )
    )
    t = fig.table(
        f"the linear probe's convex fit (L2 logistic regression per finding, weight_decay {wd}) on cached "
        f"features, best of {repeats}",
        [
            "images x features x findings",
            "cxreval s",
            "scikit-learn s",
            "max |coef difference|",
            "Newton steps",
        ],
    )
    for n, d, k in sizes:
        g = np.random.default_rng(ctx.seed)
        x = g.normal(size=(n, d)).astype(np.float32)
        y = (x[:, :k] + g.normal(size=(n, k)) > 0).astype(float)
        x64 = x.astype(np.float64)  # scikit-learn would fit float32 input in float32
        ours, peer = [], []
        for _ in range(repeats):
            t0 = time.perf_counter()
            fit = fit_linear_probe(x, y, loss="bce", weight_decay=wd)
            t1 = time.perf_counter()
            coef = [
                LogisticRegression(C=1 / (n * k * wd), tol=1e-12, max_iter=100000).fit(x64, y[:, j]).coef_[0]
                for j in range(k)
            ]
            t2 = time.perf_counter()
            ours.append(t1 - t0)
            peer.append(t2 - t1)
        diff = float(np.abs(np.asarray(coef) - fit.weight).max())
        t.add(
            f"{n} x {d} x {k}", round(min(ours), 4), round(min(peer), 4), f"{diff:.1e}", max(fit.iterations)
        )
        fig.ratios[f"{n}x{d}x{k}: scikit-learn s / cxreval s"] = min(peer) / min(ours)
        fig.checked[f"{n}x{d}x{k}: equal to scikit-learn to 1e-5"] = str(diff <= 1e-5)
    t.notes.append(
        "the same features on both sides (float32, given to scikit-learn as float64); cxreval's fit is Newton's method in float64 (in the "
        "n-dimensional row space when d > n); scikit-learn fits one finding after another"
    )
    return fig


PARTS = (
    Part(
        "throughput",
        "Images per second of cxreval predict vs a plain torchxrayvision loop, same DenseNet-121 "
        "weights and images (16 quick, 32 full), scores compared.",
        throughput,
        python_for="torchxrayvision",
    ),
    Part(
        "streaming_rss",
        "Peak RSS of `cxreval predict --heatmaps` over 100 and 400 (quick) / 1,000 and "
        "10,000 synthetic images: it must not grow with the number of images.",
        streaming_rss,
        python_for="torch",
    ),
    Part(
        "finetune",
        "Time per image of the ChestX-ray8 fine-tuning recipe (ResNet-50) and of predicting with the "
        "written model on the shared NIH radiographs (8 at 128² quick, 39 at 1024² full; torchvision needed).",
        finetune,
        python_for="torchvision",
    ),
    Part(
        "linear_probe",
        "Time of the linear probe's fit on cached features (31 x 512 x 4 quick; also 500 x 512 x 12 "
        "and 3,000 x 768 x 12 full) beside scikit-learn's LogisticRegression on the same features, coefficients "
        "compared.",
        linear_probe,
    ),
)
