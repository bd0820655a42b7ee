"""Operating points of a score: a rule (a threshold, a fixed specificity or sensitivity, Youden's index) turned into
a threshold and its confusion counts, for the estimate and every bootstrap replicate at once.

What :mod:`cxreval.classification` (``classify --operating-point``) and :mod:`cxreval.subgroups` share. A study is
called positive where ``score >= threshold``. On labels ``y`` and scores ``s`` weighted by ``w`` (1 for the
estimate; a patient's bootstrap count in a replicate):

- ``threshold=T``: ``T``, held fixed;
- ``specificity=S``: the smallest threshold whose specificity is at least ``S``: just above (``numpy.nextafter``)
  the lowest negative score ``u`` with ``w(negatives <= u) >= S · w(negatives)``;
- ``sensitivity=S``: the largest threshold whose sensitivity is at least ``S``: the highest score ``u`` with
  ``w(positives >= u) >= S · w(positives)``;
- ``youden``: the score maximising ``sensitivity + specificity - 1`` (``tpr - fpr`` of
  ``sklearn.metrics.roc_curve``), the highest among ties; just above the highest score when no threshold beats
  calling every study negative.

The scores' distinct values are the levels: one sparse product of the patients' counts per level (positives and
negatives apart) with the patient counts gives every replicate's weight at every level, whose cumulative sums from
the highest level are the confusion counts at every threshold. A fixed threshold needs one product of each
patient's counts above it. :func:`confusion_counts_sets` does this for many sets sharing the patient counts at once
(the models, findings and references of one evaluation): their levels stacked into one sparse product and one
cumulative sum per chunk of replicates, every rule read from the same sums.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, cast

import numpy as np

from ..exceptions import InvalidParameterError

__all__ = [
    "KINDS",
    "OperatingPoint",
    "ConfusionCounts",
    "ScoredSet",
    "confusion_counts",
    "confusion_counts_sets",
    "operating_threshold",
    "parse_operating_point",
]

KINDS: dict[str, str] = {
    "threshold": "threshold",
    "specificity": "specificity",
    "spec": "specificity",
    "sensitivity": "sensitivity",
    "sens": "sensitivity",
    "youden": "youden",
}
"""The spellings of an operating-point rule and the rule each names."""

_FORMS = {
    "threshold": "'threshold=T'",
    "specificity": "'specificity=S'",
    "sensitivity": "'sensitivity=S'",
    "youden": "'youden'",
    "from": "'from=FILE'",
}
_TOL = 1e-9  # S · n is met by a count within rounding of it, relative to n (0.9 x 10 negatives reached by 9)


@dataclass(frozen=True)
class OperatingPoint:
    """``kind`` 'threshold' (predict positive where ``score >= value``), 'specificity' or 'sensitivity' (the
    threshold reaching at least ``value`` of it), 'youden' (``value`` NaN) or 'from' (thresholds read from the
    file ``source``; ``value`` NaN)."""

    kind: str
    value: float
    source: str = ""

    def label(self) -> str:
        if self.kind == "youden":
            return "youden"
        if self.kind == "from":
            return f"from={self.source}"
        return f"{self.kind}={self.value:g}"


def parse_operating_point(
    value: str | float, *, func: str, kinds: tuple[str, ...] = ("threshold", "specificity")
) -> OperatingPoint:
    """``0.5`` or ``"threshold=0.5"`` (a score threshold), ``"specificity=0.9"`` / ``"spec=0.9"``, and where
    ``kinds`` allows them ``"sensitivity=0.9"`` / ``"sens=0.9"``, ``"youden"`` and ``"from=FILE"``; a rate outside
    (0, 1), a threshold that is not finite or another form is an :class:`InvalidParameterError` naming ``value``."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        value = f"threshold={value}"
    text = str(value).strip()
    name, sep, arg = (part.strip() for part in text.partition("="))
    kind = "from" if name == "from" else KINDS.get(name.lower())
    forms = [_FORMS[k] for k in kinds]
    usage = ", ".join(forms[:-1]) + f" or {forms[-1]}" if len(forms) > 1 else forms[0]
    wrong = InvalidParameterError(
        f"The 'operating_point' parameter of {func} must be {usage} (e.g. 'specificity=0.9'). Got {value!r} instead."
    )
    if kind not in kinds:
        raise wrong
    if kind == "youden":
        if sep:
            raise wrong
        return OperatingPoint("youden", math.nan)
    if kind == "from":
        if not arg:
            raise wrong
        return OperatingPoint("from", math.nan, arg)
    try:
        number = float(arg) if sep else math.nan
    except ValueError:
        number = math.nan
    if not math.isfinite(number):
        raise wrong
    if kind != "threshold" and not 0.0 < number < 1.0:
        raise InvalidParameterError(
            f"The 'operating_point' parameter of {func} must be in (0, 1) for a {kind}. Got {value!r}."
        )
    return OperatingPoint(kind, number)


