"""Array-level agreement statistics: Cohen's kappa, the Low-/High-kappa mappings, weighted F1.

The definitions (and the hand-worked example) are in the :mod:`cxreval.agreement` package docstring.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import NamedTuple

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from .._validation import check_choice, check_consistent_length
from ..exceptions import InvalidParameterError, SchemaError, UndefinedMetricWarning
from ..results import readonly
from ..schema import NOT_MENTIONED_POLICIES
from ..schema._states import ORDINAL_STATES, STATE_NAMES, LabelPolicy, resolve_not_mentioned

__all__ = [
    "STATE_ORDER",
    "NOT_MENTIONED_POLICIES",
    "BOTH_UNCERTAIN_RULES",
    "SCORE_NAMES",
    "WEIGHTS",
    "cohen_kappa",
    "UncertaintyMapping",
    "uncertainty_mapping",
    "weighted_f1",
    "confusion_counts",
    "scores_from_confusion",
    "AgreementResult",
    "agreement_scores",
]


STATE_ORDER: tuple[str, ...] = ORDINAL_STATES
"""The three ordinal states, index = code (``NEG=0 < UNC=1 < POS=2``)."""

BOTH_UNCERTAIN_RULES: tuple[str, ...] = ("agree", "disagree")
"""How a (UNC, UNC) pair enters the pessimistic mapping (see :mod:`cxreval.agreement`): ``'agree'`` (default,
the reading of the XQA-Chest paper's Table 30, its agreement with the consensus labels: identical labels
always agree) or ``'disagree'`` (half in each disagreeing cell: such a pair counts as a disagreement)."""
WEIGHTS = (None, "linear", "quadratic")
SCORE_NAMES: tuple[str, ...] = ("kappa_w", "kappa_low", "kappa_high", "f1_w", "f1_low", "f1_high")


# ----------------------------------------------------------------------------------------------------
# input coercion
# ----------------------------------------------------------------------------------------------------


def _state_code(value: object) -> float | None:
    """The code of one given state: NaN when missing, None when ``value`` is no state."""
    if value is None or value is pd.NA or (isinstance(value, (float, np.floating)) and np.isnan(value)):
        return np.nan
    if isinstance(value, str):
        return STATE_NAMES.get(value.strip().lower())
    if isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool):
        return float(value)
    return None


def _as_codes(
    values: object, *, name: str, func: str, allowed: Sequence[float] = (-1.0, 0.0, 1.0, 2.0)
) -> np.ndarray:
    """State codes as a float array (``NaN`` = missing); names, ints, ``Int8`` series all accepted."""
    numeric = None
    if (
        isinstance(values, (pd.Series, pd.Index))
        and values.dtype.kind in "iuf"
        or str(getattr(values, "dtype", "")) in ("Int8", "Int16", "Int32", "Int64")
    ):
        numeric = values.to_numpy(dtype=float, na_value=np.nan)  # type: ignore[attr-defined]
    elif isinstance(values, np.ndarray) and values.dtype.kind in "iuf":
        numeric = values.astype(float)
    arr = (
        numeric
        if numeric is not None
        else np.asarray(
            values.to_numpy() if isinstance(values, (pd.Series, pd.Index)) else values, dtype=object
        )
    )
    if arr.ndim != 1:
        raise InvalidParameterError(
            f"The '{name}' parameter of {func} must be 1-dimensional. "
            f"Got an array of shape {arr.shape} instead."
        )
    if numeric is None:
        codes = [_state_code(v) for v in arr]
        if None in codes:
            i = codes.index(None)
            raise SchemaError(
                f"Unknown state {arr[i]!r} at position {i} of '{name}' in {func}; expected one "
                f"of {list(STATE_NAMES)} or the codes -1, 0, 1, 2."
            )
        arr = np.array(codes, dtype=float)
    bad = ~np.isnan(arr) & ~np.isin(arr, np.asarray(allowed, dtype=float))
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise SchemaError(
            f"Unknown state {arr[i]:g} at position {i} of '{name}' in {func}; expected one of "
            f"the codes {[int(x) for x in allowed]} ({', '.join(STATE_NAMES)})."
        )
    return arr


# ----------------------------------------------------------------------------------------------------
# kappa and F1 from (stacks of) confusion matrices
# ----------------------------------------------------------------------------------------------------


def _weight_matrix(k: int, weights: str | None) -> np.ndarray:
    idx = np.arange(k, dtype=float)
    d = np.abs(idx[:, None] - idx[None, :])
    if weights is None:
        return (d > 0).astype(float)
    return d if weights == "linear" else d**2


def _kappa_from_confusion(c: np.ndarray, weights: str | None) -> np.ndarray:
    """Cohen's kappa of each ``(..., k, k)`` confusion matrix; NaN where undefined."""
    c = np.asarray(c, dtype=float)
    k = c.shape[-1]
    w = _weight_matrix(k, weights)
    n = c.sum(axis=(-2, -1))
    with np.errstate(invalid="ignore", divide="ignore"):
        expected = c.sum(axis=-1)[..., :, None] * c.sum(axis=-2)[..., None, :] / n[..., None, None]
        num = (w * c).sum(axis=(-2, -1))
        den = (w * expected).sum(axis=(-2, -1))
        kappa = 1.0 - num / den
    # den == 0: both sources constant on the same class (or no data): undefined, as sklearn.
    kappa = np.where((n > 0) & (den > 0), kappa, np.nan)
    return kappa


