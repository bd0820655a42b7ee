"""Each model's AUC against the latent truth of several readers, from label and prediction tables or files.

:func:`evaluate_latent_auc` (DataFrames), :func:`evaluate_latent_auc_files` (files: what ``cxreval classify
--latent-truth`` runs) and :func:`evaluate_latent_auc_prepared` (the arrays of
:func:`cxreval.stats.prepare_inputs`) all return a :class:`~cxreval.latent.LatentAUCResult`. Per finding,
the evaluated studies are those with a label from at least one reader (or the anchor); the readers' labels are
binarised by the label policy (default: an uncertain label is no label from that reader, ``not_mentioned``
negative, as ``classify``). Per finding, one model of the readers and every model's score
(:mod:`cxreval.latent._joint`) gives one posterior truth against which every model's AUC is computed, refitted
in every replicate of one patient-bootstrap plan shared by every finding (paired replicates; the macro average
is the mean of each replicate's per-finding AUCs); :mod:`cxreval.latent._finding` adds the readers-only fit (the
readers' accuracies, the comparators) and the sensitivity analyses.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial
from os import PathLike
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .._typing import RNGLike
from .._validation import check_confidence_level, check_positive_int, did_you_mean
from ..bootstrap import ResamplingPlan, draw_plan
from ..exceptions import InvalidParameterError
from ..executor import ExecutorLike, open_executor
from ..progress import Progress, as_progress
from ..schema import FINDING
from ..schema._result_columns import READER_ACCURACY_COLUMNS
from ..stats import PreparedInputs, prepare_from_files, prepare_inputs
from ._finding import FindingJob, run_finding
from ._fitting import NOT_IDENTIFIED, NotIdentifiedError, independent_readers
from ._joint import JOINT_SCORE_MODELS
from ._reader_tables import prior_arrays, read_reader_accuracy, read_reader_prior
from ._resampling import bootstrap_latent_class
from ._result import LatentAUCResult
from ._tables import compute_latent_result

__all__ = [
    "evaluate_latent_auc",
    "evaluate_latent_auc_files",
    "evaluate_latent_auc_prepared",
    "read_reader_accuracy",
    "reader_accuracy_table",
]


def _check_readers(readers: object, anchor: str | None, func: str) -> tuple[list[str], str | None]:
    if isinstance(readers, str):
        readers = [r.strip() for r in readers.split(",") if r.strip()]
    if not isinstance(readers, Sequence) or not readers or not all(isinstance(r, str) for r in readers):
        raise InvalidParameterError(
            f"The 'readers' parameter of {func} must name the label sources to treat as "
            f"readers (e.g. readers=['bc4', 'bc6', 'bc8']). Got {readers!r} instead."
        )
    rs = list(readers)
    if len(set(rs)) != len(rs):
        raise InvalidParameterError(f"{func}: 'readers' names a source twice: {rs}.")
    if anchor is not None and anchor in rs:
        raise InvalidParameterError(
            f"{func}: the anchor {anchor!r} is also a reader; an anchor is a reference "
            "treated as exact, not one of the readers."
        )
    return rs, anchor


def _check_prior_sources(
    priors: pd.DataFrame | None, acc: pd.DataFrame | None, readers: list[str], func: str
) -> None:
    """Refuse a prior on a source that is not a reader (a misspelt name would be ignored) or on a (finding,
    reader) whose accuracy ``reader_accuracy=`` holds fixed (the prior would mean nothing there)."""
    if priors is None:
        return
    unknown = sorted(set(priors["source"]) - set(readers))
    if unknown:
        raise InvalidParameterError(
            f"{func}: reader_prior= names {unknown[0]!r}, which is not one of the readers "
            f"({', '.join(readers)}).{did_you_mean(unknown[0], readers)}"
        )
    if acc is not None:
        both = priors.merge(acc, on=[FINDING, "source"])
        if len(both):
            raise InvalidParameterError(
                f"{func}: finding {both[FINDING].iloc[0]!r}, reader {both['source'].iloc[0]!r} has a fixed "
                "accuracy (reader_accuracy=) and a prior (reader_prior=); give one of them."
            )


def _accuracy_matrix(acc: pd.DataFrame | None, finding: str, readers: Sequence[str]) -> np.ndarray | None:
    if acc is None:
        return None
    sub = acc[acc[FINDING] == finding].set_index("source")
    out = np.full((len(readers), 2), np.nan)
    for i, r in enumerate(readers):
        if r in sub.index:
            out[i] = sub.loc[r, ["sensitivity", "specificity"]].to_numpy(dtype=float)
    return out if np.isfinite(out).any() else None


def _advance(progress: Progress, task: int, reps: int | None, n_resamples: int) -> None:
    """One (model or readers-only, finding) fit done, with its ``n_resamples`` replicates."""
    progress.advance(task)
    if reps is not None:
        progress.advance(reps, n_resamples)


#: The word of ``dependent=`` that groups, per finding, the readers of each pair the checks flag (the default).
FLAGGED = "flagged"
#: The word of ``dependent=`` that assumes every reader independent of the others given the truth.
NONE = "none"


def _check_groups(
    dependent: object, readers: list[str], func: str
) -> tuple[tuple[tuple[int, ...], ...], bool]:
    """The declared groups of dependent readers as reader indices (each group two or more readers, none twice),
    and whether ``'flagged'`` asks for the flagged pairs to be grouped too. ``None`` is the default,
    ``'flagged'``; ``'none'`` declares no group and groups no flagged pair."""
    if dependent is None or dependent == FLAGGED:
        return (), True
    if dependent == NONE:
        return (), False
    if isinstance(dependent, str) or not isinstance(dependent, Sequence):
        raise InvalidParameterError(
            f"The 'dependent' parameter of {func} must be 'flagged' (the default), 'none' or a sequence of reader "
            f"groups, each a tuple of source names (e.g. dependent=[('bc4', 'chexpert_labeler')]). Got "
            f"{dependent!r} instead."
        )
    words = {g.strip() for g in dependent if isinstance(g, str)} & {FLAGGED, NONE}
    if NONE in words:
        if len(dependent) > 1:
            raise InvalidParameterError(
                f"{func}: dependent= 'none' (every reader independent) cannot stand beside other items; got "
                f"{list(dependent)!r}."
            )
        return (), False
    dependent = [g for g in dependent if not (isinstance(g, str) and g.strip() in words)]
    out: list[tuple[int, ...]] = []
    seen: set[str] = set()
    for group in dependent:
        names = [n.strip() for n in group.split(",")] if isinstance(group, str) else list(group)
        if len(names) < 2 or not all(isinstance(n, str) and n for n in names):
            raise InvalidParameterError(
                f"{func}: each group of dependent= names two or more readers, or is 'flagged' or 'none'; got "
                f"{group!r}."
            )
        for n in names:
            if n not in readers:
                raise InvalidParameterError(
                    f"{func}: dependent= names {n!r}, which is not one of the readers {readers}."
                )
            if n in seen:
                raise InvalidParameterError(f"{func}: dependent= puts reader {n!r} in two groups.")
            seen.add(n)
        out.append(tuple(readers.index(n) for n in names))
    return tuple(out), FLAGGED in words


def _identify(
    finding: str,
    y: np.ndarray,
    a: np.ndarray,
    accf: np.ndarray | None,
    readers: list[str],
    groups: tuple[tuple[int, ...], ...],
    ranges: np.ndarray | None = None,
) -> None:
    """Refuse a finding whose conditionally independent readers (a declared group counted once) are fewer than
    three, without known accuracies, a prior on them or anchor labels; refuse known accuracies or a prior of a
    grouped reader."""
    grouped = {j for g in groups for j in g}
    for given, what in (
        (accf, "reader_accuracy= gives the accuracy"),
        (ranges, "reader_prior= gives a prior"),
    ):
        if given is not None and any(np.isfinite(given[j]).any() for j in grouped):
            raise InvalidParameterError(
                f"Finding {finding!r}: {what} of a reader declared dependent; a declared group is modelled by "
                "its joint label patterns, so its readers' accuracies are estimated."
            )
    if independent_readers(y, groups) >= 3 or accf is not None or ranges is not None or not np.isnan(a).all():
        return
    has = (~np.isnan(y)).any(axis=0)
    alone = [readers[j] for j in range(len(readers)) if has[j] and j not in grouped]
    units = alone + [
        "+".join(readers[j] for j in g) + " (declared dependent, one reader)"
        for g in groups
        if has[list(g)].any()
    ]
    raise NotIdentifiedError(
        f"Finding {finding!r} has {len(units)} conditionally independent reader(s) with labels "
        f"({', '.join(units) or 'none'}). "
        + ("A declared group counts as one reader: too few independent readers are left. " if groups else "")
        + NOT_IDENTIFIED
    )


def _distinct_columns(s: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct model columns of ``s`` (models, studies) as (studies, distinct) and each model's column."""
    keys: dict[bytes, int] = {}
    col = np.empty(s.shape[0], dtype=np.intp)
    for m in range(s.shape[0]):
        col[m] = keys.setdefault(np.where(np.isfinite(s[m]), s[m], np.inf).tobytes(), len(keys))
    first = [int(np.flatnonzero(col == k)[0]) for k in range(len(keys))]
    return s[first].T.copy(), col


