"""The inputs of :func:`~cxreval.classification.evaluate_auc`, validated and laid out as arrays.

:func:`prepare_inputs` does it from prediction and label DataFrames, :func:`prepare_from_files` straight from
files (each read once, block by block, as integer codes); both give a :class:`PreparedInputs` (scores ``S``,
0/1/NaN labels ``Y``, sorted studies, each study's patient) that ``evaluate_auc_prepared(prep, ...)`` computes on.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import pandas as pd

from .._typing import Studies
from .._validation import check_choice
from ..exceptions import InvalidParameterError, SchemaError
from ..finding_maps import read_finding_map
from ..findings import VocabularyMapping
from ..labels import validate_predictions
from ..labels._files import check_label_headers, check_prediction_headers, read_prediction_tables
from ..labels._streaming import (
    LabelScan,
    PredictionScan,
    scan_label_frame,
    scan_labels,
    scan_prediction_frame,
    scan_predictions,
)
from ..schema import POLICIES, binarize
from ._auc_choices import check_map_findings, model_order, study_order, validate_inputs
from ._auc_maps import map_label_scan, map_prediction_scan
from ._auc_result import NO_EFFECT
from ._soft_labels import apply_soft_labels, read_soft_labels, soft_labels_from_frame

STUDY_DESIGNS: tuple[str, ...] = ("each", "common")
"""``studies=``: each reference on the studies it labels, or per finding the studies every reference labels."""
MISSING_SCORES: tuple[str, ...] = ("refuse", "chance")
"""``missing_scores=``: a model without any score for a finding is refused, or scored 0.5 (the XQA convention)."""

__all__ = [
    "PreparedInputs",
    "prepare_inputs",
    "prepare_from_files",
    "check_design",
    "loaded_table",
    "STUDY_DESIGNS",
    "MISSING_SCORES",
]


@dataclass(frozen=True)
class PreparedInputs:
    """Validated inputs of :func:`~cxreval.classification.evaluate_auc` as arrays: scores ``S`` (model, finding, study), 0/1/NaN labels
    ``Y`` (finding, reference, study), studies sorted, and each study's patient.

    Made by :func:`prepare_from_files` (or inside :func:`~cxreval.classification.evaluate_auc` from DataFrames); pass it to
    :func:`~cxreval.classification.evaluate_auc` in place of the tables.

    Attributes
    ----------
    models, findings, references : list of str
        Axis labels of ``S`` and ``Y`` (models in order of first appearance, findings as chosen).
    groups : dict
        Model → group.
    dropped : pandas.DataFrame
        Prediction studies absent from the labels (``unlabeled='drop'``): ``study_id, reason``.
    studies : ndarray of str (object)
        Study ids, sorted.
    S : ndarray of float64, shape (n_models, n_findings, n_studies)
        Scores (NaN: no score, only where no reference labels the study).
    Y : ndarray of float64, shape (n_findings, n_references, n_studies)
        1.0, 0.0 or NaN (missing or excluded label) under ``policy`` and ``not_mentioned``.
    patient_of : pandas.Series
        Each study's patient id (object; NaN: none).
    policy, not_mentioned : str
    notes : tuple of str
        What the readers recorded (files not read, renamed columns).
    states : ndarray of int8, shape (n_findings, n_references, n_studies)
        The label state of each study (-1..2; ``-128``: no label) under the study design.
    studies_design : {'each', 'common'}
        ``'each'``: every reference on the studies it labels; ``'common'``: per finding, the studies that every
        reference labelling the finding labels.
    chance : tuple of (model, finding)
        The models without any score for a finding, scored 0.5 (``missing_scores='chance'``).
    unscored : tuple of (finding, reference)
        Findings a reference labels that no model scores (without a finding map, all findings evaluated): not
        evaluated, listed in ``coverage.csv`` as ``not scored``.
    finding_map : VocabularyMapping or None
        The finding map applied to labels and scores.
    soft_references : tuple of str
        The references whose labels carry ``p_positive`` (:mod:`cxreval.stats._soft_labels`): their
        ``Y`` holds the probabilities in [0, 1].
    """

    models: list[str]
    findings: list[str]
    references: list[str]
    groups: dict[str, str]
    dropped: pd.DataFrame
    studies: np.ndarray
    S: np.ndarray
    Y: np.ndarray
    patient_of: pd.Series
    policy: str
    not_mentioned: str
    notes: tuple[str, ...] = ()
    states: np.ndarray | None = None
    studies_design: str = "each"
    chance: tuple[tuple[str, str], ...] = ()
    finding_map: VocabularyMapping | None = None
    unscored: tuple[tuple[str, str], ...] = ()
    soft_references: tuple[str, ...] = ()


def prepare_inputs(
    predictions: pd.DataFrame,
    labels: pd.DataFrame,
    *,
    references: Sequence[str] | None = None,
    findings: Sequence[str] | None = None,
    policy: str = "exclude",
    not_mentioned: str = "negative",
    model_groups: pd.DataFrame | dict[str, str] | None = None,
    unlabeled: str = "error",
    studies: Studies = "common",
    missing_scores: str = "refuse",
    finding_map: str | VocabularyMapping | None = None,
) -> PreparedInputs:
    """Validate prediction and label tables and lay them out as the arrays :func:`~cxreval.classification.evaluate_auc` computes on.

    ``evaluate_auc(predictions, labels, **options)`` is ``evaluate_auc_prepared(prepare_inputs(predictions,
    labels, **selection), **computation)``; the split lets the validation and the computation be timed or reused apart.

    Parameters
    ----------
    predictions, labels : pandas.DataFrame
        As for :func:`~cxreval.classification.evaluate_auc` (validated by :func:`~cxreval.labels.validate_predictions` and
        :func:`~cxreval.labels.validate_label_table`).
    references, findings, policy, not_mentioned, model_groups, unlabeled, studies, missing_scores, finding_map
        As for :func:`~cxreval.classification.evaluate_auc`.

    Returns
    -------
    PreparedInputs

    Raises
    ------
    SchemaError, InvalidParameterError
        As :func:`~cxreval.classification.evaluate_auc`, before any computation.
    """
    predictions, labels = loaded_table(predictions, "predictions"), loaded_table(labels, "labels")
    options = (references, findings, policy, not_mentioned, model_groups, unlabeled, studies, missing_scores)
    sel = _Selection.checked(*options, finding_map=finding_map)
    ps = scan_prediction_frame(predictions)  # validated on its columns, no second table made
    ls = scan_label_frame(labels, require_patient=False)
    soft = soft_labels_from_frame(labels, where="label table") if isinstance(labels, pd.DataFrame) else None
    return apply_soft_labels(
        _prepare_scans(ps, ls, sel, frame=lambda: validate_predictions(predictions)), soft
    )


def prepare_from_files(
    predictions: str | Path | Sequence[str | Path],
    labels: str | Path | Sequence[str | Path],
    *,
    state_encoding: str | None = None,
    references: Sequence[str] | None = None,
    findings: Sequence[str] | None = None,
    policy: str = "exclude",
    not_mentioned: str = "negative",
    model_groups: pd.DataFrame | dict[str, str] | None = None,
    unlabeled: str = "error",
    blank_state: str | None = None,
    studies: Studies = "common",
    missing_scores: str = "refuse",
    finding_map: str | VocabularyMapping | None = None,
) -> PreparedInputs:
    """Read prediction and label files straight into the arrays :func:`~cxreval.classification.evaluate_auc` computes on.

    Each file is read once, block by block, with its text columns as integer codes
    (:func:`cxreval.labels.scan_predictions`, :func:`cxreval.labels.scan_labels`): memory is about that of the
    score array ``S`` (8 bytes × models × findings × studies) plus one block, not that of the long tables.
    ``evaluate_auc_prepared(prepare_from_files(p, l, ...))`` equals ``evaluate_auc(read(p), read(l), ...)``.

    Parameters
    ----------
    predictions : path or sequence of paths
        Long prediction tables ``study_id, model, finding, score`` (CSV or Parquet file, or a folder of such
        files read as one table), or folders of wide ``<model>.csv``/``.parquet`` files.
    labels : path or sequence of paths
        Long label tables ``study_id, patient_id, finding, source, state`` (file, or folder of parts), optionally
        with ``p_positive`` (soft labels, :mod:`cxreval.stats._soft_labels`).
    state_encoding : {'cxreval', 'chexpert', 'binary'} or None
        How numeric states are read (:func:`~cxreval.schema.decode_states`).
    blank_state : {'refuse', 'missing'} or None
        What a blank state cell is (:func:`~cxreval.schema.decode_states`; None: refused without an encoding).
    references, findings, policy, not_mentioned, model_groups, unlabeled, studies, missing_scores, finding_map
        As for :func:`~cxreval.classification.evaluate_auc`.

    Returns
    -------
    res : PreparedInputs
        What :func:`prepare_inputs` gives for the tables the files hold.

    Raises
    ------
    SchemaError
        Anything the readers and :func:`~cxreval.classification.evaluate_auc` refuse, with the same messages (file, row, value).
    """
    options = (references, findings, policy, not_mentioned, model_groups, unlabeled, studies, missing_scores)
    sel = _Selection.checked(*options, finding_map=finding_map)
    ppaths, lpaths = _paths(predictions, "predictions"), _paths(labels, "labels")
    check_label_headers(lpaths, require_patient=True)  # both headers before any block of either is read
    check_prediction_headers(ppaths)
    ps = scan_predictions(ppaths)
    ls, lnotes = scan_labels(
        lpaths, state_encoding=state_encoding, blank_state=blank_state, require_patient=True
    )
    soft = read_soft_labels(lpaths)
    scans = _prepare_scans(
        ps, ls, sel, frame=lambda: read_prediction_tables(ppaths)[0], notes=(*ps.notes, *lnotes)
    )
    return apply_soft_labels(scans, soft)


def loaded_table(value: Any, name: str, func: str = "evaluate_auc") -> Any:
    """What a loader returns (a :class:`~cxreval.results.ReadResult`, or a list of tables) as the one table the
    analysis takes (:func:`cxreval.results.as_table`); anything else unchanged, for the table checks to name."""
    from ..results import ReadResult, as_table

    return as_table(value, name=name, func=func) if isinstance(value, (ReadResult, list, tuple)) else value


def check_design(studies: Studies, missing_scores: str) -> None:
    """Check the study design options of :func:`~cxreval.classification.evaluate_auc` (its first step, before any file is read)."""
    check_choice(studies, STUDY_DESIGNS, name="studies", func="evaluate_auc")
    check_choice(missing_scores, MISSING_SCORES, name="missing_scores", func="evaluate_auc")


def _paths(value: object, name: str) -> list[Path]:
    items: Any = [value] if isinstance(value, (str, Path)) else value
    try:
        out = [Path(p) for p in items]
    except TypeError:
        raise InvalidParameterError(
            f"The '{name}' parameter of prepare_from_files must be a path or a sequence of "
            f"paths. Got {value!r} instead."
        ) from None
    if not out:
        raise InvalidParameterError(f"prepare_from_files: '{name}' is empty.")
    return out


class _Selection(NamedTuple):
    """The selection options of :func:`prepare_inputs` and :func:`prepare_from_files`, checked (``fmap``: the
    finding map read)."""

    references: Sequence[str] | None
    findings: Sequence[str] | None
    policy: str
    not_mentioned: str
    model_groups: pd.DataFrame | dict[str, str] | None
    unlabeled: str
    studies: Studies
    missing_scores: str
    fmap: VocabularyMapping | None

    @classmethod
    def checked(
        cls,
        references: Sequence[str] | None,
        findings: Sequence[str] | None,
        policy: str,
        not_mentioned: str,
        model_groups: pd.DataFrame | dict[str, str] | None,
        unlabeled: str,
        studies: Studies,
        missing_scores: str,
        *,
        finding_map: str | VocabularyMapping | None,
    ) -> _Selection:
        check_choice(policy, POLICIES, name="policy", func="evaluate_auc")
        check_choice(not_mentioned, ("negative", "exclude"), name="not_mentioned", func="evaluate_auc")
        check_design(studies, missing_scores)
        fmap = None if finding_map is None else read_finding_map(finding_map)
        options = (
            references,
            findings,
            policy,
            not_mentioned,
            model_groups,
            unlabeled,
            studies,
            missing_scores,
        )
        return cls(*options, fmap)


def _prepare_scans(
    ps: PredictionScan,
    ls: LabelScan,
    selection: _Selection,
    *,
    frame: Callable[[], pd.DataFrame],
    notes: tuple[str, ...] = (),
) -> PreparedInputs:
    """Lay validated codes out as arrays (``selection.fmap``: the finding map, read and checked by the caller); the score
    arrays of ``ps`` are moved into ``S`` (``ps`` is emptied)."""
    references, findings, policy, not_mentioned, model_groups, unlabeled, design, missing_scores, fmap = (
        selection
    )
    if fmap is not None:
        check_map_findings(fmap, ps, ls)
        map_prediction_scan(ps, fmap)
        map_label_scan(ls, fmap)
    refs, fs, fcodes, groups, dropped = validate_inputs(
        ps,
        ls,
        references,
        findings,
        model_groups,
        unlabeled,
        allowed=None if fmap is None else tuple(fmap.targets),
    )
    texts = np.asarray(ps.studies, dtype=object)
    pstudies = study_order(ps, fcodes)
    kept_mask = np.zeros(len(texts), dtype=bool)
    kept_mask[pstudies] = True
    if len(dropped):
        kept_mask[pd.Index(texts).get_indexer(dropped["study_id"].to_numpy(dtype=object))] = False
    kept = np.flatnonzero(kept_mask)
    kept = kept[np.argsort(texts[kept], kind="stable")]  # sorted study ids
    study_ids = texts[kept]
    try:
        models = model_order(ps, fcodes, keep=kept_mask)
    except (
        LookupError
    ):  # a model's first row is a dropped study: the order over the kept rows, from the table
        df = frame()
        used = set(fs) if fmap is None else {*fs, *(x for f in fs for x in fmap.targets.get(f, ()))}
        rows = df["finding"].isin(used).to_numpy() & ~df["study_id"].isin(dropped["study_id"]).to_numpy()
        models = list(pd.unique(df.loc[rows, "model"]))
    n = len(study_ids)
    # scores: (model, finding, study), each (model, finding) array moved out of the scan as it is copied
    S = np.empty((len(models), len(fs), n))
    mcode = {m: k for k, m in enumerate(ps.models)}
    for i, m in enumerate(models):
        for jj, j in enumerate(fcodes):
            a = ps.scores.pop((mcode[m], j), None)
            if a is not None and len(a) == len(texts):  # an array over every study
                np.take(a, kept, out=S[i, jj])
                continue
            S[i, jj] = np.nan
            if a is not None:
                inside = kept < len(a)
                S[i, jj, inside] = a[kept[inside]]
    ps.scores.clear()
    # labels: (finding, reference, study)
    Y = np.full((len(fs), len(refs), n), np.nan)
    pos = (
        pd.Index(study_ids).get_indexer(np.asarray(ls.studies, dtype=object))
        if n
        else np.full(len(ls.studies), -1)
    )
    f_of = pd.Index(fs).get_indexer(ls.findings)
    r_of = pd.Index(refs).get_indexer(ls.sources)
    row_pos = pos[ls.study] if len(ls.study) else np.zeros(0, np.intp)
    sel = (row_pos >= 0) & (f_of[ls.finding] >= 0) & (r_of[ls.source] >= 0)
    domain = pd.Series(pd.array([-1, 0, 1, 2, pd.NA], dtype="Int8"))
    yb = binarize(domain, policy=policy, not_mentioned=not_mentioned)  # the value of each state, missing last
    st = ls.state[sel].astype(np.int16)
    Y[f_of[ls.finding[sel]], r_of[ls.source[sel]], row_pos[sel]] = yb[
        np.where(st == LabelScan.MISSING_STATE, 4, st + 1)
    ]
    states = np.full(Y.shape, LabelScan.MISSING_STATE, dtype=np.int8)
    states[f_of[ls.finding[sel]], r_of[ls.source[sel]], row_pos[sel]] = ls.state[sel]
    keep = np.ones(n, dtype=bool)
    if design == "common":
        keep = _common_studies(states, Y, fs, refs)
    # every labelled (study, finding) needs a score from every model; a model with no score at all for a
    # finding is scored 0.5 with missing_scores='chance'
    labelled = np.isfinite(Y).any(axis=1)  # (finding, study)
    chance = []
    for j, f in enumerate(fs):
        if missing_scores == "chance":
            for i in np.flatnonzero(np.isnan(S[:, j, :]).all(axis=1)).tolist():
                S[i, j, :] = 0.5
                chance.append((models[i], f))
        miss = np.isnan(S[:, j, :]) & labelled[j][None, :]
        if miss.any():
            m, s = np.argwhere(miss)[0]
            hint = (
                " (a model with no output at all for a finding can be scored AUC 0.5, the XQA convention: "
                "missing_scores='chance')"
                if np.isnan(S[m, j, :]).all() and missing_scores == "refuse"
                else ""
            )
            raise SchemaError(
                f"Model {models[m]!r} has no score for study {study_ids[s]!r}, finding {f!r}, which the "
                f"references label ({int(miss.sum())} such (model, study) pairs); every model must "
                f"score every labelled study{hint}."
            )
    # each study's patient (one per study, checked by the readers)
    pat = np.full(len(ls.studies), -1, dtype=np.int64)
    has = ls.patient >= 0
    pat[ls.study[has]] = ls.patient[has]
    pcode = pat[pd.Index(ls.studies).get_indexer(study_ids)] if n else np.zeros(0, np.int64)
    patients = np.asarray(ls.patients + [np.nan], dtype=object)
    patient_of = pd.Series(patients[np.where(pcode >= 0, pcode, len(ls.patients))])
    if not keep.all():  # studies='common': the studies no finding's common set holds leave the evaluation
        out = study_ids[~keep]
        dropped = pd.concat(
            [
                dropped,
                pd.DataFrame(
                    {
                        "study_id": out,
                        "reason": "not labelled by every reference labelling its findings (studies='common')",
                    }
                ),
            ],
            ignore_index=True,
        )
        study_ids, S, Y, states = study_ids[keep], S[:, :, keep], Y[:, :, keep], states[:, :, keep]
        patient_of = patient_of[keep].reset_index(drop=True)
    unscored: list[tuple[str, str]] = []
    if fmap is None and findings is None:  # a reference's findings that no model scores: said, never silent
        for r in refs:
            codes = np.unique(ls.finding[ls.source == ls.sources.index(r)])
            unscored += [(ls.findings[j], r) for j in codes.tolist() if ls.findings[j] not in fs]
    return PreparedInputs(
        models,
        fs,
        refs,
        groups,
        dropped,
        study_ids,
        S,
        Y,
        patient_of,
        policy,
        not_mentioned,
        tuple(notes) + _no_effect(missing_scores, chance),
        states,
        design,
        tuple(chance),
        fmap,
        tuple(sorted(unscored)),
    )


def _common_studies(states: np.ndarray, Y: np.ndarray, fs: list[str], refs: list[str]) -> np.ndarray:
    """``studies='common'``: per finding, keep the labels of the studies every reference labelling the finding
    labels (``states``, ``Y`` changed in place); return the studies still labelled or never labelled."""
    had = (states != LabelScan.MISSING_STATE).any(axis=(0, 1))
    for j, f in enumerate(fs):
        lab = states[j] != LabelScan.MISSING_STATE  # (reference, study)
        cover = lab.any(axis=1)
        if cover.sum() < 2:
            continue
        common = lab[cover].all(axis=0)
        if not common.any():
            names = [r for r, c in zip(refs, cover) if c]
            raise SchemaError(
                f"studies='common': no study is labelled by every reference "
                f"labelling finding {f!r} ({names}); choose studies='each' or references=."
            )
        states[j][:, ~common] = LabelScan.MISSING_STATE
        Y[j][:, ~common] = np.nan
    has = (states != LabelScan.MISSING_STATE).any(axis=(0, 1))
    return has | ~had


def _no_effect(missing_scores: str, chance: list[tuple[str, str]]) -> tuple[str, ...]:
    """The note saying that ``missing_scores='chance'`` changed nothing (every model scores every finding)."""
    if missing_scores != "chance" or chance:
        return ()
    return (
        f"{NO_EFFECT}: every model has scores for every finding, so no AUC was set to 0.5 and the results "
        "equal those of `refuse`",
    )
