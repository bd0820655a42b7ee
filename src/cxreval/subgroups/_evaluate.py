""":func:`evaluate_subgroups`: per model × finding × reference × subgroup, metrics, gaps and calibration."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from .._validation import check_confidence_level, check_positive_int
from ..bootstrap import draw_plan
from ..exceptions import InvalidParameterError, SchemaError
from ..finding_maps import resolve_finding_map
from ..options import Design, Resampling
from ..results import as_table
from ..stats import PreparedInputs, prepare_inputs
from ._calibration import N_BINS, calibration_rows, reliability_rows
from ._groups import (
    NO_VALUE,
    Attribute,
    OperatingPoint,
    group_codes,
    metadata_values,
    operating_threshold,
    parse_operating_point,
    reference_groups,
)
from ._metrics import METRICS, GroupMetrics, gap_summary, group_metrics, holm
from ._result import CALIBRATION_COLUMNS, RELIABILITY_COLUMNS, SUBGROUP_COLUMNS, SubgroupResult, verdict_table

__all__ = ["design_arguments", "evaluate_subgroups", "evaluate_subgroups_prepared"]

_FUNC = "evaluate_subgroups"
MIN_CASES = 10
"""The default ``min_cases``: the fewest positives (negatives, studies) a group's gap is estimated on."""


def _reasons(gm: GroupMetrics, metric: str, reference: str, comparator: str, min_cases: int) -> list[str]:
    """Why each group's gap of ``metric`` is not estimable ('' where it is): a class the metric needs is absent
    from the group or its comparator, or has fewer than ``min_cases`` studies there."""
    need = {
        "auc": ("positives", "negatives"),
        "sensitivity": ("positives",),
        "fnr": ("positives",),
        "specificity": ("negatives",),
        "selection_rate": ("studies",),
    }[metric]
    out = []
    for g in range(gm.n_pos.size):
        why = []
        for who, pos, neg in (
            ("group", gm.n_pos[g], gm.n_neg[g]),
            (comparator, gm.n_pos_comparator[g], gm.n_neg_comparator[g]),
        ):
            counts = {"positives": int(pos), "negatives": int(neg), "studies": int(pos + neg)}
            if pos + neg == 0:
                why.append(f"{who}: no studies labelled by {reference}")
                continue
            for kind in need:
                if counts[kind] == 0:
                    why.append(f"{who}: no {kind}")
                elif counts[kind] < min_cases:
                    why.append(f"{who}: {counts[kind]} {kind} (fewer than {min_cases})")
        out.append("; ".join(why))
    return out


def _gap_rows(
    gm: GroupMetrics,
    attr: Attribute,
    *,
    head: dict[str, object],
    threshold: float,
    confidence_level: float,
    min_cases: int,
) -> list[pd.DataFrame]:
    comparator = "rest" if attr.reference_group is None else attr.groups[attr.reference_group]
    parts: list[dict[str, object]] = []
    for metric in METRICS:
        summ = gap_summary(gm.value[metric], gm.comparator[metric], confidence_level=confidence_level)
        reasons = _reasons(gm, metric, str(head["reference"]), comparator, min_cases)
        ok = np.array([r == "" for r in reasons])
        if attr.reference_group is not None:
            ok[attr.reference_group] = False
            reasons[attr.reference_group] = "the reference group"
        for k in ("gap", "gap_ci_low", "gap_ci_high", "pvalue"):
            summ[k] = np.where(ok, summ[k], np.nan)
        p_holm = holm(summ["pvalue"])
        parts.append(
            {
                "group": list(attr.groups),
                "metric": [metric] * len(attr.groups),
                "n_studies": gm.n_pos + gm.n_neg,
                "n_pos": gm.n_pos,
                "n_neg": gm.n_neg,
                **summ,
                "pvalue_holm": p_holm,
                "significant": np.nan_to_num(p_holm, nan=1.0) < 1 - confidence_level,
                "estimable": ok,
                "reason": reasons,
            }
        )
    text = ("group", "metric", "reason")  # strings as lists, as a frame per metric would hold them
    stacked: dict[str, object] = {
        k: [v for p in parts for v in p[k]] if k in text else np.concatenate([p[k] for p in parts])  # type: ignore[attr-defined]
        for k in parts[0]
    }
    return [
        pd.DataFrame(
            {
                **head,
                "attribute": attr.name,
                "group": stacked["group"],
                "comparator": comparator,
                "metric": stacked["metric"],
                "threshold": threshold,
                **{k: v for k, v in stacked.items() if k not in ("group", "metric")},
            }
        )
    ]