def evaluate_latent_auc_prepared(
    inputs: PreparedInputs,
    *,
    readers: Sequence[str],
    anchor: str | None = None,
    reader_accuracy: str | PathLike[str] | pd.DataFrame | None = None,
    reader_prior: str | PathLike[str] | pd.DataFrame | None = None,
    dependent: Sequence[Sequence[str] | str] | str | None = None,
    n_resamples: int = 1000,
    confidence_level: float = 0.95,
    rng: RNGLike = None,
    score_model: str = "auto",
    sensitivity_analyses: bool = True,
    progress: Progress | None = None,
    executor: ExecutorLike = None,
) -> LatentAUCResult:
    """:func:`evaluate_latent_auc` on prepared arrays (``inputs.references`` must hold the readers and anchor)."""
    func = "evaluate_latent_auc"
    rs, anchor = _check_readers(readers, anchor, func)
    groups, flag_pairs = _check_groups(dependent, rs, func)
    n_resamples = check_positive_int(n_resamples, name="n_resamples", func=func, minimum=0)
    confidence_level = check_confidence_level(confidence_level, func=func)
    if score_model not in JOINT_SCORE_MODELS:
        raise InvalidParameterError(
            f"The 'score_model' parameter of {func} must be one of {list(JOINT_SCORE_MODELS)}. "
            f"Got {score_model!r} instead."
        )
    acc = None if reader_accuracy is None else read_reader_accuracy(reader_accuracy)
    priors = None if reader_prior is None else read_reader_prior(reader_prior)
    _check_prior_sources(priors, acc, rs, func)
    soft = [r for r in (*rs, *([anchor] if anchor else [])) if r in inputs.soft_references]
    if soft:
        raise InvalidParameterError(
            f"{func}: reader(s) {soft} have soft labels (p_positive); the latent-class model "
            f"reads each reader's 0/1 labels: give their states without p_positive."
        )
    ref_idx = [inputs.references.index(r) for r in rs]
    a_idx = None if anchor is None else inputs.references.index(anchor)
    jobs: list[FindingJob] = []
    for f, finding in enumerate(inputs.findings):  # identification, for every finding, before any fit
        y = inputs.Y[f, ref_idx, :].T
        a = inputs.Y[f, a_idx, :] if a_idx is not None else np.full(y.shape[0], np.nan)
        labelled = (~np.isnan(y)).any(axis=1) | ~np.isnan(a)
        accf = _accuracy_matrix(acc, finding, rs)
        counts, ranges = prior_arrays(priors, finding, rs)
        _identify(finding, y[labelled], a[labelled], accf, rs, groups, ranges)
        idx = np.flatnonzero(labelled)
        scores, column_of = _distinct_columns(inputs.S[:, f, idx])
        known = None if np.isnan(a[idx]).all() else a[idx]
        jobs.append(FindingJob(finding, y[idx], scores, idx, known, accf, column_of, counts, ranges))
    plan: ResamplingPlan | None = None
    if n_resamples:
        plan = draw_plan(
            inputs.patient_of.to_numpy(), n_resamples=n_resamples, rng=rng, study_ids=list(inputs.studies)
        )
    progress = as_progress(progress, func=func)
    task = progress.add("joint latent-class fits (finding)", total=len(jobs))
    reps = (
        progress.add("bootstrap replicates refitted", total=len(jobs) * n_resamples) if n_resamples else None
    )
    work = partial(
        run_finding,
        jobs=jobs,
        plan=plan,
        readers=tuple(rs),
        groups=groups,
        score_model=score_model,
        sensitivity_analyses=sensitivity_analyses,
        flag_pairs=flag_pairs,
    )

    def on_item(i: int) -> None:
        _advance(progress, task, reps, n_resamples)

    with open_executor(executor) as ex:
        outcomes = ex.map(work, list(range(len(jobs))), on_item=on_item)
    progress.done(task)
    if reps is not None:
        progress.done(reps)
    return compute_latent_result(
        inputs,
        jobs,
        outcomes,
        readers=tuple(rs),
        anchor=anchor,
        groups=groups,
        flag_pairs=flag_pairs,
        plan=plan,
        confidence_level=confidence_level,
        rng=rng,
        score_model=score_model,
    )


