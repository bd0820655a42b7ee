"""Label-table level agreement: align two sources, one row per finding, macro and micro averages."""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from types import MappingProxyType
from typing import Any, ClassVar, NamedTuple, TypeAlias, Union

import numpy as np
import pandas as pd

from .._typing import FindingsLike, Studies
from .._validation import check_choice
from ..exceptions import InvalidParameterError, SchemaError, UndefinedMetricWarning
from ..io import markdown_table
from ..labels import validate_label_table
from ..labels._findings import expand_findings
from ..results import TableResult, readonly
from ..schema import FINDING, MACRO, MICRO, SOURCE, STATE, STUDY_ID
from ..schema._result_columns import AGREEMENT_COLUMNS
from ..schema._states import LabelPolicy, resolve_not_mentioned
from ._grids import SourceGrids
from ._scores import (
    BOTH_UNCERTAIN_RULES,
    SCORE_NAMES,
    WEIGHTS,
    scores_from_confusion,
)

__all__ = [
    "PairConfusion",
    "PairedStates",
    "PairCoverage",
    "AgreementTableResult",
    "parse_pairs",
    "pair_states",
    "paired_states",
    "compute_agreement",
    "prepare_labels",
]


class PairConfusion(NamedTuple):
    """What :meth:`PairedStates.confusion` returns: per-finding 3x3 confusion matrices ``(n_findings, 3, 3)`` and
    the pairs dropped per finding for a missing label and for a not-mentioned one."""

    confusion: np.ndarray
    missing: np.ndarray
    not_mentioned: np.ndarray


@dataclass(frozen=True)
class PairedStates:
    """Two sources' states on their common grid of studies x findings.

    Attributes
    ----------
    source_a, source_b : str
    studies : tuple of str
    findings : tuple of str
    states_a, states_b : ndarray of shape (n_studies, n_findings)
        Float codes ``-1, 0, 1, 2`` (NaN = no label), read-only.
    n_only_a, n_only_b : int
        Studies labelled by only one of the sources (dropped with ``studies='each'``).
    findings_only_a, findings_only_b : tuple of str
        Findings labelled by only one source (not compared when ``findings`` is not given).
    """

    source_a: str
    source_b: str
    studies: tuple[str, ...]
    findings: tuple[str, ...]
    states_a: np.ndarray
    states_b: np.ndarray
    n_only_a: int = 0
    n_only_b: int = 0
    findings_only_a: tuple[str, ...] = ()
    findings_only_b: tuple[str, ...] = ()

    @property
    def pair(self) -> str:
        return f"{self.source_a}:{self.source_b}"

    def confusion(self, *, not_mentioned: str | LabelPolicy = "negative") -> PairConfusion:
        """Per-finding 3x3 confusion matrices ``(n_findings, 3, 3)``, missing and not-mentioned drops."""
        func = "PairedStates.confusion"
        not_mentioned = LabelPolicy.of(not_mentioned=not_mentioned, func=func).not_mentioned
        a, b = self.states_a, self.states_b
        missing = np.isnan(a) | np.isnan(b)
        a, nm_a = resolve_not_mentioned(a, not_mentioned=not_mentioned, func=func)
        b, nm_b = resolve_not_mentioned(b, not_mentioned=not_mentioned, func=func)
        nm = ~missing & (nm_a | nm_b)
        if not_mentioned == "negative":
            keep, n_nm = ~missing, np.zeros(a.shape[1], dtype=np.int64)
        else:
            keep, n_nm = ~missing & ~nm, nm.sum(axis=0)
        f = np.broadcast_to(np.arange(a.shape[1]), a.shape)
        idx = (
            f * 9 + np.nan_to_num(a, nan=0).astype(np.int64) * 3 + np.nan_to_num(b, nan=0).astype(np.int64)
        )[keep]
        c = np.bincount(idx, minlength=9 * a.shape[1]).reshape(a.shape[1], 3, 3)
        return PairConfusion(c, missing.sum(axis=0), n_nm)

    def to_dict(self) -> dict[str, object]:
        return {
            "source_a": self.source_a,
            "source_b": self.source_b,
            "n_studies": len(self.studies),
            "findings": list(self.findings),
            "n_only_a": self.n_only_a,
            "n_only_b": self.n_only_b,
            "findings_only_a": list(self.findings_only_a),
            "findings_only_b": list(self.findings_only_b),
        }


