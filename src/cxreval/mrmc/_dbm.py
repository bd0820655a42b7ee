"""Dorfman–Berbaum–Metz (DBM) analysis: the treatment x reader x case ANOVA of jackknife pseudovalues."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import astuple, dataclass, fields
from typing import TYPE_CHECKING

import numpy as np

from .._validation import check_confidence_level
from ..exceptions import InvalidParameterError
from ._fom import loo_aucs, placements
from ._inputs import check_mrmc_inputs
from ._results import (
    READER_COLUMNS,
    READER_DIFFERENCE_COLUMNS,
    TEST_COLUMNS,
    VARIANCE_COMPONENT_COLUMNS,
    MRMCAnalysis,
    MRMCTest,
    ReaderDifference,
    ReaderEstimate,
    analysis_of,
    analysis_tables,
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

__all__ = ["DBMANOVA", "DBMResult", "dbm_analysis"]

DBM_SOURCES = ("T", "R", "C", "TR", "TC", "RC", "TRC")


@dataclass(frozen=True)
class DBMANOVA:
    """Mean squares of the treatment (T) x reader (R) x case (C) ANOVA of the pseudovalues, its DBM variance
    components, and the per-modality (reader x case) and per-reader (treatment x case) mean squares.

    Attributes
    ----------
    ms, df : dict of str to float
        By source ``'T', 'R', 'C', 'TR', 'TC', 'RC', 'TRC'``.
    var_reader, var_case, var_treatment_reader, var_treatment_case, var_reader_case, var_error : float
        The DBM variance components Var(R), Var(C), Var(T*R), Var(T*C), Var(R*C) and Var(T*R*C) + Var(error)
        (ANOVA estimates: they can be negative).
    ms_reader_by_modality, ms_case_by_modality, ms_reader_case_by_modality : ndarray of shape (n_modalities,)
    ms_treatment_by_reader, ms_treatment_case_by_reader : ndarray of shape (n_readers,)
    """

    ms: dict[str, float]
    df: dict[str, float]
    var_reader: float
    var_case: float
    var_treatment_reader: float
    var_treatment_case: float
    var_reader_case: float
    var_error: float
    ms_reader_by_modality: np.ndarray
    ms_case_by_modality: np.ndarray
    ms_reader_case_by_modality: np.ndarray
    ms_treatment_by_reader: np.ndarray
    ms_treatment_case_by_reader: np.ndarray


def pseudovalues(loo: np.ndarray, aucs: np.ndarray) -> np.ndarray:
    """Jackknife pseudovalues ``K AUC - (K-1) AUC(-k)`` (T, R, K), shifted so that each (modality, reader)'s
    mean is its AUC (Hillis's normalised pseudovalues, as OR-DBM MRMC and RJafroc)."""
    k = loo.shape[-1]
    ps = k * aucs[..., None] - (k - 1) * loo
    return ps + (aucs - ps.mean(axis=-1))[..., None]


def dbm_anova(ps: np.ndarray) -> DBMANOVA:
    n_t, n_r, n_c = ps.shape
    m = ps.mean()
    m_t, m_r, m_c = ps.mean(axis=(1, 2)), ps.mean(axis=(0, 2)), ps.mean(axis=(0, 1))
    m_tr, m_tc, m_rc = ps.mean(axis=2), ps.mean(axis=1), ps.mean(axis=0)
    df = {
        "T": n_t - 1,
        "R": n_r - 1,
        "C": n_c - 1,
        "TR": (n_t - 1) * (n_r - 1),
        "TC": (n_t - 1) * (n_c - 1),
        "RC": (n_r - 1) * (n_c - 1),
        "TRC": (n_t - 1) * (n_r - 1) * (n_c - 1),
    }
    ss = {
        "T": n_r * n_c * ((m_t - m) ** 2).sum(),
        "R": n_t * n_c * ((m_r - m) ** 2).sum(),
        "C": n_t * n_r * ((m_c - m) ** 2).sum(),
        "TR": n_c * ((m_tr - m_t[:, None] - m_r[None, :] + m) ** 2).sum(),
        "TC": n_r * ((m_tc - m_t[:, None] - m_c[None, :] + m) ** 2).sum(),
        "RC": n_t * ((m_rc - m_r[:, None] - m_c[None, :] + m) ** 2).sum(),
        "TRC": (
            (
                ps
                - m_tr[:, :, None]
                - m_tc[:, None, :]
                - m_rc[None, :, :]
                + m_t[:, None, None]
                + m_r[None, :, None]
                + m_c[None, None, :]
                - m
            )
            ** 2
        ).sum(),
    }
    with np.errstate(divide="ignore", invalid="ignore"):
        ms = {s: float(ss[s] / df[s]) if df[s] else float("nan") for s in DBM_SOURCES}
    ms_r_t = n_c * ((m_tr - m_t[:, None]) ** 2).sum(axis=1) / (n_r - 1)
    ms_c_t = n_r * ((m_tc - m_t[:, None]) ** 2).sum(axis=1) / (n_c - 1)
    ms_rc_t = ((ps - m_tr[:, :, None] - m_tc[:, None, :] + m_t[:, None, None]) ** 2).sum(axis=(1, 2)) / (
        (n_r - 1) * (n_c - 1)
    )
    m_rt = m_tr.T  # (R, T): reader r in modality t
    m_r_c = ps.mean(axis=0)  # (R, C)
    with np.errstate(divide="ignore", invalid="ignore"):
        ms_t_r = n_c * ((m_rt - m_r[:, None]) ** 2).sum(axis=1) / (n_t - 1)
        ms_tc_r = ((ps - m_tr[:, :, None] - m_r_c[None, :, :] + m_r[None, :, None]) ** 2).sum(axis=(0, 2)) / (
            (n_t - 1) * (n_c - 1)
        )
    return DBMANOVA(
        ms=ms,
        df={s: float(v) for s, v in df.items()},
        var_reader=(ms["R"] - ms["TR"] - ms["RC"] + ms["TRC"]) / (n_t * n_c) if n_t > 1 else float("nan"),
        var_case=(ms["C"] - ms["TC"] - ms["RC"] + ms["TRC"]) / (n_t * n_r) if n_t > 1 else float("nan"),
        var_treatment_reader=(ms["TR"] - ms["TRC"]) / n_c,
        var_treatment_case=(ms["TC"] - ms["TRC"]) / n_r,
        var_reader_case=(ms["RC"] - ms["TRC"]) / n_t,
        var_error=ms["TRC"],
        ms_reader_by_modality=readonly(ms_r_t),
        ms_case_by_modality=readonly(ms_c_t),
        ms_reader_case_by_modality=readonly(ms_rc_t),
        ms_treatment_by_reader=readonly(ms_t_r),
        ms_treatment_case_by_reader=readonly(ms_tc_r),
    )


def _error_term(
    analysis: str, ms_tr: float, ms_tc: float, ms_trc: float, df_tr: float, df_tc: float
) -> tuple[float, float]:
    """(error term, its df) of an analysis from the treatment-by-reader, -by-case and residual mean squares (or
    one modality's reader, case and reader-by-case mean squares) and the first two's df."""
    if analysis == "RRRC":
        den = ms_tr + max(ms_tc - ms_trc, 0.0)
        return den, error_df(den, ms_tr, df_tr)
    if analysis == "FRRC":
        return ms_tc, float(df_tc)
    return ms_tr, float(df_tr)


def dbm_analyses(
    aucs: np.ndarray, a: DBMANOVA, names: tuple[str, ...], level: float
) -> tuple[MRMCAnalysis, MRMCAnalysis, MRMCAnalysis]:
    """RRRC (Hillis ddf), FRRC and RRFC from the pseudovalue ANOVA."""
    n_t, n_r = aucs.shape
    n_c = int(a.df["C"]) + 1
    ms, means, rc = a.ms, aucs.mean(axis=1), n_r * n_c
    out = []
    for analysis in ("RRRC", "FRRC", "RRFC"):
        between = None
        if n_t > 1:
            den, ddf = _error_term(analysis, ms["TR"], ms["TC"], ms["TRC"], a.df["TR"], a.df["TC"])
            test = f_test(analysis, ms["T"], den, n_t - 1, ddf, chi2_limit=False)
            between = (test, float(np.sqrt(2 * den / rc)), ddf)
        singles = []
        for t in range(n_t):
            den_t, df_t = _error_term(
                analysis,
                float(a.ms_reader_by_modality[t]),
                float(a.ms_case_by_modality[t]),
                float(a.ms_reader_case_by_modality[t]),
                n_r - 1,
                n_c - 1,
            )
            singles.append((np.sqrt(den_t / rc), df_t))
        out.append(analysis_of(analysis, names, means, level, between, singles))
    return out[0], out[1], out[2]


@dataclass(frozen=True)
class DBMResult:
    """Dorfman–Berbaum–Metz analysis of an MRMC study (see :func:`dbm_analysis`).

    Attributes
    ----------
    modality_names, reader_names : tuple of str
    confidence_level : float
    aucs : ndarray of shape (n_modalities, n_readers)
    pseudovalues : ndarray of shape (n_modalities, n_readers, n_cases) or (..., n_clusters)
        The normalised jackknife pseudovalues (read-only).
    anova : DBMANOVA
        Mean squares and the DBM variance components.
    rrrc, frrc, rrfc : MRMCAnalysis
        Random readers and cases (Hillis ddf); fixed readers (error MS(T*C), df (T-1)(C-1)); fixed cases.
    reader_tests : tuple of MRMCTest
        Each reader's treatment x case F test (readers fixed), in reader order.
    readers : tuple of ReaderEstimate
        Each reader's AUC with its normal interval from the jackknife variance.
    reader_differences : tuple of ReaderDifference
        Each reader's modality differences, SE sqrt(2 MS_r(T*C) / C) on (T-1)(C-1) df.
    """

    modality_names: tuple[str, ...]
    reader_names: tuple[str, ...]
    confidence_level: float
    aucs: np.ndarray
    pseudovalues: np.ndarray
    anova: DBMANOVA
    rrrc: MRMCAnalysis
    frrc: MRMCAnalysis
    rrfc: MRMCAnalysis
    reader_tests: tuple[MRMCTest, ...]
    readers: tuple[ReaderEstimate, ...]
    reader_differences: tuple[ReaderDifference, ...]

    @property
    def modality_aucs(self) -> np.ndarray:
        """The reader-averaged AUC of each modality."""
        return np.asarray(self.aucs.mean(axis=1))

    def tables(self) -> dict[str, pd.DataFrame]:
        """Tidy tables: ``tests``, ``differences``, ``modalities``, ``readers``, ``reader_tests`` (with a
        ``reader`` column), ``reader_differences``, ``anova`` (source, df, mean_square) and
        ``variance_components``."""
        out = analysis_tables((self.rrrc, self.frrc, self.rrfc), "jackknife")
        out["readers"] = records(self.readers, READER_COLUMNS)
        out["reader_tests"] = frame(
            [
                (r, *astuple(t)[:1], "jackknife", *astuple(t)[1:])
                for r, t in zip(self.reader_names, self.reader_tests)
            ],
            ("reader", *TEST_COLUMNS),
        )
        out["reader_differences"] = records(self.reader_differences, READER_DIFFERENCE_COLUMNS)
        out["anova"] = frame(
            [(s, self.anova.df[s], self.anova.ms[s]) for s in DBM_SOURCES], ("source", "df", "mean_square")
        )
        comps = [
            (f.name, float(getattr(self.anova, f.name)))
            for f in fields(self.anova)
            if f.name.startswith("var_")
        ]
        out["variance_components"] = frame(comps, VARIANCE_COMPONENT_COLUMNS)
        return out


def dbm_analysis(
    ratings: object,
    truth: object,
    *,
    clusters: object = None,
    confidence_level: float = 0.95,
    modality_names: Sequence[str] | None = None,
    reader_names: Sequence[str] | None = None,
) -> DBMResult:
    """Dorfman–Berbaum–Metz analysis: the ANOVA of the readers' jackknife pseudovalues.

    Each (modality, reader, case) gets the pseudovalue ``K AUC - (K-1) AUC(-k)`` of the empirical AUC without
    case k, normalised so that each reader's mean pseudovalue is its AUC (Hillis 2005); a treatment x reader x
    case ANOVA (readers and cases random) of the pseudovalues gives three analyses:

    - **RRRC**: ``F = MS(T) / [MS(T*R) + max(MS(T*C) - MS(T*R*C), 0)]`` with Hillis's (2008) ``ddf_H =
      [MS(T*R) + max(MS(T*C) - MS(T*R*C), 0)]^2 / {MS(T*R)^2 / [(T-1)(R-1)]}``; each modality alone with
      ``MS(R) + max(MS(C) - MS(R*C), 0)`` of its reader x case ANOVA. Identical to the OR analysis with the
      jackknife covariance (:func:`or_analysis`; Hillis et al. 2005).
    - **FRRC** (readers fixed): ``F = MS(T)/MS(T*C)`` on (T-1, (T-1)(C-1)) df (the OR fixed-readers chi-square
      with finite denominator df); each reader's own treatment x case ANOVA.
    - **RRFC** (cases fixed): ``F = MS(T)/MS(T*R)`` on (T-1, (T-1)(R-1)) df.

    With more than two modalities every pairwise difference is reported unadjusted for multiplicity.

    Parameters
    ----------
    ratings : array-like of shape (n_modalities, n_readers, n_cases)
        Ratings, higher = more likely diseased; every case read by every reader in every modality (the
        pseudovalue ANOVA needs the full crossing: use :func:`or_analysis` with missing readings).
    truth : array-like of shape (n_cases,)
        1 diseased, 0 not.
    clusters : array-like of shape (n_cases,), optional
        The patient of each case: pseudovalues are then computed per patient (leave-one-patient-out) and the
        patients are the ANOVA's "cases".
    confidence_level : float, default=0.95
    modality_names, reader_names : sequence of str, optional

    Returns
    -------
    res : DBMResult

    Raises
    ------
    InvalidParameterError
        As :func:`or_analysis`, and missing readings.

    Notes
    -----
    Assumptions: cases (or clusters) independent, readers a random sample (RRRC), pseudovalues approximately
    normal with the DBM model's variance structure. AUC intervals are clipped to [0, 1].

    References
    ----------
    .. [1] Dorfman DD, Berbaum KS, Metz CE (1992). Receiver operating characteristic rating analysis:
       generalization to the population of readers and patients with the jackknife method. Invest Radiol
       27:723-731. doi:10.1097/00004424-199209000-00015
    .. [2] Hillis SL, Obuchowski NA, Schartz KM, Berbaum KS (2005). A comparison of the Dorfman-Berbaum-Metz
       and Obuchowski-Rockette methods for receiver operating characteristic (ROC) data. Stat Med
       24:1579-1607. doi:10.1002/sim.2024
    .. [3] Hillis SL, Berbaum KS, Metz CE (2008). Recent developments in the Dorfman-Berbaum-Metz procedure
       for multireader ROC study analysis. Acad Radiol 15:647-661. doi:10.1016/j.acra.2007.12.015

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> truth = np.repeat([0, 1], 40)
    >>> res = dbm_analysis(truth + rng.normal(size=(2, 4, 80)), truth)
    >>> res.pseudovalues.shape, res.rrrc.test.statistic_name
    ((2, 4, 80), 'F')
    """
    func = "dbm_analysis"
    level = check_confidence_level(confidence_level, func=func)
    inputs = check_mrmc_inputs(
        ratings,
        truth,
        clusters,
        func=func,
        modality_names=modality_names,
        reader_names=reader_names,
        min_readers=2,
    )
    if not inputs.complete:
        raise InvalidParameterError(
            f"The 'ratings' parameter of {func} has missing readings (NaN); the DBM pseudovalue ANOVA needs every "
            "case read by every reader in every modality. Use or_analysis(..., covariance='jackknife'), which "
            "takes missing readings."
        )
    n_t, n_r = inputs.ratings.shape[:2]
    mods, rdrs = inputs.modalities, inputs.readers
    pl = placements(inputs)
    aucs = pl.auc.reshape(n_t, n_r)
    loo = loo_aucs(inputs, pl).reshape(n_t, n_r, -1)
    ps = pseudovalues(loo, aucs)
    anova = dbm_anova(ps)
    rrrc, frrc, rrfc = dbm_analyses(aucs, anova, mods, level)
    n_c = ps.shape[2]
    ddf_r = float((n_t - 1) * (n_c - 1))
    reader_tests = (
        tuple(
            f_test(
                "FRRC",
                float(anova.ms_treatment_by_reader[r]),
                float(anova.ms_treatment_case_by_reader[r]),
                n_t - 1,
                ddf_r,
            )
            for r in range(n_r)
        )
        if n_t > 1
        else ()
    )
    ses = [
        float(np.sqrt(2 * anova.ms_treatment_case_by_reader[r] / n_c)) if n_t > 1 else float("nan")
        for r in range(n_r)
    ]
    d = loo - loo.mean(axis=-1, keepdims=True)
    var_jk = (n_c - 1) / n_c * (d**2).sum(axis=-1)
    return DBMResult(
        modality_names=mods,
        reader_names=rdrs,
        confidence_level=level,
        aucs=readonly(aucs),
        pseudovalues=readonly(ps),
        anova=anova,
        rrrc=rrrc,
        frrc=frrc,
        rrfc=rrfc,
        reader_tests=reader_tests,
        readers=reader_estimates(aucs, var_jk, mods, rdrs, level),
        reader_differences=reader_differences(aucs, mods, rdrs, ses, ddf_r, level),
    )
