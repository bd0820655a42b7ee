"""The label data model: label states, the long label and prediction tables, binarisation policies,
and readers/writers for long CSV/Parquet and wide CheXpert-style CSV.

Label states are ordinal, ``NEG = 0 < UNC = 1 < POS = 2``; report-derived sources add
``NOT_MENTIONED = -1`` (the finding is not mentioned in the report), and a missing label is ``<NA>``.
In files a state is written ``negative``, ``uncertain``, ``positive`` or ``not_mentioned``; in wide
CheXpert-style CSVs it is ``1`` / ``0`` / ``-1`` / blank (positive / negative / uncertain / not mentioned).

The **label table** is long, one row per ``(study_id, finding, source)``:

=============  ==========================================================
study_id       str, the unit a label belongs to (an image or a study)
patient_id     str, the unit the bootstrap resamples (required unless stated)
finding        str, a canonical name from :mod:`cxreval.findings`
source         str, the reference (``nih_textmined``, ``google_expert``, ``CR``, ``Rep1`` ...)
state          Int8, one of :class:`LabelState` (or <NA> for missing)
=============  ==========================================================

The **prediction table** is long, ``study_id, model, finding, score``, one row per
``(study_id, model, finding)``; a model → group table (``model, group``) is optional.

Examples
--------
>>> import pandas as pd
>>> t = pd.DataFrame({"study_id": ["s1", "s2", "s3"], "patient_id": ["p1", "p1", "p2"],
...                   "finding": ["Pleural Effusion"] * 3, "source": ["CR"] * 3,
...                   "state": ["positive", "uncertain", "negative"]})
>>> t = validate_label_table(t)
>>> t["finding"].iloc[0]
'Effusion'
>>> binarize(t["state"], policy="exclude").tolist()
[1.0, nan, 0.0]
>>> binarize(t["state"], policy="ones").tolist()
[1.0, 1.0, 0.0]
"""

from __future__ import annotations

import enum
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from ._validation import check_choice, check_columns, check_path
from .exceptions import InvalidParameterError, SchemaError
from .findings import canonical_finding
from .results import ReadReport, ReadResult

__all__ = [
    "LabelState",
    "STATE_NAMES",
    "LABEL_COLUMNS",
    "PREDICTION_COLUMNS",
    "POLICIES",
    "STATE_ENCODINGS",
    "parse_states",
    "decode_states",
    "state_names",
    "validate_label_table",
    "validate_predictions",
    "validate_model_groups",
    "binarize",
    "label_matrix",
    "read_labels",
    "write_labels",
    "WideLayout",
    "read_wide_labels",
    "to_wide",
    "write_wide_labels",
    "read_predictions",
    "read_wide_predictions",
    "write_predictions",
]


class LabelState(enum.IntEnum):
    """Ordinal label states; ``NOT_MENTIONED`` is only produced by report-derived sources."""

    NOT_MENTIONED = -1
    NEG = 0
    UNC = 1
    POS = 2


STATE_NAMES: dict[str, int] = {"negative": 0, "uncertain": 1, "positive": 2, "not_mentioned": -1}
_NAME_OF = {v: k for k, v in STATE_NAMES.items()}
LABEL_COLUMNS: tuple[str, ...] = ("study_id", "patient_id", "finding", "source", "state")
PREDICTION_COLUMNS: tuple[str, ...] = ("study_id", "model", "finding", "score")
POLICIES: tuple[str, ...] = ("exclude", "zeros", "ones")
_WIDE_CODES = {1.0: 2, 0.0: 0, -1.0: 1}
_WIDE_OF = {2: 1.0, 0: 0.0, 1: -1.0}
STATE_ENCODINGS: tuple[str, ...] = ("cxreval", "chexpert", "binary")
"""How numeric states in a file are read (:func:`decode_states`); state names read the same under all three."""
_NUMERIC_READING: dict[str, dict[float, int]] = {
    "cxreval": {-1.0: -1, 0.0: 0, 1.0: 1, 2.0: 2},
    "chexpert": _WIDE_CODES,
    "binary": {1.0: 2, 0.0: 0},
}
_READING_TEXT = {
    "cxreval": "-1 = not_mentioned, 0 = negative, 1 = uncertain, 2 = positive, blank = missing",
    "chexpert": "1 = positive, 0 = negative, -1 = uncertain, blank = not_mentioned",
    "binary": "1 = positive, 0 = negative, blank = missing",
}


