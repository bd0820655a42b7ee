"""ROC-AUC of many models against many references, with patient-level bootstrap confidence intervals.

Per finding, and two averages over the evaluated findings: the *macro* average (``finding='macro'``, the mean
of the per-finding AUCs) and the *micro* average (``finding='micro'``, the XQA paper's "Micro Avg.", Table 28:
one AUC of every (study, finding) pair pooled, each scored by the model's score for that finding, equal to
``sklearn.metrics.roc_auc_score`` on the pooled labels and scores). Both use the same patient bootstrap: a
patient drawn ``c`` times weighs ``c`` in every pooled pair of its studies.

The AUC is the tie-aware Mann–Whitney form, equal to ``sklearn.metrics.roc_auc_score``:

.. math:: \\mathrm{AUC} = \\frac{\\sum_{i \\in P} \\sum_{j \\in N} w_i w_j \\,([s_i > s_j] + \\tfrac12 [s_i = s_j])}
          {\\sum_{i \\in P} w_i \\; \\sum_{j \\in N} w_j}

with integer weights ``w`` (bootstrap counts). It is computed with one sort of the scores per
model × finding (× reference, for its label mask). The sorted negatives are cut into segments at every
positive score (``searchsorted`` once), and one sparse ``(segments, patients)`` count matrix per model ×
finding × reference turns the plan's ``(patients, replicates)`` counts into, for every replicate at once,
each segment's negative weight and the positive weight reading each break (a single sparse-dense product,
no per-replicate gather over the studies); the segment weights are accumulated and dotted with the positive
weights. Every sum is an exact integer, so the replicate AUCs equal a loop of ``roc_auc_score`` over the same
resampled indices to floating-point rounding (~1e-16).

Examples
--------
>>> import numpy as np
>>> y = np.array([0, 0, 1, 1, 0, 1])
>>> s = np.array([0.1, 0.4, 0.35, 0.8, 0.4, 0.4])
>>> round(roc_auc_score(y, s), 6)
0.666667
>>> w = np.array([[1, 1, 1, 1, 1, 1], [2, 0, 1, 1, 0, 1]])
>>> np.round(weighted_auc(y, s, w), 6).tolist()
[0.666667, 1.0]
"""

from __future__ import annotations

import dataclasses
import logging
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ._auc_kernel import (
    AUCIndex,
    BlockInputs,
    binary_labels,
    block_indices,
    finite_scores,
    map_blocks,
    positive_weights,
    weighted_auc_float,
)
from ._validation import check_choice, check_confidence_level, check_positive_int
from .bootstrap import (
    BootstrapResult,
    ResamplingPlan,
    bca_ci,
    draw_plan,
    percentile_ci,
    shard_size_for,
    summarize_distribution,
)
from .exceptions import InvalidParameterError, SchemaError, UndefinedMetricWarning
from .executor import get_executor
from .findings import canonical_finding
from .labels import (
    MACRO,
    MICRO,
    POLICIES,
    LabelScan,
    PredictionScan,
    binarize,
    read_prediction_tables,
    scan_labels,
    scan_predictions,
    validate_label_table,
    validate_model_groups,
    validate_predictions,
)
from .results import readonly

__all__ = [
    "roc_auc_score",
    "weighted_auc",
    "AUCResult",
    "evaluate_auc",
    "PreparedInputs",
    "prepare_from_files",
    "PairedComparisonResult",
    "compare_auc",
    "DeLongResult",
    "delong_test",
    "AUC_COLUMNS",
    "MACRO",
    "MICRO",
    "MEAN_MODEL",
]

log = logging.getLogger(__name__)

AUC_COLUMNS: tuple[str, ...] = ("model", "group", "finding", "reference", "auc", "ci_low", "ci_high",
                                "n_pos", "n_neg", "n_dropped")
# MACRO / MICRO: the ``finding`` value of macro- and micro-average rows, owned by cxreval.labels (re-exported here)
MEAN_MODEL = "Mean"
"""The ``model`` value of the mean-over-models rows (their ``group`` is ``'summary'``)."""
DEFAULT_GROUP = "default"