@dataclass(frozen=True)
class ConfusionCounts:
    """Per column of the counts (0: the estimate; then the replicates): the threshold and the weighted true/false
    positives and negatives at it (NaN where the rule is undefined: no positives or no negatives to choose on)."""

    threshold: np.ndarray
    tp: np.ndarray
    fp: np.ndarray
    tn: np.ndarray
    fn: np.ndarray


def confusion_counts(
    point: OperatingPoint,
    y: np.ndarray,
    s: np.ndarray,
    pat: np.ndarray | None = None,
    ct: np.ndarray | None = None,
) -> ConfusionCounts:
    """The threshold of ``point`` and the confusion counts at it, for every row of the patient counts ``ct``.

    Parameters
    ----------
    point : OperatingPoint
        A rule ('threshold', 'specificity', 'sensitivity', 'youden'); a fixed threshold for 'from'.
    y, s : ndarray of shape (n,)
        Labels (bool) and finite scores.
    pat : ndarray of int, shape (n,), optional
        Each study's patient (a column of ``ct``); default every study its own patient.
    ct : ndarray of int, shape (R, n_patients), optional
        Patient counts per row (e.g. ones, then the plan's replicates); default one row of ones.
    """
    return confusion_counts_sets([point], [ScoredSet(y, s, pat)], ct)[0][0]


@dataclass(frozen=True)
class ScoredSet:
    """Labels ``y`` (bool), finite scores ``s`` and each study's patient ``pat`` (a column of the patient counts;
    None: every study its own patient)."""

    y: np.ndarray
    s: np.ndarray
    pat: np.ndarray | None = None