SourcePairs: TypeAlias = Union[str, Sequence[Union[str, Sequence[str]]]]
"""Pairs of label sources: ``"A:B,C:D"``, ``["A:B", ("C", "D")]``, or one pair ``("A", "B")``."""


def parse_pairs(pairs: SourcePairs, *, name: str = "pairs") -> list[tuple[str, str]]:
    """``"A:B,C:D"``, ``["A:B", ("C", "D")]`` -> ``[("A", "B"), ("C", "D")]`` (``name``: the parameter the
    errors name).

    Raises
    ------
    InvalidParameterError
        A pair that is not ``A:B`` with two non-empty, different names; a pair listed twice.
    """
    items: list[object]
    if isinstance(pairs, str):
        items = [p for p in pairs.split(",") if p.strip()]
    elif (
        isinstance(pairs, Sequence)
        and len(pairs) == 2
        and all(isinstance(p, str) and ":" not in p for p in pairs)
    ):
        items = [tuple(pairs)]
    else:
        items = list(pairs)
    out = []
    for p in items:
        if isinstance(p, str):
            parts = [x.strip() for x in p.split(":")]
        elif isinstance(p, (tuple, list)):
            parts = [str(x).strip() for x in p]
        else:
            parts = []
        if len(parts) != 2 or not all(parts) or parts[0] == parts[1]:
            raise InvalidParameterError(
                f"Each pair must name two different sources as 'A:B' (or a tuple (A, B)). Got {p!r} instead."
            )
        if (parts[0], parts[1]) in out:
            raise InvalidParameterError(
                f"The {name!r} parameter of parse_pairs lists {parts[0]}:{parts[1]} twice; "
                f"give each pair once."
            )
        out.append((parts[0], parts[1]))
    if not out:
        raise InvalidParameterError("The 'pairs' parameter must name at least one pair 'A:B'. Got none.")
    return out


def prepare_labels(labels: pd.DataFrame) -> pd.DataFrame:
    if (
        isinstance(labels, pd.DataFrame)
        and str(labels.get(STATE, pd.Series(dtype=object)).dtype) == "Int8"
        and {STUDY_ID, FINDING, SOURCE} <= set(labels.columns)
    ):
        dup = labels.duplicated([STUDY_ID, FINDING, SOURCE])
        if not dup.any():
            return labels
    return validate_label_table(labels, require_patient=False)


def pair_states(
    labels: pd.DataFrame,
    source_a: str,
    source_b: str,
    *,
    findings: FindingsLike = None,
    studies: Studies = "common",
) -> PairedStates:
    """Align two sources of a long label table on common studies and findings.

    Parameters
    ----------
    labels : DataFrame
        Long label table (``study_id, finding, source, state``; see :mod:`cxreval.labels`).
    source_a, source_b : str
    findings : sequence of str, or a vocabulary name, optional
        Findings to compare (each must be labelled by both sources). Default: those both sources label.
    studies : {'common', 'same', 'each'}, default='common'
        ``'common'``: per finding, only the studies both sources label (a state present;
        :func:`~cxreval.agreement.common_study_labels`); ``'same'``: the two sources must label the same
        studies, otherwise :class:`SchemaError`; ``'each'``: compare on the common studies, counting the others
        in ``n_only_a/b``.

    Raises
    ------
    SchemaError
        An absent source, a requested finding a source does not label, different study sets with
        ``studies='same'``, or no common study.
    """
    check_choice(studies, ("same", "each", "common"), name="studies", func="pair_states")
    labels, design = common_design(prepare_labels(labels), [(source_a, source_b)], studies)
    return paired_states(labels, source_a, source_b, findings=expand_findings(findings), studies=design)


