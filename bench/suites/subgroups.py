"""Subgroup gaps (cxreval.subgroups): a simulation with a known truth, and the subgroup bootstrap beside a
Fairlearn loop."""

from __future__ import annotations

from suites._common import Context, Figures, Part, bench_module, fmt

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
)