def _no_value_rows(attr: Attribute, code: np.ndarray, y: np.ndarray, head: dict[str, object]) -> pd.DataFrame:
    """The studies without a value of the attribute: one row per metric, not estimable, never dropped."""
    miss = code < 0
    if not miss.any():
        return pd.DataFrame(columns=SUBGROUP_COLUMNS)
    n_pos = int(y[miss].sum())
    return pd.DataFrame(
        {
            **head,
            "attribute": attr.name,
            "group": NO_VALUE,
            "comparator": "",
            "metric": list(METRICS),
            "n_studies": int(miss.sum()),
            "n_pos": n_pos,
            "n_neg": int(miss.sum()) - n_pos,
            "significant": False,
            "estimable": False,
            "reason": f"no value of {attr.name!r} in the metadata",
        }
    )


def _check_probabilities(prep: PreparedInputs, where: str) -> None:
    for m, model in enumerate(prep.models):
        for f, finding in enumerate(prep.findings):
            s = prep.S[m, f]
            bad = np.isfinite(s) & ((s < 0) | (s > 1))
            if bad.any():
                raise SchemaError(
                    f"{where}: model {model!r} scores {finding!r} outside [0, 1] (e.g. {s[bad][0]:g} on "
                    f"{int(bad.sum())} studies); calibration needs probabilities: pass probabilities, or "
                    "calibration=False."
                )


def _calibration_frames(
    y: np.ndarray,
    s: np.ndarray,
    pat: np.ndarray,
    ct: np.ndarray,
    attrs: list[tuple[str, tuple[str, ...], np.ndarray]],
    head: dict[str, object],
    *,
    calibration_bins: int,
    confidence_level: float,
) -> tuple[list[pd.DataFrame], list[pd.DataFrame]]:
    cal, rel = [], []
    for name, groups, code in attrs:
        rows = calibration_rows(
            y, s, pat, code, ct, groups=groups, n_bins=calibration_bins, confidence_level=confidence_level
        )
        cal.append(pd.DataFrame({**head, "attribute": name, **rows}))
        rel.append(
            pd.DataFrame(
                {
                    **head,
                    "attribute": name,
                    **reliability_rows(y, s, code, groups=groups, n_bins=calibration_bins),
                }
            )
        )
    return cal, rel


def _frame(parts: list[pd.DataFrame], columns: tuple[str, ...]) -> pd.DataFrame:
    parts = [p for p in parts if not p.empty]
    if not parts:
        return pd.DataFrame({c: pd.Series(dtype=object) for c in columns})
    return pd.concat(parts, ignore_index=True).reindex(columns=list(columns))


