"""The OR analysis with readers weighted unequally: the reader-averaged AUC of a split-plot design weighted by the
case pairs each reader read (the pooled U-statistic), and its RRRC, FRRC and RRFC tests.

With weights ``w`` (summing to 1, ``s2 = sum(w**2)``) the modality mean is ``m_t = sum_r w_r A_tr`` and a
difference ``D = m_a - m_b`` has, under the OR model, variance ``2 s2 sigma2_TR`` over readers plus
``w'(C_aa + C_bb - C_ab - C_ba)w`` over cases (``C`` the AUCs' covariance). The case part is written with
weighted means of the covariances — ``Var_w`` and ``Cov1_w`` over the diagonal reader pairs weighted by ``w_r^2``,
``Cov2_w`` and ``Cov3_w`` over the off-diagonal pairs weighted by ``w_r w_s`` — so that ``Var(D) = 2 s2 E_w`` with
the error term

    E_w = MS(T*R) + [(Var_w - Cov1_w) - (Var - Cov1)] + [(Cov2 - Cov3) - (Cov2_w - Cov3_w)]
          + max(Cov2_w - Cov3_w, 0) / s2,

where ``MS(T*R) - Var + Cov1 + Cov2 - Cov3`` (the unweighted OR estimate of sigma2_TR) has been substituted and
Hillis's clamp is put on the weighted between-reader covariance; like Hillis's, ``E_w`` is never below MS(T*R)
(it is floored there, so that its ddf is never below (T - 1)(R - 1)). With equal weights (``s2 = 1/R``, every weighted
mean equal to the plain one) ``E_w`` is Hillis's ``MS(T*R) + R max(Cov2 - Cov3, 0)``, and its ddf (Satterthwaite
on MS(T*R), as Hillis's) the same. The global test is ``F = MS_w(T) / E_w`` with ``MS_w(T) = sum_t (m_t - m)^2 /
((T - 1) s2)``, which is MS(T) under equal weights. Fixed readers keep the case part only, fixed cases the reader
part only (``MS(T*R)``); each modality alone likewise with its own ``MS_t(R)``, ``Var_t`` and ``Cov2_t``.

Validated: equal to the equal-weights analysis (Hillis) in a fully crossed design; the weighted modality AUC equal
to the pooled U-statistic; the RRRC type I error on split-plot Roe and Metz null studies (``python bench/run.py
mrmc:split_plot``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ._results import MRMCAnalysis, MRMCTest, analysis_of, chi2_test, error_df, f_test

if TYPE_CHECKING:
    from ._or import ORComponents

__all__ = ["READER_WEIGHTS", "WeightedMoments", "case_pair_weights", "weighted_analyses"]

READER_WEIGHTS: tuple[str, ...] = ("equal", "case_pairs")
"""How readers are averaged: each (modality, reader) AUC equally (MRMCaov, OR-DBM MRMC, RJafroc; the default), or
each reader by the diseased x non-diseased case pairs it read (iMRMC's reader average in arbitrary designs)."""


def case_pair_weights(ratings: np.ndarray, truth: np.ndarray) -> np.ndarray:
    """Each reader's weight: the case pairs (diseased x non-diseased) it read, summed over modalities, over the
    total. ``ratings`` (T, R, N) with NaN where unread; ``truth`` (N,) of 0/1."""
    read = ~np.isnan(ratings)
    pos = truth.astype(bool)
    pairs = (read[..., pos].sum(axis=-1) * read[..., ~pos].sum(axis=-1)).sum(axis=0).astype(np.float64)
    return pairs / pairs.sum()


class WeightedMoments:
    """The weighted means of the OR covariances for reader weights ``w`` (see the module docstring)."""

    def __init__(self, cov: np.ndarray, w: np.ndarray) -> None:
        n_mod, n_rdr = cov.shape[:2]
        self.w, self.s2 = w, float((w**2).sum())
        diag, off = np.outer(w, w) * np.eye(n_rdr), np.outer(w, w) * (1 - np.eye(n_rdr))
        self.off_total = float(off.sum())

        def mean(t: int, u: int, weights: np.ndarray, total: float) -> float:
            return float((cov[t, :, u, :] * weights).sum() / total) if total > 0 else float("nan")

        same = [(t, t) for t in range(n_mod)]
        other = [(t, u) for t in range(n_mod) for u in range(n_mod) if t != u]
        self.var_by_modality = np.array([mean(t, t, diag, self.s2) for t in range(n_mod)])
        self.cov2_by_modality = np.array([mean(t, t, off, self.off_total) for t in range(n_mod)])
        self.var = float(np.mean([mean(t, u, diag, self.s2) for t, u in same]))
        self.cov2 = float(np.mean([mean(t, u, off, self.off_total) for t, u in same]))
        self.cov1 = float(np.mean([mean(t, u, diag, self.s2) for t, u in other])) if other else float("nan")
        self.cov3 = (
            float(np.mean([mean(t, u, off, self.off_total) for t, u in other])) if other else float("nan")
        )


_ANALYSES = ("RRRC", "FRRC", "RRFC")


def _ms_treatment(means: np.ndarray, s2: float) -> float:
    return float(((means - means.mean()) ** 2).sum()) / ((len(means) - 1) * s2)


def weighted_analyses(
    aucs: np.ndarray,
    cov: np.ndarray,
    c: ORComponents,
    w: np.ndarray,
    names: tuple[str, ...],
    level: float,
    clamp: bool,
) -> tuple[MRMCAnalysis, MRMCAnalysis, MRMCAnalysis]:
    """RRRC, FRRC and RRFC of AUCs (T, R) with reader weights ``w``; ``c`` the unweighted ORComponents."""
    n_mod, n_rdr = aucs.shape
    mw = WeightedMoments(cov, w)
    s2 = mw.s2
    means = aucs @ w
    c23, c23_w = c.cov2 - c.cov3, mw.cov2 - mw.cov3
    within_shift = (mw.var - mw.cov1) - (c.var_error - c.cov1)
    between: dict[str, tuple[MRMCTest, float, float] | None] = dict.fromkeys(_ANALYSES)
    if n_mod > 1:
        ms_t, ms_tr = _ms_treatment(means, s2), c.ms_treatment_reader
        den = max(ms_tr + within_shift + (c23 - c23_w) + max(c23_w, 0.0) / s2, ms_tr)
        ddf = error_df(den, ms_tr, (n_mod - 1) * (n_rdr - 1))
        between["RRRC"] = (f_test("RRRC", ms_t, den, n_mod - 1, ddf), float(np.sqrt(2 * s2 * den)), ddf)
        cov23_w = max(c23_w, 0.0) if clamp else c23_w
        den_f = (mw.var - mw.cov1) + (1 / s2 - 1) * cov23_w
        between["FRRC"] = (chi2_test("FRRC", ms_t, den_f, n_mod - 1), float(np.sqrt(2 * s2 * den_f)), np.inf)
        ddf_c = float((n_mod - 1) * (n_rdr - 1))
        between["RRFC"] = (
            f_test("RRFC", ms_t, ms_tr, n_mod - 1, ddf_c),
            float(np.sqrt(2 * s2 * ms_tr)),
            ddf_c,
        )
    singles: dict[str, list[tuple[float, float]]] = {a: [] for a in _ANALYSES}
    for t in range(n_mod):
        ms_r = float(c.ms_reader_by_modality[t])
        var_t, cov2_t = float(c.var_error_by_modality[t]), float(c.cov2_by_modality[t])
        var_w, cov2_w = float(mw.var_by_modality[t]), float(mw.cov2_by_modality[t])
        den_t = max(ms_r + (var_w - var_t) + (cov2_t - cov2_w) + max(cov2_w, 0.0) / s2, ms_r)
        singles["RRRC"].append((np.sqrt(s2 * den_t), error_df(den_t, ms_r, n_rdr - 1)))
        singles["FRRC"].append((np.sqrt(s2 * (var_w + (1 / s2 - 1) * max(cov2_w, 0.0))), np.inf))
        singles["RRFC"].append((np.sqrt(s2 * ms_r), float(n_rdr - 1)))
    rrrc, frrc, rrfc = (analysis_of(a, names, means, level, between[a], singles[a]) for a in _ANALYSES)
    return rrrc, frrc, rrfc