def _weighted_f1_from_confusion(c: np.ndarray) -> np.ndarray:
    """Support-weighted F1 of each ``(..., k, k)`` confusion matrix (rows = reference)."""
    c = np.asarray(c, dtype=float)
    tp = np.diagonal(c, axis1=-2, axis2=-1)
    support = c.sum(axis=-1)
    predicted = c.sum(axis=-2)
    with np.errstate(invalid="ignore", divide="ignore"):
        f1 = np.where(support + predicted > 0, 2 * tp / (support + predicted), 0.0)
        total = support.sum(axis=-1)
        out = (f1 * support).sum(axis=-1) / total
    return np.where(total > 0, out, np.nan)


def _binary_mappings(c3: np.ndarray, both_uncertain: str = "agree") -> tuple[np.ndarray, np.ndarray]:
    """The pessimistic and optimistic 2x2 tables (order NEG, POS) of ``(..., 3, 3)`` confusion matrices.

    A (UNC, UNC) pair counts half in each agreeing cell under the optimistic mapping; under the pessimistic
    one likewise (``both_uncertain='agree'``) or half in each disagreeing cell (``'disagree'``).
    """
    c = np.asarray(c3, dtype=float)
    n, u, p = 0, 1, 2

    def cell(i: int, j: int) -> np.ndarray:
        return c[..., i, j]

    half_uu = cell(u, u) / 2
    low = np.zeros(c.shape[:-2] + (2, 2))
    high = np.zeros(c.shape[:-2] + (2, 2))
    # optimistic: an uncertain label takes the other's definitive value; (UNC, UNC) half each agreeing cell
    high[..., 1, 1] = cell(p, p) + cell(u, p) + cell(p, u) + half_uu
    high[..., 0, 0] = cell(n, n) + cell(u, n) + cell(n, u) + half_uu
    high[..., 1, 0] = cell(p, n)
    high[..., 0, 1] = cell(n, p)
    # pessimistic: an uncertain label facing a definitive one takes the opposite value; (UNC, UNC) half each
    # agreeing cell ('agree': identical labels agree) or half each disagreeing cell ('disagree')
    agree_uu = half_uu if both_uncertain == "agree" else 0.0
    clash_uu = half_uu if both_uncertain == "disagree" else 0.0
    low[..., 1, 1] = cell(p, p) + agree_uu
    low[..., 0, 0] = cell(n, n) + agree_uu
    low[..., 1, 0] = cell(p, n) + cell(p, u) + cell(u, n) + clash_uu
    low[..., 0, 1] = cell(n, p) + cell(n, u) + cell(u, p) + clash_uu
    return low, high


