"""Everything ``cxreval agree`` computes on a label table, as one result that owns every file it writes.

:func:`compare_sources` (what ``cxreval agree`` runs, through :func:`cxreval.jobs.compare_sources_files`) maps the findings first when given a finding map, then
runs :func:`~cxreval.agreement.compute_agreement`, :func:`~cxreval.agreement.compute_prevalence` (on the
sources of the pairs, in their order in the label table), :func:`~cxreval.agreement.compute_flows` and
:func:`~cxreval.agreement.compute_omissions` with the same choices (the flows and omissions of ``flow_pairs``
when given); :meth:`SourceComparisonResult.save` writes ``agreement``, ``prevalence``, ``flows`` and
``omissions`` (CSV + Parquet), ``finding_map`` with a finding map, and ``summary.md``
(:meth:`SourceComparisonResult.summary`).

Examples
--------
>>> import pandas as pd
>>> t = pd.DataFrame({"study_id": ["s1", "s2", "s3"] * 2, "finding": "Edema", "source": ["A"] * 3 + ["B"] * 3,
...                   "state": ["positive", "negative", "uncertain", "positive", "negative", "negative"]})
>>> res = compare_sources(t, "A:B")
>>> sorted(res.FILES.values())
['agreement.csv', 'flows.csv', 'omissions.csv', 'prevalence.csv']
>>> row = res.omissions.table.iloc[0]
>>> row["finding"], int(row["pos_a"]), int(row["pos_a_neg_b"])
('Edema', 1, 0)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, ClassVar

import pandas as pd

from .._typing import FindingsLike, PathLike, Studies
from .._validation import check_choice
from ..exceptions import SchemaError
from ..results import TableResult, as_table
from ..schema import SOURCE
from ._omissions import FlowsResult, OmissionsResult, compute_flows
from ._pairs import AgreementTableResult, SourcePairs, compute_agreement, parse_pairs, prepare_labels
from ._prevalence import PrevalenceResult, compute_prevalence

if TYPE_CHECKING:
    from ..findings import VocabularyMapping

__all__ = ["SourceComparisonResult", "compare_sources", "common_study_labels"]

_PARTS: tuple[type[TableResult], ...] = (AgreementTableResult, PrevalenceResult, FlowsResult, OmissionsResult)


@dataclass(frozen=True)
class SourceComparisonResult(TableResult):
    """Agreement, prevalence, flows and omissions of the same pairs of label sources.

    Attributes
    ----------
    agreement : AgreementTableResult
    prevalence : PrevalenceResult
        Of the sources of the pairs, in the order they appear in the label table.
    flows : FlowsResult
        Of ``flow_pairs`` when given, else of the pairs.
    omissions : OmissionsResult
        Of the same pairs as ``flows``.
    finding_map : VocabularyMapping or None
        The finding map applied to the labels first (written as ``finding_map.csv``), or None.
    title : str
        The heading of ``summary.md``.
    """

    PARTS: ClassVar[tuple[type[TableResult], ...]] = _PARTS
    FILES: ClassVar[Mapping[str, str]] = MappingProxyType({k: v for p in _PARTS for k, v in p.FILES.items()})
    COLUMNS: ClassVar[tuple[str, ...]] = AgreementTableResult.COLUMNS  # of ``table``; each part has its own

    agreement: AgreementTableResult
    prevalence: PrevalenceResult
    flows: FlowsResult
    omissions: OmissionsResult
    finding_map: VocabularyMapping | None = None
    title: str = "Agreement between label sources"

    @property
    def table(self) -> pd.DataFrame:
        """The agreement table (the other tables are on their parts)."""
        return self.agreement.table

    def tables(self) -> dict[str, pd.DataFrame]:
        return {
            name: df
            for part in (self.agreement, self.prevalence, self.flows, self.omissions)
            for name, df in part.tables().items()
        }

    def save_tables(self, folder: PathLike) -> dict[str, Path]:
        """Write the tables of ``FILES`` and, with a finding map, ``finding_map`` (CSV + Parquet) into ``folder``,
        without ``summary.md``; return ``{name: csv path}``."""
        written = super().save(folder)
        if self.finding_map is not None:
            from ..finding_maps import finding_map_table
            from ..io import write_table

            written["finding_map"] = write_table(
                finding_map_table(self.finding_map), Path(folder), "finding_map"
            )
        return written

    def save(self, folder: PathLike) -> dict[str, Path]:
        """Write every file ``cxreval agree`` writes but ``run.json`` into ``folder``: the tables
        (:meth:`save_tables`) and ``summary.md`` (:meth:`summary`); return ``{name: path}``."""
        from ..io._write import write_summary

        written = self.save_tables(folder)
        written["summary"] = write_summary(Path(folder), self.summary())
        return written

    def summary(self, title: str | None = None) -> str:
        """``# title`` (default the result's ``title``), the agreement choices and per-pair drops, then the
        agreement, omission and positive prevalence tables, as Markdown (``summary.md`` of ``cxreval agree``)."""
        return "\n".join(
            [
                f"# {self.title if title is None else title}",
                "",
                self.agreement.summary(),
                "",
                self.omissions.summary(),
                "",
                self.prevalence.summary(),
                "",
            ]
        )

    def to_dict(self) -> dict[str, object]:
        return {
            "agreement": self.agreement.to_dict(),
            "prevalence": self.prevalence.to_dict(),
            "flows": self.flows.to_dict(),
            "omissions": self.omissions.to_dict(),
        }

    def _figure(self) -> Any:
        """The agreement figure (:meth:`AgreementTableResult.plot`)."""
        return self.agreement.plot()


def compare_sources(
    labels: object,
    pairs: SourcePairs,
    *,
    findings: FindingsLike = None,
    finding_sets: Mapping[str, Sequence[str]] | None = None,
    weights: str | None = "quadratic",
    not_mentioned: str = "negative",
    studies: Studies = "common",
    both_uncertain: str = "agree",
    finding_map: VocabularyMapping | str | PathLike | None = None,
    flow_pairs: SourcePairs | None = None,
    title: str = "Agreement between label sources",
) -> SourceComparisonResult:
    """Agreement, prevalence (of the pairs' sources), flows and omissions of pairs of label sources: what
    ``cxreval agree`` runs on the files it reads (:func:`cxreval.jobs.compare_sources_files`; ``res.save(folder)`` writes every file the command writes but ``run.json``).

    Parameters
    ----------
    labels : DataFrame, ReadResult or list of them
        Long label table(s) (``study_id, [patient_id,] finding, source, state``); several are concatenated
        (:func:`cxreval.results.as_table`), as ``cxreval agree -l A -l B`` reads them.
    pairs, findings, finding_sets, weights, not_mentioned, both_uncertain
        As :func:`~cxreval.agreement.compute_agreement`; ``findings``, ``not_mentioned`` and ``studies`` apply
        to the flows too, ``findings`` to the prevalence.
    studies : {'same', 'each', 'common'}, default='common'
        As :func:`~cxreval.agreement.compute_agreement`, or ``'common'`` (the comparison design of ``cxreval
        classify``/``rank``): per finding, only the studies that every source of the pairs labelling that
        finding labels (a state present) are kept, for the agreement, the flows *and* the prevalence.
    finding_map : VocabularyMapping, str, path or None
        A finding map (a built-in name such as ``'nih_to_google'``, a YAML file or a map:
        :func:`cxreval.finding_maps.read_finding_map`) applied to the labels first
        (:func:`cxreval.finding_maps.map_label_table`); saved as ``finding_map.csv``.
    flow_pairs : pairs, optional
        The pairs whose flows and omissions are computed, on the same labels and design (default: ``pairs``);
        the agreement and prevalence stay those of ``pairs``.
    title : str, default='Agreement between label sources'
        The heading of ``summary.md``.

    Returns
    -------
    res : SourceComparisonResult

    Raises
    ------
    SchemaError, InvalidParameterError
        As :func:`~cxreval.agreement.compute_agreement`; an unknown finding map (named).
    """
    table = prepare_labels(as_table(labels, name="labels", func="compare_sources"))
    check_choice(studies, ("same", "each", "common"), name="studies", func="compare_sources")
    pair_list = parse_pairs(pairs)
    flow_list = None if flow_pairs is None else parse_pairs(flow_pairs, name="flow_pairs")
    fmap = None
    if finding_map is not None:
        from ..finding_maps import map_label_table, read_finding_map

        fmap = read_finding_map(finding_map)
        table = map_label_table(table, fmap)
    if studies == "common":
        table = common_study_labels(table, sorted({s for p in pair_list for s in p}))
        studies = "each"
    agr = compute_agreement(
        table,
        pair_list,
        findings=findings,
        finding_sets=finding_sets,
        weights=weights,
        not_mentioned=not_mentioned,
        studies=studies,
        both_uncertain=both_uncertain,
    )
    wanted = {s for p in pair_list for s in p}  # compute_agreement checked that each is in the table
    sources = [s for s in pd.unique(table[SOURCE].astype(str)) if s in wanted]
    prev = compute_prevalence(table, sources=sources, findings=findings)
    flows = compute_flows(
        table,
        pair_list if flow_list is None else flow_list,
        findings=findings,
        not_mentioned=not_mentioned,
        studies=studies,
    )
    return SourceComparisonResult(agr, prev, flows, flows.omissions(), finding_map=fmap, title=title)


def common_study_labels(labels: pd.DataFrame, sources: Sequence[str]) -> pd.DataFrame:
    """The rows of ``sources`` on, per finding, the studies that every one of ``sources`` labelling the finding
    labels (a state present); other sources' rows are dropped.

    Raises
    ------
    SchemaError
        A finding labelled by two or more of ``sources`` on no common study (named).
    """
    sub = labels[labels[SOURCE].astype(str).isin(list(sources))]
    has = sub[sub["state"].notna()]
    per_f = has.groupby("finding", sort=False)[SOURCE].nunique()
    n = has.groupby(["finding", "study_id"], sort=False)[SOURCE].nunique()
    need = per_f.reindex(n.index.get_level_values("finding")).to_numpy()
    keep = n[n.to_numpy() == need].index
    for f, k in per_f.items():
        if k > 1 and f not in set(keep.get_level_values("finding")):
            raise SchemaError(
                f"studies='common': no study is labelled by every source "
                f"labelling finding {f!r}; choose studies='each'."
            )
    idx = pd.MultiIndex.from_frame(sub[["finding", "study_id"]])
    return sub[idx.isin(keep)].reset_index(drop=True)
