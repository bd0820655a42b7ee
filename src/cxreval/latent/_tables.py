"""The tables of :class:`~cxreval.latent.LatentAUCResult` from the per-finding fits (private to
:mod:`cxreval.latent._evaluate`): ``auc.csv`` with the assumptions and the checks' flags beside each number,
``reader_accuracy.csv``, the two diagnostics, ``latent_sensitivity.csv`` and ``latent_comparators.csv``."""

from __future__ import annotations

import numpy as np
import pandas as pd

from .._typing import RNGLike
from ..bootstrap import ResamplingPlan, percentile_ci
from ..schema import FINDING, MACRO
from ..schema._result_columns import READER_ACCURACY_COLUMNS
from ..stats import PreparedInputs
from ..stats._auc_result import DEFAULT_GROUP
from ._diagnostics import (
    READER_AGREEMENT_COLUMNS,
    SCORE_ASSOCIATION_COLUMNS,
    pair_flagged,
    pair_rows,
    saturated,
    score_association_rows,
)
from ._finding import FindingJob, FindingOutcome
from ._result import (
    COMPARATOR_COLUMNS,
    LATENT_AUC_COLUMNS,
    LATENT_REFERENCE,
    SCORE_AWARE_ONLY,
    SENSITIVITY_COLUMNS,
    LatentAUCResult,
)

__all__ = [
    "SATURATED",
    "reader_rows",
    "diagnostic_rows",
    "sensitivity_rows",
    "comparator_rows",
    "group_names",
    "compute_latent_result",
]

SATURATED = "saturated"


def group_names(readers: tuple[str, ...], groups: tuple[tuple[int, ...], ...]) -> str:
    return ";".join("+".join(readers[j] for j in g) for g in groups)


def reader_rows(
    job: FindingJob, out: FindingOutcome, readers: tuple[str, ...], confidence_level: float
) -> list[dict[str, object]]:
    fit, ro = out.readers_only.fits[0], out.readers_only
    a = (1 - confidence_level) / 2 * 100
    rows: list[dict[str, object]] = []
    for r, src in enumerate(readers):
        n_lab = int((~np.isnan(job.labels[:, r])).sum())
        if n_lab == 0:
            continue
        iv = {}
        for name, d in (("sensitivity", ro.sensitivity), ("specificity", ro.specificity)):
            col = None if d is None else d[:, r]
            ok = col is not None and np.isfinite(col).any()
            lo, hi = np.nanpercentile(col, [a, 100 - a]) if ok and col is not None else (np.nan, np.nan)
            iv[f"{name}_low"], iv[f"{name}_high"] = float(lo), float(hi)
        rows.append(
            {
                FINDING: job.finding,
                "source": src,
                "sensitivity": float(fit.sensitivity[r]),
                "sensitivity_low": iv["sensitivity_low"],
                "sensitivity_high": iv["sensitivity_high"],
                "specificity": float(fit.specificity[r]),
                "specificity_low": iv["specificity_low"],
                "specificity_high": iv["specificity_high"],
                "n_labelled": n_lab,
                "fixed": bool(fit.fixed_readers[r]),
            }
        )
    return rows


def diagnostic_rows(
    job: FindingJob,
    out: FindingOutcome,
    readers: tuple[str, ...],
    groups: tuple[tuple[int, ...], ...],
    models: list[str],
) -> tuple[list[dict[str, object]], list[dict[str, object]], str, dict[str, int]]:
    """The reader-pair rows (pairs within a declared group left out: their dependence is modelled), the
    score-association rows of each model, the finding's ``pair_check`` and each model's number of flags."""
    spline = out.joint.candidates.index("spline") if "spline" in out.joint.candidates else None
    joint = None if spline is None else out.joint.fits[spline]
    agree = pair_rows(job.finding, readers, job.labels, out.readers_only.fits[0], joint, out.scored, groups)
    is_saturated = saturated(job.labels, groups)
    n_pairs = sum(1 for row in agree if pair_flagged(row))
    checked = sum(1 for row in agree if np.isfinite(float(str(row["z_agreement_joint"]))))
    if is_saturated and not checked:
        check = SATURATED
    else:
        check = f"{n_pairs} of {len(agree)} pairs flagged" + (f" {SCORE_AWARE_ONLY}" if is_saturated else "")
    # pairs flagged on the first fit and grouped (dependent='flagged') are no longer pairs of the check
    if out.modelled:
        grouped = ", ".join(f"{readers[a]} + {readers[b]}" for a, b in out.modelled)
        check += f"; flagged on the first fit and grouped: {grouped}"
        n_pairs += len(out.modelled)
    assoc: list[dict[str, object]] = []
    flags: dict[str, int] = {}
    y = job.labels[out.scored]
    for j, model in enumerate(models):
        s = job.scores[out.scored, job.column_of[j]]
        ok = np.isfinite(s)
        if ok.sum() < 2:
            continue
        rows = score_association_rows(model, job.finding, readers, y[ok], s[ok], out.joint.posterior[ok])
        assoc += rows
        flags[model] = n_pairs + sum(1 for row in rows if row["flagged"])
    return agree, assoc, check, flags