def common_design(
    labels: pd.DataFrame, pairs: Sequence[tuple[str, str]], studies: Studies
) -> tuple[pd.DataFrame, Studies]:
    """The labels and the pair design of ``studies``: with ``'common'``, the rows of the pairs' sources on the
    studies every one of them labelling a finding labels, compared as ``'each'``; otherwise as they are."""
    sources = sorted({s for p in pairs for s in p})
    if studies != "common" or not set(sources) <= set(labels[SOURCE].astype(str).unique()):
        return labels, "each" if studies == "common" else studies  # paired_states names an absent source
    from ._compare import common_study_labels  # _compare builds on this module

    return common_study_labels(labels, sources), "each"


def paired_states(
    labels: pd.DataFrame | SourceGrids, a: str, b: str, *, findings: list[str] | None, studies: Studies
) -> PairedStates:
    """:func:`pair_states` on labels already prepared (:func:`prepare_labels`) or on their :class:`SourceGrids`
    (built once, reused across pairs), with ``findings`` already expanded (:func:`~cxreval.labels.expand_findings`)."""
    grids = labels if isinstance(labels, SourceGrids) else SourceGrids(labels)
    for s in (a, b):
        if s not in grids.present:
            raise SchemaError(
                f"The pair '{a}:{b}' names source {s!r}, which is not in the label table; sources "
                f"present: {sorted(map(str, grids.present))}."
            )
    sa, fa_idx, ga = grids.get(a)
    sb, fb_idx, gb = grids.get(b)
    fa, fb = [str(f) for f in fa_idx], [str(f) for f in fb_idx]
    if findings is None:
        use = [f for f in fa if f in set(fb)]
        if not use:
            raise SchemaError(
                f"Sources {a!r} and {b!r} label no finding in common ({a!r}: {fa}; {b!r}: {fb})."
            )
    else:
        for s, fs in ((a, fa), (b, fb)):
            absent = [f for f in findings if f not in set(fs)]
            if absent:
                raise SchemaError(
                    f"Source {s!r} has no labels for finding(s) {absent} (pair '{a}:{b}'); it labels {fs}."
                )
        use = list(findings)
    in_b = sa.isin(sb)
    common = sa[in_b]
    only_a = len(sa) - len(common)
    only_b = len(sb) - len(common)
    if studies == "same" and (only_a or only_b):
        ex_a = [str(x) for x in sa[~in_b][:3]]
        ex_b = [str(x) for x in sb[~sb.isin(sa)][:3]]
        raise SchemaError(
            f"Sources {a!r} and {b!r} label different studies: {only_a} only in {a!r} (e.g. {ex_a}), "
            f"{only_b} only in {b!r} (e.g. {ex_b}); {len(common)} in common. Pass "
            f"studies='each' to compare on the common studies."
        )
    if len(common) == 0:
        raise SchemaError(f"Sources {a!r} and {b!r} have no study in common.")
    rows_a = np.flatnonzero(in_b)
    rows_b = sb.get_indexer(common)
    grid_a = readonly(ga[np.ix_(rows_a, fa_idx.get_indexer(use))])
    grid_b = readonly(gb[np.ix_(rows_b, fb_idx.get_indexer(use))])
    return PairedStates(
        a,
        b,
        tuple(map(str, common)),
        tuple(use),
        grid_a,
        grid_b,
        only_a,
        only_b,
        tuple(f for f in fa if f not in set(fb)),
        tuple(f for f in fb if f not in set(fa)),
    )


