"""The ROC-AUC of one set of binary labels and scores, plain or count-weighted (vectorised over replicates).

Both are the tie-aware Mann–Whitney form of :mod:`cxreval.classification`, computed by the private kernel
``cxreval.stats._auc_kernel`` (exact integer sums for integer weights), equal to ``sklearn.metrics.roc_auc_score``.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence

import numpy as np

from ..exceptions import InvalidParameterError, UndefinedMetricWarning
from ..stats._auc_kernel import AUCIndex, binary_labels, finite_scores, weighted_auc_float

__all__ = ["roc_auc_score", "weighted_auc"]


def roc_auc_score(
    y_true: Sequence[int] | np.ndarray,
    y_score: Sequence[float] | np.ndarray,
    *,
    sample_weight: Sequence[float] | np.ndarray | None = None,
) -> float:
    """Area under the ROC curve of binary labels, ties counted one half (as scikit-learn's).

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        0/1 labels.
    y_score : array-like of shape (n_samples,)
        Finite scores; higher means more likely positive.
    sample_weight : array-like of shape (n_samples,), optional
        Non-negative weights (e.g. bootstrap counts).

    Returns
    -------
    auc : float
        NaN (with :class:`~cxreval.exceptions.UndefinedMetricWarning`) if one class is absent.
    """
    y = binary_labels(y_true, "roc_auc_score")
    s = finite_scores(y_score, y.size, "roc_auc_score")
    if sample_weight is None:
        out = AUCIndex(y, s).auc(np.ones((1, y.size), dtype=np.int64))[0]
    else:
        w = np.asarray(sample_weight, dtype=float)
        if w.shape != y.shape or (w < 0).any() or not np.isfinite(w).all():
            raise InvalidParameterError(
                "roc_auc_score: 'sample_weight' must be finite, non-negative, of shape "
                f"{y.shape}; got shape {w.shape}."
            )
        out = weighted_auc_float(y, s, w[None, :])[0]
    if np.isnan(out):
        warnings.warn(
            "Only one class present in y_true; ROC AUC is not defined and NaN is returned.",
            UndefinedMetricWarning,
            stacklevel=2,
        )
    return float(out)


def weighted_auc(
    y_true: Sequence[int] | np.ndarray, y_score: Sequence[float] | np.ndarray, weights: np.ndarray
) -> np.ndarray:
    """Count-weighted AUC for every row of ``weights`` (vectorised over bootstrap replicates).

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
    y_score : array-like of shape (n_samples,)
    weights : ndarray of shape (n_resamples, n_samples)
        Non-negative integer counts (exact integer arithmetic; only the final division rounds) or
        non-negative floats.

    Returns
    -------
    auc : ndarray of shape (n_resamples,)
        NaN in rows where a class has zero total weight (no warning; count them).
    """
    y = binary_labels(y_true, "weighted_auc")
    s = finite_scores(y_score, y.size, "weighted_auc")
    w = np.asarray(weights)
    if w.ndim != 2 or w.shape[1] != y.size:
        raise InvalidParameterError(
            f"weighted_auc: 'weights' must have shape (n_resamples, {y.size}); got {w.shape}."
        )
    if not (np.issubdtype(w.dtype, np.integer) or np.issubdtype(w.dtype, np.floating)) or w.dtype == bool:
        raise InvalidParameterError(
            f"weighted_auc: 'weights' must be integer or float counts; got dtype {w.dtype}."
        )
    if w.size and not (np.isfinite(w).all() and w.min() >= 0):
        raise InvalidParameterError(
            "weighted_auc: 'weights' must be finite and non-negative; found "
            f"{float(w.min()) if np.isfinite(w).all() else 'a non-finite value'}."
        )
    if np.issubdtype(w.dtype, np.integer) and (w.size == 0 or int(w.max()) * y.size < 2**61):
        return AUCIndex(y, s).auc(w)
    return weighted_auc_float(y, s, w.astype(float))
