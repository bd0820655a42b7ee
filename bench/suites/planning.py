"""Relabelling plans: the planner against random selection on the CheXpert test set, and the calibration of the
predicted power on simulated study sets with a known truth.

``chexpert``: start from ``chexpert_labeler`` for all 500 studies of the CheXpert test set; reveal the 5-radiologist
``consensus`` label for the first K studies of ``cxreval plan``'s ``relabel.csv`` (a sample of the plan's design; K =
25, 50, 100, 200), or for K
random studies (20 seeds; 5 quick); the two-phase estimate (``evaluate_two_phase_auc``, anchor = the revealed
labels) of the 10 leaderboard models' AUCs on the 5 competition findings is compared with their AUC against the
consensus (sklearn's ``roc_auc_score``): mean |ΔAUC| over the 50 model × finding cells.

``chexpert_uses``: what else the plan helps, on the same data: the consensus revealed on the first K studies of
relabel.csv or on K random studies, then (a) the ordinary AUC against the labels with the revealed studies' cheap
labels replaced (what ``cxreval rank`` computes with the expert's labels merged in) and (b) the ordinary AUC on the
revealed studies alone; for the plan from ``chexpert_labeler`` alone and for the plan with readers bc4, bc6 and bc8
beside it (10 random seeds; 3 quick). Then the design-based estimate: per K and seed, ``plan_relabelling`` (budget K,
that seed) draws its sample, the consensus is revealed on it and ``evaluate_design_auc`` gives every model's AUC;
against the plain AUC on K random studies' consensus labels (30 plan seeds and 200 random ones; 5 and 20 quick: the
random arm is cheap, so its Monte Carlo error is kept well below the design arm's), with the plan's default uniform
floor (0.2) and with a floor of 1 (equal probabilities). The plain AUC exists only where its sample holds both
classes of a finding, so the like-for-like comparison is on the cells whose sample (each estimate's own) holds
both; the design-based estimate over every cell and the share of one-class samples are beside it.

``power_calibration``: simulated study sets of 500 studies (one cheap reference with sensitivity and specificity
drawn from [0.65, 0.95], prevalence from [0.1, 0.4], three models with close true-label AUCs): per budget k, the plan
for budget k predicts the probability of the right decision (``power.csv``'s ``p_right``); its own sample's true
labels are revealed and ``evaluate_design_auc`` computed; the decision is right when its leading pair is separable
and its leader is the model of the largest true AUC (150 sets; 20 quick), per budget and by bins of the predicted
probability.
"""

from __future__ import annotations

import time

import numpy as np
import pandas as pd

from suites._common import SHARED, Context, Figures, Part, fmt, missing

TITLE = "Planning: which studies an expert should relabel"

__all__ = ["PARTS", "TITLE"]

BUDGETS = (25, 50, 100, 200)


def _chexpert_tables():
    from cxreval.datasets import export_dataset
    from cxreval.findings import CHEXPERT_COMPETITION

    root = SHARED / "chexpert_test"
    labels = export_dataset("chexpert_test", root).table
    preds = export_dataset("chexpert_test_predictions", root).table
    findings = list(CHEXPERT_COMPETITION)
    return (labels[labels["finding"].isin(findings)], preds[preds["finding"].isin(findings)], findings)


def _consensus_auc(labels: pd.DataFrame, preds: pd.DataFrame) -> pd.Series:
    from sklearn.metrics import roc_auc_score

    from cxreval.schema import binarize

    cons = labels[labels["source"] == "consensus"].assign(y=lambda t: binarize(t["state"]))
    out = {}
    for (finding, model), g in preds.groupby(["finding", "model"]):
        y = cons[cons["finding"] == finding].set_index("study_id")["y"].loc[g["study_id"]].to_numpy()
        out[(finding, model)] = roc_auc_score(y, g["score"].to_numpy())
    return pd.Series(out).rename_axis(["finding", "model"])


