"""The job of ``cxreval classify``: every model's AUC against every reference (:mod:`cxreval.classification`) or
against the latent truth of several readers (:mod:`cxreval.latent`) and, per reference, whether the best model
is separable from the next, as one :class:`ClassifierEvaluation` that writes every file of the command.

:func:`evaluate_classifiers` takes tables (DataFrames, or what the loaders return),
:func:`evaluate_classifiers_files` the prediction and label files (``cxreval classify -p ... -l ...``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from os import PathLike
from pathlib import Path
from types import MappingProxyType
from typing import Any, ClassVar

import pandas as pd

from ..classification import OperatingPointResult, SeparabilityResult, compare_best_models
from ..classification._files import read_model_groups
from ..classification._operating_points import decision_thresholds, parse_operating_points
from ..exceptions import InvalidParameterError
from ..executor import open_executor
from ..finding_maps import resolve_finding_map
from ..io._write import write_summary, write_table
from ..latent import LatentAUCResult, evaluate_latent_auc
from ..latent._evaluate import evaluate_latent_auc_files
from ..options import Compute, Design, Resampling
from ..results import TableResult, as_table
from ..stats import AUCResult

__all__ = ["ClassifierEvaluation", "evaluate_classifiers", "evaluate_classifiers_files"]


@dataclass(frozen=True)
class ClassifierEvaluation(TableResult):
    """Models evaluated against references: their AUCs and the best models' paired comparison.

    Attributes
    ----------
    auc : AUCResult or LatentAUCResult
        Against each reference (:func:`~cxreval.classification.evaluate_auc`), or against the latent truth of
        readers (:func:`~cxreval.latent.evaluate_latent_auc`).
    comparison : SeparabilityResult or None
        Per finding and reference, the best model against the runner-up (:func:`~cxreval.classification.compare_best_models`); None
        against the latent truth.
    operating_points : OperatingPointResult or None
        The operating points and the decision curve (:func:`~cxreval.classification.evaluate_operating_points`),
        when asked for; on the AUCs' studies and bootstrap replicates.
    missing_scores : str
        The ``missing_scores`` option (recorded in run.json).

    ``table`` is the AUC table. ``FILES``: the AUCs' files, ``auc_comparison``, ``operating_points`` and
    ``decision_curve``; :meth:`save` writes those present (the last two only when asked for) and ``summary.md``.
    """

    FILES: ClassVar[Mapping[str, str]] = MappingProxyType(
        {**AUCResult.FILES, **SeparabilityResult.FILES, **OperatingPointResult.FILES}
    )
    COLUMNS: ClassVar[tuple[str, ...]] = AUCResult.COLUMNS

    auc: AUCResult | LatentAUCResult
    comparison: SeparabilityResult | None = None
    missing_scores: str = "refuse"
    operating_points: OperatingPointResult | None = None

    @property
    def table(self) -> pd.DataFrame:
        return self.auc.table

    @property
    def latent(self) -> bool:
        """Whether the AUCs are against the latent truth of readers."""
        return not isinstance(self.auc, AUCResult)

    def tables(self) -> dict[str, pd.DataFrame]:
        return {
            **self.auc.tables(),
            **({} if self.comparison is None else self.comparison.tables()),
            **self._operating_tables(),
        }

    def _operating_tables(self) -> dict[str, pd.DataFrame]:
        """``operating_points`` when operating points were asked for, ``decision_curve`` when a decision curve was."""
        op = self.operating_points
        if op is None:
            return {}
        asked = {"operating_points": bool(op.operating_points), "decision_curve": len(op.decision_curve) > 0}
        return {k: v for k, v in op.tables().items() if asked[k]}

    def save(self, folder: str | PathLike[str]) -> dict[str, Path]:
        """Write every table (CSV + Parquet) and ``summary.md`` into ``folder``, as ``cxreval classify`` writes
        them; return ``{name: csv path}``."""
        out = Path(folder)
        paths = dict(self.auc.save(out))
        if self.comparison is not None:
            paths.update(self.comparison.save(out))
        for name, table in self._operating_tables().items():
            paths[name] = write_table(table, out, Path(self.FILES[name]).stem)
        write_summary(out, self.summary())
        return paths

    def summary(self) -> str:
        """The AUCs' summary, then the verdicts of the paired comparison (Markdown)."""
        if self.comparison is None:
            return self.auc.summary("cxreval classify --latent-truth")
        text = self.auc.summary("cxreval classify") + "\n\n" + self.comparison.verdicts()
        if self.operating_points is not None:
            text += "\n\n" + self.operating_points.summary().replace("# ", "## ", 1)
        return text

    def design(self) -> str:
        """The design in words (what the command prints)."""
        return self.auc.design()

    def design_record(self) -> dict[str, object] | None:
        """The design as ``run.json`` records it (None against the latent truth)."""
        if not isinstance(self.auc, AUCResult):
            return None
        fmap = self.auc.finding_map
        return {
            "studies": self.auc.studies,
            "missing_scores": self.missing_scores,
            "finding_map": None if fmap is None else fmap.to_dict(),
        }

    def to_dict(self) -> dict[str, object]:
        return {
            "auc": self.auc.to_dict(),
            "comparison": None
            if self.comparison is None
            else self.comparison.table.to_dict(orient="records"),
        }

    @classmethod
    def figure(cls, table: pd.DataFrame) -> Any:
        """The forest plot of ``auc.csv`` (:meth:`cxreval.stats.AUCResult.figure`)."""
        return AUCResult.figure(table)


