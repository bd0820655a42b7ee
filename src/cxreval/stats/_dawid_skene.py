r"""Dawid–Skene EM: the latent-class model of readers with a full confusion matrix each, fitted on answer patterns.

Model [1]_: item ``i`` has a latent true state ``z_i`` with prior ``p_k = P(z_i = k)``; reader ``j`` gives
state ``l`` with probability ``π_j[k, l] = P(y_ij = l | z_i = k)``, independently across readers. EM maximises
the marginal log-likelihood

.. math:: \mathcal L(p, π) = \sum_i \log \sum_k p_k \prod_{j \in R(i)} π_j[k, y_{ij}]

from the smoothed vote shares, on the distinct answer patterns weighted by their counts
(:func:`answer_patterns`), and stops when :math:`\mathcal L` per item rises by less than ``tol``.
:class:`cxreval.fusion.DawidSkene` is the estimator (its docstring gives the stopping rule and the choices in
full); the reader study's latent reference (:mod:`cxreval.mrmc`) fits the same EM per finding.

References
----------
.. [1] A. P. Dawid and A. M. Skene, "Maximum likelihood estimation of observer error-rates using the EM
   algorithm", J. R. Stat. Soc. C 28(1), 20–28 (1979). https://doi.org/10.2307/2346806
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from ._answer_patterns import group_patterns

__all__ = ["DawidSkeneFit", "fit_dawid_skene", "DawidSkeneEM", "dawid_skene_em"]


class DawidSkeneEM(NamedTuple):
    """What :func:`dawid_skene_em` returns (its Returns section)."""

    posteriors: np.ndarray
    prior: np.ndarray
    errors: np.ndarray
    history: np.ndarray
    converged: bool


def dawid_skene_em(
    item: np.ndarray,
    reader: np.ndarray,
    label: np.ndarray,
    n_items: int,
    n_readers: int,
    n_classes: int,
    init: np.ndarray,
    *,
    n_iter: int,
    tol: float,
    weight: np.ndarray | None = None,
) -> DawidSkeneEM:
    """Run Dawid–Skene EM on encoded annotations.

    Parameters
    ----------
    item, reader, label : ndarray of int, shape (n_annotations,)
        Codes, ``label`` in ``0 .. n_classes-1``; sorted by ``(item, reader)`` for reproducible sums.
    init : ndarray of shape (n_items, n_classes)
        Initial posteriors ``T`` (rows sum to 1).
    n_iter : int
        Maximum number of iterations.
    tol : float
        Stop when the log-likelihood per item (``sum(weight)`` items) rises by less than ``tol``.
    weight : ndarray of shape (n_items,), optional
        Number of items each ``item`` stands for (answer patterns, :func:`answer_patterns`);
        default 1 each.

    Returns
    -------
    posteriors : ndarray (n_items, n_classes)
    prior : ndarray (n_classes,)
    errors : ndarray (n_readers, n_classes, n_classes)
        ``errors[j, k, l] = P(reader j says l | true k)``; rows of a class the reader never saw are uniform.
    history : ndarray
        True log-likelihood after each iteration.
    converged : bool
        Whether the rise fell below ``tol`` before ``n_iter`` iterations.
    """
    K = n_classes
    w = np.ones(n_items) if weight is None else np.asarray(weight, dtype=np.float64)
    total = float(w.sum())
    w_ann = w[item]
    Tk = np.ascontiguousarray(init.T)  # (K, n_items) layout: fast row operations
    key = reader * K + label
    history: list[float] = []
    converged = False
    err = np.empty((n_readers, K, K))
    prior = (Tk @ w) / total
    with np.errstate(divide="ignore"):
        for _ in range(n_iter):
            prior = (Tk @ w) / total
            for k in range(K):
                err[:, k, :] = np.bincount(key, weights=Tk[k, item] * w_ann, minlength=n_readers * K).reshape(
                    n_readers, K
                )
            mass = err.sum(axis=2, keepdims=True)
            err = np.divide(err, mass, out=np.full_like(err, 1.0 / K), where=mass > 0)
            log_err = np.log(err)
            logp = np.empty((K, n_items))
            for k in range(K):
                logp[k] = np.bincount(item, weights=log_err[reader, k, label], minlength=n_items) + np.log(
                    prior[k]
                )
            top = logp.max(axis=0)
            top[~np.isfinite(top)] = 0.0
            e = np.exp(logp - top)
            tot = e.sum(axis=0)
            Tk = e / tot
            ll = float(w @ (np.log(tot) + top))
            if history and (ll - history[-1]) < tol * total:
                history.append(ll)
                converged = True
                break
            history.append(ll)
    T = Tk.T
    return DawidSkeneEM(T, prior, err, np.asarray(history), converged)


@dataclass(frozen=True)
class DawidSkeneFit:
    """Dawid–Skene fitted to one group of items (:func:`fit_dawid_skene`).

    Attributes
    ----------
    classes : ndarray of int
        The states the readers used, sorted: the model's state space.
    proba : ndarray of shape (n_items, len(classes))
        Posterior of each state for every item.
    prior : ndarray of shape (len(classes),)
    errors : ndarray of shape (n_readers, len(classes), len(classes))
        ``errors[j, k, l] = P(reader j says l | true k)``.
    weight : ndarray of shape (n_readers, len(classes))
        Expected number of items of each true state each reader labelled.
    history : ndarray
        True log-likelihood after each iteration.
    converged : bool
    n_patterns : int
        Distinct answer patterns EM ran on.
    """

    classes: np.ndarray
    proba: np.ndarray
    prior: np.ndarray
    errors: np.ndarray
    weight: np.ndarray
    history: np.ndarray
    converged: bool
    n_patterns: int


def fit_dawid_skene(
    item: np.ndarray,
    reader: np.ndarray,
    label: np.ndarray,
    n_items: int,
    n_readers: int,
    *,
    n_iter: int = 500,
    tol: float = 1e-9,
    init_smoothing: float = 0.01,
) -> DawidSkeneFit:
    """Dawid–Skene EM on one group of encoded annotations, from the vote shares plus ``init_smoothing``.

    Parameters
    ----------
    item, reader, label : ndarray of int, shape (n_annotations,)
        Encoded annotations sorted by ``(item, reader)``; every item ``0 .. n_items-1`` has at least one and a
        reader labels an item at most once. ``label`` holds states; the model's are those used.
    n_items, n_readers : int
    n_iter, tol, init_smoothing
        As :class:`cxreval.fusion.DawidSkene`'s (the caller checks them).

    Returns
    -------
    res : DawidSkeneFit
    """
    classes, pat = group_patterns(item, reader, label, n_items, n_readers)
    K = len(classes)
    init = (
        np.bincount(pat.item * K + pat.label, minlength=pat.n_patterns * K).reshape(-1, K).astype(np.float64)
    )
    init += init_smoothing
    init /= init.sum(axis=1, keepdims=True)
    T, prior, err, hist, conv = dawid_skene_em(
        pat.item,
        pat.reader,
        pat.label,
        pat.n_patterns,
        n_readers,
        K,
        init,
        n_iter=n_iter,
        tol=tol,
        weight=pat.weight,
    )
    w_ann = pat.weight[pat.item]
    weight = np.stack(
        [np.bincount(pat.reader, weights=T[pat.item, k] * w_ann, minlength=n_readers) for k in range(K)],
        axis=1,
    )
    return DawidSkeneFit(classes, T[pat.inverse], prior, err, weight, hist, bool(conv), pat.n_patterns)
