"""The parts every MRMC result is made of (a test, modality differences, modality and reader estimates) and the
tidy tables they become."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import astuple, dataclass, fields
from itertools import combinations
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "TEST_COLUMNS",
    "DIFFERENCE_COLUMNS",
    "MODALITY_COLUMNS",
    "READER_COLUMNS",
    "READER_DIFFERENCE_COLUMNS",
    "VARIANCE_COMPONENT_COLUMNS",
    "MRMCTest",
    "ModalityDifference",
    "ModalityEstimate",
    "ReaderEstimate",
    "ReaderDifference",
    "MRMCAnalysis",
    "VarianceComponent",
    "ratio",
    "error_df",
    "f_test",
    "chi2_test",
    "analysis_of",
    "reader_differences",
]


@dataclass(frozen=True)
class MRMCTest:
    """The global test that every modality has the same mean AUC.

    Attributes
    ----------
    analysis : str
        ``'RRRC'`` (random readers, random cases), ``'FRRC'`` (fixed readers) or ``'RRFC'`` (fixed cases).
    statistic_name : str
        ``'F'`` (F distribution with ``df`` and ``ddf``) or ``'chi2'`` (chi-square with ``df``; ``ddf`` NaN).
    statistic, df, ddf, p_value : float
    denominator : float
        The error term the treatment mean square is divided by.
    """

    analysis: str
    statistic_name: str
    statistic: float
    df: float
    ddf: float
    p_value: float
    denominator: float


@dataclass(frozen=True)
class ModalityDifference:
    """The mean AUC of ``modality_a`` minus that of ``modality_b``; ``df`` is infinite for a normal (z) interval."""

    analysis: str
    modality_a: str
    modality_b: str
    estimate: float
    standard_error: float
    df: float
    statistic: float
    low: float
    high: float
    p_value: float


@dataclass(frozen=True)
class ModalityEstimate:
    """One modality's reader-averaged AUC with its interval, from that modality's data alone."""

    analysis: str
    modality: str
    auc: float
    standard_error: float
    df: float
    low: float
    high: float


@dataclass(frozen=True)
class ReaderEstimate:
    """One reader's AUC in one modality with a normal interval from its case variance (readers fixed)."""

    modality: str
    reader: str
    auc: float
    standard_error: float
    low: float
    high: float


@dataclass(frozen=True)
class ReaderDifference:
    """One reader's AUC in ``modality_a`` minus in ``modality_b`` (readers fixed, cases random)."""

    reader: str
    modality_a: str
    modality_b: str
    estimate: float
    standard_error: float
    df: float
    statistic: float
    low: float
    high: float
    p_value: float


@dataclass(frozen=True)
class VarianceComponent:
    """A named variance component, covariance or mean square of the analysis."""

    name: str
    value: float


@dataclass(frozen=True)
class MRMCAnalysis:
    """One analysis (RRRC, FRRC or RRFC): its global test (None with one modality), every pairwise difference and
    every modality's interval."""

    test: MRMCTest | None
    differences: tuple[ModalityDifference, ...]
    modalities: tuple[ModalityEstimate, ...]


def _columns(cls: type) -> tuple[str, ...]:
    return tuple(f.name for f in fields(cls))


TEST_COLUMNS = (
    "analysis",
    "covariance",
    "statistic_name",
    "statistic",
    "df",
    "ddf",
    "p_value",
    "denominator",
)
DIFFERENCE_COLUMNS = _columns(ModalityDifference)
MODALITY_COLUMNS = _columns(ModalityEstimate)
READER_COLUMNS = _columns(ReaderEstimate)
READER_DIFFERENCE_COLUMNS = _columns(ReaderDifference)
VARIANCE_COMPONENT_COLUMNS = _columns(VarianceComponent)


def frame(rows: Sequence[tuple[object, ...]], columns: tuple[str, ...]) -> pd.DataFrame:
    import pandas as pd

    return pd.DataFrame(rows, columns=list(columns))


def records(items: Iterable[Any], columns: tuple[str, ...]) -> pd.DataFrame:
    """A table of dataclass instances, one row each (their fields in order)."""
    return frame([astuple(x) for x in items], columns)


def analysis_tables(analyses: tuple[MRMCAnalysis, ...], covariance: str) -> dict[str, pd.DataFrame]:
    """The ``tests``, ``differences`` and ``modalities`` tables of some analyses."""
    tests = [(a.test.analysis, covariance, *astuple(a.test)[1:]) for a in analyses if a.test is not None]
    return {
        "tests": frame(tests, TEST_COLUMNS),
        "differences": records((d for a in analyses for d in a.differences), DIFFERENCE_COLUMNS),
        "modalities": records((m for a in analyses for m in a.modalities), MODALITY_COLUMNS),
    }


def pairs(n: int) -> list[tuple[int, int]]:
    """Every pair (a, b), a < b, of n modalities: the differences a - b."""
    return list(combinations(range(n), 2))


def clip_unit(low: float, high: float) -> tuple[float, float]:
    """An AUC interval clipped to [0, 1] (as MRMCaov's ``trunc_ci``)."""
    return max(0.0, low), min(1.0, high)


