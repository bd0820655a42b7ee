"""Omission analysis: 3x3 state transitions between two sources and the two omission rates (XQA-Chest paper, Fig. 4).

For a pair of sources A, B and a finding, the *flows* are the counts of studies going from each state
in A (``negative``, ``uncertain``, ``positive``) to each state in B -- the data of the XQA-Chest paper's Sankey
diagrams. From them:

- ``pos_a_neg_b``: positive in A, negative in B; ``rate_a_not_b = pos_a_neg_b / pos_a`` (a positive of
  A omitted by B). The paper's overall CR vs Rep1 figure, "469 of 794 positive CR image-derived labels
  (59%) were labeled negative in the reports", is this rate.
- ``pos_b_neg_a`` and ``rate_b_not_a = pos_b_neg_a / pos_b``, the reverse.
- ``pos_a_unc_b`` / ``pos_b_unc_a`` are given too: the paper's per-finding figures ("123/165 = 75% of
  positive CR Atelectasis labels are not labeled as positive in the reports") count a positive that
  the other source calls *uncertain* as not positive, i.e. ``(pos_a_neg_b + pos_a_unc_b) / pos_a``.

A rate is NaN when its source has no positive label. ``NOT_MENTIONED`` is negative or excluded, as in
:mod:`cxreval.agreement`; the pooled ``finding='overall'`` rows sum every compared finding.

Examples
--------
>>> r = omission_rates(["positive", "positive", "negative", "uncertain"],
...                    ["negative", "positive", "positive", "positive"])
>>> r.pos_a_neg_b, r.rate_a_not_b, r.pos_b_neg_a, round(r.rate_b_not_a, 3)
(1, 0.5, 1, 0.333)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from types import MappingProxyType
from typing import Any, ClassVar

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from .._typing import FindingsLike, Studies
from .._validation import check_choice
from ..exceptions import SchemaError
from ..io import markdown_table
from ..labels._findings import expand_findings
from ..results import TableResult, readonly
from ..schema import FINDING
from ..schema._columns import check_columns
from ..schema._states import LabelPolicy
from ._grids import SourceGrids
from ._pairs import (
    SourcePairs,
    common_design,
    paired_states,
    parse_pairs,
    prepare_labels,
)
from ._scores import STATE_ORDER, confusion_counts

__all__ = [
    "FLOW_COLUMNS",
    "OMISSION_COLUMNS",
    "OmissionResult",
    "FlowsResult",
    "OmissionsResult",
    "omission_rates",
    "compute_flows",
    "compute_omissions",
]

FLOW_COLUMNS: tuple[str, ...] = ("source_a", "source_b", "finding", "state_a", "state_b", "count")
"""Columns of :func:`compute_flows` (``flows.csv``, :class:`FlowsResult`)."""

OMISSION_COLUMNS: tuple[str, ...] = (
    "source_a",
    "source_b",
    "finding",
    "n",
    "pos_a_neg_b",
    "rate_a_not_b",
    "pos_b_neg_a",
    "rate_b_not_a",
    "pos_a",
    "pos_b",
    "pos_a_unc_b",
    "pos_b_unc_a",
)
"""Columns of :func:`compute_omissions` (``omissions.csv``, :class:`OmissionsResult`)."""


@dataclass(frozen=True)
class OmissionResult:
    """Transitions between two sources and the two omission rates.

    Attributes
    ----------
    transitions : ndarray of shape (3, 3)
        Counts, rows = A's state, columns = B's state, order NEG, UNC, POS (read-only).
    n : int
        Studies compared.
    pos_a, pos_b : int
        Positive labels in A and in B.
    pos_a_neg_b, pos_b_neg_a : int
        Positive in one source and negative in the other.
    pos_a_unc_b, pos_b_unc_a : int
        Positive in one source and uncertain in the other.
    rate_a_not_b, rate_b_not_a : float
        ``pos_a_neg_b / pos_a`` and ``pos_b_neg_a / pos_b`` (NaN without positives).
    """

    transitions: np.ndarray
    n: int
    pos_a: int
    pos_b: int
    pos_a_neg_b: int
    pos_b_neg_a: int
    pos_a_unc_b: int
    pos_b_unc_a: int
    rate_a_not_b: float
    rate_b_not_a: float

    @classmethod
    def from_transitions(cls, c: np.ndarray) -> OmissionResult:
        c = np.asarray(c, dtype=np.int64)
        pos_a, pos_b = int(c[2].sum()), int(c[:, 2].sum())
        return cls(
            readonly(c.copy()),
            int(c.sum()),
            pos_a,
            pos_b,
            int(c[2, 0]),
            int(c[0, 2]),
            int(c[2, 1]),
            int(c[1, 2]),
            float(c[2, 0] / pos_a) if pos_a else float("nan"),
            float(c[0, 2] / pos_b) if pos_b else float("nan"),
        )

    def to_dict(self) -> dict[str, object]:
        return {
            **asdict(self),
            "transitions": self.transitions.tolist(),
            "rate_a_not_b": float(self.rate_a_not_b),
            "rate_b_not_a": float(self.rate_b_not_a),
        }


def omission_rates(
    states_a: ArrayLike, states_b: ArrayLike, *, not_mentioned: str | LabelPolicy = "negative"
) -> OmissionResult:
    """Transitions and omission rates of two aligned state arrays (see the module docstring).

    Parameters
    ----------
    states_a, states_b : array-like of shape (n,)
        States (names or codes; NaN = missing, which drops the pair).
    not_mentioned : {'negative', 'exclude'}, default='negative'

    Returns
    -------
    res : OmissionResult
    """
    return OmissionResult.from_transitions(confusion_counts(states_a, states_b, not_mentioned=not_mentioned))


@dataclass(frozen=True)
class OmissionsResult(TableResult):
    """Omission counts and rates per pair of sources and finding (``omissions.csv``).

    Attributes
    ----------
    table : DataFrame
        Columns :data:`COLUMNS` (see :func:`compute_omissions`).
    """

    FILES: ClassVar[Mapping[str, str]] = MappingProxyType({"omissions": "omissions.csv"})
    COLUMNS: ClassVar[tuple[str, ...]] = OMISSION_COLUMNS

    table: pd.DataFrame

    def summary(self) -> str:
        """The omission table as Markdown."""
        return "\n".join(["## Omissions", "", markdown_table(self.table)])

    def to_dict(self) -> dict[str, object]:
        return {"table": self.table.to_dict(orient="records")}

    def _figure(self) -> Any:
        """The rate at which source A's positives are negative in source B, per finding and pair."""
        from .._plots import bars

        t = self.table.assign(
            pair=self.table["source_a"].astype(str) + " not " + self.table["source_b"].astype(str)
        )
        return bars(
            t,
            x="finding",
            y="rate_a_not_b",
            color="pair",
            title="Positives of A that B calls negative",
            y_title="rate (A positive, B negative)",
        )