def _error(preds, cheap, consensus, studies, truth_auc, findings) -> tuple[float, float]:
    """(mean |ΔAUC|, mean signed ΔAUC) of the two-phase estimate with the consensus revealed on ``studies``."""
    from cxreval.planning import evaluate_two_phase_auc

    expert = consensus[consensus["study_id"].isin(set(studies))].assign(source="expert")
    res = evaluate_two_phase_auc(
        preds,
        pd.concat([cheap, expert], ignore_index=True),
        reference="chexpert_labeler",
        anchor="expert" if len(studies) else None,
        findings=findings,
    )
    d = res.table.set_index(["finding", "model"])["auc"] - truth_auc
    return float(d.abs().mean()), float(d.mean())


def chexpert(ctx: Context) -> Figures:
    gone = missing(SHARED / "chexpert_test" / "groundtruth.csv")
    if gone:
        return Figures(unavailable=gone)
    from cxreval.planning import plan_relabelling

    labels, preds, findings = _chexpert_tables()
    cheap = labels[labels["source"] == "chexpert_labeler"]
    consensus = labels[labels["source"] == "consensus"]
    truth_auc = _consensus_auc(labels, preds)
    t0 = time.perf_counter()
    plan = plan_relabelling(
        preds,
        cheap,
        reference="chexpert_labeler",
        budget=max(BUDGETS),
        findings=findings,
        n_draws=ctx.size(50, 200),
        rng=ctx.seed,
    )
    plan_s = time.perf_counter() - t0
    order = list(plan.table["study_id"])
    ids = np.array(sorted(preds["study_id"].unique()), dtype=object)
    n_seeds = ctx.size(5, 20)
    fig = Figures()
    t = fig.table(
        f"CheXpert test set: two-phase estimate from chexpert_labeler + the consensus on K studies, mean "
        f"|ΔAUC| to the consensus AUC over {preds['model'].nunique()} models x {len(findings)} findings",
        [
            "K",
            "planned (relabel.csv first K)",
            f"random K (mean of {n_seeds} seeds)",
            "random sd",
            "planned below random",
            "planned signed ΔAUC",
        ],
    )
    zero, zero_signed = _error(preds, cheap, consensus, [], truth_auc, findings)
    ref = plan.estimate.table.set_index(["finding", "model"])["auc_reference"] - truth_auc
    t.add(0, fmt(zero), fmt(zero), "", "", fmt(zero_signed))
    fig.checked["K=0 | two-phase (no anchor)"] = fmt(zero)
    wins = []
    for k in BUDGETS:
        planned, signed = _error(preds, cheap, consensus, order[:k], truth_auc, findings)
        rnd = [
            _error(
                preds,
                cheap,
                consensus,
                np.random.default_rng([ctx.seed, k, s]).choice(ids, k, replace=False),
                truth_auc,
                findings,
            )[0]
            for s in range(n_seeds)
        ]
        wins.append(planned < np.mean(rnd))
        t.add(
            k,
            fmt(planned),
            fmt(float(np.mean(rnd))),
            fmt(float(np.std(rnd))),
            planned < np.mean(rnd),
            fmt(signed),
        )
        fig.checked[f"K={k} | planned"] = fmt(planned)
        fig.checked[f"K={k} | random mean"] = fmt(float(np.mean(rnd)))
    t.notes += [
        f"chexpert_labeler alone (its decided studies): mean |ΔAUC| {fmt(float(ref.abs().mean()))}",
        f"planned below random at every K: {all(wins)}",
        f"plan_relabelling (budget {max(BUDGETS)}, power with {ctx.size(50, 200)} draws): {plan_s:.1f} s",
    ]
    fig.frame(
        "power.csv of that plan (P(best separable from runner-up) after relabelling the top k)",
        plan.power.drop(columns=["method", "n_draws"]),
        decimals=3,
    )
    return fig