# --------------------------------------------------------------------------------------------- core
def roc_auc_score(y_true: Sequence[int] | np.ndarray, y_score: Sequence[float] | np.ndarray, *,
                  sample_weight: Sequence[float] | np.ndarray | None = None) -> float:
    """Area under the ROC curve of binary labels, ties counted one half (as scikit-learn's).

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        0/1 labels.
    y_score : array-like of shape (n_samples,)
        Finite scores; higher means more likely positive.
    sample_weight : array-like of shape (n_samples,), optional
        Non-negative weights (e.g. bootstrap counts).

    Returns
    -------
    auc : float
        NaN (with :class:`~cxreval.exceptions.UndefinedMetricWarning`) if one class is absent.
    """
    y = binary_labels(y_true, "roc_auc_score")
    s = finite_scores(y_score, y.size, "roc_auc_score")
    if sample_weight is None:
        out = AUCIndex(y, s).auc(np.ones((1, y.size), dtype=np.int64))[0]
    else:
        w = np.asarray(sample_weight, dtype=float)
        if w.shape != y.shape or (w < 0).any() or not np.isfinite(w).all():
            raise InvalidParameterError("roc_auc_score: 'sample_weight' must be finite, non-negative, of shape "
                                        f"{y.shape}; got shape {w.shape}.")
        out = weighted_auc_float(y, s, w[None, :])[0]
    if np.isnan(out):
        warnings.warn("Only one class present in y_true; ROC AUC is not defined and NaN is returned.",
                      UndefinedMetricWarning, stacklevel=2)
    return float(out)


def weighted_auc(y_true: Sequence[int] | np.ndarray, y_score: Sequence[float] | np.ndarray,
                 weights: np.ndarray) -> np.ndarray:
    """Count-weighted AUC for every row of ``weights`` (vectorised over bootstrap replicates).

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
    y_score : array-like of shape (n_samples,)
    weights : ndarray of shape (n_resamples, n_samples)
        Non-negative integer counts (exact integer arithmetic; only the final division rounds) or
        non-negative floats.

    Returns
    -------
    auc : ndarray of shape (n_resamples,)
        NaN in rows where a class has zero total weight (no warning; count them).
    """
    y = binary_labels(y_true, "weighted_auc")
    s = finite_scores(y_score, y.size, "weighted_auc")
    w = np.asarray(weights)
    if w.ndim != 2 or w.shape[1] != y.size:
        raise InvalidParameterError(f"weighted_auc: 'weights' must have shape (n_resamples, {y.size}); got {w.shape}.")
    if not (np.issubdtype(w.dtype, np.integer) or np.issubdtype(w.dtype, np.floating)) or w.dtype == bool:
        raise InvalidParameterError(f"weighted_auc: 'weights' must be integer or float counts; got dtype {w.dtype}.")
    if w.size and not (np.isfinite(w).all() and w.min() >= 0):
        raise InvalidParameterError("weighted_auc: 'weights' must be finite and non-negative; found "
                                    f"{float(w.min()) if np.isfinite(w).all() else 'a non-finite value'}.")
    if np.issubdtype(w.dtype, np.integer) and (w.size == 0 or int(w.max()) * y.size < 2**61):
        return AUCIndex(y, s).auc(w)
    return weighted_auc_float(y, s, w.astype(float))