@dataclass(frozen=True)
class PairCoverage:
    """What one pair of sources compared, and what it left out.

    Attributes
    ----------
    source_a, source_b : str
    n_studies : int
        Studies both sources label (the ones compared).
    findings : tuple of str
        Findings compared.
    n_only_a, n_only_b : int
        Studies labelled by only one source (not compared; only with ``studies='each'``).
    findings_only_a, findings_only_b : tuple of str
        Findings labelled by only one source (not compared).
    n_missing : dict {finding: int}
        Pairs dropped because a label was missing.
    n_not_mentioned_excluded : dict {finding: int}
        Pairs dropped as not mentioned (``not_mentioned='exclude'``).
    """

    source_a: str
    source_b: str
    n_studies: int
    findings: tuple[str, ...]
    n_only_a: int
    n_only_b: int
    findings_only_a: tuple[str, ...]
    findings_only_b: tuple[str, ...]
    n_missing: dict[str, int]
    n_not_mentioned_excluded: dict[str, int]

    @property
    def pair(self) -> str:
        return f"{self.source_a}:{self.source_b}"

    def summary_line(self) -> str:
        """One Markdown list item: studies compared and everything dropped."""
        miss = {k: v for k, v in self.n_missing.items() if v}
        nm = {k: v for k, v in self.n_not_mentioned_excluded.items() if v}
        return (
            f"- {self.pair}: {self.n_studies} common studies; only in A: {self.n_only_a}, only in B: "
            f"{self.n_only_b}; findings only in A: {list(self.findings_only_a) or 'none'}, only in B: "
            f"{list(self.findings_only_b) or 'none'}; missing pairs: {miss or 'none'}; not-mentioned "
            f"excluded: {nm or 'none'}"
        )

    def to_dict(self) -> dict[str, object]:
        return {k: list(v) if isinstance(v, tuple) else v for k, v in asdict(self).items()}


@dataclass(frozen=True)
class AgreementTableResult(TableResult):
    """Agreement of pairs of label sources per finding, with macro and micro averages (``agreement.csv``).

    Attributes
    ----------
    table : DataFrame
        Columns :data:`COLUMNS` (see :func:`compute_agreement`).
    pairs : tuple of PairCoverage
        Per pair, in order: the studies compared and every drop.
    weights : {None, 'linear', 'quadratic'}
    not_mentioned : {'negative', 'exclude'}
    studies : {'same', 'each'}
    both_uncertain : {'agree', 'disagree'}
    """

    FILES: ClassVar[Mapping[str, str]] = MappingProxyType({"agreement": "agreement.csv"})
    COLUMNS: ClassVar[tuple[str, ...]] = AGREEMENT_COLUMNS

    table: pd.DataFrame
    pairs: tuple[PairCoverage, ...]
    weights: str | None
    not_mentioned: str
    studies: Studies
    both_uncertain: str

    def summary(self) -> str:
        """The choices, one line per pair (what was compared and dropped) and the table, as Markdown."""
        lines = [
            f"- pairs: {', '.join(p.pair for p in self.pairs)} (first source = F1 reference)",
            f"- kappa_w weighting: {self.weights or 'none'}; Low/High kappa: unweighted kappa under the "
            "pessimistic/optimistic uncertainty mappings (see cxreval.agreement); both-uncertain pairs: "
            f"{self.both_uncertain}",
            f"- not_mentioned: {self.not_mentioned}; studies: {self.studies}",
            "",
        ]
        lines += [p.summary_line() for p in self.pairs]
        lines += ["", "## Agreement", "", markdown_table(self.table)]
        return "\n".join(lines)

    def to_dict(self) -> dict[str, object]:
        return {
            "pairs": [p.to_dict() for p in self.pairs],
            "weights": self.weights,
            "not_mentioned": self.not_mentioned,
            "studies": self.studies,
            "both_uncertain": self.both_uncertain,
            "table": self.table.to_dict(orient="records"),
        }

    @classmethod
    def figure(cls, table: pd.DataFrame) -> Any:
        """Weighted κ (and weighted F1, by a menu) per finding and pair, with the Low-High interval over the
        uncertain labels (the report's figure of ``agreement.csv``)."""
        from .._plots.analyses import KAPPA_METRICS, interval_plot

        return interval_plot(
            table, series="pair", metrics=KAPPA_METRICS, title="Agreement per finding and pair"
        )


