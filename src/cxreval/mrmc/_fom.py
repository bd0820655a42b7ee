"""Figures of merit of an MRMC study: the empirical (Wilcoxon) AUC of every (modality, reader), its placement
values, leave-one-out AUCs and the covariance of the AUCs (jackknife, DeLong, unbiased).

Every function takes ``ratings`` of shape (n_modalities, n_readers, n_cases), NaN where a reader did not read a
case in a modality, and ``truth`` of shape (n_cases,). The AUCs are computed from mid-ranks, O(N log N) per
(modality, reader), and the jackknife from the placement values in closed form (no loop over cases).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np

from ..exceptions import InvalidParameterError
from ._inputs import MRMCInputs, check_mrmc_inputs

__all__ = ["COVARIANCE_METHODS", "empirical_auc", "jackknife_auc", "auc_covariance"]

CovarianceMethod = Literal["jackknife", "delong", "unbiased"]
COVARIANCE_METHODS: tuple[str, ...] = ("jackknife", "delong", "unbiased")
"""The estimators of the covariance of the AUCs (``covariance=`` of the MRMC analyses)."""

_PAIR_BLOCK_BYTES = 32 * 2**20  # the unbiased estimator's pairwise kernel, block by block of diseased cases


@dataclass(frozen=True)
class Placements:
    """The AUC of each (modality, reader) flattened to G = T*R groups and its placement values.

    ``place[g, k]`` is, for a diseased case k, the fraction of the group's non-diseased cases it outranks (ties
    1/2), for a non-diseased case the fraction of diseased cases that outrank it; NaN where g did not read k.
    ``n_pos``/``n_neg`` (G,) count the cases each group read.
    """

    auc: np.ndarray
    place: np.ndarray
    n_pos: np.ndarray
    n_neg: np.ndarray


def _rank(x: np.ndarray) -> np.ndarray:
    from scipy.stats import rankdata

    return np.asarray(rankdata(x, axis=-1), dtype=np.float64)


def placements(inputs: MRMCInputs) -> Placements:
    """The placement values of every (modality, reader), vectorised over them where every case was read."""
    n_mod, n_rdr, n_cases = inputs.ratings.shape
    x = inputs.ratings.reshape(n_mod * n_rdr, n_cases)
    pos = inputs.truth
    place = np.full(x.shape, np.nan)
    if inputs.complete:
        n1 = np.full(x.shape[0], pos.sum(), dtype=np.float64)
        n0 = np.full(x.shape[0], (~pos).sum(), dtype=np.float64)
        r_all = _rank(x)
        place[:, pos] = (r_all[:, pos] - _rank(x[:, pos])) / n0[:, None]
        place[:, ~pos] = 1.0 - (r_all[:, ~pos] - _rank(x[:, ~pos])) / n1[:, None]
    else:
        read = inputs.read.reshape(x.shape)
        n1 = (read & pos).sum(axis=1).astype(np.float64)
        n0 = (read & ~pos).sum(axis=1).astype(np.float64)
        for g in range(x.shape[0]):
            idx = np.flatnonzero(read[g])
            xs, ps = x[g, idx], pos[idx]
            r_all = _rank(xs)
            place[g, idx[ps]] = (r_all[ps] - _rank(xs[ps])) / n0[g]
            place[g, idx[~ps]] = 1.0 - (r_all[~ps] - _rank(xs[~ps])) / n1[g]
    auc = np.nanmean(np.where(pos, place, np.nan), axis=1)
    return Placements(auc=auc, place=place, n_pos=n1, n_neg=n0)


def _within_cluster_pairs(inputs: MRMCInputs) -> tuple[np.ndarray, np.ndarray]:
    """(diseased case, non-diseased case) index pairs that share a cluster."""
    codes = inputs.clusters
    assert codes is not None
    pos_cases = np.flatnonzero(inputs.truth)
    neg_cases = np.flatnonzero(~inputs.truth)
    neg_sorted = neg_cases[np.argsort(codes[neg_cases], kind="stable")]
    n_clusters = int(codes.max()) + 1
    neg_count = np.bincount(codes[neg_cases], minlength=n_clusters)
    neg_start = np.concatenate([[0], np.cumsum(neg_count)[:-1]])
    reps = neg_count[codes[pos_cases]]
    i_idx = np.repeat(pos_cases, reps)
    offsets = np.arange(reps.sum()) - np.repeat(np.cumsum(reps) - reps, reps)
    j_idx = neg_sorted[np.repeat(neg_start[codes[pos_cases]], reps) + offsets]
    return i_idx, j_idx


def loo_aucs(inputs: MRMCInputs, pl: Placements) -> np.ndarray:
    """Leave-one-case-out AUCs (G, N), or leave-one-cluster-out (G, I) with clusters, in closed form."""
    pos = inputs.truth
    read = inputs.read.reshape(pl.place.shape)
    a, n1, n0 = pl.auc[:, None], pl.n_pos[:, None], pl.n_neg[:, None]
    if inputs.clusters is None:
        loo = np.where(pos, (n1 * a - pl.place) / (n1 - 1), (n0 * a - pl.place) / (n0 - 1))
        return np.where(read, loo, a)
    codes = inputs.clusters
    n_clusters = int(codes.max()) + 1
    n_groups = pl.place.shape[0]
    p_sum = np.zeros((n_groups, n_clusters))
    q_sum = np.zeros((n_groups, n_clusters))
    m_cnt = np.zeros((n_groups, n_clusters))
    n_cnt = np.zeros((n_groups, n_clusters))
    w_sum = np.zeros((n_groups, n_clusters))
    place0 = np.nan_to_num(pl.place)
    i_idx, j_idx = _within_cluster_pairs(inputs)
    x = inputs.ratings.reshape(pl.place.shape)
    xi, xj = x[:, i_idx], x[:, j_idx]
    psi = (xi > xj) + 0.5 * (xi == xj)  # NaN (not read) compares False: 0
    for g in range(n_groups):
        p_sum[g] = np.bincount(codes, weights=place0[g] * pos, minlength=n_clusters)
        q_sum[g] = np.bincount(codes, weights=place0[g] * ~pos, minlength=n_clusters)
        m_cnt[g] = np.bincount(codes, weights=read[g] & pos, minlength=n_clusters)
        n_cnt[g] = np.bincount(codes, weights=read[g] & ~pos, minlength=n_clusters)
        if i_idx.size:
            w_sum[g] = np.bincount(codes[i_idx], weights=psi[g], minlength=n_clusters)
    denom = (n1 - m_cnt) * (n0 - n_cnt)
    if (denom <= 0).any():
        raise InvalidParameterError(
            "The 'clusters' parameter: a cluster holds every diseased or every non-diseased case a reader read; "
            "leaving it out leaves an AUC undefined. The jackknife over clusters needs cases of both classes "
            "outside each cluster."
        )
    return (n1 * n0 * a - n0 * p_sum - n1 * q_sum + w_sum) / denom


def _jackknife_cov(loo: np.ndarray) -> np.ndarray:
    k = loo.shape[1]
    d = loo - loo.mean(axis=1, keepdims=True)
    return (k - 1) / k * (d @ d.T)


def _delong_cov(inputs: MRMCInputs, pl: Placements) -> np.ndarray:
    if not inputs.complete:
        raise InvalidParameterError(
            "covariance='delong' needs every case read by every reader in every modality (a fully crossed "
            "design), as MRMCaov's DeLong method; use covariance='jackknife' or 'unbiased' with missing readings."
        )
    pos = inputs.truth
    a = pl.auc[:, None]
    if inputs.clusters is None:
        v10 = pl.place[:, pos] - a
        v01 = pl.place[:, ~pos] - a
        n1, n0 = v10.shape[1], v01.shape[1]
        return (v10 @ v10.T) / ((n1 - 1) * n1) + (v01 @ v01.T) / ((n0 - 1) * n0)
    # Obuchowski (1997): structural components summed per cluster
    codes = inputs.clusters
    n_clusters = int(codes.max()) + 1
    m = np.bincount(codes, weights=pos, minlength=n_clusters)
    n = np.bincount(codes, weights=~pos, minlength=n_clusters)
    big_m, big_n = m.sum(), n.sum()
    i10, i01 = int((m > 0).sum()), int((n > 0).sum())
    if i10 < 2 or i01 < 2:
        raise InvalidParameterError(
            "The 'clusters' parameter: the clustered DeLong variance needs at least 2 clusters with diseased and "
            "2 with non-diseased cases."
        )
    g = pl.place.shape[0]
    p_sum = np.stack([np.bincount(codes, weights=pl.place[k] * pos, minlength=n_clusters) for k in range(g)])
    q_sum = np.stack([np.bincount(codes, weights=pl.place[k] * ~pos, minlength=n_clusters) for k in range(g)])
    u = p_sum - m * a
    v = q_sum - n * a
    s10 = i10 / ((i10 - 1) * big_m) * (u @ u.T)
    s01 = i01 / ((i01 - 1) * big_n) * (v @ v.T)
    s11 = n_clusters / (n_clusters - 1) * (u @ v.T)
    return s10 / big_m + s01 / big_n + (s11 + s11.T) / (big_m * big_n)


def _unbiased_cov(inputs: MRMCInputs, pl: Placements) -> np.ndarray:
    if inputs.clusters is not None:
        raise InvalidParameterError(
            "covariance='unbiased' is not defined for clustered cases; pass covariance='jackknife' or 'delong' "
            "with clusters."
        )
    pos = inputs.truth
    g_count = pl.place.shape[0]
    x = inputs.ratings.reshape(g_count, -1)
    read = inputs.read.reshape(x.shape).astype(np.float64)
    n1, n0 = pl.n_pos, pl.n_neg
    place0 = np.nan_to_num(pl.place)
    p_row = place0[:, pos] * n0[:, None]  # psi summed over the non-diseased cases, per diseased case
    q_col = place0[:, ~pos] * n1[:, None]
    total = n1 * n0 * pl.auc
    xn = x[:, ~pos]
    pos_idx = np.flatnonzero(pos)
    block = max(1, int(_PAIR_BLOCK_BYTES // (8 * g_count * max(xn.shape[1], 1))))
    kernel = np.zeros((g_count, g_count))
    for start in range(0, pos_idx.size, block):
        xp = x[:, pos_idx[start : start + block]]
        psi = (xp[:, :, None] > xn[:, None, :]) + 0.5 * (xp[:, :, None] == xn[:, None, :])
        flat = psi.reshape(g_count, -1)
        kernel += flat @ flat.T
    shared_pos = read[:, pos] @ read[:, pos].T
    shared_neg = read[:, ~pos] @ read[:, ~pos].T
    size = n1 * n0
    nxny = np.outer(size, size)
    delta = nxny / (
        nxny - np.outer(n1, n1) * shared_neg - np.outer(n0, n0) * shared_pos + shared_pos * shared_neg
    )
    return (
        (1 - delta) * np.outer(total, total) + delta * (p_row @ p_row.T + q_col @ q_col.T - kernel)
    ) / nxny


def covariance_matrix(inputs: MRMCInputs, pl: Placements, method: str) -> np.ndarray:
    """The (G, G) covariance of the flattened AUCs by ``method``."""
    if method == "jackknife":
        return _jackknife_cov(loo_aucs(inputs, pl))
    if method == "delong":
        return _delong_cov(inputs, pl)
    return _unbiased_cov(inputs, pl)


def check_covariance_method(method: object, *, func: str) -> str:
    if not isinstance(method, str) or method not in COVARIANCE_METHODS:
        raise InvalidParameterError(
            f"The 'covariance' parameter of {func} must be one of {list(COVARIANCE_METHODS)}. Got {method!r} "
            "instead."
        )
    return method


def empirical_auc(ratings: object, truth: object) -> np.ndarray:
    """Empirical (Wilcoxon–Mann–Whitney) AUC of every (modality, reader).

    ``AUC = 1/(n1 n0) sum_i sum_j psi(x_i, y_j)`` over the diseased cases ``i`` and the non-diseased ``j`` the
    reader read, with ``psi = 1`` when ``x_i > y_j`` and 1/2 on a tie, computed from mid-ranks in O(N log N).

    Parameters
    ----------
    ratings : array-like of shape (n_modalities, n_readers, n_cases)
        Each reader's rating of each case in each modality, higher = more likely diseased; NaN = not read.
    truth : array-like of shape (n_cases,)
        1 (or True) for a diseased case, 0 (False) otherwise.

    Returns
    -------
    auc : ndarray of shape (n_modalities, n_readers)

    Raises
    ------
    InvalidParameterError
        Shapes that do not match, a truth that is not binary, or a (modality, reader) that read fewer than two
        cases of a class.

    Examples
    --------
    >>> import numpy as np
    >>> empirical_auc(np.array([[[0.1, 0.4, 0.35, 0.8]]]), [0, 0, 1, 1])
    array([[0.75]])
    """
    inputs = check_mrmc_inputs(ratings, truth, func="empirical_auc", min_per_class=1)
    return placements(inputs).auc.reshape(inputs.ratings.shape[:2])


def jackknife_auc(ratings: object, truth: object, *, clusters: object = None) -> np.ndarray:
    """Leave-one-case-out AUCs of every (modality, reader), in closed form from the placement values.

    Leaving out a diseased case ``i`` gives ``(n1 AUC - V10_i) / (n1 - 1)``, a non-diseased case ``j``
    ``(n0 AUC - V01_j) / (n0 - 1)``, where ``V10_i``/``V01_j`` are the case's placement values; a case the reader
    did not read leaves its AUC unchanged. With ``clusters``, whole clusters (patients) are left out instead.

    Parameters
    ----------
    ratings : array-like of shape (n_modalities, n_readers, n_cases)
        Ratings, NaN = not read.
    truth : array-like of shape (n_cases,)
        1 diseased, 0 not.
    clusters : array-like of shape (n_cases,), optional
        The patient (cluster) of each case.

    Returns
    -------
    loo : ndarray of shape (n_modalities, n_readers, n_cases) or (n_modalities, n_readers, n_clusters)
        The AUC without case (cluster) k; clusters in the sorted order of their ids.

    Examples
    --------
    >>> import numpy as np
    >>> jackknife_auc(np.array([[[0.1, 0.4, 0.35, 0.8]]]), [0, 0, 1, 1])
    array([[[0.5, 1. , 1. , 0.5]]])
    """
    inputs = check_mrmc_inputs(ratings, truth, clusters, func="jackknife_auc")
    loo = loo_aucs(inputs, placements(inputs))
    return loo.reshape(*inputs.ratings.shape[:2], loo.shape[1])


def auc_covariance(
    ratings: object, truth: object, *, method: CovarianceMethod = "jackknife", clusters: object = None
) -> np.ndarray:
    """Covariance of the AUCs of every pair of (modality, reader), from the cases' sampling variability.

    - ``'jackknife'``: ``(K-1)/K sum_k (AUC_a(-k) - mean_a)(AUC_b(-k) - mean_b)`` over the K cases (or clusters)
      left out one at a time (Efron 1982), the estimator of OR-DBM MRMC, RJafroc and MRMCaov's default; the
      DBM pseudovalue analysis is the OR analysis with it.
    - ``'delong'``: DeLong, DeLong & Clarke-Pearson (1988), from the placement values,
      ``S10/n1 + S01/n0``; with clusters, Obuchowski's (1997) clustered form (structural components summed per
      cluster). Needs a fully crossed design.
    - ``'unbiased'``: the U-statistic estimator of Gallas et al. (2007), as MRMCaov's ``unbiased``; refused with
      clusters.

    Parameters
    ----------
    ratings, truth
        As :func:`jackknife_auc`: ratings (n_modalities, n_readers, n_cases), NaN = not read; 1 diseased, 0 not.
    method : {'jackknife', 'delong', 'unbiased'}, default='jackknife'
        The estimator.
    clusters : array-like of shape (n_cases,), optional
        The patient of each case: cases of one patient are correlated and resampled together.

    Returns
    -------
    cov : ndarray of shape (n_modalities, n_readers, n_modalities, n_readers)

    References
    ----------
    .. [1] DeLong ER, DeLong DM, Clarke-Pearson DL (1988). Comparing the areas under two or more correlated
       receiver operating characteristic curves. Biometrics 44:837-845. doi:10.2307/2531595
    .. [2] Obuchowski NA (1997). Nonparametric analysis of clustered ROC curve data. Biometrics 53:567-578.
       doi:10.2307/2533958
    .. [3] Gallas BD, Pennello GA, Myers KJ (2007). Multireader multicase variance analysis for binary data.
       J Opt Soc Am A 24:B70-B80. doi:10.1364/JOSAA.24.000B70

    Examples
    --------
    >>> import numpy as np
    >>> x = np.array([[[0.1, 0.4, 0.35, 0.8, 0.2, 0.6]]])
    >>> float(auc_covariance(x, [0, 0, 1, 1, 0, 1], method="delong")[0, 0, 0, 0])  # 2/81
    0.02469...
    """
    name = check_covariance_method(method, func="auc_covariance")
    inputs = check_mrmc_inputs(ratings, truth, clusters, func="auc_covariance")
    cov = covariance_matrix(inputs, placements(inputs), name)
    t, r = inputs.ratings.shape[:2]
    return cov.reshape(t, r, t, r)