def evaluate_latent_auc(
    predictions: pd.DataFrame,
    labels: pd.DataFrame,
    *,
    readers: Sequence[str],
    anchor: str | None = None,
    reader_accuracy: str | PathLike[str] | pd.DataFrame | None = None,
    reader_prior: str | PathLike[str] | pd.DataFrame | None = None,
    dependent: Sequence[Sequence[str] | str] | str | None = None,
    findings: Sequence[str] | None = None,
    policy: str = "exclude",
    not_mentioned: str = "negative",
    model_groups: pd.DataFrame | dict[str, str] | None = None,
    unlabeled: str = "error",
    n_resamples: int = 1000,
    confidence_level: float = 0.95,
    rng: RNGLike = None,
    score_model: str = "auto",
    sensitivity_analyses: bool = True,
    progress: Progress | None = None,
    executor: ExecutorLike = None,
) -> LatentAUCResult:
    """Each model's ROC-AUC against the latent truth of several readers, per finding, with patient-bootstrap
    intervals that refit the latent-class model in every replicate.

    Parameters
    ----------
    predictions : pandas.DataFrame
        ``study_id, model, finding, score``.
    labels : pandas.DataFrame
        ``study_id, patient_id, finding, source, state``; holds the readers (and the anchor).
    readers : sequence of str
        The label sources treated as readers (any kind: radiologists, report labellers, text-mined labels).
    anchor : str, optional
        A label source treated as exact for the studies it labels (their truth fixed at its label).
    reader_accuracy : path or DataFrame, optional
        Known sensitivity and specificity per (finding, source) (:func:`read_reader_accuracy`), held fixed.
    reader_prior : path or DataFrame, optional
        Plausible ranges of readers' accuracies, an informative prior (Dendukuri & Joseph 2001): ``finding,
        source, sensitivity_low, sensitivity_high, specificity_low, specificity_high``, each range read as a
        Beta prior's mean +- 1.96 standard deviations; the fit is then the posterior mode. A prior identifies
        a finding with fewer than three independent readers (weakly: as far as the ranges are narrow), and
        ``latent_sensitivity.csv`` adds ``accuracy_range`` rows: the AUCs with those readers fixed at the
        ranges' low ends, at their high ends, and without the prior.
    dependent : 'flagged', 'none' or sequence of sequences of str, optional
        Readers that share errors (two labellers of one report). Default (``None``): ``'flagged'``, per finding,
        the point fits are checked first and the readers of each pair that either pair check flags are grouped,
        where three independent readers remain and neither reader's accuracy is given (the pairs modelled are
        named in ``dependent`` of ``auc.csv`` and in the key finding); with no pair flagged this is the model of
        independent readers. The choice is made once, on the data: the bootstrap replicates refit the chosen
        groups and do not repeat the choice, so the intervals do not carry its uncertainty. Groups, each a tuple
        of reader names (or a comma-separated string), declare readers that share errors: each group is modelled
        as one reader with a free joint label pattern in each class, so its readers' agreement is not read as
        evidence about the truth (``'flagged'`` may stand beside them; declared groups alone group nothing
        else). The model needs three conditionally independent readers per finding (a group counts once), else
        it is refused. ``'none'``: every reader independent of the others given the truth, whatever the checks
        say.
    findings : sequence of str, optional
        Default: every predicted and labelled finding.
    policy : {'exclude', 'zeros', 'ones'}, default='exclude'
        Uncertain reader labels: no label from that reader (default), negative, or positive.
    not_mentioned : {'negative', 'exclude'}, default='negative'
    model_groups, unlabeled
        As :func:`cxreval.classification.evaluate_auc`.
    n_resamples : int, default=1000
        Patient-bootstrap replicates (0: point estimates only).
    confidence_level : float, default=0.95
    rng : None, int or Generator
        Seed of the resampling plan.
    score_model : {'auto', 'spline', 'dependent'}, default='auto'
        The model of the scores given the truth, one per finding for every model (never mixed across the
        models of a finding): ``'spline'``, readers independent of the scores given the truth; ``'dependent'``,
        each reader's sensitivity and specificity a logistic function of the models' mean normal score within
        the class (the readers miss what the models find hard); ``'auto'``, the two averaged by their
        Bayesian-information-criterion weights (refitted and reweighted in every replicate), not picked.
    sensitivity_analyses : bool, default=True
        Also the point estimates of ``latent_sensitivity.csv`` (leave one reader out, each score model, an
        assumed within-class correlation of the readers' labels from 0 to 0.5).
    progress : Progress, optional
        Told of each finding's fit and of its replicates.
    executor : None, str or Executor, optional
        Where the findings' fits run, one item each (:func:`cxreval.executor.get_executor`: ``None`` in
        this process, ``'process:2'``, ...); the plan is drawn before, so the result is the same on every one.

    Returns
    -------
    res : LatentAUCResult

    Raises
    ------
    NotIdentifiedError
        A finding with fewer than three conditionally independent readers with labels (a declared group counts
        once), without known accuracies, a prior on them or anchor labels (the message names the finding and
        the readers left and ends with :data:`~cxreval.latent.NOT_IDENTIFIED`), before any fit.
    SchemaError, InvalidParameterError
        As :func:`cxreval.stats.prepare_inputs`; an unknown reader or anchor.
    """
    rs, anchor = _check_readers(readers, anchor, "evaluate_latent_auc")
    options = _prepare_options(rs, anchor, findings, policy, not_mentioned, model_groups, unlabeled)
    prep = prepare_inputs(predictions, labels, **options)
    model = (reader_accuracy, reader_prior, dependent, score_model, sensitivity_analyses)
    return _evaluate(prep, rs, anchor, *model, n_resamples, confidence_level, rng, progress, executor)