def _plain_cells(preds: pd.DataFrame, truth_auc: pd.Series, labels: pd.Series) -> list[float]:
    """Per model x finding cell, |ΔAUC| to the consensus of the ordinary AUC against ``labels`` (a 0/1/NaN Series
    by study_id and finding); NaN where the labels hold one class of the finding."""
    from sklearn.metrics import roc_auc_score

    errs = []
    for (finding, model), g in preds.groupby(["finding", "model"]):
        y = labels.xs(finding, level="finding").reindex(g["study_id"]).to_numpy(dtype=float)
        ok = ~np.isnan(y)
        defined = len(np.unique(y[ok])) == 2
        auc = roc_auc_score(y[ok], g["score"].to_numpy()[ok]) if defined else np.nan
        errs.append(abs(auc - truth_auc[(finding, model)]))
    return errs


def _plain_error(wide: pd.DataFrame, preds: pd.DataFrame, truth_auc: pd.Series, labels: pd.Series) -> float:
    """Mean |ΔAUC| to the consensus of the ordinary AUC against ``labels`` over the cells it defines."""
    errs = _plain_cells(preds, truth_auc, labels)
    return float(np.nanmean(errs)) if not np.isnan(errs).all() else float("nan")


def chexpert_uses(ctx: Context) -> Figures:
    gone = missing(SHARED / "chexpert_test" / "groundtruth.csv")
    if gone:
        return Figures(unavailable=gone)
    from cxreval.planning import plan_relabelling
    from cxreval.schema import binarize

    labels, preds, findings = _chexpert_tables()
    truth_auc = _consensus_auc(labels, preds)
    y = labels.assign(y=binarize(labels["state"], policy="exclude", not_mentioned="negative"))
    wide = y.pivot_table(index=["study_id", "finding"], columns="source", values="y", aggfunc="first")
    cheap, cons = wide["chexpert_labeler"], wide["consensus"]
    study = wide.index.get_level_values("study_id")
    ids = np.array(sorted(preds["study_id"].unique()), dtype=object)
    n_seeds = ctx.size(3, 10)
    fig = Figures()
    for name, readers in (
        ("chexpert_labeler alone", None),
        ("chexpert_labeler with bc4, bc6, bc8", ["bc4", "bc6", "bc8"]),
    ):
        plan = plan_relabelling(
            preds,
            labels,
            reference="chexpert_labeler",
            readers=readers,
            budget=max(BUDGETS),
            findings=findings,
            n_draws=10,
            rng=ctx.seed,
        )
        order = list(plan.table["study_id"])
        t = fig.table(
            f"CheXpert test set, plan from {name}: mean |ΔAUC| to the consensus AUC of the ordinary AUC, the "
            "consensus revealed on K studies",
            ["K", "merged: planned", "merged: random", "revealed alone: planned", "revealed alone: random"],
        )

        def merged(studies: object) -> pd.Series:
            return cheap.where(~study.isin(set(studies)), cons)

        def alone(studies: object) -> pd.Series:
            return cons.where(study.isin(set(studies)))

        for k in BUDGETS:
            rnd = [
                np.random.default_rng([ctx.seed, k, s]).choice(ids, k, replace=False) for s in range(n_seeds)
            ]
            row = [
                _plain_error(wide, preds, truth_auc, merged(order[:k])),
                float(np.nanmean([_plain_error(wide, preds, truth_auc, merged(r)) for r in rnd])),
                _plain_error(wide, preds, truth_auc, alone(order[:k])),
                float(np.nanmean([_plain_error(wide, preds, truth_auc, alone(r)) for r in rnd])),
            ]
            t.add(k, *(fmt(v) for v in row))
            fig.checked[f"{name} | K={k} | merged planned"] = fmt(row[0])
            fig.checked[f"{name} | K={k} | merged random"] = fmt(row[1])
        t.notes += [
            "merged: the cheap labels with the revealed studies' replaced by the consensus (cxreval rank with the "
            "expert's labels merged in); revealed alone: the ordinary AUC on the revealed studies only (cells with "
            f"one class left out); random: mean of {n_seeds} seeds",
        ]
    _design_rows(ctx, fig, labels, preds, findings, truth_auc, wide, ids)
    return fig


