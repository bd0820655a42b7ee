"""Relabelling plans: the planner against random selection on the CheXpert test set, and the calibration of the
predicted power on simulated study sets with a known truth.

``chexpert``: start from ``chexpert_labeler`` for all 500 studies of the CheXpert test set; reveal the 5-radiologist
``consensus`` label for the top-K studies of ``cxreval plan``'s ``relabel.csv`` (K = 25, 50, 100, 200), or for K
random studies (20 seeds; 5 quick); the two-phase estimate (``evaluate_two_phase_auc``, anchor = the revealed
labels) of the 10 leaderboard models' AUCs on the 5 competition findings is compared with their AUC against the
consensus (sklearn's ``roc_auc_score``): mean |ΔAUC| over the 50 model × finding cells.

``chexpert_uses``: what else the plan's order helps, on the same data: the consensus revealed on the planned or K
random studies, then (a) the ordinary AUC against the labels with the revealed studies' cheap labels replaced (what
``cxreval rank`` computes with the expert's labels merged in) and (b) the ordinary AUC on the revealed studies alone;
for the plan from ``chexpert_labeler`` alone and for the plan with readers bc4, bc6 and bc8 beside it (10 random
seeds; 3 quick).

``power_calibration``: simulated study sets of 500 studies (one cheap reference with sensitivity and specificity
drawn from [0.65, 0.95], prevalence from [0.1, 0.4], three models with close true-label AUCs): the planner's
predicted probability that the best model is separable from the runner-up after relabelling the top k studies,
against the fraction of sets in which it is, when those studies' true labels are revealed and the two-phase
estimate is computed (its own leading pair, as ``comparison.csv`` reports it; 100 sets; 20 quick), per budget and by
bins of the predicted probability.

``power_oracle``: the same design and outcomes, with the Monte Carlo's truths drawn also from the model that generated
the data (its prevalence, the reference's sensitivity and specificity, the models' binormal scores): what the excess
of the predicted power owes to the fitted latent model rather than to the Monte Carlo itself.
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
    return pd.Series(out)


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
            "planned (relabel.csv top K)",
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


def _plain_error(wide: pd.DataFrame, preds: pd.DataFrame, truth_auc: pd.Series, labels: pd.Series) -> float:
    """Mean |ΔAUC| to the consensus of the ordinary AUC against ``labels`` (a 0/1/NaN Series by study_id and
    finding), over the model x finding cells it defines (both classes present)."""
    from sklearn.metrics import roc_auc_score

    errs = []
    for (finding, model), g in preds.groupby(["finding", "model"]):
        y = labels.xs(finding, level="finding").reindex(g["study_id"]).to_numpy(dtype=float)
        ok = ~np.isnan(y)
        if len(np.unique(y[ok])) == 2:
            errs.append(abs(roc_auc_score(y[ok], g["score"].to_numpy()[ok]) - truth_auc[(finding, model)]))
    return float(np.mean(errs)) if errs else float("nan")


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
    return fig


def _simulated_set(rng: np.random.Generator, n: int, *, with_truth_model: bool = False):
    from cxreval.planning import simulate_study_set

    best = rng.uniform(0.75, 0.85)
    aucs = [best, best - rng.uniform(0.0, 0.05), best - 0.08]
    se, sp, prev = rng.uniform(0.65, 0.95), rng.uniform(0.65, 0.95), rng.uniform(0.1, 0.4)
    ss = simulate_study_set(n, auc=aucs, sensitivity=[se], specificity=[sp], prevalence=prev, rng=rng)
    return (
        (ss, {"auc": aucs, "sensitivity": se, "specificity": sp, "prevalence": prev})
        if with_truth_model
        else ss
    )


def _true_posterior(ss, truth_model: dict, ids: np.ndarray, models: list[str]) -> np.ndarray:
    """P(T = 1 | reference, raw scores) under the model that generated ``ss`` (simulate_study_set's default score
    correlation 0.5), per study of ``ids``."""
    from scipy.special import expit, logit, ndtri

    y = (
        ss.labels[ss.labels["source"] == "ref0"]
        .set_index("study_id")["state"]
        .loc[ids]
        .eq("positive")
        .to_numpy()
    )
    raw = np.column_stack(
        [
            ss.predictions[ss.predictions["model"] == m].set_index("study_id")["score"].loc[ids].to_numpy()
            for m in models
        ]
    )
    mu = np.sqrt(2) * ndtri(np.array([truth_model["auc"][int(m[1:])] for m in models]))
    cov = 0.5 * np.ones((len(mu), len(mu))) + 0.5 * np.eye(len(mu))
    beta = np.linalg.solve(cov, mu)
    se, sp = truth_model["sensitivity"], truth_model["specificity"]
    return expit(
        logit(truth_model["prevalence"])
        + np.where(y, np.log(se / (1 - sp)), np.log((1 - se) / sp))
        + raw @ beta
        - 0.5 * mu @ beta
    )


def power_calibration(ctx: Context) -> Figures:
    from cxreval.planning import evaluate_two_phase_auc, plan_relabelling

    n_sets = ctx.size(20, 100)
    n_draws = ctx.size(100, 200)
    rng = np.random.default_rng(ctx.seed)
    rows = []
    t0 = time.perf_counter()
    plan_s = []
    for _ in range(n_sets):
        ss = _simulated_set(rng, 500)
        cheap = ss.labels[ss.labels["source"] != "truth"]
        t1 = time.perf_counter()
        plan = plan_relabelling(
            ss.predictions,
            cheap,
            reference="ref0",
            budget=max(BUDGETS),
            budgets=list(BUDGETS),
            n_draws=n_draws,
            rng=rng,
        )
        plan_s.append(time.perf_counter() - t1)
        for k, p in zip(plan.power["budget"], plan.power["p_separable"]):
            studies = set(plan.table["study_id"].iloc[:k])
            truth = ss.labels[(ss.labels["source"] == "truth") & ss.labels["study_id"].isin(studies)]
            # the estimate a user would read after relabelling: its own leading pair (comparison.csv)
            est = evaluate_two_phase_auc(
                ss.predictions,
                pd.concat([cheap, truth.assign(source="expert")]),
                reference="ref0",
                anchor="expert",
            )
            rows.append(
                {
                    "budget": int(k),
                    "predicted": float(p),
                    "separable": bool(est.comparison["separable"].iloc[0]),
                }
            )
    seconds = time.perf_counter() - t0
    r = pd.DataFrame(rows)
    fig = Figures()
    t = fig.table(
        f"{n_sets} simulated study sets of 500 studies per budget: predicted P(separable) (power.csv, "
        f"{n_draws} draws) vs the fraction separable once the true labels of the top k are revealed",
        [
            "budget",
            "mean predicted",
            "observed",
            "observed - predicted",
            "95% band of observed",
            "within ±0.05",
        ],
    )
    for k, g in r.groupby("budget"):
        pred, obs = float(g["predicted"].mean()), float(g["separable"].mean())
        band = 1.96 * float(np.sqrt(max(obs * (1 - obs), 1e-9) / len(g)))
        t.add(
            k,
            fmt(pred, ".3f"),
            fmt(obs, ".3f"),
            fmt(obs - pred, "+.3f"),
            f"±{band:.3f}",
            abs(obs - pred) <= 0.05,
        )
        fig.checked[f"budget {k} | predicted"] = fmt(pred, ".3f")
        fig.checked[f"budget {k} | observed"] = fmt(obs, ".3f")
    edges = [-0.01, 0.2, 0.4, 0.6, 0.8, 1.0]
    bins = pd.cut(r["predicted"], edges)
    rel = fig.table(
        "reliability, all budgets pooled",
        [
            "predicted",
            "sets x budgets",
            "mean predicted",
            "observed",
            "observed - predicted",
            "95% band of observed",
        ],
    )
    for b, g in r.groupby(bins, observed=True):
        pred, obs = float(g["predicted"].mean()), float(g["separable"].mean())
        band = 1.96 * float(np.sqrt(max(obs * (1 - obs), 1e-9) / len(g)))
        rel.add(str(b), len(g), fmt(pred, ".3f"), fmt(obs, ".3f"), fmt(obs - pred, "+.3f"), f"±{band:.3f}")
    per = fig.table(
        "reliability per budget: observed (mean predicted, sets) per predicted-probability bin",
        ["budget", *(str(b) for b in bins.cat.categories)],
    )
    for k, g in r.groupby("budget"):
        cells = []
        for b in bins.cat.categories:
            h = g[bins.loc[g.index] == b]
            cells.append(
                f"{h['separable'].mean():.2f} ({h['predicted'].mean():.2f}, {len(h)})" if len(h) else ""
            )
        per.add(k, *cells)
    brier = float(((r["predicted"] - r["separable"]) ** 2).mean())
    t.notes += [
        f"Brier score {brier:.3f}; observed = the two-phase estimate's leading pair separable (its own "
        "comparison.csv) once the true labels of the top k are revealed",
        f"{seconds:.0f} s for {n_sets} plans and {n_sets * len(BUDGETS)} two-phase estimates; plan_relabelling "
        f"(500 studies, 3 models, {len(BUDGETS)} budgets, {n_draws} draws) median "
        f"{float(np.median(plan_s)):.1f} s",
    ]
    return fig


def _separable_after(ss, cheap: pd.DataFrame, studies: np.ndarray, positive: np.ndarray) -> bool:
    """Whether the two-phase estimate's leading pair is separable once ``studies`` are relabelled ``positive``."""
    from cxreval.planning import evaluate_two_phase_auc

    expert = pd.DataFrame(
        {
            "study_id": studies,
            "patient_id": studies,
            "finding": ss.finding,
            "source": "expert",
            "state": np.where(positive, "positive", "negative"),
        }
    )
    est = evaluate_two_phase_auc(
        ss.predictions, pd.concat([cheap, expert]), reference="ref0", anchor="expert"
    )
    return bool(est.comparison["separable"].iloc[0])


