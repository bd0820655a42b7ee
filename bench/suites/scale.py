"""Scale: time and memory of the commands at MIMIC-CXR-like sizes, serial and on process / Dask executors.

Every measured run is a fresh process (so that its peak RSS is its own); the inputs are synthetic and seeded
(``bench/_scale_data.py`` for classify: 20 models x 14 findings x 2 report labelers over studies clustered in
patients as in MIMIC-CXR). The measuring code is in ``bench/scale*.py``; this suite runs it at quick or full sizes.
"""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np

from suites._common import BENCH, Context, Figures, Part, Peer, bench_module, module_version

TITLE = "Scale: growth of time and memory with the input"

__all__ = ["PARTS", "TITLE"]


def _exponents(pts: list[tuple[int, float]]) -> str:
    pts = sorted(pts)
    return "; ".join(
        f"{n1:,} -> {n2:,}: {np.log(t2 / t1) / np.log(n2 / n1):.2f}"
        for (n1, t1), (n2, t2) in zip(pts, pts[1:])
        if t1 > 0 and t2 > 0
    )


def classify_engine(ctx: Context) -> Figures:
    sizes = ctx.size([2_000, 5_000], [10_000, 50_000, 100_000, 228_000])
    executors = ctx.size(["serial", "process:2"], ["serial", "process:2", "dask:local:2"])
    n_resamples, sk_models = ctx.size(200, 1000), ctx.size(2, 4)
    rows = []
    for n in sizes:
        for ex in executors if n == sizes[-1] else executors[:1]:
            r = subprocess.run(
                [
                    sys.executable,
                    str(BENCH / "scale.py"),
                    "--engine-child",
                    str(n),
                    ex,
                    "--n-resamples",
                    str(n_resamples),
                    "--sklearn-replicates",
                    "1",
                    "--sklearn-models",
                    str(sk_models),
                ],
                capture_output=True,
                text=True,
            )
            if r.returncode != 0:
                raise RuntimeError(r.stdout[-2000:] + r.stderr[-2000:])
            rows.append(json.loads(r.stdout.strip().splitlines()[-1]))
    fig = Figures(peer=Peer("scikit-learn roc_auc_score loop", module_version("scikit-learn")))
    t = fig.table(
        f"evaluate_auc on prepared arrays: 20 models x 14 findings x 2 references, {n_resamples} "
        "replicates, each run a fresh process",
        [
            "studies",
            "patients",
            "executor",
            "s",
            "CPU s",
            "peak RSS GiB",
            "sklearn loop s (scaled)",
            "loop / cxreval",
            "loop CPU / cxreval CPU",
        ],
    )
    for r in rows:
        t.add(
            r["studies"],
            r["patients"],
            r["executor"],
            round(r["engine_s"], 2),
            round(r["engine_cpu_s"], 2),
            round(r["peak_rss_gib"], 2),
            round(r["sklearn_full_s"], 1) if "ratio" in r else "",
            round(r["ratio"], 1) if "ratio" in r else "",
            round(r["ratio_cpu"], 1) if "ratio" in r else "",
        )
        fig.checked[f"{r['studies']} studies | patients"] = str(r["patients"])
        if "ratio" in r:
            fig.ratios[f"{r['studies']} studies: sklearn loop s / cxreval s"] = r["ratio"]
            fig.checked[f"{r['studies']} studies | equal to the loop to 1e-12"] = str(
                r["max_abs_diff"] < 1e-12
            )
    t.notes.append(
        "growth exponents of the serial time: "
        + _exponents([(r["studies"], r["engine_s"]) for r in rows if r["executor"] == "serial"])
    )
    t.notes.append(f"the sklearn loop is timed on 1 replicate of {sk_models} models and scaled to all")
    return fig


def classify_cli(ctx: Context) -> Figures:
    sc = bench_module("scale")
    n = ctx.size(5_000, 228_000)
    executors = ctx.size(["serial"], ["serial", "process:2", "dask:local:2"])
    rows = sc.cli_rows(n, executors, ctx.size(200, 1000), "parquet", ctx.tmp)
    fig = Figures()
    t = fig.table(
        f"the whole `cxreval classify` on {n:,} studies x 20 models x 14 findings (Parquet)",
        ["studies", "executor", "wall s", "peak RSS GiB (largest process)", "peak RSS GiB (process tree)"],
    )
    for r in rows:
        t.add(
            r["studies"],
            r["executor"],
            round(r["classify_wall_s"], 1),
            round(r["peak_rss_gib"], 2),
            round(r["tree_rss_gib"], 2),
        )
    return fig


def read_inputs(ctx: Context) -> Figures:
    sr = bench_module("scale_read")
    from _scale_data import write_scale_inputs

    fig = Figures()
    t = fig.table(
        "reading + preparing the inputs of classify (prepare_from_files), a fresh process each",
        ["studies", "format", "wall s", "peak RSS GiB", "scores GiB", "labels GiB", "patients"],
    )
    for n in ctx.size([10_000], [10_000, 50_000, 228_000]):
        folder = ctx.tmp / f"scale-{n}"
        write_scale_inputs(folder, n, fmt="csv", seed=ctx.seed)
        r = sr.measure(folder / "predictions.csv", folder / "labels.csv")
        t.add(
            n,
            "csv",
            round(r["wall_s"], 2),
            round(r["peak_rss_gib"], 2),
            round(r["S_gib"], 3),
            round(r["Y_gib"], 3),
            r["n_patients"],
        )
        fig.checked[f"{n} studies | studies patients"] = f"{r['n_studies']} {r['n_patients']}"
    return fig


