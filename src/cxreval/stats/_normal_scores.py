"""Normal scores: the ranks of a score on the standard normal scale (the latent-class model's spline and the
relabelling planner's score mixture are fitted on this scale)."""

from __future__ import annotations

import numpy as np

__all__ = ["normal_scores"]


def normal_scores(score: np.ndarray) -> np.ndarray:
    """``Φ⁻¹((rank - 1/2) / n)`` of each score (average ranks for ties): the scale the spline is fitted on, so
    that the model does not depend on a monotone transform of the scores."""
    from scipy.special import ndtri

    _, inv, counts = np.unique(score, return_inverse=True, return_counts=True)
    rank = (np.cumsum(counts) - (counts - 1) / 2.0)[inv.reshape(-1)]
    return np.asarray(ndtri((rank - 0.5) / score.size), dtype=float)