def _latent_options(
    readers: Sequence[str] | None,
    references: Sequence[str] | None,
    finding_map: object,
    func: str,
    *,
    latent_truth: bool = False,
    reader_accuracy: object = None,
    reader_prior: object = None,
    anchor: object = None,
    dependent: object = None,
) -> bool:
    """Check the options of the latent truth against the others; return whether the AUCs are against it
    (``latent_truth``)."""
    given = reader_accuracy is not None or reader_prior is not None
    if (readers or given or anchor or dependent) and not latent_truth:
        raise InvalidParameterError(
            "readers=, reader_accuracy=, reader_prior=, anchor= and dependent= apply only with latent_truth=True."
        )
    if latent_truth and not readers:
        raise InvalidParameterError(
            "latent_truth=True needs readers=: the label sources treated as readers (e.g. readers='bc4,bc6,bc8')."
        )
    if latent_truth and (references or finding_map is not None):
        raise InvalidParameterError(
            "references= and finding_map= do not apply with latent_truth=True (the reference is the latent "
            "truth of readers=)."
        )
    return latent_truth


def _model_groups(
    model_groups: str | PathLike[str] | pd.DataFrame | dict[str, str] | None,
) -> pd.DataFrame | dict[str, str] | None:
    return read_model_groups(model_groups) if isinstance(model_groups, (str, PathLike)) else model_groups


def _evaluate(
    predictions: Any,
    labels: Any,
    *,
    files: bool,
    state_encoding: str | None = None,
    blank_state: str | None = None,
    references: Sequence[str] | None,
    findings: Sequence[str] | None,
    model_groups: Any,
    design: Design,
    resampling: Resampling,
    compute: Compute,
    latent_truth: bool,
    readers: Sequence[str] | None,
    anchor: str | None,
    reader_accuracy: str | PathLike[str] | pd.DataFrame | None,
    reader_prior: str | PathLike[str] | pd.DataFrame | None,
    dependent: Sequence[Sequence[str] | str] | str | None,
    operating_points: str | Sequence[str] | None,
    decision_curve: str | Sequence[float] | None,
    func: str,
) -> ClassifierEvaluation:
    """The evaluation of :func:`evaluate_classifiers` (tables) or, with ``files``, of
    :func:`evaluate_classifiers_files` (files, their labels read with ``state_encoding`` and ``blank_state``):
    each job's keywords as given."""
    read = {"state_encoding": state_encoding, "blank_state": blank_state} if files else None
    if not files:
        predictions = as_table(predictions, name="predictions", func=func)
        labels = as_table(labels, name="labels", func=func)
    points = parse_operating_points(operating_points, func=func)  # a from= file read here, before the inputs
    thresholds = decision_thresholds(decision_curve, func=func)
    if latent_truth and (points or thresholds.size):
        raise InvalidParameterError(
            "operating_points= and decision_curve= do not apply with latent_truth=True (they need a reference)."
        )
    latent = _latent_options(
        readers,
        references,
        design.finding_map,
        func,
        latent_truth=latent_truth,
        reader_accuracy=reader_accuracy,
        reader_prior=reader_prior,
        anchor=anchor,
        dependent=dependent,
    )
    fmap = None if latent else resolve_finding_map(design.finding_map, design.map_score, func=func)
    labelling: dict[str, Any] = {
        "policy": design.policy,
        "not_mentioned": design.not_mentioned,
        "unlabeled": design.unlabeled,
        "n_resamples": resampling.n_resamples,
        "confidence_level": resampling.confidence_level,
        "rng": resampling.rng,
        "progress": compute.progress,
        **(read or {}),
    }
    if latent:
        assert readers is not None  # checked by _latent_options
        latent_auc = evaluate_latent_auc if read is None else evaluate_latent_auc_files
        lat = latent_auc(
            predictions,
            labels,
            readers=readers,
            anchor=anchor,
            reader_accuracy=reader_accuracy,
            reader_prior=reader_prior,
            dependent=dependent or None,
            findings=findings or None,
            model_groups=model_groups if read is None else _model_groups(model_groups),
            executor=compute.executor,
            **labelling,
        )
        return ClassifierEvaluation(lat, missing_scores=design.missing_scores)
    if points or thresholds.size:
        return _with_operating_points(
            predictions,
            labels,
            read=read,
            selection={
                "references": references,
                "findings": findings,
                "model_groups": model_groups,
                "studies": design.studies,
                "missing_scores": design.missing_scores,
                "finding_map": fmap,
            },
            labelling=labelling,
            compute=compute,
            points=points,
            decision_curve=thresholds,
            missing_scores=design.missing_scores,
            func=func,
        )
    from ..classification import evaluate_auc
    from ..classification._files import evaluate_auc_files

    with open_executor(compute.executor) as ex:
        auc = (evaluate_auc if read is None else evaluate_auc_files)(
            predictions,
            labels,
            references=references,
            findings=findings,
            model_groups=model_groups,
            studies=design.studies,
            missing_scores=design.missing_scores,
            finding_map=fmap,
            executor=ex,
            spill_dir=compute.spill_dir,
            **labelling,
        )
    return ClassifierEvaluation(auc, compare_best_models(auc), missing_scores=design.missing_scores)