def _where(where: str, row: int | None = None, column: str | None = None) -> str:
    parts = [where]
    if row is not None:
        parts.append(f"row {row}")
    if column is not None:
        parts.append(f"column {column!r}")
    return ", ".join(parts)


def parse_states(values: Iterable[object], *, where: str = "label table", column: str = "state") -> pd.Series:
    """Parse state names (or their integer codes) into an ``Int8`` series; blank/NaN become ``<NA>``.

    Parsing is vectorised over the distinct values, so a table of millions of rows is fast.

    Raises
    ------
    SchemaError
        Naming the row and value of the first state outside the domain.
    """
    if isinstance(values, pd.Series):
        s = values.reset_index(drop=True)
    else:
        try:
            s = pd.Series(list(values), dtype=object)  # type: ignore[call-overload]
        except TypeError:
            raise InvalidParameterError(f"The 'values' parameter of parse_states must be an iterable of label states. "
                                        f"Got {values!r} instead.") from None
    codes, uniq = pd.factorize(s.astype(object), use_na_sentinel=True)
    lut = np.full(len(uniq) + 1, -99, dtype=np.int16)  # last slot: missing
    bad: list[int] = []
    for k, v in enumerate(uniq):
        if isinstance(v, str):
            key = v.strip().lower()
            code = -99 if key == "" else STATE_NAMES.get(key)
        elif isinstance(v, (int, np.integer, float, np.floating)) and not isinstance(v, bool) \
                and float(v) in (-1.0, 0.0, 1.0, 2.0):
            code = int(v)
        else:
            code = None
        if code is None:
            bad.append(k)
        else:
            lut[k] = code
    if bad:
        i = int(np.flatnonzero(np.isin(codes, bad))[0])
        raise SchemaError(f"State {s.iloc[i]!r} outside the domain in {_where(where, i, column)}; expected one of "
                          f"{list(STATE_NAMES)} (or the codes -1, 0, 1, 2).")
    out = lut[codes]  # codes == -1 (NaN) picks the last slot
    missing = out == -99
    res = pd.array(np.where(missing, 0, out).astype(np.int8), dtype="Int8")
    res[missing] = pd.NA
    index = values.index if isinstance(values, pd.Series) else None
    return pd.Series(res, index=index, name=column)


def _as_number(v: object) -> float | None:
    if isinstance(v, bool):
        return None
    if isinstance(v, (int, np.integer, float, np.floating)):
        return float(v)
    try:
        return float(str(v).strip())
    except ValueError:
        return None