@dataclass(frozen=True)
class FlowsResult(TableResult):
    """3x3 state transitions per pair of sources and finding (``flows.csv``).

    Attributes
    ----------
    table : DataFrame
        Columns :data:`COLUMNS` (see :func:`compute_flows`).
    pairs : tuple of str
        The pairs ``"A:B"``, in order.
    not_mentioned : {'negative', 'exclude'}
    studies : {'same', 'each'}
    """

    FILES: ClassVar[Mapping[str, str]] = MappingProxyType({"flows": "flows.csv"})
    COLUMNS: ClassVar[tuple[str, ...]] = FLOW_COLUMNS

    table: pd.DataFrame
    pairs: tuple[str, ...]
    not_mentioned: str
    studies: Studies

    def omissions(self) -> OmissionsResult:
        """:func:`compute_omissions` of these flows."""
        return compute_omissions(self.table)

    def summary(self) -> str:
        """The pooled (``finding='overall'``) flows of each pair as Markdown."""
        overall = self.table[self.table["finding"] == "overall"]
        return "\n".join(
            [
                f"## Flows (not_mentioned: {self.not_mentioned}; studies: {self.studies})",
                "",
                markdown_table(overall),
            ]
        )

    def to_dict(self) -> dict[str, object]:
        return {
            "pairs": list(self.pairs),
            "not_mentioned": self.not_mentioned,
            "studies": self.studies,
            "table": self.table.to_dict(orient="records"),
        }

    @classmethod
    def figure(cls, table: pd.DataFrame) -> Any:
        """Sankey diagram of the label flows between two sources, a menu switching pair and finding (the report's
        figure of ``flows.csv``)."""
        from .._plots.analyses import sankey_flows

        return sankey_flows(table)


