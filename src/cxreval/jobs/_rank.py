"""The job of ``cxreval rank``: the AUCs of the models under several references, the paired comparison of the best
models, and how stable the ranking is, as one :class:`ReferenceComparison` that writes every file of the command.

:func:`compare_references` takes tables (DataFrames, or what the loaders return), :func:`compare_references_files`
the prediction and label files (``cxreval rank -p ... -l ...``); :func:`compare_auc_table` and
:func:`compare_auc_table_file` rank a table of point AUCs (``cxreval rank --auc-table``, a published table).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from os import PathLike
from pathlib import Path
from types import MappingProxyType
from typing import Any, ClassVar

import pandas as pd

from ..classification import SeparabilityResult
from ..exceptions import InvalidParameterError
from ..io._write import write_summary
from ..options import Compute, Design, Resampling
from ..progress import as_progress
from ..ranking import RankingStabilityResult, compare_rankings
from ..ranking._correlation import DEFAULT_KENDALL, DEFAULT_SPEARMAN
from ..ranking._published import rank_auc_table, read_auc_table
from ..ranking._stability import check_ranking_options
from ..results import TableResult
from ..stats import AUCResult, AUCTableResult
from ..stats._auc_result import AUC_SUMMARY_FILE
from ._classify import ClassifierEvaluation, evaluate_classifiers, evaluate_classifiers_files

__all__ = [
    "ReferenceComparison",
    "compare_references",
    "compare_references_files",
    "compare_auc_table",
    "compare_auc_table_file",
]

_TITLE = "cxreval rank"


@dataclass(frozen=True)
class ReferenceComparison(TableResult):
    """Models compared under several references: their AUCs, the best models' paired comparison and the ranking.

    Attributes
    ----------
    auc : AUCResult or AUCTableResult
        The AUCs ranked: bootstrapped from predictions and labels (:class:`~cxreval.stats.AUCResult`),
        or a table of point AUCs (:class:`~cxreval.stats.AUCTableResult`, ``rank --auc-table``).
    ranking : RankingStabilityResult
        The rank correlations between the rankings each reference induces, the rankings and the top changes.
    comparison : SeparabilityResult or None
        Whether the best model under each reference is separable from the runner-up and from the best under
        every other reference (:func:`~cxreval.classification.compare_best_models`); None for a point AUC table.
    missing_scores : str
        The ``missing_scores`` option of the AUCs (recorded in run.json).

    ``table`` is the ranking's ``rank_correlation`` table. ``FILES``: the AUCs' files, ``auc_comparison`` and
    the ranking's files; :meth:`save` writes those present, with ``auc_summary.md`` (the AUCs' summary and the
    verdicts, from predictions) and ``summary.md``.
    """

    FILES: ClassVar[Mapping[str, str]] = MappingProxyType(
        {**AUCResult.FILES, **SeparabilityResult.FILES, **RankingStabilityResult.FILES}
    )
    COLUMNS: ClassVar[tuple[str, ...]] = RankingStabilityResult.COLUMNS

    auc: AUCResult | AUCTableResult
    ranking: RankingStabilityResult
    comparison: SeparabilityResult | None = None
    missing_scores: str = "refuse"

    @property
    def table(self) -> pd.DataFrame:
        return self.ranking.table

    def tables(self) -> dict[str, pd.DataFrame]:
        parts: list[TableResult] = [
            self.auc,
            *([self.comparison] if self.comparison is not None else []),
            self.ranking,
        ]
        return {name: table for part in parts for name, table in part.tables().items()}

    def save(self, folder: str | PathLike[str], *, summaries: bool = True) -> dict[str, Path]:
        """Write every table (CSV + Parquet) into ``folder``; with ``summaries``, also ``auc_summary.md`` (from
        predictions) and ``summary.md``, as ``cxreval rank`` writes them. Returns ``{name: csv path}``."""
        out = Path(folder)
        paths = dict(self.auc.save(out))
        if self.comparison is not None:
            paths.update(self.comparison.save(out))
            if summaries and isinstance(self.auc, AUCResult):
                (out / AUC_SUMMARY_FILE).write_text(
                    self.auc.summary("cxreval classify") + "\n\n" + self.comparison.verdicts()
                )
        paths.update(self.ranking.save(out))
        if summaries:
            write_summary(out, self.summary())
        return paths

    def summary(self, title: str = _TITLE) -> str:
        """The ranking's summary, then (from predictions) the verdicts of the paired comparison (Markdown)."""
        text = self.ranking.summary(title)
        return text if self.comparison is None else text + "\n\n" + self.comparison.verdicts()

    def design(self) -> str:
        """The comparison design in words (:meth:`cxreval.stats.AUCResult.design`); '' for a point table."""
        return self.auc.design() if isinstance(self.auc, AUCResult) else ""

    def design_record(self) -> dict[str, object]:
        """The design as ``run.json`` records it: ``studies``, ``missing_scores``, ``finding_map``."""
        fmap = self.auc.finding_map if isinstance(self.auc, AUCResult) else None
        return {
            "studies": self.auc.studies if isinstance(self.auc, AUCResult) else None,
            "missing_scores": self.missing_scores,
            "finding_map": None if fmap is None else fmap.to_dict(),
        }

    def to_dict(self) -> dict[str, object]:
        return {
            "auc": self.auc.to_dict(),
            "ranking": self.ranking.to_dict(),
            "comparison": None
            if self.comparison is None
            else self.comparison.table.to_dict(orient="records"),
        }

    def _figure(self) -> Any:
        """The ranking's bump chart (:meth:`RankingStabilityResult.figure` of its rankings)."""
        return self.ranking._figure()


