"""Paired comparison of two AUCs of one :class:`~cxreval.classification.AUCResult`: the bootstrap difference on the
shared patient plan, and DeLong's test for two correlated AUCs (DeLong et al., 1988).

Re-exported by :mod:`cxreval.classification`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
from scipy import special

from ._auc_kernel import binary_labels, finite_scores
from ._validation import check_choice
from .bootstrap import BootstrapResult, percentile_ci
from .exceptions import InvalidParameterError
from .labels import (
    FINDING,
    MACRO,
    MICRO,
    MODEL,
    SCORE,
    SOURCE,
    STATE,
    STUDY_ID,
    LabelPolicy,
    validate_label_table,
    validate_predictions,
)

if TYPE_CHECKING:
    from .classification import AUCResult

__all__ = ["PairedComparisonResult", "DeLongResult", "delong_test", "compare_auc"]


@dataclass(frozen=True)
class PairedComparisonResult:
    """Difference of two AUCs computed on the same bootstrap plan (``a - b``).

    Attributes
    ----------
    a, b : tuple of (model, finding, reference)
    difference : BootstrapResult
        Estimate, percentile CI, sd and distribution of ``AUC_a - AUC_b``.
    pvalue : float
        Two-sided bootstrap p-value ``min(1, 2 min(P*(d <= 0), P*(d >= 0)))`` over defined replicates.
    method : str
        ``'bootstrap'`` or ``'delong'``.
    delong : DeLongResult or None
    """

    a: tuple[str, str, str]
    b: tuple[str, str, str]
    difference: BootstrapResult
    pvalue: float
    method: str
    delong: DeLongResult | None = None

    def to_dict(self) -> dict[str, object]:
        return {"a": list(self.a), "b": list(self.b), "method": self.method, "pvalue": self.pvalue,
                **{f"difference_{k}": v for k, v in self.difference.to_dict().items()},
                "delong": None if self.delong is None else self.delong.to_dict()}


@dataclass(frozen=True)
class DeLongResult:
    """DeLong's test for two correlated AUCs on the same studies and labels (DeLong et al., 1988).

    Attributes
    ----------
    auc_a, auc_b, difference, standard_error, z, pvalue : float
    covariance : ndarray of shape (2, 2)
    """

    auc_a: float
    auc_b: float
    difference: float
    standard_error: float
    z: float
    pvalue: float
    covariance: np.ndarray = field(repr=False)

    def to_dict(self) -> dict[str, object]:
        return {"auc_a": self.auc_a, "auc_b": self.auc_b, "difference": self.difference,
                "standard_error": self.standard_error, "z": self.z, "pvalue": self.pvalue,
                "covariance": self.covariance.tolist()}


def _placements(y: np.ndarray, s: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
    """DeLong structural components via midranks (Sun & Xu, 2014): V10 for positives, V01 for negatives."""
    from scipy.stats import rankdata

    pos, neg = s[y], s[~y]
    m, n = pos.size, neg.size
    r_all = rankdata(np.concatenate([pos, neg]))
    r_pos, r_neg = rankdata(pos), rankdata(neg)
    v10 = (r_all[:m] - r_pos) / n
    v01 = 1.0 - (r_all[m:] - r_neg) / m
    auc = float((r_all[:m].sum() - m * (m + 1) / 2) / (m * n))
    return v10, v01, auc


def delong_test(y_true: Sequence[int] | np.ndarray, y_score_a: Sequence[float] | np.ndarray,
                y_score_b: Sequence[float] | np.ndarray) -> DeLongResult:
    """DeLong's nonparametric test of ``AUC_a = AUC_b`` for two models scored on the same studies.

    ``Var(AUC_a - AUC_b) = c' (S10 / m + S01 / n) c`` with ``c = (1, -1)``, ``S10``/``S01`` the
    covariance matrices of the placement values of the ``m`` positives and ``n`` negatives. Studies are
    treated as independent (no patient clustering; use the bootstrap difference for clustered data).
    """
    y = binary_labels(y_true, "delong_test")
    a = finite_scores(y_score_a, y.size, "delong_test")
    b = finite_scores(y_score_b, y.size, "delong_test")
    m, n = int(y.sum()), int((~y).sum())
    if m < 2 or n < 2:
        raise InvalidParameterError(f"delong_test needs at least 2 positives and 2 negatives; got {m} and {n}.")
    v10a, v01a, auc_a = _placements(y, a)
    v10b, v01b, auc_b = _placements(y, b)
    s10 = np.cov(np.vstack([v10a, v10b]))
    s01 = np.cov(np.vstack([v01a, v01b]))
    cov = s10 / m + s01 / n
    var = cov[0, 0] + cov[1, 1] - 2 * cov[0, 1]
    diff = auc_a - auc_b
    se = float(np.sqrt(max(var, 0.0)))
    if se == 0:
        z = 0.0 if diff == 0 else float(np.sign(diff) * np.inf)
    else:
        z = diff / se
    p = float(2 * special.ndtr(-abs(z)))
    return DeLongResult(auc_a, auc_b, float(diff), se, float(z), p, cov)


def compare_auc(result: AUCResult, a: tuple[str, str, str], b: tuple[str, str, str], *,
                method: str = "bootstrap", predictions: pd.DataFrame | None = None,
                labels: pd.DataFrame | None = None) -> PairedComparisonResult:
    """Compare two AUCs of one :class:`AUCResult`: two models, or one model against two references.

    Parameters
    ----------
    result : AUCResult
    a, b : tuple (model, finding, reference)
    method : {'bootstrap', 'delong'}, default='bootstrap'
        ``'delong'`` (two models, same finding and reference, not the macro or micro average) also runs
        :func:`delong_test`; it needs the ``predictions`` and ``labels`` the result was computed from.

    Returns
    -------
    res : PairedComparisonResult
        The bootstrap difference always; the DeLong test when asked.
    """
    check_choice(method, ("bootstrap", "delong"), name="method", func="compare_auc")
    ia, ib = result._pos(*a), result._pos(*b)
    d = result.distribution[ia] - result.distribution[ib]
    est = float(result.point[ia] - result.point[ib])
    diff = percentile_ci(d, estimate=est, confidence_level=result.confidence_level)
    ok = d[np.isfinite(d)]
    p = float(min(1.0, 2 * min((ok <= 0).mean(), (ok >= 0).mean()))) if ok.size else float("nan")
    dl = None
    if method == "delong":
        if a[1] != b[1] or a[2] != b[2] or a[1] in (MACRO, MICRO):
            raise InvalidParameterError("compare_auc: method='delong' compares two models on the same finding and "
                                        f"reference (not the macro or micro average); got a={a}, b={b}.")
        if predictions is None or labels is None:
            raise InvalidParameterError("compare_auc: method='delong' needs the 'predictions' and 'labels' tables.")
        preds = validate_predictions(predictions)
        labs = validate_label_table(labels, require_patient=False)
        f = result.findings[ia[1]]
        lab = labs[(labs[FINDING] == f) & (labs[SOURCE] == a[2])]
        policy = LabelPolicy(uncertain=result.policy, not_mentioned=result.not_mentioned)
        y = pd.Series(policy.binarize(lab[STATE]), index=lab[STUDY_ID].to_numpy()).dropna()
        sa = preds[(preds[MODEL] == a[0]) & (preds[FINDING] == f)].set_index(STUDY_ID)[SCORE]
        sb = preds[(preds[MODEL] == b[0]) & (preds[FINDING] == f)].set_index(STUDY_ID)[SCORE]
        ids = y.index.intersection(sa.index).intersection(sb.index)
        dl = delong_test(y.loc[ids].to_numpy().astype(int), sa.loc[ids].to_numpy(), sb.loc[ids].to_numpy())
        p = dl.pvalue
    return PairedComparisonResult(tuple(a), tuple(b), diff, p, method, dl)  # type: ignore[arg-type]