def scores_from_confusion(
    c3: np.ndarray, *, weights: str | None = "quadratic", both_uncertain: str = "agree"
) -> dict[str, np.ndarray]:
    """All six agreement scores of each ``(..., 3, 3)`` state confusion matrix (rows A, columns B).

    Returns a dict ``{kappa_w, kappa_low, kappa_high, f1_w, f1_low, f1_high, n}`` of arrays of shape
    ``c3.shape[:-2]``. See the :mod:`cxreval.agreement` docstring for the definitions and
    :data:`BOTH_UNCERTAIN_RULES` for ``both_uncertain``.
    """
    c3 = np.asarray(c3, dtype=float)
    if c3.shape[-2:] != (3, 3):
        raise InvalidParameterError(
            f"scores_from_confusion needs (..., 3, 3) confusion matrices. Got shape {c3.shape} instead."
        )
    check_choice(weights, WEIGHTS, name="weights", func="scores_from_confusion")
    check_choice(both_uncertain, BOTH_UNCERTAIN_RULES, name="both_uncertain", func="scores_from_confusion")
    low, high = _binary_mappings(c3, both_uncertain)
    return {
        "kappa_w": _kappa_from_confusion(c3, weights),
        "kappa_low": _kappa_from_confusion(low, None),
        "kappa_high": _kappa_from_confusion(high, None),
        "f1_w": _weighted_f1_from_confusion(c3),
        "f1_low": _weighted_f1_from_confusion(low),
        "f1_high": _weighted_f1_from_confusion(high),
        "n": c3.sum(axis=(-2, -1)),
    }


# ----------------------------------------------------------------------------------------------------
# array-level public API
# ----------------------------------------------------------------------------------------------------


def cohen_kappa(
    y_a: ArrayLike, y_b: ArrayLike, *, weights: str | None = None, labels: Sequence[object] = (0, 1, 2)
) -> float:
    """Cohen's kappa between two raters, optionally linearly or quadratically weighted.

    :math:`\\kappa = 1 - \\sum w_{ij} O_{ij} / \\sum w_{ij} E_{ij}`, with ``O`` the confusion matrix over
    ``labels`` (in that order), ``E`` the outer product of its marginals over ``n`` and the disagreement
    weights ``w_ij = [i != j]``, ``|i - j|`` or ``(i - j)**2`` on label *positions*. Equal to
    ``sklearn.metrics.cohen_kappa_score(y_a, y_b, labels=labels, weights=weights)``.

    Parameters
    ----------
    y_a, y_b : array-like of shape (n_samples,)
        Labels of the two raters; every value must be one of ``labels`` (no missing values: use
        :func:`agreement_scores` for label states with missing or not-mentioned entries).
    weights : {None, 'linear', 'quadratic'}, default=None
    labels : sequence, default=(0, 1, 2)
        The ordered categories (``NEG, UNC, POS`` by default).

    Returns
    -------
    kappa : float
        In ``[-1, 1]``; NaN (with :class:`~cxreval.exceptions.UndefinedMetricWarning`) when both raters
        use one and the same category only, or there are no samples.

    Raises
    ------
    InvalidParameterError
        Unequal lengths, unknown ``weights``, fewer than 2 or repeated ``labels``.
    SchemaError
        A value not in ``labels``.

    Examples
    --------
    >>> round(cohen_kappa([0, 1, 2, 2], [0, 2, 2, 1], weights="quadratic"), 4)
    0.6364
    """
    check_choice(weights, WEIGHTS, name="weights", func="cohen_kappa")
    labs = list(labels)
    if len(labs) < 2 or len(set(map(repr, labs))) != len(labs):
        raise InvalidParameterError(
            f"The 'labels' parameter of cohen_kappa must list at least 2 distinct "
            f"categories. Got {labs!r} instead."
        )
    a = np.asarray(y_a, dtype=object).ravel()
    b = np.asarray(y_b, dtype=object).ravel()
    check_consistent_length(a, b, names=("y_a", "y_b"))
    index = {}
    for i, lab in enumerate(labs):
        index[lab] = i
        if isinstance(lab, (int, np.integer, float, np.floating)) and not isinstance(lab, bool):
            index[float(lab)] = i
    codes = []
    for name, arr in (("y_a", a), ("y_b", b)):
        out = np.empty(len(arr), dtype=np.int64)
        for i, v in enumerate(arr):
            key = (
                float(v)
                if isinstance(v, (int, np.integer, float, np.floating)) and not isinstance(v, bool)
                else v
            )
            try:
                out[i] = index[key]
            except (KeyError, TypeError):
                raise SchemaError(
                    f"Value {v!r} at position {i} of '{name}' in cohen_kappa is not one of the "
                    f"labels {labs!r}."
                ) from None
        codes.append(out)
    k = len(labs)
    c = np.bincount(codes[0] * k + codes[1], minlength=k * k).reshape(k, k)
    kappa = float(_kappa_from_confusion(c, weights))
    if np.isnan(kappa):
        warnings.warn(
            "cohen_kappa is undefined: both raters use a single, identical category "
            f"(or there are no samples; n={len(a)}). Returning NaN.",
            UndefinedMetricWarning,
            stacklevel=2,
        )
    return kappa