def _rows_for_pair(
    ps: PairedStates,
    *,
    finding_sets: Mapping[str, Sequence[str]] | None,
    weights: str | None,
    not_mentioned: str,
    both_uncertain: str,
) -> tuple[list[dict[str, object]], PairCoverage]:
    c, n_missing, n_nm = ps.confusion(not_mentioned=not_mentioned)
    per = scores_from_confusion(c, weights=weights, both_uncertain=both_uncertain)
    rows: list[dict[str, object]] = []
    for j, f in enumerate(ps.findings):
        rows.append(
            {
                "pair": ps.pair,
                FINDING: f,
                **{k: float(per[k][j]) for k in SCORE_NAMES},
                "n": int(per["n"][j]),
                "finding_set": None,
            }
        )
    sets = finding_sets if finding_sets is not None else {"all": ps.findings}
    for name, fs in sets.items():
        idx = [ps.findings.index(f) for f in fs if f in ps.findings]
        missing = [f for f in fs if f not in ps.findings]
        if missing:
            raise SchemaError(
                f"Finding set {name!r} names finding(s) {missing} not compared for pair '{ps.pair}' "
                f"(compared: {list(ps.findings)})."
            )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            macro = {
                k: float(np.nanmean(per[k][idx])) if np.isfinite(per[k][idx]).any() else np.nan
                for k in SCORE_NAMES
            }
        undefined = {k: int(np.isnan(per[k][idx]).sum()) for k in SCORE_NAMES if np.isnan(per[k][idx]).any()}
        if undefined:
            warnings.warn(
                f"Pair '{ps.pair}', finding set {name!r}: undefined per-finding values {undefined} are "
                "left out of the macro average.",
                UndefinedMetricWarning,
                stacklevel=3,
            )
        rows.append(
            {"pair": ps.pair, FINDING: MACRO, **macro, "n": int(per["n"][idx].sum()), "finding_set": name}
        )
        pooled = scores_from_confusion(c[idx].sum(axis=0), weights=weights, both_uncertain=both_uncertain)
        rows.append(
            {
                "pair": ps.pair,
                FINDING: MICRO,
                **{k: float(pooled[k]) for k in SCORE_NAMES},
                "n": int(pooled["n"]),
                "finding_set": name,
            }
        )
    info = PairCoverage(
        ps.source_a,
        ps.source_b,
        len(ps.studies),
        ps.findings,
        ps.n_only_a,
        ps.n_only_b,
        ps.findings_only_a,
        ps.findings_only_b,
        {f: int(m) for f, m in zip(ps.findings, n_missing)},
        {f: int(m) for f, m in zip(ps.findings, n_nm)},
    )
    return rows, info


