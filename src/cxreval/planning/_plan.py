"""Which studies an expert should relabel to settle which model is best, how many are enough, and the reader study
that collects the labels: :func:`plan_relabelling` → :class:`RelabelPlanResult`.

The method is in :func:`plan_relabelling`'s notes.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from .._typing import PathLike, RNGLike
from .._validation import (
    check_confidence_level,
    check_positive_int,
    check_unit_interval,
    is_number,
    normalize_rng,
)
from ..exceptions import InvalidParameterError, SchemaError
from ..executor import ExecutorLike, get_executor
from ..progress import Progress, as_progress
from ..results import ReadResult
from ._design import inclusion_probabilities, random_part, systematic_sample
from ._design_estimate import Design, DesignAUCResult, design_tables, read_design
from ._estimate import TwoPhaseAUCResult, two_phase_tables
from ._inputs import PlanInputs, check_budget, prepare_inputs
from ._plan_result import BUDGET_COLUMNS, POWER_COLUMNS, POWER_METHOD, RELABEL_COLUMNS, RelabelPlanResult
from ._planner import DesignGrid, FindingFit, PowerCurve, fit_finding, power_curve, sampling_score
from ._study import check_image_names, find_images, image_table, study_yaml
from ._verdict import budget_row, merged_models

__all__ = ["plan_relabelling"]

_FUNC = "plan_relabelling"


def _percentile(s: np.ndarray, i: int) -> int:
    return int(round(100 * float((s < s[i]).mean() + 0.5 * (s == s[i]).mean())))


def _reason(ff: FindingFit, j: int, sources: Sequence[str]) -> str:
    refs = ff.data.references[j]
    states = ["undecided" if np.isnan(v) else ("positive" if v == 1 else "negative") for v in refs]
    parts = [f"{ff.data.finding}: {sources[0]} {states[0]}"]
    if len(sources) > 1:
        dec = refs[~np.isnan(refs)]
        parts.append(
            f"readers disagree ({int(dec.sum())} of {len(dec)} positive)"
            if 0 < dec.sum() < len(dec)
            else "readers agree"
        )
    a, b = ff.best, ff.runner_up or ff.best
    pa, pb = _percentile(ff.data.scores[a], j), _percentile(ff.data.scores[b], j)
    verb = "disagree" if abs(pa - pb) >= 25 else "agree"
    parts.append(f"scores of {a} and {b} {verb} (percentiles {pa} and {pb})")
    parts.append(f"posterior {ff.posterior[j]:.2f}")
    return "; ".join(parts)


def _default_budgets(budget: int) -> list[int]:
    return sorted({0, *(max(1, round(budget * f)) for f in (0.25, 0.5, 0.75)), budget})


def _validate(
    inputs: PlanInputs,
    budget: object,
    budgets: Sequence[int] | None,
    n_draws: object,
    confidence_level: object,
) -> tuple[int, list[int], int, float]:
    b = check_budget(budget, inputs)
    nd = check_positive_int(n_draws, name="n_draws", func=_FUNC)
    _check_draws_fit(nd, max((len(fd.index) for fd in inputs.findings), default=0))
    cl = check_confidence_level(confidence_level, func=_FUNC)
    if budgets is None:
        grid = _default_budgets(b)
    else:
        grid = sorted({int(check_positive_int(k, name="budgets", func=_FUNC, minimum=0)) for k in budgets})
        if not grid or grid[-1] > len(inputs.study_ids):
            raise InvalidParameterError(
                f"The 'budgets' parameter of {_FUNC} must be budgets from 0 to the number of "
                f"studies ({len(inputs.study_ids)}). Got {list(budgets)} instead."
            )
    return b, grid, nd, cl


_DRAW_ARRAYS = 4
"""Arrays of ``n_draws x studies`` float64 the Monte Carlo holds at once, at the least (the drawn truths, their
probabilities, the refitted posteriors and their complement; measured peak: about 28)."""


def _check_draws_fit(n_draws: int, n_studies: int) -> None:
    """Refuse, before any work, a number of draws whose Monte Carlo cannot fit in this machine's memory."""
    import os

    try:
        total = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, ValueError, OSError):  # not POSIX: left to the run
        return
    need = n_draws * n_studies * 8 * _DRAW_ARRAYS
    if total > 0 and need > total:
        raise InvalidParameterError(
            f"The 'n_draws' parameter of {_FUNC} is too large: {n_draws} draws of "
            f"{n_studies} studies need at least {need / 2**30:,.0f} GiB of memory "
            f"({_DRAW_ARRAYS} arrays of draws x studies, float64) and this machine has "
            f"{total / 2**30:,.1f} GiB. Use fewer draws (the default is 200)."
        )