def decode_states(values: pd.Series, *, encoding: str | None = None, where: str = "label table",
                  column: str = "state") -> pd.Series:
    """Read a file's state column (names or numeric codes) into ``Int8`` states under an explicit encoding.

    State names (``positive``, ``uncertain``, ``negative``, ``not_mentioned``) mean the same under every
    encoding. Numeric codes (numbers, or numeric text as in a CSV) are read by ``encoding``:

    * ``'cxreval'``: -1 = not_mentioned, 0 = negative, 1 = uncertain, 2 = positive, blank = missing;
    * ``'chexpert'``: 1 = positive, 0 = negative, -1 = uncertain, blank = not_mentioned (as the wide
      CheXpert reader :func:`read_wide_labels` reads a cell);
    * ``'binary'``: 1 = positive, 0 = negative, blank = missing;
    * ``None`` (default): numeric codes are refused when they can be read two ways (1 or -1 present),
      with a message naming both readings; codes 0 and 2 alone can only be cxreval codes and are accepted.

    Parameters
    ----------
    values : pandas.Series
        The state column as read (object, string, integer, float or ``Int8``).
    encoding : {'cxreval', 'chexpert', 'binary'} or None, default=None
    where, column : str
        Named in error messages.

    Returns
    -------
    states : pandas.Series of Int8

    Raises
    ------
    SchemaError
        An ambiguous numeric column without ``encoding``, or a value outside the encoding's domain (naming
        the row and value).

    Examples
    --------
    >>> import pandas as pd
    >>> decode_states(pd.Series(["1", "0", "-1", ""]), encoding="chexpert").tolist()
    [2, 0, 1, -1]
    >>> decode_states(pd.Series([1, 0, -1]), encoding="cxreval").tolist()
    [1, 0, -1]
    """
    if encoding is not None:
        check_choice(encoding, STATE_ENCODINGS, name="state_encoding", func="decode_states")
    s = pd.Series(values).reset_index(drop=True)
    codes, uniq = pd.factorize(s.astype(object), use_na_sentinel=True)
    kinds: list[tuple[str, object]] = []  # ("name", code) | ("num", float) | ("blank", None) | ("bad", None)
    for v in uniq:
        if isinstance(v, str) and v.strip() == "":
            kinds.append(("blank", None))
        elif isinstance(v, str) and v.strip().lower() in STATE_NAMES:
            kinds.append(("name", STATE_NAMES[v.strip().lower()]))
        else:
            x = _as_number(v)
            kinds.append(("bad", None) if x is None or not np.isfinite(x) else ("num", x))

    def first_row(ks: list[int]) -> int:
        return int(np.flatnonzero(np.isin(codes, ks))[0])

    bad = [k for k, (kind, _) in enumerate(kinds) if kind == "bad"]
    if bad:
        i = first_row(bad)
        raise SchemaError(f"State {s.iloc[i]!r} outside the domain in {_where(where, i, column)}; expected one of "
                          f"{list(STATE_NAMES)}, or numeric codes read by an explicit --state-encoding "
                          f"(state_encoding=) {list(STATE_ENCODINGS)}.")
    nums = sorted({float(x) for kind, x in kinds if kind == "num"})  # type: ignore[arg-type]
    enc = encoding
    if enc is None and nums:
        if set(nums) <= {0.0, 2.0}:
            enc = "cxreval"
        else:
            shown = ", ".join(f"{x:g}" for x in nums)
            raise SchemaError(
                f"The states in {_where(where, None, column)} are numeric codes ({shown}) that can be read two ways: "
                f"as cxreval codes ({_READING_TEXT['cxreval']}) or as CheXpert codes ({_READING_TEXT['chexpert']}). "
                f"Pass --state-encoding cxreval, chexpert or binary (state_encoding=), or write state names.")
    reading = _NUMERIC_READING.get(enc or "cxreval", {})
    outside = [k for k, (kind, x) in enumerate(kinds) if kind == "num" and x not in reading]
    if outside:
        i = first_row(outside)
        v = s.iloc[i]
        raise SchemaError(f"State {(v.item() if isinstance(v, np.generic) else v)!r} outside the domain in "
                          f"{_where(where, i, column)} under --state-encoding {enc} ({_READING_TEXT[enc or 'cxreval']}).")
    blank_code = -1 if enc == "chexpert" else -99
    lut = np.full(len(uniq) + 1, blank_code, dtype=np.int16)  # last slot: NaN / None
    for k, (kind, x) in enumerate(kinds):
        if kind == "name":
            lut[k] = int(x)  # type: ignore[call-overload]
        elif kind == "num":
            lut[k] = reading[float(x)]  # type: ignore[arg-type]
    out = lut[codes]
    missing = out == -99
    res = pd.array(np.where(missing, 0, out).astype(np.int8), dtype="Int8")
    res[missing] = pd.NA
    return pd.Series(res, index=values.index if isinstance(values, pd.Series) else None, name=column)


def state_names(states: pd.Series) -> pd.Series:
    """The file spelling of each state (a missing state becomes ``None``)."""
    s = states if isinstance(states, pd.Series) and str(states.dtype) == "Int8" else parse_states(states)
    codes = s.to_numpy(dtype=float, na_value=np.nan)
    out = np.full(len(codes), None, dtype=object)
    for code, name in _NAME_OF.items():
        out[codes == code] = name
    return pd.Series(out, index=s.index, name=s.name, dtype=object)


