r"""Rank correlations with ties: Spearman's rho (the d² formula or Pearson of ranks) and Kendall's tau-a / tau-b.

The XQA-Chest paper (section 2.3) defines SRCC and KRCC by their textbook formulas,

.. math:: \rho_s = 1 - \frac{6 \sum_i d_i^2}{n (n^2 - 1)}, \qquad
          \tau = \frac{C - D}{\tfrac12 n (n - 1)},

with :math:`d_i` the difference of item :math:`i`'s ranks under the two references and :math:`C` / :math:`D`
the concordant / discordant pairs. Without ties these equal the Pearson correlation of the ranks
(``scipy.stats.spearmanr``) and Kendall's tau-b (``scipy.stats.kendalltau``). With ties (models with constant
scores sit at AUC 0.50 under every reference; AUCs published to 2 decimals tie 21-29 of 34 models) they differ,
so each form is a named function and :func:`~cxreval.ranking.compare_rankings` takes the variant:

===========================  ============================================  ===================================
function                     definition with ties                           scipy equivalent
===========================  ============================================  ===================================
:func:`spearman_rho_d2`      the paper's d² formula on average ranks        none (equal to spearmanr w/o ties)
:func:`spearman_rho`         Pearson correlation of average ranks           ``spearmanr``
:func:`kendall_tau_a`        the paper's ``(C - D) / (n (n - 1) / 2)``      none (equal to tau-b w/o ties)
:func:`kendall_tau_b`        ``(C - D) / sqrt((n0 - n1)(n0 - n2))``         ``kendalltau`` (variant ``'b'``)
===========================  ============================================  ===================================

(``n0 = n(n-1)/2``; ``n1`` / ``n2`` the pairs tied in ``x`` / ``y``; a tied pair is neither concordant nor
discordant.) With ties the d² formula is not bounded by the tie structure: a constant ``x`` gives
``rho_d2 = 0.5`` for every untied ``y`` and tau-a gives 0, where the Pearson form and tau-b are undefined (NaN).

Hand-worked tied example (also a test): ``x = [1, 2, 2, 3]``, ``y = [1, 3, 2, 4]``. Average ranks (ascending)
``[1, 2.5, 2.5, 4]`` and ``[1, 3, 2, 4]``, ``d = [0, -0.5, 0.5, 0]``, ``sum d² = 0.5``, so
``rho_d2 = 1 - 6 (0.5) / (4 * 15) = 0.95``; the Pearson form gives ``4.5 / sqrt(4.5 * 5) = 0.94868``. Of the 6
pairs, 5 are concordant and 1 is tied in ``x`` (none discordant): ``tau_a = 5 / 6 = 0.83333`` and
``tau_b = 5 / sqrt(5 * 6) = 0.91287``.

All four are vectorised along ``axis`` (one correlation per bootstrap replicate). Kendall's tau uses all
``n(n-1)/2`` pairs at once for small inputs (the bootstrap case: tens of models) and, when the pairs would not
fit in a few MiB, an ``O(n log n)`` count: both inputs as dense codes (one sort each), then the discordant pairs
from the contingency table of the codes when it is no larger than the data (``O(n + cells)``: two cumulative
sums), otherwise Knight's algorithm [1]_ (sort by ``x`` then ``y``; discordant pairs = the inversions of the ``y``
codes, counted by a bottom-up merge sort whose passes each sort the whole array as rows of merged blocks).

Examples
--------
>>> x = np.array([1, 2, 2, 3]); y = np.array([1, 3, 2, 4])
>>> float(spearman_rho_d2(x, y)), round(float(spearman_rho(x, y)), 5)
(0.95, 0.94868)
>>> round(float(kendall_tau_a(x, y)), 5), round(float(kendall_tau_b(x, y)), 5)
(0.83333, 0.91287)

References
----------
.. [1] W. R. Knight, "A computer method for calculating Kendall's tau with ungrouped data", Journal of the
   American Statistical Association 61(314), 436-439 (1966). https://doi.org/10.1080/01621459.1966.10480879
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import MappingProxyType

import numpy as np
from numpy.typing import ArrayLike

from ..exceptions import InvalidParameterError

__all__ = [
    "KENDALL_VARIANTS",
    "SPEARMAN_VARIANTS",
    "VARIANT_TEXT",
    "spearman_rho",
    "spearman_rho_d2",
    "kendall_tau_a",
    "kendall_tau_b",
    "correlation_function",
]

KENDALL_VARIANTS: tuple[str, ...] = ("tau-a", "tau-b")
SPEARMAN_VARIANTS: tuple[str, ...] = ("formula", "pearson")
VARIANT_TEXT: Mapping[str, str] = MappingProxyType(
    {
        "formula": "SRCC = 1 - 6 sum d^2 / (n (n^2 - 1)) on average ranks (the XQA-Chest paper's formula)",
        "pearson": "SRCC = Pearson correlation of average ranks (scipy.stats.spearmanr)",
        "tau-a": "KRCC = tau-a = (C - D) / (n (n - 1) / 2) (the XQA-Chest paper's formula)",
        "tau-b": "KRCC = tau-b = (C - D) / sqrt((n0 - n1)(n0 - n2)) (scipy.stats.kendalltau)",
    }
)
"""Each SRCC/KRCC variant's formula in words (the summaries state the variants used)."""