@dataclass(frozen=True)
class _Ranking:
    """The ranking options of the rank jobs, checked (and ``pairs`` parsed) once, before any AUC or file is read;
    the fields are the keywords :func:`~cxreval.ranking.compare_rankings` and
    :func:`~cxreval.ranking.rank_auc_table` take."""

    pairs: list[tuple[str, str]] | None
    groups: str
    min_models: int
    kendall: str
    spearman: str

    @classmethod
    def checked(
        cls,
        pairs: str | Sequence[str | tuple[str, str]] | None,
        groups: str,
        min_models: int,
        kendall: str,
        spearman: str,
    ) -> _Ranking:
        check_ranking_options(kendall=kendall, spearman=spearman, min_models=min_models)
        from ..agreement._pairs import parse_pairs  # the pairs A:B,C:D as agree reads them

        return cls(None if pairs is None else parse_pairs(pairs), groups, min_models, kendall, spearman)

    def keywords(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}

    def of_table(self, auc: AUCTableResult) -> ReferenceComparison:
        """The ranking of a table of point AUCs (no comparison)."""
        return ReferenceComparison(auc, rank_auc_table(auc, **self.keywords()))

    def of_evaluation(
        self,
        evaluate: Callable[..., ClassifierEvaluation],
        predictions: Any,
        labels: Any,
        *,
        dataset: str,
        compute: Compute,
        func: str,
        **evaluation: Any,
    ) -> ReferenceComparison:
        """The evaluation of ``classify`` (``evaluate``: of tables or of files; the AUCs and the comparison),
        then the ranking of the models by those AUCs."""
        progress = as_progress(compute.progress, func=func)
        ev = evaluate(
            predictions, labels, compute=dataclasses.replace(compute, progress=progress), **evaluation
        )
        assert isinstance(ev.auc, AUCResult)  # against references, not a latent truth
        task = progress.add("rank correlations over the replicates")
        ranking = compare_rankings(
            ev.auc, confidence_level=ev.auc.confidence_level, dataset=dataset, **self.keywords()
        )
        progress.done(task)
        return ReferenceComparison(ev.auc, ranking, ev.comparison, missing_scores=ev.missing_scores)


def _compare_evaluated(
    evaluate: Callable[..., ClassifierEvaluation],
    func: str,
    /,
    predictions: Any,
    labels: Any,
    *,
    pairs: str | Sequence[str | tuple[str, str]] | None,
    groups: str,
    min_models: int,
    kendall: str,
    spearman: str,
    **evaluation: Any,
) -> ReferenceComparison:
    """The job ``func`` (:func:`compare_references` or :func:`compare_references_files`, their keywords as given):
    the ranking options checked, then ``evaluate`` (of tables or of files) ranked by :meth:`_Ranking.of_evaluation`
    (``evaluation``: ``dataset``, ``compute`` and the keywords of ``evaluate``)."""
    ranking = _Ranking.checked(pairs, groups, min_models, kendall, spearman)
    return ranking.of_evaluation(evaluate, predictions, labels, func=func, **evaluation)