def _with_operating_points(
    predictions: Any,
    labels: Any,
    *,
    read: dict[str, str | None] | None,
    selection: dict[str, Any],
    labelling: dict[str, Any],
    compute: Compute,
    points: list[Any],
    decision_curve: Any,
    missing_scores: str,
    func: str,
) -> ClassifierEvaluation:
    """The AUCs, their comparison and the operating points: the inputs laid out once and checked against the
    operating points (a ``from=`` file's models and findings, probabilities for a decision curve) before any
    computation; the operating points on the AUCs' studies and bootstrap plan."""
    from ..classification import evaluate_auc_prepared
    from ..classification._files import prepare_auc_files
    from ..classification._operating_points import check_operating_points, evaluate_operating_points_prepared
    from ..progress import as_progress
    from ..stats import prepare_inputs

    labelling = dict(labelling)
    opts = {k: labelling.pop(k) for k in ("n_resamples", "confidence_level", "rng")}
    progress = as_progress(labelling.pop("progress"), func=func)
    if read is None:
        prep = prepare_inputs(predictions, labels, **selection, **labelling)
    else:
        prep = prepare_auc_files(predictions, labels, **selection, **labelling, progress=progress)
    check_operating_points(points, prep, decision_curve, func=func)
    with open_executor(compute.executor) as ex:
        auc = evaluate_auc_prepared(prep, executor=ex, spill_dir=compute.spill_dir, progress=progress, **opts)
    ops = evaluate_operating_points_prepared(
        prep,
        operating_points=points,
        decision_curve=decision_curve,
        plan=auc.plan,
        **opts,
        func=func,
    )
    return ClassifierEvaluation(
        auc, compare_best_models(auc), missing_scores=missing_scores, operating_points=ops
    )


