"""The long label and prediction tables: validation, and reading/writing long CSV/Parquet files.

The label table is long, one row per ``(study_id, finding, source)``
(:data:`LABEL_COLUMNS`); the prediction table one row per ``(study_id, model, finding)``
(:data:`PREDICTION_COLUMNS`). See :mod:`cxreval.labels`.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from ..exceptions import SchemaError
from ..results import ReadReport, ReadResult
from ..schema import FINDING, MODEL, PATIENT_ID, SCORE, SOURCE, STATE, STUDY_ID
from ..schema._columns import check_columns, first_true
from ..schema._states import STATE_NAMES, decode_states, parse_states, state_names
from ._common import _canonical_column, _id_column, _read_table, _where

__all__ = [
    "LABEL_COLUMNS",
    "PREDICTION_COLUMNS",
    "validate_label_table",
    "validate_predictions",
    "validate_model_groups",
    "label_matrix",
    "read_labels",
    "write_labels",
    "read_predictions",
    "write_predictions",
]

LABEL_COLUMNS: tuple[str, ...] = (STUDY_ID, PATIENT_ID, FINDING, SOURCE, STATE)
PREDICTION_COLUMNS: tuple[str, ...] = (STUDY_ID, MODEL, FINDING, SCORE)


def validate_label_table(
    df: pd.DataFrame, *, where: str = "label table", require_patient: bool = True
) -> pd.DataFrame:
    """Check and standardise a long label table; return a new, canonical table.

    Findings are canonicalised, states parsed to ``Int8``, ids cast to text (blank ids are missing).

    Raises
    ------
    SchemaError
        Missing columns; missing study id; unknown finding; state outside the domain; duplicate
        ``(study_id, finding, source)`` rows; a missing ``patient_id`` when ``require_patient``; a study
        with more than one patient id.
    """
    if not isinstance(df, pd.DataFrame):
        raise SchemaError(
            f"{where} must be a pandas DataFrame with columns {list(LABEL_COLUMNS)}. "
            f"Got {type(df).__name__} instead."
        )
    cols = [c for c in LABEL_COLUMNS if c != "patient_id" or require_patient or c in df.columns]
    check_columns(df, cols, where=where)
    n = len(df)
    study = _id_column(df["study_id"])
    if study.isna().any():
        i = int(np.flatnonzero(study.isna().to_numpy())[0])
        raise SchemaError(f"Missing study id in {_where(where, i, 'study_id')}.")
    patient = (
        _id_column(df["patient_id"])
        if "patient_id" in df.columns
        else pd.Series(np.nan, index=range(n), dtype="str")
    )
    out = pd.DataFrame(
        {
            "study_id": study,
            "patient_id": patient,
            "finding": _canonical_column(df["finding"], where=where),
            "source": _id_column(df["source"]),
        }
    )
    if out["source"].isna().any():
        i = int(np.flatnonzero(out["source"].isna().to_numpy())[0])
        raise SchemaError(f"Missing source in {_where(where, i, 'source')}; every label names who gave it.")
    st = df["state"].reset_index(drop=True)
    if str(st.dtype) == "Int8":
        vals = st.to_numpy(dtype=float, na_value=np.nan)
        bad = ~np.isnan(vals) & ~np.isin(vals, (-1.0, 0.0, 1.0, 2.0))
        if (row := first_true(bad)) is not None:
            raise SchemaError(
                f"State {int(vals[row])!r} outside the domain in {_where(where, row, 'state')}; "
                f"expected one of {list(STATE_NAMES)} (or the codes -1, 0, 1, 2)."
            )
        out["state"] = st
    else:
        out["state"] = parse_states(st, where=where)
    miss = out["patient_id"].isna().to_numpy()
    if require_patient and miss.any():
        i = int(np.flatnonzero(miss)[0])
        raise SchemaError(
            f"Missing patient id in {_where(where, i, 'patient_id')} (study "
            f"{out['study_id'].iloc[i]!r}, value {df['patient_id'].iloc[i]!r}); a patient id is "
            f"required for patient-level analysis."
        )
    s_codes, s_uniq = pd.factorize(out["study_id"])
    f_codes, f_uniq = pd.factorize(out["finding"])
    r_codes, r_uniq = pd.factorize(out["source"])
    key = (s_codes.astype(np.int64) * len(f_uniq) + f_codes) * max(len(r_uniq), 1) + r_codes
    dup = pd.Series(key).duplicated(keep=False).to_numpy()
    if dup.any():
        first = int(np.flatnonzero(dup)[0])
        rows = np.flatnonzero(key == key[first])[:4].tolist()
        r = out.iloc[first]
        raise SchemaError(
            f"Duplicate (study_id, finding, source) rows in {where}: rows {rows} repeat "
            f"({r['study_id']!r}, {r['finding']!r}, {r['source']!r})."
        )
    if (~miss).any():
        p_codes, _ = pd.factorize(out["patient_id"])
        pairs = pd.DataFrame({"s": s_codes[~miss], "p": p_codes[~miss]}).drop_duplicates()
        multi = pairs["s"].duplicated(keep=False).to_numpy()
        if multi.any():
            s = s_uniq[int(pairs["s"].to_numpy()[multi][0])]
            raise SchemaError(
                f"Study {s!r} in {where} has more than one patient id "
                f"{sorted(out.loc[out.study_id == s, 'patient_id'].dropna().unique())}."
            )
    return out


def validate_predictions(df: pd.DataFrame, *, where: str = "prediction table") -> pd.DataFrame:
    """Check and standardise a long prediction table (canonical findings, float scores).

    Raises
    ------
    SchemaError
        Missing columns; unknown finding; non-finite score; duplicate ``(study_id, model, finding)`` rows.
    """
    if not isinstance(df, pd.DataFrame):
        raise SchemaError(
            f"{where} must be a pandas DataFrame with columns {list(PREDICTION_COLUMNS)}. "
            f"Got {type(df).__name__} instead."
        )
    check_columns(df, PREDICTION_COLUMNS, where=where)
    ids = {}
    for col in (STUDY_ID, MODEL):
        ids[col] = _id_column(df[col])
        if ids[col].isna().any():
            i = int(np.flatnonzero(ids[col].isna().to_numpy())[0])
            raise SchemaError(
                f"Missing {'study id' if col == STUDY_ID else 'model name'} in {_where(where, i, col)} "
                f"({int(ids[col].isna().sum())} such rows); every prediction names its study and model."
            )
    out = pd.DataFrame(
        {
            "study_id": ids[STUDY_ID].to_numpy(dtype=object),
            "model": ids[MODEL].to_numpy(dtype=object),
            "finding": _canonical_column(df["finding"].reset_index(drop=True), where=where).to_numpy(),
        }
    )
    score = pd.to_numeric(df["score"], errors="coerce").to_numpy(dtype=float)
    bad = ~np.isfinite(score)
    if (row := first_true(bad)) is not None:
        raise SchemaError(
            f"Non-finite or non-numeric score {(v.item() if isinstance(v := df['score'].iloc[row], np.generic) else v)!r} in {_where(where, row, 'score')} "
            f"(study {out['study_id'].iloc[row]!r}, model {out['model'].iloc[row]!r}); scores must be finite."
        )
    out["score"] = score
    dup = out.duplicated(["study_id", "model", "finding"], keep=False)
    if dup.any():
        rows = np.flatnonzero(dup.to_numpy())[:4].tolist()
        r = out.iloc[rows[0]]
        raise SchemaError(
            f"Duplicate (study_id, model, finding) rows in {where}: rows {rows} repeat "
            f"({r['study_id']!r}, {r['model']!r}, {r['finding']!r})."
        )
    return out


def validate_model_groups(df: pd.DataFrame, *, where: str = "model group table") -> pd.DataFrame:
    """Check a ``model, group`` table: both columns present, one group per model."""
    check_columns(df, ("model", "group"), where=where)
    out = pd.DataFrame({"model": df["model"].astype(str), "group": df["group"].astype(str)})
    dup = out.duplicated("model", keep=False)
    if dup.any():
        raise SchemaError(f"Model {out.loc[dup, 'model'].iloc[0]!r} appears more than once in {where}.")
    return out.reset_index(drop=True)


def label_matrix(
    labels: pd.DataFrame,
    *,
    source: str,
    findings: Sequence[str] | None = None,
    study_ids: Sequence[str] | None = None,
) -> pd.DataFrame:
    """One source's states as a study × finding ``Int8`` frame (absent rows are ``<NA>``), with the columns
    ``findings`` and the rows ``study_ids`` in their order when given."""
    sub = labels[labels["source"] == source]
    if sub.empty:
        raise SchemaError(
            f"Source {source!r} is not in the label table; sources present: "
            f"{sorted(labels['source'].unique())}."
        )
    wide = sub.pivot(index="study_id", columns="finding", values="state")
    if findings is not None:
        wide = wide.reindex(columns=list(findings))
    if study_ids is not None:
        wide = wide.reindex(index=list(study_ids))
    return wide.astype("Int8")


def read_labels(
    path: str | Path,
    *,
    require_patient: bool = True,
    state_encoding: str | None = None,
    blank_state: str | None = None,
) -> ReadResult:
    """Read a long label table (CSV or Parquet) and validate it.

    States are names, or numeric codes read under ``state_encoding`` (:func:`decode_states`; CSV text and
    Parquet numbers are read the same way). Without an encoding, numeric codes that can be read two ways
    (cxreval's 1 = uncertain vs CheXpert's 1 = positive) are refused. A blank state is read as a numeric
    encoding says (missing, ``<NA>``; ``not_mentioned`` under ``'chexpert'``), refused without an encoding,
    or a missing label under ``blank_state='missing'``; nothing is dropped. A file without rows is refused.
    Errors name the file, the row and the value.
    """
    df = _read_table(path, "read_labels")
    where = f"file {str(path)!r}"
    check_columns(df, [c for c in LABEL_COLUMNS if c != PATIENT_ID or require_patient], where=where)
    if df.empty:
        raise SchemaError(f"{path} has no rows.")
    df = df.assign(
        state=decode_states(df["state"], encoding=state_encoding, where=where, blank_state=blank_state)
    )
    table = validate_label_table(df, where=where, require_patient=require_patient)
    return ReadResult(table, ReadReport(str(path), len(df), len(table)))


def write_labels(labels: pd.DataFrame, path: str | Path) -> Path:
    """Write a long label table with states as names (CSV or Parquet by suffix)."""
    p = Path(path)
    out = labels.copy()
    out["state"] = state_names(out["state"])
    if p.suffix == ".parquet":
        out.to_parquet(p, index=False)
    else:
        out.to_csv(p, index=False)
    return p


def read_predictions(path: str | Path) -> ReadResult:
    """Read a long prediction table ``study_id, model, finding, score`` (CSV or Parquet)."""
    df = _read_table(path, "read_predictions")
    check_columns(df, PREDICTION_COLUMNS, where=f"file {str(path)!r}")
    if df.empty:
        raise SchemaError(f"{path} has no rows.")
    table = validate_predictions(df, where=f"file {str(path)!r}")
    return ReadResult(table, ReadReport(str(path), len(df), len(table)))


def write_predictions(predictions: pd.DataFrame, path: str | Path) -> Path:
    """Write a long prediction table (CSV or Parquet by suffix)."""
    p = Path(path)
    out = predictions.copy()
    (out.to_parquet if p.suffix == ".parquet" else out.to_csv)(p, index=False)
    return p