def _ranks(auc: np.ndarray) -> np.ndarray:
    ok = np.isfinite(auc)
    out = np.full(auc.shape, np.nan)
    out[ok] = pd.Series(-auc[ok]).rank(method="min").to_numpy()
    return out


def sensitivity_rows(job: FindingJob, out: FindingOutcome, models: list[str]) -> list[dict[str, object]]:
    rows: list[dict[str, object]] = []
    for analysis, setting, auc, note in out.sensitivity:
        rank = _ranks(auc)
        for j, model in enumerate(models):
            rows.append(
                {
                    "model": model,
                    FINDING: job.finding,
                    "analysis": analysis,
                    "setting": setting,
                    "auc": float(auc[j]),
                    "rank": rank[j],
                    "note": note,
                }
            )
    return rows


def comparator_rows(
    job: FindingJob, out: FindingOutcome, models: list[str], readers: tuple[str, ...]
) -> list[dict[str, object]]:
    refs = {"latent": out.auc, **out.comparators}
    return [
        {
            "model": model,
            FINDING: job.finding,
            "reference": ref,
            "auc": float(auc[j]),
            "source": readers[out.best_reader] if ref == "best_reader" else "",
        }
        for j, model in enumerate(models)
        for ref, auc in refs.items()
    ]


def _score_model_label(out: FindingOutcome) -> tuple[str, float]:
    names = out.joint.candidates
    if len(names) == 1:
        return names[0], float("nan")
    return "average", float(out.joint.weights[names.index("dependent")])