_I32_MAX = int(np.iinfo(np.int32).max)

_PAIR_BUDGET = 1 << 21
"""Largest ``rows x n(n-1)/2`` handled by the all-pairs path (about 16 MiB per float64 temporary)."""


def _pair(x: ArrayLike, y: ArrayLike, axis: int, func: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``x``, ``y`` as float arrays with ``axis`` last, same shape, at least 1-D; and the NaN mask per row."""
    xa = np.asarray(x, dtype=float)
    ya = np.asarray(y, dtype=float)
    if xa.ndim == 0 or ya.ndim == 0:
        raise InvalidParameterError(
            f"{func}: 'x' and 'y' must be arrays of at least one dimension (the items to "
            f"rank); got a scalar (shapes {xa.shape} and {ya.shape})."
        )
    if xa.shape != ya.shape:
        raise InvalidParameterError(
            f"{func}: 'x' and 'y' must have the same shape; got {xa.shape} and {ya.shape}."
        )
    if not -xa.ndim <= axis < xa.ndim:
        raise InvalidParameterError(
            f"{func}: 'axis' {axis} is out of range for arrays of {xa.ndim} dimension(s)."
        )
    xa = np.moveaxis(xa, axis, -1)
    ya = np.moveaxis(ya, axis, -1)
    bad = np.isnan(xa).any(axis=-1) | np.isnan(ya).any(axis=-1)
    return xa, ya, bad


def _finish(r: np.ndarray, undefined: np.ndarray) -> np.ndarray:
    r = np.where(undefined, np.nan, np.clip(r, -1.0, 1.0))
    return r[()] if r.ndim == 0 else r


def spearman_rho(x: ArrayLike, y: ArrayLike, *, axis: int = -1) -> np.ndarray:
    """Spearman's rho as the Pearson correlation of average ranks (equals ``scipy.stats.spearmanr``).

    NaN if either input has a NaN or is constant along ``axis``.
    """
    from scipy.stats import rankdata

    xa, ya, bad = _pair(x, y, axis, "spearman_rho")
    rx = rankdata(np.nan_to_num(xa), axis=-1)
    ry = rankdata(np.nan_to_num(ya), axis=-1)
    rx -= rx.mean(axis=-1, keepdims=True)
    ry -= ry.mean(axis=-1, keepdims=True)
    den = np.sqrt((rx * rx).sum(axis=-1) * (ry * ry).sum(axis=-1))
    with np.errstate(invalid="ignore", divide="ignore"):
        r = (rx * ry).sum(axis=-1) / den
    return _finish(r, bad | (den == 0))


def spearman_rho_d2(x: ArrayLike, y: ArrayLike, *, axis: int = -1) -> np.ndarray:
    """Spearman's rho by the XQA-Chest paper's formula ``1 - 6 sum d² / (n (n² - 1))``, ``d`` the average-rank differences.

    Equal to :func:`spearman_rho` without ties. NaN if either input has a NaN or ``n < 2``.
    """
    from scipy.stats import rankdata

    xa, ya, bad = _pair(x, y, axis, "spearman_rho_d2")
    n = xa.shape[-1]
    d = rankdata(np.nan_to_num(xa), axis=-1) - rankdata(np.nan_to_num(ya), axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        r = 1.0 - 6.0 * (d * d).sum(axis=-1) / (n * (n * n - 1.0))
    return _finish(np.asarray(r, dtype=float), bad | (n < 2))


def _dense_codes(v: np.ndarray) -> tuple[np.ndarray, int, int]:
    """Codes ``0..m-1`` of a 1-D array's values in ascending order (int32 below 2**31 items), ``m``, and the
    pairs of equal values (from the run lengths of the sorted values)."""
    n = v.size
    order = np.argsort(v)
    vs = v[order]
    new = np.empty(n, dtype=bool)
    new[0] = False
    np.not_equal(vs[1:], vs[:-1], out=new[1:])
    del vs
    sorted_codes = np.cumsum(new, dtype=_index_type(n))
    m = int(sorted_codes[-1]) + 1
    codes = np.empty_like(sorted_codes)
    codes[order] = sorted_codes
    del order, sorted_codes
    new[0] = True
    return codes, m, _run_pairs(np.flatnonzero(new), n)


def _index_type(n: int) -> type[np.signedinteger]:
    return np.int32 if n < 2**31 - 1 else np.int64


def _run_pairs(starts: np.ndarray, n: int) -> int:
    """``sum t (t - 1) / 2`` over the runs that begin at ``starts`` of a sequence of length ``n``."""
    t = np.diff(starts, append=n).astype(np.int64)
    return int((t * (t - 1) // 2).sum())


def _discordant_from_table(xc: np.ndarray, mx: int, yc: np.ndarray, my: int) -> tuple[int, int]:
    """``(D, n3)`` from the ``mx x my`` contingency table of the codes: discordant pairs ``sum T[i, j] *
    (points with larger x and smaller y)`` by two cumulative sums, and the pairs tied in both. ``O(n + mx my)``."""
    key = xc.astype(np.int64) * my + yc
    table = np.bincount(key, minlength=mx * my).reshape(mx, my)
    del key
    below = np.cumsum(table[::-1], axis=0)[::-1]  # points with x >= row, per y
    below = np.cumsum(below, axis=1)  # ... and y <= column
    # points with x > i and y < j: below[i + 1, j - 1]
    dis = int((table[:-1, 1:] * below[1:, :-1]).sum())
    return dis, int((table * (table - 1) // 2).sum())


_RUN = 16
"""Width of the blocks whose inversions :func:`_inversions` counts by comparing every pair before merging."""


def _inversions(a: np.ndarray, m: int) -> int:
    """Pairs ``i < j`` with ``a[i] > a[j]`` of integer codes ``0 <= a < m``: a bottom-up merge sort in whole-array passes.

    The items are doubled and padded with ``2 m`` (larger than every code and last, so no pad is in an
    inversion) to a multiple of ``_RUN``; the inversions inside each block of ``_RUN`` are counted pair by pair
    (``_RUN - 1`` vectorised comparisons) and the blocks sorted. Then, for widths ``w = _RUN, 2 _RUN, ...``, each
    pair of neighbouring sorted blocks is tagged (the low bit: 0 for the left block, 1 for the right) and sorted
    as one row of ``2 w`` (one ``sort(axis=1)`` for all rows). An inversion across the two blocks is a left item
    after a right item in the merged row (ties stay left first: ``2 v < 2 v + 1``), so a row with its ``r``
    right items at positions ``j`` adds ``sum (2 w - 1 - j) - r (r - 1) / 2``: one column sum per pass.
    ``O(n log^2 n)`` comparisons in ``log2(n / _RUN)`` sorts of the whole array; memory two arrays of ``n``.
    """
    n = a.size
    if n < 2 or m < 2:
        return 0
    dt = np.int32 if 2 * m < _I32_MAX else np.int64
    npad = -(-n // _RUN) * _RUN
    v = np.empty(npad, dtype=dt)
    np.left_shift(a, 1, out=v[:n], casting="unsafe")
    v[n:] = 2 * m
    blocks = v.reshape(-1, _RUN)
    total = 0
    for d in range(1, _RUN):
        total += int(np.count_nonzero(blocks[:, :-d] > blocks[:, d:]))
    blocks.sort(axis=1)
    side = np.empty(npad, dtype=dt)
    w = _RUN
    while w < npad:
        w2 = 2 * w
        rows, rest = divmod(npad, w2)
        v &= ~1
        if rows:
            merged = v[: rows * w2].reshape(rows, w2)
            merged[:, w:] |= 1
            merged.sort(axis=1)
            right = np.bitwise_and(merged, 1, out=side[: rows * w2].reshape(rows, w2)).sum(axis=0)
            total += rows * (w * (w2 - 1) - w * (w - 1) // 2) - int(right @ np.arange(w2))
        if rest > w:  # a last, shorter pair of blocks
            tail = v[rows * w2 :]
            tail[w:] |= 1
            tail.sort()
            r = rest - w
            total += r * (rest - 1) - r * (r - 1) // 2 - int(np.flatnonzero(tail & 1).sum())
        w = w2
    return total


_TABLE_CELLS = 1
"""The contingency-table path is taken when ``mx * my <= _TABLE_CELLS * n`` (a table no larger than the data)."""


def _kendall_counts_fast(x: np.ndarray, y: np.ndarray) -> tuple[float, float, float, float]:
    """``(C - D, n0, n0 - n1, n0 - n2)`` of one pair of 1-D arrays without NaN, ``O(n log n)``.

    Both inputs become dense codes (one sort each; the tie counts ``n1``, ``n2`` from their runs). With few
    distinct values the discordant pairs and the pairs tied in both (``n3``) come from the contingency table;
    otherwise the items are sorted by ``(x, y)`` and ``D`` is the number of inversions of the ``y`` codes
    (Knight's idea: pairs tied in ``x`` are in ``y`` order, so they are not inversions).
    ``C - D = n0 - n1 - n2 + n3 - 2 D``.
    """
    n = x.size
    n0 = n * (n - 1) // 2
    xc, mx, n1 = _dense_codes(x)
    yc, my, n2 = _dense_codes(y)
    if mx * my <= _TABLE_CELLS * n:
        dis, n3 = _discordant_from_table(xc, mx, yc, my)
    elif n1 == 0:  # x all distinct: its codes are the positions in x order, and no pair is tied in both
        seq = np.empty_like(yc)
        seq[xc] = yc
        del xc, yc
        dis, n3 = _inversions(seq, my), 0
    else:
        key = xc.astype(np.int64)
        del xc
        key *= my
        key += yc
        del yc
        key.sort()
        new = np.empty(n, dtype=bool)
        new[0] = True
        np.not_equal(key[1:], key[:-1], out=new[1:])
        n3 = _run_pairs(np.flatnonzero(new), n)
        del new
        key %= my
        dis = _inversions(key.astype(_index_type(n)), my)
    s = n0 - n1 - n2 + n3 - 2 * dis
    return float(s), float(n0), float(n0 - n1), float(n0 - n2)


def _kendall_counts(
    x: ArrayLike, y: ArrayLike, axis: int, func: str
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per row: ``C - D``, ``n0``, ``n0 - n1``, ``n0 - n2`` and the NaN mask."""
    xa, ya, bad = _pair(x, y, axis, func)
    n = xa.shape[-1]
    n_rows = int(np.prod(xa.shape[:-1], dtype=np.int64))
    n0 = np.full(xa.shape[:-1], n * (n - 1) / 2.0)
    if n_rows * n * (n - 1) // 2 <= _PAIR_BUDGET:  # all pairs at once, vectorised over rows
        i, j = np.triu_indices(n, k=1)
        sx = np.sign(np.nan_to_num(xa[..., i]) - np.nan_to_num(xa[..., j]))
        sy = np.sign(np.nan_to_num(ya[..., i]) - np.nan_to_num(ya[..., j]))
        s = (sx * sy).sum(axis=-1)
        nx = np.count_nonzero(sx, axis=-1).astype(float)
        ny = np.count_nonzero(sy, axis=-1).astype(float)
        return s, n0, nx, ny, bad
    s, nx, ny = (np.zeros(xa.shape[:-1]) for _ in range(3))
    for idx in np.ndindex(*xa.shape[:-1]):
        if not bad[idx]:
            s[idx], _, nx[idx], ny[idx] = _kendall_counts_fast(xa[idx], ya[idx])
    return s, n0, nx, ny, bad


def kendall_tau_a(x: ArrayLike, y: ArrayLike, *, axis: int = -1) -> np.ndarray:
    """Kendall's tau-a along ``axis``: ``(C - D) / (n (n - 1) / 2)``, the XQA-Chest paper's KRCC.

    Tied pairs count as neither concordant nor discordant, so ties pull tau-a towards 0 (a constant input gives
    0). Equal to :func:`kendall_tau_b` without ties. NaN if either input has a NaN or ``n < 2``.

    Raises
    ------
    InvalidParameterError
        Scalar input, different shapes, or ``axis`` out of range.
    """
    s, n0, _, _, bad = _kendall_counts(x, y, axis, "kendall_tau_a")
    with np.errstate(invalid="ignore", divide="ignore"):
        t = s / n0
    return _finish(t, bad | (n0 == 0))


def kendall_tau_b(x: ArrayLike, y: ArrayLike, *, axis: int = -1) -> np.ndarray:
    """Kendall's tau-b along ``axis`` (equals ``scipy.stats.kendalltau``, variant ``'b'``).

    ``tau_b = (C - D) / sqrt((n0 - n1)(n0 - n2))``, with ``n1``/``n2`` the pairs tied in ``x``/``y``.
    NaN if either input has a NaN or is constant.

    Raises
    ------
    InvalidParameterError
        Scalar input, different shapes, or ``axis`` out of range.
    """
    s, _, nx, ny, bad = _kendall_counts(x, y, axis, "kendall_tau_b")
    den = np.sqrt(nx * ny)
    with np.errstate(invalid="ignore", divide="ignore"):
        t = s / den
    return _finish(t, bad | (den == 0))


_FUNCTIONS: dict[tuple[str, str], Callable[..., np.ndarray]] = {
    ("SRCC", "formula"): spearman_rho_d2,
    ("SRCC", "pearson"): spearman_rho,
    ("KRCC", "tau-a"): kendall_tau_a,
    ("KRCC", "tau-b"): kendall_tau_b,
}


def correlation_function(method: str, variant: str) -> Callable[..., np.ndarray]:
    """The function of ``method`` (``'SRCC'``/``'KRCC'``) and its ``variant`` (:data:`SPEARMAN_VARIANTS`,
    :data:`KENDALL_VARIANTS`)."""
    fn = _FUNCTIONS.get((method, variant))
    if fn is None:
        allowed = SPEARMAN_VARIANTS if method == "SRCC" else KENDALL_VARIANTS
        raise InvalidParameterError(f"Unknown {method} variant {variant!r}; expected one of {list(allowed)}.")
    return fn
