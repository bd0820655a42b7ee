"""Classification: the patient-level bootstrap of AUCs, beside a scikit-learn loop on the same resampling plan; the
operating points' bootstrap, every rule on every set at once beside one kernel call per set and rule.

cxreval draws one patient-level plan and computes every replicate of every (model, finding, reference) AUC with
one sort per model and finding; the peer computes the same replicates with ``sklearn.metrics.roc_auc_score`` in
a loop. Both must agree to 1e-12 with the same undefined replicates; the loop is timed on its first replicates
and scaled to the full count.

The operating points (``classify --operating-point``) choose each rule's threshold again in every replicate. The
kernel :func:`cxreval.stats._operating_points.confusion_counts_sets` stacks the level counts of many (model,
finding, reference) sets into one sparse product and one cumulative sum per chunk of replicates, and reads every
rule from them; the loop calls it once per set and rule (how ``classify`` ran before). Both must give the same
thresholds and counts exactly.
"""

from __future__ import annotations

from suites._common import SHARED, Context, Figures, Part, Peer, bench_module, missing, module_version

TITLE = "Classification: bootstrap AUC"

__all__ = ["PARTS", "TITLE"]

COLUMNS = [
    "benchmark",
    "models x findings x refs",
    "studies / patients",
    "replicates",
    "validation s",
    "compute s",
    "loop replicates timed",
    "loop s (scaled)",
    "loop / cxreval",
    "max abs diff",
]


def _figures(row: dict[str, object]) -> Figures:
    fig = Figures(peer=Peer("scikit-learn roc_auc_score loop", module_version("scikit-learn")))
    t = fig.table(str(row["benchmark"]), COLUMNS)
    t.add(
        row["benchmark"],
        f"{row['models']} x {row['findings']} x {row['references']}",
        f"{row['studies']} / {row['patients']}",
        row["replicates"],
        round(row["cxreval_validation_s"], 3),
        round(row["cxreval_compute_s"], 3),
        row["loop_replicates_timed"],
        round(row["loop_s_full"], 1),
        round(row["speedup_compute"], 1),
        f"{row['max_abs_diff']:.1e}",
    )
    t.notes.append(
        f"same undefined replicates: {row['same_undefined']}; load average {row['load_avg_1min']}; "
        f"validation CPU time (time.process_time) {row['cxreval_validation_cpu_s']:.3f} s"
    )
    fig.ratios["loop s / cxreval compute s"] = row["speedup_compute"]
    fig.ratios["loop s / cxreval validation + compute s"] = row["speedup_with_validation"]
    for k in (
        "models",
        "findings",
        "references",
        "studies",
        "patients",
        "replicates",
        "auc_per_replicate",
        "same_undefined",
    ):
        fig.checked[k] = str(row[k])
    fig.checked["max abs diff <= 1e-12"] = str(row["max_abs_diff"] <= 1e-12)
    return fig


def synthetic(ctx: Context) -> Figures:
    b = bench_module("bootstrap_auc")
    preds, labels = b.synthetic(rng=ctx.seed)
    row = b.run(
        "synthetic 35x4x3x650",
        preds,
        labels,
        1000,
        ctx.size(3, 50),
        ctx.size(1, 3),
        macro=True,
        micro=False,
        mean_over_models=True,
    )
    return _figures(row)


def nih(ctx: Context) -> Figures:
    why = missing(SHARED / "nih_fold_predictions")
    if why:
        return Figures(unavailable=why)
    b = bench_module("bootstrap_auc")
    from cxreval.datasets import nih as nih_data
    from cxreval.datasets.nih_predictions import load_predictions

    p = load_predictions(SHARED / "nih_fold_predictions").table
    try:
        lab = nih_data.load_labels().table
    except Exception as exc:  # the metadata cache is missing
        return Figures(unavailable=f"data unavailable: {exc} (run `cxreval data fetch`)")
    if ctx.quick:  # 3 of the 10 models
        p = p[p.model.isin(sorted(p.model.unique())[:3])]
    lab = lab[lab.study_id.isin(set(p.study_id))]
    n = ctx.size(200, 2000)
    row = b.run(
        f"NIH {p.model.nunique()} models x 14 findings, 22,433 images",
        p,
        lab,
        n,
        ctx.size(3, 10),
        ctx.size(1, 3),
        macro=False,
        micro=False,
        mean_over_models=False,
    )
    return _figures(row)


OP_COLUMNS = [
    "benchmark",
    "sets (models x findings x refs)",
    "rules",
    "studies / patients",
    "replicates",
    "loop s",
    "stacked s",
    "loop / stacked",
    "classify's operating points s",
    "identical",
]
OP_POINTS = ("specificity=0.9", "sensitivity=0.9", "youden", "threshold=0.5")
OP_REFERENCES = ("consensus", "chexpert_labeler", "bc4", "bc6")