def _design_error(preds, labels, findings, truth_auc, k: int, seed: int, floor: float) -> pd.DataFrame:
    """Per model x finding cell: the signed ΔAUC of the design-based estimate from the plan's sample of ``k``
    (seed ``seed``) with the consensus revealed on it, and whether that sample holds both classes of the finding
    (else no pair of it defines an AUC: the estimate is the predictions' own)."""
    from cxreval.planning import evaluate_design_auc, plan_relabelling
    from cxreval.schema import binarize

    cheap = labels[labels["source"] == "chexpert_labeler"]
    plan = plan_relabelling(
        preds,
        cheap,
        reference="chexpert_labeler",
        budget=k,
        budgets=[k],
        findings=findings,
        n_draws=10,
        uniform_floor=floor,
        rng=[seed, k],
    )
    cons = labels[(labels["source"] == "consensus") & labels["study_id"].isin(set(plan.table["study_id"]))]
    est = evaluate_design_auc(
        preds,
        pd.concat([cheap, cons.assign(source="expert")]),
        reference="chexpert_labeler",
        expert="expert",
        design=plan.table,
        findings=findings,
    )
    y = cons.assign(y=binarize(cons["state"], policy="exclude", not_mentioned="negative"))
    both = y.groupby("finding")["y"].agg(lambda v: v.nunique() == 2)
    d = (est.table.set_index(["finding", "model"])["auc"] - truth_auc).rename("delta").to_frame()
    d["both"] = both.reindex(d.index.get_level_values("finding"), fill_value=False).to_numpy()
    return d


def _random_errors(wide, preds, truth_auc, ids, k: int, seeds: list[list[int]]) -> tuple[list[float], float]:
    """Per seed, the plain AUC's mean |ΔAUC| on K random studies' consensus labels over the cells it defines;
    and the share of cells it cannot define (one class in the sample)."""
    study = wide.index.get_level_values("study_id")
    means, undefined = [], []
    for seed in seeds:
        chosen = set(np.random.default_rng(seed).choice(ids, k, replace=False))
        errs = np.array(_plain_cells(preds, truth_auc, wide["consensus"].where(study.isin(chosen))))
        undefined += list(np.isnan(errs))
        means.append(float(np.nanmean(errs)) if not np.isnan(errs).all() else float("nan"))
    return means, float(np.mean(undefined))


def _difference(a: list[float], b: list[float]) -> str:
    """mean(a) - mean(b) with twice its standard error (independent seeds)."""
    se = float(np.sqrt(np.nanvar(a, ddof=1) / len(a) + np.nanvar(b, ddof=1) / len(b)))
    return f"{np.nanmean(a) - np.nanmean(b):+.4f} ± {2 * se:.4f}"