def evaluate_latent_auc_files(
    predictions: str | Path | Sequence[str | Path],
    labels: str | Path | Sequence[str | Path],
    *,
    readers: Sequence[str],
    anchor: str | None = None,
    reader_accuracy: str | PathLike[str] | pd.DataFrame | None = None,
    reader_prior: str | PathLike[str] | pd.DataFrame | None = None,
    dependent: Sequence[Sequence[str] | str] | str | None = None,
    findings: Sequence[str] | None = None,
    policy: str = "exclude",
    not_mentioned: str = "negative",
    model_groups: pd.DataFrame | dict[str, str] | None = None,
    unlabeled: str = "error",
    state_encoding: str | None = None,
    blank_state: str | None = None,
    n_resamples: int = 1000,
    confidence_level: float = 0.95,
    rng: RNGLike = None,
    score_model: str = "auto",
    sensitivity_analyses: bool = True,
    progress: Progress | None = None,
    executor: ExecutorLike = None,
) -> LatentAUCResult:
    """:func:`evaluate_latent_auc` on prediction and label files (what ``cxreval classify --latent-truth`` runs;
    the files are read as :func:`cxreval.stats.prepare_from_files` reads them)."""
    rs, anchor = _check_readers(readers, anchor, "evaluate_latent_auc")
    if reader_accuracy is not None and not isinstance(reader_accuracy, pd.DataFrame):
        reader_accuracy = read_reader_accuracy(reader_accuracy)  # a bad file is refused before the reading
    if reader_prior is not None and not isinstance(reader_prior, pd.DataFrame):
        reader_prior = read_reader_prior(reader_prior)
    progress = as_progress(progress, func="evaluate_latent_auc_files")
    reading = progress.add("reading predictions and labels")
    options = _prepare_options(rs, anchor, findings or None, policy, not_mentioned, model_groups, unlabeled)
    prep = prepare_from_files(
        predictions, labels, state_encoding=state_encoding, blank_state=blank_state, **options
    )
    progress.done(reading)
    model = (reader_accuracy, reader_prior, dependent, score_model, sensitivity_analyses)
    return _evaluate(prep, rs, anchor, *model, n_resamples, confidence_level, rng, progress, executor)