def confusion_counts_sets(
    points: Sequence[OperatingPoint], sets: Sequence[ScoredSet], ct: np.ndarray | None = None
) -> list[list[ConfusionCounts]]:
    """:func:`confusion_counts` of every point on every set (``out[set][point]``), the sets sharing the patient
    counts ``ct`` (e.g. the models and findings under one reference).

    The rules' level counts of all the sets are stacked into one sparse product and one cumulative sum per chunk of
    replicates, and every rule reads the same cumulative sums: the same numbers as one call per set and point (the
    weights are whole counts, so the sums are exact).
    """
    sets = [
        ScoredSet(
            np.asarray(x.y, dtype=bool),
            np.asarray(x.s, dtype=np.float64),
            np.arange(np.size(x.y)) if x.pat is None else np.asarray(x.pat),
        )
        for x in sets
    ]
    if ct is None:
        ct = np.ones((1, max((x.y.size for x in sets), default=0)))
    ct = np.asarray(ct, dtype=np.float64)  # once: the products below are in float64
    out: list[list[ConfusionCounts | None]] = [[None] * len(points) for _ in sets]
    rules = [k for k, p in enumerate(points) if p.kind not in ("threshold", "from")]
    for k, p in enumerate(points):
        if k not in rules:
            for i, x in enumerate(sets):
                out[i][k] = _fixed_counts(p, x, ct)
    if rules:
        rule_points = [points[k] for k in rules]
        levels = [np.unique(x.s, return_inverse=True) for x in sets]
        for group in _groups([lev.size + 1 for lev, _ in levels], ct.shape[0]):
            stack = _Stack.of([sets[i] for i in group], [levels[i] for i in group], ct.shape[1])
            step = max(1, _CELLS // max(stack.n_rows, 1))
            chunks = [stack.at(rule_points, ct[i : i + step]) for i in range(0, ct.shape[0], step)]
            for g, i in enumerate(group):
                for j, k in enumerate(rules):
                    parts = [c[g][j] for c in chunks]
                    out[i][k] = ConfusionCounts(
                        *(np.concatenate([getattr(c, f) for c in parts]) for f in _FIELDS)
                    )
    return cast("list[list[ConfusionCounts]]", out)


def _groups(sizes: Sequence[int], n_rows: int) -> list[list[int]]:
    """Consecutive sets stacked together while their levels times the ``n_rows`` replicates fit one chunk; a set
    larger than that alone (its replicates then go in several chunks)."""
    fit = max(1, _CELLS // max(n_rows, 1))
    groups: list[list[int]] = []
    used = 0
    for i, size in enumerate(sizes):
        if not groups or used + size > fit:
            groups.append([])
            used = 0
        groups[-1].append(i)
        used += size
    return groups


def _fixed_counts(point: OperatingPoint, x: ScoredSet, ct: np.ndarray) -> ConfusionCounts:
    """One threshold held fixed: each patient's counts above it, one product."""
    assert x.pat is not None
    y, above = x.y, x.s >= point.value
    masks = [y & above, y, ~y & above, ~y]
    n_pat = ct.shape[1]
    per = np.stack([np.bincount(x.pat[k], minlength=n_pat) for k in masks], axis=1).astype(np.float64)
    tp, n_pos, fp, n_neg = (ct @ per).T
    return ConfusionCounts(np.full(tp.size, float(point.value)), tp, fp, n_neg - fp, n_pos - tp)


_CELLS = 1 << 21  # rows of the stacked levels x replicates per chunk (16 MiB of float64 per array)
_FIELDS = ("threshold", "tp", "fp", "tn", "fn")


@dataclass(frozen=True)
class _Stack:
    """The sets' distinct scores from the highest (``desc``, one array per set) and the sparse counts of each
    patient's positives, and of its negatives, per level: set after set, each led by an empty row, so that one
    cumulative sum down the rows less its value at the set's empty row is the set's own."""

    desc: list[np.ndarray]
    start: np.ndarray
    by_patient: list[Any]

    @property
    def n_rows(self) -> int:
        return int(self.start[-1])

    @classmethod
    def of(
        cls, sets: Sequence[ScoredSet], levels: Sequence[tuple[np.ndarray, np.ndarray]], n_pat: int
    ) -> _Stack:
        """The stack of ``sets`` whose distinct scores and each study's level are ``levels`` (``numpy.unique``)."""
        from scipy import sparse

        desc, rows, sizes = [], [], []
        offset = 0
        for lev, inv in levels:
            desc.append(lev[::-1].copy())
            rows.append(offset + lev.size - inv.ravel())  # row 0 of the set is its empty row
            sizes.append(lev.size + 1)
            offset += lev.size + 1
        start = np.concatenate([[0], np.cumsum(sizes)])
        row = np.concatenate(rows)
        pat = np.concatenate([cast("np.ndarray", x.pat) for x in sets])
        y = np.concatenate([x.y for x in sets]).astype(bool)
        by_patient = [
            sparse.csr_matrix(
                (np.ones(int(part.sum())), (row[part], pat[part])), shape=(offset, n_pat), dtype=np.float64
            )
            for part in (y, ~y)
        ]
        return cls(desc, start, by_patient)

    def at(self, points: Sequence[OperatingPoint], ct: np.ndarray) -> list[list[ConfusionCounts]]:
        """Per set, the threshold and confusion counts of each rule of ``points`` for each row of ``ct``."""
        cts = np.ascontiguousarray(ct.T, dtype=np.float64)
        # cum[k, b]: weight of the rows 1..k of the stack (every set's levels from its highest) in replicate b
        cums = [np.cumsum(np.asarray(m @ cts), axis=0) for m in self.by_patient]
        out = []
        for i, desc in enumerate(self.desc):
            a, b = self.start[i], self.start[i + 1]
            # pos[k, b], neg[k, b]: weight of the set's positives, negatives scoring >= desc[k - 1] (its top k levels)
            pos, neg = (c[a:b] - c[a] for c in cums)
            out.append([_rule_counts(p, desc, pos, neg) for p in points])
        return out


def _rule_counts(
    point: OperatingPoint, desc: np.ndarray, pos: np.ndarray, neg: np.ndarray
) -> ConfusionCounts:
    """The threshold and confusion counts of the rule ``point`` from the cumulative weights of the top levels."""
    n_lev, n_rows = desc.size, pos.shape[1]
    n_pos, n_neg = pos[-1], neg[-1]
    nan = np.full(n_rows, np.nan)
    if point.kind == "specificity":
        # the most levels whose negatives leave specificity >= S: just above the lowest of them
        k = np.minimum(
            (neg <= n_neg * (1 - point.value) + _TOL * np.maximum(n_neg, 1)).sum(axis=0) - 1, n_lev - 1
        )
        threshold = np.nextafter(desc[np.maximum(k, 0)], np.inf) if n_lev else nan
        undefined = n_neg == 0
    elif point.kind == "sensitivity":
        # the fewest levels (at least one) whose positives reach sensitivity S: the lowest of them
        k = np.minimum((pos[1:] < point.value * n_pos - _TOL * np.maximum(n_pos, 1)).sum(axis=0) + 1, n_lev)
        threshold = desc[np.maximum(k - 1, 0)] if n_lev else nan
        undefined = n_pos == 0
    elif point.kind == "youden":
        with np.errstate(invalid="ignore", divide="ignore"):
            j = pos / n_pos - neg / n_neg  # as scikit-learn's tpr - fpr
        k = np.argmax(j, axis=0)  # the fewest levels among the maxima: the highest threshold
        above = np.append(np.nextafter(desc[0], np.inf), desc) if n_lev else np.array([np.nan])
        threshold = above[k]
        undefined = (n_pos == 0) | (n_neg == 0)
    else:
        raise InvalidParameterError(f"Unknown operating point {point.label()!r}.")
    cols = np.arange(n_rows)
    tp, fp = pos[k, cols], neg[k, cols]
    blank = np.where(undefined, np.nan, 0.0)
    return ConfusionCounts(threshold + blank, tp + blank, fp + blank, n_neg - fp + blank, n_pos - tp + blank)


def operating_threshold(point: OperatingPoint, y: np.ndarray, s: np.ndarray) -> float:
    """The threshold of ``point`` for labels ``y`` (bool) and scores ``s`` (every study weighing one): the given
    one, or the one its rule chooses (:func:`confusion_counts`); NaN where the rule is undefined."""
    if point.kind in ("threshold", "from"):
        return float(point.value)
    return float(confusion_counts(point, y, s).threshold[0])
