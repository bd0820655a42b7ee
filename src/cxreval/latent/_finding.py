"""Everything :func:`~cxreval.latent.evaluate_latent_auc` computes for one finding, one executor item each
(private): the readers-only model (the readers' accuracies, the pair diagnostic and the comparators), the joint
model of the readers and every model's score with its replicates (the headline), and the sensitivity analyses
(point fits: leave one reader out, each score model, an assumed within-class correlation of the readers).

The comparators, each model's AUC against labels that other methods would give the same readers: hard
Dawid–Skene (the readers-only posterior rounded at 0.5), soft Dawid–Skene (the readers-only posteriors as a soft
reference, which ignores what the score says about the truth), majority vote (ties left out) and the best single
reader (the highest fitted sensitivity + specificity, on the studies it labels).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..bootstrap import ResamplingPlan
from ._auc import latent_auc_rows
from ._diagnostics import pair_flagged, pair_rows
from ._fitting import NotIdentifiedError, independent_readers
from ._joint import FindingFit, fit_finding

__all__ = ["FindingJob", "FindingOutcome", "run_finding", "CORRELATIONS", "COMPARATORS"]

#: The assumed within-class correlations of the readers' labels of the sensitivity analysis.
CORRELATIONS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5)
#: The comparators written beside the latent estimate (``latent_comparators.csv``'s ``reference``).
COMPARATORS = ("dawid_skene_hard", "dawid_skene_soft", "majority_vote", "best_reader")


@dataclass(frozen=True)
class FindingJob:
    """One finding's inputs: the readers' ``labels`` (n, R) and the distinct models' ``scores`` (n, M; NaN
    not scored) of the studies some reader (or the anchor) labels, their positions ``rows`` in the plan's
    studies, the ``anchor``, known reader ``accuracy`` and each model's column of ``scores`` (``column_of``: models
    with identical scores share one), and any ``prior`` on the readers' accuracies with the ranges it was
    read from (``prior_range``)."""

    finding: str
    labels: np.ndarray
    scores: np.ndarray
    rows: np.ndarray
    anchor: np.ndarray | None
    accuracy: np.ndarray | None
    column_of: np.ndarray
    prior: np.ndarray | None = None  # (R, 4) Beta pseudo-counts of the readers' accuracies, and the ranges
    prior_range: np.ndarray | None = None  # (R, 4): sensitivity low, high, specificity low, high (NaN: none)


@dataclass(frozen=True)
class FindingOutcome:
    """One finding's fits: ``readers_only`` (on every labelled study) and ``joint`` (on the studies some model
    scores, ``scored`` their positions among the labelled ones); every model's (not column's) ``auc`` and
    replicates ``distribution`` (None without a plan); ``sensitivity``: (analysis, setting, aucs, note) tuples;
    ``comparators``: reference -> aucs; ``best_reader``: its index; ``groups``: the groups of dependent readers
    fitted (the declared ones, with ``dependent='flagged'`` joined by the pairs the checks flagged: ``modelled``);
    ``unmodelled``: flagged pairs left independent because grouping them would leave the model unidentified or
    group a reader whose accuracy is given."""

    readers_only: FindingFit
    joint: FindingFit
    auc: np.ndarray
    distribution: np.ndarray | None
    scored: np.ndarray
    sensitivity: list[tuple[str, str, np.ndarray, str]]
    comparators: dict[str, np.ndarray]
    best_reader: int
    groups: tuple[tuple[int, ...], ...] = ()
    modelled: tuple[tuple[int, int], ...] = ()
    unmodelled: tuple[tuple[int, int], ...] = ()


def _auc_against(scores: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """Each model's AUC against ``labels`` (0/1, or probabilities as a soft reference; NaN: no label), on the
    studies it scores."""
    out = np.full(scores.shape[1], np.nan)
    for j in range(scores.shape[1]):
        ok = np.isfinite(scores[:, j]) & ~np.isnan(labels)
        if ok.sum() >= 2:
            out[j] = latent_auc_rows(scores[ok, j], labels[ok][None, :], np.ones((1, int(ok.sum()))))[0]
    return out


def _comparators(job: FindingJob, ro: FindingFit) -> tuple[dict[str, np.ndarray], int]:
    y, s = job.labels, job.scores
    p = ro.posterior
    n_lab = (~np.isnan(y)).sum(axis=1)
    mean = np.where(n_lab > 0, np.nansum(y, axis=1) / np.maximum(n_lab, 1), np.nan)
    vote = np.where(mean > 0.5, 1.0, np.where(mean < 0.5, 0.0, np.nan))
    youden = ro.fits[0].sensitivity + ro.fits[0].specificity
    best = int(np.nanargmax(youden))
    return {
        "dawid_skene_hard": _auc_against(s, (p >= 0.5).astype(float)),
        "dawid_skene_soft": _auc_against(s, p),
        "majority_vote": _auc_against(s, vote),
        "best_reader": _auc_against(s, y[:, best]),
    }, best


def _identified(
    job: FindingJob, labels: np.ndarray, groups: tuple[tuple[int, ...], ...], prior: np.ndarray | None
) -> bool:
    fixed = job.accuracy is not None and bool(np.isfinite(job.accuracy).any())
    informed = prior is not None and bool(prior.any())
    return independent_readers(labels, groups) >= 3 or fixed or informed or job.anchor is not None


def _at_range_ends(job: FindingJob, end: int) -> np.ndarray:
    """``reader_accuracy`` with every reader of a prior fixed at the low (``end`` 0) or high (1) ends of its
    ranges; NaN (estimated) for the others and where ``reader_accuracy`` gives none."""
    assert job.prior_range is not None
    out = np.full((job.labels.shape[1], 2), np.nan) if job.accuracy is None else job.accuracy.copy()
    ranged = np.isfinite(job.prior_range).all(axis=1)
    out[ranged] = job.prior_range[ranged][:, [end, 2 + end]]
    return out


def _without(groups: tuple[tuple[int, ...], ...], r: int) -> tuple[tuple[int, ...], ...]:
    """The groups with reader ``r`` removed and the later readers renumbered (a group of one is no group)."""
    out = tuple(tuple(j - (j > r) for j in g if j != r) for g in groups)
    return tuple(g for g in out if len(g) > 1)


def _sensitivity(
    job: FindingJob,
    readers: tuple[str, ...],
    groups: tuple[tuple[int, ...], ...],
    score_model: str,
    joint: FindingFit,
    x: np.ndarray,
    scored: np.ndarray,
) -> list[tuple[str, str, np.ndarray, str]]:
    y, a = job.labels[scored], None if job.anchor is None else job.anchor[scored]
    acc = job.accuracy
    rows: list[tuple[str, str, np.ndarray, str]] = []
    nan = np.full(x.shape[1], np.nan)

    def refit(
        labels: np.ndarray = y,
        *,
        reader_accuracy: np.ndarray | None = acc,
        groups: tuple[tuple[int, ...], ...] = groups,
        score_model: str = score_model,
        correlation: float = 0.0,
        accuracy_prior: np.ndarray | None = job.prior,
    ) -> FindingFit:
        """The headline's point fit with some options changed (the readers' columns included)."""
        return fit_finding(
            labels,
            x,
            None,
            anchor=a,
            reader_accuracy=reader_accuracy,
            groups=groups,
            score_model=score_model,
            correlation=correlation,
            accuracy_prior=accuracy_prior,
        )

    for r, name in enumerate(readers):
        keep = [j for j in range(len(readers)) if j != r]
        g = _without(groups, r)
        if not (~np.isnan(y[:, r])).any():
            continue
        prior = None if job.prior is None else job.prior[keep]
        if not _identified(job, y[:, keep], g, prior):
            rows.append(("leave_one_reader_out", name, nan, "not identified without this reader"))
            continue
        try:
            fit = refit(
                labels=y[:, keep],
                reader_accuracy=None if acc is None else acc[keep],
                groups=g,
                accuracy_prior=prior,
            )
        except NotIdentifiedError:
            rows.append(("leave_one_reader_out", name, nan, "not identified without this reader"))
            continue
        rows.append(("leave_one_reader_out", name, fit.auc, ""))
    spread = joint if score_model == "auto" else refit(score_model="auto")
    for k, name in enumerate(spread.candidates):
        rows.append(("score_model", name, spread.candidate_auc[k], f"weight {spread.weights[k]:.3f}"))
    for rho in CORRELATIONS:
        if rho == 0.0:
            rows.append(("reader_correlation", f"{rho:g}", joint.auc, "the headline's assumption"))
        else:
            rows.append(("reader_correlation", f"{rho:g}", refit(correlation=rho).auc, ""))
    if job.prior is not None and job.prior_range is not None:
        # how far the prior drives the numbers: the readers of a prior held at its ranges' ends, and no prior
        for end, name in ((0, "low ends"), (1, "high ends")):
            fit = refit(reader_accuracy=_at_range_ends(job, end))
            rows.append(("accuracy_range", name, fit.auc, "the readers of a prior fixed at these ends"))
        if _identified(job, y, groups, None):
            fit = refit(accuracy_prior=None)
            rows.append(("accuracy_range", "no prior", fit.auc, "the same model without the prior"))
        else:
            rows.append(("accuracy_range", "no prior", nan, "not identified without the prior"))
    return rows


def _joined(groups: tuple[tuple[int, ...], ...], pairs: list[tuple[int, int]]) -> tuple[tuple[int, ...], ...]:
    """``groups`` joined by ``pairs`` (readers linked through any pair or group are one group), sorted."""
    parent: dict[int, int] = {}

    def root(j: int) -> int:
        while parent.setdefault(j, j) != j:
            j = parent[j]
        return j

    for g in groups:
        for j in g[1:]:
            parent[root(j)] = root(g[0])
    for a, b in pairs:
        parent[root(b)] = root(a)
    members: dict[int, list[int]] = {}
    for j in list(parent):
        members.setdefault(root(j), []).append(j)
    return tuple(sorted(tuple(sorted(m)) for m in members.values() if len(m) > 1))


def _fits(
    job: FindingJob,
    groups: tuple[tuple[int, ...], ...],
    score_model: str,
    plan: ResamplingPlan | None,
    scored: np.ndarray,
) -> tuple[FindingFit, FindingFit]:
    """The readers-only fit (every labelled study) and the joint fit of the readers and the scores (the studies
    ``scored`` by some model), each with the replicates of ``plan``."""
    common = {"reader_accuracy": job.accuracy, "groups": groups, "accuracy_prior": job.prior}
    ro = fit_finding(
        job.labels,
        None,
        None if plan is None else plan.subset(job.rows),
        anchor=job.anchor,
        score_model="spline",
        **common,  # type: ignore[arg-type]
    )
    joint = fit_finding(
        job.labels[scored],
        job.scores[scored],
        None if plan is None else plan.subset(job.rows[scored]),
        anchor=None if job.anchor is None else job.anchor[scored],
        score_model=score_model,
        **common,  # type: ignore[arg-type]
    )
    return ro, joint


def _flagged_groups(
    job: FindingJob,
    readers: tuple[str, ...],
    groups: tuple[tuple[int, ...], ...],
    scored: np.ndarray,
) -> tuple[tuple[tuple[int, ...], ...], tuple[tuple[int, int], ...], tuple[tuple[int, int], ...]]:
    """``dependent='flagged'``: the point fits under ``groups``, both pair checks, and the groups joined by the
    flagged pairs, the largest |z| first, each while the model stays identified and neither reader's accuracy is
    given (the pairs modelled, and those left independent)."""
    fixed = np.zeros(len(readers), dtype=bool)
    if job.accuracy is not None:
        fixed |= np.isfinite(job.accuracy).any(axis=1)
    if job.prior_range is not None:
        fixed |= np.isfinite(job.prior_range).any(axis=1)
    ro, joint = _fits(job, groups, "spline", None, scored)
    rows = pair_rows(job.finding, readers, job.labels, ro.fits[0], joint.fits[0], scored, groups)
    z = {
        (readers.index(str(row["source_a"])), readers.index(str(row["source_b"]))): _largest_z(row)
        for row in rows
        if pair_flagged(row)
    }
    modelled: list[tuple[int, int]] = []
    for pair in sorted(z, key=lambda p: -z[p]):  # the strongest flag first, while the model stays identified
        joined = _joined(groups, [*modelled, pair])
        if not fixed[list(pair)].any() and _identified(job, job.labels, joined, None):
            modelled.append(pair)
    left = tuple(p for p in z if p not in modelled)
    return _joined(groups, modelled), tuple(modelled), left


def _largest_z(row: dict[str, object]) -> float:
    zs = [abs(float(str(row[k]))) for k in ("z_both_positive", "z_agreement_joint")]
    return max(z for z in zs if np.isfinite(z))


def run_finding(
    i: int,
    *,
    jobs: list[FindingJob],
    plan: ResamplingPlan | None,
    readers: tuple[str, ...],
    groups: tuple[tuple[int, ...], ...],
    score_model: str,
    sensitivity_analyses: bool,
    flag_pairs: bool = False,
) -> FindingOutcome:
    """Finding ``i``'s fits (module level: pickled to the workers of an off-process executor); ``flag_pairs``
    (``dependent='flagged'``): the readers of each pair the checks flag on point fits under ``groups`` are
    grouped before the fits that are reported."""
    job = jobs[i]
    scored = np.flatnonzero(np.isfinite(job.scores).any(axis=1))
    x = job.scores[scored]
    modelled: tuple[tuple[int, int], ...] = ()
    unmodelled: tuple[tuple[int, int], ...] = ()
    if flag_pairs:
        groups, modelled, unmodelled = _flagged_groups(job, readers, groups, scored)
    ro, joint = _fits(job, groups, score_model, plan, scored)
    comp, best = _comparators(job, ro)
    sens = _sensitivity(job, readers, groups, score_model, joint, x, scored) if sensitivity_analyses else []
    c = job.column_of
    return FindingOutcome(
        ro,
        joint,
        joint.auc[c],
        None if joint.distribution is None else joint.distribution[c],
        scored,
        [(a, b, auc[c], note) for a, b, auc, note in sens],
        {k: v[c] for k, v in comp.items()},
        best,
        groups,
        modelled,
        unmodelled,
    )
