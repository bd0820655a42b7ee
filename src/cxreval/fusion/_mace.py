"""MACE: multi-annotator competence estimation (Hovy et al., 2013).

Model [1]_: the true state ``T_i`` of item ``i`` is uniform over the states in use. On each item a reader
``j`` *knows* with probability ``θ_j`` (its **competence**) and then gives ``T_i``; otherwise it *spams*
and gives a state drawn from its **spamming distribution** ``ξ_j``:

.. math:: P(y_{ij} = l \\mid T_i = k) = θ_j [l = k] + (1 - θ_j) ξ_j[l].

Parameters are fitted by EM or, by default, variational Bayes (``method='vb'``) with a symmetric
``Beta(alpha, beta)`` prior on ``θ_j`` and a symmetric ``Dirichlet(10)`` prior on ``ξ_j``, as the
reference implementation and crowd-kit do (the VB M-step sets ``exp(E[log θ])``, which need not sum
to 1, and those values enter the E-step). Each of ``n_restarts`` runs starts from its own random
parameters (uniform on ``[1, 2.5]``, normalised) drawn from one generator made from ``rng``, runs
``n_iter`` iterations, and the run with the highest marginal log-likelihood
:math:`\\sum_i \\log \\frac1K \\sum_k \\prod_j P(y_{ij} \\mid T_i = k)` is kept
(``log_likelihoods_`` lists every run's).

Differences from crowd-kit 1.4.2
--------------------------------
- crowd-kit re-seeds every restart with the same ``random_state``, so its 10 restarts are one run done
  10 times; here each restart draws from the generator in turn.
- crowd-kit indexes readers by order of first appearance but sums their spamming counts in sorted
  order (``groupby``), so on unsorted input reader parameters are swapped between readers and the result
  depends on row order; it matches the model only when the input is sorted by reader (and label).
  cxreval sorts readers, items and labels before fitting and gives the same output for any row order.

As for Dawid–Skene, the state space of a fit is the set of states used; ``pooling`` chooses one model
per finding or one joint model, and EM runs on the distinct answer patterns weighted by their counts
(:func:`cxreval.stats.answer_patterns`; equal to the item-by-item sums to rounding).

Stopping rule: each restart runs ``n_iter`` iterations (the reference implementation's and crowd-kit's
rule; default). With ``tol`` set, a restart stops earlier, at the first iteration where the marginal
log-likelihood per item changes by less than ``tol`` in absolute value (VB does not maximise that
likelihood, so it may also fall). ``fit_info_`` reports the kept restart's iterations, whether it stopped
on ``tol`` (``converged``) and its last change per item.

Binary truth, readers who also answer "uncertain": a property of the model, not a defect
---------------------------------------------------------------------------------------
On simulated readers (``bench/fusion_mace_simulation.py``: binary truth with 10 % positives, 5 readers with
known confusions who answer NEG / UNC / POS) MACE fuses about a quarter of the items to *uncertain* and
half of the negatives to UNC or POS (n = 20,000: accuracy 0.55, specificity 0.51; MV 0.96, DS 0.96), as
the same simulation gives at n = 10^6 (MACE 0.646). crowd-kit 1.4.2's MACE gives the **same labels on 100 % of
the items**; every restart, EM as well as VB, and a start at competent readers (θ = 0.8) reach the same
log-likelihood, so it is the model's optimum, not a fitting defect. The mechanism: the model has no class
prior (the true state is uniform over the K = 3 states used) and no reader error that depends on the truth,
so it explains the dominant NEG answers as *spam* (ξ_j[NEG] 0.71-0.95, θ_j ≈ 0.2). An answer ``l`` then
adds ``log(1 + θ_j / ((1 - θ_j) ξ_j[l]))`` to the evidence for state ``l``: about 0.28 for a NEG answer
but 3.3 for a rare POS or UNC one, so a single UNC or POS outweighs four NEG answers. Expect this whenever
one state dominates and readers use the other states with different, truth-independent frequencies;
prefer Dawid-Skene (class prior, full confusion matrices) there. :func:`fuse_labels` and
``cxreval fuse`` warn when a state is fused more than 1.5 times as often as any reader uses it
(:mod:`cxreval.fusion.diagnostics`).

Reader caveat (VinDr-CXR)
-------------------------
On VinDr-CXR, readers R1–R7 never mark a finding and R8–R10 read almost all abnormal images. A reader
who always says *negative* on images that happen to be normal looks perfectly competent, and one who
is handed the hard images looks less so: competence there mostly measures which images a reader read.

References
----------
.. [1] D. Hovy, T. Berg-Kirkpatrick, A. Vaswani and E. Hovy, "Learning whom to trust with MACE",
   Proc. NAACL-HLT 2013, 1120–1130. https://aclanthology.org/N13-1132

Examples
--------
>>> import pandas as pd
>>> d = pd.DataFrame({"study_id": ["s1"] * 3 + ["s2"] * 3 + ["s3"] * 3 + ["s4"] * 3,
...                   "source": ["A", "B", "C"] * 4,
...                   "state": [2, 2, 0, 0, 0, 0, 2, 2, 2, 0, 0, 2]})
>>> MACE(rng=0).fit_predict(d).tolist()
[2, 0, 2, 0]
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import pandas as pd

from .._typing import RNGLike
from .._validation import check_choice, check_positive_int, normalize_rng
from ..exceptions import CxrevalError, InvalidParameterError
from ..schema import FINDING, SOURCE, STATE
from ..stats._answer_patterns import group_patterns
from ._base import Annotations, GroupArrays, GroupedFusion, check_float, register_fusion

__all__ = [
    "MACE",
    "MACEFit",
    "mace_fit",
    "MACEStarts",
    "mace_starts",
    "COMPETENCE_COLUMNS",
    "SPAMMING_COLUMNS",
    "MACE_METHODS",
]

MACE_METHODS: tuple[str, ...] = ("vb", "em")
"""MACE's fitting variants (``MACE(method=...)``): variational Bayes with Beta/Dirichlet priors (default, as the
reference implementation) or plain EM with additive smoothing."""

COMPETENCE_COLUMNS: tuple[str, ...] = (FINDING, SOURCE, "competence", "n_annotations")
"""Columns of :attr:`MACE.competence_` (``mace_competence.csv``)."""
SPAMMING_COLUMNS: tuple[str, ...] = (FINDING, SOURCE, STATE, "probability")
"""Columns of :attr:`MACE.spamming_`."""


def _e_step(
    item: np.ndarray,
    reader: np.ndarray,
    label: np.ndarray,
    n_items: int,
    K: int,
    spam: np.ndarray,
    strategy: np.ndarray,
    by_label: list[np.ndarray] | None = None,
    weight: np.ndarray | None = None,
) -> tuple[float, np.ndarray, np.ndarray, np.ndarray]:
    """Posteriors of the true states, expected spamming/knowing counts and the marginal log-likelihood.

    With ``s = (1 - θ_j) ξ_j[l]`` and ``c = θ_j`` for an annotation ``l`` by reader ``j``,
    ``P(y | T = k) = s + c [k = l]``, so ``log P(y_i | T_i = k) = Σ log s + Σ_{l = k} log(1 + c / s)``;
    ``P(know | data) = P(T = l | data) c / (s + c)`` and ``P(spam | data) = 1 - P(know | data)``.
    ``weight`` (default 1) is the number of items each ``item`` stands for (answer patterns).

    Returns ``(log-likelihood, posteriors (K, n_items), P(spam) and P(know) per annotation)``.
    """
    if by_label is None:
        by_label = [np.flatnonzero(label == k) for k in range(K)]
    s_xi = spam[reader, 0] * strategy[reader, label]
    know = spam[reader, 1]
    base = np.bincount(item, weights=np.log(s_xi), minlength=n_items)
    boost = np.log1p(know / s_xi)
    logg = np.empty((K, n_items))
    for k, m in enumerate(by_label):
        logg[k] = base + np.bincount(item[m], weights=boost[m], minlength=n_items)
    top = logg.max(axis=0)
    g = np.exp(logg - top)
    tot = g.sum(axis=0)
    post = g / tot
    if weight is None:
        ll = float((np.log(tot) + top).sum() - n_items * np.log(K))
    else:
        ll = float(weight @ (np.log(tot) + top) - weight.sum() * np.log(K))
    p_know = post.ravel()[label * n_items + item] * know / (s_xi + know)
    return ll, post, 1.0 - p_know, p_know


def _vb_normalize(counts: np.ndarray, prior: float) -> np.ndarray:
    from scipy.special import digamma

    x = counts + prior
    return np.exp(digamma(x)) / np.exp(digamma(x.sum(axis=1, keepdims=True)))


def _em_normalize(counts: np.ndarray, smoothing: float) -> np.ndarray:
    x = counts + smoothing
    return x / x.sum(axis=1, keepdims=True)


class MACEStarts(NamedTuple):
    """What :func:`mace_starts` returns: the spamming/knowing parameters ``(n_restarts, n_readers, 2)`` and the
    spamming distributions ``(n_restarts, n_readers, K)`` of each run's start."""

    spam: np.ndarray
    strategy: np.ndarray