# ------------------------------------------------------------------------------------- evaluation
@dataclass(frozen=True)
class AUCResult:
    """AUC of every model × finding × reference, with patient-bootstrap distributions.

    Attributes
    ----------
    table : pandas.DataFrame
        Columns :data:`AUC_COLUMNS`; ``finding == 'macro'`` rows hold the macro average over
        ``findings``, ``finding == 'micro'`` the micro average (pooled pairs; ``n_pos``/``n_neg`` count the
        pooled pairs); ``model == 'Mean'`` (group ``'summary'``) rows the mean over models.
    models, findings, references : tuple of str
        Axis labels of ``point`` and ``distribution`` (``findings`` then ``'macro'`` and ``'micro'`` when
        computed).
    groups : dict
        Model → group.
    point : ndarray of shape (n_models, n_findings[+1], n_references)
    distribution : ndarray of shape (n_models, n_findings[+1], n_references, n_resamples)
        NaN where undefined in a replicate.
    counts : pandas.DataFrame
        ``finding, reference, n_pos, n_neg, n_dropped`` per finding and reference.
    plan : ResamplingPlan
    policy : str
    confidence_level : float
    dropped : pandas.DataFrame
        Studies dropped before evaluation (``study_id, reason``).
    """

    table: pd.DataFrame
    models: tuple[str, ...]
    findings: tuple[str, ...]
    references: tuple[str, ...]
    groups: dict[str, str]
    point: np.ndarray = field(repr=False)
    distribution: np.ndarray = field(repr=False)
    counts: pd.DataFrame = field(repr=False)
    plan: ResamplingPlan | None = field(repr=False)
    policy: str = "exclude"
    confidence_level: float = 0.95
    not_mentioned: str = "negative"
    dropped: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=["study_id", "reason"]), repr=False)
    _inputs: BlockInputs | None = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        readonly(self.point)
        readonly(self.distribution)

    @property
    def n_resamples(self) -> int:
        return int(self.distribution.shape[-1])

    def _pos(self, model: str, finding: str, reference: str) -> tuple[int, int, int]:
        f = finding if finding in (MACRO, MICRO) else canonical_finding(finding)
        for name, val, seq in (("model", model, self.models), ("finding", f, self.findings),
                               ("reference", reference, self.references)):
            if val not in seq:
                raise InvalidParameterError(f"Unknown {name} {val!r}; known: {list(seq)}.")
        return self.models.index(model), self.findings.index(f), self.references.index(reference)

    def bootstrap(self, model: str, finding: str, reference: str, *, ci_method: str = "percentile") -> BootstrapResult:
        """The :class:`~cxreval.bootstrap.BootstrapResult` of one AUC.

        ``ci_method='bca'`` gives the BCa interval, with the acceleration from a leave-one-patient-out
        jackknife (:meth:`jackknife`).
        """
        check_choice(ci_method, ("percentile", "bca"), name="ci_method", func="AUCResult.bootstrap")
        i, j, k = self._pos(model, finding, reference)
        if ci_method == "bca":
            return bca_ci(self.distribution[i, j, k], estimate=self.point[i, j, k],
                          jackknife=self.jackknife(model, finding, reference), confidence_level=self.confidence_level)
        return percentile_ci(self.distribution[i, j, k], estimate=self.point[i, j, k],
                             confidence_level=self.confidence_level)

    def jackknife(self, model: str, finding: str, reference: str, *, block: int = 256) -> np.ndarray:
        """Leave-one-patient-out values of one AUC (the macro average: of the mean over findings; the micro
        average: of the pooled AUC)."""
        if self.plan is None or self._inputs is None:
            raise InvalidParameterError("jackknife needs a result computed with a resampling plan (n_resamples > 0).")
        i, j, k = self._pos(model, finding, reference)
        per = [q for q, f in enumerate(self.findings) if f not in (MACRO, MICRO)]
        js = per if self.findings[j] == MACRO else [j]
        n_pat = self.plan.n_patients
        # a pooled (micro) index holds the pairs of every finding, finding-major: their patients repeat
        sp = np.tile(self.plan.study_patient, len(per)) if self.findings[j] == MICRO else self.plan.study_patient
        out = np.zeros(n_pat)
        for q in js:  # rebuilt on demand (one sort): the result keeps the arrays, not every index
            idx = block_indices(self._inputs, i, len(per) if self.findings[q] == MICRO else q)[k][0]
            vals = np.empty(n_pat)
            for start in range(0, n_pat, block):
                cols = np.arange(start, min(n_pat, start + block))
                wt = (sp[:, None] != cols[None, :]).astype(np.int32)  # (n_studies, block)
                vals[cols] = idx.auc_t(wt)
            out += vals
        return out / len(js)

    def to_frame(self) -> pd.DataFrame:
        return self.table.copy()

    def to_dict(self) -> dict[str, object]:
        return {"models": list(self.models), "findings": list(self.findings), "references": list(self.references),
                "groups": dict(self.groups), "policy": self.policy, "confidence_level": self.confidence_level,
                "n_resamples": self.n_resamples, "plan": None if self.plan is None else self.plan.to_dict(),
                "n_dropped_studies": int(len(self.dropped)), "auc": self.table.to_dict(orient="records")}