def compute_flows(
    labels: pd.DataFrame,
    pairs: SourcePairs,
    *,
    findings: FindingsLike = None,
    not_mentioned: str | LabelPolicy = "negative",
    studies: Studies = "common",
) -> FlowsResult:
    """3x3 state transitions per pair of sources and finding, plus ``finding='overall'`` pooled.

    Parameters
    ----------
    labels : DataFrame
        Long label table.
    pairs : str or sequence
        ``"A:B,C:D"`` or ``[("A", "B"), ...]``.
    findings : sequence of str or vocabulary name, optional
        Default: the findings both sources of a pair label.
    not_mentioned : {'negative', 'exclude'} or LabelPolicy, default='negative'
        ``NOT_MENTIONED`` as negative, or the pair dropped (a :class:`~cxreval.schema.LabelPolicy` gives its
        ``not_mentioned``).
    studies : {'common', 'same', 'each'}, default='common'
        As :func:`cxreval.agreement.compute_agreement`.

    Returns
    -------
    res : FlowsResult
        ``res.table`` has the columns :data:`FLOW_COLUMNS`; nine rows (every state pair, zeros included) per
        pair and finding.

    Raises
    ------
    SchemaError
        As :func:`cxreval.agreement.compute_agreement`.
    """
    not_mentioned = LabelPolicy.of(not_mentioned=not_mentioned, func="compute_flows").not_mentioned
    check_choice(studies, ("same", "each", "common"), name="studies", func="compute_flows")
    pair_list = parse_pairs(pairs)
    labels, design = common_design(prepare_labels(labels), pair_list, studies)
    fs = expand_findings(findings)
    rows = []
    sa = np.repeat(np.asarray(STATE_ORDER, dtype=object), 3)
    sb = np.tile(np.asarray(STATE_ORDER, dtype=object), 3)
    grids = SourceGrids(labels)
    for a, b in pair_list:
        ps = paired_states(grids, a, b, findings=fs, studies=design)
        c, _, _ = ps.confusion(not_mentioned=not_mentioned)
        for name, mat in [*zip(ps.findings, c), ("overall", c.sum(axis=0))]:
            rows.append(
                pd.DataFrame(
                    {
                        "source_a": a,
                        "source_b": b,
                        FINDING: name,
                        "state_a": sa,
                        "state_b": sb,
                        "count": mat.ravel().astype(np.int64),
                    }
                )
            )
    out = pd.concat(rows, ignore_index=True)[list(FLOW_COLUMNS)]
    return FlowsResult(out, tuple(f"{a}:{b}" for a, b in pair_list), not_mentioned, studies)


def compute_omissions(flows: pd.DataFrame | FlowsResult) -> OmissionsResult:
    """Omission counts and rates per pair and finding from :func:`compute_flows` output (or its table).

    Returns
    -------
    res : OmissionsResult
        ``res.table`` has the columns :data:`OMISSION_COLUMNS`, one row per (source_a, source_b, finding), in
        flow order.

    Raises
    ------
    SchemaError
        Missing flow columns, a state outside negative/uncertain/positive, or a (pair, finding) whose
        flows do not cover the nine state pairs exactly once.
    """
    if isinstance(flows, FlowsResult):
        flows = flows.table
    if not isinstance(flows, pd.DataFrame):
        raise SchemaError(
            f"The 'flows' parameter of compute_omissions must be a FlowsResult or a flows table (a "
            f"DataFrame with columns {list(FLOW_COLUMNS)}). Got {type(flows).__name__} instead."
        )
    check_columns(flows, FLOW_COLUMNS, where="flows table")
    idx = {s: i for i, s in enumerate(STATE_ORDER)}
    bad = ~flows["state_a"].isin(STATE_ORDER) | ~flows["state_b"].isin(STATE_ORDER)
    if bad.any():
        i = int(np.flatnonzero(bad.to_numpy())[0])
        raise SchemaError(
            f"Flows table row {i}: state ({flows['state_a'].iloc[i]!r}, {flows['state_b'].iloc[i]!r}) "
            f"outside {list(STATE_ORDER)}."
        )
    rows = []
    for key, g in flows.groupby(["source_a", "source_b", "finding"], sort=False):
        if len(g) != 9 or g[["state_a", "state_b"]].duplicated().any():
            raise SchemaError(f"Flows for {key} must list the 9 state pairs once each; got {len(g)} rows.")
        c = np.zeros((3, 3), dtype=np.int64)
        c[g["state_a"].map(idx).to_numpy(), g["state_b"].map(idx).to_numpy()] = g["count"].to_numpy(
            dtype=np.int64
        )
        r = OmissionResult.from_transitions(c)
        rows.append(
            {
                "source_a": key[0],
                "source_b": key[1],
                "finding": key[2],
                "n": r.n,
                "pos_a_neg_b": r.pos_a_neg_b,
                "rate_a_not_b": float(r.rate_a_not_b),
                "pos_b_neg_a": r.pos_b_neg_a,
                "rate_b_not_a": float(r.rate_b_not_a),
                "pos_a": r.pos_a,
                "pos_b": r.pos_b,
                "pos_a_unc_b": r.pos_a_unc_b,
                "pos_b_unc_a": r.pos_b_unc_a,
            }
        )
    return OmissionsResult(pd.DataFrame(rows, columns=list(OMISSION_COLUMNS)))
