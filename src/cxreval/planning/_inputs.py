"""The planner's inputs, checked and arranged per finding: the references' 0/1 labels, the known truths (anchor)
and every model's scores on the same studies.

Not :mod:`cxreval.latent`'s preparation: that one arranges one model's scores against readers per cell; the planner
needs every model's scores on the same studies (one joint latent model per finding), a reference that labels every
study, and an anchor counted on a chosen subset (``anchor_studies``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from .._validation import check_positive_int, did_you_mean
from ..exceptions import InvalidParameterError, SchemaError, UnknownNameError
from ..findings import canonical_finding
from ..labels import validate_label_table, validate_predictions
from ..results import as_table
from ..schema import binarize

__all__ = ["FindingData", "PlanInputs", "prepare_inputs"]

_FUNC = "plan_relabelling"


@dataclass(frozen=True)
class FindingData:
    """One finding's arrays on its studies (``study_ids``, in the order of ``PlanInputs.study_ids``)."""

    finding: str
    index: np.ndarray  # (n,) positions in PlanInputs.study_ids
    references: np.ndarray  # (n, r) 1.0 / 0.0 / NaN, columns = PlanInputs.sources
    anchor: np.ndarray  # (n,) 1.0 / 0.0 where the anchor source labels it, NaN elsewhere
    scores: dict[str, np.ndarray]
    n_unscored: int  # labelled studies left out: not scored by every model
    copies: dict[str, tuple[str, ...]] = field(
        default_factory=dict
    )  # kept model -> models of its very scores


@dataclass(frozen=True)
class PlanInputs:
    study_ids: np.ndarray  # every study of any finding, sorted
    patient_ids: np.ndarray
    sources: tuple[str, ...]  # reference, then readers
    models: tuple[str, ...]
    findings: tuple[FindingData, ...]
    anchor_source: str | None


def _check_source(name: object, present: Sequence[str], *, what: str, func: str = _FUNC) -> str:
    if not isinstance(name, str) or not name:
        raise InvalidParameterError(
            f"The '{what}' parameter of {func} must be a source name. Got {name!r} instead."
        )
    if name not in present:
        raise UnknownNameError(
            f"The '{what}' parameter of {func} must be a source of the label table; {name!r} is "
            f"not one.{did_you_mean(name, present)} Sources present: {', '.join(sorted(present))}."
        )
    return name