def _power(
    item: tuple[FindingFit, DesignGrid, list[int], int, float, np.random.Generator, int, float],
) -> PowerCurve:
    ff, ranks, grid, nd, cl, gen, n_all, target = item
    return power_curve(
        ff, ranks, grid, n_draws=nd, confidence_level=cl, rng=gen, n_all=n_all, target_power=target
    )


_NO_DESIGN = Design({}, {})


def _check_floor(value: object) -> float:
    if not is_number(value) or not 0 < float(value) <= 1:
        raise InvalidParameterError(
            f"The 'uniform_floor' parameter of {_FUNC} must be a float in (0, 1] (every study needs a probability "
            f"of being drawn above 0, or the design-based estimate is not defined). Got {value!r} instead."
        )
    return float(value)


def _study_ids(value: Sequence[str] | pd.DataFrame | None) -> list[str] | None:
    if value is None:
        return None
    if isinstance(value, pd.DataFrame):
        if "study_id" not in value.columns:
            raise SchemaError(
                f"The 'anchor_studies' parameter of {_FUNC} is a table without a study_id column; it "
                f"has {list(value.columns)}."
            )
        return [str(s) for s in value["study_id"]]
    return [str(s) for s in value]


def plan_relabelling(
    predictions: pd.DataFrame | ReadResult | Sequence[pd.DataFrame | ReadResult],
    labels: pd.DataFrame | ReadResult | Sequence[pd.DataFrame | ReadResult],
    *,
    reference: str,
    budget: int,
    readers: Sequence[str] | None = None,
    anchor: str | None = None,
    anchor_studies: Sequence[str] | pd.DataFrame | None = None,
    findings: Sequence[str] | None = None,
    budgets: Sequence[int] | None = None,
    n_draws: int = 200,
    confidence_level: float = 0.95,
    target_power: float = 0.8,
    uniform_floor: float = 0.2,
    images: PathLike | None = None,
    rng: RNGLike = None,
    executor: ExecutorLike = None,
    progress: Progress | None = None,
) -> RelabelPlanResult:
    """Draw the studies an expert should relabel (with known probabilities that favour the studies whose labels
    sharpen the models' AUCs most), estimate the power of the right decision per budget, and lay out the reader
    study (the method: Notes).

    Parameters
    ----------
    predictions : DataFrame, ReadResult or list of them
        Long prediction table ``study_id, model, finding, score`` (at least two models).
    labels : DataFrame, ReadResult or list of them
        Long label table ``study_id, [patient_id,] finding, source, state``; uncertain labels are left out (not
        decided), not-mentioned ones read as negative.
    reference : str
        The cheap source that labels every study (e.g. a report labeller).
    budget : int
        How many studies the expert can relabel: the size of the sample (``relabel.csv``, the reader study).
    readers : list of str, optional
        Further noisy sources (other labellers, readers). With a single source the latent model is identified by
        its binormal score assumption alone; with three or more sources by the sources.
    anchor : str, optional
        A source whose labels are exact where given (an earlier relabelling round): those studies are known.
    anchor_studies : list of str or DataFrame, optional
        Count the anchor's labels on these studies only (study ids, or a table with a ``study_id`` column). An
        earlier plan's ``relabel.csv`` (with ``inclusion_probability``) is the design of the anchor's labels: the
        design-based estimate (``design_auc.csv``) is computed from them.
    findings : list of str, optional
        Default: every finding the reference labels and the predictions score.
    budgets : list of int, optional
        The budgets of ``power.csv`` (default 0, 25%, 50%, 75% and 100% of ``budget``).
    n_draws : int, default=200
        Monte Carlo draws of every study's truth and the model's parameters (the same draws for every budget).
    confidence_level : float, default=0.95
    target_power : float, default=0.8
        The probability of the right decision whose smallest budget ``budget.csv`` gives per finding, searched up
        to every study; where no budget reaches it, the finding's verdict says that relabelling cannot separate
        the leading pair, and why.
    uniform_floor : float, default=0.2
        The share of the budget drawn with equal probabilities (in (0, 1]; 1 = a simple random sample): every
        study's inclusion probability is at least ``budget * uniform_floor / N``.
    images : path, optional
        The folder of the images: ``<study_id>.<suffix>`` or ``<study_id>/<image>`` (first in sorted order); the
        selected studies' images are copied into the saved study folder.
    rng : None, int or Generator
        Seed of the sample and of the Monte Carlo draws (each finding draws from its own child seed: the same power
        whatever the executor).
    executor : Executor, spec string or None
        Where the findings' Monte Carlo runs (:func:`cxreval.executor.get_executor`; default in process).
    progress : Progress, optional
        One task per finding's power.

    Returns
    -------
    res : RelabelPlanResult

    Notes
    -----
    Sampling score. Per finding, ``w_i`` is study ``i``'s prediction ``P(T_i = 1 | the references, the models'
    mean normal score, the anchor)`` (a one-dimensional latent model), and ``P``, ``Q`` the expected numbers of
    positives and negatives among the studies not yet known. As a positive a study carries about ``1 / P`` of an
    AUC's pair sums, as a negative ``1 / Q``; its score is ``sqrt(sum_f w_i / P^2 + (1 - w_i) / Q^2)`` over the
    findings (an expert reads a study for every finding at once): inclusion probabilities proportional to it
    (Neyman allocation) make the design-based AUCs' variance small, and with a rare finding they favour its likely
    positives. ``expected_change`` is reported beside it: with the two leading models ``a`` and ``b`` by the
    current two-phase estimate (:func:`cxreval.planning.evaluate_two_phase_auc`), ``delta = AUC_a - AUC_b``, and
    the joint posterior ``P(T_i = 1 | data)`` (every model's score), revealing study ``i`` changes ``delta`` by, in
    expectation, ``w_i |delta_i(1) - delta| + (1 - w_i) |delta_i(0) - delta|``, summed over findings
    (``delta_i(v)``: ``delta`` with ``w_i`` set to ``v`` in the posterior-weighted Mann–Whitney sums; closed form).
    On the CheXpert test set, sampling by the score gives AUCs closer to the radiologists' consensus than sampling
    by the expected change, and than as many random expert labels (``bench/RESULTS.md``, planning:chexpert_uses).

    Models whose scores of a finding are identical are one model of that finding (named by the first, in sorted
    order): no truth can separate them. ``budget.csv``'s ``same_scores`` and the summary say which.

    Design. The sample is drawn with known inclusion probabilities, ``budget ((1 - f) c_i / sum c + f / N)`` over the
    ``N`` studies not yet known, ``c_i`` the sampling score (``sampling_score``) and ``f`` = ``uniform_floor``
    (capped at 1, the rest rescaled), by randomized systematic sampling (exactly ``budget`` studies); a part of it
    is marked as an equal-probability sample (``random_part``), and it is listed in a random reading order
    (:mod:`cxreval.planning._design`). Once the expert has labelled it, the design-based (AIPW) estimate corrects
    the latent predictions on it with inverse inclusion probabilities (:func:`cxreval.planning.evaluate_design_auc`;
    ``design_auc.csv`` when ``anchor_studies`` is this ``relabel.csv``): valid whatever the latent model.

    Power. For each budget ``k``, the probability of the right decision (:data:`POWER_METHOD`): that the
    design-based estimate's ``confidence_level`` interval of AUC(best) - AUC(runner-up) excludes 0 and its best is
    the population's best, once ``k`` studies drawn by the design are labelled. ``n_draws`` chains of data
    augmentation started at the fit (each sweep: every study's truth given the parameters, then the parameters given
    the truths) give ``n_draws`` draws of every study's truth, and a Bayesian bootstrap of the studies the
    population's best model in each draw; per draw, a design of ``k`` studies is drawn, its drawn truths revealed and
    the estimate computed. Each finding draws from its own child seed of ``rng``. ``p_separable`` counts a
    separation whichever model leads, ``p_wrong`` one with the wrong model on top. The leading pair is the pair whose
    estimates came out on top, so its fitted gap runs high (the winner's curse): the draws are weighted by an
    exchangeable normal prior on the models' AUCs, its variance estimated from the draws by the method of moments
    (empirical Bayes; at least 0.01 squared); ``effective_draws`` says how many draws are left in effect. The power
    assumes the latent model (the truths are drawn from it); the estimate it predicts for does not.

    Raises
    ------
    UnknownNameError
        ``reference``, ``readers`` or ``anchor`` not a source of ``labels``.
    InvalidParameterError
        Fewer than two models; ``budget`` above the number of studies not yet relabelled.
    SchemaError
        A selected study without an image in ``images``.
    """
    design_table = anchor_studies if isinstance(anchor_studies, pd.DataFrame) else None
    design = (
        read_design(design_table, func=_FUNC)
        if design_table is not None and "inclusion_probability" in design_table.columns
        else None
    )
    inputs = prepare_inputs(
        predictions,
        labels,
        reference=reference,
        readers=readers,
        anchor=anchor,
        findings=findings,
        anchor_studies=_study_ids(anchor_studies),
        merge_identical=True,
    )
    b, grid, nd, cl = _validate(inputs, budget, budgets, n_draws, confidence_level)
    target = check_unit_interval(target_power, name="target_power", func=_FUNC)
    floor = _check_floor(uniform_floor)
    folder = Path(images) if images is not None else None
    if folder is not None and not folder.is_dir():
        raise InvalidParameterError(
            f"The 'images' parameter of {_FUNC} must be a folder of images. Got {str(folder)!r} instead."
        )
    gen = normalize_rng(rng)
    ex = get_executor(executor)
    prog = as_progress(progress, func=_FUNC)
    fits = [fit_finding(fd) for fd in inputs.findings]
    n = len(inputs.study_ids)
    change = np.zeros(n)
    known = np.ones(n, dtype=bool) if inputs.anchor_source else np.zeros(n, dtype=bool)
    best_part = np.full(n, -1.0)
    which = np.zeros((n, 2), dtype=int)  # (finding, row) of each study's largest contribution
    for k, ff in enumerate(fits):
        idx = ff.data.index
        change[idx] += ff.change
        if inputs.anchor_source:
            k_known = np.zeros(n, dtype=bool)
            k_known[idx] = ~np.isnan(ff.data.anchor)
            known &= k_known
        bigger = ff.change > best_part[idx]
        best_part[idx[bigger]] = ff.change[bigger]
        which[idx[bigger]] = np.column_stack([np.full(bigger.sum(), k), np.flatnonzero(bigger)])
    candidates = np.flatnonzero(~known)
    score = sampling_score(fits, n)
    design_gen, *finding_gens = gen.spawn(1 + len(fits))
    pi = inclusion_probabilities(score[candidates], b, uniform_floor=floor)
    drawn = systematic_sample(pi, design_gen)[0]
    in_random = random_part(drawn, pi, b, floor, design_gen)
    chosen = np.flatnonzero(drawn)
    chosen = chosen[design_gen.permutation(len(chosen))]  # the reading order: random
    top = candidates[chosen]
    reasons = [_reason(fits[which[i, 0]], int(which[i, 1]), inputs.sources) for i in top]
    relabel = pd.DataFrame(
        {
            "study_id": inputs.study_ids[top],
            "patient_id": inputs.patient_ids[top],
            "priority": np.arange(1, len(top) + 1),
            "inclusion_probability": pi[chosen],
            "random_part": in_random[chosen],
            "sampling_score": score[top],
            "expected_change": change[top],
            "reason": reasons,
        },
        columns=list(RELABEL_COLUMNS),
    )
    check_image_names(list(relabel["study_id"]))  # each names its image in the reader study: never outside it
    sources = find_images(folder, list(relabel["study_id"]), func=_FUNC) if folder is not None else None
    candidate = np.zeros(n, dtype=bool)
    candidate[candidates] = True
    task = prog.add(f"power of {len(fits)} findings, {nd} draws per budget", total=len(fits))
    items = [
        (
            ff,
            DesignGrid(score, candidate, floor, ff.data.index),
            grid,
            nd,
            cl,
            child,
            len(candidates),
            target,
        )
        for ff, child in zip(fits, finding_gens)
    ]
    curves = ex.map(_power, items, on_item=lambda _: prog.advance(task))
    prog.done(task)
    rows = []
    for ff, pc in zip(fits, curves):
        for k, (p, se, p_sep, p_wrong) in zip(grid, pc.points):
            rows.append(
                {
                    "finding": ff.data.finding,
                    "best": ff.best,
                    "runner_up": ff.runner_up or "none",
                    "budget": k,
                    "p_right": p,
                    "mc_se": se,
                    "p_separable": p_sep,
                    "p_wrong": p_wrong,
                    "n_draws": nd,
                    "effective_draws": pc.effective_draws,
                    "method": POWER_METHOD,
                }
            )
    auc, comp = two_phase_tables(inputs, fits, confidence_level=cl)
    estimate = TwoPhaseAUCResult(
        auc, comp, reference=inputs.sources[0], readers=inputs.sources[1:], anchor=inputs.anchor_source
    )
    if design is not None:
        d_auc, d_comp = design_tables(inputs, design, confidence_level=cl)
    else:
        d_auc, d_comp = design_tables(
            dataclasses.replace(inputs, findings=()), _NO_DESIGN, confidence_level=cl
        )
    design_res = DesignAUCResult(
        d_auc,
        d_comp,
        reference=inputs.sources[0],
        readers=inputs.sources[1:],
        expert=inputs.anchor_source if design is not None else None,
        n_listed=design.n_listed if design is not None else 0,
    )
    needed = pd.DataFrame(
        [budget_row(ff, pc, target_power=target, confidence_level=cl) for ff, pc in zip(fits, curves)],
        columns=list(BUDGET_COLUMNS),
    ).astype({"budget_needed": "Int64"})
    merged = merged_models({ff.data.finding: ff.data.copies for ff in fits}, len(inputs.models))
    notes = [merged] if merged else []
    notes += [
        f"{fd.finding}: {fd.n_unscored} labelled studies left out (not scored by every model)"
        for fd in inputs.findings
        if fd.n_unscored
    ]
    notes += [f"{ff.data.finding}: a latent-model fit did not converge" for ff in fits if not ff.converged]
    return RelabelPlanResult(
        relabel,
        pd.DataFrame(rows, columns=list(POWER_COLUMNS)),
        estimate,
        image_table(list(relabel["study_id"]), list(relabel["patient_id"]), sources),
        reference=inputs.sources[0],
        readers=inputs.sources[1:],
        anchor=inputs.anchor_source,
        budget=b,
        budgets=tuple(grid),
        n_draws=nd,
        confidence_level=cl,
        findings=tuple(f.finding for f in inputs.findings),
        study=study_yaml(
            name=f"relabel-{inputs.sources[0]}",
            findings=[f.finding for f in inputs.findings],
            order_seed=0,
            extra={"order": "priority"},
        ),
        needed=needed,
        target_power=target,
        design=design_res,
        uniform_floor=floor,
        notes=tuple(notes),
        image_sources=tuple(str(s) for s in sources or ()),
    )
