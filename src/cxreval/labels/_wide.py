"""Wide CheXpert-style files (one column per finding) to and from the long label and prediction tables."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..exceptions import InvalidParameterError, SchemaError
from ..findings import canonical_finding
from ..results import ReadReport, ReadResult
from ..schema._columns import check_columns
from ..schema._states import NUMERIC_CODES
from ._common import _WIDE_OF, _read_table, _where
from ._long import validate_label_table, validate_predictions

__all__ = ["WideLayout", "read_wide_labels", "to_wide", "write_wide_labels", "read_wide_predictions"]


_PATIENT_RE = re.compile(r"(patient\d+)")


@dataclass(frozen=True)
class WideLayout:
    """How a wide CheXpert-style file was laid out, so that :func:`to_wide` can write it back unchanged.

    Attributes
    ----------
    id_column : str
        The study id column (``Study`` or ``Path``).
    finding_columns : dict
        ``{canonical finding: column name as spelt in the file}``, in file order.
    extra : pandas.DataFrame
        The non-finding columns (including the id column), in file order.
    """

    id_column: str
    finding_columns: dict[str, str]
    extra: pd.DataFrame = field(repr=False)


def read_wide_labels(
    path: str | Path,
    *,
    source: str,
    id_column: str | None = None,
    patient_column: str | None = None,
    patient_pattern: str | None = r"(patient\d+)",
    findings: Sequence[str] | None = None,
    require_patient: bool = True,
) -> ReadResult:
    """Read a wide CheXpert-style CSV (one column per finding, ``1 / 0 / -1 / blank``) into the long table.

    Parameters
    ----------
    path : path to the CSV
    source : str
        The ``source`` written on every label.
    id_column : str, optional
        The study id column; default ``Study`` if present, else ``Path``.
    patient_column : str, optional
        A column holding the patient id. If absent, ``patient_pattern`` is searched in the study id.
    findings : sequence of str, optional
        Finding columns to read; default every column whose name is a known finding or alias. Other
        columns are returned in ``ReadResult.layout.extra`` so that :func:`to_wide` can restore them.

    Returns
    -------
    res : ReadResult
        ``res.table`` is the long label table (blank cells are ``not_mentioned``);
        ``res.layout`` is a :class:`WideLayout` (id column, original finding spellings in file order and the
        non-finding columns) that :func:`to_wide` uses to write the file back unchanged.
    """
    if not isinstance(source, str):
        raise InvalidParameterError(
            f"The 'source' parameter of read_wide_labels must be a str. Got {source!r} instead."
        )
    df = _read_table(path, "read_wide_labels")
    p = Path(path)
    where = f"file {str(p)!r}"
    if id_column is None:
        id_column = "Study" if "Study" in df.columns else "Path"
    check_columns(df, [id_column], where=where)
    if findings is None:
        fcols = []
        for c in df.columns:
            if c in (id_column, patient_column):
                continue
            try:
                canonical_finding(c)
            except SchemaError:
                continue
            fcols.append(c)
    else:
        fcols = list(findings)
        check_columns(df, fcols, where=where)
    if not fcols:
        raise SchemaError(f"{where} has no finding columns; columns are {list(df.columns)}.")
    canon = [canonical_finding(c, where=f"{where}, column {c!r}") for c in fcols]
    ids = df[id_column]
    if ids.isna().any():
        raise SchemaError(
            f"Missing study id in {_where(where, int(np.flatnonzero(ids.isna())[0]), id_column)}."
        )
    if ids.duplicated().any():
        raise SchemaError(
            f"Duplicate study id {ids[ids.duplicated()].iloc[0]!r} in {where}, column {id_column!r}."
        )
    if patient_column is not None:
        check_columns(df, [patient_column], where=where)
        patients = df[patient_column]
    elif patient_pattern is not None:
        patients = ids.str.extract(re.compile(patient_pattern), expand=False)
    else:
        patients = pd.Series([pd.NA] * len(df))
    if require_patient and patients.isna().any():
        i = int(np.flatnonzero(patients.isna().to_numpy())[0])
        raise SchemaError(
            f"Missing patient id in {_where(where, i, patient_column or id_column)}: "
            f"{ids.iloc[i]!r} has no patient id (pattern {patient_pattern!r}); pass patient_column."
        )
    n = len(df)
    states = np.empty((n, len(fcols)), dtype=np.int8)
    for j, c in enumerate(fcols):
        col = df[c]
        num = pd.to_numeric(col, errors="coerce")
        blank = col.isna().to_numpy()
        bad = (~blank) & ~num.isin(list(NUMERIC_CODES["chexpert"])).to_numpy()
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise SchemaError(
                f"State {col.iloc[i]!r} outside the domain in {_where(where, i, c)}; "
                f"expected 1, 0, -1 or blank."
            )
        codes = np.array(
            num.map(NUMERIC_CODES["chexpert"]).to_numpy(dtype=float, na_value=np.nan), dtype=float
        )
        codes[blank] = -1
        states[:, j] = codes.astype(np.int8)
    long = pd.DataFrame(
        {
            "study_id": np.repeat(ids.astype(str).to_numpy(), len(fcols)),
            "patient_id": np.repeat(patients.astype(object).to_numpy(), len(fcols)),
            "finding": np.tile(np.asarray(canon, dtype=object), n),
            "source": source,
            "state": pd.array(states.ravel(), dtype="Int8"),
        }
    )
    long = validate_label_table(long, where=where, require_patient=require_patient)
    extra_cols = [c for c in df.columns if c not in fcols]
    layout = WideLayout(id_column, dict(zip(canon, fcols)), df[extra_cols].copy())
    renamed = [f"{a} -> {b}" for a, b in zip(fcols, canon) if a != b]
    notes: tuple[str, ...] = (f"renamed findings: {', '.join(renamed)}",) if renamed else ()
    other = [c for c in extra_cols if c != id_column]
    if other:
        notes += (f"non-finding columns kept in the result's layout.extra: {other}",)
    return ReadResult(long, ReadReport(str(p), n, n, notes=notes), layout)


def to_wide(
    labels: pd.DataFrame,
    *,
    layout: WideLayout | None = None,
    source: str | None = None,
    findings: Sequence[str] | None = None,
    finding_columns: dict[str, str] | None = None,
    id_column: str = "Study",
    extra: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """Long label table → wide CheXpert-style frame (``1.0 / 0.0 / -1.0 / NaN``).

    ``not_mentioned`` and missing become blank. ``finding_columns`` maps canonical names back to the
    original column spellings and ``extra`` restores non-finding columns (both as recorded by
    :func:`read_wide_labels` in ``ReadResult.layout``; pass ``layout=`` to use all three), so a wide file
    round-trips unchanged.
    """
    if layout is not None:
        finding_columns = finding_columns if finding_columns is not None else layout.finding_columns
        extra = extra if extra is not None else layout.extra
        id_column = layout.id_column
    sub = labels if source is None else labels[labels["source"] == source]
    if sub["source"].nunique() > 1:
        raise SchemaError(
            f"to_wide needs one source; the table has {sorted(sub['source'].unique())}. Pass source=."
        )
    order = list(findings or (finding_columns.keys() if finding_columns else pd.unique(sub["finding"])))
    studies = pd.unique(sub["study_id"])
    wide = sub.pivot(index="study_id", columns="finding", values="state").reindex(
        index=studies, columns=order
    )
    vals = wide.to_numpy(dtype=float, na_value=np.nan)
    out = np.full(vals.shape, np.nan)
    for code, v in _WIDE_OF.items():
        out[vals == code] = v
    res = pd.DataFrame(out, columns=[(finding_columns or {}).get(f, f) for f in order])
    if extra is not None and len(extra) == len(res):
        res = pd.concat([extra.reset_index(drop=True), res], axis=1)
        if id_column not in extra.columns:
            res.insert(0, id_column, studies)
    else:
        res.insert(0, id_column, studies)
    return res


def write_wide_labels(labels: pd.DataFrame, path: str | Path, **kwargs: Any) -> Path:
    """Write :func:`to_wide` of ``labels`` as CSV."""
    p = Path(path)
    to_wide(labels, **kwargs).to_csv(p, index=False)
    return p


def read_wide_predictions(
    path: str | Path,
    *,
    model: str,
    id_column: str | None = None,
    prefix: str = "",
    findings: Sequence[str] | None = None,
) -> ReadResult:
    """Read wide predictions (an id column plus one score column per finding) into the long table.

    Column names may carry a ``prefix`` (``prob_Atelectasis``); columns that are not findings after the
    prefix is removed are reported in the notes, never silently mixed in.
    """
    df = _read_table(path, "read_wide_predictions")
    p = Path(path)
    where = f"file {str(p)!r}"
    if id_column is None:
        id_column = next(
            (c for c in ("Study", "Image Index", "Path", "study_id") if c in df.columns), df.columns[0]
        )
    check_columns(df, [id_column], where=where)
    cols, canon, ignored = [], [], []
    for c in df.columns:
        if c == id_column:
            continue
        name = c[len(prefix) :] if prefix and c.startswith(prefix) else c
        if findings is not None and name not in findings:
            ignored.append(c)
            continue
        try:
            canon.append(canonical_finding(name, where=f"{where}, column {c!r}"))
        except SchemaError:
            if findings is not None:
                raise
            ignored.append(c)
            continue
        cols.append(c)
    if not cols:
        raise SchemaError(
            f"{where} has no score columns named after findings (prefix {prefix!r}); "
            f"columns are {list(df.columns)}."
        )
    n = len(df)
    long = pd.DataFrame(
        {
            "study_id": np.repeat(df[id_column].astype(str).to_numpy(), len(cols)),
            "model": model,
            "finding": np.tile(np.asarray(canon, dtype=object), n),
            "score": df[cols].to_numpy(dtype=object).ravel(),
        }
    )
    table = validate_predictions(long, where=where)
    notes = (f"ignored non-finding columns: {ignored}",) if ignored else ()
    return ReadResult(table, ReadReport(str(p), n, n, notes=notes))
