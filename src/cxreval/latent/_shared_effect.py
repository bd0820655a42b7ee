"""The readers' likelihood when they share a study effect within the class (Qu, Tan & Kutner 1996): the
assumed-correlation model of the latent truth's sensitivity analysis (private to :mod:`cxreval.latent`)."""

from __future__ import annotations

from functools import cache

import numpy as np

from ._cells import Cells, reader_at_cells

__all__ = ["shared_effect_log_lik"]


def shared_effect_log_lik(cells: Cells, p_pos: np.ndarray, rho: float) -> np.ndarray:
    """``log P(reader labels | class)`` (B, n_cells) when the readers share a study effect within the class
    (``p_pos`` (B, R), or (B, n_bins, R) for score-dependent readers):
    ``P(y_r = 1 | u) = Φ(a_r + b u)``, ``u ~ N(0, 1)``, ``b² / (1 + b²) = ρ`` the correlation of the readers'
    latent normal errors (Qu, Tan & Kutner 1996, with the variance held at the assumed ``ρ``), ``a_r`` such
    that the marginal probability of a positive label is ``p_pos`` (so the moment updates of the sensitivities
    and specificities stay consistent); 21 Gauss–Hermite nodes."""
    from scipy.special import log_ndtr, ndtri

    u, log_w = _hermite_nodes()
    b = np.sqrt(rho / (1 - rho))
    a = ndtri(p_pos) * np.sqrt(1 + b * b)
    terms = np.empty((u.size, p_pos.shape[0], cells.n_cells))
    for k, uk in enumerate(u):
        eta = a + b * uk
        if eta.ndim == 2:
            lp = log_ndtr(eta) @ cells.positive.T + log_ndtr(-eta) @ cells.negative.T
        else:  # per bin (score-dependent readers), read at each cell
            lp = reader_at_cells(cells, np.concatenate([log_ndtr(eta), log_ndtr(-eta)], axis=2))
        terms[k] = lp + log_w[k]
    top = terms.max(axis=0)
    return top + np.log(np.exp(terms - top).sum(axis=0))


@cache
def _hermite_nodes() -> tuple[np.ndarray, np.ndarray]:
    """The 21 Gauss–Hermite (probabilists') nodes and the logarithms of their normalised weights."""
    from numpy.polynomial.hermite_e import hermegauss

    u, wq = hermegauss(21)
    return u, np.log(wq / wq.sum())
