"""Paired comparison of two AUCs of one :class:`~cxreval.stats.AUCResult`: the bootstrap difference on the
shared patient plan, and DeLong's test for two correlated AUCs (DeLong et al., 1988).

Re-exported by :mod:`cxreval.classification`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from itertools import combinations
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
import pandas as pd

from .._validation import check_choice
from ..bootstrap import BootstrapResult, percentile_ci
from ..exceptions import InvalidParameterError
from ..labels import validate_label_table, validate_predictions
from ..results import TableResult
from ..schema import FINDING, MACRO, MICRO, MODEL, SCORE, SOURCE, STATE, STUDY_ID
from ..schema._states import LabelPolicy
from ..stats._auc_kernel import binary_labels, finite_scores

if TYPE_CHECKING:
    from ..stats import AUCResult

__all__ = [
    "PairedComparisonResult",
    "DeLongResult",
    "delong_test",
    "compare_auc",
    "SEPARABILITY_COLUMNS",
    "SeparabilityResult",
    "compare_best_models",
]


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
        return {
            "a": list(self.a),
            "b": list(self.b),
            "method": self.method,
            "pvalue": self.pvalue,
            **{f"difference_{k}": v for k, v in self.difference.to_dict().items()},
            "delong": None if self.delong is None else self.delong.to_dict(),
        }


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
        return {**asdict(self), "covariance": self.covariance.tolist()}


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


def delong_test(
    y_true: Sequence[int] | np.ndarray,
    y_score_a: Sequence[float] | np.ndarray,
    y_score_b: Sequence[float] | np.ndarray,
) -> DeLongResult:
    """DeLong's nonparametric test of ``AUC_a = AUC_b`` for two models scored on the same studies.

    ``Var(AUC_a - AUC_b) = c' (S10 / m + S01 / n) c`` with ``c = (1, -1)``, ``S10``/``S01`` the
    covariance matrices of the placement values of the ``m`` positives and ``n`` negatives. Studies are
    treated as independent (no patient clustering; use the bootstrap difference for clustered data).
    """
    from scipy import special

    y = binary_labels(y_true, "delong_test")
    a = finite_scores(y_score_a, y.size, "delong_test")
    b = finite_scores(y_score_b, y.size, "delong_test")
    m, n = int(y.sum()), int((~y).sum())
    if m < 2 or n < 2:
        raise InvalidParameterError(
            f"delong_test needs at least 2 positives and 2 negatives; got {m} and {n}."
        )
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


def compare_auc(
    result: AUCResult,
    a: tuple[str, str, str],
    b: tuple[str, str, str],
    *,
    method: str = "bootstrap",
    predictions: pd.DataFrame | None = None,
    labels: pd.DataFrame | None = None,
) -> PairedComparisonResult:
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
            raise InvalidParameterError(
                "compare_auc: method='delong' compares two models on the same finding and "
                f"reference (not the macro or micro average); got a={a}, b={b}."
            )
        if predictions is None or labels is None:
            raise InvalidParameterError(
                "compare_auc: method='delong' needs the 'predictions' and 'labels' tables."
            )
        if a[2] in result.soft_references:
            raise InvalidParameterError(
                f"compare_auc: method='delong' needs 0/1 labels; reference {a[2]!r} has soft "
                f"labels (p_positive): use method='bootstrap'."
            )
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


# ------------------------------------------------------------------------------------------------
# separability of the best models: the comparisons behind every "best model" statement
# ------------------------------------------------------------------------------------------------

SEPARABILITY_COLUMNS: tuple[str, ...] = (
    FINDING,
    "reference",
    "model_a",
    "model_b",
    "comparison",
    "auc_a",
    "auc_b",
    "difference",
    "ci_low",
    "ci_high",
    "confidence_level",
    "n_comparisons",
    "pvalue",
    "pvalue_holm",
    "method",
    "separable",
)
"""The columns of ``auc_comparison.csv``: one paired comparison ``model_a - model_b`` under ``reference``.