def t_interval(estimate: float, se: float, df: float, level: float) -> tuple[float, float, float, float]:
    """(statistic, low, high, two-sided p) of a t (or, with df infinite, normal) interval and test."""
    from scipy import stats

    dist = stats.norm if np.isinf(df) else stats.t(df)
    q = float(dist.ppf((1 + level) / 2))
    if se > 0:
        stat = estimate / se
    else:  # no variance: a difference is infinitely significant, no difference undefined
        stat = float(np.sign(estimate) * np.inf) if estimate else float("nan")
    p = float(2 * dist.sf(abs(stat))) if not np.isnan(stat) else np.nan
    return float(stat), float(estimate - q * se), float(estimate + q * se), p


def modality_estimate(
    analysis: str, name: str, auc: float, se: float, df: float, level: float
) -> ModalityEstimate:
    _, low, high, _ = t_interval(auc, se, df, level)
    low, high = clip_unit(low, high)
    return ModalityEstimate(analysis, name, float(auc), float(se), float(df), low, high)


def differences(
    analysis: str, names: tuple[str, ...], means: np.ndarray, se: float, df: float, level: float
) -> tuple[ModalityDifference, ...]:
    out = []
    for a, b in pairs(len(names)):
        est = float(means[a] - means[b])
        stat, low, high, p = t_interval(est, se, df, level)
        out.append(
            ModalityDifference(analysis, names[a], names[b], est, float(se), float(df), stat, low, high, p)
        )
    return tuple(out)


def reader_estimate(modality: str, reader: str, auc: float, variance: float, level: float) -> ReaderEstimate:
    """One reader's AUC with its normal interval from its variance over the cases, clipped to [0, 1]."""
    se = float(np.sqrt(max(variance, 0.0)))
    _, low, high, _ = t_interval(auc, se, float("inf"), level)
    return ReaderEstimate(modality, reader, auc, se, *clip_unit(low, high))


def reader_estimates(
    aucs: np.ndarray,
    variances: np.ndarray,
    modalities: tuple[str, ...],
    readers: tuple[str, ...],
    level: float,
) -> tuple[ReaderEstimate, ...]:
    """Each reader's :func:`reader_estimate` in each modality from the AUCs and their variances (T, R)."""
    return tuple(
        reader_estimate(m, rd, float(aucs[t, r]), variances[t, r], level)
        for t, m in enumerate(modalities)
        for r, rd in enumerate(readers)
    )


def reader_differences(
    aucs: np.ndarray,
    modalities: tuple[str, ...],
    readers: tuple[str, ...],
    ses: Sequence[float],
    df: float,
    level: float,
) -> tuple[ReaderDifference, ...]:
    """Each reader's modality differences ``aucs[a, r] - aucs[b, r]`` with that reader's SE ``ses[r]`` on ``df``."""
    out = []
    for r, rd in enumerate(readers):
        for a, b in pairs(len(modalities)):
            est = float(aucs[a, r] - aucs[b, r])
            stat, low, high, p = t_interval(est, ses[r], df, level)
            out.append(
                ReaderDifference(rd, modalities[a], modalities[b], est, ses[r], df, stat, low, high, p)
            )
    return tuple(out)


def ratio(num: float, den: float) -> float:
    """``num / den`` with IEEE semantics (x/0 = +-inf, 0/0 = NaN), never ZeroDivisionError."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return float(np.float64(num) / np.float64(den))


def error_df(den: float, ms: float, df: float) -> float:
    """Satterthwaite's df of an error term ``den`` built on a mean square ``ms`` with ``df`` df:
    ``den^2 / (ms^2 / df)`` (Hillis's ddf_H), infinite when ``ms`` is 0."""
    out = ratio(den**2, ms**2 / df)
    return out if not np.isnan(out) else float("inf")


def f_test(
    analysis: str, ms_t: float, den: float, df: float, ddf: float, *, chi2_limit: bool = True
) -> MRMCTest:
    """``F = ms_t / den`` on (df, ddf); with ``ddf`` infinite its limit, chi-square ``df F`` on df
    (``chi2_limit=False``: the F distribution's p-value, NaN there)."""
    from scipy import stats

    f = ratio(ms_t, den)
    if np.isfinite(ddf) or not chi2_limit:
        p = float(stats.f.sf(f, df, ddf))
    else:
        p = float(stats.chi2.sf(f * df, df))
    return MRMCTest(analysis, "F", float(f), float(df), float(ddf), p, float(den))


def chi2_test(analysis: str, ms_t: float, den: float, df: int) -> MRMCTest:
    """``X2 = df ms_t / den``, chi-square on df (the fixed-readers test)."""
    from scipy import stats

    x2 = ratio(df * ms_t, den)
    return MRMCTest(
        analysis, "chi2", float(x2), float(df), float("nan"), float(stats.chi2.sf(x2, df)), float(den)
    )


def analysis_of(
    analysis: str,
    names: tuple[str, ...],
    means: np.ndarray,
    level: float,
    between: tuple[MRMCTest, float, float] | None,
    singles: Iterable[tuple[float, float]],
) -> MRMCAnalysis:
    """An :class:`MRMCAnalysis` from its global test with the differences' (SE, df) (``between``, None with one
    modality) and each modality's (SE, df) (``singles``)."""
    diffs: tuple[ModalityDifference, ...] = ()
    test = None
    if between is not None:
        test, se, df = between
        diffs = differences(analysis, names, means, se, df, level)
    estimates = (
        modality_estimate(analysis, names[t], means[t], se_t, df_t, level)
        for t, (se_t, df_t) in enumerate(singles)
    )
    return MRMCAnalysis(test, diffs, tuple(estimates))


def readonly(arr: np.ndarray) -> np.ndarray:
    out = np.array(arr, dtype=np.float64)
    out.setflags(write=False)
    return out
