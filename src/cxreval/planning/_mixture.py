"""A two-class latent model of binary references and the models' scores, fitted by EM.

The model: ``T ~ Bernoulli(prevalence)``; each reference ``r`` says positive with probability ``sensitivity_r``
when ``T = 1`` and ``1 - specificity_r`` when ``T = 0``; the scores, each as the normal quantile of its mid-rank
(``x = Phi^-1((rank - 1/2) / n)``), are multivariate normal with class means ``mu_T`` and a common covariance given
``T``; references and scores are independent given ``T``. With a single reference this normal score model is what
identifies it (a parametric assumption: the model is not identified without it). Studies whose truth is known
(``anchor``, 1.0/0.0; NaN elsewhere) enter with their truth: the likelihood of the two-phase design, in which
the selection of the anchored studies depends only on observed labels and scores (missing at random).

Why not :func:`cxreval.latent.fit_latent_class`: that model is fitted per model (one score, a spline or binned
score model, identified by three or more readers or an anchor), so each model gets its own posteriors. The planner
needs one posterior per study shared by every model, so that the AUC difference of two models, each study's reveal
effect on it and each Monte Carlo draw of the truth are of one truth; and it must work from a single cheap reference,
where only a parametric score model identifies the truth. Hence one joint model of all the scores.
"""

from __future__ import annotations

import numpy as np

__all__ = ["fit_joint", "log_odds"]

_EPS = 1e-3


def log_odds(
    prev: np.ndarray,
    sens: np.ndarray,
    spec: np.ndarray,
    mu1: np.ndarray,
    mu0: np.ndarray,
    cov: np.ndarray,
    yo: np.ndarray,
    no: np.ndarray,
    x: np.ndarray,
) -> np.ndarray:
    """``(D, n)`` log posterior odds of ``T = 1`` under D parameter sets (prevalence ``(D,)``, sensitivities and
    specificities ``(D, r)``, class means ``(D, p)``, common covariances ``(D, p, p)``), from the references'
    positive (``yo``) and negative (``no``) indicators ``(n, r)`` and the normal scores ``x`` ``(n, p)``."""
    from scipy.special import logit

    beta = np.linalg.solve(cov, (mu1 - mu0)[:, :, None])[:, :, 0]
    const = 0.5 * (
        (mu1 * np.linalg.solve(cov, mu1[:, :, None])[:, :, 0]).sum(axis=1)
        - (mu0 * np.linalg.solve(cov, mu0[:, :, None])[:, :, 0]).sum(axis=1)
    )
    return (
        logit(prev)[:, None]
        + np.log(sens / (1 - spec)) @ yo.T
        + np.log((1 - sens) / spec) @ no.T
        + beta @ x.T
        - const[:, None]
    )


def fit_joint(
    references: np.ndarray,
    x: np.ndarray,
    *,
    anchor: np.ndarray | None = None,
    start: np.ndarray | None = None,
    max_iter: int = 5000,
    tol: float = 1e-7,
    accelerate: bool = False,
) -> tuple[np.ndarray, bool]:
    """Posteriors ``P(T = 1 | references, x, anchor)`` by EM, and whether EM converged.

    Parameters
    ----------
    references : ndarray of shape (n, r)
        1.0 / 0.0 / NaN (not labelled).
    x : ndarray of shape (n, p)
        The scores on the normal scale (:func:`cxreval.stats.normal_scores`).
    anchor : ndarray of shape (n,) or (D, n), optional
        Known truths (1.0 / 0.0, NaN unknown); with shape (D, n), D models are fitted at once (one per row) and
        the posteriors have that shape.
    start : ndarray of shape (n,), optional
        Starting posteriors (default: the mean of the references and a logistic of the mean score).
    accelerate : bool, default=False
        SQUAREM steps (two EM steps extrapolated, then one EM step; stopped when a plain EM step changes no
        posterior by ``tol``): the same fixed point in far fewer iterations, for the many fits of the power's Monte
        Carlo; the estimates themselves use plain EM.
    """
    from scipy.special import expit

    y = np.asarray(references, dtype=float)
    y = y[:, None] if y.ndim == 1 else y
    xs = np.asarray(x, dtype=float)
    n, p = xs.shape
    obs = ~np.isnan(y)
    yo = (obs & (y == 1)).astype(float)
    no = (obs & (y == 0)).astype(float)
    batched = anchor is not None and np.ndim(anchor) == 2
    anc = np.atleast_2d(np.full(n, np.nan) if anchor is None else np.asarray(anchor, dtype=float))
    known = ~np.isnan(anc)
    truth = np.nan_to_num(anc)
    if start is None:
        k = obs.sum(axis=1)
        w0 = np.clip(np.where(k > 0, yo.sum(axis=1) / np.maximum(k, 1), 0.5), 0.05, 0.95)
        w0 = np.clip(0.5 * w0 + 0.5 * expit(xs.mean(axis=1)), 0.02, 0.98)
    else:
        w0 = np.asarray(start, dtype=float)
    c = np.ones((1, n))
    sxx = (xs.T @ xs)[None]
    d = max(len(c), len(anc))
    c, known, truth = (np.broadcast_to(a, (d, n)) for a in (c, known, truth))
    sxx = np.broadcast_to(sxx, (d, p, p))
    w = np.where(known, truth, w0)
    ridge = 1e-6 * np.eye(p)

    def step(rows: np.ndarray, wa: np.ndarray) -> np.ndarray:
        """One EM iteration (M-step, then E-step) of the fits ``rows`` from their posteriors ``wa``."""
        ca = c[rows]
        total = ca.sum(axis=1)
        cw, cv = ca * wa, ca * (1 - wa)
        sw = cw.sum(axis=1)
        prev = np.clip(sw / total, _EPS, 1 - _EPS)
        sens = np.clip((cw @ yo + 0.5) / (cw @ (yo + no) + 1.0), _EPS, 1 - _EPS)
        spec = np.clip((cv @ no + 0.5) / (cv @ (yo + no) + 1.0), _EPS, 1 - _EPS)
        mu1 = (cw @ xs) / np.maximum(sw, 1e-12)[:, None]
        mu0 = (cv @ xs) / np.maximum(total - sw, 1e-12)[:, None]
        cov = (
            sxx[rows]
            - sw[:, None, None] * mu1[:, :, None] * mu1[:, None, :]
            - (total - sw)[:, None, None] * mu0[:, :, None] * mu0[:, None, :]
        ) / total[:, None, None] + ridge
        return np.where(
            known[rows], truth[rows], expit(log_odds(prev, sens, spec, mu1, mu0, cov, yo, no, xs))
        )

    active = np.arange(d)  # the fits not yet converged: each stops at its own tolerance
    for _ in range(max_iter):
        wa = w[active]
        w_new = step(active, wa)
        change = np.max(np.abs(w_new - wa), axis=1)
        if (
            accelerate
        ):  # SQUAREM (Varadhan & Roland 2008, SqS3): extrapolate two EM steps, then one more EM step
            w2 = step(active, w_new)
            r, v = w_new - wa, w2 - 2 * w_new + wa
            with np.errstate(invalid="ignore", divide="ignore"):
                alpha = -np.sqrt((r * r).sum(axis=1) / (v * v).sum(axis=1))
            alpha = np.minimum(np.nan_to_num(alpha, nan=-1.0), -1.0)[:, None]
            w_new = step(active, np.clip(wa - 2 * alpha * r + alpha**2 * v, 0.0, 1.0))
        w[active] = w_new
        active = active[~(change < tol)]
        if not len(active):
            break
    converged = not len(active)
    return (w if batched else w[0]), converged