def evaluate_subgroups_prepared(
    prep: PreparedInputs,
    metadata: pd.DataFrame,
    *,
    by: Sequence[str],
    operating_point: str | float = "specificity=0.9",
    reference_group: Mapping[str, str] | Sequence[str] | None = None,
    calibration: bool = True,
    calibration_bins: int = N_BINS,
    min_cases: int = MIN_CASES,
    resampling: Resampling = Resampling(),
    where: str = "metadata",
    predictions_where: str = "predictions",
) -> SubgroupResult:
    """:func:`evaluate_subgroups` on inputs already laid out as arrays (:func:`cxreval.stats.prepare_inputs`)."""
    by = [str(b) for b in ([by] if isinstance(by, str) else by or [])]
    if not by:
        raise InvalidParameterError(
            f"{_FUNC} needs by=: the metadata columns of the subgroups (e.g. by=['sex'])."
        )
    point: OperatingPoint = parse_operating_point(operating_point, func=_FUNC)
    n_resamples = check_positive_int(resampling.n_resamples, name="n_resamples", func=_FUNC, minimum=0)
    calibration_bins = check_positive_int(calibration_bins, name="calibration_bins", func=_FUNC, minimum=2)
    min_cases = check_positive_int(min_cases, name="min_cases", func=_FUNC, minimum=1)
    confidence_level = check_confidence_level(resampling.confidence_level, func=_FUNC)
    if prep.soft_references:
        raise SchemaError(
            f"{_FUNC}: references {', '.join(prep.soft_references)} carry p_positive (soft labels); subgroup "
            "gaps need 0/1 labels."
        )
    values = metadata_values(metadata, prep.studies, where=where)
    evaluated = np.isfinite(prep.Y).any(axis=(0, 1))
    refs = reference_groups(reference_group, by)
    attrs = [
        group_codes(values, b, reference_group=refs.get(b), where=where, evaluated=evaluated) for b in by
    ]
    if calibration:
        _check_probabilities(prep, predictions_where)
    # one plan for every statistic (the gaps under every reference are paired); n_resamples=0 draws one replicate
    # only to lay out the patients, and keeps none of it
    plan = draw_plan(
        prep.patient_of.to_numpy(),
        n_resamples=max(n_resamples, 1),
        rng=resampling.rng,
        study_ids=list(prep.studies),
    )
    replicates = plan.counts.T[:, :n_resamples]
    ct = np.ascontiguousarray(np.hstack([np.ones((plan.n_patients, 1), np.int32), replicates]))
    pat = plan.study_patient
    gaps: list[pd.DataFrame] = []
    cal: list[pd.DataFrame] = []
    rel: list[pd.DataFrame] = []
    for m, model in enumerate(prep.models):
        for f, finding in enumerate(prep.findings):
            for r, reference in enumerate(prep.references):
                valid = np.isfinite(prep.Y[f, r]) & np.isfinite(prep.S[m, f])
                y, s, p = prep.Y[f, r, valid] == 1.0, prep.S[m, f, valid], pat[valid]
                head: dict[str, object] = {"model": model, "finding": finding, "reference": reference}
                threshold = operating_threshold(point, y, s)
                for attr in attrs:
                    code = attr.codes[valid]
                    gm = group_metrics(
                        y,
                        s,
                        p,
                        code,
                        ct,
                        n_groups=len(attr.groups),
                        threshold=threshold,
                        reference_group=attr.reference_group,
                    )
                    gaps += _gap_rows(
                        gm,
                        attr,
                        head=head,
                        threshold=threshold,
                        confidence_level=confidence_level,
                        min_cases=min_cases,
                    )
                    gaps.append(_no_value_rows(attr, code, y, head))
                if calibration and valid.any():
                    parts: list[tuple[str, tuple[str, ...], np.ndarray]] = [
                        ("all", ("all",), np.zeros(y.size, np.intp))
                    ]
                    parts += [(a.name, a.groups, a.codes[valid]) for a in attrs]
                    c, rl = _calibration_frames(
                        y,
                        s,
                        p,
                        ct,
                        parts,
                        head,
                        calibration_bins=calibration_bins,
                        confidence_level=confidence_level,
                    )
                    cal += c
                    rel += rl
    table = _frame(gaps, SUBGROUP_COLUMNS)
    table["significant"] = table["significant"].astype(bool)
    table["estimable"] = table["estimable"].astype(bool)
    references = tuple(prep.references)
    return SubgroupResult(
        table=table,
        verdicts=verdict_table(table, references),
        calibration=_frame(cal, CALIBRATION_COLUMNS),
        reliability=_frame(rel, RELIABILITY_COLUMNS),
        references=references,
        attributes=tuple(by),
        operating_point=point.label(),
        n_resamples=n_resamples,
        confidence_level=confidence_level,
        min_cases=min_cases,
    )