class UncertaintyMapping(NamedTuple):
    """What :func:`uncertainty_mapping` returns: the binary labels of the two sources and the pairs' weights."""

    y_a: np.ndarray
    y_b: np.ndarray
    sample_weight: np.ndarray


def uncertainty_mapping(
    states_a: ArrayLike,
    states_b: ArrayLike,
    *,
    mapping: str,
    not_mentioned: str | LabelPolicy = "negative",
    both_uncertain: str = "agree",
) -> UncertaintyMapping:
    """Map a pair of state arrays to binary labels under the pessimistic or optimistic mapping.

    Parameters
    ----------
    states_a, states_b : array-like of shape (n,)
        Label states (names, codes ``-1/0/1/2`` or an ``Int8`` series; NaN = missing).
    mapping : {'pessimistic', 'optimistic'}
    not_mentioned : {'negative', 'exclude'}, default='negative'
    both_uncertain : {'agree', 'disagree'}, default='agree'
        A (UNC, UNC) pair under the pessimistic mapping: half (1, 1) + half (0, 0) (identical labels agree, the
        XQA-Chest paper's reading), or half (1, 0) + half (0, 1). The optimistic mapping always makes it agree.

    Returns
    -------
    y_a, y_b, sample_weight : ndarray of shape (m,)
        Binary labels (1 = positive) and weights; pairs dropped for missing (or excluded not-mentioned)
        labels are removed, and a (UNC, UNC) pair becomes two rows of weight 1/2 (see the module
        docstring), so ``m`` may differ from ``n``. Feed them to ``sklearn.metrics.cohen_kappa_score`` or
        ``f1_score`` with ``sample_weight`` to reproduce Low-/High-kappa and F1.
    """
    check_choice(mapping, ("pessimistic", "optimistic"), name="mapping", func="uncertainty_mapping")
    check_choice(both_uncertain, BOTH_UNCERTAIN_RULES, name="both_uncertain", func="uncertainty_mapping")
    a, b, _ = _clean_pair(states_a, states_b, not_mentioned=not_mentioned, func="uncertainty_mapping")
    a = a.astype(int)
    b = b.astype(int)
    opt = mapping == "optimistic"
    ya = np.where(a == 2, 1, 0)
    yb = np.where(b == 2, 1, 0)
    ua, ub = a == 1, b == 1
    one_a = ua & ~ub
    one_b = ub & ~ua
    ya[one_a] = yb[one_a] if opt else 1 - yb[one_a]
    yb[one_b] = ya[one_b] if opt else 1 - ya[one_b]
    both = ua & ub
    w = np.ones(len(a))
    w[both] = 0.5
    nb = int(both.sum())
    same = opt or both_uncertain == "agree"
    first_a = np.ones(nb, dtype=int)
    ya[both] = first_a
    yb[both] = first_a if same else 1 - first_a
    extra_a = 1 - first_a
    extra_b = extra_a if same else 1 - extra_a
    return UncertaintyMapping(
        np.concatenate([ya, extra_a]),
        np.concatenate([yb, extra_b]),
        np.concatenate([w, np.full(nb, 0.5)]),
    )