def compare_references(
    predictions: pd.DataFrame,
    labels: pd.DataFrame,
    *,
    references: Sequence[str] | None = None,
    findings: Sequence[str] | None = None,
    model_groups: pd.DataFrame | dict[str, str] | None = None,
    design: Design = Design(),
    resampling: Resampling = Resampling(),
    compute: Compute = Compute(),
    pairs: str | Sequence[str | tuple[str, str]] | None = None,
    groups: str = "all",
    min_models: int = 3,
    dataset: str = "",
    kendall: str = DEFAULT_KENDALL,
    spearman: str = DEFAULT_SPEARMAN,
) -> ReferenceComparison:
    """The AUCs of every model under every reference (patient bootstrap), the paired comparison of the best
    models, and the stability of the model ranking across the references: what ``cxreval rank -p ... -l ...``
    computes, on tables.

    Parameters
    ----------
    predictions, labels : DataFrame, ReadResult or list of them
        Long prediction and label tables (:func:`~cxreval.classification.evaluate_auc`); what the loaders return
        (``load_dataset(...)``, :func:`~cxreval.labels.read_label_tables`) is taken as is, and a list of tables is
        read as one table.
    references, findings, model_groups
        As for :func:`~cxreval.classification.evaluate_auc`.
    design, resampling, compute
        As for :func:`evaluate_classifiers` (the studies, the label policy and the finding map; the bootstrap;
        the executor and the progress: a task per AUC block and one for the rank correlations).
    pairs : 'A:B,C:D' or sequence of pairs, optional
        Reference pairs to correlate (default: every pair).
    groups, min_models, dataset, kendall, spearman
        As for :func:`~cxreval.ranking.compare_rankings`.

    Returns
    -------
    res : ReferenceComparison
        ``res.save(folder)`` writes what ``cxreval rank`` writes (``run.json`` aside).

    Raises
    ------
    InvalidParameterError, SchemaError
        A bad option (before any AUC), or what :func:`~cxreval.classification.evaluate_auc` refuses.
    """
    return _compare_evaluated(evaluate_classifiers, "compare_references", **locals())


def compare_references_files(
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
    pairs: str | Sequence[str | tuple[str, str]] | None = None,
    groups: str = "all",
    min_models: int = 3,
    dataset: str = "",
    kendall: str = DEFAULT_KENDALL,
    spearman: str = DEFAULT_SPEARMAN,
) -> ReferenceComparison:
    """:func:`compare_references` of prediction and label files, read block by block
    (:func:`~cxreval.classification.evaluate_auc_files`): what ``cxreval rank -p ... -l ...`` runs.

    Parameters
    ----------
    predictions, labels, model_groups, state_encoding, blank_state
        As for :func:`~cxreval.classification.evaluate_auc_files`.
    references, findings, design, resampling, compute, pairs, groups, min_models, dataset, kendall, spearman
        As for :func:`compare_references` (``compute.spill_dir``: where off-process executors memory-map the
        arrays, e.g. the output's temporary folder).

    Returns
    -------
    res : ReferenceComparison
    """
    return _compare_evaluated(evaluate_classifiers_files, "compare_references_files", **locals())


def compare_auc_table(
    auc: AUCTableResult,
    *,
    pairs: str | Sequence[str | tuple[str, str]] | None = None,
    groups: str = "all",
    min_models: int = 3,
    kendall: str = DEFAULT_KENDALL,
    spearman: str = DEFAULT_SPEARMAN,
) -> ReferenceComparison:
    """The stability of the model ranking across the references of a table of point AUCs (no bootstrap; a
    published table beside the paper's correlations: :func:`~cxreval.ranking.rank_auc_table`).

    Parameters
    ----------
    auc : AUCTableResult
        From :func:`~cxreval.ranking.read_auc_table`.
    pairs, groups, min_models, kendall, spearman
        As for :func:`compare_references`.

    Returns
    -------
    res : ReferenceComparison
        ``comparison`` is None (point AUCs cannot be compared); ``res.save(folder)`` writes what ``cxreval rank
        --auc-table`` writes (``run.json`` aside).
    """
    if not isinstance(auc, AUCTableResult):
        raise InvalidParameterError(
            f"The 'auc' parameter of compare_auc_table must be an AUCTableResult (from "
            f"read_auc_table). Got {type(auc).__name__} instead."
        )
    return _Ranking.checked(pairs, groups, min_models, kendall, spearman).of_table(auc)


def compare_auc_table_file(
    path: str | PathLike[str],
    *,
    pairs: str | Sequence[str | tuple[str, str]] | None = None,
    groups: str = "all",
    min_models: int = 3,
    kendall: str = DEFAULT_KENDALL,
    spearman: str = DEFAULT_SPEARMAN,
) -> ReferenceComparison:
    """:func:`compare_auc_table` of an AUC table file (CSV/Parquet: ``model, group, finding, reference, auc[,
    dataset]``), or ``'xqa'`` for the XQA paper's packaged Tables 16-25 (:func:`~cxreval.ranking.read_auc_table`):
    what ``cxreval rank --auc-table`` runs. The options are checked before the file is read."""
    ranking = _Ranking.checked(pairs, groups, min_models, kendall, spearman)
    return ranking.of_table(read_auc_table(path))