def prepare_inputs(
    predictions: object,
    labels: object,
    *,
    reference: str,
    readers: Sequence[str] | None,
    anchor: str | None,
    findings: Sequence[str] | None,
    anchor_studies: Sequence[str] | None = None,
    func: str = _FUNC,
    merge_identical: bool = False,
) -> PlanInputs:
    """Check the tables and options (every error names its parameter) and arrange them per finding.

    Labels are binarised with uncertain labels left out (NaN: a reference that did not decide) and not-mentioned
    read as negative (CheXpert practice for report labelers). With ``anchor_studies``, the anchor's labels count on
    those studies only (a relabelling simulated from a source that labels every study). With ``merge_identical``,
    models whose scores of a finding are identical are one model of that finding (:func:`merge_identical_scores`).
    """
    preds_in = as_table(predictions, name="predictions", func=func)
    labels_in = as_table(labels, name="labels", func=func)
    if preds_in.empty:
        raise SchemaError(
            f"The 'predictions' parameter of {func} has no rows: it needs the scores of at least two models."
        )
    if labels_in.empty:
        raise SchemaError(f"The 'labels' parameter of {func} has no rows.")
    preds = validate_predictions(preds_in, where="predictions")
    labs = validate_label_table(labels_in, where="labels", require_patient=False)
    models = tuple(sorted(preds["model"].unique()))
    if len(models) < 2:
        raise InvalidParameterError(
            f"The 'predictions' parameter of {func} holds {len(models)} model(s) "
            f"({', '.join(models) or 'none'}); the plan compares the leading models, so it "
            "needs the scores of at least two."
        )
    present = sorted(labs["source"].unique())
    ref = _check_source(reference, present, what="reference", func=func)
    rds = [_check_source(r, present, what="readers", func=func) for r in (readers or [])]
    if ref in rds or len(set(rds)) != len(rds):
        raise InvalidParameterError(
            f"The 'readers' parameter of {func} must name distinct sources other than the "
            f"reference {ref!r}. Got {list(rds)} instead."
        )
    anc = None if anchor is None else _check_source(anchor, present, what="anchor", func=func)
    if anc is not None and anc in (ref, *rds):
        raise InvalidParameterError(
            f"The 'anchor' parameter of {func} must be a source other than the reference "
            f"and the readers. Got {anc!r} instead."
        )
    if anchor_studies is not None and anc is None:
        raise InvalidParameterError(
            f"The 'anchor_studies' parameter of {func} needs an anchor source (anchor=)."
        )
    only = None if anchor_studies is None else {str(x) for x in anchor_studies}
    sources = (ref, *rds)
    ref_findings = set(labs.loc[labs["source"] == ref, "finding"])
    scored = set(preds["finding"])
    if findings is None:
        chosen = sorted(ref_findings & scored)
        if not chosen:
            raise SchemaError(
                f"No finding is both labelled by reference {ref!r} ({sorted(ref_findings)}) and scored "
                f"in the predictions ({sorted(scored)})."
            )
    else:
        chosen = [canonical_finding(f, where=f"the 'findings' parameter of {func}") for f in findings]
        for f in chosen:
            if f not in ref_findings or f not in scored:
                raise InvalidParameterError(
                    f"The 'findings' parameter of {func} names {f!r}, which is "
                    + (
                        "not labelled by reference " + repr(ref)
                        if f not in ref_findings
                        else "not scored in the predictions"
                    )
                    + "."
                )
    y = binarize(labs["state"], policy="exclude", not_mentioned="negative")
    labs = labs.assign(_y=y)
    pid = labs.drop_duplicates("study_id").set_index("study_id")
    pid_col = pid["patient_id"] if "patient_id" in pid.columns else pd.Series(pid.index, index=pid.index)
    per_finding = []
    all_ids: set[str] = set()
    for f in chosen:
        lf = labs[(labs["finding"] == f) & labs["source"].isin((*sources, *([anc] if anc else [])))]
        wide = lf.pivot(index="study_id", columns="source", values="_y")
        pf = preds[preds["finding"] == f].pivot(index="study_id", columns="model", values="score")
        pf = pf.reindex(columns=list(models))
        ids = pd.Index(sorted(set(lf.loc[lf["source"] == ref, "study_id"])))
        complete = pf.reindex(ids).notna().all(axis=1)
        n_unscored = int((~complete).sum())
        ids = ids[complete.to_numpy()]
        if len(ids) < 2:
            raise SchemaError(
                f"Finding {f!r}: {len(ids)} studies are labelled by reference {ref!r} and scored by "
                f"every model ({', '.join(models)}); at least two are needed."
            )
        all_ids.update(ids)
        refs = wide.reindex(index=ids, columns=list(sources)).to_numpy(dtype=float)
        an = (
            wide.reindex(index=ids, columns=[anc]).to_numpy(dtype=float)[:, 0]
            if anc
            else np.full(len(ids), np.nan)
        )
        if only is not None:
            an = np.where(ids.isin(only), an, np.nan)
        scores = {m: pf.loc[ids, m].to_numpy(dtype=float) for m in models}
        copies: dict[str, tuple[str, ...]] = {}
        if merge_identical:
            scores, copies = merge_identical_scores(scores)
        per_finding.append((f, ids, refs, an, scores, n_unscored, copies))
    study_ids = np.array(sorted(all_ids), dtype=object)
    if only is not None and not only <= all_ids:
        extra = sorted(only - all_ids)
        raise InvalidParameterError(
            f"The 'anchor_studies' parameter of {func} lists {len(extra)} studies that are not "
            f"planned studies, e.g. {extra[0]!r}."
        )
    pos = {s: i for i, s in enumerate(study_ids)}
    data = tuple(
        FindingData(f, np.array([pos[s] for s in ids]), refs, an, scores, nu, copies)
        for f, ids, refs, an, scores, nu, copies in per_finding
    )
    patients = np.array([str(pid_col.get(s, s)) for s in study_ids], dtype=object)
    return PlanInputs(
        study_ids=study_ids,
        patient_ids=patients,
        sources=sources,
        models=models,
        findings=data,
        anchor_source=anc,
    )


def merge_identical_scores(
    scores: dict[str, np.ndarray],
) -> tuple[dict[str, np.ndarray], dict[str, tuple[str, ...]]]:
    """One model per distinct score vector: ``(scores of the first model of each set of identical ones, {that
    model: the others})`` (in the order of ``scores``; sets of one are not in the second). Models with the very
    same scores have the same AUC against any truth: no relabelling can separate them."""
    kept: dict[str, np.ndarray] = {}
    copies: dict[str, list[str]] = {}
    for m, s in scores.items():
        twin = next((k for k, v in kept.items() if np.array_equal(v, s)), None)
        if twin is None:
            kept[m] = s
        else:
            copies.setdefault(twin, []).append(m)
    return kept, {k: tuple(v) for k, v in copies.items()}


def check_budget(budget: object, inputs: PlanInputs, *, name: str = "budget") -> int:
    """A budget from 1 to the number of studies whose truth is not yet known."""
    b = check_positive_int(budget, name=name, func=_FUNC)
    known = np.zeros(len(inputs.study_ids), dtype=bool)
    if inputs.anchor_source is not None:
        known[:] = True
        for fd in inputs.findings:
            k = np.zeros(len(inputs.study_ids), dtype=bool)
            k[fd.index] = ~np.isnan(fd.anchor)
            known &= k
    n_open = int((~known).sum())
    if b > n_open:
        raise InvalidParameterError(
            f"The '{name}' parameter of {_FUNC} must be at most the number of studies not yet "
            f"relabelled ({n_open}). Got {b} instead."
        )
    return b


__all__ += ["check_budget", "merge_identical_scores"]