``comparison`` is ``'runner-up'`` (the best model under ``reference`` against the second best) or ``'best under
R'`` (the best model under ``reference`` against the best under reference ``R``, both scored under ``reference``;
every such pair of references is compared both ways, so the verdicts do not depend on the order of references).
``ci_low``/``ci_high`` are simultaneous intervals: each at ``1 - (1 - confidence_level) / n_comparisons``
(Bonferroni over the ``n_comparisons`` comparisons of the same finding), so that all of a finding's intervals hold
together with probability ``confidence_level``; ``pvalue_holm`` is Holm's step-down adjustment over the same family.
``separable`` is True when the simultaneous interval excludes 0; ``method`` is ``'bootstrap'`` (paired, on the
result's patient plan), ``'delong'`` (no plan: DeLong's test, a per-finding AUC only) or ``'none'`` (neither
possible; the interval is empty)."""


@dataclass(frozen=True)
class SeparabilityResult(TableResult):
    """The paired comparisons behind "the best model" under each reference (:func:`compare_best_models`).

    Attributes
    ----------
    table : pandas.DataFrame
        Columns :data:`SEPARABILITY_COLUMNS`.
    main_reference : str
        The reference every other reference's best model is compared with; ``''`` (the default): every pair of
        references whose best models differ is compared.
    confidence_level : float
        The family-wise confidence level of each finding's intervals.

    ``FILES``: ``auc_comparison`` (``auc_comparison.csv``), which the report reads to say whether two models
    are separable.
    """

    FILES: ClassVar[Mapping[str, str]] = MappingProxyType({"auc_comparison": "auc_comparison.csv"})
    COLUMNS: ClassVar[tuple[str, ...]] = SEPARABILITY_COLUMNS

    table: pd.DataFrame
    main_reference: str
    confidence_level: float

    def summary(self) -> str:
        from ..io import markdown_table

        return (
            "# Is the best model separable from the next?\n\n"
            f"Paired differences of AUC on the same patients; {self.confidence_level:.0%} simultaneous intervals "
            "(Bonferroni over each finding's comparisons).\n\n"
            + markdown_table(self.table, floatfmt="{:.4f}")
        )

    def verdicts(self) -> str:
        """Markdown: is the best model separable? One line per comparison of :attr:`table` (findings in their
        order, references sorted, so the text does not depend on the order the references were given in), each
        with its ΔAUC, simultaneous interval and verdict; the section of ``summary.md`` that ``classify`` and
        ``rank`` write."""
        lines = [
            "## Is the best model separable?",
            "",
            f"Paired ΔAUC on the same patients, {self.confidence_level:.0%} intervals simultaneous over each "
            f"finding's comparisons (Bonferroni); separable = the interval excludes 0 ({self.FILES['auc_comparison']}).",
            "",
        ]
        if self.table.empty:
            return "\n".join(lines + ["No comparison: no finding has two models with an AUC.", ""])
        t = self.table
        order = {f: k for k, f in enumerate(pd.unique(t[FINDING]))}
        t = t.assign(_f=t[FINDING].map(order)).sort_values(["_f", "reference", "model_b"], kind="stable")
        for r in t.itertuples(index=False):
            if np.isfinite(r.ci_low) and np.isfinite(r.ci_high):
                verdict = "separable" if r.separable else "not separable"
                num = f"ΔAUC {r.difference:.3f} ({r.ci_low:.3f} to {r.ci_high:.3f})"
            else:
                verdict, num = f"not assessed ({r.method})", f"ΔAUC {r.difference:.3f}"
            what = "; ".join(sorted(str(r.comparison).split("; "), key=lambda w: (w != "runner-up", w)))
            lines.append(
                f"- {r.finding}, under {r.reference}: {r.model_a} vs {r.model_b} ({what}): {num}, "
                f"**{verdict}**"
            )
        return "\n".join(lines + [""])

    @classmethod
    def figure(cls, table: pd.DataFrame) -> Any:
        """Each paired difference ``auc_a - auc_b`` of ``auc_comparison.csv`` with its simultaneous interval (0 =
        not separable): the report's figure of the file."""
        from .._plots.auc_rankings import separability_forest

        return separability_forest(table)


def _holm(p: np.ndarray) -> np.ndarray:
    """Holm's step-down adjusted p-values (NaN kept)."""
    out = np.full(p.shape, np.nan)
    ok = np.flatnonzero(np.isfinite(p))
    if ok.size == 0:
        return out
    order = ok[np.argsort(p[ok], kind="stable")]
    m = order.size
    adj = np.minimum(1.0, np.maximum.accumulate((m - np.arange(m)) * p[order]))
    out[order] = adj
    return out


