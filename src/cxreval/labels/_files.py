"""Inputs given as paths: a long table is a CSV or Parquet file or a folder of such files with the same columns
(one table, files in name order); predictions may also be a folder of wide ``<model>.csv``/``.parquet`` files, and
either input one wide file (a study id column of :data:`WIDE_ID_COLUMNS`, then one column per finding, none of the
long table's columns: labels as one source, scores as one model, each named after the file).
The pandas reading of such inputs (:func:`read_prediction_tables`, :func:`read_label_tables`) is the reference
the block-wise reader (:mod:`cxreval.labels`) falls back on to raise an error with its file, row and
value."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import NamedTuple

import pandas as pd

from ..exceptions import InvalidParameterError, SchemaError
from ..io._read import TABLE_SUFFIXES, HeaderError, column_names, table_files, table_parts
from ..schema import PATIENT_ID, STATE_ENCODINGS
from ..schema._columns import check_columns
from ..schema._states import BLANK_STATES, decode_states
from ._common import _read_table
from ._long import LABEL_COLUMNS, PREDICTION_COLUMNS, read_labels, validate_label_table, validate_predictions
from ._wide import _PATIENT_RE, read_wide_labels, read_wide_predictions

__all__ = [
    "TABLE_SUFFIXES",
    "table_parts",
    "ReadTables",
    "read_prediction_tables",
    "read_label_tables",
    "check_label_headers",
    "check_prediction_headers",
]


WIDE_ID_COLUMNS = ("Study", "Path", "study_id", "Image Index")
"""The study id columns a wide table (one column per finding, as CheXpert and most users ship labels and scores)
is recognised by, first found used."""
_PATIENT_COLUMNS = ("patient_id", "Patient ID")


def wide_id_column(names: Sequence[str], long_columns: Sequence[str]) -> str | None:
    """The id column when a table with columns ``names`` is wide (none of the long table's ``long_columns`` other
    than ``study_id``/``patient_id``, a study id column, at least one column named after a finding), else None."""
    from ..findings import canonical_finding

    if any(c in names for c in long_columns if c not in ("study_id", PATIENT_ID)):
        return None
    ids = [c for c in WIDE_ID_COLUMNS if c in names]
    if not ids:
        return None
    for c in names:
        try:
            canonical_finding(c.removeprefix("prob_"))
        except SchemaError:
            continue
        return ids[0]
    return None


def _wide_file(p: Path, long_columns: Sequence[str]) -> str | None:
    """The id column of ``p`` when it is one wide table file (not a folder), else None."""
    if p.is_dir() or not p.is_file():
        return None
    try:
        return wide_id_column(column_names(p), long_columns)
    except HeaderError:
        return None


def _read_wide_label_file(
    p: Path, id_column: str, *, require_patient: bool
) -> tuple[pd.DataFrame, list[str]]:
    """A wide label file (CheXpert's codes: 1 / 0 / -1 / blank) as the long table of source ``p.stem``, and its note;
    the patient from a ``patient_id`` column, else from the study id (``patient123``)."""
    names = column_names(p)
    patient = next((c for c in _PATIENT_COLUMNS if c in names), None)
    if patient is None and require_patient:
        ids = _read_table(p, "read_labels")[id_column].astype(str)
        bad = ids[ids.str.extract(_PATIENT_RE, expand=False).isna()]  # as read_wide_labels finds it
        if len(bad):
            raise SchemaError(
                f"file {str(p)!r} is a wide table (one column per finding) whose study id {bad.iloc[0]!r} "
                f"(column {id_column!r}) names no patient; add a column 'patient_id' (the unit the bootstrap "
                "resamples)."
            )
    res = read_wide_labels(
        p, source=p.stem, id_column=id_column, patient_column=patient, require_patient=require_patient
    )
    note = (
        f"{p.name}: a wide table (one column per finding, study id {id_column!r}) read as source {p.stem!r}, "
        "states 1 / 0 / -1 / blank = positive / negative / uncertain / not mentioned"
    )
    return res.table, [note, *(f"{p.name}: {n}" for n in res.report.notes)]


class _Unusual(Exception):
    """Something the vectorised reader leaves to the pandas readers (which raise the exact error)."""


def _column_names(f: Path) -> list[str]:
    try:
        return column_names(f)
    except HeaderError as exc:
        raise _Unusual(str(exc)) from exc


def _check_headers(p: Path, required: Sequence[str], *, what: str, long_columns: Sequence[str]) -> bool:
    """The header of the table ``p`` (a file, or a folder of parts with the same columns) has ``required``;
    read before any data block. Returns False when ``p`` cannot be read as a table here (the reader then
    raises its own error)."""
    files = table_files(p)
    if not files:
        raise SchemaError(f"{what} folder {str(p)!r} has no '*.csv' or '*.parquet' file.")
    first: list[str] | None = None
    for f in files:
        if not f.is_file():
            return False
        try:
            names = _column_names(f)
        except _Unusual:
            return False
        if not p.is_dir() and wide_id_column(names, long_columns) is not None:
            return False  # a wide file: its reader turns it into the long table
        check_columns(names, required, where=f"file {str(f)!r}")
        if first is not None and set(names) != set(first):
            raise SchemaError(
                f"The parts of folder {str(p)!r} have different columns: {files[0].name} has "
                f"{first}, {f.name} has {names}; the files of one table must have the same columns."
            )
        first = names
    return True


def check_label_headers(paths: Sequence[str | Path], *, require_patient: bool = False) -> None:
    """Before any data is read: every label table has the label columns (``patient_id`` when
    ``require_patient``), and a folder's parts the same columns; a missing column is named as a column."""
    required = [c for c in LABEL_COLUMNS if c != PATIENT_ID or require_patient]
    for p in paths:
        if Path(p).exists():
            _check_headers(Path(p), required, what="Label", long_columns=LABEL_COLUMNS)


def check_prediction_headers(paths: Sequence[str | Path]) -> None:
    """Before any data is read: every long prediction table (a file, or a folder of long parts) has the
    prediction columns; a folder of wide per-model files is left to its reader."""
    for p in paths:
        pp = Path(p)
        if not pp.exists():
            continue
        if pp.is_dir() and table_parts(pp, PREDICTION_COLUMNS) is None:
            continue  # wide per-model files (or parts that are neither: their reader says which)
        _check_headers(pp, PREDICTION_COLUMNS, what="Prediction", long_columns=PREDICTION_COLUMNS)


class ReadTables(NamedTuple):
    """What :func:`read_prediction_tables` and :func:`read_label_tables` return: the inputs as one validated long
    table, and the readers' notes."""

    table: pd.DataFrame
    notes: list[str]


def read_prediction_tables(paths: Sequence[str | Path]) -> ReadTables:
    """Prediction inputs as one validated long DataFrame (the pandas reading; exact errors), and notes.

    Each path is a long table (file, or folder of parts), or a folder of wide ``<model>.csv``/``.parquet``
    files (one model per file; a ``prob_`` prefix on the score columns is recognised).
    """
    check_prediction_headers(paths)
    tables, notes = [], []
    for p in paths:
        t, n = _read_prediction_path(Path(p))
        if t.empty:
            raise SchemaError(f"{p} has no rows.")
        tables.append(t)
        notes += n
    return ReadTables(validate_predictions(pd.concat(tables, ignore_index=True)), notes)


def _read_prediction_path(p: Path) -> tuple[pd.DataFrame, list[str]]:
    from ._long import read_predictions

    if not p.is_dir():
        id_column = _wide_file(p, PREDICTION_COLUMNS)
        if id_column is not None:  # one model's wide file: the model is named after the file
            prefix = "prob_" if any(c.startswith("prob_") for c in column_names(p)) else ""
            res = read_wide_predictions(p, model=p.stem, id_column=id_column, prefix=prefix)
            note = f"{p.name}: a wide table (one score column per finding, study id {id_column!r}) read as model {p.stem!r}"
            return res.table, [note, *(f"{p.name}: {n}" for n in res.report.notes)]
        res = read_predictions(p)
        return res.table, list(res.report.notes)
    parts = table_parts(p, PREDICTION_COLUMNS)
    if parts is not None:
        where = f"folder {str(p)!r}"
        return validate_predictions(
            pd.concat([_read_table(f, "read_predictions") for f in parts], ignore_index=True), where=where
        ), []
    files = table_files(p)
    others = sorted(
        f.name
        for f in p.iterdir()
        if f.is_file() and f.suffix.lower() not in TABLE_SUFFIXES and not f.name.startswith(".")
    )
    if not files:
        raise SchemaError(f"Prediction folder {str(p)!r} has no '*.csv' or '*.parquet' file.")
    stems = [f.stem for f in files]
    dup = sorted({s for s in stems if stems.count(s) > 1})
    if dup:
        raise SchemaError(
            f"Prediction folder {str(p)!r} has more than one file for model(s) {dup} (e.g. "
            "both .csv and .parquet); keep one file per model."
        )
    tables, notes = [], []
    if others:
        notes.append(f"{p.name}: files that are not .csv/.parquet were not read: {others}")
    for f in files:
        try:
            head = column_names(f)
        except HeaderError:
            head = []  # not a table: read_wide_predictions names the file
        prefix = "prob_" if any(str(c).startswith("prob_") for c in head) else ""
        res = read_wide_predictions(f, model=f.stem, prefix=prefix)
        tables.append(res.table)
        notes += [f"{f.name}: {n}" for n in res.report.notes]
    return pd.concat(tables, ignore_index=True), notes


def check_state_options(state_encoding: str | None, blank_state: str | None) -> None:
    """Refuse a ``state_encoding`` or ``blank_state`` that :func:`cxreval.schema.decode_states` does not know,
    before any label file is read."""
    if state_encoding is not None and state_encoding not in STATE_ENCODINGS:
        raise InvalidParameterError(
            f"state_encoding= must be one of {', '.join(STATE_ENCODINGS)}. Got {state_encoding!r}."
        )
    if blank_state is not None and blank_state not in BLANK_STATES:
        raise InvalidParameterError(
            f"blank_state= must be one of {', '.join(BLANK_STATES)}. Got {blank_state!r}."
        )


def read_label_tables(
    paths: Sequence[str | Path],
    *,
    state_encoding: str | None = None,
    require_patient: bool = False,
    blank_state: str | None = None,
) -> ReadTables:
    """Label inputs as one validated long DataFrame (the pandas reading; exact errors), and notes.

    Each path is a long table (file, or folder of parts with the same columns, checked before any data is
    read) with states read under ``state_encoding`` and ``blank_state`` (:func:`decode_states`). A table
    without rows is refused ("FILE has no rows").
    """
    check_state_options(state_encoding, blank_state)
    check_label_headers(paths, require_patient=require_patient)
    tables, notes = [], []
    for p in paths:
        id_column = _wide_file(Path(p), LABEL_COLUMNS)
        if id_column is not None:
            t, n = _read_wide_label_file(Path(p), id_column, require_patient=require_patient)
            tables.append(t)
            notes += n
            continue
        parts = table_parts(p, LABEL_COLUMNS[:1]) if Path(p).is_dir() else None
        if parts is not None:
            where = f"folder {str(p)!r}"
            df = pd.concat([_read_table(f, "read_labels") for f in parts], ignore_index=True)
            if df.empty:
                raise SchemaError(f"{p} has no rows.")
            if "state" in df.columns:
                df = df.assign(
                    state=decode_states(
                        df["state"], encoding=state_encoding, where=where, blank_state=blank_state
                    )
                )
            tables.append(validate_label_table(df, where=where, require_patient=require_patient))
            continue
        res = read_labels(
            p, require_patient=require_patient, state_encoding=state_encoding, blank_state=blank_state
        )
        tables.append(res.table)
        notes += list(res.report.notes)
    if len(tables) == 1:
        return ReadTables(tables[0], notes)
    where = "the label files (labels=) " + ", ".join(str(p) for p in paths)
    return ReadTables(
        validate_label_table(
            pd.concat(tables, ignore_index=True), where=where, require_patient=require_patient
        ),
        notes,
    )
