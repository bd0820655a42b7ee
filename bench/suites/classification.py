"""Classification: the patient-level bootstrap of AUCs, beside a scikit-learn loop on the same resampling plan; the
operating points' bootstrap beside a scikit-learn loop.

cxreval draws one patient-level plan and computes every replicate of every (model, finding, reference) AUC with
one sort per model and finding; the peer computes the same replicates with ``sklearn.metrics.roc_auc_score`` in
a loop. Both must agree to 1e-12 with the same undefined replicates; the loop is timed on its first replicates
and scaled to the full count.

The operating points (``classify --operating-point``) choose each rule's threshold again in every replicate:
cxreval stacks the level counts of every (model, finding, reference) into one sparse product and one cumulative sum
per chunk of replicates and reads every rule from them; the peer resamples each set and runs scikit-learn's
``roc_curve`` and ``confusion_matrix`` per replicate, set and rule (timed on its first replicates, scaled).
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
    "operating points",
    "studies / patients",
    "replicates",
    "cxreval s",
    "loop replicates timed",
    "loop s (scaled)",
    "loop / cxreval",
    "estimates equal",
]
OP_POINTS = ("specificity=0.9", "sensitivity=0.9", "youden", "threshold=0.5")
OP_REFERENCES = ("consensus", "chexpert_labeler", "bc4", "bc6")


def _sklearn_counts(point: str, y, s) -> tuple[float, ...]:
    """tn, fp, fn, tp at the threshold scikit-learn's ROC curve gives the rule (``threshold=`` held fixed)."""
    import numpy as np
    from sklearn.metrics import confusion_matrix, roc_curve

    kind, _, value = point.partition("=")
    if kind == "threshold":
        t = float(value)
    else:
        fpr, tpr, thr = roc_curve(y, s, drop_intermediate=False)
        if kind == "specificity":
            t = thr[np.flatnonzero(1 - fpr >= float(value) - 1e-12)[-1]]
        elif kind == "sensitivity":
            t = thr[np.flatnonzero(tpr >= float(value) - 1e-12)[0]]
        else:
            t = thr[np.argmax(tpr - fpr)]
    return tuple(float(v) for v in confusion_matrix(y, s >= t, labels=[False, True]).ravel())


def operating_points(ctx: Context) -> Figures:
    """CheXpert test set: 10 models x 5 findings x 4 references, 4 operating points, 1000 replicates (200 quick),
    each rule's threshold chosen again in every replicate; the peer: scikit-learn ``roc_curve`` and
    ``confusion_matrix`` on each resampled set, timed on a few replicates and scaled."""
    import os
    import time

    import numpy as np

    why = missing(SHARED / "chexpert_test")
    if why:
        return Figures(unavailable=why)
    from cxreval.bootstrap import draw_plan
    from cxreval.classification import evaluate_operating_points
    from cxreval.datasets.chexpert import load_labels, load_predictions
    from cxreval.stats import prepare_inputs

    root = SHARED / "chexpert_test"
    preds, labels = load_predictions(root).table, load_labels(root).table
    n, timed = int(ctx.size(200, 1000)), int(ctx.size(1, 3))
    t0 = time.perf_counter()
    res = evaluate_operating_points(
        preds,
        labels,
        operating_points=list(OP_POINTS),
        references=list(OP_REFERENCES),
        n_resamples=n,
        rng=ctx.seed,
    )
    t_cx = time.perf_counter() - t0
    prep = prepare_inputs(preds, labels, references=list(OP_REFERENCES))
    plan = draw_plan(prep.patient_of.to_numpy(), n_resamples=n, rng=ctx.seed, study_ids=list(prep.studies))
    sets = {}
    for f, finding in enumerate(prep.findings):
        for r, ref in enumerate(prep.references):
            ok0 = np.isfinite(prep.Y[f, r])
            for i, model in enumerate(prep.models):
                ok = ok0 & np.isfinite(prep.S[i, f])
                sets[(model, finding, ref)] = (
                    prep.Y[f, r, ok] == 1.0,
                    prep.S[i, f, ok],
                    plan.study_patient[ok],
                )
    equal = all(  # the estimates (no resampling): every row's counts as scikit-learn's
        _sklearn_counts(row.operating_point, *sets[(row.model, row.finding, row.reference)][:2])
        == (row.tn, row.fp, row.fn, row.tp)
        for row in res.table.itertuples(index=False)
    )
    t0 = time.perf_counter()
    for b in range(timed):
        for y, s, pat in sets.values():
            idx = np.repeat(np.arange(y.size), plan.counts[b][pat])
            for p in OP_POINTS:
                _sklearn_counts(p, y[idx], s[idx])
    t_loop = (time.perf_counter() - t0) / timed * n
    fig = Figures(peer=Peer("scikit-learn roc_curve + confusion_matrix loop", module_version("scikit-learn")))
    t = fig.table("CheXpert test set: operating points with bootstrap intervals", OP_COLUMNS)
    t.add(
        "CheXpert test set, 4 references",
        f"{len(sets)} ({len(prep.models)} x {len(prep.findings)} x {len(prep.references)})",
        len(OP_POINTS),
        f"{len(prep.studies)} / {plan.n_patients}",
        n,
        round(t_cx, 2),
        timed,
        round(t_loop, 1),
        round(t_loop / t_cx, 1),
        equal,
    )
    t.notes.append(
        f"{len(res.table)} rows of operating_points.csv (evaluate_operating_points, the job of classify "
        "--operating-point, reading and checking the tables included); every rule on every set from one stacked "
        f"cumulative sum per chunk of replicates; load average {os.getloadavg()[0]:.2f}"
    )
    fig.ratios["loop s / cxreval s"] = t_loop / t_cx
    fig.checked["estimates equal scikit-learn"] = str(equal)
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
        "replicates (200 quick), each rule's threshold chosen again in every replicate, beside a scikit-learn "
        "roc_curve + confusion_matrix loop (timed on 1 replicate quick, 3 full, and scaled); the estimates' counts "
        "equal scikit-learn's.",
        operating_points,
    ),
)