def operating_points(ctx: Context) -> Figures:
    """CheXpert test set: 10 models x 5 findings x 4 references, 4 operating points, 1000 replicates (200 quick)."""
    import time

    import numpy as np

    why = missing(SHARED / "chexpert_test")
    if why:
        return Figures(unavailable=why)
    from cxreval.bootstrap import draw_plan
    from cxreval.classification import evaluate_operating_points
    from cxreval.datasets.chexpert import load_labels, load_predictions
    from cxreval.stats import prepare_inputs
    from cxreval.stats._operating_points import (
        ScoredSet,
        confusion_counts,
        confusion_counts_sets,
        parse_operating_point,
    )

    root = SHARED / "chexpert_test"
    preds, labels = load_predictions(root).table, load_labels(root).table
    n = int(ctx.size(200, 1000))
    prep = prepare_inputs(preds, labels, references=list(OP_REFERENCES))
    plan = draw_plan(prep.patient_of.to_numpy(), n_resamples=n, rng=ctx.seed, study_ids=list(prep.studies))
    ct = np.vstack([np.ones((1, plan.n_patients)), plan.counts]).astype(np.float64)
    sets = []
    for f in range(len(prep.findings)):
        for r in range(len(prep.references)):
            labelled = np.isfinite(prep.Y[f, r])
            for i in range(len(prep.models)):
                ok = labelled & np.isfinite(prep.S[i, f])
                sets.append(ScoredSet(prep.Y[f, r, ok] == 1.0, prep.S[i, f, ok], plan.study_patient[ok]))
    points = [
        parse_operating_point(p, func="bench", kinds=("threshold", "specificity", "sensitivity", "youden"))
        for p in OP_POINTS
    ]
    t0 = time.perf_counter()
    loop = [[confusion_counts(p, x.y, x.s, x.pat, ct) for p in points] for x in sets]
    t_loop = time.perf_counter() - t0
    t0 = time.perf_counter()
    stacked = confusion_counts_sets(points, sets, ct)
    t_stacked = time.perf_counter() - t0
    same = all(
        np.array_equal(getattr(a, k), getattr(b, k), equal_nan=True)
        for la, lb in zip(loop, stacked)
        for a, b in zip(la, lb)
        for k in ("threshold", "tp", "fp", "tn", "fn")
    )
    t0 = time.perf_counter()
    res = evaluate_operating_points(
        preds,
        labels,
        operating_points=list(OP_POINTS),
        references=list(OP_REFERENCES),
        n_resamples=n,
        rng=ctx.seed,
    )
    t_job = time.perf_counter() - t0
    fig = Figures()
    t = fig.table("CheXpert test set: operating points", OP_COLUMNS)
    t.add(
        "CheXpert test set, 4 references",
        f"{len(sets)} ({len(prep.models)} x {len(prep.findings)} x {len(prep.references)})",
        len(points),
        f"{len(prep.studies)} / {plan.n_patients}",
        n,
        round(t_loop, 2),
        round(t_stacked, 2),
        round(t_loop / t_stacked, 1),
        round(t_job, 2),
        same,
    )
    import os

    t.notes.append(
        f"{len(res.table)} rows of operating_points.csv; loop: confusion_counts once per set and rule, each with "
        f"its own product and cumulative sum; load average {os.getloadavg()[0]:.2f}"
    )
    fig.ratios["loop s / stacked s"] = t_loop / t_stacked
    fig.checked["identical thresholds and counts"] = str(same)
    fig.checked["rows"] = str(len(res.table))
    return fig


PARTS = (
    Part(
        "bootstrap_synthetic",
        "35 models x 4 findings x 3 references x 650 studies of ~200 patients, 1000 "
        "replicates: cxreval's validation and computation time beside the scikit-learn loop (timed on 3 "
        "replicates quick, 50 full).",
        synthetic,
    ),
    Part(
        "bootstrap_nih",
        "The 10 NIH models' predictions (22,433 images, 14 findings) against the ChestX-ray14 "
        "text-mined labels: 3 models and 200 replicates quick, 10 models and 2000 full (shared data and `cxreval data fetch`).",
        nih,
    ),
    Part(
        "operating_points_chexpert",
        "CheXpert test set (shared data): 10 models x 5 findings x 4 references, 4 operating points, 1000 "
        "replicates (200 quick): every rule on every set from one stacked cumulative sum per chunk, beside one "
        "kernel call per set and rule; identical thresholds and counts.",
        operating_points,
    ),
)