def weighted_f1(
    y_true: ArrayLike,
    y_pred: ArrayLike,
    *,
    labels: Sequence[object] = (0, 1, 2),
    sample_weight: ArrayLike | None = None,
) -> float:
    """Support-weighted F1 over ``labels`` (``sklearn.metrics.f1_score(average='weighted', zero_division=0)``).

    Each class's F1 is ``2 TP / (support + predicted)`` (0 when both are 0); the mean is weighted by the
    class support in ``y_true``. NaN when there are no samples.
    """
    labs = list(labels)
    a = np.asarray(y_true, dtype=object).ravel()
    b = np.asarray(y_pred, dtype=object).ravel()
    check_consistent_length(a, b, names=("y_true", "y_pred"))
    w = np.ones(len(a)) if sample_weight is None else np.asarray(sample_weight, dtype=float).ravel()
    check_consistent_length(a, w, names=("y_true", "sample_weight"))
    index = {lab: i for i, lab in enumerate(labs)}
    try:
        ia = np.array([index[v] for v in a], dtype=np.int64)
        ib = np.array([index[v] for v in b], dtype=np.int64)
    except KeyError as exc:
        raise SchemaError(
            f"Value {exc.args[0]!r} in weighted_f1 is not one of the labels {labs!r}."
        ) from None
    k = len(labs)
    c = np.bincount(ia * k + ib, weights=w, minlength=k * k).reshape(k, k)
    return float(_weighted_f1_from_confusion(c))


def _clean_pair(
    states_a: ArrayLike, states_b: ArrayLike, *, not_mentioned: str | LabelPolicy, func: str
) -> tuple[np.ndarray, np.ndarray, dict[str, int]]:
    not_mentioned = LabelPolicy.of(not_mentioned=not_mentioned, func=func).not_mentioned
    a = _as_codes(states_a, name="states_a", func=func)
    b = _as_codes(states_b, name="states_b", func=func)
    check_consistent_length(a, b, names=("states_a", "states_b"))
    missing = np.isnan(a) | np.isnan(b)
    a, nm_a = resolve_not_mentioned(a, not_mentioned=not_mentioned, func=func)
    b, nm_b = resolve_not_mentioned(b, not_mentioned=not_mentioned, func=func)
    nm = (~missing) & (nm_a | nm_b)
    if not_mentioned == "negative":
        keep = ~missing
        n_nm = 0
    else:
        keep = ~missing & ~nm
        n_nm = int(nm.sum())
    return a[keep], b[keep], {"n_missing": int(missing.sum()), "n_not_mentioned": n_nm}


def confusion_counts(
    states_a: ArrayLike, states_b: ArrayLike, *, not_mentioned: str | LabelPolicy = "negative"
) -> np.ndarray:
    """The 3x3 state confusion matrix (rows A, columns B, order NEG, UNC, POS) of two aligned arrays.

    Missing labels drop the pair; ``NOT_MENTIONED`` becomes NEG or drops the pair (``not_mentioned``).
    """
    a, b, _ = _clean_pair(states_a, states_b, not_mentioned=not_mentioned, func="confusion_counts")
    return np.bincount(a.astype(np.int64) * 3 + b.astype(np.int64), minlength=9).reshape(3, 3)


@dataclass(frozen=True)
class AgreementResult:
    """Agreement between two aligned label arrays.

    Attributes
    ----------
    kappa_w : float
        Cohen's kappa on NEG < UNC < POS with ``weights`` (quadratic by default).
    kappa_low, kappa_high : float
        Unweighted binary kappa under the pessimistic / optimistic uncertainty mapping.
    f1_w, f1_low, f1_high : float
        Support-weighted F1 (A = reference) on the three states / the two mappings.
    n : int
        Pairs used (both labels present, and neither excluded as not mentioned).
    n_missing : int
        Pairs dropped because a label was missing.
    n_not_mentioned : int
        Pairs dropped because a label was ``NOT_MENTIONED`` (only with ``not_mentioned='exclude'``).
    confusion : ndarray of shape (3, 3)
        Counts, rows = A, columns = B, order NEG, UNC, POS (read-only).
    weights : {None, 'linear', 'quadratic'}
    not_mentioned : {'negative', 'exclude'}
    both_uncertain : {'agree', 'disagree'}
        How (UNC, UNC) pairs entered the pessimistic mapping (:data:`BOTH_UNCERTAIN_RULES`).
    """

    kappa_w: float
    kappa_low: float
    kappa_high: float
    f1_w: float
    f1_low: float
    f1_high: float
    n: int
    n_missing: int = 0
    n_not_mentioned: int = 0
    confusion: np.ndarray = field(default_factory=lambda: readonly(np.zeros((3, 3), dtype=np.int64)))
    weights: str | None = "quadratic"
    not_mentioned: str = "negative"
    both_uncertain: str = "agree"

    def __post_init__(self) -> None:
        object.__setattr__(self, "confusion", readonly(np.array(self.confusion)))

    def to_dict(self) -> dict[str, object]:
        return {**asdict(self), "confusion": self.confusion.tolist()}