def _validate_inputs(ps: PredictionScan, ls: LabelScan, references: Sequence[str] | None,
                     findings: Sequence[str] | None, model_groups: pd.DataFrame | dict[str, str] | None,
                     unlabeled: str) -> tuple[list[str], list[str], list[int], dict[str, str], pd.DataFrame]:
    """Choose references and findings, check model groups and unlabelled studies, on validated codes.

    Returns the references, the findings, their codes in ``ps``, the model → group map (models with a score for
    a chosen finding) and the dropped studies."""
    check_choice(unlabeled, ("error", "drop"), name="unlabeled", func="evaluate_auc")
    sources = sorted(ls.sources[k] for k in np.unique(ls.source))
    try:
        refs = list(references) if references is not None and not isinstance(references, str) else sources
    except TypeError:
        refs = [references]  # type: ignore[list-item]
    if references is not None and (isinstance(references, str) or not all(isinstance(r, str) for r in refs)):
        raise InvalidParameterError(f"The 'references' parameter of evaluate_auc must be a sequence of str. Got "
                                    f"{references!r} instead.")
    if not refs:
        raise InvalidParameterError("evaluate_auc: no references; the label table is empty.")
    for r in refs:
        if r not in sources:
            raise InvalidParameterError(f"Unknown reference {r!r}: it is not a source of the label table; "
                                        f"sources present: {sources}.")
    if len(set(refs)) != len(refs):
        raise InvalidParameterError(f"evaluate_auc: 'references' has duplicates: {refs}.")
    f_first = {j: int(a.min()) for j, a in ps.first_row.items() if len(a)}
    pf = [ps.findings[j] for j in sorted(f_first, key=f_first.__getitem__)]  # in order of first appearance
    ref_codes = [ls.sources.index(r) for r in refs]
    lf = {ls.findings[j] for j in np.unique(ls.finding[np.isin(ls.source, ref_codes)])}
    if findings is None:
        fs = [f for f in pf if f in lf]
        if not fs:
            raise SchemaError(f"No finding is both predicted {pf} and labelled by the references {refs} "
                              f"{sorted(lf)}.")
    else:
        fs = [canonical_finding(f, where="evaluate_auc 'findings'") for f in findings]
        for f in fs:
            if f not in pf:
                raise InvalidParameterError(f"Unknown finding {f!r}: no model has predictions for it; predicted: {pf}.")
            if f not in lf:
                raise InvalidParameterError(f"Unknown finding {f!r}: no reference among {refs} labels it; "
                                            f"labelled: {sorted(lf)}.")
        if len(set(fs)) != len(fs):
            raise InvalidParameterError(f"evaluate_auc: 'findings' has duplicates: {fs}.")
    fcodes = [ps.findings.index(f) for f in fs]
    models = _model_order(ps, fcodes)
    if model_groups is None:
        groups = {m: DEFAULT_GROUP for m in models}
    else:
        mg = (pd.DataFrame({"model": list(model_groups), "group": list(model_groups.values())})
              if isinstance(model_groups, dict) else model_groups)
        mg = validate_model_groups(mg)
        gmap = dict(zip(mg["model"], mg["group"]))
        missing = [m for m in models if m not in gmap]
        if missing:
            raise SchemaError(f"Model(s) {missing} have predictions but no group in the model group table.")
        groups = {m: gmap[m] for m in models}
    # studies with predictions but no label row at all in the label table, in order of first appearance
    pstudies = _study_order(ps, fcodes)
    texts = np.asarray(ps.studies, dtype=object)
    labelled = pd.Index(ls.studies).get_indexer(texts[pstudies]) >= 0
    absent = list(texts[pstudies[~labelled]])
    dropped = pd.DataFrame({"study_id": absent, "reason": "no label in the label table"})
    if absent and unlabeled == "error":
        raise SchemaError(f"{len(absent)} prediction study id(s) are absent from the label table, e.g. {absent[:3]}; "
                          "pass unlabeled='drop' (CLI: --unlabeled drop) to drop them with a report.")
    return refs, fs, fcodes, groups, dropped


def _model_order(ps: PredictionScan, fcodes: list[int], keep: np.ndarray | None = None) -> list[str]:
    """Models with a row of a chosen finding, in order of their first such row (``keep``: over the rows of the
    kept study codes only; ``None`` when that cannot be decided from the first rows)."""
    first: dict[int, tuple[int, int]] = {}
    for (m, j), (row, s) in ps.slot_first.items():
        if j in fcodes and (m not in first or row < first[m][0]):
            first[m] = (row, s)
    if keep is not None and not all(keep[s] for _, s in first.values()):
        raise LookupError("a model's first row is on a dropped study")
    return [ps.models[m] for m in sorted(first, key=lambda m: first[m][0])]


def _study_order(ps: PredictionScan, fcodes: list[int]) -> np.ndarray:
    """Codes of the studies with a row of a chosen finding, in order of their first such row."""
    big = np.iinfo(np.int64).max
    first = np.full(len(ps.studies), big, dtype=np.int64)
    for j in fcodes:
        a = ps.first_row.get(j, np.zeros(0, np.int64))[: len(first)]
        np.minimum(first[: len(a)], a, out=first[: len(a)])
    has = np.flatnonzero(first < big)
    return has[np.argsort(first[has], kind="stable")]


