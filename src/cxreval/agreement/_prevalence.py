"""Label prevalence per source: count and percentage of each state per finding (seed Tables 5-8).

:func:`compute_prevalence` gives the tidy table (``prevalence.csv``, :class:`PrevalenceResult`); :func:`positive_prevalence` lays the
positive counts out side by side, one column per source (Tables 5 and 6), and :func:`label_distribution`
one row per (finding, source) with a column per state (Tables 7 and 8).

Percentages are of the studies the source labels (any finding): a study the source labels but not for
this finding is counted as ``missing``, and a report source's ``not_mentioned`` labels are counted as
such, so the five states of a (source, finding) always add up to 100 %. The XQA-Chest paper's Table 7 shows only
the three ordinal states; its report columns therefore add up to less than 100 %.

Examples
--------
>>> import pandas as pd
>>> t = pd.DataFrame({"study_id": ["s1", "s2", "s3", "s4"], "finding": "Edema", "source": "CR",
...                   "state": ["positive", "negative", "negative", "uncertain"]})
>>> p = compute_prevalence(t).table
>>> p[["state", "count", "percent"]].head(3).to_string(index=False)
'    state  count  percent\\n negative      2     50.0\\nuncertain      1     25.0\\n positive      1     25.0'
>>> positive_prevalence(p).loc["Edema", "CR"]
'1 (25.0%)'
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from .._typing import FindingsLike
from ..exceptions import SchemaError
from ..io import markdown_table
from ..labels._findings import expand_findings
from ..results import TableResult
from ..schema import FINDING, SOURCE, STATE, STUDY_ID, LabelState
from ..schema._columns import check_columns
from ..schema._states import ORDINAL_STATES, STATE_NAMES
from ._pairs import prepare_labels

__all__ = [
    "PREVALENCE_COLUMNS",
    "PREVALENCE_STATES",
    "PrevalenceResult",
    "compute_prevalence",
    "positive_prevalence",
    "label_distribution",
]

PREVALENCE_COLUMNS: tuple[str, ...] = (SOURCE, FINDING, STATE, "count", "percent")
"""Columns of :func:`compute_prevalence`'s table (``prevalence.csv``)."""

PREVALENCE_STATES: tuple[str, ...] = (*STATE_NAMES, "missing")


@dataclass(frozen=True)
class PrevalenceResult(TableResult):
    """Count and percentage of each state per source and finding (``prevalence.csv``).

    Attributes
    ----------
    table : DataFrame
        Columns :data:`COLUMNS` (see :func:`compute_prevalence`).
    sources : tuple of str
        The sources tabulated, in order.
    findings : tuple of str or None
        The findings asked for (None: every finding a source labels).
    """

    FILES: ClassVar[Mapping[str, str]] = MappingProxyType({"prevalence": "prevalence.csv"})
    COLUMNS: ClassVar[tuple[str, ...]] = PREVALENCE_COLUMNS

    table: pd.DataFrame
    sources: tuple[str, ...]
    findings: tuple[str, ...] | None = None

    def positive(self, *, decimals: int = 1) -> pd.DataFrame:
        """:func:`positive_prevalence` of the table (Tables 5-6)."""
        return positive_prevalence(self.table, decimals=decimals)

    def distribution(self, *, decimals: int = 1) -> pd.DataFrame:
        """:func:`label_distribution` of the table (Tables 7-8)."""
        return label_distribution(self.table, decimals=decimals)

    def summary(self) -> str:
        """The positive labels per finding and source, as Markdown."""
        return "\n".join(["## Positive prevalence", "", markdown_table(self.positive().reset_index())])

    def to_dict(self) -> dict[str, object]:
        return {
            "sources": list(self.sources),
            "findings": None if self.findings is None else list(self.findings),
            "table": self.table.to_dict(orient="records"),
        }

    @classmethod
    def figure(cls, table: pd.DataFrame) -> Any:
        """Stacked bars of each source's label states per finding (the report's figure of ``prevalence.csv``)."""
        from .._plots.analyses import prevalence_bars

        return prevalence_bars(table)


