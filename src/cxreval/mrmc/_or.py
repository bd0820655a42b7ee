"""Obuchowski–Rockette (OR) analysis of an MRMC study, with Hillis's denominator degrees of freedom."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING

import numpy as np

from .._validation import check_choice, check_confidence_level
from ..exceptions import InvalidParameterError
from ._fom import CovarianceMethod, check_covariance_method, covariance_matrix, placements
from ._inputs import check_mrmc_inputs
from ._reader_weights import READER_WEIGHTS, case_pair_weights, weighted_analyses
from ._results import (
    READER_COLUMNS,
    READER_DIFFERENCE_COLUMNS,
    VARIANCE_COMPONENT_COLUMNS,
    MRMCAnalysis,
    ReaderDifference,
    ReaderEstimate,
    analysis_of,
    analysis_tables,
    chi2_test,
    error_df,
    f_test,
    frame,
    reader_differences,
    reader_estimates,
    readonly,
    records,
)

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["ORComponents", "ORResult", "or_analysis"]


@dataclass(frozen=True)
class ORComponents:
    """The OR model's error covariances, variance components and mean squares of the AUCs.

    Attributes
    ----------
    var_error : float
        Var(error): the mean variance of one reader's AUC in one modality over the cases.
    cov1, cov2, cov3 : float
        The mean covariance of two AUCs of the same reader in different modalities (Cov1), of different
        readers in the same modality (Cov2), of different readers in different modalities (Cov3).
    var_reader, var_treatment_reader : float
        The reader and treatment-by-reader variance components, ``(MS(R) - MS(T*R))/T - Cov1 + Cov3`` and
        ``MS(T*R) - Var(error) + Cov1 + Cov2 - Cov3`` (ANOVA estimates: they can be negative).
    ms_treatment, ms_reader, ms_treatment_reader : float
        The mean squares of the treatment-by-reader ANOVA of the AUCs (NaN with one modality).
    ms_reader_by_modality, var_error_by_modality, cov2_by_modality : ndarray of shape (n_modalities,)
        One modality's reader mean square, error variance and Cov2 (its single-modality analysis).
    var_error_by_reader, cov1_by_reader : ndarray of shape (n_readers,)
        One reader's error variance and Cov1 (the fixed-readers analysis of each reader).
    """

    var_error: float
    cov1: float
    cov2: float
    cov3: float
    var_reader: float
    var_treatment_reader: float
    ms_treatment: float
    ms_reader: float
    ms_treatment_reader: float
    ms_reader_by_modality: np.ndarray
    var_error_by_modality: np.ndarray
    cov2_by_modality: np.ndarray
    var_error_by_reader: np.ndarray
    cov1_by_reader: np.ndarray

    def scalars(self) -> dict[str, float]:
        """The scalar fields by name (the ``variance_components`` table's rows)."""
        return {
            f.name: float(getattr(self, f.name))
            for f in fields(self)
            if not f.name.endswith(("_by_modality", "_by_reader"))
        }


def _mean(values: np.ndarray) -> float:
    return float(values.mean()) if values.size else float("nan")


def or_components(aucs: np.ndarray, cov: np.ndarray) -> ORComponents:
    """The :class:`ORComponents` of AUCs (T, R) and their covariance (T, R, T, R), readers weighted equally."""
    n_mod, n_rdr = aucs.shape
    tt = np.arange(n_mod)[:, None, None, None] == np.arange(n_mod)[None, None, :, None]
    rr = np.arange(n_rdr)[None, :, None, None] == np.arange(n_rdr)[None, None, None, :]
    same_t = np.broadcast_to(tt, cov.shape)
    same_r = np.broadcast_to(rr, cov.shape)
    var, cov1 = _mean(cov[same_t & same_r]), _mean(cov[~same_t & same_r])
    cov2, cov3 = _mean(cov[same_t & ~same_r]), _mean(cov[~same_t & ~same_r])
    off_r = ~np.eye(n_rdr, dtype=bool)
    off_t = ~np.eye(n_mod, dtype=bool)
    var_m = np.array([np.diag(cov[t, :, t, :]).mean() for t in range(n_mod)])
    cov2_m = np.array([_mean(cov[t, :, t, :][off_r]) for t in range(n_mod)])
    var_r = np.array([np.diag(cov[:, r, :, r]).mean() for r in range(n_rdr)])
    cov1_r = np.array([_mean(cov[:, r, :, r][off_t]) for r in range(n_rdr)])
    m_t, m_r, m = aucs.mean(axis=1), aucs.mean(axis=0), aucs.mean()
    ms_r = n_mod * float(((m_r - m) ** 2).sum()) / (n_rdr - 1)
    ms_r_m = ((aucs - m_t[:, None]) ** 2).sum(axis=1) / (n_rdr - 1)
    if n_mod > 1:
        ms_t = n_rdr * float(((m_t - m) ** 2).sum()) / (n_mod - 1)
        ms_tr = float(((aucs - m_t[:, None] - m_r[None, :] + m) ** 2).sum()) / ((n_mod - 1) * (n_rdr - 1))
        var_tr = ms_tr - var + cov1 + cov2 - cov3
        var_rdr = (ms_r - ms_tr) / n_mod - cov1 + cov3
    else:  # one modality: the reader variance is MS(R) - Var(error) + Cov2 (Hillis 2007, single test)
        ms_t = ms_tr = var_tr = float("nan")
        var_rdr = ms_r - var + cov2
    return ORComponents(
        var_error=var,
        cov1=cov1,
        cov2=cov2,
        cov3=cov3,
        var_reader=var_rdr,
        var_treatment_reader=var_tr,
        ms_treatment=ms_t,
        ms_reader=ms_r,
        ms_treatment_reader=ms_tr,
        ms_reader_by_modality=readonly(ms_r_m),
        var_error_by_modality=readonly(var_m),
        cov2_by_modality=readonly(cov2_m),
        var_error_by_reader=readonly(var_r),
        cov1_by_reader=readonly(cov1_r),
    )


def rrrc(aucs: np.ndarray, c: ORComponents, names: tuple[str, ...], level: float) -> MRMCAnalysis:
    """Random readers and cases: Hillis's F = MS(T) / [MS(T*R) + R max(Cov2 - Cov3, 0)], ddf_H."""
    n_mod, n_rdr = aucs.shape
    between = None
    if n_mod > 1:
        den = c.ms_treatment_reader + n_rdr * max(c.cov2 - c.cov3, 0.0)
        ddf = error_df(den, c.ms_treatment_reader, (n_mod - 1) * (n_rdr - 1))
        between = (f_test("RRRC", c.ms_treatment, den, n_mod - 1, ddf), float(np.sqrt(2 * den / n_rdr)), ddf)
    singles = []
    for t in range(n_mod):
        ms_r = float(c.ms_reader_by_modality[t])
        den_t = ms_r + n_rdr * max(float(c.cov2_by_modality[t]), 0.0)
        singles.append((np.sqrt(den_t / n_rdr), error_df(den_t, ms_r, n_rdr - 1)))
    return analysis_of("RRRC", names, aucs.mean(axis=1), level, between, singles)


def frrc(
    aucs: np.ndarray, c: ORComponents, names: tuple[str, ...], level: float, clamp: bool
) -> MRMCAnalysis:
    """Fixed readers: chi-square (T-1) MS(T) / [Var - Cov1 + (R-1) max(Cov2 - Cov3, 0)] with T - 1 df."""
    n_mod, n_rdr = aucs.shape
    between = None
    if n_mod > 1:
        cov23 = max(c.cov2 - c.cov3, 0.0) if clamp else c.cov2 - c.cov3
        den = c.var_error - c.cov1 + (n_rdr - 1) * cov23
        between = (chi2_test("FRRC", c.ms_treatment, den, n_mod - 1), float(np.sqrt(2 * den / n_rdr)), np.inf)
    singles = [
        (
            np.sqrt(
                (c.var_error_by_modality[t] + (n_rdr - 1) * max(float(c.cov2_by_modality[t]), 0.0)) / n_rdr
            ),
            np.inf,
        )
        for t in range(n_mod)
    ]
    return analysis_of("FRRC", names, aucs.mean(axis=1), level, between, singles)


def rrfc(aucs: np.ndarray, c: ORComponents, names: tuple[str, ...], level: float) -> MRMCAnalysis:
    """Fixed cases: F = MS(T) / MS(T*R) with (T-1, (T-1)(R-1)) df, the readers' repeated-measures ANOVA."""
    n_mod, n_rdr = aucs.shape
    between = None
    if n_mod > 1:
        ddf = float((n_mod - 1) * (n_rdr - 1))
        test = f_test("RRFC", c.ms_treatment, c.ms_treatment_reader, n_mod - 1, ddf)
        between = (test, float(np.sqrt(2 * c.ms_treatment_reader / n_rdr)), ddf)
    singles = [(np.sqrt(c.ms_reader_by_modality[t] / n_rdr), float(n_rdr - 1)) for t in range(n_mod)]
    return analysis_of("RRFC", names, aucs.mean(axis=1), level, between, singles)


def _variances(cov: np.ndarray) -> np.ndarray:
    """The variance of each AUC (T, R) from their covariance (T, R, T, R)."""
    n_mod, n_rdr = cov.shape[:2]
    return np.diagonal(cov.reshape(n_mod * n_rdr, n_mod * n_rdr)).reshape(n_mod, n_rdr)


def or_reader_differences(
    aucs: np.ndarray, c: ORComponents, modalities: tuple[str, ...], readers: tuple[str, ...], level: float
) -> tuple[ReaderDifference, ...]:
    """Each reader's modality differences, SE sqrt(2 (Var_r - Cov1_r)) from that reader's data (normal)."""
    ses = [
        float(np.sqrt(max(2 * (c.var_error_by_reader[r] - c.cov1_by_reader[r]), 0.0)))
        for r in range(len(readers))
    ]
    return reader_differences(aucs, modalities, readers, ses, float("inf"), level)


@dataclass(frozen=True)
class ORResult:
    """Obuchowski–Rockette analysis of an MRMC study (see :func:`or_analysis`).

    Attributes
    ----------
    modality_names, reader_names : tuple of str
    covariance_method : str
        ``'jackknife'``, ``'delong'`` or ``'unbiased'``.
    confidence_level : float
    fixed_readers_clamp : bool
        Whether the fixed-readers error term used max(Cov2 - Cov3, 0).
    reader_weights : {'equal', 'case_pairs'}
        How the readers were averaged (:func:`or_analysis`).
    weights : ndarray of shape (n_readers,)
        Each reader's weight in the modality means (1/R each with ``'equal'``; read-only).
    aucs : ndarray of shape (n_modalities, n_readers)
        The empirical AUC of each reader in each modality (read-only).
    covariance : ndarray of shape (n_modalities, n_readers, n_modalities, n_readers)
        Their covariance over the cases (read-only).
    components : ORComponents
        Var(error), Cov1-3, the variance components and the mean squares.
    rrrc, frrc, rrfc : MRMCAnalysis
        Random readers and random cases (Hillis), fixed readers (random cases), random readers with fixed cases.
    readers : tuple of ReaderEstimate
        Each reader's AUC in each modality with its normal interval (readers fixed).
    reader_differences : tuple of ReaderDifference
        Each reader's modality differences (the fixed-readers analysis of each reader).
    """

    modality_names: tuple[str, ...]
    reader_names: tuple[str, ...]
    covariance_method: str
    confidence_level: float
    fixed_readers_clamp: bool
    aucs: np.ndarray
    covariance: np.ndarray
    components: ORComponents
    rrrc: MRMCAnalysis
    frrc: MRMCAnalysis
    rrfc: MRMCAnalysis
    readers: tuple[ReaderEstimate, ...]
    reader_differences: tuple[ReaderDifference, ...]
    reader_weights: str = "equal"
    weights: np.ndarray | None = None

    @property
    def modality_aucs(self) -> np.ndarray:
        """The reader-averaged AUC of each modality (weighted as ``reader_weights``), shape (n_modalities,)."""
        if self.reader_weights == "equal" or self.weights is None:
            return np.asarray(self.aucs.mean(axis=1))
        return np.asarray(self.aucs @ self.weights)

    def tables(self) -> dict[str, pd.DataFrame]:
        """Tidy tables: ``tests``, ``differences``, ``modalities`` (one row per analysis and modality), ``readers``,
        ``reader_differences`` and ``variance_components`` (name, value)."""
        out = analysis_tables((self.rrrc, self.frrc, self.rrfc), self.covariance_method)
        out["readers"] = records(self.readers, READER_COLUMNS)
        out["reader_differences"] = records(self.reader_differences, READER_DIFFERENCE_COLUMNS)
        out["variance_components"] = frame(
            list(self.components.scalars().items()), VARIANCE_COMPONENT_COLUMNS
        )
        return out


def or_from_covariance(
    aucs: np.ndarray,
    cov: np.ndarray,
    *,
    covariance_method: str,
    modality_names: tuple[str, ...],
    reader_names: tuple[str, ...],
    confidence_level: float,
    fixed_readers_clamp: bool,
    weights: np.ndarray | None = None,
) -> ORResult:
    """The OR analysis of given AUCs (T, R) and covariance (T, R, T, R); ``weights`` (R,) summing to 1 weight
    the readers in the modality means (:mod:`cxreval.mrmc._reader_weights`), None = equally."""
    comps = or_components(aucs, cov)
    if weights is None:
        analyses = (
            rrrc(aucs, comps, modality_names, confidence_level),
            frrc(aucs, comps, modality_names, confidence_level, fixed_readers_clamp),
            rrfc(aucs, comps, modality_names, confidence_level),
        )
        w = np.full(aucs.shape[1], 1 / aucs.shape[1])
    else:
        analyses = weighted_analyses(
            aucs, cov, comps, weights, modality_names, confidence_level, fixed_readers_clamp
        )
        w = weights
    return ORResult(
        modality_names=modality_names,
        reader_names=reader_names,
        covariance_method=covariance_method,
        confidence_level=confidence_level,
        fixed_readers_clamp=fixed_readers_clamp,
        aucs=readonly(aucs),
        covariance=readonly(cov),
        components=comps,
        rrrc=analyses[0],
        frrc=analyses[1],
        rrfc=analyses[2],
        readers=reader_estimates(aucs, _variances(cov), modality_names, reader_names, confidence_level),
        reader_differences=or_reader_differences(aucs, comps, modality_names, reader_names, confidence_level),
        reader_weights="equal" if weights is None else "case_pairs",
        weights=readonly(w),
    )


def or_analysis(
    ratings: object,
    truth: object,
    *,
    covariance: CovarianceMethod = "jackknife",
    clusters: object = None,
    confidence_level: float = 0.95,
    modality_names: Sequence[str] | None = None,
    reader_names: Sequence[str] | None = None,
    fixed_readers_clamp: bool = True,
    reader_weights: str = "equal",
) -> ORResult:
    """Obuchowski–Rockette analysis of the readers' empirical AUCs: do the modalities differ?

    The OR model writes the AUC of reader j in modality i as ``mu + tau_i + R_j + (tau R)_ij + e_ij``, readers
    and the treatment-by-reader term random, and the errors' correlation from reading the same cases in three
    covariances: Cov1 (same reader, different modalities), Cov2 (different readers, same modality), Cov3
    (different readers, different modalities), estimated from ``covariance`` and averaged with each
    (modality, reader) weighted equally. Three analyses:

    - **RRRC** (random readers, random cases; generalises to both populations): Hillis's (2007, 2008)
      ``F = MS(T) / [MS(T*R) + R max(Cov2 - Cov3, 0)]`` with ``ddf_H = [MS(T*R) + R max(Cov2 - Cov3, 0)]^2 /
      {MS(T*R)^2 / [(T-1)(R-1)]}``; each difference ``+- t(ddf_H) sqrt(2/R [MS(T*R) + R max(Cov2 - Cov3, 0)])``;
      each modality alone ``+- t(df) sqrt([MS_t(R) + R max(Cov2_t, 0)]/R)`` with Hillis's single-modality
      ``df = [MS_t(R) + R max(Cov2_t, 0)]^2 / [MS_t(R)^2/(R-1)]``.
    - **FRRC** (readers fixed: these readers only): ``X2 = (T-1) MS(T) / [Var - Cov1 + (R-1) max(Cov2 - Cov3,
      0)]`` on T - 1 df, normal intervals, and each reader's differences with SE ``sqrt(2 (Var_j - Cov1_j))``.
    - **RRFC** (cases fixed: these cases only): ``F = MS(T)/MS(T*R)`` on (T - 1, (T-1)(R-1)) df.

    With more than two modalities the global test is one test and every pairwise difference is reported with
    its own unadjusted interval and p-value: the family of T(T-1)/2 comparisons is not corrected for
    multiplicity (use the global test first, or adjust the p-values yourself, e.g. Holm).

    Parameters
    ----------
    ratings : array-like of shape (n_modalities, n_readers, n_cases)
        Each reader's rating of each case in each modality, higher = more likely diseased; NaN where the reader
        did not read the case in the modality (missing readings, split-plot designs).
    truth : array-like of shape (n_cases,)
        1 (True) for a diseased case, 0 (False) otherwise.
    covariance : {'jackknife', 'delong', 'unbiased'}, default='jackknife'
        The estimator of the AUCs' covariance (:func:`auc_covariance`). The jackknife is the default of
        OR-DBM MRMC, RJafroc and MRMCaov; with it the RRRC test equals the DBM analysis
        (:func:`dbm_analysis`). DeLong needs a fully crossed design.
    clusters : array-like of shape (n_cases,), optional
        The patient of each case. Cases of one patient (several images, both lungs) are correlated: the
        jackknife then leaves out whole patients and DeLong sums the structural components per patient
        (Obuchowski 1997). Without it every case is an independent draw.
    confidence_level : float, default=0.95
    modality_names, reader_names : sequence of str, optional
        Labels (default ``'1'``, ``'2'``, ...).
    fixed_readers_clamp : bool, default=True
        Use ``max(Cov2 - Cov3, 0)`` in the fixed-readers error term, as OR-DBM MRMC and RJafroc do (Hillis);
        ``False`` uses ``Cov2 - Cov3`` as MRMCaov does. The two differ only when Cov2 < Cov3.
    reader_weights : {'equal', 'case_pairs'}, default='equal'
        How readers are averaged into a modality's AUC when they read different numbers of cases (split-plot
        designs, missing readings): ``'equal'``, each (modality, reader) AUC counts the same (MRMCaov, OR-DBM
        MRMC, RJafroc); ``'case_pairs'``, each reader by the diseased x non-diseased pairs it read, so that the
        modality AUC is the pooled U-statistic (iMRMC's reader average). The tests then use the weighted error
        terms of :mod:`cxreval.mrmc._reader_weights`, which reduce to Hillis's under equal weights; in a fully
        crossed design the two conventions agree.

    Returns
    -------
    res : ORResult

    Raises
    ------
    InvalidParameterError
        Ratings not 3-D, a truth that is not binary or of another length, fewer than 2 readers, a (modality,
        reader) that read fewer than 2 cases of a class, an unknown covariance, DeLong with missing readings, an
        unknown ``reader_weights``.

    Notes
    -----
    Assumptions: cases are independent draws (unless ``clusters`` is given), readers a random sample of
    readers (RRRC), and the reader-averaged AUCs approximately normal (the OR model). The AUC is the empirical
    (Wilcoxon) AUC, ties counted 1/2. Intervals of an AUC are clipped to [0, 1] (as MRMCaov). With missing
    readings every (modality, reader) AUC counts equally in the means (MRMCaov's convention), however many
    cases it is based on; the jackknife leaves out each of all N cases, a case a reader did not read leaving
    that reader's AUC unchanged.

    References
    ----------
    .. [1] Obuchowski NA, Rockette HE (1995). Hypothesis testing of diagnostic accuracy for multiple readers and
       multiple tests: an ANOVA approach with dependent observations. Commun Stat Simul Comput 24:285-308.
       doi:10.1080/03610919508813243
    .. [2] Hillis SL (2007). A comparison of denominator degrees of freedom methods for multiple observer ROC
       analysis. Stat Med 26:596-619. doi:10.1002/sim.2532
    .. [3] Hillis SL, Berbaum KS, Metz CE (2008). Recent developments in the Dorfman-Berbaum-Metz procedure for
       multireader ROC study analysis. Acad Radiol 15:647-661. doi:10.1016/j.acra.2007.12.015

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> truth = np.repeat([0, 1], 40)
    >>> ratings = truth + rng.normal(size=(2, 4, 80))
    >>> res = or_analysis(ratings, truth)
    >>> res.rrrc.test.statistic_name, res.aucs.shape
    ('F', (2, 4))
    """
    func = "or_analysis"
    level = check_confidence_level(confidence_level, func=func)
    method = check_covariance_method(covariance, func=func)
    if not isinstance(fixed_readers_clamp, (bool, np.bool_)):
        raise InvalidParameterError(
            f"The 'fixed_readers_clamp' parameter of {func} must be a bool. Got {fixed_readers_clamp!r} instead."
        )
    check_choice(reader_weights, READER_WEIGHTS, name="reader_weights", func=func)
    inputs = check_mrmc_inputs(
        ratings,
        truth,
        clusters,
        func=func,
        modality_names=modality_names,
        reader_names=reader_names,
        min_readers=2,
    )
    n_mod, n_rdr = inputs.ratings.shape[:2]
    mods, rdrs = inputs.modalities, inputs.readers
    pl = placements(inputs)
    cov = covariance_matrix(inputs, pl, method).reshape(n_mod, n_rdr, n_mod, n_rdr)
    return or_from_covariance(
        pl.auc.reshape(n_mod, n_rdr),
        cov,
        covariance_method=method,
        modality_names=mods,
        reader_names=rdrs,
        confidence_level=level,
        fixed_readers_clamp=bool(fixed_readers_clamp),
        weights=None
        if reader_weights == "equal"
        else case_pair_weights(inputs.ratings, np.asarray(inputs.truth)),
    )
