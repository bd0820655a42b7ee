"""Classification: the patient-level bootstrap of AUCs, beside a scikit-learn loop on the same resampling plan.

cxreval draws one patient-level plan and computes every replicate of every (model, finding, reference) AUC with
one sort per model and finding; the peer computes the same replicates with ``sklearn.metrics.roc_auc_score`` in
a loop. Both must agree to 1e-12 with the same undefined replicates; the loop is timed on its first replicates
and scaled to the full count.
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
)
