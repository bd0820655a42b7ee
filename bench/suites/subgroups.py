"""Subgroup gaps (cxreval.subgroups): a simulation with a known truth, and the subgroup bootstrap beside a
Fairlearn loop."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import time

from suites._common import (
    ROOT,
    SHARED,
    Context,
    Figures,
    Part,
    Peer,
    bench_module,
    fmt,
    missing,
    module_version,
)

TITLE = "Subgroups: is the gap the model's, or the reference's?"

__all__ = ["PARTS", "TITLE"]


def simulation(ctx: Context) -> Figures:
    sim = bench_module("subgroups_simulation")
    n_sets, n_res = ctx.size((30, 100), (500, 200))
    m = sim.measure(n_sets, n_res, seed=ctx.seed)
    fig = Figures()
    t = fig.table(
        f"{n_sets} simulated sets (5,000 studies; a model without a gap; a labeller of sensitivity 0.90 in group "
        "A and 0.75 in B): share of sets where B's gap is flagged",
        ["reference", "metric", "flagged", "95% CI"],
    )
    for (ref, metric), r in m["rates"].items():
        t.add(ref, metric, fmt(r["rate"], ".3f"), f"[{r['low']:.3f}, {r['high']:.3f}]")
        fig.checked[f"{ref} | {metric} | flagged"] = fmt(r["rate"], ".3f")
    verdicts = ", ".join(f"{k}: {v}" for k, v in sorted(m["verdicts"].items()))
    t.notes += [
        f"flagged: Holm-adjusted Wald p < 0.05 ({n_res} patient-bootstrap replicates per set). Under the truth the "
        "share is the test's size (target <= 0.05); under the labeller its power to see the labeller's gap, which "
        "the missed positives cause among B's negatives (AUC and specificity; the FNR is unchanged, as the "
        "labeller's misses are independent of the score).",
        f"verdict of B's AUC gap across the two references: {verdicts}. {m['seconds']:.0f} s in all.",
    ]
    return fig


def speed(ctx: Context) -> Figures:
    sim = bench_module("subgroups_simulation")
    n, models, findings, groups, n_res, n_peer = ctx.size(
        (2000, 2, 2, 8, 100, 3), (22433, 10, 14, 8, 1000, 3)
    )
    s = sim.speed(n, models, findings, groups, n_res, n_peer, seed=ctx.seed)
    fig = Figures()
    t = fig.table(
        f"Subgroup bootstrap: {models} models x {findings} findings x {groups} groups, {n:,} studies, {n_res:,} "
        "replicates",
        ["tool", "seconds"],
    )
    t.add(
        "cxreval evaluate_subgroups (AUC, sensitivity, specificity, FNR, selection rate)",
        f"{s['cxreval_s']:.1f}",
    )
    t.add(
        f"Fairlearn MetricFrame loop (AUC, recall, selection rate; {n_peer} replicates, scaled)",
        f"{s['fairlearn_s']:.1f}",
    )
    t.notes.append(
        "the loop draws each replicate's study indices from the same patient plan (cxreval.bootstrap); "
        "Fairlearn's own n_boot resamples studies, not patients."
    )
    fig.ratios["fairlearn / cxreval"] = s["ratio"]
    fig.peer = Peer("Fairlearn MetricFrame loop", module_version("fairlearn"))
    t.notes.append(
        f"the Fairlearn loop was timed on {n_peer} replicates and extrapolated per replicate to {n_res:,} (the full "
        "loop would take hours); cxreval ran all of them. Peak RSS: in the header line (this part's process)."
    )
    return fig


_FOLD = SHARED / "nih_fold_predictions"
_BY = "sex,age_band,view"


def _cxreval(args: list[str], cwd) -> dict[str, object]:
    """Run ``cxreval ARGS`` in ``cwd``; its wall time and the largest child's peak RSS so far (MiB)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    t0 = time.perf_counter()
    r = subprocess.run(
        [sys.executable, "-m", "cxreval", *args], cwd=cwd, env=env, capture_output=True, text=True
    )
    if r.returncode != 0:
        raise RuntimeError(f"cxreval {' '.join(args)} failed: {r.stderr.strip()}")
    rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    return {"seconds": time.perf_counter() - t0, "rss": rss, "line": "cxreval " + " ".join(args)}


