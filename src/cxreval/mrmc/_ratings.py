"""The ratings table of a reader study, checked, and the arrays an MRMC analysis reads from it.

The **ratings table** is long, one row per reading: ``reader, modality, study_id, finding, rating``
(``patient_id`` optional). ``modality`` is the reading condition (``unaided``, ``aided``, a display, a model);
``rating`` is a number, higher meaning more confident the finding is present: an ordinal scale (1–5), a
probability (0–100), or a binary call (0/1). It is what ``cxreval reader export`` writes as ``ratings.csv``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from ..exceptions import InvalidParameterError, SchemaError
from ..findings import canonical_finding
from ..schema import FINDING, PATIENT_ID, SOURCE, STATE, STUDY_ID, binarize
from ..schema._columns import check_columns

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "RATING_COLUMNS",
    "READER",
    "MODALITY",
    "RATING",
    "validate_ratings",
    "labels_to_ratings",
    "ReaderArrays",
    "reader_arrays",
    "read_ratings",
]

READER = "reader"
"""Who gave a rating: a reader of the study (a person), or a model read as one."""
MODALITY = "modality"
"""The reading condition a rating was given under (``unaided``, ``aided``, a display)."""
RATING = "rating"
"""A reader's confidence that the finding is present (higher = more likely present)."""
RATING_COLUMNS: tuple[str, ...] = (READER, MODALITY, STUDY_ID, FINDING, RATING)
"""The required columns of the ratings table (``patient_id`` optional)."""


def validate_ratings(
    ratings: pd.DataFrame, *, scale: tuple[float, float] | None = None, where: str = "ratings"
) -> pd.DataFrame:
    """Check a ratings table and return it standardised.

    Every required column is present; ``rating`` holds finite numbers; ``finding`` names are canonical
    (:func:`cxreval.findings.canonical_finding`, aliases such as ``Pleural Effusion`` read as ``Effusion``);
    ``reader``, ``modality`` and ``study_id`` are non-blank text; a reading appears once per
    ``(reader, modality, study_id, finding)``; a study has one ``patient_id`` when the column is present.

    Parameters
    ----------
    ratings : DataFrame
        The long ratings table (:data:`RATING_COLUMNS`, ``patient_id`` optional).
    scale : (float, float), optional
        The rating scale's lowest and highest value (``(1, 5)``, ``(0, 100)``); a rating outside it is refused.
    where : str, default='ratings'
        How error messages name the table (a file's path when it was read from one).

    Returns
    -------
    ratings : DataFrame
        The columns of :data:`RATING_COLUMNS` (and ``patient_id``), text as ``str``, ``rating`` as float64.

    Raises
    ------
    SchemaError
        Naming the column, the row and the value, and what was expected.
    """
    import pandas as pd

    check_columns(ratings, RATING_COLUMNS, where=where)
    keep = [*RATING_COLUMNS, *([PATIENT_ID] if PATIENT_ID in ratings.columns else [])]
    out = ratings.loc[:, keep].reset_index(drop=True)
    if len(out) == 0:
        raise SchemaError(f"{where} has no rows.")
    for col in (c for c in keep if c != RATING):
        blank = out[col].isna() | (out[col].astype(str).str.strip() == "")
        if blank.any():
            row = int(np.flatnonzero(blank.to_numpy())[0])
            raise SchemaError(f"{where} row {row + 1}: column {col!r} is blank; every reading needs a {col}.")
        out[col] = out[col].astype(str)
    values = pd.to_numeric(out[RATING], errors="coerce")
    bad = values.isna() | ~np.isfinite(values.to_numpy(dtype=float, na_value=np.nan))
    if bad.any():
        row = int(np.flatnonzero(bad.to_numpy())[0])
        raise SchemaError(
            f"{where} row {row + 1}: column 'rating' holds {ratings[RATING].iloc[row]!r}; expected a "
            "finite number (higher = more confident the finding is present)."
        )
    out[RATING] = values.to_numpy(dtype=float)
    if scale is not None:
        lo, hi = float(scale[0]), float(scale[1])
        if not lo < hi:
            raise InvalidParameterError(
                f"The 'scale' parameter of validate_ratings must be (lowest, highest) with "
                f"lowest < highest. Got {scale!r}."
            )
        off = (out[RATING] < lo) | (out[RATING] > hi)
        if off.any():
            row = int(np.flatnonzero(off.to_numpy())[0])
            raise SchemaError(
                f"{where} row {row + 1}: reader {out[READER].iloc[row]!r} gave the rating "
                f"{out[RATING].iloc[row]:g}, outside the scale {lo:g} to {hi:g}."
            )
    names = {f: canonical_finding(f) for f in out[FINDING].unique()}
    out[FINDING] = out[FINDING].map(names)
    dup = out.duplicated([READER, MODALITY, STUDY_ID, FINDING], keep=False)
    if dup.any():
        first = out.loc[dup].iloc[0]
        raise SchemaError(
            f"{where}: reader {first[READER]!r} rated study {first[STUDY_ID]!r} for "
            f"{first[FINDING]!r} under modality {first[MODALITY]!r} more than once; expected one "
            "rating per (reader, modality, study_id, finding)."
        )
    if PATIENT_ID in out.columns:
        per_study = out.groupby(STUDY_ID, sort=False)[PATIENT_ID].nunique()
        if (per_study > 1).any():
            study = per_study.index[int(np.flatnonzero(per_study.to_numpy() > 1)[0])]
            raise SchemaError(
                f"{where}: study {study!r} has more than one patient_id; expected one per study."
            )
    return out