def compute_prevalence(
    labels: pd.DataFrame, *, sources: Sequence[str] | None = None, findings: FindingsLike = None
) -> PrevalenceResult:
    """Count and percentage of each state per source and finding.

    Parameters
    ----------
    labels : DataFrame
        Long label table (``study_id, finding, source, state``).
    sources : sequence of str, optional
        Sources to tabulate, in this order; default every source, in order of appearance.
    findings : sequence of str or vocabulary name, optional
        Findings to tabulate; default every finding a source labels.

    Returns
    -------
    res : PrevalenceResult
        ``res.table`` has the columns :data:`PREVALENCE_COLUMNS`; one row per (source, finding, state) for the
        five states :data:`PREVALENCE_STATES`; ``percent`` is ``100 * count / n_studies(source)``.

    Raises
    ------
    SchemaError
        An absent source, or a requested finding that no row of a source carries.
    """
    labels = prepare_labels(labels)
    present = list(pd.unique(labels["source"]))
    srcs = present if sources is None else list(sources)
    for s in srcs:
        if s not in present:
            raise SchemaError(
                f"Source {s!r} is not in the label table; sources present: {sorted(map(str, present))}."
            )
    want = expand_findings(findings)
    rows = []
    for s in srcs:
        sub = labels[labels[SOURCE] == s]
        n_studies = sub[STUDY_ID].nunique()
        fs = list(pd.unique(sub[FINDING])) if want is None else want
        if want is not None:
            absent = [f for f in want if f not in set(sub[FINDING])]
            if absent:
                raise SchemaError(f"Source {s!r} has no labels for finding(s) {absent}.")
        codes = sub[STATE].to_numpy(dtype=float, na_value=np.nan)
        for f in fs:
            c = codes[(sub[FINDING] == f).to_numpy()]
            counts = {name: int((c == code).sum()) for name, code in STATE_NAMES.items()}
            counts["missing"] = n_studies - sum(counts.values())
            for state in PREVALENCE_STATES:
                rows.append(
                    {
                        SOURCE: s,
                        FINDING: f,
                        STATE: state,
                        "count": counts[state],
                        "percent": 100.0 * counts[state] / n_studies,
                    }
                )
    return PrevalenceResult(
        pd.DataFrame(rows, columns=list(PREVALENCE_COLUMNS)),
        tuple(map(str, srcs)),
        None if want is None else tuple(want),
    )


def _check_prev(prev: pd.DataFrame) -> None:
    check_columns(prev, PREVALENCE_COLUMNS, where="prevalence table")


def _fmt(count: int, percent: float, decimals: int) -> str:
    return f"{int(count)} ({percent:.{decimals}f}%)"


def positive_prevalence(prev: pd.DataFrame, *, decimals: int = 1) -> pd.DataFrame:
    """Positive labels per finding (rows) and source (columns) as ``"count (percent%)"`` (Tables 5-6).

    ``prev`` is the table of :func:`compute_prevalence`; the numbers stay available there.
    """
    _check_prev(prev)
    pos = prev[prev[STATE] == ORDINAL_STATES[LabelState.POS]]
    text = [_fmt(c, p, decimals) for c, p in zip(pos["count"], pos["percent"])]
    wide = pos.assign(text=text).pivot(index="finding", columns="source", values="text")
    wide = wide.reindex(index=list(pd.unique(pos["finding"])), columns=list(pd.unique(pos["source"])))
    wide.columns.name = None
    wide.index.name = "finding"
    return wide


def label_distribution(prev: pd.DataFrame, *, decimals: int = 1) -> pd.DataFrame:
    """One row per (finding, source), one ``"count (percent%)"`` column per state (Tables 7-8).

    Columns ``negative, uncertain, positive``, plus ``not_mentioned`` and ``missing`` when any source
    has such labels.
    """
    _check_prev(prev)
    states = [*ORDINAL_STATES] + [
        s for s in PREVALENCE_STATES[len(ORDINAL_STATES) :] if (prev.loc[prev[STATE] == s, "count"] > 0).any()
    ]
    sub = prev[prev["state"].isin(states)]
    text = [_fmt(c, p, decimals) for c, p in zip(sub["count"], sub["percent"])]
    wide = sub.assign(text=text).pivot(index=["finding", "source"], columns="state", values="text")
    order = pd.MultiIndex.from_tuples(
        list(
            dict.fromkeys(
                (f, s)
                for f in pd.unique(sub["finding"])
                for s in pd.unique(sub["source"])
                if ((sub["finding"] == f) & (sub["source"] == s)).any()
            )
        ),
        names=["finding", "source"],
    )
    wide = wide.reindex(index=order, columns=states)
    wide.columns.name = None
    return wide
