"""The design-based estimate once the expert has labelled a plan's sample: :func:`evaluate_design_auc` →
:class:`DesignAUCResult` (``design_auc.csv``, ``design_comparison.csv``). The method is in
:mod:`cxreval.planning._design`."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from .._validation import check_confidence_level
from ..exceptions import SchemaError
from ..io import markdown_table
from ..results import ReadResult, TableResult
from ._design import DESIGN_METHOD, design_auc, design_delta, plugin_auc
from ._estimate import COMPARISON_COLUMNS
from ._inputs import PlanInputs, prepare_inputs
from ._planner import FindingFit, fit_finding
from ._soft_auc import auc_variance, score_order, soft_auc

__all__ = [
    "DESIGN_COLUMNS",
    "DesignAUCResult",
    "evaluate_design_auc",
    "design_tables",
    "read_design",
    "Design",
]

DESIGN_COLUMNS: tuple[str, ...] = (
    "finding",
    "model",
    "auc",
    "ci_low",
    "ci_high",
    "rank",
    "auc_predictions",
    "auc_random_part",
    "random_ci_low",
    "random_ci_high",
    "n_studies",
    "n_sampled",
    "n_random_part",
    "confidence_level",
)

_FUNC = "evaluate_design_auc"


@dataclass(frozen=True)
class Design:
    """A plan's sample as read back: per study id its inclusion probability and whether it is in the random part;
    ``n_listed`` the length of the list."""

    pi: dict[str, float]
    random: dict[str, bool]

    @property
    def n_listed(self) -> int:
        return len(self.pi)


def read_design(design: pd.DataFrame, *, func: str = _FUNC) -> Design:
    """The design of a table with ``study_id`` and ``inclusion_probability`` in (0, 1] (a plan's ``relabel.csv``;
    ``random_part`` optional), refusing anything else by name."""
    missing = [c for c in ("study_id", "inclusion_probability") if c not in design.columns]
    if missing:
        raise SchemaError(
            f"The 'design' parameter of {func} needs the columns study_id and inclusion_probability (a plan's "
            f"relabel.csv); it lacks {', '.join(missing)}. It has {list(design.columns)}."
        )
    pi = pd.to_numeric(design["inclusion_probability"], errors="coerce")
    bad = design.loc[~pi.between(0, 1, inclusive="right"), "study_id"]
    if len(bad):
        raise SchemaError(
            f"The 'design' parameter of {func}: inclusion_probability must be in (0, 1]; study "
            f"{bad.iloc[0]!r} has {str(design.loc[bad.index[0], 'inclusion_probability'])!r}."
        )
    ids = design["study_id"].astype(str)
    if ids.duplicated().any():
        raise SchemaError(
            f"The 'design' parameter of {func} lists study {ids[ids.duplicated()].iloc[0]!r} twice."
        )
    rp = (
        design["random_part"].astype(str).str.lower().isin(["true", "1"])
        if "random_part" in design.columns
        else pd.Series(False, index=design.index)
    )
    return Design(dict(zip(ids, pi.astype(float))), dict(zip(ids, rp.astype(bool))))


def _interval(value: float, var: float, z: float) -> tuple[float, float]:
    h = z * float(np.sqrt(max(var, 0.0)))
    return max(value - h, 0.0), min(value + h, 1.0)


def _finding_rows(
    fit: FindingFit, expert: np.ndarray, ids: np.ndarray, design: Design, confidence_level: float
) -> tuple[list[dict[str, object]], dict[str, object] | None]:
    from scipy.special import ndtri

    z = float(ndtri(0.5 + confidence_level / 2))
    listed = np.array([s in design.pi for s in ids])
    sampled = listed & ~np.isnan(expert)
    # the listed studies without a decided label are taken as missing at random within the list
    scale = sampled.sum() / max(listed.sum(), 1)
    pi = np.array([design.pi.get(s, 1.0) for s in ids]) * scale
    rp = sampled & np.array([design.random.get(s, False) for s in ids])
    pred = fit.prediction
    est, var = {}, {}
    for m, so in fit.order.items():
        a, v = design_auc(pred, expert, sampled, pi, so)
        est[m], var[m] = float(a), float(v)
    ranked = sorted(est, key=lambda m: (-np.nan_to_num(est[m], nan=-1.0), m))
    rows = []
    for m in fit.order:
        y, s = expert[rp], fit.data.scores[m][rp]
        both = len(np.unique(y)) == 2
        so_r = score_order(s)
        a_r = float(soft_auc(y, so_r)) if both else float("nan")
        lo_r, hi_r = _interval(a_r, float(auc_variance(y, so_r)), z) if both else (np.nan, np.nan)
        lo, hi = _interval(est[m], var[m], z)
        rows.append(
            {
                "finding": fit.data.finding,
                "model": m,
                "auc": est[m],
                "ci_low": lo,
                "ci_high": hi,
                "rank": ranked.index(m) + 1,
                "auc_predictions": plugin_auc(pred, fit.order[m]),
                "auc_random_part": a_r,
                "random_ci_low": lo_r,
                "random_ci_high": hi_r,
                "n_studies": len(ids),
                "n_sampled": int(sampled.sum()),
                "n_random_part": int(rp.sum()),
                "confidence_level": confidence_level,
            }
        )
    pair = next(
        (
            (ranked[0], m)
            for m in ranked[1:]
            if not np.array_equal(fit.data.scores[m], fit.data.scores[ranked[0]])
        ),
        None,
    )
    if pair is None:
        return rows, None
    d, v = design_delta(pred, expert, sampled, pi, fit.order[pair[0]], fit.order[pair[1]])
    h = z * float(np.sqrt(max(float(v), 0.0)))
    comp = {
        "finding": fit.data.finding,
        "model_a": pair[0],
        "model_b": pair[1],
        "delta": float(d),
        "ci_low": float(d) - h,
        "ci_high": float(d) + h,
        "separable": bool(abs(float(d)) > h),
        "confidence_level": confidence_level,
    }
    return rows, comp


def design_tables(
    inputs: PlanInputs, design: Design, *, confidence_level: float
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``design_auc.csv`` and ``design_comparison.csv`` of ``inputs`` whose anchor is the expert on the design's
    studies: the predictions are the latent posteriors fitted without those labels."""
    rows, comp = [], []
    for fd in inputs.findings:
        fit = fit_finding(dataclasses.replace(fd, anchor=np.full(len(fd.anchor), np.nan)))
        r, c = _finding_rows(fit, fd.anchor, inputs.study_ids[fd.index], design, confidence_level)
        rows += r
        comp += [c] if c else []
    return (
        pd.DataFrame(rows, columns=list(DESIGN_COLUMNS)),
        pd.DataFrame(comp, columns=list(COMPARISON_COLUMNS)),
    )


