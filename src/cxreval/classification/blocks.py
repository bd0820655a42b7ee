"""The block driver of :func:`~cxreval.classification.evaluate_auc`: from validated arrays to the result.

:func:`evaluate_prepared` draws (or checks) the patient-level resampling plan, counts the labels, splits the
work into blocks of (model, finding) and (model, micro average), each with every reference and every replicate,
runs them on an executor (``_map_blocks``: one sort per block, every replicate at once),
and assembles the point AUCs, the bootstrap distributions, the macro average and the table.
"""

from __future__ import annotations

import dataclasses
import functools
import tempfile
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from .._typing import RNGLike
from .._validation import check_positive_int
from ..bootstrap import ResamplingPlan, draw_plan, shard_size_for, summarize_distribution
from ..exceptions import InvalidParameterError, UndefinedMetricWarning
from ..executor import Executor, ExecutorLike, get_executor
from ..executor._local import OnItem
from ..progress import NoProgress, Progress
from ..schema import MACRO, MICRO
from ..stats import AUCResult, PreparedInputs
from ..stats._auc_kernel import BlockInputs, auc_block, positive_weights, spill_inputs
from ..stats._auc_result import (
    AUC_COLUMNS,
    COUNT_COLUMNS,
    COVERAGE_COLUMNS,
    LABELLED,
    MEAN_MODEL,
    NOT_LABELLED,
    NOT_SCORED,
    ONE_CLASS,
)

__all__: list[str] = []