def _prepare_options(
    readers: list[str],
    anchor: str | None,
    findings: Sequence[str] | None,
    policy: str,
    not_mentioned: str,
    model_groups: pd.DataFrame | dict[str, str] | None,
    unlabeled: str,
) -> dict[str, Any]:
    """The options of :func:`~cxreval.stats.prepare_inputs` (and ``prepare_from_files``) for a latent evaluation:
    the readers and the anchor as references, each finding on the studies it has."""
    return {
        "references": [*readers, *([anchor] if anchor else [])],
        "findings": findings,
        "policy": policy,
        "not_mentioned": not_mentioned,
        "model_groups": model_groups,
        "unlabeled": unlabeled,
        "studies": "each",
    }


def _evaluate(
    prep: PreparedInputs,
    readers: list[str],
    anchor: str | None,
    reader_accuracy: str | PathLike[str] | pd.DataFrame | None,
    reader_prior: str | PathLike[str] | pd.DataFrame | None,
    dependent: Sequence[Sequence[str]] | None,
    score_model: str,
    sensitivity_analyses: bool,
    n_resamples: int,
    confidence_level: float,
    rng: RNGLike,
    progress: Progress | None,
    executor: ExecutorLike,
) -> LatentAUCResult:
    return evaluate_latent_auc_prepared(
        prep,
        readers=readers,
        anchor=anchor,
        reader_accuracy=reader_accuracy,
        reader_prior=reader_prior,
        dependent=dependent,
        n_resamples=n_resamples,
        confidence_level=confidence_level,
        rng=rng,
        score_model=score_model,
        sensitivity_analyses=sensitivity_analyses,
        progress=progress,
        executor=executor,
    )