@dataclass(frozen=True)
class DesignAUCResult(TableResult):
    """Every model's design-based AUC per finding (``design_auc.csv``) and the leading pair's difference
    (``design_comparison.csv``), from the expert's labels of a plan's sample.

    Attributes
    ----------
    table : DataFrame
        :data:`DESIGN_COLUMNS`: ``auc`` the design-based (AIPW) estimate with its interval; ``auc_predictions``
        the AUC the predictions alone give (what the sample corrects); ``auc_random_part`` the plain AUC against
        the expert on the sample's random part (an equal-probability sample, no model at all) with DeLong's
        interval; ``n_sampled`` the studies with a decided expert label, ``n_random_part`` those of the random part.
    comparison : DataFrame
        The leading pair by ``auc``: ``delta`` with its interval and whether it excludes 0.
    reference, expert : str
    readers : tuple of str
    n_listed : int
        The length of the plan's list (the design's sample).
    """

    FILES: ClassVar[Mapping[str, str]] = MappingProxyType(
        {"auc": "design_auc.csv", "comparison": "design_comparison.csv"}
    )
    COLUMNS: ClassVar[tuple[str, ...]] = DESIGN_COLUMNS

    table: pd.DataFrame
    comparison: pd.DataFrame
    reference: str
    readers: tuple[str, ...]
    expert: str | None
    n_listed: int
    method: str = DESIGN_METHOD

    def tables(self) -> dict[str, pd.DataFrame]:
        return {"auc": self.table, "comparison": self.comparison}

    def summary(self) -> str:
        if self.table.empty:
            return "\n".join(
                [
                    "## AUC, design-based estimate",
                    "",
                    "No expert labels of a plan's sample yet (`design_auc.csv` is empty): once the expert has "
                    "labelled the studies of `relabel.csv`, plan again with their labels as the anchor and this "
                    "plan's `relabel.csv` as the anchor studies; the design-based estimate is then here.",
                ]
            )
        sampled = int(self.table["n_sampled"].max())
        cols = ["finding", "model", "auc", "ci_low", "ci_high", "auc_random_part", "auc_predictions"]
        return "\n".join(
            [
                "## AUC, design-based estimate",
                "",
                f"The expert ({self.expert!r}) labelled {sampled} of the {self.n_listed} studies of the plan's "
                f"sample. {DESIGN_METHOD[0].upper()}{DESIGN_METHOD[1:]}. `auc_random_part` is the plain AUC on "
                "the sample's random part (equal probabilities, no model); `auc_predictions` the predictions "
                "alone. The estimate assumes nothing of the latent model: only that the expert is right and the "
                "studies were drawn as the plan drew them (the listed studies left unlabelled taken as missing "
                "at random within the list).",
                "",
                markdown_table(self.table[cols], decimals=3),
                "",
                "### Leading pair per finding (design-based)",
                "",
                markdown_table(self.comparison, decimals=4),
            ]
        )

    @classmethod
    def figure(cls, table: pd.DataFrame) -> Any:
        from .._plots import dot_interval

        return dot_interval(
            table,
            value="auc",
            low="ci_low",
            high="ci_high",
            category=["finding", "model"],
            title="Design-based AUC estimate (AIPW) with its interval",
        )