def agreement_scores(
    states_a: ArrayLike,
    states_b: ArrayLike,
    *,
    weights: str | None = "quadratic",
    not_mentioned: str | LabelPolicy = "negative",
    both_uncertain: str = "agree",
) -> AgreementResult:
    """kappa_w, kappa_low, kappa_high, f1_w, f1_low, f1_high and n for two aligned state arrays.

    Parameters
    ----------
    states_a : array-like of shape (n,)
        Source A's states (the reference for F1): names (``'negative'``, ``'uncertain'``,
        ``'positive'``, ``'not_mentioned'``), codes ``0 / 1 / 2 / -1``, or an ``Int8`` series; NaN /
        ``None`` / ``<NA>`` = missing.
    states_b : array-like of shape (n,)
        Source B's states for the same studies, in the same order.
    weights : {None, 'linear', 'quadratic'}, default='quadratic'
        Weighting of ``kappa_w`` (the XQA-Chest paper's central estimate is quadratic).
    not_mentioned : {'negative', 'exclude'} or LabelPolicy, default='negative'
        ``NOT_MENTIONED`` as negative, or the pair dropped (a :class:`~cxreval.schema.LabelPolicy` gives its
        ``not_mentioned``).
    both_uncertain : {'agree', 'disagree'}, default='agree'
        A pair where both labels are uncertain counts as agreement under both mappings (``'agree'``: two
        identical label sets always have ``kappa_low = kappa_high = 1``, as the XQA-Chest paper's Table 30 of
        agreement with the consensus labels prints), or as a disagreement under the pessimistic mapping
        (``'disagree'``: identical label sets with uncertain labels get ``kappa_low < 1``).

    Returns
    -------
    res : AgreementResult

    Warns
    -----
    UndefinedMetricWarning
        When a kappa is undefined (both sources constant on one identical class) and NaN is returned.

    Raises
    ------
    SchemaError
        A state outside the domain (message names the position and value).
    InvalidParameterError
        Unequal lengths or an unknown option.
    """
    check_choice(weights, WEIGHTS, name="weights", func="agreement_scores")
    check_choice(both_uncertain, BOTH_UNCERTAIN_RULES, name="both_uncertain", func="agreement_scores")
    not_mentioned = LabelPolicy.of(not_mentioned=not_mentioned, func="agreement_scores").not_mentioned
    a, b, drops = _clean_pair(states_a, states_b, not_mentioned=not_mentioned, func="agreement_scores")
    c = np.bincount(a.astype(np.int64) * 3 + b.astype(np.int64), minlength=9).reshape(3, 3)
    s = scores_from_confusion(c, weights=weights, both_uncertain=both_uncertain)
    undefined = [k for k in SCORE_NAMES if np.isnan(s[k])]
    if undefined:
        warnings.warn(
            f"agreement_scores: {', '.join(undefined)} undefined (n={int(c.sum())}; a kappa is "
            "undefined when both sources use one identical class only). Returning NaN.",
            UndefinedMetricWarning,
            stacklevel=2,
        )
    return AgreementResult(
        **{k: float(s[k]) for k in SCORE_NAMES},  # type: ignore[arg-type]
        n=int(c.sum()),
        confusion=c,
        weights=weights,
        not_mentioned=not_mentioned,
        both_uncertain=both_uncertain,
        **drops,
    )
