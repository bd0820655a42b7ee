"""The AUC of a model's scores against a latent truth known through posterior probabilities.

:func:`latent_auc_score` is the Mann–Whitney statistic with each ordered pair ``(i, j)`` of distinct studies
weighted by the probability that ``i`` is positive and ``j`` negative:

.. math:: \\mathrm{AUC} = \\frac{\\sum_{i \\ne j} c_i c_j\\, p_i (1 - p_j)\\,([s_i > s_j] + \\tfrac12 [s_i = s_j])}
          {\\sum_{i \\ne j} c_i c_j\\, p_i (1 - p_j)}

with ``p`` the posteriors and ``c`` the sample weights (bootstrap counts; copies of one study are never
paired, their truth being the same). With 0/1 posteriors it is the ordinary AUC
(``sklearn.metrics.roc_auc_score``). It is a ratio of expectations: with posteriors that are the true
conditional probabilities of the truth given *everything the scores depend on*, numerator and denominator are
unbiased for those of the true-label AUC. Posteriors from the readers alone are not: they ignore the score,
and the statistic is then diluted toward 0.5 (see :mod:`cxreval.latent`). One sort of the scores and
cumulative sums: ``O(n log n)``, vectorised over rows of weights and posteriors.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..exceptions import InvalidParameterError
from ..stats._auc_kernel import soft_auc_rows

__all__ = ["latent_auc_score", "latent_auc_rows"]


def latent_auc_rows(score: np.ndarray, posterior: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """:func:`latent_auc_score` for every row of ``posterior`` and ``weights`` (each (B, n)); inputs trusted.

    NaN where no pair of distinct studies has positive weight.
    """
    return soft_auc_rows(
        np.asarray(score, dtype=float), np.asarray(posterior, dtype=float), np.asarray(weights, dtype=float)
    )


def latent_auc_score(
    score: Sequence[float] | np.ndarray,
    posterior: Sequence[float] | np.ndarray,
    *,
    sample_weight: Sequence[float] | np.ndarray | None = None,
) -> float:
    """The AUC of ``score`` against a truth known through ``posterior`` probabilities of the positive class.

    Parameters
    ----------
    score : array-like of shape (n_studies,)
        Finite scores; higher means more likely positive.
    posterior : array-like of shape (n_studies,)
        ``P(T_i = 1 | data)`` in [0, 1]; for an estimate of the AUC against the truth, the score-aware
        posteriors of :func:`~cxreval.latent.fit_latent_class` fitted with this ``score``.
    sample_weight : array-like of shape (n_studies,), optional
        Non-negative weights (e.g. bootstrap counts).

    Returns
    -------
    auc : float
        NaN when no pair of distinct studies has weight (e.g. every posterior 1).

    Examples
    --------
    >>> latent_auc_score([0.1, 0.4, 0.35, 0.8], [0, 0, 1, 1])
    0.75
    >>> round(latent_auc_score([0.1, 0.4, 0.35, 0.8], [0.1, 0.2, 0.9, 0.9]), 4)
    0.7388
    """
    s = np.asarray(score, dtype=float)
    p = np.asarray(posterior, dtype=float)
    if s.ndim != 1 or p.shape != s.shape:
        raise InvalidParameterError(
            f"latent_auc_score: 'score' and 'posterior' must be 1-D of one length; got "
            f"shapes {s.shape} and {p.shape}."
        )
    if not np.isfinite(s).all():
        i = int(np.flatnonzero(~np.isfinite(s))[0])
        raise InvalidParameterError(
            f"latent_auc_score: 'score' must be finite; found {float(s[i])!r} at {i}."
        )
    if not (np.isfinite(p) & (p >= 0) & (p <= 1)).all():
        i = int(np.flatnonzero(~(np.isfinite(p) & (p >= 0) & (p <= 1)))[0])
        raise InvalidParameterError(
            f"latent_auc_score: 'posterior' must be probabilities in [0, 1]; found {float(p[i])!r} at {i}."
        )
    if sample_weight is None:
        w = np.ones_like(s)
    else:
        w = np.asarray(sample_weight, dtype=float)
        if w.shape != s.shape or not np.isfinite(w).all() or (w < 0).any():
            raise InvalidParameterError(
                f"latent_auc_score: 'sample_weight' must be finite, non-negative, of shape "
                f"{s.shape}; got shape {w.shape}."
            )
    if s.size == 0:
        return float("nan")
    return float(latent_auc_rows(s, p[None, :], w[None, :])[0])
