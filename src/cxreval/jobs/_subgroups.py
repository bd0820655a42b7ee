"""The job of ``cxreval subgroups``: per model × finding × reference × subgroup of a metadata column, metrics,
gaps, verdicts across references and calibration (:mod:`cxreval.subgroups`), from files.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from .._validation import check_inputs
from ..io import read_table
from ..options import Design, Resampling
from ..stats import prepare_from_files
from ..subgroups import SubgroupResult
from ..subgroups._calibration import N_BINS
from ..subgroups._evaluate import MIN_CASES, design_arguments, evaluate_subgroups_prepared
from ..subgroups._groups import parse_operating_point

__all__ = ["evaluate_subgroups_files"]


def evaluate_subgroups_files(
    predictions: str | Path | Sequence[str | Path],
    labels: str | Path | Sequence[str | Path],
    metadata: str | Path,
    *,
    by: Sequence[str],
    operating_point: str | float = "specificity=0.9",
    reference_group: Mapping[str, str] | Sequence[str] | None = None,
    references: Sequence[str] | None = None,
    findings: Sequence[str] | None = None,
    state_encoding: str | None = None,
    blank_state: str | None = None,
    design: Design = Design(),
    resampling: Resampling = Resampling(),
    calibration: bool = True,
    calibration_bins: int = N_BINS,
    min_cases: int = MIN_CASES,
) -> SubgroupResult:
    """:func:`cxreval.subgroups.evaluate_subgroups` of prediction, label and metadata files: what ``cxreval
    subgroups`` runs.

    Parameters
    ----------
    predictions, labels, state_encoding, blank_state
        As for :func:`cxreval.stats.prepare_from_files` (the files of ``cxreval classify``).
    metadata : path
        A CSV or Parquet table with ``study_id`` and the columns of ``by`` (e.g. the ``metadata.csv`` of ``cxreval
        data export chestxray14_metadata``, or a user's own), keyed by the study ids of the prediction and label
        tables.
    by, operating_point, reference_group, references, findings, design, resampling, calibration, calibration_bins,
    min_cases
        As for :func:`cxreval.subgroups.evaluate_subgroups`.

    Returns
    -------
    res : SubgroupResult
        ``res.save(folder)`` writes what ``cxreval subgroups`` writes (``run.json`` aside).

    Raises
    ------
    SchemaError, InvalidParameterError
        A missing file, a metadata column missing or with one value, scores outside [0, 1] with
        ``calibration``: every message names the file or column, before any computation.
    """
    return _subgroups_files(**locals())


def _subgroups_files(
    predictions: str | Path | Sequence[str | Path],
    labels: str | Path | Sequence[str | Path],
    metadata: str | Path,
    *,
    operating_point: str | float,
    references: Sequence[str] | None,
    findings: Sequence[str] | None,
    state_encoding: str | None,
    blank_state: str | None,
    design: Design,
    **options: Any,
) -> SubgroupResult:
    """:func:`evaluate_subgroups_files`, its keywords as given: the operating point, the design and the metadata
    checked, the files read into prepared inputs, then ``evaluate_subgroups_prepared`` of them (``options``: its
    keywords passed on as they are)."""
    parse_operating_point(operating_point, func="evaluate_subgroups_files")  # before any file is read
    selection = design_arguments(design)
    check_inputs(("metadata", metadata))
    meta = read_table(metadata, text=True)
    prep = prepare_from_files(
        predictions,
        labels,
        state_encoding=state_encoding,
        blank_state=blank_state,
        references=references,
        findings=findings,
        **selection,
    )
    files = [predictions] if isinstance(predictions, (str, Path)) else list(predictions)
    return evaluate_subgroups_prepared(
        prep,
        meta,
        operating_point=operating_point,
        where=f"metadata {Path(metadata)}",
        predictions_where=f"predictions {', '.join(map(str, files))}",
        **options,
    )