def evaluate_subgroups(
    predictions: pd.DataFrame,
    labels: pd.DataFrame,
    metadata: pd.DataFrame,
    *,
    by: Sequence[str],
    operating_point: str | float = "specificity=0.9",
    reference_group: Mapping[str, str] | Sequence[str] | None = None,
    references: Sequence[str] | None = None,
    findings: Sequence[str] | None = None,
    design: Design = Design(),
    resampling: Resampling = Resampling(),
    calibration: bool = True,
    calibration_bins: int = N_BINS,
    min_cases: int = MIN_CASES,
) -> SubgroupResult:
    """Per model × finding × reference × subgroup: AUC, sensitivity, specificity, FNR and selection rate at an
    operating point, the gap to the rest (or to a reference group) with patient-bootstrap intervals and Holm's
    adjustment across the groups, the verdict across references, and calibration.

    Parameters
    ----------
    predictions, labels : DataFrame
        Long prediction (``study_id, model, finding, score``) and label (``study_id, patient_id, finding,
        source, state``) tables, as for :func:`cxreval.classification.evaluate_auc`.
    metadata : DataFrame
        One row per study: ``study_id`` and the columns named in ``by`` (e.g. the ``metadata.csv`` that ``cxreval
        data export`` writes for a metadata dataset: sex, age band, view). Studies without a row, or with a blank value, form the group
        ``(no value)``: reported as not estimable, never dropped.
    by : sequence of str
        The attributes: metadata columns, or ``"a*b"``, the intersection of two. Each must take at least two and
        at most 50 values on the evaluated studies.
    operating_point : str or float, default='specificity=0.9'
        ``'threshold=T'`` (or a number): positive where ``score >= T``; ``'specificity=S'``: per model, finding and
        reference, the smallest threshold whose specificity on every study that reference labels is at least
        ``S`` (fixed once on all studies, then applied to every group and replicate).
    reference_group : mapping or sequence of 'attribute=value', optional
        The group each attribute's gaps are measured against (default: each group against the rest of the
        studies with a value).
    references, findings
        As for :func:`cxreval.classification.evaluate_auc`.
    design : Design, default=Design()
        Which studies and labels (:class:`cxreval.options.Design`): ``studies`` (``'common'``: each finding on the
        studies every reference labels, so the gaps under the references are on the same studies; ``'each'``),
        the label policy, ``finding_map`` / ``map_score`` (e.g. ``'nih_to_google'``: labels and scores in another
        vocabulary) and ``missing_scores``.
    resampling : Resampling, default=Resampling()
        The patient bootstrap (:class:`cxreval.options.Resampling`: ``n_resamples``, ``confidence_level``,
        ``rng``); one plan for every statistic, so the gaps of all references are paired; ``n_resamples=0``:
        point estimates only (no interval, no p-value).
    calibration : bool, default=True
        Whether to compute calibration (the scores must then be probabilities in [0, 1]).
    calibration_bins : int, default=10
        Equal-width bins of the reliability diagram and the ECE.
    min_cases : int, default=10
        The fewest studies of each class a gap needs in the group and in its comparator (positives for
        sensitivity and FNR, negatives for specificity, both for the AUC, studies for the selection rate): below
        it the row is kept, with the group's value, but its gap is not estimable (``reason`` says how many). A
        bootstrap interval on a handful of cases is degenerate (an AUC of 1 on 3 positives has a zero-width
        interval), and its Wald test would call it significant.

    Returns
    -------
    res : SubgroupResult

    Raises
    ------
    SchemaError
        A metadata column that is missing, has one value or more than 50; scores outside [0, 1] with
        ``calibration``; soft labels; what :func:`cxreval.stats.prepare_inputs` refuses. All before computing.

    Notes
    -----
    Assumptions. Patients are the independent units: the bootstrap draws patients with replacement and keeps
    all their studies (a patient's images share their errors). The gap's p-value is two-sided Wald, ``gap /
    SE`` with the bootstrap standard error, and is Holm-adjusted over the groups of one attribute, per model,
    finding, reference and metric (a family: does this model's metric differ across these groups?); a group
    against the rest shares no study with it, but the groups of one attribute are not independent, which
    Holm does not need. "Not estimable": a metric undefined in the group or its comparator under a reference
    (no positives for AUC, sensitivity, FNR; no negatives for AUC, specificity; no labelled study), or fewer than
    ``min_cases`` of them — the row is kept with its ``reason``. A gap measured against a reference includes that reference's own errors: if a
    labeller misses findings more often in one group, the model's apparent FNR there rises with it; the
    ``verdicts`` table shows where the gap changes sign or significance between references.
    """
    preds = as_table(predictions, name="predictions", func=_FUNC)
    labs = as_table(labels, name="labels", func=_FUNC)
    meta = as_table(metadata, name="metadata", func=_FUNC)
    prep = prepare_inputs(
        preds,
        labs,
        references=references,
        findings=findings,
        **design_arguments(design),
    )
    return evaluate_subgroups_prepared(
        prep,
        meta,
        by=by,
        operating_point=operating_point,
        reference_group=reference_group,
        calibration=calibration,
        calibration_bins=calibration_bins,
        min_cases=min_cases,
        resampling=resampling,
    )


def design_arguments(design: Design) -> dict[str, Any]:
    """The keywords of :func:`cxreval.stats.prepare_inputs` (and ``prepare_from_files``) that ``design`` sets, its
    finding map read and checked before any table."""
    return {
        "policy": design.policy,
        "not_mentioned": design.not_mentioned,
        "unlabeled": design.unlabeled,
        "studies": design.studies,
        "missing_scores": design.missing_scores,
        "finding_map": resolve_finding_map(design.finding_map, design.map_score),
    }