def compute_latent_result(
    inputs: PreparedInputs,
    jobs: list[FindingJob],
    outcomes: list[FindingOutcome],
    *,
    readers: tuple[str, ...],
    anchor: str | None,
    groups: tuple[tuple[int, ...], ...],
    flag_pairs: bool = False,
    plan: ResamplingPlan | None,
    confidence_level: float,
    rng: RNGLike,
    score_model: str,
) -> LatentAUCResult:
    """The :class:`~cxreval.latent.LatentAUCResult` of the per-finding fits (macro: the mean over the findings,
    per replicate)."""
    models = list(inputs.models)
    n_f, n_b = len(jobs), (0 if plan is None else plan.n_resamples)
    dist = np.full((len(models), n_f + 1, max(n_b, 1)), np.nan)
    point = np.full((len(models), n_f + 1), np.nan)
    tabs: dict[str, list[dict[str, object]]] = {k: [] for k in ("acc", "agree", "assoc", "sens", "comp")}
    extra: dict[tuple[int, int], dict[str, object]] = {}
    counts: dict[tuple[int, int], tuple[int, int, int]] = {}
    deps = [group_names(readers, out.groups) for out in outcomes]
    dep = deps[0] if len(set(deps)) == 1 else "per finding"
    for f, (job, out) in enumerate(zip(jobs, outcomes)):
        tabs["acc"] += reader_rows(job, out, readers, confidence_level)
        agree, assoc, check, flags = diagnostic_rows(job, out, readers, out.groups, models)
        tabs["agree"] += agree
        tabs["assoc"] += assoc
        tabs["sens"] += sensitivity_rows(job, out, models)
        tabs["comp"] += comparator_rows(job, out, models, readers)
        point[:, f] = out.auc
        if out.distribution is not None:
            dist[:, f] = out.distribution
        label, w_dep = _score_model_label(out)
        post = out.joint.posterior
        for m in range(len(models)):
            ok = np.isfinite(job.scores[out.scored, job.column_of[m]])
            n_pos = int(round(float(post[ok].sum())))
            n_all = int(np.isfinite(inputs.S[m, f, :]).sum())
            counts[(m, f)] = (n_pos, int(ok.sum()) - n_pos, n_all - int(ok.sum()))
            extra[(m, f)] = {
                "score_model": label,
                "weight_dependent": w_dep,
                "dependent": deps[f],
                "pair_check": check,
                "n_flagged": flags.get(models[m], 0),
            }
    with np.errstate(invalid="ignore"):
        point[:, n_f] = point[:, :n_f].mean(axis=1)
        dist[:, n_f] = dist[:, :n_f].mean(axis=1)
    auc_rows: list[dict[str, object]] = []
    for m, model in enumerate(models):
        group = inputs.groups.get(model, DEFAULT_GROUP)
        for f, finding in enumerate([*inputs.findings, MACRO]):
            if not np.isfinite(point[m, f]):
                continue
            lo = hi = float("nan")
            if plan is not None:
                ci = percentile_ci(dist[m, f], estimate=float(point[m, f]), confidence_level=confidence_level)
                lo, hi = ci.confidence_interval.low, ci.confidence_interval.high
            if f < n_f:
                n_pos, n_neg, n_dropped = counts[(m, f)]
                more = extra[(m, f)]
            else:
                parts = [counts[(m, k)] for k in range(n_f) if np.isfinite(point[m, k])]
                n_pos, n_neg, n_dropped = (sum(p[i] for p in parts) for i in range(3))
                flagged = sum(int(str(extra[(m, k)]["n_flagged"])) for k in range(n_f) if (m, k) in extra)
                more = {
                    "score_model": "average" if score_model == "auto" else score_model,
                    "weight_dependent": float("nan"),
                    "dependent": dep,
                    "pair_check": "per finding",
                    "n_flagged": flagged,
                }
            auc_rows.append(
                {
                    "model": model,
                    "group": group,
                    FINDING: finding,
                    "reference": LATENT_REFERENCE,
                    "auc": float(point[m, f]),
                    "ci_low": lo,
                    "ci_high": hi,
                    "n_pos": n_pos,
                    "n_neg": n_neg,
                    "n_dropped": n_dropped,
                    "chance": False,
                    **more,
                }
            )
    seed = int(rng) if isinstance(rng, (int, np.integer)) and not isinstance(rng, bool) else None
    return LatentAUCResult(
        table=pd.DataFrame(auc_rows, columns=list(LATENT_AUC_COLUMNS)),
        reader_accuracy=pd.DataFrame(tabs["acc"], columns=list(READER_ACCURACY_COLUMNS)),
        reader_agreement=pd.DataFrame(tabs["agree"], columns=list(READER_AGREEMENT_COLUMNS)),
        score_association=pd.DataFrame(tabs["assoc"], columns=list(SCORE_ASSOCIATION_COLUMNS)),
        sensitivity=pd.DataFrame(tabs["sens"], columns=list(SENSITIVITY_COLUMNS)),
        comparators=pd.DataFrame(tabs["comp"], columns=list(COMPARATOR_COLUMNS)),
        readers=readers,
        anchor=anchor,
        dependent=tuple(tuple(readers[j] for j in g) for g in groups),
        flagged_pairs=tuple(
            (job.finding, readers[a], readers[b], modelled)
            for job, out in zip(jobs, outcomes)
            for pairs, modelled in ((out.modelled, True), (out.unmodelled, False))
            for a, b in pairs
        )
        if flag_pairs
        else None,
        models=tuple(models),
        findings=tuple(inputs.findings),
        distribution=dist if n_b else np.empty((len(models), n_f + 1, 0)),
        n_resamples=n_b,
        confidence_level=confidence_level,
        seed=seed,
        policy=inputs.policy,
        not_mentioned=inputs.not_mentioned,
        score_model=score_model,
    )
