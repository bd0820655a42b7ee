"""The two-phase estimate: every model's AUC from cheap references plus a subset whose truth is known (the anchor,
e.g. an expert's relabelling), and whether the leading pair of models is separable.

Per finding, a two-class latent model (:mod:`cxreval.planning._mixture`: the references' errors independent of
each other and of the scores given the truth; the models' scores, each on the normal scale of its ranks,
multivariate normal with a common covariance given the truth) is fitted by maximum likelihood (EM) with the
anchored studies entering with their truth. Its posteriors ``w_i = P(T_i = 1 | references, every score, anchor)``
weight the Mann–Whitney pairs of every model:
``AUC = sum_{i != j} w_i (1 - w_j) H(s_i - s_j) / sum_{i != j} w_i (1 - w_j)``; an anchored study has ``w_i = T_i``.
Because the relabelled studies were chosen from the observed labels and scores only, their truth is missing at
random given the observed data and the likelihood may ignore how they were chosen.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from .._validation import check_confidence_level
from ..exceptions import InvalidParameterError
from ..io import markdown_table
from ..results import ReadResult, TableResult
from ._inputs import PlanInputs, prepare_inputs
from ._planner import FindingFit, fit_finding, interval
from ._soft_auc import score_order, soft_auc

__all__ = ["TWO_PHASE_COLUMNS", "COMPARISON_COLUMNS", "TwoPhaseAUCResult", "evaluate_two_phase_auc"]

TWO_PHASE_COLUMNS: tuple[str, ...] = (
    "finding",
    "model",
    "auc",
    "auc_reference",
    "rank",
    "n_studies",
    "n_anchored",
    "converged",
)
COMPARISON_COLUMNS: tuple[str, ...] = (
    "finding",
    "model_a",
    "model_b",
    "delta",
    "ci_low",
    "ci_high",
    "separable",
    "confidence_level",
)

METHOD = (
    "two-phase latent-class estimate: per finding, references conditionally independent of each other and of "
    "the scores given the truth, the models' scores multivariate normal (common covariance) on the normal "
    "scale of their ranks, anchored studies entered with their truth; AUC = posterior-weighted Mann-Whitney"
)


@dataclass(frozen=True)
class TwoPhaseAUCResult(TableResult):
    """Every model's two-phase AUC per finding (``auc.csv``) and the leading pair's difference (``comparison.csv``).

    Attributes
    ----------
    table : DataFrame
        :data:`TWO_PHASE_COLUMNS`: ``auc`` the two-phase estimate, ``auc_reference`` the ordinary AUC against the
        reference alone (its decided studies), ``rank`` 1 = best by ``auc``.
    comparison : DataFrame
        :data:`COMPARISON_COLUMNS`: ``delta`` = AUC(model_a) - AUC(model_b) with its interval (DeLong's variance
        with posterior weights plus the label uncertainty of the studies not anchored).
    reference, anchor : str or None
    readers : tuple of str
    """

    FILES: ClassVar[Mapping[str, str]] = MappingProxyType({"auc": "auc.csv", "comparison": "comparison.csv"})
    COLUMNS: ClassVar[tuple[str, ...]] = TWO_PHASE_COLUMNS

    table: pd.DataFrame
    comparison: pd.DataFrame
    reference: str
    readers: tuple[str, ...]
    anchor: str | None
    method: str = METHOD

    def tables(self) -> dict[str, pd.DataFrame]:
        return {"auc": self.table, "comparison": self.comparison}

    def summary(self) -> str:
        wide = self.table.pivot(index="model", columns="finding", values="auc").reset_index()
        return "\n".join(
            [
                "## AUC, two-phase estimate",
                "",
                f"Reference {self.reference!r}"
                + (f", readers {', '.join(self.readers)}" if self.readers else "")
                + (f", anchor {self.anchor!r} (treated as exact)" if self.anchor else ", no anchor")
                + ". "
                + METHOD
                + ".",
                "",
                markdown_table(wide, decimals=3),
                "",
                "### Leading pair per finding",
                "",
                markdown_table(self.comparison, decimals=4),
            ]
        )

    @classmethod
    def figure(cls, table: pd.DataFrame) -> Any:
        from .._plots import dot_interval

        return dot_interval(table, value="auc", category=["finding", "model"], title="Two-phase AUC estimate")


def _reference_auc(ff: FindingFit, model: str) -> float:
    y = ff.data.references[:, 0]
    ok = ~np.isnan(y)
    if len(np.unique(y[ok])) < 2:
        return float("nan")
    return float(soft_auc(y[ok], score_order(ff.data.scores[model][ok])))


def compare_pair(ff: FindingFit, a: str, b: str, *, confidence_level: float) -> dict[str, object]:
    """The row of ``comparison.csv`` for models ``a`` and ``b`` of one finding."""
    delta, h = interval(ff, a, b, ff.posterior, ~np.isnan(ff.data.anchor), confidence_level=confidence_level)
    d, half = float(delta), float(h)
    return {
        "finding": ff.data.finding,
        "model_a": a,
        "model_b": b,
        "delta": d,
        "ci_low": d - half,
        "ci_high": d + half,
        "separable": bool(abs(d) > half),
        "confidence_level": confidence_level,
    }


def two_phase_tables(
    inputs: PlanInputs,
    fits: Sequence[FindingFit],
    *,
    confidence_level: float,
    pairs: Mapping[str, tuple[str, str]] | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    rows, comp = [], []
    for ff in fits:
        ranked = sorted(ff.auc, key=lambda m: (-np.nan_to_num(ff.auc[m], nan=-1.0), m))
        for m in ff.data.scores:  # every model, or one of each set of identical ones (a plan's)
            rows.append(
                {
                    "finding": ff.data.finding,
                    "model": m,
                    "auc": ff.auc[m],
                    "auc_reference": _reference_auc(ff, m),
                    "rank": ranked.index(m) + 1,
                    "n_studies": len(ff.data.index),
                    "n_anchored": int((~np.isnan(ff.data.anchor)).sum()),
                    "converged": ff.converged,
                }
            )
        pair = (pairs or {}).get(ff.data.finding) or ((ff.best, ff.runner_up) if ff.runner_up else None)
        if pair is not None:
            comp.append(compare_pair(ff, pair[0], pair[1], confidence_level=confidence_level))
    return (
        pd.DataFrame(rows, columns=list(TWO_PHASE_COLUMNS)),
        pd.DataFrame(comp, columns=list(COMPARISON_COLUMNS)),
    )


def evaluate_two_phase_auc(
    predictions: pd.DataFrame | ReadResult | Sequence[pd.DataFrame | ReadResult],
    labels: pd.DataFrame | ReadResult | Sequence[pd.DataFrame | ReadResult],
    *,
    reference: str,
    anchor: str | None = None,
    readers: Sequence[str] | None = None,
    anchor_studies: Sequence[str] | None = None,
    findings: Sequence[str] | None = None,
    pairs: Mapping[str, tuple[str, str]] | None = None,
    confidence_level: float = 0.95,
) -> TwoPhaseAUCResult:
    """Estimate every model's AUC from cheap references and an anchor subset whose labels are treated as exact.

    Parameters
    ----------
    predictions : DataFrame, ReadResult or list of them
        Long prediction table ``study_id, model, finding, score`` (at least two models).
    labels : DataFrame, ReadResult or list of them
        Long label table ``study_id, [patient_id,] finding, source, state``; uncertain states are left out
        (not decided), not-mentioned ones read as negative.
    reference : str
        The cheap source that labels every study.
    anchor : str, optional
        The source whose labels, where given, are the truth (an expert's relabelling of some studies).
    readers : list of str, optional
        Further sources used as noisy references.
    anchor_studies : list of str, optional
        Count the anchor's labels on these studies only.
    findings : list of str, optional
        Default: every finding the reference labels and the predictions score.
    pairs : mapping finding -> (model_a, model_b), optional
        The pair compared per finding (default: the two leading models by the estimate, skipping a model whose
        scores equal the leader's).
    confidence_level : float, default=0.95

    Returns
    -------
    res : TwoPhaseAUCResult

    Notes
    -----
    Assumptions (see the module docstring): references' errors independent given the truth and of the scores;
    the scores multivariate normal on the normal scale of their ranks; the anchor exact. With a single reference and no anchor
    the model is identified only by the normal score assumption. The interval of ``delta`` adds the label uncertainty
    of the unanchored studies (first order) to DeLong's variance; it leaves out the uncertainty of the fitted
    latent-class parameters, so it is somewhat narrow when few studies are anchored.
    """
    cl = check_confidence_level(confidence_level, func="evaluate_two_phase_auc")
    inputs = prepare_inputs(
        predictions,
        labels,
        reference=reference,
        readers=readers,
        anchor=anchor,
        findings=findings,
        anchor_studies=anchor_studies,
        func="evaluate_two_phase_auc",
    )
    for f, pair in (pairs or {}).items():
        if f not in {d.finding for d in inputs.findings} or any(m not in inputs.models for m in pair):
            raise InvalidParameterError(
                f"The 'pairs' parameter of evaluate_two_phase_auc: {f!r}: {pair!r} needs a "
                f"finding evaluated and two models of {list(inputs.models)}."
            )
    fits = [fit_finding(fd) for fd in inputs.findings]
    auc, comp = two_phase_tables(inputs, fits, confidence_level=cl, pairs=pairs)
    return TwoPhaseAUCResult(
        auc, comp, reference=inputs.sources[0], readers=inputs.sources[1:], anchor=anchor
    )