def _design_rows(ctx, fig, labels, preds, findings, truth_auc, wide, ids) -> None:
    n_seeds = ctx.size(5, 30)
    n_random = ctx.size(20, 200)  # the random arm is cheap: its Monte Carlo error well below the design arm's
    t = fig.table(
        "CheXpert test set, chexpert_labeler the cheap reference and the consensus the expert: mean |ΔAUC| to the "
        f"consensus AUC over {preds['model'].nunique()} models x {len(findings)} findings: the design-based "
        f"estimate (evaluate_design_auc) from the plan's sample of K (mean of {n_seeds} seeds) against the plain "
        f"AUC on K random studies' consensus labels (mean of {n_random} seeds)",
        [
            "K",
            "design-based, floor 0.2 (default): all cells",
            "floor 0.2: cells with both classes in the sample",
            "design-based, floor 1 (equal probabilities): all cells",
            "floor 1: cells with both classes in the sample",
            "plain AUC, K random expert labels (cells with both classes)",
            "one-class cells: floor 0.2 / random",
            "floor 0.2 - random (both classes), ± 2 SE",
            "floor 1 - random (both classes), ± 2 SE",
            "signed ΔAUC, floor 0.2",
        ],
    )
    t0 = time.perf_counter()
    wins = {0.2: [], 1.0: []}
    for k in BUDGETS:
        runs = {
            f: [_design_error(preds, labels, findings, truth_auc, k, s, f) for s in range(n_seeds)]
            for f in wins
        }
        all_cells = {f: [float(d["delta"].abs().mean()) for d in r] for f, r in runs.items()}
        both = {f: [float(d.loc[d["both"], "delta"].abs().mean()) for d in r] for f, r in runs.items()}
        rnd, rnd_undefined = _random_errors(
            wide, preds, truth_auc, ids, k, [[ctx.seed, k, s] for s in range(n_random)]
        )
        one_class = float(np.mean([(~d["both"]).mean() for d in runs[0.2]]))
        c = float(np.nanmean(rnd))
        t.add(
            k,
            fmt(float(np.mean(all_cells[0.2]))),
            fmt(float(np.nanmean(both[0.2]))),
            fmt(float(np.mean(all_cells[1.0]))),
            fmt(float(np.nanmean(both[1.0]))),
            fmt(c),
            f"{one_class:.3f} / {rnd_undefined:.3f}",
            _difference(both[0.2], rnd),
            _difference(both[1.0], rnd),
            fmt(float(np.mean([d["delta"].mean() for d in runs[0.2]]))),
        )
        for f in wins:
            wins[f].append(float(np.nanmean(both[f])) < c)
        fig.checked[f"design K={k} | floor 0.2"] = fmt(float(np.mean(all_cells[0.2])))
        fig.checked[f"design K={k} | floor 0.2, both classes"] = fmt(float(np.nanmean(both[0.2])))
        fig.checked[f"design K={k} | floor 1"] = fmt(float(np.mean(all_cells[1.0])))
        fig.checked[f"design K={k} | floor 1, both classes"] = fmt(float(np.nanmean(both[1.0])))
        fig.checked[f"design K={k} | random plain"] = fmt(c)
    t.notes += [
        "the plain AUC on K random studies exists only where the sample holds both classes of the finding; the "
        "design-based estimate always gives a number (the predictions' own AUC where its sample holds one class): "
        "the like-for-like comparison is on the cells whose sample holds both classes, each estimate's own",
        f"below random at every K (cells with both classes): floor 0.2 {all(wins[0.2])}, floor 1 {all(wins[1.0])}",
        f"{time.perf_counter() - t0:.0f} s for {2 * n_seeds * len(BUDGETS)} plans and design-based estimates",
    ]


def _simulated_set(rng: np.random.Generator, n: int):
    """One simulated finding and the model of the largest true-label AUC (``m0`` unless the runner-up ties)."""
    from cxreval.planning import simulate_study_set

    best = rng.uniform(0.75, 0.85)
    aucs = [best, best - rng.uniform(0.0, 0.05), best - 0.08]
    se, sp, prev = rng.uniform(0.65, 0.95), rng.uniform(0.65, 0.95), rng.uniform(0.1, 0.4)
    ss = simulate_study_set(n, auc=aucs, sensitivity=[se], specificity=[sp], prevalence=prev, rng=rng)
    return ss, f"m{int(np.argmax(aucs))}"


def _calibration_rows(rng: np.random.Generator, n_draws: int) -> list[dict[str, object]]:
    """One simulated set: per budget, the plan's predicted P(right) and whether its own sample gave it."""
    from cxreval.planning import evaluate_design_auc, plan_relabelling

    ss, best = _simulated_set(rng, 500)
    cheap = ss.labels[ss.labels["source"] != "truth"]
    rows = []
    for k in BUDGETS:
        plan = plan_relabelling(
            ss.predictions, cheap, reference="ref0", budget=k, budgets=[k], n_draws=n_draws, rng=rng
        )
        expert = ss.labels[
            (ss.labels["source"] == "truth") & ss.labels["study_id"].isin(set(plan.table["study_id"]))
        ].assign(source="expert")
        est = evaluate_design_auc(
            ss.predictions, pd.concat([cheap, expert]), reference="ref0", expert="expert", design=plan.table
        )
        comp = est.comparison.iloc[0]
        pw = plan.power.iloc[0]
        rows.append(
            {
                "budget": k,
                "predicted": float(pw["p_right"]),
                "predicted_separable": float(pw["p_separable"]),
                "right": bool(comp["separable"]) and comp["model_a"] == best,
                "separable": bool(comp["separable"]),
            }
        )
    return rows