def nih(ctx: Context) -> Figures:
    """The NIH table: 10 models x 14 findings x sex, age band and view under nih_textmined (22,433 images), and
    Google's findings under both references on the images Google's experts relabelled."""
    fig = Figures()
    why = missing(_FOLD)
    if why:
        fig.unavailable = why
        return fig
    import pandas as pd

    n_res = ctx.size(100, 1000)
    d = ctx.tmp / "nih_subgroups"
    d.mkdir(parents=True, exist_ok=True)
    runs = [
        _cxreval(["data", "export", "chestxray14", "-o", "nih", "--overwrite"], d),
        _cxreval(["data", "export", "google2019", "-o", "google", "--overwrite"], d),
        _cxreval(["data", "export", "chestxray14_metadata", "-o", "meta", "--overwrite"], d),
    ]
    common = ["-m", "meta/metadata.csv", "--by", _BY, "--no-calibration", "--n-resamples", str(n_res)]
    common += ["--seed", str(ctx.seed), "--overwrite"]
    tables = {
        "textmined": ["-p", str(_FOLD), "-l", "nih/labels.parquet", "-r", "nih_textmined", *common],
        "both": [
            *["-p", str(_FOLD), "-l", "nih/labels.parquet", "-l", "google/labels.parquet"],
            *["-r", "nih_textmined,google_expert", "--finding-map", "nih_to_google", "--studies", "common"],
            *common,
        ],
    }
    for name, args in tables.items():
        runs.append(_cxreval(["subgroups", *args, "-o", f"sub_{name}"], d))
    t = fig.table(
        "The commands (run in one empty folder), in order", ["command", "wall (s)", "peak RSS so far (MiB)"]
    )
    for r in runs:
        t.add(f"`{r['line']}`", f"{r['seconds']:.1f}", f"{r['rss']:.0f}")
    t.notes.append(
        f"the predictions: {_FOLD} (10 models' scores on 22,433 ChestX-ray14 images of 6,187 patients; `cxreval "
        "data export nih_predictions` fetches the same files). --no-calibration: one model's file holds logits "
        "(dd_densenet121_v2_logits); the gaps (AUC, and sensitivity, specificity, FNR and selection rate at the "
        "threshold of specificity 0.9 of each model, finding and reference) do not depend on it."
    )
    for name, title in (
        ("textmined", "nih_textmined, 14 findings, 22,433 images"),
        (
            "both",
            "nih_textmined and google_expert on the images both label (Google's findings; NIH mapped by nih_to_google)",
        ),
    ):
        sub = pd.read_csv(d / f"sub_{name}" / "subgroups.csv")
        est = sub[sub["estimable"]]
        agg = (
            sub.groupby(["reference", "attribute", "metric"], sort=True)
            .agg(
                rows=("estimable", "size"), estimable=("estimable", "sum"), significant=("significant", "sum")
            )
            .reset_index()
        )
        fig.frame(
            f"{title}: gaps (group - rest) per reference, attribute and metric, all models and findings", agg
        )
        studies = int(sub.groupby(["reference", "finding", "model", "attribute"])["n_studies"].sum().max())
        fig.checked[f"{name} | rows"] = str(len(sub))
        fig.checked[f"{name} | significant"] = str(int(sub["significant"].sum()))
        fig.checked[f"{name} | studies"] = str(studies)
        auc = est[est["metric"] == "auc"]
        mean_gap = auc.groupby(["reference", "attribute", "group"])["gap"].mean().reset_index()
        fig.frame(f"{title}: mean AUC gap over the 10 models and the findings, per group", mean_gap)
    v = pd.read_csv(d / "sub_both" / "verdicts.csv")
    counts = v.groupby(["metric", "verdict"]).size().rename("rows").reset_index()
    fig.frame(
        "Verdicts across the two references (Google's findings, both references on the same images)", counts
    )
    for row in counts.itertuples():
        fig.checked[f"verdicts | {row.metric} | {row.verdict}"] = str(row.rows)
    changed = v[(v["metric"] == "auc") & v["verdict"].isin(["sign changes", "significance changes"])]
    cols = ["model", "finding", "attribute", "group", "verdict", "gap_nih_textmined", "gap_google_expert"]
    fig.frame("AUC gaps that change with the reference", changed[cols], decimals=3)
    return fig


PARTS = (
    Part(
        "simulation",
        "A model without a gap, a labeller whose sensitivity is 0.15 lower in one group: the share of simulated "
        "sets where the gap is flagged under the truth (size) and under the labeller (power); 30 sets quick, 500 "
        "full.",
        simulation,
    ),
    Part(
        "speed",
        "The subgroup bootstrap (every model x finding x group, 1,000 replicates, 22,433 studies full) beside a "
        "loop of Fairlearn MetricFrame over the same plan's replicates (timed on 3, scaled).",
        speed,
        python_for="fairlearn",
    ),
    Part(
        "nih",
        "The NIH table, by the public commands: 10 models x 14 findings x sex, age band and view under nih_textmined "
        "(22,433 images), and Google's findings under nih_textmined and google_expert on the images Google's "
        "experts relabelled; 100 replicates quick, 1,000 full; the wall time and peak RSS of each command.",
        nih,
    ),
)
