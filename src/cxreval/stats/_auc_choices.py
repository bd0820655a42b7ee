"""The choices of :func:`~cxreval.classification.evaluate_auc` made on the validated codes: the references, the
findings, the model groups, the unlabelled studies, and the order of models and studies (private to
:mod:`cxreval.stats`; used by ``stats/_auc_inputs.py``)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from .._validation import check_choice
from ..exceptions import InvalidParameterError, SchemaError
from ..findings import VocabularyMapping, canonical_finding
from ..labels._long import validate_model_groups
from ..labels._streaming import LabelScan, PredictionScan
from ._auc_result import DEFAULT_GROUP

__all__ = ["check_map_findings", "validate_inputs", "model_order", "study_order"]


def check_map_findings(fmap: VocabularyMapping, ps: PredictionScan, ls: LabelScan) -> None:
    """Every finding a map names is predicted or labelled (else one line naming it, before computing)."""
    seen = set(ps.findings) | set(ls.findings)
    for t, srcs in fmap.targets.items():
        absent = [f for f in srcs if f not in seen]
        if t not in seen and absent:
            raise SchemaError(
                f"Finding map {fmap.name!r}: finding {absent[0]!r} (defining {t!r}) is neither "
                f"predicted nor labelled, nor is {t!r} (predicted: {sorted(set(ps.findings))}; "
                f"labelled: {sorted(set(ls.findings))})."
            )


def validate_inputs(
    ps: PredictionScan,
    ls: LabelScan,
    references: Sequence[str] | None,
    findings: Sequence[str] | None,
    model_groups: pd.DataFrame | dict[str, str] | None,
    unlabeled: str,
    allowed: tuple[str, ...] | None = None,
) -> tuple[list[str], list[str], list[int], dict[str, str], pd.DataFrame]:
    """Choose references and findings, check model groups and unlabelled studies, on validated codes.

    Returns the references, the findings, their codes in ``ps``, the model → group map (models with a score for
    a chosen finding) and the dropped studies."""
    check_choice(unlabeled, ("error", "drop"), name="unlabeled", func="evaluate_auc")
    sources = sorted(ls.sources[k] for k in np.unique(ls.source))
    try:
        refs = list(references) if references is not None and not isinstance(references, str) else sources
    except TypeError:
        refs = [references]
    if references is not None and (isinstance(references, str) or not all(isinstance(r, str) for r in refs)):
        raise InvalidParameterError(
            f"The 'references' parameter of evaluate_auc must be a sequence of str. Got "
            f"{references!r} instead."
        )
    if not refs:
        raise InvalidParameterError("evaluate_auc: no references; the label table is empty.")
    for r in refs:
        if r not in sources:
            raise InvalidParameterError(
                f"Unknown reference {r!r}: it is not a source of the label table; sources present: {sources}."
            )
    if len(set(refs)) != len(refs):
        raise InvalidParameterError(f"evaluate_auc: 'references' has duplicates: {refs}.")
    f_first = {j: int(a.min()) for j, a in ps.first_row.items() if len(a)}
    pf = [ps.findings[j] for j in sorted(f_first, key=f_first.__getitem__)]  # in order of first appearance
    if allowed is not None:  # a finding map: its targets only
        pf = [f for f in pf if f in allowed]
    ref_codes = [ls.sources.index(r) for r in refs]
    lf = {ls.findings[j] for j in np.unique(ls.finding[np.isin(ls.source, ref_codes)])}
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
    fcodes = [ps.findings.index(f) for f in fs]
    models = model_order(ps, fcodes)
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
        unknown = [m for m in gmap if m not in set(ps.models)]
        if unknown:
            raise SchemaError(
                f"Model(s) {unknown} of the model group table have no predictions; the predicted "
                f"models are {list(ps.models)}."
            )
        groups = {m: gmap[m] for m in models}
    # studies with predictions but no label row at all in the label table, in order of first appearance
    pstudies = study_order(ps, fcodes)
    texts = np.asarray(ps.studies, dtype=object)
    labelled = pd.Index(ls.studies).get_indexer(texts[pstudies]) >= 0
    absent = list(texts[pstudies[~labelled]])
    dropped = pd.DataFrame({"study_id": absent, "reason": "no label in the label table"})
    if absent and unlabeled == "error":
        raise SchemaError(
            f"{len(absent)} prediction study id(s) are absent from the label table, e.g. {absent[:3]}; "
            "pass unlabeled='drop' to drop them with a report."
        )
    if absent and len(absent) == len(pstudies):
        raise SchemaError(
            f"None of the {len(absent)} prediction studies (e.g. {absent[:3]}) is in the label table "
            f"(its studies are e.g. {list(ls.studies[:3])}), so unlabeled='drop' would leave nothing "
            "to evaluate; check that the predictions and labels name studies the same way."
        )
    return refs, fs, fcodes, groups, dropped


def model_order(ps: PredictionScan, fcodes: list[int], keep: np.ndarray | None = None) -> list[str]:
    """Models with a row of a chosen finding, in order of their first such row (``keep``: over the rows of the
    kept study codes only; ``None`` when that cannot be decided from the first rows)."""
    first: dict[int, tuple[int, int]] = {}
    for (m, j), (row, s) in ps.slot_first.items():
        if j in fcodes and (m not in first or row < first[m][0]):
            first[m] = (row, s)
    if keep is not None and not all(keep[s] for _, s in first.values()):
        raise LookupError("a model's first row is on a dropped study")
    return [ps.models[m] for m in sorted(first, key=lambda m: first[m][0])]


def study_order(ps: PredictionScan, fcodes: list[int]) -> np.ndarray:
    """Codes of the studies with a row of a chosen finding, in order of their first such row."""
    big = np.iinfo(np.int64).max
    first = np.full(len(ps.studies), big, dtype=np.int64)
    for j in fcodes:
        a = ps.first_row.get(j, np.zeros(0, np.int64))[: len(first)]
        np.minimum(first[: len(a)], a, out=first[: len(a)])
    has = np.flatnonzero(first < big)
    return has[np.argsort(first[has], kind="stable")]