def labels_to_ratings(
    labels: pd.DataFrame, *, sources: Sequence[str], modality: str = "unaided", policy: str = "exclude"
) -> pd.DataFrame:
    """Readers' labels from a label table read as binary ratings (1 = positive, 0 = negative).

    A reader study whose readers gave labels, not confidence ratings (the CheXpert test set's radiologists),
    enters an MRMC analysis this way: each named ``source`` becomes a reader, its binarised state the rating.
    Labels that the policy excludes (uncertain under ``'exclude'``, missing) give no reading.

    Parameters
    ----------
    labels : DataFrame
        A validated long label table (:func:`cxreval.labels.validate_label_table`).
    sources : sequence of str
        The sources read as readers.
    modality : str, default='unaided'
        The modality of these readings.
    policy : {'exclude', 'zeros', 'ones'}, default='exclude'
        What an uncertain label becomes (:func:`cxreval.schema.binarize`).

    Returns
    -------
    ratings : DataFrame
        The ratings table (:data:`RATING_COLUMNS` and ``patient_id``).
    """
    import pandas as pd

    check_columns(labels, (STUDY_ID, PATIENT_ID, FINDING, SOURCE, STATE), where="labels")
    known = set(labels[SOURCE].astype(str).unique())
    missing = [s for s in sources if s not in known]
    if missing:
        raise SchemaError(
            f"labels have no source {missing[0]!r} to read as a reader; sources present: {sorted(known)}."
        )
    part = labels[labels[SOURCE].isin(list(sources))]
    y = binarize(part[STATE], policy=policy)
    keep = ~np.isnan(y)
    part = part.loc[keep]
    return pd.DataFrame(
        {
            READER: part[SOURCE].astype(str).to_numpy(),
            MODALITY: modality,
            STUDY_ID: part[STUDY_ID].astype(str).to_numpy(),
            FINDING: part[FINDING].astype(str).to_numpy(),
            RATING: y[keep],
            PATIENT_ID: part[PATIENT_ID].astype(str).to_numpy(),
        }
    )


@dataclass(frozen=True)
class ReaderArrays:
    """One finding's readings laid out for an MRMC analysis.

    Attributes
    ----------
    ratings : ndarray of shape (n_modalities, n_readers, n_cases)
        NaN where a reader did not read a case in a modality.
    truth : ndarray of shape (n_cases,)
        1.0 for a case with the finding, 0.0 without.
    study_ids, patient_ids : ndarray of str, shape (n_cases,)
    modalities, readers : tuple of str
    """

    ratings: np.ndarray
    truth: np.ndarray
    study_ids: np.ndarray
    patient_ids: np.ndarray
    modalities: tuple[str, ...]
    readers: tuple[str, ...]


def reader_arrays(
    ratings: pd.DataFrame,
    truth: pd.Series,
    patients: pd.Series,
    *,
    modalities: Sequence[str] | None = None,
    readers: Sequence[str] | None = None,
) -> ReaderArrays:
    """Lay out one finding's ratings on the cases whose truth is known.

    Parameters
    ----------
    ratings : DataFrame
        The validated ratings of one finding.
    truth : Series of float
        0/1 per ``study_id`` (the index); the cases of the analysis are the studies with a truth that some
        reader read.
    patients : Series of str
        The patient of each ``study_id`` (the index).
    modalities, readers : sequence of str, optional
        The order of the axes; by default the order of first appearance.
    """
    mods = tuple(modalities) if modalities is not None else tuple(dict.fromkeys(ratings[MODALITY]))
    rdrs = tuple(readers) if readers is not None else tuple(dict.fromkeys(ratings[READER]))
    read = ratings[ratings[STUDY_ID].isin(truth.index)]
    studies = np.asarray(sorted(set(read[STUDY_ID])), dtype=object)
    col = {s: i for i, s in enumerate(studies)}
    arr = np.full((len(mods), len(rdrs), len(studies)), np.nan)
    m_of = {m: i for i, m in enumerate(mods)}
    r_of = {r: i for i, r in enumerate(rdrs)}
    sel = read[read[MODALITY].isin(mods) & read[READER].isin(rdrs)]
    arr[
        sel[MODALITY].map(m_of).to_numpy(),
        sel[READER].map(r_of).to_numpy(),
        sel[STUDY_ID].map(col).to_numpy(),
    ] = sel[RATING].to_numpy(dtype=float)
    return ReaderArrays(
        ratings=arr,
        truth=truth.loc[studies].to_numpy(dtype=float),
        study_ids=studies,
        patient_ids=patients.loc[studies].astype(str).to_numpy(dtype=object),
        modalities=mods,
        readers=rdrs,
    )


def read_ratings(path: str | Path, *, scale: tuple[float, float] | None = None) -> pd.DataFrame:
    """Read and check a ratings table (CSV or Parquet; :func:`validate_ratings`), errors naming the file."""
    from ..io import read_table

    return validate_ratings(read_table(path, text=True), scale=scale, where=str(path))