def fuse(ctx: Context) -> Figures:
    sf = bench_module("scale_fuse")
    sizes = ctx.size("100000", "100000,1000000")
    rows = sf.main(["--sizes", sizes, "--impl", "checkout", "--seed", str(ctx.seed)])
    fig = Figures()
    t = fig.table(
        "MV, Dawid-Skene and MACE on simulated readers (5 readers per item, 3 states), a fresh "
        "process per size",
        [
            "items",
            "method",
            "s",
            "iterations",
            "converged",
            "accuracy",
            "peak RSS GiB",
            "fused labels sha256",
        ],
    )
    for r in rows:
        t.add(
            r["n"],
            r["method"],
            round(r["seconds"], 2),
            r.get("n_iter", ""),
            r.get("converged", ""),
            f"{r['accuracy']:.6f}",
            round(r["peak_rss_gib"], 2),
            r["labels_sha256"],
        )
        fig.checked[f"{r['n']} items | {r['method']} | accuracy sha256"] = (
            f"{r['accuracy']:.6f} {r['labels_sha256']}"
        )
    return fig


def localize(ctx: Context) -> Figures:
    sl = bench_module("scale_localize")
    rows = sl.main(
        [
            "--sizes",
            ctx.size("1000", "10000,100000"),
            "--seed",
            str(ctx.seed),
            "--executors",
            ctx.size("serial,process:2", "serial,process:2,dask:local:2"),
        ]
    )
    fig = Figures()
    t = fig.table(
        "`cxreval localize` on 32 x 32 heatmaps -> boxes -> Acc / AFP, a fresh process each",
        [
            "maps",
            "options",
            "rc",
            "wall s",
            "CPU s",
            "peak RSS MiB (largest process)",
            "peak RSS MiB (process tree)",
            "processes left behind",
            "output = first run",
        ],
    )
    for r in rows:
        t.add(
            r["maps"],
            r["options"],
            r["rc"],
            round(r["wall_s"], 1),
            round(r["cpu_s"], 1),
            round(r["peak_rss_mib"]),
            round(r["tree_rss_mib"]),
            r["left_behind"],
            "first" if r["same_as_first"] is None else r["same_as_first"],
        )
        fig.checked[f"{r['maps']} maps | {r['options']} | rc, same output"] = (
            f"{r['rc']} {r['same_as_first']}"
        )
    return fig


def iqa_score(ctx: Context) -> Figures:
    si = bench_module("scale_iqa")
    import pandas as pd

    n_pairs, size = ctx.size(4, 40), ctx.size(192, 1024)
    executors = ctx.size(["serial", "process:2"], ["serial", "process:2", "dask:local:2"])
    (ctx.tmp / "img").mkdir()
    pairs = si.make_pairs(ctx.tmp / "img", n_pairs, size, seed=ctx.seed)
    fig = Figures()
    t = fig.table(
        f"`cxreval iqa score --metrics all` on {n_pairs} pairs of synthetic {size}x{size} 16-bit PNGs",
        [
            "executor",
            "wall s",
            "CPU s (process tree)",
            "peak RSS MiB (command)",
            "peak RSS MiB (tree)",
            "output == serial (bytes)",
        ],
    )
    first = None
    for ex in executors:
        out = ctx.tmp / ex.replace(":", "_")
        r = si.run(pairs, out, ex)
        files = {f.name: f.read_bytes() for f in sorted(out.iterdir()) if f.name != "run.json"}
        first = files if first is None else first
        t.add(
            ex,
            round(r["wall_s"], 1),
            round(r["cpu_s"]),
            round(r["rss_main_mib"]),
            round(r["rss_tree_mib"]),
            files == first,
        )
        fig.checked[f"{ex} | output == serial"] = str(files == first)
    fig.checked["scores"] = str(len(pd.read_csv(ctx.tmp / "serial" / "scores.csv")))
    return fig


PARTS = (
    Part(
        "classify_engine",
        "The bootstrap engine (evaluate_auc on prepared arrays) at 2,000 and 5,000 studies "
        "(quick; executors at the largest size) / 10,000 to 228,000, serial and on executors, beside the scikit-learn loop.",
        classify_engine,
    ),
    Part(
        "classify_cli",
        "The whole `cxreval classify` (read, validate, evaluate, write) at 5,000 studies (quick) / "
        "228,000: wall time and peak RSS.",
        classify_cli,
    ),
    Part(
        "read_inputs",
        "Peak RSS of reading + preparing classify's inputs (CSV) at 10,000 studies (quick) / up to 228,000.",
        read_inputs,
    ),
    Part(
        "fuse",
        "MV, DS and MACE at 100,000 items (quick) / and 1,000,000: time, iterations, accuracy, peak RSS.",
        fuse,
    ),
    Part(
        "localize",
        "`cxreval localize` on 1,000 maps (quick) / 10,000 and 100,000 per executor: time, peak RSS of "
        "the process tree, processes left behind, identical outputs.",
        localize,
    ),
    Part(
        "iqa_score",
        "`cxreval iqa score --metrics all` per executor on 4 pairs of 192² (quick; IW-SSIM needs 176²) / 40 pairs of "
        "1024² images: time, CPU, peak RSS, byte-identical outputs.",
        iqa_score,
    ),
)