def power_oracle(ctx: Context) -> Figures:
    from cxreval.planning import plan_relabelling

    n_sets = ctx.size(10, 50)
    n_draws = ctx.size(10, 30)
    rng = np.random.default_rng(ctx.seed)
    rows = []
    for _ in range(n_sets):
        ss, tm = _simulated_set(rng, 500, with_truth_model=True)
        cheap = ss.labels[ss.labels["source"] != "truth"]
        plan = plan_relabelling(
            ss.predictions,
            cheap,
            reference="ref0",
            budget=max(BUDGETS),
            budgets=list(BUDGETS),
            n_draws=ctx.size(100, 200),
            rng=rng,
        )
        order = np.asarray(plan.table["study_id"], dtype=object)
        p_true = _true_posterior(ss, tm, order, sorted(ss.predictions["model"].unique()))
        draws = rng.random((n_draws, len(order))) < p_true
        truth = ss.truth.loc[order].to_numpy() == 1
        for k, p in zip(plan.power["budget"], plan.power["p_separable"]):
            oracle = np.mean([_separable_after(ss, cheap, order[:k], d[:k]) for d in draws])
            rows.append(
                {
                    "budget": int(k),
                    "fitted": float(p),
                    "oracle": float(oracle),
                    "separable": _separable_after(ss, cheap, order[:k], truth[:k]),
                }
            )
    r = pd.DataFrame(rows)
    fig = Figures()
    t = fig.table(
        f"{n_sets} simulated study sets of 500 studies (the design of power_calibration): power.csv (its Monte "
        f"Carlo over truths drawn from the fitted latent model) and the same question asked of {n_draws} "
        "truths drawn from the model that generated the data (each revealed on the plan's top k and given to "
        "evaluate_two_phase_auc), against the observed fraction separable",
        [
            "budget",
            "observed",
            "power.csv (fitted model)",
            "observed - fitted",
            "true-model draws",
            "observed - true-model",
            "95% band of observed",
        ],
    )
    for k, g in r.groupby("budget"):
        obs, fit, orc = float(g["separable"].mean()), float(g["fitted"].mean()), float(g["oracle"].mean())
        band = 1.96 * float(np.sqrt(max(obs * (1 - obs), 1e-9) / len(g)))
        t.add(
            k,
            fmt(obs, ".3f"),
            fmt(fit, ".3f"),
            fmt(obs - fit, "+.3f"),
            fmt(orc, ".3f"),
            fmt(obs - orc, "+.3f"),
            f"±{band:.3f}",
        )
        fig.checked[f"budget {k} | true-model draws"] = fmt(orc, ".3f")
    fit_gap = float((r["separable"] - r["fitted"]).mean())
    orc_gap = float((r["separable"] - r["oracle"]).mean())
    t.notes += [
        "The same sets, plans and observed outcomes in both columns; only where the truths of the Monte Carlo "
        "come from differs",
        f"observed - predicted over all budgets: {fit_gap:+.3f} with the fitted latent model (power.csv), "
        f"{orc_gap:+.3f} with truths from the generating model",
    ]
    fig.checked["all budgets | observed - fitted"] = fmt(fit_gap, "+.3f")
    fig.checked["all budgets | observed - true-model"] = fmt(orc_gap, "+.3f")
    return fig


PARTS = (
    Part(
        "chexpert",
        "CheXpert test set: mean |ΔAUC| to the consensus of the two-phase estimate after revealing the "
        "consensus on relabel.csv's top K studies vs K random ones (K = 25, 50, 100, 200; 20 random seeds, 5 quick).",
        chexpert,
    ),
    Part(
        "chexpert_uses",
        "CheXpert test set: the ordinary AUC with the consensus revealed on relabel.csv's top K studies vs K random "
        "ones, merged into the cheap labels or on those studies alone, for plans with and without readers "
        "(10 random seeds, 3 quick).",
        chexpert_uses,
    ),
    Part(
        "power_calibration",
        "power.csv's predicted probability of separating the best model from the runner-up "
        "vs the observed fraction on simulated study sets with a known truth (100 sets, 20 quick).",
        power_calibration,
    ),
    Part(
        "power_oracle",
        "The power Monte Carlo with truths drawn from the generating model vs from the fitted latent "
        "model, on the power_calibration design: where the excess of predicted power comes from (50 sets, 10 quick).",
        power_oracle,
    ),
)