def power_calibration(ctx: Context) -> Figures:
    n_sets = ctx.size(20, 150)
    n_draws = ctx.size(100, 200)
    rng = np.random.default_rng(ctx.seed)
    t0 = time.perf_counter()
    r = pd.DataFrame([row for _ in range(n_sets) for row in _calibration_rows(rng, n_draws)])
    seconds = time.perf_counter() - t0
    fig = Figures()
    t = fig.table(
        f"{n_sets} simulated study sets of 500 studies per budget: predicted P(right decision) (power.csv's "
        f"p_right, {n_draws} draws) vs the fraction of sets whose own sample, labelled with the truth, gives the "
        "right decision (the design-based estimate's leading pair separable, the true best on top)",
        [
            "budget",
            "mean predicted",
            "observed",
            "observed - predicted",
            "95% band of observed",
            "within ±0.05",
            "predicted separable",
            "observed separable",
        ],
    )
    for k, g in r.groupby("budget"):
        pred, obs = float(g["predicted"].mean()), float(g["right"].mean())
        band = 1.96 * float(np.sqrt(max(obs * (1 - obs), 1e-9) / len(g)))
        t.add(
            k,
            fmt(pred, ".3f"),
            fmt(obs, ".3f"),
            fmt(obs - pred, "+.3f"),
            f"±{band:.3f}",
            abs(obs - pred) <= 0.05,
            fmt(float(g["predicted_separable"].mean()), ".3f"),
            fmt(float(g["separable"].mean()), ".3f"),
        )
        fig.checked[f"budget {k} | predicted"] = fmt(pred, ".3f")
        fig.checked[f"budget {k} | observed"] = fmt(obs, ".3f")
    edges = [-0.01, 0.2, 0.4, 0.6, 0.8, 1.0]
    bins = pd.cut(r["predicted"], edges)
    rel = fig.table(
        "reliability, all budgets pooled",
        ["predicted", "sets x budgets", "mean predicted", "observed", "observed - predicted", "95% band"],
    )
    for b, g in r.groupby(bins, observed=True):
        pred, obs = float(g["predicted"].mean()), float(g["right"].mean())
        band = 1.96 * float(np.sqrt(max(obs * (1 - obs), 1e-9) / len(g)))
        rel.add(str(b), len(g), fmt(pred, ".3f"), fmt(obs, ".3f"), fmt(obs - pred, "+.3f"), f"±{band:.3f}")
    brier = float(((r["predicted"] - r["right"]) ** 2).mean())
    t.notes += [
        f"Brier score {brier:.3f}; all budgets pooled: predicted {r['predicted'].mean():.3f}, observed "
        f"{r['right'].mean():.3f}",
        f"{seconds:.0f} s for {n_sets * len(BUDGETS)} plans and as many design-based estimates",
    ]
    return fig


PARTS = (
    Part(
        "chexpert",
        "CheXpert test set: mean |ΔAUC| to the consensus of the two-phase estimate after revealing the "
        "consensus on relabel.csv's first K studies vs K random ones (K = 25, 50, 100, 200; 20 random seeds, 5 quick).",
        chexpert,
    ),
    Part(
        "chexpert_uses",
        "CheXpert test set: the ordinary AUC with the consensus revealed on relabel.csv's first K studies vs K "
        "random ones, merged into the cheap labels or on those studies alone, for plans with and without readers "
        "(10 random seeds, 3 quick); the design-based estimate from the plan's sample of K vs the plain AUC on K "
        "random expert labels (30 plan seeds and 200 random ones; 5 and 20 quick).",
        chexpert_uses,
    ),
    Part(
        "power_calibration",
        "power.csv's predicted probability of the right decision (the best model separated from the runner-up and "
        "on top) vs the observed fraction on simulated study sets with a known truth (150 sets, 20 quick).",
        power_calibration,
    ),
)
