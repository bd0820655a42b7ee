"""Dawid–Skene: EM with a full confusion matrix per reader (the estimator; its EM is
:func:`cxreval.stats.fit_dawid_skene`, which the reader study's latent reference fits too).

Model [1]_: item ``i`` has a latent true state ``z_i`` with prior ``p_k = P(z_i = k)``; reader ``j`` gives
state ``l`` with probability ``π_j[k, l] = P(y_ij = l | z_i = k)``, independently across readers. The
(marginal) log-likelihood of the observed labels is

.. math:: \\mathcal L(p, π) = \\sum_i \\log \\sum_k p_k \\prod_{j \\in R(i)} π_j[k, y_{ij}],

and EM maximises it: the E-step sets ``T_ik = P(z_i = k | y, p, π)``; the M-step sets
``p_k = mean_i T_ik`` and ``π_j[k, l] = Σ_{i: y_ij = l} T_ik / Σ_{i ∈ I(j)} T_ik``. Each iteration cannot
decrease :math:`\\mathcal L` (Dempster, Laird & Rubin, 1977); ``log_likelihood_history_`` records it after
every E-step and the tests check it is non-decreasing. EM starts from the soft majority vote
(``T_ik`` ∝ number of the item's readers saying ``k``, plus ``init_smoothing``).

Stopping rule
-------------
EM stops at the first iteration where :math:`\\mathcal L` per item rises by less than ``tol``
(default ``1e-9`` nats; *converged*), or after ``n_iter`` iterations (default 500; *not converged*),
whichever comes first. ``fit_info_`` reports, per fitted group, the iterations used, ``converged`` and
``final_change`` (the last rise of :math:`\\mathcal L` per item); ``cxreval fuse`` prints them in its
summary and ``--json`` output. Near a flat direction of the likelihood (e.g. a third state the truth never
takes) EM creeps: on ``bench/fusion_mace_simulation.py``'s readers (binary truth, 5 readers answering
NEG/UNC/POS) it needs 959 iterations at 10^5 items and 1,233 at 10^6 to reach ``tol``; stopped at 500
it is reported as not converged (final change 6.9e-9 and 1.2e-8 per item) and 0 and 113 of the labels
differ from the converged ones (accuracy against the truth 0.99372 both at 10^5; 0.993724 vs 0.993743 at
10^6). Raise ``n_iter`` to converge: on answer patterns (see below) an iteration costs microseconds to
milliseconds. The defaults are those of the tests and the published tables, which they reproduce.

Speed
-----
Items with the same answer pattern (the same readers giving the same labels) get the same posteriors, so
EM runs on the distinct patterns weighted by their counts (:func:`cxreval.stats.answer_patterns`): with 5 readers
and 3 states at most 1,024 patterns however many items. The sums are the item-by-item sums grouped,
equal to rounding.

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
...                   "source": ["A", "B", "C"] * 3,
...                   "state": [2, 2, 0, 0, 0, 0, 2, 2, 2]})
>>> DawidSkene().fit_predict(d).tolist()
[2, 0, 2]
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .._validation import check_choice, check_positive_int
from ..schema import FINDING, SOURCE
from ..stats._dawid_skene import fit_dawid_skene
from ._base import STATES, Annotations, GroupArrays, GroupedFusion, check_float, register_fusion

__all__ = ["DawidSkene", "ERRORS_COLUMNS"]

ERRORS_COLUMNS: tuple[str, ...] = (FINDING, SOURCE, "true_state", "observed_state", "probability", "weight")
"""Columns of :attr:`DawidSkene.errors_` (``ds_confusion.csv``)."""


@register_fusion("ds")
class DawidSkene(GroupedFusion):
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
        Long table ``finding, source, true_state, observed_state, probability, weight``
        (:data:`ERRORS_COLUMNS`): the confusion matrix of every reader (``source``); ``weight`` is the
        expected number of items of ``true_state`` the reader labelled (a row with weight 0 is uniform by
        convention).
    log_likelihood_history_ : dict of str to ndarray
        True log-likelihood after each EM iteration, per group.
    fit_info_ : pandas.DataFrame
        Per group: ``finding, n_items, n_annotations, n_patterns, n_iter, log_likelihood, converged,
        final_change`` (the stopping rule's outcome: iterations used, whether the rise of the
        log-likelihood per item fell below ``tol``, and its last value; NaN after one iteration).
    """

    def __init__(
        self, *, n_iter: int = 500, tol: float = 1e-9, pooling: str = "finding", init_smoothing: float = 0.01
    ) -> None:
        self.n_iter = n_iter
        self.tol = tol
        self.pooling = pooling
        self.init_smoothing = init_smoothing

    def _check_params(self) -> None:
        check_positive_int(self.n_iter, name="n_iter", func="DawidSkene")
        check_float(self.tol, name="tol", func="DawidSkene")
        check_choice(self.pooling, ("finding", "joint"), name="pooling", func="DawidSkene")
        check_float(self.init_smoothing, name="init_smoothing", func="DawidSkene")

    def _fit_group(self, g: GroupArrays, extra: object = None) -> dict[str, np.ndarray]:
        item, reader, label, n_items, n_readers = g
        fit = fit_dawid_skene(
            item,
            reader,
            label,
            n_items,
            n_readers,
            n_iter=self.n_iter,
            tol=float(self.tol),
            init_smoothing=self.init_smoothing,
        )
        hist = fit.history
        change = float(hist[-1] - hist[-2]) / n_items if len(hist) > 1 else float("nan")
        return {
            "classes": fit.classes,
            "proba": fit.proba,
            "prior": fit.prior,
            "errors": fit.errors,
            "weight": fit.weight,
            "history": hist,
            "converged": np.bool_(fit.converged),
            "seen": np.unique(reader),
            "n_annotations": np.int64(len(item)),
            "n_patterns": np.int64(fit.n_patterns),
            "n_iter": np.int64(len(hist)),
            "log_likelihood": np.float64(hist[-1]),
            "final_change": change,
        }

    def _group_tables(
        self, ann: Annotations, groups: list[tuple[str, np.ndarray]], parts: list[dict[str, np.ndarray]]
    ) -> None:
        priors, errors, history = {}, [], {}
        for (name, _), part in zip(groups, parts):
            classes, err, weight = part["classes"], part["errors"], part["weight"]
            p = np.zeros(len(STATES))
            p[classes] = part["prior"]
            priors[name] = p
            for j in part["seen"]:
                for a, k in enumerate(classes):
                    for b, m in enumerate(classes):
                        errors.append(
                            (name, ann.readers[j], int(k), int(m), float(err[j, a, b]), float(weight[j, a]))
                        )
            history[name] = part["history"]
        self.priors_ = pd.DataFrame.from_dict(priors, orient="index", columns=list(STATES)).rename_axis(
            FINDING
        )
        self.errors_ = pd.DataFrame(errors, columns=list(ERRORS_COLUMNS))
        self.log_likelihood_history_ = history