def mace_starts(rng: RNGLike, n_restarts: int, n_readers: int, K: int) -> MACEStarts:
    """The random starts of ``n_restarts`` runs, drawn from ``rng`` in run order: spamming/knowing
    parameters ``(n_restarts, n_readers, 2)`` and spamming distributions ``(n_restarts, n_readers, K)``
    (uniform on ``[1, 2.5]``, normalised). A generator is drawn from as it is; a seed makes one."""
    rng = normalize_rng(rng)
    spams, strategies = np.empty((n_restarts, n_readers, 2)), np.empty((n_restarts, n_readers, K))
    for r in range(n_restarts):
        spam = rng.uniform(1.0, 2.5, size=(n_readers, 2))
        strategy = rng.uniform(1.0, 2.5, size=(n_readers, K))
        spams[r] = spam / spam.sum(axis=1, keepdims=True)
        strategies[r] = strategy / strategy.sum(axis=1, keepdims=True)
    return MACEStarts(spams, strategies)


class MACEFit(NamedTuple):
    """What :func:`mace_fit` returns (its Returns section)."""

    posteriors: np.ndarray
    spam: np.ndarray
    strategy: np.ndarray
    log_likelihoods: np.ndarray
    n_iters: np.ndarray
    changes: np.ndarray
    best_run: int