def evaluate_auc(predictions: pd.DataFrame | PreparedInputs, labels: pd.DataFrame | None = None, *, references: Sequence[str] | None = None,
                 findings: Sequence[str] | None = None, policy: str = "exclude", not_mentioned: str = "negative",
                 model_groups: pd.DataFrame | dict[str, str] | None = None, n_resamples: int = 1000,
                 confidence_level: float = 0.95, macro: bool = True, micro: bool = True, mean_over_models: bool = True,
                 unlabeled: str = "error", rng: object = None, plan: ResamplingPlan | None = None,
                 shard_size: int | None = None, executor: object | None = None,
                 spill_dir: str | Path | None = None) -> AUCResult:
    """ROC-AUC per model × finding × reference with patient-level bootstrap percentile CIs.

    Parameters
    ----------
    predictions : pandas.DataFrame or PreparedInputs
        Long prediction table ``study_id, model, finding, score``; or the inputs read and laid out by
        :func:`prepare_from_files` (then ``labels`` is None and the selection options ``references``,
        ``findings``, ``policy``, ``not_mentioned``, ``model_groups``, ``unlabeled`` are those given there: leave
        them at their defaults here).
    labels : pandas.DataFrame
        Long label table ``study_id, patient_id, finding, source, state``; ``source`` names the reference.
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
        keeping a shard's counts and product near 8 MiB, so that time stays linear in studies). The result
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
        A reference with one class only for a finding: its AUC is NaN.
    """
    check_choice(policy, POLICIES, name="policy", func="evaluate_auc")
    check_choice(not_mentioned, ("negative", "exclude"), name="not_mentioned", func="evaluate_auc")
    confidence_level = check_confidence_level(confidence_level, func="evaluate_auc")
    if plan is None:
        n_resamples = check_positive_int(n_resamples, name="n_resamples", func="evaluate_auc", minimum=0)
    executor = get_executor(executor)
    if isinstance(predictions, PreparedInputs):
        given = [k for k, v in (("labels", labels), ("references", references), ("findings", findings),
                                ("model_groups", model_groups)) if v is not None]
        given += [k for k, v, d in (("unlabeled", unlabeled, "error"), ("policy", policy, predictions.policy),
                                    ("not_mentioned", not_mentioned, predictions.not_mentioned)) if v != d]
        if given:
            raise InvalidParameterError(f"evaluate_auc: with prepared inputs, {given} are those given to "
                                        "prepare_from_files; leave them at their defaults here.")
        prep = predictions
    else:
        prep = _prepare(predictions, labels, references=references, findings=findings, policy=policy,
                        not_mentioned=not_mentioned, model_groups=model_groups, unlabeled=unlabeled)
    return _evaluate_prepared(prep, n_resamples=n_resamples, confidence_level=confidence_level, macro=macro, micro=micro,
                              mean_over_models=mean_over_models, rng=rng, plan=plan, shard_size=shard_size,
                              executor=executor, spill_dir=spill_dir)


@dataclass(frozen=True)
class PreparedInputs:
    """Validated inputs of :func:`evaluate_auc` as arrays: scores ``S`` (model, finding, study), 0/1/NaN labels
    ``Y`` (finding, reference, study), studies sorted, and each study's patient.

    Made by :func:`prepare_from_files` (or inside :func:`evaluate_auc` from DataFrames); pass it to
    :func:`evaluate_auc` in place of the tables.

    Attributes
    ----------
    models, findings, references : list of str
        Axis labels of ``S`` and ``Y`` (models in order of first appearance, findings as chosen).
    groups : dict
        Model → group.
    dropped : pandas.DataFrame
        Prediction studies absent from the labels (``unlabeled='drop'``): ``study_id, reason``.
    studies : ndarray of str (object)
        Study ids, sorted.
    S : ndarray of float64, shape (n_models, n_findings, n_studies)
        Scores (NaN: no score, only where no reference labels the study).
    Y : ndarray of float64, shape (n_findings, n_references, n_studies)
        1.0, 0.0 or NaN (missing or excluded label) under ``policy`` and ``not_mentioned``.
    patient_of : pandas.Series
        Each study's patient id (object; NaN: none).
    policy, not_mentioned : str
    notes : tuple of str
        What the readers recorded (files not read, renamed columns).
    """

    models: list[str]
    findings: list[str]
    references: list[str]
    groups: dict[str, str]
    dropped: pd.DataFrame
    studies: np.ndarray
    S: np.ndarray
    Y: np.ndarray
    patient_of: pd.Series
    policy: str
    not_mentioned: str
    notes: tuple[str, ...] = ()


_Prepared = PreparedInputs