def evaluate_prepared(
    prep: PreparedInputs,
    *,
    n_resamples: int,
    confidence_level: float,
    macro: bool,
    micro: bool,
    mean_over_models: bool,
    rng: RNGLike,
    plan: ResamplingPlan | None,
    shard_size: int | None,
    executor: ExecutorLike,
    spill_dir: str | Path | None = None,
    progress: Progress | None = None,
) -> AUCResult:
    """The computation of :func:`~cxreval.classification.evaluate_auc` on validated arrays (options already
    checked by it): plan, then per block (model × finding, model × micro) one sort, point AUCs and every replicate;
    CIs and the table. Call :func:`~cxreval.classification.evaluate_auc` with the :class:`PreparedInputs`
    instead: it checks the options first."""
    models, fs, refs, groups, dropped = prep.models, prep.findings, prep.references, prep.groups, prep.dropped
    studies, S, Y, patient_of = prep.studies, prep.S, prep.Y, prep.patient_of
    policy, not_mentioned = prep.policy, prep.not_mentioned
    n = len(studies)
    # patients
    if plan is None and n_resamples == 0:
        if patient_of.isna().any():  # the same check draw_plan makes
            draw_plan(patient_of.to_numpy(), n_resamples=1, study_ids=list(studies))
    elif plan is None:
        plan = draw_plan(patient_of.to_numpy(), n_resamples=n_resamples, rng=rng, study_ids=list(studies))
    else:
        if plan.n_studies != n or (plan.study_ids is not None and tuple(plan.study_ids) != tuple(studies)):
            raise InvalidParameterError(
                f"evaluate_auc: the given plan covers {plan.n_studies} studies; the evaluation "
                f"needs the {n} studies of the predictions, sorted."
            )
    B = 0 if plan is None else plan.n_resamples
    counts, coverage = _counts(prep)
    one_class = coverage[coverage["status"] == ONE_CLASS]
    if len(one_class):
        warnings.warn(
            "; ".join(
                f"Reference {r!r} has only one class for finding(s) " + ", ".join(map(repr, g["finding"]))
                for r, g in one_class.groupby("reference", sort=False)
            )
            + " on the evaluated studies; their AUCs are NaN (coverage.csv).",
            UndefinedMetricWarning,
            stacklevel=2,
        )
    evaluated = coverage[coverage["status"] != NOT_SCORED]  # the evaluated findings' rows, finding-major
    covered = (evaluated["status"] != NOT_LABELLED).to_numpy().reshape(len(fs), len(refs))
    # the findings the averages are over, per reference: those it labels ('each'), those every reference labels
    # ('common', so that the macro and micro averages of all references cover the same findings)
    averaged = covered.copy()
    if prep.studies_design == "common" and len(refs) > 1:
        averaged[:] = covered.all(axis=1, keepdims=True)
    # micro average: every (finding, study) pair pooled; pair q = j * n + s, its patient that of study s
    pooled = micro and len(fs) > 1
    n_f = len(fs) + int(pooled)
    inputs = BlockInputs(
        S,
        Y,
        None if plan is None else plan.study_patient,
        n_resamples=B,
        n_patients=0 if plan is None else plan.n_patients,
    )
    if B and plan is not None:
        if shard_size is None:
            shard_size = shard_size_for(plan.n_patients, n, B)
        shards = plan.count_shards(check_positive_int(shard_size, name="shard_size", func="evaluate_auc"))
        inputs = dataclasses.replace(
            inputs,
            shards=shards,
            wpos=positive_weights(Y, plan.study_patient, shards),
            ct_max=max(1, int(plan.counts.max(initial=0))),
        )
    # blocks: (model, finding) and (model, micro), model-major so that every chunk of an executor mixes both
    blocks = [(i, j) for i in range(len(models)) for j in range(n_f)]
    point = np.full((len(models), n_f, len(refs)), np.nan)
    dist = np.full((len(models), n_f, len(refs), B), np.nan)
    runs = [(inputs, blocks)]
    if pooled and not (averaged == covered).all():  # the micro average pools the averaged findings only
        Ym = Y.copy()
        Ym[~averaged.all(axis=1)] = np.nan
        micro_inputs = dataclasses.replace(inputs, labels=Ym)
        if inputs.wpos is not None and plan is not None:
            micro_inputs = dataclasses.replace(
                micro_inputs, wpos=positive_weights(Ym, plan.study_patient, shards)
            )
        runs = [
            (inputs, [b for b in blocks if b[1] < len(fs)]),
            (micro_inputs, [b for b in blocks if b[1] == len(fs)]),
        ]
    progress = NoProgress() if progress is None else progress
    task = progress.add("AUC blocks (model x finding, every replicate)", total=len(blocks))
    ex = get_executor(executor)
    for run_inputs, run_blocks in runs:
        for (i, j), pt, ds in _map_blocks(
            ex, run_inputs, run_blocks, spill_dir, on_item=lambda _: progress.advance(task)
        ):
            point[i, j] = pt
            dist[i, j] = ds
    fnames = list(fs)
    per_point, per_dist = point[:, : len(fs)], dist[:, : len(fs)]
    if macro and len(fs) > 1:  # each reference's macro average is over the findings it labels
        fnames.append(MACRO)
        w = averaged.sum(axis=0)  # (reference,)
        with np.errstate(invalid="ignore", divide="ignore"):
            mp = np.where(averaged[None], per_point, 0.0).sum(axis=1, keepdims=True) / w[None, None, :]
            md = (
                np.where(averaged[None, :, :, None], per_dist, 0.0).sum(axis=1, keepdims=True)
                / w[None, None, :, None]
            )
        mp[..., w == 0] = np.nan
        md[..., w == 0, :] = np.nan
        point = np.concatenate([per_point, mp, point[:, len(fs) :]], axis=1)
        dist = np.concatenate([per_dist, md, dist[:, len(fs) :]], axis=1)
    if pooled:
        fnames.append(MICRO)
    chance = {(m, f) for m, f in prep.chance}
    if pooled and not averaged.any():
        point[:, -1], dist[:, -1] = np.nan, np.nan
    table = _auc_table(
        models,
        fnames,
        refs,
        groups,
        point,
        dist,
        counts,
        confidence_level,
        mean_over_models,
        covered,
        averaged,
        chance,
    )
    seed = rng if isinstance(rng, (int, np.integer)) and not isinstance(rng, bool) else None
    return AUCResult(
        table,
        tuple(models),
        tuple(fnames),
        tuple(refs),
        groups,
        point,
        dist,
        counts,
        plan,
        policy,
        confidence_level,
        not_mentioned,
        dropped,
        notes=tuple(prep.notes),
        seed=None if seed is None else int(seed),
        _inputs=BlockInputs(S, Y, inputs.study_patient),
        coverage=coverage,
        studies=prep.studies_design,
        chance=tuple(prep.chance),
        finding_map=prep.finding_map,
        soft_references=prep.soft_references,
    )


