"""The model against a panel of readers: is the readers' mean AUC different from the model's (one modality)?"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from .._validation import check_confidence_level, float_array
from ..exceptions import InvalidParameterError
from ._fom import CovarianceMethod, check_covariance_method, covariance_matrix, placements
from ._inputs import check_mrmc_inputs, check_names
from ._results import (
    READER_COLUMNS,
    VARIANCE_COMPONENT_COLUMNS,
    ModalityDifference,
    ModalityEstimate,
    MRMCAnalysis,
    MRMCTest,
    ReaderEstimate,
    analysis_tables,
    clip_unit,
    error_df,
    frame,
    reader_estimate,
    readonly,
    records,
    t_interval,
)

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["ModelVsReadersResult", "model_vs_readers"]

READERS_LABEL = "readers"


@dataclass(frozen=True)
class ModelVsReadersResult:
    """The readers' mean AUC minus the model's (see :func:`model_vs_readers`).

    Attributes
    ----------
    model_name : str
    reader_names : tuple of str
    covariance_method : str
    confidence_level : float
    model_auc : float
    reader_aucs : ndarray of shape (n_readers,)
    covariance : ndarray of shape (n_readers + 1, n_readers + 1)
        The covariance of (model, reader 1, ..., reader R) AUCs over the cases (read-only).
    var_error, cov2 : float
        The mean variance of one reader-minus-model difference and the mean covariance of two readers'
        differences (Hillis 2007's single-modality Var(error) and Cov2 of the differences).
    ms_reader : float
        The sample variance of the readers' differences (MS(R)).
    rrrc, frrc, rrfc : MRMCAnalysis
        Readers and cases random (RJafroc's 1T-RRRC), readers fixed, cases fixed (RJafroc's 1T-RRFC, a one-sample
        t-test of the differences). Each holds one difference ``readers - model``, its test (F = t^2) and the
        readers' mean AUC with the interval ``model AUC + interval of the difference``. A test's statistic is the
        square of the difference's t (or z), its ``denominator`` the difference's variance (SE^2).
    readers : tuple of ReaderEstimate
        The model (modality = the model's name) and each reader (modality ``'readers'``) with normal intervals.
    """

    model_name: str
    reader_names: tuple[str, ...]
    covariance_method: str
    confidence_level: float
    model_auc: float
    reader_aucs: np.ndarray
    covariance: np.ndarray
    var_error: float
    cov2: float
    ms_reader: float
    rrrc: MRMCAnalysis
    frrc: MRMCAnalysis
    rrfc: MRMCAnalysis
    readers: tuple[ReaderEstimate, ...]

    @property
    def mean_reader_auc(self) -> float:
        return float(self.reader_aucs.mean())

    def tables(self) -> dict[str, pd.DataFrame]:
        """Tidy tables: ``tests``, ``differences`` (modality_a ``'readers'``, modality_b the model),
        ``modalities`` (the readers' mean AUC), ``readers`` and ``variance_components``."""
        out = analysis_tables((self.rrrc, self.frrc, self.rrfc), self.covariance_method)
        out["readers"] = records(self.readers, READER_COLUMNS)
        comps = {
            "var_error": self.var_error,
            "cov2": self.cov2,
            "ms_reader": self.ms_reader,
            "var_reader": self.ms_reader - self.var_error + self.cov2,
        }
        out["variance_components"] = frame(list(comps.items()), VARIANCE_COMPONENT_COLUMNS)
        return out


def _analysis(
    name: str, model: str, model_auc: float, diff: float, se: float, df: float, level: float, mean_auc: float
) -> MRMCAnalysis:
    from scipy import stats

    stat, low, high, p = t_interval(diff, se, df, level)
    if np.isinf(df):  # readers fixed: a normal z, its square chi-square on 1 df
        test = MRMCTest(name, "chi2", stat**2, 1.0, float("nan"), float(stats.chi2.sf(stat**2, 1)), se**2)
    else:
        test = MRMCTest(name, "F", stat**2, 1.0, df, p, se**2)
    d = ModalityDifference(name, READERS_LABEL, model, diff, se, df, stat, low, high, p)
    lo, hi = clip_unit(model_auc + low, model_auc + high)
    return MRMCAnalysis(test, (d,), (ModalityEstimate(name, READERS_LABEL, mean_auc, se, df, lo, hi),))


def model_vs_readers(
    reader_ratings: object,
    model_score: object,
    truth: object,
    *,
    covariance: CovarianceMethod = "jackknife",
    clusters: object = None,
    confidence_level: float = 0.95,
    reader_names: Sequence[str] | None = None,
    model_name: str = "model",
) -> ModelVsReadersResult:
    """The model (fixed) against a panel of random readers on the same cases: H0 mean reader AUC = model AUC.

    RJafroc's single-modality "1T-RRRC" (``StCadVsRad``; Hillis 2007, section 5.3, with theta_0 the model's
    AUC): each reader's difference ``D_j = AUC_j - AUC_model`` is one reader's outcome in a single-modality OR
    model, the model a fixed reference read on the same cases. With ``Var`` and ``Cov2`` the mean variance and
    covariance of the differences over the cases (from ``covariance``, jackknife by default as RJafroc) and
    ``MS(R)`` their sample variance over readers,

    ``t = mean(D) / sqrt([MS(R) + R max(Cov2, 0)] / R)`` on ``df = [MS(R) + R max(Cov2, 0)]^2 / [MS(R)^2/(R-1)]``

    (the RRRC analysis; equal to the two-modality OR analysis with the model replicated as a modality, RJafroc's
    "2T-RRRC"). Also: readers fixed (normal, ``SE^2 = [Var + (R-1) max(Cov2, 0)]/R``) and cases fixed
    (RJafroc's "1T-RRFC": a one-sample t-test of the differences on R - 1 df). Estimates are readers minus model,
    as RJafroc's ``avgDiffFom``.

    Parameters
    ----------
    reader_ratings : array-like of shape (n_readers, n_cases)
        Each reader's rating of each case (higher = more likely diseased); NaN = not read.
    model_score : array-like of shape (n_cases,)
        The model's score of every case.
    truth : array-like of shape (n_cases,)
        1 diseased, 0 not.
    covariance : {'jackknife', 'delong', 'unbiased'}, default='jackknife'
    clusters : array-like of shape (n_cases,), optional
        The patient of each case (see :func:`or_analysis`).
    confidence_level : float, default=0.95
    reader_names : sequence of str, optional
    model_name : str, default='model'

    Returns
    -------
    res : ModelVsReadersResult

    Raises
    ------
    InvalidParameterError
        Fewer than 2 readers, a model score missing (NaN) on a case, shapes that do not match, or the input
        errors of :func:`or_analysis`.

    Notes
    -----
    The model is fixed (its AUC is not a draw from a population of models) but its AUC varies with the cases,
    which is why the differences' case covariance enters. Assumptions: independent cases (unless
    ``clusters``), readers a random sample, differences approximately normal.

    References
    ----------
    .. [1] Hillis SL (2007). A comparison of denominator degrees of freedom methods for multiple observer ROC
       analysis. Stat Med 26:596-619. doi:10.1002/sim.2532
    .. [2] Chakraborty DP (2017). Observer Performance Methods for Diagnostic Imaging, ch. "Standalone CAD vs.
       radiologists". CRC Press.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> truth = np.repeat([0, 1], 50)
    >>> res = model_vs_readers(truth + rng.normal(size=(5, 100)), 2 * truth + rng.normal(size=100), truth)
    >>> res.rrrc.differences[0].modality_a, res.rrrc.differences[0].modality_b
    ('readers', 'model')
    """
    func = "model_vs_readers"
    level = check_confidence_level(confidence_level, func=func)
    method = check_covariance_method(covariance, func=func)
    if not isinstance(model_name, str) or model_name == READERS_LABEL:
        raise InvalidParameterError(
            f"The 'model_name' parameter of {func} must be a str other than {READERS_LABEL!r}. Got {model_name!r}."
        )
    error = InvalidParameterError(
        f"The 'reader_ratings' and 'model_score' parameters of {func} must be numeric array-likes."
    )
    readers, model = float_array(reader_ratings, error), float_array(model_score, error)
    if readers.ndim != 2:
        raise InvalidParameterError(
            f"The 'reader_ratings' parameter of {func} must have shape (n_readers, n_cases). Got {readers.shape}."
        )
    if readers.shape[0] < 2:
        raise InvalidParameterError(
            f"The 'reader_ratings' parameter of {func} must hold at least 2 readers (their variance is estimated). "
            f"Got {readers.shape[0]}."
        )
    if model.shape != (readers.shape[1],):
        raise InvalidParameterError(
            f"The 'model_score' parameter of {func} must hold one score per case ({readers.shape[1]}). Got shape "
            f"{model.shape}."
        )
    if np.isnan(model).any():
        raise InvalidParameterError(
            f"The 'model_score' parameter of {func} has {int(np.isnan(model).sum())} missing (NaN) scores; the "
            "model must score every case."
        )
    n_rdr = readers.shape[0]
    rdrs = check_names(reader_names, n_rdr, name="reader_names", func=func)
    inputs = check_mrmc_inputs(
        np.concatenate([model[None], readers])[None],
        truth,
        clusters,
        func=func,
        reader_names=(model_name, *rdrs),
    )
    pl = placements(inputs)
    cov = covariance_matrix(inputs, pl, method)
    aucs = pl.auc
    # the differences' covariance: C_jj' - C_j0 - C_0j' + C_00
    dcov = cov[1:, 1:] - cov[1:, :1] - cov[:1, 1:] + cov[0, 0]
    var = float(np.diag(dcov).mean())
    off = ~np.eye(n_rdr, dtype=bool)
    cov2 = float(dcov[off].mean())
    diffs = aucs[1:] - aucs[0]
    mean_d = float(diffs.mean())
    ms_r = float(diffs.var(ddof=1))
    den = ms_r + n_rdr * max(cov2, 0.0)
    ddf = error_df(den, ms_r, n_rdr - 1)
    mean_auc = float(aucs[1:].mean())
    model_auc = float(aucs[0])
    se_fixed_readers = float(np.sqrt(max(var + (n_rdr - 1) * max(cov2, 0.0), 0.0) / n_rdr))
    out_readers = [
        reader_estimate(mod, name, float(aucs[g]), cov[g, g], level)
        for g, (mod, name) in enumerate([(model_name, model_name)] + [(READERS_LABEL, r) for r in rdrs])
    ]
    return ModelVsReadersResult(
        model_name=model_name,
        reader_names=rdrs,
        covariance_method=method,
        confidence_level=level,
        model_auc=model_auc,
        reader_aucs=readonly(aucs[1:]),
        covariance=readonly(cov),
        var_error=var,
        cov2=cov2,
        ms_reader=ms_r,
        rrrc=_analysis(
            "RRRC", model_name, model_auc, mean_d, float(np.sqrt(den / n_rdr)), ddf, level, mean_auc
        ),
        frrc=_analysis(
            "FRRC", model_name, model_auc, mean_d, se_fixed_readers, float("inf"), level, mean_auc
        ),
        rrfc=_analysis(
            "RRFC",
            model_name,
            model_auc,
            mean_d,
            float(np.sqrt(ms_r / n_rdr)),
            float(n_rdr - 1),
            level,
            mean_auc,
        ),
        readers=tuple(out_readers),
    )
