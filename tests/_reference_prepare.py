"""A whole-table pandas reading and layout of ``evaluate_auc``'s inputs (``_validate_inputs``, ``_codes`` and
``_prepare`` of cxreval 18fd52a, verbatim but for the returned dict): the independent reference the block-wise
readers are compared with in ``tests/classification/test_inputs.py``."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from cxreval._validation import check_choice
from cxreval.exceptions import InvalidParameterError, SchemaError
from cxreval.findings import canonical_finding
from cxreval.labels import validate_label_table, validate_model_groups, validate_predictions
from cxreval.schema import binarize

DEFAULT_GROUP = "default"


def _validate_inputs(
    predictions: pd.DataFrame,
    labels: pd.DataFrame,
    references: Sequence[str] | None,
    findings: Sequence[str] | None,
    model_groups: pd.DataFrame | dict[str, str] | None,
    unlabeled: str,
) -> tuple[pd.DataFrame, pd.DataFrame, list[str], list[str], dict[str, str], pd.DataFrame, pd.Series]:
    preds = validate_predictions(predictions)
    labs_all = validate_label_table(labels, require_patient=False)
    labs = labs_all
    check_choice(unlabeled, ("error", "drop"), name="unlabeled", func="evaluate_auc")
    sources = sorted(labs["source"].unique())
    refs = list(references) if references is not None else sources
    if not refs:
        raise InvalidParameterError("evaluate_auc: no references; the label table is empty.")
    for r in refs:
        if r not in sources:
            raise InvalidParameterError(
                f"Unknown reference {r!r}: it is not a source of the label table; sources present: {sources}."
            )
    if len(set(refs)) != len(refs):
        raise InvalidParameterError(f"evaluate_auc: 'references' has duplicates: {refs}.")
    pf = list(pd.unique(preds["finding"]))
    lf = set(labs.loc[labs["source"].isin(refs), "finding"].unique())
    if findings is None:
        fs = [f for f in pf if f in lf]
        if not fs:
            raise SchemaError(
                f"No finding is both predicted {pf} and labelled by the references {refs} {sorted(lf)}."
            )
    else:
        fs = [canonical_finding(f, where="evaluate_auc 'findings'") for f in findings]
        for f in fs:
            if f not in pf:
                raise InvalidParameterError(
                    f"Unknown finding {f!r}: no model has predictions for it; predicted: {pf}."
                )
            if f not in lf:
                raise InvalidParameterError(
                    f"Unknown finding {f!r}: no reference among {refs} labels it; labelled: {sorted(lf)}."
                )
        if len(set(fs)) != len(fs):
            raise InvalidParameterError(f"evaluate_auc: 'findings' has duplicates: {fs}.")
    preds = preds[preds["finding"].isin(fs)]
    labs = labs[labs["source"].isin(refs) & labs["finding"].isin(fs)]
    models = list(pd.unique(preds["model"]))
    if model_groups is None:
        groups = {m: DEFAULT_GROUP for m in models}
    else:
        mg = (
            pd.DataFrame({"model": list(model_groups), "group": list(model_groups.values())})
            if isinstance(model_groups, dict)
            else model_groups
        )
        mg = validate_model_groups(mg)
        gmap = dict(zip(mg["model"], mg["group"]))
        missing = [m for m in models if m not in gmap]
        if missing:
            raise SchemaError(f"Model(s) {missing} have predictions but no group in the model group table.")
        groups = {m: gmap[m] for m in models}
    # studies with predictions but no label row at all in the label table
    pstudies = pd.unique(preds["study_id"])
    absent = list(pstudies[pd.Index(labs_all["study_id"].unique()).get_indexer(pstudies) < 0])
    dropped = pd.DataFrame({"study_id": absent, "reason": "no label in the label table"})
    if absent and unlabeled == "error":
        raise SchemaError(
            f"{len(absent)} prediction study id(s) are absent from the label table, e.g. {absent[:3]}; "
            "pass unlabeled='drop' (CLI: --unlabeled drop) to drop them with a report."
        )
    if absent:
        preds = preds[pd.Index(absent).get_indexer(preds["study_id"]) < 0]
    known = labs_all.dropna(subset=["patient_id"]).drop_duplicates("study_id")
    patients = pd.Series(known["patient_id"].to_numpy(), index=known["study_id"].to_numpy())
    return preds, labs, refs, fs, groups, dropped, patients


def _codes(values: pd.Series, categories: Sequence[str] | np.ndarray) -> np.ndarray:
    """Positions of ``values`` in ``categories`` (all present), without a per-element Python map."""
    codes, uniques = pd.factorize(values)
    return pd.Index(list(categories)).get_indexer(uniques).astype(np.intp)[codes]


def reference_prepare(
    predictions: pd.DataFrame,
    labels: pd.DataFrame,
    *,
    references: Sequence[str] | None,
    findings: Sequence[str] | None,
    policy: str,
    not_mentioned: str,
    model_groups: pd.DataFrame | dict[str, str] | None,
    unlabeled: str,
) -> dict:
    """Validate the tables (:func:`_validate_inputs`) and lay them out as arrays."""
    preds, labs, refs, fs, groups, dropped, pat = _validate_inputs(
        predictions, labels, references, findings, model_groups, unlabeled
    )
    models = list(pd.unique(preds["model"]))
    studies = np.asarray(sorted(pd.unique(preds["study_id"])), dtype=object)
    n = len(studies)
    # scores: (model, finding, study)
    S = np.full((len(models), len(fs), n), np.nan)
    mi = _codes(preds["model"], models)
    fi = _codes(preds["finding"], fs)
    si = _codes(preds["study_id"], studies)
    S[mi, fi, si] = preds["score"].to_numpy()
    # labels: (finding, reference, study)
    Y = np.full((len(fs), len(refs), n), np.nan)
    lab = labs[pd.Index(studies).get_indexer(labs["study_id"]) >= 0]
    yb = binarize(lab["state"], policy=policy, not_mentioned=not_mentioned)
    Y[_codes(lab["finding"], fs), _codes(lab["source"], refs), _codes(lab["study_id"], studies)] = yb
    # every labelled (study, finding) needs a score from every model
    labelled = np.isfinite(Y).any(axis=1)  # (finding, study)
    for j, f in enumerate(fs):
        miss = np.isnan(S[:, j, :]) & labelled[j][None, :]
        if miss.any():
            m, s = np.argwhere(miss)[0]
            raise SchemaError(
                f"Model {models[m]!r} has no score for study {studies[s]!r}, finding {f!r}, which the "
                f"references label ({int(miss.sum())} such (model, study) pairs); every model must "
                "score every labelled study."
            )
    patient_of = pd.Series(pat.reindex(studies).to_numpy(dtype=object))
    return dict(
        models=models,
        findings=fs,
        references=refs,
        groups=groups,
        dropped=dropped,
        studies=studies,
        S=S,
        Y=Y,
        patient_of=patient_of,
    )