def _prepare(predictions: pd.DataFrame, labels: pd.DataFrame, *, references: Sequence[str] | None,
             findings: Sequence[str] | None, policy: str, not_mentioned: str,
             model_groups: pd.DataFrame | dict[str, str] | None, unlabeled: str) -> PreparedInputs:
    """Validate the tables (:func:`~cxreval.labels.validate_predictions`,
    :func:`~cxreval.labels.validate_label_table`) and lay them out as arrays (:func:`_prepare_scans`)."""
    preds = validate_predictions(predictions)
    labs = validate_label_table(labels, require_patient=False)
    return _prepare_scans(PredictionScan.from_frame(preds), LabelScan.from_frame(labs), references=references,
                          findings=findings, policy=policy, not_mentioned=not_mentioned, model_groups=model_groups,
                          unlabeled=unlabeled, frame=lambda: preds)


def prepare_from_files(predictions: str | Path | Sequence[str | Path], labels: str | Path | Sequence[str | Path], *,
                       state_encoding: str | None = None, references: Sequence[str] | None = None,
                       findings: Sequence[str] | None = None, policy: str = "exclude", not_mentioned: str = "negative",
                       model_groups: pd.DataFrame | dict[str, str] | None = None,
                       unlabeled: str = "error") -> PreparedInputs:
    """Read prediction and label files straight into the arrays :func:`evaluate_auc` computes on.

    Each file is read once, block by block, with its text columns as integer codes
    (:func:`cxreval.labels.scan_predictions`, :func:`cxreval.labels.scan_labels`): memory is about that of the
    score array ``S`` (8 bytes × models × findings × studies) plus one block, not that of the long tables.
    ``evaluate_auc(prepare_from_files(p, l, ...))`` equals ``evaluate_auc(read(p), read(l), ...)``.

    Parameters
    ----------
    predictions : path or sequence of paths
        Long prediction tables ``study_id, model, finding, score`` (CSV or Parquet file, or a folder of such
        files read as one table), or folders of wide ``<model>.csv``/``.parquet`` files.
    labels : path or sequence of paths
        Long label tables ``study_id, patient_id, finding, source, state`` (file, or folder of parts).
    state_encoding : {'cxreval', 'chexpert', 'binary'} or None
        How numeric states are read (:func:`~cxreval.labels.decode_states`).
    references, findings, policy, not_mentioned, model_groups, unlabeled
        As for :func:`evaluate_auc`.

    Returns
    -------
    PreparedInputs

    Raises
    ------
    SchemaError
        Anything the readers and :func:`evaluate_auc` refuse, with the same messages (file, row, value).
    """
    check_choice(policy, POLICIES, name="policy", func="evaluate_auc")
    check_choice(not_mentioned, ("negative", "exclude"), name="not_mentioned", func="evaluate_auc")
    ppaths, lpaths = _paths(predictions, "predictions"), _paths(labels, "labels")
    ps = scan_predictions(ppaths)
    ls, lnotes = scan_labels(lpaths, state_encoding=state_encoding)
    return _prepare_scans(ps, ls, references=references, findings=findings, policy=policy,
                          not_mentioned=not_mentioned, model_groups=model_groups, unlabeled=unlabeled,
                          frame=lambda: read_prediction_tables(ppaths)[0], notes=(*ps.notes, *lnotes))


def _paths(value: object, name: str) -> list[Path]:
    items: Any = [value] if isinstance(value, (str, Path)) else value
    try:
        out = [Path(p) for p in items]
    except TypeError:
        raise InvalidParameterError(f"The '{name}' parameter of prepare_from_files must be a path or a sequence of "
                                    f"paths. Got {value!r} instead.") from None
    if not out:
        raise InvalidParameterError(f"prepare_from_files: '{name}' is empty.")
    return out