def evaluate_classifiers(
    predictions: pd.DataFrame,
    labels: pd.DataFrame,
    *,
    references: Sequence[str] | None = None,
    findings: Sequence[str] | None = None,
    model_groups: pd.DataFrame | dict[str, str] | None = None,
    design: Design = Design(),
    resampling: Resampling = Resampling(),
    compute: Compute = Compute(),
    latent_truth: bool = False,
    readers: Sequence[str] | None = None,
    anchor: str | None = None,
    reader_accuracy: str | PathLike[str] | pd.DataFrame | None = None,
    reader_prior: str | PathLike[str] | pd.DataFrame | None = None,
    dependent: Sequence[Sequence[str] | str] | str | None = None,
    operating_points: str | Sequence[str] | None = None,
    decision_curve: str | Sequence[float] | None = None,
) -> ClassifierEvaluation:
    """Every model's ROC-AUC against every reference with patient-bootstrap CIs, and whether the best model under
    each reference is separable from the next: what ``cxreval classify`` computes, on tables.

    Parameters
    ----------
    predictions, labels : DataFrame, ReadResult or list of them
        Long prediction and label tables (:func:`~cxreval.classification.evaluate_auc`); what the loaders return is taken as is, and a
        list of tables is read as one table.
    references, findings, model_groups
        As for :func:`~cxreval.classification.evaluate_auc`.
    design : Design, default=Design()
        The studies (``common``: each finding's AUCs on the studies every reference labelling it labels, one
        design; ``each``: every reference on the studies it labels), the label policy, the finding map and the
        models without scores (:class:`cxreval.options.Design`).
    resampling : Resampling, default=Resampling()
        The patient bootstrap (:class:`cxreval.options.Resampling`).
    compute : Compute, default=Compute()
        The executor, the progress and where arrays spill (:class:`cxreval.options.Compute`).
    latent_truth : bool, default=False
        Whether the AUCs are against the latent truth of ``readers``: ``readers`` are required with it, and
        ``readers``, ``anchor``, ``reader_accuracy`` and ``reader_prior`` refused without it.
    readers, anchor, reader_accuracy, reader_prior, dependent : optional
        With ``readers``: the AUC against the latent truth of these label sources instead of against each
        reference (:func:`cxreval.latent.evaluate_latent_auc`, each finding an item of the executor;
        ``references``, the finding map and the studies do not apply; no paired comparison); ``reader_prior``:
        plausible ranges of readers' accuracies, an informative prior; ``dependent``: groups of readers that
        share errors, each a tuple of names or a comma-separated string, and/or ``'flagged'`` (group the pairs
        the checks flag, per finding: the default), or ``'none'`` (every reader independent given the truth).
    operating_points, decision_curve : optional
        Operating points (``'specificity=0.9'``, ``'sensitivity=0.9'``, ``'youden'``, ``'threshold=0.5'``,
        ``'from=FILE'``) and the threshold probabilities of a decision curve (``'0.01:0.99:0.01'``), as for
        :func:`~cxreval.classification.evaluate_operating_points`, on the AUCs' studies and bootstrap replicates
        (``res.operating_points``; files ``operating_points`` and ``decision_curve``). Checked before any
        computation; not with ``latent_truth``.

    Returns
    -------
    res : ClassifierEvaluation
        ``res.save(folder)`` writes what ``cxreval classify`` writes (``run.json`` aside).
    """
    return _evaluate(**locals(), files=False, func="evaluate_classifiers")


def evaluate_classifiers_files(
    predictions: str | Path | Sequence[str | Path],
    labels: str | Path | Sequence[str | Path],
    *,
    references: Sequence[str] | None = None,
    findings: Sequence[str] | None = None,
    model_groups: str | PathLike[str] | pd.DataFrame | dict[str, str] | None = None,
    state_encoding: str | None = None,
    blank_state: str | None = None,
    design: Design = Design(),
    resampling: Resampling = Resampling(),
    compute: Compute = Compute(),
    latent_truth: bool = False,
    readers: Sequence[str] | None = None,
    anchor: str | None = None,
    reader_accuracy: str | PathLike[str] | pd.DataFrame | None = None,
    reader_prior: str | PathLike[str] | pd.DataFrame | None = None,
    dependent: Sequence[Sequence[str] | str] | str | None = None,
    operating_points: str | Sequence[str] | None = None,
    decision_curve: str | Sequence[float] | None = None,
) -> ClassifierEvaluation:
    """:func:`evaluate_classifiers` of prediction and label files, read block by block (:func:`~cxreval.classification.evaluate_auc_files`;
    with ``readers``, :func:`cxreval.latent.evaluate_latent_auc_files`): what ``cxreval classify`` runs.

    Parameters
    ----------
    predictions, labels, model_groups, state_encoding, blank_state
        As for :func:`~cxreval.classification.evaluate_auc_files`.
    references, findings, design, resampling, compute, latent_truth, readers, anchor, reader_accuracy,
    reader_prior, dependent, operating_points, decision_curve
        As for :func:`evaluate_classifiers` (``compute.spill_dir``: where off-process executors memory-map the
        arrays, e.g. the output's temporary folder).

    Returns
    -------
    res : ClassifierEvaluation
    """
    return _evaluate(**locals(), files=True, func="evaluate_classifiers_files")