def compare_best_models(
    result: AUCResult,
    *,
    main_reference: str | None = None,
    predictions: pd.DataFrame | None = None,
    labels: pd.DataFrame | None = None,
) -> SeparabilityResult:
    """Compare the best model under each reference with the runner-up and with the best under every other reference.

    For every finding (the macro and micro averages included) and reference ``r``: the best model under ``r``
    against the second best under ``r``; and, for every pair of references ``r``, ``s`` whose best models differ,
    best(``r``) against best(``s``) scored under ``r`` and under ``s``. The comparisons (and so the verdicts) do not
    depend on the order of the references; only the order of the rows does.
    Each difference is paired: computed on the result's patient bootstrap plan (the same resampled patients for
    both AUCs); without a plan (``n_resamples=0``) DeLong's test gives it for a per-finding AUC when
    ``predictions`` and ``labels`` are given, else it is not assessed (``method='none'``). Multiple comparisons:
    the intervals of one finding are Bonferroni-simultaneous and the p-values Holm-adjusted
    (:data:`SEPARABILITY_COLUMNS`).

    Parameters
    ----------
    result : AUCResult
    main_reference : str, optional
        Compare the best models across references only in the pairs that include this reference (default: every
        pair of references).
    predictions, labels : pandas.DataFrame, optional
        The tables the result was computed from (only used without a bootstrap plan).

    Returns
    -------
    res : SeparabilityResult
    """
    from scipy.stats import norm

    refs = list(result.references)
    main = "" if main_reference is None else main_reference
    if main:
        check_choice(main, tuple(refs), name="main_reference", func="compare_best_models")
    models = list(result.models)
    rows: list[dict[str, object]] = []
    for j, finding in enumerate(result.findings):
        pairs: list[tuple[str, str, str, str]] = []  # (reference, model_a, model_b, comparison)
        best: dict[str, str] = {}
        for k, r in enumerate(refs):
            pt = np.asarray(result.point[:, j, k], dtype=float)
            order = [
                i
                for i in np.argsort(-np.where(np.isfinite(pt), pt, -np.inf), kind="stable")
                if np.isfinite(pt[i])
            ]
            if not order:
                continue
            best[r] = models[order[0]]
            if len(order) > 1:
                pairs.append((r, models[order[0]], models[order[1]], "runner-up"))
        for ra, rb in combinations(refs, 2):
            if main and main not in (ra, rb):
                continue
            if ra not in best or rb not in best or best[ra] == best[rb]:
                continue
            pairs.append((rb, best[rb], best[ra], f"best under {ra}"))
            pairs.append((ra, best[ra], best[rb], f"best under {rb}"))
        merged: dict[tuple[str, str, str], str] = {}  # the same comparison asked twice is made once
        for r, ma, mb, what in pairs:
            key = (r, ma, mb)
            merged[key] = f"{merged[key]}; {what}" if key in merged else what
        pairs = [(*key, what) for key, what in merged.items()]
        if not pairs:
            continue
        m = len(pairs)
        level = 1 - (1 - result.confidence_level) / m
        found: list[dict[str, object]] = []
        for r, ma, mb, what in pairs:
            a, b = (ma, finding, r), (mb, finding, r)
            ia, ib = result._pos(*a), result._pos(*b)
            auc_a, auc_b = float(result.point[ia]), float(result.point[ib])
            lo = hi = p = float("nan")
            if result.n_resamples > 0:
                method = "bootstrap"
                d = result.distribution[ia] - result.distribution[ib]
                ci = percentile_ci(d, estimate=auc_a - auc_b, confidence_level=level).confidence_interval
                lo, hi = ci.low, ci.high
                ok = d[np.isfinite(d)]
                p = float(min(1.0, 2 * min((ok <= 0).mean(), (ok >= 0).mean()))) if ok.size else float("nan")
            elif predictions is not None and labels is not None and finding not in (MACRO, MICRO):
                method = "delong"
                dl = compare_auc(result, a, b, method="delong", predictions=predictions, labels=labels).delong
                if dl is None:  # compare_auc(method='delong') always runs the test
                    raise RuntimeError("compare_auc(method='delong') returned no DeLong result")
                half = float(norm.ppf(1 - (1 - level) / 2)) * dl.standard_error
                lo, hi, p = dl.difference - half, dl.difference + half, dl.pvalue
            else:
                method = "none"
            found.append(
                {
                    FINDING: finding,
                    "reference": r,
                    "model_a": ma,
                    "model_b": mb,
                    "comparison": what,
                    "auc_a": auc_a,
                    "auc_b": auc_b,
                    "difference": auc_a - auc_b,
                    "ci_low": lo,
                    "ci_high": hi,
                    "confidence_level": result.confidence_level,
                    "n_comparisons": m,
                    "pvalue": p,
                    "method": method,
                    "separable": bool(np.isfinite(lo) and (lo > 0 or hi < 0)),
                }
            )
        holm = _holm(np.array([float(f["pvalue"]) for f in found]))  # type: ignore[arg-type]
        for f, h in zip(found, holm):
            f["pvalue_holm"] = float(h)
        rows.extend(found)
    table = pd.DataFrame(rows, columns=list(SEPARABILITY_COLUMNS))
    return SeparabilityResult(table, main, float(result.confidence_level))