def reader_accuracy_table(
    labels: pd.DataFrame,
    readers: Sequence[str],
    *,
    not_mentioned: str = "negative",
    n_resamples: int = 1000,
    confidence_level: float = 0.95,
    rng: RNGLike = None,
) -> pd.DataFrame:
    """Each reader's sensitivity and specificity per finding under the readers-only latent-class model, with
    patient-bootstrap percentile intervals (:data:`~cxreval.schema.READER_ACCURACY_COLUMNS`).

    The readers' states are binarised: positive 1, negative 0, uncertain no label, ``not_mentioned`` negative
    (or no label with ``not_mentioned='exclude'``). Patients are resampled (each study its own patient when the
    table has no ``patient_id``). A finding with fewer than three readers with labels is not identified and has
    no rows (:data:`~cxreval.latent.NOT_IDENTIFIED`). What ``cxreval fuse`` writes as ``reader_accuracy.csv``,
    and ``classify --latent-truth --reader-accuracy`` reads.
    """
    from ..labels import validate_label_table
    from ..schema import PATIENT_ID, SOURCE, STATE, STUDY_ID

    n_resamples = check_positive_int(n_resamples, name="n_resamples", func="reader_accuracy_table")
    lab = validate_label_table(labels, require_patient=False)
    lab = lab[lab[SOURCE].isin(list(readers))]
    state = lab[STATE].astype("Int8").astype("float")
    y = np.where(state == 2, 1.0, np.where(state == 0, 0.0, np.nan))
    if not_mentioned == "negative":
        y = np.where(state == -1, 0.0, y)
    lab = lab.assign(_y=y)
    rows: list[dict[str, object]] = []
    gen = np.random.default_rng(rng)
    for finding, g in lab.groupby(FINDING, sort=True, observed=True):
        wide = g.pivot_table(index=STUDY_ID, columns=SOURCE, values="_y", aggfunc="first", observed=True)
        srcs = [r for r in readers if r in wide.columns and wide[r].notna().any()]
        if len(srcs) < 3:
            continue
        y_f = wide[srcs].to_numpy(dtype=float)
        keep = ~np.isnan(y_f).all(axis=1)
        y_f, studies = y_f[keep], wide.index[keep]
        if PATIENT_ID in g.columns and g[PATIENT_ID].notna().all():
            pid = g.drop_duplicates(STUDY_ID).set_index(STUDY_ID)[PATIENT_ID].reindex(studies).to_numpy()
        else:
            pid = np.asarray(studies)
        res = bootstrap_latent_class(
            y_f, None, draw_plan(pid, n_resamples=n_resamples, rng=gen), confidence_level=confidence_level
        )
        iv = res.reader_interval(confidence_level=confidence_level)
        for r, src in enumerate(srcs):
            rows.append(
                {
                    FINDING: str(finding),
                    "source": src,
                    "sensitivity": float(res.fit.sensitivity[r]),
                    "sensitivity_low": float(iv["sensitivity_low"][r]),
                    "sensitivity_high": float(iv["sensitivity_high"][r]),
                    "specificity": float(res.fit.specificity[r]),
                    "specificity_low": float(iv["specificity_low"][r]),
                    "specificity_high": float(iv["specificity_high"][r]),
                    "n_labelled": int((~np.isnan(y_f[:, r])).sum()),
                    "fixed": False,
                }
            )
    return pd.DataFrame(rows, columns=list(READER_ACCURACY_COLUMNS))