def _prepare_scans(ps: PredictionScan, ls: LabelScan, *, references: Sequence[str] | None,
                   findings: Sequence[str] | None, policy: str, not_mentioned: str,
                   model_groups: pd.DataFrame | dict[str, str] | None, unlabeled: str,
                   frame: Callable[[], pd.DataFrame], notes: tuple[str, ...] = ()) -> PreparedInputs:
    """Lay validated codes out as arrays; the score arrays of ``ps`` are moved into ``S`` (``ps`` is emptied)."""
    refs, fs, fcodes, groups, dropped = _validate_inputs(ps, ls, references, findings, model_groups, unlabeled)
    texts = np.asarray(ps.studies, dtype=object)
    pstudies = _study_order(ps, fcodes)
    kept_mask = np.zeros(len(texts), dtype=bool)
    kept_mask[pstudies] = True
    if len(dropped):
        kept_mask[pd.Index(texts).get_indexer(dropped["study_id"].to_numpy(dtype=object))] = False
    kept = np.flatnonzero(kept_mask)
    kept = kept[np.argsort(texts[kept], kind="stable")]  # sorted study ids
    studies = texts[kept]
    try:
        models = _model_order(ps, fcodes, keep=kept_mask)
    except LookupError:  # a model's first row is a dropped study: the order over the kept rows, from the table
        df = frame()
        rows = df["finding"].isin(fs).to_numpy() & ~df["study_id"].isin(dropped["study_id"]).to_numpy()
        models = list(pd.unique(df.loc[rows, "model"]))
    n = len(studies)
    # scores: (model, finding, study), each (model, finding) array moved out of the scan as it is copied
    S = np.empty((len(models), len(fs), n))
    mcode = {m: k for k, m in enumerate(ps.models)}
    for i, m in enumerate(models):
        for jj, j in enumerate(fcodes):
            a = ps.scores.pop((mcode[m], j), None)
            S[i, jj] = np.nan
            if a is not None:
                inside = kept < len(a)
                S[i, jj, inside] = a[kept[inside]]
    ps.scores.clear()
    # labels: (finding, reference, study)
    Y = np.full((len(fs), len(refs), n), np.nan)
    pos = pd.Index(studies).get_indexer(np.asarray(ls.studies, dtype=object)) if n else np.full(len(ls.studies), -1)
    f_of = pd.Index(fs).get_indexer(ls.findings)
    r_of = pd.Index(refs).get_indexer(ls.sources)
    row_pos = pos[ls.study] if len(ls.study) else np.zeros(0, np.intp)
    sel = (row_pos >= 0) & (f_of[ls.finding] >= 0) & (r_of[ls.source] >= 0)
    domain = pd.Series(pd.array([-1, 0, 1, 2, pd.NA], dtype="Int8"))
    yb = binarize(domain, policy=policy, not_mentioned=not_mentioned)  # the value of each state, missing last
    st = ls.state[sel].astype(np.int16)
    Y[f_of[ls.finding[sel]], r_of[ls.source[sel]], row_pos[sel]] = yb[np.where(st == LabelScan.MISSING_STATE, 4,
                                                                                st + 1)]
    # every labelled (study, finding) needs a score from every model
    labelled = np.isfinite(Y).any(axis=1)  # (finding, study)
    for j, f in enumerate(fs):
        miss = np.isnan(S[:, j, :]) & labelled[j][None, :]
        if miss.any():
            m, s = np.argwhere(miss)[0]
            raise SchemaError(f"Model {models[m]!r} has no score for study {studies[s]!r}, finding {f!r}, which the "
                              f"references label ({int(miss.sum())} such (model, study) pairs); every model must "
                              "score every labelled study.")
    # each study's patient (one per study, checked by the readers)
    pat = np.full(len(ls.studies), -1, dtype=np.int64)
    has = ls.patient >= 0
    pat[ls.study[has]] = ls.patient[has]
    pcode = pat[pd.Index(ls.studies).get_indexer(studies)] if n else np.zeros(0, np.int64)
    patients = np.asarray(ls.patients + [np.nan], dtype=object)
    patient_of = pd.Series(patients[np.where(pcode >= 0, pcode, len(ls.patients))])
    return PreparedInputs(models, fs, refs, groups, dropped, studies, S, Y, patient_of, policy, not_mentioned,
                          tuple(notes))