def mace_fit(
    item: np.ndarray,
    reader: np.ndarray,
    label: np.ndarray,
    n_items: int,
    n_readers: int,
    K: int,
    *,
    n_restarts: int,
    n_iter: int,
    method: str,
    alpha: float,
    beta: float,
    smoothing: float,
    rng: RNGLike = None,
    starts: tuple[np.ndarray, np.ndarray] | None = None,
    weight: np.ndarray | None = None,
    tol: float | None = None,
) -> MACEFit:
    """Fit MACE on encoded annotations.

    Parameters
    ----------
    rng, starts
        The random starts: drawn from ``rng`` (:func:`mace_starts`) unless given as ``starts``.
    weight : ndarray of shape (n_items,), optional
        Number of items each ``item`` stands for (answer patterns); default 1 each.
    tol : float, optional
        Stop a restart when the log-likelihood per item changes by less than ``tol``; default: run
        ``n_iter`` iterations.

    Returns
    -------
    posteriors : ndarray (n_items, K)
    spam : ndarray (n_readers, 2)
        ``[:, 0]`` spamming, ``[:, 1]`` knowing (competence) parameters of the best run.
    strategy : ndarray (n_readers, K)
        Spamming distributions of the best run.
    log_likelihoods : ndarray (n_restarts,)
        Final marginal log-likelihood of every run.
    n_iters : ndarray of int (n_restarts,)
        Iterations each run used.
    changes : ndarray (n_restarts,)
        Last change of the log-likelihood per item of each run (NaN without iterations).
    best : int
        Index of the kept run.
    """
    from scipy.special import digamma

    if starts is None:
        if rng is None:
            raise InvalidParameterError("mace_fit needs either rng or starts.")
        starts = mace_starts(rng, n_restarts, n_readers, K)
    w_ann = None if weight is None else np.asarray(weight, dtype=np.float64)[item]
    total = float(n_items if weight is None else np.sum(weight))
    key = reader * K + label
    by_label = [np.flatnonzero(label == k) for k in range(K)]
    best: tuple[float, np.ndarray | None, np.ndarray | None, int] = (-np.inf, None, None, -1)
    lls = np.empty(n_restarts)
    n_iters = np.zeros(n_restarts, dtype=np.int64)
    changes = np.full(n_restarts, np.nan)
    theta_prior = np.array([alpha, beta])
    for r in range(n_restarts):
        spam, strategy = starts[0][r], starts[1][r]
        ll, post, p_spam, p_know = _e_step(item, reader, label, n_items, K, spam, strategy, by_label, weight)
        for it in range(n_iter):
            if w_ann is not None:
                p_spam, p_know = p_spam * w_ann, p_know * w_ann
            strat_counts = np.bincount(key, weights=p_spam, minlength=n_readers * K).reshape(n_readers, K)
            know_counts = np.stack(
                [
                    np.bincount(reader, weights=p_spam, minlength=n_readers),
                    np.bincount(reader, weights=p_know, minlength=n_readers),
                ],
                axis=1,
            )
            if method == "vb":
                spam = np.exp(digamma(know_counts + theta_prior)) / np.exp(
                    digamma((know_counts + theta_prior).sum(axis=1, keepdims=True))
                )
                strategy = _vb_normalize(strat_counts, 10.0)
            else:
                spam = _em_normalize(know_counts, smoothing)
                strategy = _em_normalize(strat_counts, smoothing)
            prev = ll
            ll, post, p_spam, p_know = _e_step(
                item, reader, label, n_items, K, spam, strategy, by_label, weight
            )
            n_iters[r] = it + 1
            changes[r] = (ll - prev) / total
            if tol is not None and abs(changes[r]) < tol:
                break
        lls[r] = ll
        if ll > best[0]:
            best = (ll, spam, strategy, r)
    if best[1] is None:
        raise CxrevalError(
            f"MACE: the marginal log-likelihood was not finite in any of the {n_restarts} "
            f"restart(s) (values {lls.tolist()}); check the annotations and the smoothing."
        )
    _, best_spam, best_strategy, r_best = best
    assert best_spam is not None and best_strategy is not None  # a finite restart set them
    _, post, _, _ = _e_step(item, reader, label, n_items, K, best_spam, best_strategy, by_label, weight)
    return MACEFit(post.T, best_spam, best_strategy, lls, n_iters, changes, r_best)