def compute_agreement(
    labels: pd.DataFrame,
    pairs: SourcePairs,
    *,
    findings: FindingsLike = None,
    finding_sets: Mapping[str, Sequence[str]] | None = None,
    weights: str | None = "quadratic",
    not_mentioned: str | LabelPolicy = "negative",
    studies: Studies = "common",
    both_uncertain: str = "agree",
) -> AgreementTableResult:
    """Agreement of each pair of sources per finding, with macro and micro averages (Tables 9-15).

    Parameters
    ----------
    labels : DataFrame
        Long label table (``study_id, finding, source, state``).
    pairs : str or sequence
        ``"A:B,C:D"`` or ``[("A", "B"), "C:D"]``; A is the F1 reference.
    findings : sequence of str or vocabulary name (e.g. ``'xqa'``), optional
        Findings to compare; default those both sources of a pair label.
    finding_sets : mapping {name: findings}, optional
        Sets to macro/micro-average over, e.g. ``{"selected": XQA_SELECTED, "all": XQA}``; default one
        set ``'all'`` = every compared finding.
    weights : {None, 'linear', 'quadratic'}, default='quadratic'
    not_mentioned : {'negative', 'exclude'} or LabelPolicy, default='negative'
        ``NOT_MENTIONED`` as negative, or the pair dropped (a :class:`~cxreval.schema.LabelPolicy` gives its
        ``not_mentioned``).
    studies : {'common', 'same', 'each'}, default='common'
        See :func:`pair_states`; ``'common'``: per finding, only the studies every source of the pairs labelling
        it labels.
    both_uncertain : {'agree', 'disagree'}, default='agree'
        A (UNC, UNC) pair under the pessimistic mapping: agreement (identical labels always agree, the XQA-Chest
        paper's Table 30) or half in each disagreeing cell (a disagreement); see :mod:`cxreval.agreement`.

    Returns
    -------
    res : AgreementTableResult
        ``res.table`` has the columns :data:`AGREEMENT_COLUMNS`: ``pair`` (``"A:B"``), ``finding`` (a finding
        name, ``'macro'`` or ``'micro'``), the six scores, ``n`` (pairs used; for ``macro``/``micro`` the
        pooled count) and ``finding_set`` (the set a ``macro``/``micro`` row averages over; empty otherwise).
        ``res.pairs`` records, per pair, the studies/findings dropped and the per-finding missing and
        not-mentioned exclusions (:class:`PairCoverage`); ``res.weights``, ``res.not_mentioned``,
        ``res.studies`` and ``res.both_uncertain`` the choices. ``res.save(folder)`` writes ``agreement.csv``.

    Raises
    ------
    SchemaError
        A pair naming an absent source; sources labelling different studies (with ``studies='same'``);
        an unknown state or finding.

    Examples
    --------
    >>> t = pd.DataFrame({"study_id": ["s1", "s2", "s3", "s1", "s2", "s3"], "finding": "Edema",
    ...                   "source": ["A"] * 3 + ["B"] * 3,
    ...                   "state": ["positive", "negative", "uncertain", "positive", "negative", "negative"]})
    >>> compute_agreement(t, "A:B").table[["finding", "kappa_w", "kappa_low", "kappa_high", "n"]].round(3)
      finding  kappa_w  kappa_low  kappa_high  n
    0   Edema      0.8        0.4         1.0  3
    1   macro      0.8        0.4         1.0  3
    2   micro      0.8        0.4         1.0  3
    """
    check_choice(weights, WEIGHTS, name="weights", func="compute_agreement")
    not_mentioned = LabelPolicy.of(not_mentioned=not_mentioned, func="compute_agreement").not_mentioned
    check_choice(studies, ("same", "each", "common"), name="studies", func="compute_agreement")
    check_choice(both_uncertain, BOTH_UNCERTAIN_RULES, name="both_uncertain", func="compute_agreement")
    pair_list = parse_pairs(pairs)
    labels, design = common_design(prepare_labels(labels), pair_list, studies)
    fs = expand_findings(findings)
    sets = None
    if finding_sets is not None:
        sets = {str(k): expand_findings(v) or [] for k, v in finding_sets.items()}
    rows: list[dict[str, object]] = []
    infos: list[PairCoverage] = []
    grids = SourceGrids(labels)
    for a, b in pair_list:
        ps = paired_states(grids, a, b, findings=fs, studies=design)
        r, info = _rows_for_pair(
            ps, finding_sets=sets, weights=weights, not_mentioned=not_mentioned, both_uncertain=both_uncertain
        )
        rows.extend(r)
        infos.append(info)
    table = pd.DataFrame(rows, columns=list(AGREEMENT_COLUMNS))
    table["n"] = table["n"].astype(np.int64)
    return AgreementTableResult(table, tuple(infos), weights, not_mentioned, studies, both_uncertain)
