"""Dawid–Skene: EM with a full confusion matrix per reader.

Model [1]_: item ``i`` has a latent true state ``z_i`` with prior ``p_k = P(z_i = k)``; reader ``j`` gives
state ``l`` with probability ``π_j[k, l] = P(y_ij = l | z_i = k)``, independently across readers. The
(marginal) log-likelihood of the observed labels is

.. math:: \\mathcal L(p, π) = \\sum_i \\log \\sum_k p_k \\prod_{j \\in R(i)} π_j[k, y_{ij}],

and EM maximises it: the E-step sets ``T_ik = P(z_i = k | y, p, π)``; the M-step sets
``p_k = mean_i T_ik`` and ``π_j[k, l] = Σ_{i: y_ij = l} T_ik / Σ_{i ∈ I(j)} T_ik``. Each iteration cannot
decrease :math:`\\mathcal L` (Dempster, Laird & Rubin, 1977); ``log_likelihood_history_`` records it after
every E-step and the tests check it is non-decreasing. EM starts from the soft majority vote
(``T_ik`` ∝ number of the item's readers saying ``k``, plus ``init_smoothing``) and stops when
:math:`\\mathcal L` per item rises by less than ``tol`` or after ``n_iter`` iterations.

The small ``init_smoothing`` matters: EM can never move a probability away from an exact 0, and the
plain vote share is exactly 0 for every state no reader gave an item. Started there, EM keeps those
zeros (for example a confusion entry ``π_j[NEG, POS] = 0`` when all of reader ``j``'s positives are
unanimous) and stops at a worse fixed point: on VinDr-CXR ILD the true log-likelihood reaches -2344.0
from the plain vote shares and -2317.2 from smoothed ones (any value from 1e-6 to 0.1 gives the same
optimum). crowd-kit avoids the trap differently, by clipping every probability at 1e-10.

The state space of a fit is the set of states the readers actually use (on VinDr-CXR, where nobody
says *uncertain*, a 2-state model); ``probas_`` has a zero column for the others.

``pooling='finding'`` (default) fits one model per finding (the XQA protocol: fusion "applied
independently for each pathology"); ``pooling='joint'`` fits one model over all ``(study, finding)``
items, so each reader has one confusion matrix shared by all findings.

Differences from crowd-kit 1.4.2
--------------------------------
crowd-kit's ``DawidSkene`` (``n_iter=100, tol=1e-5``) stops on the change of an objective that adds
``log p_k`` once per *annotation* instead of once per item; that objective changes by less than ``tol``
after about two iterations on VinDr-CXR while the true log-likelihood is still rising, so its default
output is close to the majority vote. cxreval stops on the true log-likelihood.

Reader caveat (VinDr-CXR)
-------------------------
On VinDr-CXR readers R1–R7 never mark a finding and R8–R10 read almost all abnormal images, so a
reader's estimated confusion matrix mostly reflects *which images it was given*: R1–R7 get
``π[POS, POS] ≈ 0`` from the few positives that fall to them, not because they miss findings on
the images R8–R10 would have read. Do not read the matrices as reader skill on that data.

References
----------
.. [1] A. P. Dawid and A. M. Skene, "Maximum likelihood estimation of observer error-rates using the EM
   algorithm", J. R. Stat. Soc. C 28(1), 20–28 (1979). https://doi.org/10.2307/2346806

Examples
--------
>>> import pandas as pd
>>> d = pd.DataFrame({"study_id": ["s1"] * 3 + ["s2"] * 3 + ["s3"] * 3,
...                   "reader": ["A", "B", "C"] * 3,
...                   "label": [2, 2, 0, 0, 0, 0, 2, 2, 2]})
>>> DawidSkene().fit_predict(d).tolist()
[2, 0, 2]
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .._validation import check_choice, check_positive_int
from ..exceptions import InvalidParameterError
from ._base import (
    N_STATES,
    STATES,
    Annotations,
    BaseFusion,
    _label_series,
    _proba_frame,
    pooling_groups,
    register_fusion,
)
from .majority_vote import vote_counts

__all__ = ["DawidSkene", "dawid_skene_em"]


def dawid_skene_em(item: np.ndarray, reader: np.ndarray, label: np.ndarray, n_items: int, n_readers: int,
                   n_classes: int, init: np.ndarray, *, n_iter: int, tol: float
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, bool]:
    """Run Dawid–Skene EM on encoded annotations.

    Parameters
    ----------
    item, reader, label : ndarray of int, shape (n_annotations,)
        Codes, ``label`` in ``0 .. n_classes-1``; sorted by ``(item, reader)`` for reproducible sums.
    init : ndarray of shape (n_items, n_classes)
        Initial posteriors ``T`` (rows sum to 1).

    Returns
    -------
    posteriors : ndarray (n_items, n_classes)
    prior : ndarray (n_classes,)
    errors : ndarray (n_readers, n_classes, n_classes)
        ``errors[j, k, l] = P(reader j says l | true k)``; rows of a class the reader never saw are uniform.
    history : ndarray
        True log-likelihood after each iteration.
    converged : bool
    """
    K = n_classes
    Tk = np.ascontiguousarray(init.T)                          # (K, n_items) layout: fast row operations
    key = reader * K + label
    history: list[float] = []
    converged = False
    err = np.empty((n_readers, K, K))
    prior = Tk.mean(axis=1)
    with np.errstate(divide="ignore"):
        for _ in range(n_iter):
            prior = Tk.mean(axis=1)
            for k in range(K):
                err[:, k, :] = np.bincount(key, weights=Tk[k, item], minlength=n_readers * K).reshape(n_readers, K)
            mass = err.sum(axis=2, keepdims=True)
            err = np.divide(err, mass, out=np.full_like(err, 1.0 / K), where=mass > 0)
            log_err = np.log(err)
            logp = np.empty((K, n_items))
            for k in range(K):
                logp[k] = np.bincount(item, weights=log_err[reader, k, label], minlength=n_items) + np.log(prior[k])
            top = logp.max(axis=0)
            top[~np.isfinite(top)] = 0.0
            e = np.exp(logp - top)
            tot = e.sum(axis=0)
            Tk = e / tot
            ll = float((np.log(tot) + top).sum())
            if history and (ll - history[-1]) < tol * n_items:
                history.append(ll)
                converged = True
                break
            history.append(ll)
    T = Tk.T
    return T, prior, err, np.asarray(history), converged


@register_fusion("ds")
class DawidSkene(BaseFusion):
    """Dawid–Skene label fusion by EM (see the module docstring for the model and stopping rule).

    Parameters
    ----------
    n_iter : int, default=500
        Maximum number of EM iterations.
    tol : float, default=1e-9
        Stop when the log-likelihood per item rises by less than ``tol`` (``0``: stop only when it no
        longer rises at all).
    pooling : {'finding', 'joint'}, default='finding'
        One model per finding, or one model over all findings (shared confusion matrices). Without a
        ``finding`` column both are the same.
    init_smoothing : float, default=0.01
        Pseudo-count added to every state's votes in the initial posteriors (see the module docstring).

    Attributes
    ----------
    labels_ : pandas.Series
        Most probable state per item (ties between states → the smaller state; they need exactly equal
        posteriors).
    probas_ : pandas.DataFrame
        Posterior of each state, items × ``[0, 1, 2]``.
    priors_ : pandas.DataFrame
        Estimated prior per fitted group (index ``finding``; ``'*'`` for a joint or finding-less fit) ×
        ``[0, 1, 2]``.
    errors_ : pandas.DataFrame
        Long table ``finding, reader, true_label, observed_label, probability, weight``: the confusion
        matrices; ``weight`` is the expected number of items of ``true_label`` the reader labelled
        (a row with weight 0 is uniform by convention).
    log_likelihood_history_ : dict of str to ndarray
        True log-likelihood after each EM iteration, per group.
    fit_info_ : pandas.DataFrame
        Per group: ``finding, n_items, n_annotations, n_iter, log_likelihood, converged``.
    """

    def __init__(self, *, n_iter: int = 500, tol: float = 1e-9, pooling: str = "finding",
                 init_smoothing: float = 0.01) -> None:
        self.n_iter = n_iter
        self.tol = tol
        self.pooling = pooling
        self.init_smoothing = init_smoothing

    def _check_params(self) -> None:
        check_positive_int(self.n_iter, name="n_iter", func="DawidSkene")
        if isinstance(self.tol, bool) or not isinstance(self.tol, (int, float)) or not self.tol >= 0:
            raise InvalidParameterError(f"The 'tol' parameter of DawidSkene must be a float >= 0. Got {self.tol!r} instead.")
        check_choice(self.pooling, ("finding", "joint"), name="pooling", func="DawidSkene")
        v = self.init_smoothing
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not v >= 0:
            raise InvalidParameterError(f"The 'init_smoothing' parameter of DawidSkene must be a float >= 0. "
                                        f"Got {v!r} instead.")

    def _fit(self, ann: Annotations) -> None:
        self._check_params()
        proba = np.zeros((ann.n_items, N_STATES))
        priors, errors, info, history = {}, [], [], {}
        for name, items in pooling_groups(ann, self.pooling):
            sub = ann.subset(items)
            classes = np.unique(sub.label)
            lab = np.searchsorted(classes, sub.label)
            K = len(classes)
            init = vote_counts(sub)[:, classes] + self.init_smoothing
            init /= init.sum(axis=1, keepdims=True)
            T, prior, err, hist, conv = dawid_skene_em(sub.item, sub.reader, lab, sub.n_items, sub.n_readers, K,
                                                       init, n_iter=self.n_iter, tol=float(self.tol))
            proba[np.ix_(items, classes)] = T
            p = np.zeros(N_STATES)
            p[classes] = prior
            priors[name] = p
            weight = np.zeros((sub.n_readers, K))
            np.add.at(weight, sub.reader, T[sub.item])
            seen = np.unique(sub.reader)
            for j in seen:
                for a, k in enumerate(classes):
                    for b, m in enumerate(classes):
                        errors.append((name, ann.readers[j], int(k), int(m), float(err[j, a, b]), float(weight[j, a])))
            history[name] = hist
            info.append((name, sub.n_items, len(sub.item), len(hist), float(hist[-1]), bool(conv)))
        self.labels_ = _label_series(ann.items, proba.argmax(axis=1))
        self.probas_ = _proba_frame(ann.items, proba)
        self.priors_ = pd.DataFrame.from_dict(priors, orient="index", columns=list(STATES)).rename_axis("finding")
        self.errors_ = pd.DataFrame(errors, columns=["finding", "reader", "true_label", "observed_label",
                                                     "probability", "weight"])
        self.log_likelihood_history_ = history
        self.fit_info_ = pd.DataFrame(info, columns=["finding", "n_items", "n_annotations", "n_iter",
                                                     "log_likelihood", "converged"])