@register_fusion("mace")
class MACE(GroupedFusion):
    """MACE label fusion with reader competence and spamming distributions (see the module docstring).

    Parameters
    ----------
    n_restarts : int, default=10
        Number of runs, each from its own random start; the best marginal log-likelihood is kept.
    n_iter : int, default=50
        Iterations per run (the most, when ``tol`` is set).
    method : {'vb', 'em'}, default='vb'
        Variational Bayes with Beta/Dirichlet priors, or plain EM with additive ``smoothing``.
    alpha, beta : float, default=0.5
        Beta prior on the spamming/knowing probabilities (``vb``).
    smoothing : float or None, default=None
        Additive smoothing of the EM counts; ``None`` means ``0.01 / K`` (``em``).
    pooling : {'finding', 'joint'}, default='finding'
        One model per finding, or one model over all findings.
    tol : float or None, default=None
        Stop a run when the marginal log-likelihood per item changes by less than ``tol``; ``None``: run
        ``n_iter`` iterations (the reference implementation's rule).
    rng : None, int or numpy.random.Generator, default=None
        Source of the random starts.

    Attributes
    ----------
    labels_ : pandas.Series
        Most probable state per item (exact ties → the smaller state).
    probas_ : pandas.DataFrame
        Posterior of each state, items × ``[0, 1, 2]``.
    competence_ : pandas.DataFrame
        ``finding, source, competence, n_annotations`` (:data:`COMPETENCE_COLUMNS`): the knowing parameter
        ``θ_j`` of each reader (``source``).
    spamming_ : pandas.DataFrame
        ``finding, source, state, probability`` (:data:`SPAMMING_COLUMNS`): the spamming distributions ``ξ_j``.
    log_likelihoods_ : dict of str to ndarray
        Final marginal log-likelihood of each restart, per group (``'*'`` when not per finding).
    fit_info_ : pandas.DataFrame
        Per group: ``finding, n_items, n_annotations, n_patterns, n_iter, log_likelihood, converged,
        final_change`` of the kept run (iterations used, whether it stopped on ``tol``, last change of the
        log-likelihood per item).
    """

    def __init__(
        self,
        *,
        n_restarts: int = 10,
        n_iter: int = 50,
        method: str = "vb",
        alpha: float = 0.5,
        beta: float = 0.5,
        smoothing: float | None = None,
        pooling: str = "finding",
        tol: float | None = None,
        rng: RNGLike = None,
    ) -> None:
        self.n_restarts = n_restarts
        self.n_iter = n_iter
        self.method = method
        self.alpha = alpha
        self.beta = beta
        self.smoothing = smoothing
        self.pooling = pooling
        self.tol = tol
        self.rng = rng

    def _check_params(self) -> None:
        check_positive_int(self.n_restarts, name="n_restarts", func="MACE")
        check_positive_int(self.n_iter, name="n_iter", func="MACE", minimum=0)
        check_choice(self.method, MACE_METHODS, name="method", func="MACE")
        check_choice(self.pooling, ("finding", "joint"), name="pooling", func="MACE")
        for name in ("alpha", "beta", "smoothing"):
            check_float(
                getattr(self, name), name=name, func="MACE", strict=True, allow_none=name == "smoothing"
            )
        check_float(self.tol, name="tol", func="MACE", allow_none=True)
        self._gen = normalize_rng(self.rng)

    def _draws(self, groups: list[tuple[str, np.ndarray]], subs: list[Annotations]) -> list[object]:
        return [mace_starts(self._gen, self.n_restarts, s.n_readers, len(np.unique(s.label))) for s in subs]

    def _fit_group(self, g: GroupArrays, extra: object = None) -> dict[str, np.ndarray]:
        item, reader, label, n_items, n_readers = g
        classes, pat = group_patterns(item, reader, label, n_items, n_readers)
        K = len(classes)
        smoothing = 0.01 / K if self.smoothing is None else float(self.smoothing)
        post, spam, strategy, ll, n_iters, changes, r = mace_fit(
            pat.item,
            pat.reader,
            pat.label,
            pat.n_patterns,
            n_readers,
            K,
            n_restarts=self.n_restarts,
            n_iter=self.n_iter,
            method=self.method,
            alpha=float(self.alpha),
            beta=float(self.beta),
            smoothing=smoothing,
            starts=extra,  # type: ignore[arg-type]
            weight=pat.weight,
            tol=None if self.tol is None else float(self.tol),
        )
        n_ann = np.bincount(reader, minlength=n_readers)
        return {
            "classes": classes,
            "proba": post[pat.inverse],
            "spam": spam,
            "strategy": strategy,
            "ll": ll,
            "n_ann": n_ann,
            "n_iter": n_iters[r],
            "final_change": changes[r],
            "converged": np.bool_(self.tol is not None and n_iters[r] < self.n_iter),
            "n_patterns": np.int64(pat.n_patterns),
            "n_annotations": n_ann.sum(),
            "log_likelihood": ll.max(),
        }

    def _group_tables(
        self, ann: Annotations, groups: list[tuple[str, np.ndarray]], parts: list[dict[str, np.ndarray]]
    ) -> None:
        comp, spam_rows, lls = [], [], {}
        for (name, _), part in zip(groups, parts):
            classes, spam, strategy, n_ann = part["classes"], part["spam"], part["strategy"], part["n_ann"]
            for j in np.flatnonzero(n_ann):
                comp.append((name, ann.readers[j], float(spam[j, 1]), int(n_ann[j])))
                for a, k in enumerate(classes):
                    spam_rows.append((name, ann.readers[j], int(k), float(strategy[j, a])))
            lls[name] = part["ll"]
        self.competence_ = pd.DataFrame(comp, columns=list(COMPETENCE_COLUMNS))
        self.spamming_ = pd.DataFrame(spam_rows, columns=list(SPAMMING_COLUMNS))
        self.log_likelihoods_ = lls