def _canonical_column(values: pd.Series, *, where: str) -> pd.Series:
    codes, uniq = pd.factorize(values.reset_index(drop=True), use_na_sentinel=True)
    if (codes < 0).any():
        i = int(np.flatnonzero(codes < 0)[0])
        raise SchemaError(f"Missing finding name in {_where(where, i, 'finding')}.")
    first = np.unique(codes, return_index=True)[1]  # first row of each distinct name
    canon = [canonical_finding(u, where=_where(where, int(first[k]), "finding")) for k, u in enumerate(uniq)]
    return pd.Series(np.asarray(canon, dtype=object)[codes] if len(canon) else np.array([], dtype=object),
                     dtype="str")


def _id_column(values: pd.Series | np.ndarray) -> pd.Series:
    """Ids as text; blank and NaN become missing. Float columns of whole numbers (an int column with NaN)
    are written without ``.0``."""
    s = pd.Series(values).reset_index(drop=True)
    if s.dtype.kind == "f":
        whole = s.dropna()
        if (whole == np.floor(whole)).all():
            s = s.astype("Int64")
    s = s.astype("str")
    return s.where(s.str.strip() != "", np.nan)


def validate_label_table(df: pd.DataFrame, *, where: str = "label table", require_patient: bool = True
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
        raise SchemaError(f"{where} must be a pandas DataFrame with columns {list(LABEL_COLUMNS)}. "
                          f"Got {type(df).__name__} instead.")
    cols = [c for c in LABEL_COLUMNS if c != "patient_id" or require_patient or c in df.columns]
    check_columns(df, cols, where=where)
    n = len(df)
    study = _id_column(df["study_id"])
    if study.isna().any():
        i = int(np.flatnonzero(study.isna().to_numpy())[0])
        raise SchemaError(f"Missing study id in {_where(where, i, 'study_id')}.")
    patient = _id_column(df["patient_id"]) if "patient_id" in df.columns else pd.Series(np.nan, index=range(n),
                                                                                      dtype="str")
    out = pd.DataFrame({
        "study_id": study,
        "patient_id": patient,
        "finding": _canonical_column(df["finding"], where=where),
        "source": df["source"].reset_index(drop=True).astype("str"),
    })
    st = df["state"].reset_index(drop=True)
    if str(st.dtype) == "Int8":
        vals = st.to_numpy(dtype=float, na_value=np.nan)
        bad = ~np.isnan(vals) & ~np.isin(vals, (-1.0, 0.0, 1.0, 2.0))
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise SchemaError(f"State {int(vals[i])!r} outside the domain in {_where(where, i, 'state')}; "
                              f"expected one of {list(STATE_NAMES)} (or the codes -1, 0, 1, 2).")
        out["state"] = st
    else:
        out["state"] = parse_states(st, where=where)
    miss = out["patient_id"].isna().to_numpy()
    if require_patient and miss.any():
        i = int(np.flatnonzero(miss)[0])
        raise SchemaError(f"Missing patient id in {_where(where, i, 'patient_id')} (study "
                          f"{out['study_id'].iloc[i]!r}, value {df['patient_id'].iloc[i]!r}); a patient id is "
                          f"required for patient-level analysis.")
    s_codes, s_uniq = pd.factorize(out["study_id"])
    f_codes, f_uniq = pd.factorize(out["finding"])
    r_codes, r_uniq = pd.factorize(out["source"])
    key = (s_codes.astype(np.int64) * len(f_uniq) + f_codes) * max(len(r_uniq), 1) + r_codes
    dup = pd.Series(key).duplicated(keep=False).to_numpy()
    if dup.any():
        first = int(np.flatnonzero(dup)[0])
        rows = np.flatnonzero(key == key[first])[:4].tolist()
        r = out.iloc[first]
        raise SchemaError(f"Duplicate (study_id, finding, source) rows in {where}: rows {rows} repeat "
                          f"({r['study_id']!r}, {r['finding']!r}, {r['source']!r}).")
    if (~miss).any():
        p_codes, _ = pd.factorize(out["patient_id"])
        pairs = pd.DataFrame({"s": s_codes[~miss], "p": p_codes[~miss]}).drop_duplicates()
        multi = pairs["s"].duplicated(keep=False).to_numpy()
        if multi.any():
            s = s_uniq[int(pairs["s"].to_numpy()[multi][0])]
            raise SchemaError(f"Study {s!r} in {where} has more than one patient id "
                              f"{sorted(out.loc[out.study_id == s, 'patient_id'].dropna().unique())}.")
    return out


def validate_predictions(df: pd.DataFrame, *, where: str = "prediction table") -> pd.DataFrame:
    """Check and standardise a long prediction table (canonical findings, float scores).

    Raises
    ------
    SchemaError
        Missing columns; unknown finding; non-finite score; duplicate ``(study_id, model, finding)`` rows.
    """
    if not isinstance(df, pd.DataFrame):
        raise SchemaError(f"{where} must be a pandas DataFrame with columns {list(PREDICTION_COLUMNS)}. "
                          f"Got {type(df).__name__} instead.")
    check_columns(df, PREDICTION_COLUMNS, where=where)
    out = pd.DataFrame({
        "study_id": df["study_id"].astype(str).to_numpy(),
        "model": df["model"].astype(str).to_numpy(),
        "finding": _canonical_column(df["finding"].reset_index(drop=True), where=where).to_numpy(),
    })
    score = pd.to_numeric(df["score"], errors="coerce").to_numpy(dtype=float)
    bad = ~np.isfinite(score)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise SchemaError(f"Non-finite or non-numeric score {(v.item() if isinstance(v := df['score'].iloc[i], np.generic) else v)!r} in {_where(where, i, 'score')} "
                          f"(study {out['study_id'].iloc[i]!r}, model {out['model'].iloc[i]!r}); scores must be finite.")
    out["score"] = score
    dup = out.duplicated(["study_id", "model", "finding"], keep=False)
    if dup.any():
        rows = np.flatnonzero(dup.to_numpy())[:4].tolist()
        r = out.iloc[rows[0]]
        raise SchemaError(f"Duplicate (study_id, model, finding) rows in {where}: rows {rows} repeat "
                          f"({r['study_id']!r}, {r['model']!r}, {r['finding']!r}).")
    return out


def validate_model_groups(df: pd.DataFrame, *, where: str = "model group table") -> pd.DataFrame:
    """Check a ``model, group`` table: both columns present, one group per model."""
    check_columns(df, ("model", "group"), where=where)
    out = pd.DataFrame({"model": df["model"].astype(str), "group": df["group"].astype(str)})
    dup = out.duplicated("model", keep=False)
    if dup.any():
        raise SchemaError(f"Model {out.loc[dup, 'model'].iloc[0]!r} appears more than once in {where}.")
    return out.reset_index(drop=True)


def binarize(states: Sequence[object] | pd.Series, *, policy: str = "exclude",
             not_mentioned: str = "negative") -> np.ndarray:
    """Turn label states into 0/1 floats for a metric; excluded labels become NaN.

    Parameters
    ----------
    states : array-like of label states (``Int8`` codes or state names)
    policy : {'exclude', 'zeros', 'ones'}, default='exclude'
        What an uncertain label becomes: dropped (NaN), 0 or 1. Missing labels are always NaN.
    not_mentioned : {'negative', 'exclude'}, default='negative'
        What ``NOT_MENTIONED`` becomes: 0 (CheXpert practice for report labelers) or NaN.

    Returns
    -------
    y : ndarray of float, shape (n,)
        1.0, 0.0 or NaN.
    """
    check_choice(policy, POLICIES, name="policy", func="binarize")
    check_choice(not_mentioned, ("negative", "exclude"), name="not_mentioned", func="binarize")
    s = states if isinstance(states, pd.Series) and str(states.dtype) == "Int8" else parse_states(states)
    codes = s.to_numpy(dtype=float, na_value=np.nan)
    y = np.full(codes.shape, np.nan)
    y[codes == 2] = 1.0
    y[codes == 0] = 0.0
    if policy != "exclude":
        y[codes == 1] = 0.0 if policy == "zeros" else 1.0
    if not_mentioned == "negative":
        y[codes == -1] = 0.0
    return y


def label_matrix(labels: pd.DataFrame, *, source: str, findings: Sequence[str] | None = None,
                 studies: Sequence[str] | None = None) -> pd.DataFrame:
    """One source's states as a study × finding ``Int8`` frame (absent rows are ``<NA>``)."""
    sub = labels[labels["source"] == source]
    if sub.empty:
        raise SchemaError(f"Source {source!r} is not in the label table; sources present: "
                          f"{sorted(labels['source'].unique())}.")
    wide = sub.pivot(index="study_id", columns="finding", values="state")
    if findings is not None:
        wide = wide.reindex(columns=list(findings))
    if studies is not None:
        wide = wide.reindex(index=list(studies))
    return wide.astype("Int8")


def _read_table(path: str | Path, func: str = "read_labels") -> pd.DataFrame:
    check_path(path, name="path", func=func, allow_none=False)
    p = Path(path)
    if not p.exists():
        raise SchemaError(f"File {str(p)!r} does not exist.")
    try:
        if p.suffix.lower() == ".parquet":
            return pd.read_parquet(p)
        return pd.read_csv(p, dtype=str, keep_default_na=False, na_values=[""])
    except (ValueError, OSError) as exc:
        raise SchemaError(f"Could not read {str(p)!r} as {'Parquet' if p.suffix == '.parquet' else 'CSV'}: {exc}") from exc


def read_labels(path: str | Path, *, require_patient: bool = True, state_encoding: str | None = None) -> ReadResult:
    """Read a long label table (CSV or Parquet) and validate it.

    States are names, or numeric codes read under ``state_encoding`` (:func:`decode_states`; CSV text and
    Parquet numbers are read the same way). Without an encoding, numeric codes that can be read two ways
    (cxreval's 1 = uncertain vs CheXpert's 1 = positive) are refused. Rows whose state is blank are kept as
    missing labels (``<NA>``; ``not_mentioned`` under ``'chexpert'``); nothing is dropped. Errors name the
    file, the row and the value.
    """
    df = _read_table(path, "read_labels")
    where = f"file {str(path)!r}"
    if "state" in df.columns:
        df = df.assign(state=decode_states(df["state"], encoding=state_encoding, where=where))
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


def read_wide_labels(path: str | Path, *, source: str, id_column: str | None = None,
                     patient_column: str | None = None, patient_pattern: str | None = r"(patient\d+)",
                     findings: Sequence[str] | None = None, require_patient: bool = True) -> ReadResult:
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
        raise InvalidParameterError(f"The 'source' parameter of read_wide_labels must be a str. Got {source!r} instead.")
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
        raise SchemaError(f"Missing study id in {_where(where, int(np.flatnonzero(ids.isna())[0]), id_column)}.")
    if ids.duplicated().any():
        raise SchemaError(f"Duplicate study id {ids[ids.duplicated()].iloc[0]!r} in {where}, column {id_column!r}.")
    if patient_column is not None:
        check_columns(df, [patient_column], where=where)
        patients = df[patient_column]
    elif patient_pattern is not None:
        patients = ids.str.extract(re.compile(patient_pattern), expand=False)
    else:
        patients = pd.Series([pd.NA] * len(df))
    if require_patient and patients.isna().any():
        i = int(np.flatnonzero(patients.isna().to_numpy())[0])
        raise SchemaError(f"Missing patient id in {_where(where, i, patient_column or id_column)}: "
                          f"{ids.iloc[i]!r} has no patient id (pattern {patient_pattern!r}); pass patient_column.")
    n = len(df)
    states = np.empty((n, len(fcols)), dtype=np.int8)
    for j, c in enumerate(fcols):
        col = df[c]
        num = pd.to_numeric(col, errors="coerce")
        blank = col.isna().to_numpy()
        bad = (~blank) & ~num.isin(list(_WIDE_CODES)).to_numpy()
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise SchemaError(f"State {col.iloc[i]!r} outside the domain in {_where(where, i, c)}; "
                              f"expected 1, 0, -1 or blank.")
        codes = np.array(num.map(_WIDE_CODES).to_numpy(dtype=float, na_value=np.nan), dtype=float)
        codes[blank] = -1
        states[:, j] = codes.astype(np.int8)
    long = pd.DataFrame({
        "study_id": np.repeat(ids.astype(str).to_numpy(), len(fcols)),
        "patient_id": np.repeat(patients.astype(object).to_numpy(), len(fcols)),
        "finding": np.tile(np.asarray(canon, dtype=object), n),
        "source": source,
        "state": pd.array(states.ravel(), dtype="Int8"),
    })
    long = validate_label_table(long, where=where, require_patient=require_patient)
    extra_cols = [c for c in df.columns if c not in fcols]
    layout = WideLayout(id_column, dict(zip(canon, fcols)), df[extra_cols].copy())
    renamed = [f"{a} -> {b}" for a, b in zip(fcols, canon) if a != b]
    notes: tuple[str, ...] = (f"renamed findings: {', '.join(renamed)}",) if renamed else ()
    other = [c for c in extra_cols if c != id_column]
    if other:
        notes += (f"non-finding columns kept in the result's layout.extra: {other}",)
    return ReadResult(long, ReadReport(str(p), n, n, notes=notes), layout)


def to_wide(labels: pd.DataFrame, *, layout: WideLayout | None = None, source: str | None = None,
            findings: Sequence[str] | None = None, finding_columns: dict[str, str] | None = None,
            id_column: str = "Study", extra: pd.DataFrame | None = None) -> pd.DataFrame:
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
        raise SchemaError(f"to_wide needs one source; the table has {sorted(sub['source'].unique())}. Pass source=.")
    order = list(findings or (finding_columns.keys() if finding_columns else pd.unique(sub["finding"])))
    studies = pd.unique(sub["study_id"])
    wide = sub.pivot(index="study_id", columns="finding", values="state").reindex(index=studies, columns=order)
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


def write_wide_labels(labels: pd.DataFrame, path: str | Path, **kwargs: object) -> Path:
    """Write :func:`to_wide` of ``labels`` as CSV."""
    p = Path(path)
    to_wide(labels, **kwargs).to_csv(p, index=False)  # type: ignore[arg-type]
    return p


def read_predictions(path: str | Path) -> ReadResult:
    """Read a long prediction table ``study_id, model, finding, score`` (CSV or Parquet)."""
    df = _read_table(path, "read_predictions")
    table = validate_predictions(df, where=f"file {str(path)!r}")
    return ReadResult(table, ReadReport(str(path), len(df), len(table)))


def read_wide_predictions(path: str | Path, *, model: str, id_column: str | None = None, prefix: str = "",
                          findings: Sequence[str] | None = None) -> ReadResult:
    """Read wide predictions (an id column plus one score column per finding) into the long table.

    Column names may carry a ``prefix`` (``prob_Atelectasis``); columns that are not findings after the
    prefix is removed are reported in the notes, never silently mixed in.
    """
    df = _read_table(path, "read_wide_predictions")
    p = Path(path)
    where = f"file {str(p)!r}"
    if id_column is None:
        id_column = next((c for c in ("Study", "Image Index", "Path", "study_id") if c in df.columns), df.columns[0])
    check_columns(df, [id_column], where=where)
    cols, canon, ignored = [], [], []
    for c in df.columns:
        if c == id_column:
            continue
        name = c[len(prefix):] if prefix and c.startswith(prefix) else c
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
        raise SchemaError(f"{where} has no score columns named after findings (prefix {prefix!r}); "
                          f"columns are {list(df.columns)}.")
    n = len(df)
    long = pd.DataFrame({
        "study_id": np.repeat(df[id_column].astype(str).to_numpy(), len(cols)),
        "model": model,
        "finding": np.tile(np.asarray(canon, dtype=object), n),
        "score": df[cols].to_numpy(dtype=object).ravel(),
    })
    table = validate_predictions(long, where=where)
    notes = (f"ignored non-finding columns: {ignored}",) if ignored else ()
    return ReadResult(table, ReadReport(str(p), n, n, notes=notes))


def write_predictions(predictions: pd.DataFrame, path: str | Path) -> Path:
    """Write a long prediction table (CSV or Parquet by suffix)."""
    p = Path(path)
    out = predictions.copy()
    (out.to_parquet if p.suffix == ".parquet" else out.to_csv)(p, index=False)
    return p
