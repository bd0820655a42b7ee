"""Predict: ``cxreval.predict.predict`` beside a plain TorchXRayVision loop, and memory while streaming images.

Needs torch and torchxrayvision (not cxreval's core dependencies): in this interpreter or one given with
``--peer-python``; without them the parts record the peer as unavailable. Weights are fixed random (no download).
"""

from __future__ import annotations

import argparse

from suites._common import Context, Figures, Part, Peer, bench_module, peer_unavailable

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
    t = fig.table(f"DenseNet-121 at 224 x 224 on {r['n']} synthetic 512 x 512 PNGs, batch {r['batch_size']}, "
                  f"{r['torch_threads']} torch thread(s), best of {r['repeats']}",
                  ["side", "images/s", "CPU s"])
    t.add("torchxrayvision loop", round(r["xrv_img_s"], 2), round(r["xrv_cpu_s"], 1))
    t.add("cxreval predict", round(r["cxreval_img_s"], 2), round(r["cxreval_cpu_s"], 1))
    t.notes.append(f"max |score difference| {r['max_abs_diff']:.1e}; median of paired wall-time ratios "
                   f"{r['paired_ratio']:.2f}")
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
    t = fig.table("`cxreval predict --heatmaps`, a small CNN at 16 x 16 with CAM heatmaps, batch 64, 256 x 256 "
                  "images: peak RSS of a fresh process", ["images", "peak RSS MiB", "after loading torch + model MiB",
                                                          "growth MiB", "images/s", "heatmaps.npz MiB"])
    for r in rows:
        t.add(r["n"], round(r["peak_rss_mib"]), round(r["baseline_mib"]), round(r["growth_mib"]),
              round(r["n"] / r["seconds"]), round(r["heatmaps_mib"], 1))
        fig.checked[f"{r['n']} images | scores"] = str(r["scores"])
    t.notes.append("streaming: the peak does not grow with the number of images")
    return fig


PARTS = (
    Part("throughput", "Images per second of cxreval predict vs a plain torchxrayvision loop, same DenseNet-121 "
         "weights and images (16 quick, 32 full), scores compared.", throughput, python_for="torchxrayvision"),
    Part("streaming_rss", "Peak RSS of `cxreval predict --heatmaps` over 100 and 400 (quick) / 1,000 and "
         "10,000 synthetic images: it must not grow with the number of images.", streaming_rss, python_for="torch"),
)
