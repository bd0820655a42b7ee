"""Everything ``cxreval agree`` computes on a label table, as one result that owns its four files.

:func:`compare_sources` runs :func:`~cxreval.agreement.compute_agreement`,
:func:`~cxreval.agreement.compute_prevalence` (on the sources of the pairs, in their order in the label
table),
:func:`~cxreval.agreement.compute_flows` and :func:`~cxreval.agreement.compute_omissions` with the same
choices; :meth:`SourceComparisonResult.save` writes ``agreement``, ``prevalence``, ``flows`` and
``omissions`` (CSV + Parquet) and :meth:`SourceComparisonResult.summary` the Markdown of ``summary.md``.

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
from types import MappingProxyType
from typing import Any, ClassVar

import pandas as pd

from .._typing import FindingsLike
from ..exceptions import SchemaError
from ..results import TableResult
from ..schema import SOURCE
from .omissions import FlowsResult, OmissionsResult, compute_flows
from .pairs import AgreementTableResult, SourcePairs, compute_agreement, parse_pairs
from .prevalence import PrevalenceResult, compute_prevalence

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
    omissions : OmissionsResult
    """

    PARTS: ClassVar[tuple[type[TableResult], ...]] = _PARTS
    FILES: ClassVar[Mapping[str, str]] = MappingProxyType({k: v for p in _PARTS for k, v in p.FILES.items()})
    COLUMNS: ClassVar[tuple[str, ...]] = AgreementTableResult.COLUMNS  # of ``table``; each part has its own

    agreement: AgreementTableResult
    prevalence: PrevalenceResult
    flows: FlowsResult
    omissions: OmissionsResult

    @property
    def table(self) -> pd.DataFrame:
        """The agreement table (the other tables are on their parts)."""
        return self.agreement.table

    def tables(self) -> dict[str, pd.DataFrame]:
        return {name: df for part in (self.agreement, self.prevalence, self.flows, self.omissions)
                for name, df in part.tables().items()}

    def summary(self, title: str = "Agreement between label sources") -> str:
        """``# title``, the agreement choices and per-pair drops, then the agreement, omission and positive
        prevalence tables, as Markdown (``summary.md`` of ``cxreval agree``)."""
        return "\n".join([f"# {title}", "", self.agreement.summary(), "", self.omissions.summary(), "",
                          self.prevalence.summary(), ""])

    def to_dict(self) -> dict[str, object]:
        return {"agreement": self.agreement.to_dict(), "prevalence": self.prevalence.to_dict(),
                "flows": self.flows.to_dict(), "omissions": self.omissions.to_dict()}

    def _figure(self) -> Any:
        """The agreement figure (:meth:`AgreementTableResult.plot`)."""
        return self.agreement.plot()


def compare_sources(labels: pd.DataFrame, pairs: SourcePairs, *, findings: FindingsLike = None,
                    finding_sets: Mapping[str, Sequence[str]] | None = None, weights: str | None = "quadratic",
                    not_mentioned: str = "negative", studies: str = "same", both_uncertain: str = "agree"
                    ) -> SourceComparisonResult:
    """Agreement, prevalence (of the pairs' sources), flows and omissions of pairs of label sources.

    Parameters are those of :func:`~cxreval.agreement.compute_agreement`; ``findings``, ``not_mentioned`` and
    ``studies`` apply to the flows too, ``findings`` to the prevalence. ``studies='common'`` (the comparison
    design of ``cxreval classify``/``rank``): per finding, only the studies that every source of the pairs
    labelling that finding labels (a state present) are kept, for the agreement, the flows *and* the prevalence.

    Returns
    -------
    res : SourceComparisonResult

    Raises
    ------
    SchemaError, InvalidParameterError
        As :func:`~cxreval.agreement.compute_agreement`.
    """
    pair_list = parse_pairs(pairs)
    if studies == "common":
        labels = common_study_labels(labels, sorted({s for p in pair_list for s in p}))
        studies = "intersection"
    agr = compute_agreement(labels, pair_list, findings=findings, finding_sets=finding_sets, weights=weights,
                            not_mentioned=not_mentioned, studies=studies, both_uncertain=both_uncertain)
    wanted = {s for p in pair_list for s in p}  # compute_agreement checked that each is in the table
    sources = [s for s in pd.unique(labels[SOURCE].astype(str)) if s in wanted]
    prev = compute_prevalence(labels, sources=sources, findings=findings)
    flows = compute_flows(labels, pair_list, findings=findings, not_mentioned=not_mentioned, studies=studies)
    return SourceComparisonResult(agr, prev, flows, flows.omissions())


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
            raise SchemaError(f"studies='common': no study is labelled by every source "
                              f"labelling finding {f!r}; choose studies='each'.")
    idx = pd.MultiIndex.from_frame(sub[["finding", "study_id"]])
    return sub[idx.isin(keep)].reset_index(drop=True)