def _counts(prep: PreparedInputs) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Per finding x reference: the counts (:data:`COUNT_COLUMNS`) and the coverage (:data:`COVERAGE_COLUMNS`)."""
    Y, n = prep.Y, len(prep.studies)
    states = prep.states if prep.states is not None else np.where(np.isfinite(Y), 0, -128).astype(np.int8)
    pat = prep.patient_of.to_numpy()
    rows, cov = [], []
    for j, f in enumerate(prep.findings):
        for k, r in enumerate(prep.references):
            y = Y[j, k]
            ok = np.isfinite(y)
            lab = states[j, k] != -128
            npos, nneg = int((y[ok] == 1).sum()), int((y[ok] == 0).sum())
            if (
                r in prep.soft_references
            ):  # probabilities: counted as positive from 0.5; one class if none varies
                npos, nneg = int((y[ok] >= 0.5).sum()), int((y[ok] < 0.5).sum())
                one = not (y[ok] > 0).any() or not (y[ok] < 1).any()
            else:
                one = npos == 0 or nneg == 0
            rows.append(
                (
                    f,
                    r,
                    npos,
                    nneg,
                    int(n - ok.sum()),
                    int(lab.sum()),
                    int(pd.unique(pat[lab]).size),
                    int((states[j, k] == 1).sum()),
                    int((lab & ~ok).sum()),
                )
            )
            status = NOT_LABELLED if not lab.any() else (ONE_CLASS if one else LABELLED)
            cov.append((f, r, status))
    cov += [(f, r, NOT_SCORED) for f, r in prep.unscored]  # labelled, but no model scores it: not evaluated
    return (
        pd.DataFrame(rows, columns=list(COUNT_COLUMNS)).astype({c: np.int64 for c in COUNT_COLUMNS[2:]}),
        pd.DataFrame(cov, columns=list(COVERAGE_COLUMNS)),
    )


def _auc_table(
    models: list[str],
    fnames: list[str],
    refs: list[str],
    groups: dict[str, str],
    point: np.ndarray,
    dist: np.ndarray,
    counts: pd.DataFrame,
    confidence_level: float,
    mean_over_models: bool,
    covered: np.ndarray,
    averaged: np.ndarray,
    chance: set[tuple[str, str]],
) -> pd.DataFrame:
    """The rows of ``auc.csv``: a (finding, reference) the reference does not label has none (see coverage)."""
    summ = summarize_distribution(dist, confidence_level=confidence_level)
    cnt = counts.set_index(["finding", "reference"])
    macro_cnt = counts[averaged.ravel()].groupby("reference")[["n_pos", "n_neg", "n_dropped"]].sum()
    nf = covered.shape[0]
    rows = []

    def cn(f: str, r: str) -> tuple[int, int, int]:
        c = macro_cnt.loc[r] if f in (MACRO, MICRO) else cnt.loc[(f, r)]
        return int(c["n_pos"]), int(c["n_neg"]), int(c["n_dropped"])

    def shown(j: int, k: int) -> bool:
        return bool(covered[j, k]) if j < nf else bool(averaged[:, k].any())

    def marked(m: str, j: int, k: int) -> bool:
        if j < nf:
            return (m, fnames[j]) in chance
        return any((m, fnames[q]) in chance for q in range(nf) if averaged[q, k])

    cells = [(j, f, k, r) for j, f in enumerate(fnames) for k, r in enumerate(refs) if shown(j, k)]
    for i, m in enumerate(models):
        for j, f, k, r in cells:
            ci = summ["ci_low"][i, j, k], summ["ci_high"][i, j, k]
            rows.append((m, groups[m], f, r, point[i, j, k], *ci, *cn(f, r), marked(m, j, k)))
    if mean_over_models and len(models) > 1:
        mp = point.mean(axis=0)
        ms = summarize_distribution(dist.mean(axis=0), confidence_level=confidence_level)
        for j, f, k, r in cells:
            ci = ms["ci_low"][j, k], ms["ci_high"][j, k]
            chance_any = any(marked(m, j, k) for m in models)
            rows.append((MEAN_MODEL, "summary", f, r, mp[j, k], *ci, *cn(f, r), chance_any))
    t = pd.DataFrame(rows, columns=list(AUC_COLUMNS))
    for c in ("n_pos", "n_neg", "n_dropped"):
        t[c] = t[c].astype(np.int64)
    t["chance"] = t["chance"].astype(bool)
    return t


def _map_blocks(
    ex: Executor,
    inputs: BlockInputs,
    blocks: list[tuple[int, int]],
    spill_dir: str | Path | None,
    on_item: OnItem | None = None,
) -> list[tuple[tuple[int, int], np.ndarray, np.ndarray]]:
    """:func:`auc_block` over ``blocks`` on ``ex`` (``on_item`` as for :meth:`~cxreval.executor.Executor.map`):
    in process on the arrays themselves; elsewhere each task carries a block id and the paths of the arrays,
    written once as ``.npy`` into a temporary folder under ``spill_dir`` (removed at the end), which every
    worker memory-maps."""
    if ex.in_process:
        return ex.map(functools.partial(auc_block, inputs), blocks, on_item=on_item)
    if spill_dir is not None:
        Path(spill_dir).mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="cxreval-spill-", dir=spill_dir) as tmp:
        return ex.map(functools.partial(auc_block, spill_inputs(inputs, tmp)), blocks, on_item=on_item)