def evaluate_design_auc(
    predictions: pd.DataFrame | ReadResult | Sequence[pd.DataFrame | ReadResult],
    labels: pd.DataFrame | ReadResult | Sequence[pd.DataFrame | ReadResult],
    *,
    reference: str,
    expert: str,
    design: pd.DataFrame,
    readers: Sequence[str] | None = None,
    findings: Sequence[str] | None = None,
    confidence_level: float = 0.95,
) -> DesignAUCResult:
    """Every model's AUC against the expert, design-based: the latent posteriors as predictions, corrected on the
    expert's labels of a plan's sample with inverse inclusion probabilities (AIPW).

    Parameters
    ----------
    predictions, labels : DataFrame, ReadResult or list of them
        As for :func:`cxreval.planning.plan_relabelling`.
    reference : str
        The cheap source that labels every study.
    expert : str
        The source of the expert's labels; counted on the design's studies only.
    design : DataFrame
        The plan's ``relabel.csv``: ``study_id``, ``inclusion_probability`` (in (0, 1]) and ``random_part``.
    readers : list of str, optional
        Further noisy sources for the latent model (the predictions).
    findings : list of str, optional
    confidence_level : float, default=0.95

    Returns
    -------
    res : DesignAUCResult

    Notes
    -----
    Validity rests on the design, not on the latent model (:mod:`cxreval.planning._design`): the predictions are
    fitted without the expert's labels, and ``E[T~_i] = T_i`` whatever they are. Listed studies without a decided
    expert label are taken as missing at random within the list (the inclusion probabilities scaled by the share
    labelled); the plan serves its list in a random order, so stopping early keeps this true. The interval adds
    DeLong's sampling variance to the design's: it is for the population the studies stand for. The estimate stays
    in [0, 1]; where the expert's labels of the sample hold one class of a finding, no pair defines an AUC and
    ``auc`` is the predictions' own (``auc_predictions``).
    """
    cl = check_confidence_level(confidence_level, func=_FUNC)
    d = read_design(design)
    inputs = prepare_inputs(
        predictions,
        labels,
        reference=reference,
        readers=readers,
        anchor=expert,
        findings=findings,
        anchor_studies=list(d.pi),
        func=_FUNC,
    )
    auc, comp = design_tables(inputs, d, confidence_level=cl)
    return DesignAUCResult(
        auc, comp, reference=inputs.sources[0], readers=inputs.sources[1:], expert=expert, n_listed=d.n_listed
    )