def _evaluate_prepared(prep: _Prepared, *, n_resamples: int, confidence_level: float, macro: bool, micro: bool,
                       mean_over_models: bool, rng: object, plan: ResamplingPlan | None, shard_size: int | None,
                       executor: object | None, spill_dir: str | Path | None = None) -> AUCResult:
    """The computation of :func:`evaluate_auc` on validated arrays: plan, then per block (model × finding, model ×
    micro) one sort, point AUCs and every replicate; CIs and the table."""
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
            raise InvalidParameterError(f"evaluate_auc: the given plan covers {plan.n_studies} studies; the evaluation "
                                        f"needs the {n} studies of the predictions, sorted.")
    B = 0 if plan is None else plan.n_resamples
    undefined_point: list[tuple[str, str]] = []
    counts_rows = []
    for j, f in enumerate(fs):
        for k, r in enumerate(refs):
            y = Y[j, k]
            ok = np.isfinite(y)
            npos, nneg = int((y[ok] == 1).sum()), int((y[ok] == 0).sum())
            counts_rows.append({"finding": f, "reference": r, "n_pos": npos, "n_neg": nneg,
                                "n_dropped": int(n - ok.sum())})
            if npos == 0 or nneg == 0:
                undefined_point.append((f, r))
    for f, r in undefined_point:
        warnings.warn(f"Reference {r!r} has only one class for finding {f!r} on the evaluated studies; its AUC is "
                      "NaN.", UndefinedMetricWarning, stacklevel=2)
    # micro average: every (finding, study) pair pooled; pair q = j * n + s, its patient that of study s
    pooled = micro and len(fs) > 1
    n_f = len(fs) + int(pooled)
    inputs = BlockInputs(S, Y, None if plan is None else plan.study_patient, n_resamples=B,
                         n_patients=0 if plan is None else plan.n_patients)
    if B and plan is not None:
        if shard_size is None:
            shard_size = shard_size_for(plan.n_patients, n, B)
        shards = plan.count_shards(check_positive_int(shard_size, name="shard_size", func="evaluate_auc"))
        inputs = dataclasses.replace(inputs, shards=shards, wpos=positive_weights(Y, plan.study_patient, shards),
                                     ct_max=max(1, int(plan.counts.max(initial=0))))
    # blocks: (model, finding) and (model, micro), model-major so that every chunk of an executor mixes both
    blocks = [(i, j) for i in range(len(models)) for j in range(n_f)]
    point = np.full((len(models), n_f, len(refs)), np.nan)
    dist = np.full((len(models), n_f, len(refs), B), np.nan)
    for (i, j), pt, ds in map_blocks(get_executor(executor), inputs, blocks, spill_dir):
        point[i, j] = pt
        dist[i, j] = ds
    counts = pd.DataFrame(counts_rows)
    fnames = list(fs)
    per_point, per_dist = point[:, : len(fs)], dist[:, : len(fs)]
    if macro and len(fs) > 1:
        fnames.append(MACRO)
        point = np.concatenate([per_point, per_point.mean(axis=1, keepdims=True), point[:, len(fs):]], axis=1)
        dist = np.concatenate([per_dist, per_dist.mean(axis=1, keepdims=True), dist[:, len(fs):]], axis=1)
    if pooled:
        fnames.append(MICRO)
    table = _auc_table(models, fnames, refs, groups, point, dist, counts, confidence_level, mean_over_models)
    return AUCResult(table, tuple(models), tuple(fnames), tuple(refs), groups, point, dist, counts, plan, policy,
                     confidence_level, not_mentioned, dropped, BlockInputs(S, Y, inputs.study_patient))



def _auc_table(models: list[str], fnames: list[str], refs: list[str], groups: dict[str, str], point: np.ndarray,
               dist: np.ndarray, counts: pd.DataFrame, confidence_level: float, mean_over_models: bool) -> pd.DataFrame:
    summ = summarize_distribution(dist, confidence_level=confidence_level)
    cnt = counts.set_index(["finding", "reference"])
    macro_cnt = counts.groupby("reference")[["n_pos", "n_neg", "n_dropped"]].sum()
    rows = []

    def cn(f: str, r: str) -> tuple[int, int, int]:
        c = macro_cnt.loc[r] if f in (MACRO, MICRO) else cnt.loc[(f, r)]
        return int(c["n_pos"]), int(c["n_neg"]), int(c["n_dropped"])

    for i, m in enumerate(models):
        for j, f in enumerate(fnames):
            for k, r in enumerate(refs):
                p, q, d = cn(f, r)
                rows.append((m, groups[m], f, r, point[i, j, k], summ["ci_low"][i, j, k], summ["ci_high"][i, j, k],
                             p, q, d))
    if mean_over_models and len(models) > 1:
        mp = point.mean(axis=0)
        ms = summarize_distribution(dist.mean(axis=0), confidence_level=confidence_level)
        for j, f in enumerate(fnames):
            for k, r in enumerate(refs):
                p, q, d = cn(f, r)
                rows.append((MEAN_MODEL, "summary", f, r, mp[j, k], ms["ci_low"][j, k], ms["ci_high"][j, k], p, q, d))
    t = pd.DataFrame(rows, columns=list(AUC_COLUMNS))
    for c in ("n_pos", "n_neg", "n_dropped"):
        t[c] = t[c].astype(np.int64)
    return t


# paired comparison (bootstrap difference, DeLong) lives in its own module; re-exported here
from .auc_comparison import DeLongResult, PairedComparisonResult, compare_auc, delong_test  # noqa: E402
