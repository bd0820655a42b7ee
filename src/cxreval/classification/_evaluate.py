""":func:`evaluate_auc`: ROC-AUC per model × finding × reference with patient-bootstrap confidence intervals.

It checks the options, validates and lays out the tables (:func:`~cxreval.stats.prepare_inputs`) and
runs the block driver (:func:`~cxreval.classification.blocks.evaluate_prepared`);
:func:`evaluate_auc_prepared` runs it on a :class:`~cxreval.stats.PreparedInputs` made beforehand
(:func:`~cxreval.stats.prepare_from_files`, :func:`~cxreval.stats.prepare_inputs`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from .._typing import RNGLike, Studies
from .._validation import check_choice, check_confidence_level, check_positive_int
from ..bootstrap import ResamplingPlan
from ..exceptions import InvalidParameterError
from ..executor import Executor, ExecutorLike, get_executor
from ..findings import VocabularyMapping
from ..progress import Progress, as_progress
from ..schema import POLICIES
from ..stats import AUCResult, PreparedInputs, prepare_inputs
from ..stats._auc_inputs import loaded_table
from .blocks import evaluate_prepared

__all__ = ["evaluate_auc", "evaluate_auc_prepared"]


def evaluate_auc(
    predictions: pd.DataFrame,
    labels: pd.DataFrame,
    *,
    references: Sequence[str] | None = None,
    findings: Sequence[str] | None = None,
    policy: str = "exclude",
    not_mentioned: str = "negative",
    model_groups: pd.DataFrame | dict[str, str] | None = None,
    n_resamples: int = 1000,
    confidence_level: float = 0.95,
    macro: bool = True,
    micro: bool = True,
    mean_over_models: bool = True,
    unlabeled: str = "error",
    rng: RNGLike = None,
    plan: ResamplingPlan | None = None,
    shard_size: int | None = None,
    executor: ExecutorLike = None,
    spill_dir: str | Path | None = None,
    studies: Studies = "common",
    missing_scores: str = "refuse",
    finding_map: str | VocabularyMapping | None = None,
    progress: Progress | None = None,
) -> AUCResult:
    """ROC-AUC per model × finding × reference with patient-level bootstrap percentile CIs.

    Parameters
    ----------
    predictions : pandas.DataFrame
        Long prediction table ``study_id, model, finding, score`` (inputs read and laid out beforehand, a
        :class:`PreparedInputs`, go to :func:`evaluate_auc_prepared`). What a loader returns (a
        :class:`~cxreval.results.ReadResult`) or a list of tables is taken as the one table, for ``labels`` too.
    labels : pandas.DataFrame
        Long label table ``study_id, patient_id, finding, source, state``; ``source`` names the reference. An
        optional ``p_positive`` column makes each source with a value in it a soft reference
        (:mod:`cxreval.stats._soft_labels`): its AUC is the expected AUC over label draws, not an
        estimate of the AUC against the truth.
    references : sequence of str, optional
        Sources to evaluate against (default: all sources in ``labels``).
    findings : sequence of str, optional
        Findings (default: every predicted finding some reference labels).
    policy : {'exclude', 'zeros', 'ones'}, default='exclude'
        Binarisation of uncertain labels; missing labels are always excluded.
    not_mentioned : {'negative', 'exclude'}, default='negative'
    model_groups : DataFrame (``model, group``) or dict, optional
    n_resamples : int, default=1000
        Bootstrap replicates; 0 gives point estimates only (CI columns NaN).
    confidence_level : float, default=0.95
    macro : bool, default=True
        Add ``finding='macro'`` rows: the mean AUC over ``findings`` (per replicate; undefined if any is).
    micro : bool, default=True
        Add ``finding='micro'`` rows: one AUC of all (study, finding) pairs of ``findings`` pooled (pairs with a
        missing or excluded label left out), with the same patient bootstrap. Only with two or more findings.
    mean_over_models : bool, default=True
        Add ``model='Mean'`` rows (group ``'summary'``): the mean AUC over models.
    unlabeled : {'error', 'drop'}, default='error'
        Prediction studies absent from the whole label table: an error, or dropped and reported in
        ``result.dropped``.
    rng : None, int or Generator
        Seeds the resampling plan (ignored when ``plan`` is given).
    plan : ResamplingPlan, optional
        A plan drawn beforehand over exactly the evaluated studies (``plan.study_ids`` in the order of
        ``result.plan.study_ids``); reuse it to pair results across calls.
    shard_size : int, optional
        Replicates per shard of the kernel (default :func:`~cxreval.bootstrap.shard_size_for`: a power of two
        keeping a shard's counts and product near 24 MiB, so that time stays linear in studies). The result
        does not depend on it.
    executor : None, str or Executor, optional
        Runs the blocks (see :func:`cxreval.executor.get_executor`: ``None``/``'serial'`` in process,
        ``'process:N'``, ``'dask:local:N'``, ``'dask://HOST:PORT'``, or any object with ``map(func, items)``).
        The work is split into blocks of (model, finding) and (model, micro average), each with every reference
        and every replicate; a block's indices are built, run and dropped, so memory is the arrays, the plan and
        one block per worker. The plan is drawn before mapping, so the result is identical on every executor.
    spill_dir : str or Path, optional
        Off-process executors only: the folder under which the arrays (scores, labels, the plan's count
        shards) are written once as ``.npy`` in a temporary folder, removed at the end; each task carries
        a block id and these paths and memory-maps them. Every worker must see it (shared storage for a
        multi-machine Dask cluster). Default: the system temporary folder.
    studies : {'each', 'common'}, default='common'
        The study design when several references are compared. ``'each'``: every reference is scored on the
        studies it labels; ``'common'``: per finding, on the studies that every reference labelling that finding
        labels (a label present, whatever its state; the label policy then applies per reference), so that the
        AUCs of one finding are computed on the same studies. Studies left without any label leave the
        evaluation (``result.dropped``).
    missing_scores : {'refuse', 'chance'}, default='refuse'
        A model with no score at all for a finding: refused, or scored 0.5 for every study (AUC 0.5, the XQA
        paper's convention for a model without that output), kept in rankings and the macro average (0.5 for
        that finding) and marked ``chance`` in the table; in the micro average its pairs pool with the constant
        score 0.5.
    finding_map : str, VocabularyMapping or None
        A finding map (:mod:`cxreval.finding_maps`: a built-in name such as ``'nih_to_google'``, a YAML file or
        a mapping) applied to the labels and the scores before evaluation; only its targets are evaluated.
    progress : Progress, optional
        Advanced once per block as its results come in (:class:`cxreval.progress.Progress`; e.g. the CLI's
        progress bars).

    Returns
    -------
    res : AUCResult

    Raises
    ------
    SchemaError
        Bad tables (see :func:`~cxreval.labels.validate_predictions` and
        :func:`~cxreval.labels.validate_label_table`); a prediction study absent from the labels (unless
        ``unlabeled='drop'``); a labelled study a model has no score for; a study without patient id.
    InvalidParameterError
        Unknown reference or finding; bad option values.

    Warns
    -----
    UndefinedMetricWarning
        References with one class only for a finding they label: their AUCs are NaN (one warning listing them).
        A reference that does not label a finding at all is *not labelled* (``result.coverage``): no AUC row, no
        warning.
    """
    if isinstance(predictions, PreparedInputs):
        raise InvalidParameterError(
            "evaluate_auc takes the prediction and label tables; for inputs prepared "
            "beforehand (PreparedInputs) call evaluate_auc_prepared(inputs, ...)."
        )
    predictions, labels = loaded_table(predictions, "predictions"), loaded_table(labels, "labels")
    check_choice(policy, POLICIES, name="policy", func="evaluate_auc")
    check_choice(not_mentioned, ("negative", "exclude"), name="not_mentioned", func="evaluate_auc")
    checked = _check_options(n_resamples, confidence_level, plan, executor, func="evaluate_auc")
    prep = prepare_inputs(
        predictions,
        labels,
        references=references,
        findings=findings,
        policy=policy,
        not_mentioned=not_mentioned,
        model_groups=model_groups,
        unlabeled=unlabeled,
        studies=studies,
        missing_scores=missing_scores,
        finding_map=finding_map,
    )
    computation = _Computation(*checked, plan, macro, micro, mean_over_models, rng, shard_size, spill_dir)
    return computation.run(prep, as_progress(progress, func="evaluate_auc"))


@dataclass(frozen=True)
class _Computation:
    """The checked options of the computation: what the block driver takes besides the inputs."""

    n_resamples: int
    confidence_level: float
    executor: Executor
    plan: ResamplingPlan | None
    macro: bool
    micro: bool
    mean_over_models: bool
    rng: RNGLike
    shard_size: int | None
    spill_dir: str | Path | None

    def run(self, prep: PreparedInputs, progress: Progress) -> AUCResult:
        return evaluate_prepared(prep, progress=progress, **vars(self))


def _check_options(
    n_resamples: int,
    confidence_level: float,
    plan: ResamplingPlan | None,
    executor: ExecutorLike,
    *,
    func: str,
) -> tuple[int, float, Executor]:
    confidence_level = check_confidence_level(confidence_level, func=func)
    if plan is None:
        n_resamples = check_positive_int(n_resamples, name="n_resamples", func=func, minimum=0)
    return n_resamples, confidence_level, get_executor(executor)


def evaluate_auc_prepared(
    inputs: PreparedInputs,
    *,
    n_resamples: int = 1000,
    confidence_level: float = 0.95,
    macro: bool = True,
    micro: bool = True,
    mean_over_models: bool = True,
    rng: RNGLike = None,
    plan: ResamplingPlan | None = None,
    shard_size: int | None = None,
    executor: ExecutorLike = None,
    spill_dir: str | Path | None = None,
    progress: Progress | None = None,
) -> AUCResult:
    """:func:`evaluate_auc` on inputs validated and laid out beforehand (:func:`prepare_from_files`,
    :func:`prepare_inputs`): the selection (references, findings, label policy, model groups, study design,
    finding map) is the one given there.

    ``evaluate_auc_prepared(prepare_inputs(p, l, **selection), **options)`` equals
    ``evaluate_auc(p, l, **selection, **options)``.

    Parameters
    ----------
    inputs : PreparedInputs
    n_resamples, confidence_level, macro, micro, mean_over_models, rng, plan, shard_size, executor, spill_dir,
    progress
        As :func:`evaluate_auc`.

    Returns
    -------
    res : AUCResult

    Raises
    ------
    InvalidParameterError
        ``inputs`` not a :class:`PreparedInputs`; bad option values.
    """
    if not isinstance(inputs, PreparedInputs):
        raise InvalidParameterError(
            f"The 'inputs' parameter of evaluate_auc_prepared must be a PreparedInputs "
            f"(prepare_inputs, prepare_from_files); got {type(inputs).__name__}. Tables go "
            f"to evaluate_auc(predictions, labels, ...)."
        )
    checked = _check_options(n_resamples, confidence_level, plan, executor, func="evaluate_auc_prepared")
    computation = _Computation(*checked, plan, macro, micro, mean_over_models, rng, shard_size, spill_dir)
    return computation.run(inputs, as_progress(progress, func="evaluate_auc_prepared"))
