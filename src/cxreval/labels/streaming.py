"""Long prediction and label tables read block by block into integer codes, validated once.

A 228,000-study evaluation (20 models × 14 findings) reads 63.8 M prediction rows; as pandas text columns
they take ~20 GiB. Here every file is read with :mod:`pyarrow` in blocks (CSV in 4 MiB blocks, Parquet by
row group and only the columns needed), string columns dictionary-encoded: a block's distinct values are
converted once (ids to text, findings to canonical names, states decoded under ``state_encoding``) and its
rows become integer codes. Scores go straight into one float array per (model, finding) indexed by study,
so the memory is that of the score matrix plus one block.

A *table* is a CSV or Parquet file, or a folder of such files with the same columns read as one table
(files in name order, rows numbered across them) — the layout of a partitioned Parquet export. A folder of
predictions whose files are *not* long tables is the folder of wide ``<model>.csv``/``.parquet`` files of
``cxreval classify`` (one model per file).

Validation is the same as :func:`~cxreval.labels.validate_predictions` /
:func:`~cxreval.labels.read_labels` + :func:`~cxreval.labels.validate_label_table`, done once and
vectorised. Whenever a block holds anything the vectorised checks do not decide themselves (a missing id,
an unknown finding, a non-finite score, a duplicate, an ambiguous or unknown state, a study with two
patients, a column missing, an unusual column type), the input is read again with the pandas readers,
which raise the error with its file, row and value — so errors and their messages are those of the
pandas readers, and no row is ever dropped or coerced silently.
"""

from __future__ import annotations

import mmap
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ..exceptions import InvalidParameterError, SchemaError
from ..findings import canonical_finding
from ._files import (
    TABLE_SUFFIXES,
    _column_names,
    _Unusual,
    check_blank_state,
    check_label_headers,
    check_prediction_headers,
    read_label_tables,
    read_prediction_tables,
    table_parts,
)
from .long import LABEL_COLUMNS, PREDICTION_COLUMNS
from .states import STATE_ENCODINGS, decode_states

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = ["PredictionScan", "LabelScan", "scan_predictions", "scan_labels"]

_CSV_BLOCK = 4 << 20  # bytes of CSV per block (larger blocks cost more read-ahead memory, no speed)
_PARQUET_BATCH = 1 << 18  # rows per Parquet batch
_MISSING = np.int32(-1)
_NO_ROW = np.iinfo(np.int64).max


# ------------------------------------------------------------------------------------------ files
def _blocks(files: Sequence[Path], columns: Sequence[str], numeric: Sequence[str] = ()) -> Iterator[dict]:
    """Arrow arrays of ``columns`` block by block over the files of one table (strings dictionary-encoded,
    ``numeric`` columns as float64); anything unreadable raises :class:`_Unusual`."""
    import pyarrow as pa
    import pyarrow.csv as pacsv
    import pyarrow.parquet as pq

    for f in files:
        if not f.is_file():
            raise _Unusual(f"{f} is not a file")
        names = _column_names(f)
        if not set(columns) <= set(names):
            raise _Unusual(f"{f} lacks a column")
        try:
            if f.suffix.lower() == ".parquet":
                schema = pq.read_schema(f)
                strings = [c for c in columns if pa.types.is_string(schema.field(c).type)
                           or pa.types.is_large_string(schema.field(c).type)]
                pf = pq.ParquetFile(f, read_dictionary=strings)
                batches = pf.iter_batches(batch_size=_PARQUET_BATCH, columns=list(columns))
            else:
                types = {c: (pa.float64() if c in numeric else pa.dictionary(pa.int32(), pa.string())) for c in columns}
                batches = pacsv.open_csv(f, read_options=pacsv.ReadOptions(block_size=_CSV_BLOCK),
                                         convert_options=pacsv.ConvertOptions(
                                             column_types=types, include_columns=list(columns), null_values=[""],
                                             strings_can_be_null=True, quoted_strings_can_be_null=True))
            for b in batches:
                out = {c: b.column(c) for c in columns}
                for c in numeric:
                    out[c] = out[c].cast(pa.float64())
                yield out
            del batches
            pa.default_memory_pool().release_unused()  # the reader's buffers, back to the system
        except (pa.ArrowException, OSError, ValueError) as exc:
            raise _Unusual(str(exc)) from exc


def _factorize(arr: Any) -> tuple[np.ndarray, np.ndarray]:
    """Codes (-1 = null) and distinct values of an Arrow array or a pandas Series."""
    if isinstance(arr, pd.Series):
        codes, uniq = pd.factorize(arr, use_na_sentinel=True)
        return codes.astype(np.int32, copy=False), np.asarray(uniq, dtype=object)
    import pyarrow as pa
    import pyarrow.compute as pc

    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    if not pa.types.is_dictionary(arr.type):
        arr = pc.dictionary_encode(arr)
    idx = arr.indices.fill_null(-1).to_numpy(zero_copy_only=False).astype(np.int32, copy=False)
    d = arr.dictionary
    if len(d) > 1024:  # a Parquet batch carries its row group's whole dictionary: keep the values it uses
        used = np.flatnonzero(np.bincount(idx[idx >= 0], minlength=len(d)))
        if len(used) < len(d):
            remap = np.full(len(d) + 1, -1, dtype=np.int32)
            remap[used] = np.arange(len(used), dtype=np.int32)
            idx = remap[idx]  # -1 (null) picks the last entry, -1
            d = d.take(pa.array(used))
    if pa.types.is_string(d.type) or pa.types.is_large_string(d.type):
        blank = len(d) and pc.any(pc.equal(pc.utf8_trim_whitespace(d), "")).as_py()
        return idx, (_Text if not blank else np.asarray)(d.to_numpy(zero_copy_only=False))  # str objects
    return idx, np.asarray(d.to_pylist() + [None], dtype=object)[:-1]


def _as_text(v: object) -> str:
    """A value as the pandas readers write it as text (``astype(str)``); other types are left to them."""
    if isinstance(v, str):
        return v
    if isinstance(v, (int, np.integer)) and not isinstance(v, bool):
        return str(v)
    raise _Unusual(f"value {v!r} of type {type(v).__name__}")


def _id_text(v: object) -> str | None:
    """An id as :func:`~cxreval.labels.validate_label_table` reads it (blank -> missing)."""
    t = _as_text(v)
    return t if t.strip() != "" else None


class _Vocab:
    """Distinct converted values in first-seen order; ``codes`` maps a block's column to their positions.

    Text blocks are looked up in C (a pandas index of the values, rebuilt as the vocabulary grows by a quarter);
    only values not yet indexed go through Python, so each distinct value is converted about once.
    """

    def __init__(self, convert: object) -> None:
        self.index: dict[object, int] = {}
        self.values: list[object] = []
        self._convert = convert
        self._cache: dict[object, int] = {}
        self._fast: pd.Index | None = None

    def code_of(self, value: object) -> int:
        c = self.index.get(value)
        if c is None:
            c = self.index[value] = len(self.values)
            self.values.append(value)
        return c

    def codes(self, arr: object, *, cache: bool = False) -> np.ndarray:
        idx, uniq = _factorize(arr)
        lut = np.empty(len(uniq) + 1, dtype=np.int32)
        lut[-1] = _MISSING
        if not cache and self._convert in (_as_text, _id_text) and _all_text(uniq):
            lut[:-1] = self._lookup(np.asarray(uniq).view(np.ndarray))
            return lut[idx]
        for k, v in enumerate(uniq.tolist() if isinstance(uniq, np.ndarray) else uniq):
            c = self._cache.get(v) if cache else None
            if c is None:
                t = self._convert(v)  # type: ignore[operator]
                c = _MISSING if t is None else self.code_of(t)
                if cache:
                    self._cache[v] = c
            lut[k] = c
        return lut[idx]

    def _lookup(self, uniq: np.ndarray) -> np.ndarray:
        pos = (self._fast.get_indexer(uniq) if self._fast is not None else np.full(len(uniq), -1)).astype(np.int32)
        for k in np.flatnonzero(pos < 0).tolist():
            pos[k] = self.code_of(uniq[k])
        n_fast = 0 if self._fast is None else len(self._fast)
        if len(self.values) - n_fast > max(4096, n_fast // 4):
            self._fast = pd.Index(np.asarray(self.values, dtype=object))
        return pos


class _Text(np.ndarray):
    """An object array of non-blank ``str`` (the distinct values of an Arrow text block)."""

    def __new__(cls, a: np.ndarray) -> _Text:
        return np.asarray(a, dtype=object).view(cls)


def _all_text(uniq: object) -> bool:
    return isinstance(uniq, _Text)


def _canonical(v: object) -> str:
    if not isinstance(v, str):
        raise _Unusual(f"finding {v!r}")
    try:
        return canonical_finding(v)
    except SchemaError as exc:
        raise _Unusual(str(exc)) from exc


def _grow(a: np.ndarray, n: int, fill: float | int) -> np.ndarray:
    """``a`` grown to at least ``n`` entries (by a quarter), the new ones ``fill``.

    The arrays live in their own anonymous memory maps, returned to the system as soon as they are dropped
    (from the C heap, the freed arrays of a growing table stay in the process and the peak doubles)."""
    if len(a) >= n:
        return a
    size = max(n, int(len(a) * 1.25) + 1024)
    b = np.frombuffer(mmap.mmap(-1, size * a.dtype.itemsize), dtype=a.dtype, count=size)
    b[: len(a)] = a
    b[len(a):] = fill
    return b


# ------------------------------------------------------------------------------------- predictions
@dataclass
class PredictionScan:
    """A long prediction table as codes: one score array per (model, finding) over the studies.

    Attributes
    ----------
    studies, models, findings : list of str
        Distinct study ids (text), models and canonical findings, in order of first appearance.
    scores : dict
        ``(model code, finding code) -> float64 array`` indexed by study code (NaN where the model has no
        score; arrays may be shorter than ``len(studies)``, the rest being NaN).
    first_row : dict
        ``finding code -> int64 array``: each study's first row with that finding (``2**63 - 1``: none; arrays
        may be shorter than ``len(studies)``).
    slot_first : dict
        ``(model code, finding code) -> (row, study code)`` of the first row of that pair.
    n_rows : int
        Rows read.
    notes : list of str
    """

    studies: list = field(default_factory=list)
    models: list = field(default_factory=list)
    findings: list = field(default_factory=list)
    scores: dict = field(default_factory=dict)
    first_row: dict = field(default_factory=dict)
    slot_first: dict = field(default_factory=dict)
    n_rows: int = 0
    notes: list = field(default_factory=list)

    def __post_init__(self) -> None:
        self._s = _Vocab(_as_text)
        self._m = _Vocab(_as_text)
        self._f = _Vocab(_canonical)
        self.studies, self.models, self.findings = self._s.values, self._m.values, self._f.values

    def add(self, study: pa.Array | pd.Series, model: pa.Array | pd.Series, finding: pa.Array | pd.Series,
            score: np.ndarray) -> None:
        """Add one block (Arrow arrays or pandas Series of the four columns)."""
        self._add_codes(self._s.codes(study), self._m.codes(model, cache=True), self._f.codes(finding, cache=True),
                        score)

    def _add_codes(self, s: np.ndarray, m: np.ndarray, f: np.ndarray, score: np.ndarray) -> None:
        n = len(s)
        if n == 0:
            return
        if (s < 0).any() or (m < 0).any() or (f < 0).any():
            raise _Unusual("missing id")
        if not np.isfinite(score).all():
            raise _Unusual("non-finite score")
        rows = np.arange(self.n_rows, self.n_rows + n, dtype=np.int64)
        key = m.astype(np.int64) * (len(self.findings) + 1) + f
        order = np.argsort(key, kind="stable")
        ks = key[order]
        cuts = np.flatnonzero(np.diff(ks)) + 1
        for part in np.split(order, cuts):
            slot = (int(m[part[0]]), int(f[part[0]]))
            sp = s[part]
            a = self.scores.get(slot)
            a = _grow(np.full(0, np.nan) if a is None else a, max(int(sp.max()) + 1, len(self.studies)), np.nan)
            a[sp] = score[part]
            self.scores[slot] = a
            if slot not in self.slot_first:
                self.slot_first[slot] = (int(rows[part[0]]), int(sp[0]))
            # each study's first row with this finding (a study appears once per slot unless duplicated, an
            # error found by check_unique)
            j = slot[1]
            first = self.first_row.get(j)
            first = _grow(np.full(0, _NO_ROW, dtype=np.int64) if first is None else first, len(self.studies), _NO_ROW)
            first[sp] = np.minimum(first[sp], rows[part])
            self.first_row[j] = first
        self.n_rows += n

    def check_unique(self) -> None:
        """Every (study, model, finding) at most once: the scores written equal the rows read."""
        if sum(int(np.isfinite(a).sum()) for a in self.scores.values()) != self.n_rows:
            raise _Unusual("duplicate rows")

    @classmethod
    def from_frame(cls, df: pd.DataFrame) -> PredictionScan:
        """Codes of a table already checked by :func:`~cxreval.labels.validate_predictions`."""
        scan = cls()
        scan.add(df["study_id"].reset_index(drop=True), df["model"].reset_index(drop=True),
                 df["finding"].reset_index(drop=True), df["score"].to_numpy(dtype=float))
        scan.check_unique()
        return scan


def scan_predictions(paths: Sequence[str | Path]) -> PredictionScan:
    """Read prediction inputs (see :func:`read_prediction_tables` for the layouts) into a
    :class:`PredictionScan`, one block at a time; errors as the pandas readers raise them."""
    scan = PredictionScan()
    check_prediction_headers(paths)  # a missing column fails before any block is read
    try:
        for p in paths:
            pp = Path(p)
            if not pp.exists():
                raise _Unusual("absent")
            parts = table_parts(pp, PREDICTION_COLUMNS)
            n_before = scan.n_rows
            if parts is None:  # a folder of wide per-model files
                _scan_wide_folder(scan, pp)
            else:
                for b in _blocks(parts, PREDICTION_COLUMNS, numeric=("score",)):
                    score = b["score"].to_numpy(zero_copy_only=False)
                    scan.add(b["study_id"], b["model"], b["finding"], np.asarray(score, dtype=float))
            if scan.n_rows == n_before:
                raise _Unusual("no rows")
        scan.check_unique()
        return scan
    except _Unusual:
        df, notes = read_prediction_tables(paths)  # raises the error, naming file, row and value
        scan = PredictionScan.from_frame(df)
        scan.notes = notes
        return scan


def _scan_wide_folder(scan: PredictionScan, p: Path) -> None:
    """Wide ``<model>.csv``/``.parquet`` files (an id column, one score column per finding) into ``scan``, as
    :func:`read_prediction_tables` reads them (rows: each study's findings in column order)."""
    files = sorted(f for f in p.iterdir() if f.is_file() and f.suffix.lower() in TABLE_SUFFIXES)
    others = sorted(f.name for f in p.iterdir() if f.is_file() and f.suffix.lower() not in TABLE_SUFFIXES
                    and not f.name.startswith("."))
    stems = [f.stem for f in files]
    if not files or len(set(stems)) != len(stems):
        raise _Unusual("no files, or two files of a model")
    if others:
        scan.notes.append(f"{p.name}: files that are not .csv/.parquet were not read: {others}")
    for f in files:
        names = _column_names(f)
        if len(set(names)) != len(names) or not names:
            raise _Unusual("repeated column names")
        prefix = "prob_" if any(str(c).startswith("prob_") for c in names) else ""
        id_column = next((c for c in ("Study", "Image Index", "Path", "study_id") if c in names), names[0])
        cols, fcodes, ignored = [], [], []
        for c in names:
            if c == id_column:
                continue
            try:
                fcodes.append(scan._f.code_of(canonical_finding(c[len(prefix):] if prefix and c.startswith(prefix)
                                                                else c)))
                cols.append(c)
            except SchemaError:
                ignored.append(c)
        if not cols:
            raise _Unusual("no score columns")
        model = scan._m.code_of(f.stem)
        k = len(cols)
        for b in _blocks([f], [id_column, *cols], numeric=cols):
            s = scan._s.codes(b[id_column])
            score = np.column_stack([np.asarray(b[c].to_numpy(zero_copy_only=False), dtype=float) for c in cols])
            n = len(s)
            scan._add_codes(np.repeat(s, k), np.full(n * k, model, dtype=np.int32),
                            np.tile(np.asarray(fcodes, dtype=np.int32), n), score.ravel())
        if ignored:
            scan.notes.append(f"{f.name}: ignored non-finding columns: {ignored}")


# ------------------------------------------------------------------------------------------ labels
@dataclass
class LabelScan:
    """A long label table as codes (one entry per row).

    Attributes
    ----------
    studies, patients, findings, sources : list of str
        Distinct values (ids as text, canonical findings), first-seen order.
    study, patient, finding, source : ndarray of int32
        Codes per row (``patient`` -1: missing).
    state : ndarray of int8
        The state per row (-1..2; -128: missing).
    """

    studies: list = field(default_factory=list)
    patients: list = field(default_factory=list)
    findings: list = field(default_factory=list)
    sources: list = field(default_factory=list)
    study: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int32))
    patient: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int32))
    finding: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int32))
    source: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int32))
    state: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int8))

    MISSING_STATE = -128

    def check(self) -> None:
        """No duplicate (study, finding, source); one patient per study."""
        if (self.study < 0).any():
            raise _Unusual("missing study")
        nf, ns = max(len(self.findings), 1), max(len(self.sources), 1)
        key = np.sort((self.study.astype(np.int64) * nf + self.finding) * ns + self.source)
        if (key[1:] == key[:-1]).any():
            raise _Unusual("duplicates")
        del key
        has = self.patient >= 0
        pairs = np.sort(self.study[has].astype(np.int64) * (len(self.patients) + 1) + self.patient[has])
        pairs = pairs[np.r_[True, pairs[1:] != pairs[:-1]]] // (len(self.patients) + 1)  # distinct pairs' studies
        if (pairs[1:] == pairs[:-1]).any():
            raise _Unusual("two patients")

    @classmethod
    def from_frame(cls, df: pd.DataFrame) -> LabelScan:
        """Codes of a table already checked by :func:`~cxreval.labels.validate_label_table`."""
        out = cls()
        vs = [_Vocab(lambda v: v) for _ in range(4)]
        cols = ("study_id", "patient_id", "finding", "source")
        study, patient, finding, source = (vs[k].codes(df[c].reset_index(drop=True)) for k, c in enumerate(cols))
        st = df["state"].reset_index(drop=True).astype("Int8")
        state = st.to_numpy(dtype=np.int16, na_value=cls.MISSING_STATE).astype(np.int8)
        out.studies, out.patients, out.findings, out.sources = (v.values for v in vs)
        out.study, out.patient, out.finding, out.source, out.state = study, patient, finding, source, state
        return out


def _is_blank(v: object) -> bool:
    return v is None or (isinstance(v, str) and v.strip() == "") or (isinstance(v, float) and v != v)


def _decode_lut(raw: list, *, encoding: str | None, blank_state: str | None) -> np.ndarray:
    """State codes of a file's distinct raw states (last entry: null) under ``encoding``: a blank that is to be
    refused becomes a missing state here, and the caller refuses it only if a row has one."""
    refuse = blank_state == "refuse" or (blank_state is None and encoding is None)
    try:
        dec = decode_states(pd.Series(raw + [None], dtype=object), encoding=encoding,
                            blank_state="missing" if refuse else blank_state)
    except SchemaError as exc:
        raise _Unusual(str(exc)) from exc
    return dec.to_numpy(dtype=np.int16, na_value=LabelScan.MISSING_STATE).astype(np.int8)


def scan_labels(paths: Sequence[str | Path], *, state_encoding: str | None = None, blank_state: str | None = None,
                require_patient: bool = False) -> tuple[LabelScan, list[str]]:
    """Read label inputs (long tables: files or folders of parts) into a :class:`LabelScan`, one block at a
    time, states read under ``state_encoding`` and ``blank_state`` per file (see
    :func:`~cxreval.labels.decode_states`); the headers are checked first (``patient_id`` a required column
    when ``require_patient``); errors as :func:`read_label_tables` raises them."""
    if state_encoding is not None and state_encoding not in STATE_ENCODINGS:
        raise InvalidParameterError(f"state_encoding= must be one of {', '.join(STATE_ENCODINGS)}. "
                                    f"Got {state_encoding!r}.")
    check_blank_state(blank_state)
    check_label_headers(paths, require_patient=require_patient)  # before any block is read
    refuse_blank = blank_state == "refuse" or (blank_state is None and state_encoding is None)
    try:
        vs = _Vocab(_id_text), _Vocab(_id_text), _Vocab(_canonical), _Vocab(_as_text)
        cols: list[list[np.ndarray]] = [[], [], [], [], []]
        for p in paths:
            pp = Path(p)
            if not pp.exists():
                raise _Unusual("absent")
            parts = table_parts(pp, LABEL_COLUMNS)
            if parts is None:
                raise _Unusual("not a long table")
            raw_states = _Vocab(lambda v: v)
            file_states = []
            for b in _blocks(parts, LABEL_COLUMNS):
                study = vs[0].codes(b["study_id"])
                if (study < 0).any():
                    raise _Unusual("missing study id")
                cols[0].append(study)
                cols[1].append(vs[1].codes(b["patient_id"]))
                f = vs[2].codes(b["finding"], cache=True)
                src = vs[3].codes(b["source"], cache=True)
                if (f < 0).any() or (src < 0).any():
                    raise _Unusual("missing finding or source")
                cols[2].append(f)
                cols[3].append(src)
                idx, uniq = _factorize(b["state"])
                lut = np.asarray([raw_states.code_of(v) for v in uniq] + [-1], dtype=np.int32)
                file_states.append(lut[idx])
            if not file_states or sum(len(c) for c in file_states) == 0:
                raise _Unusual("no rows")
            lut = _decode_lut(raw_states.values, encoding=state_encoding, blank_state=blank_state)  # per file
            if refuse_blank:
                blank = np.asarray([-1] + [k for k, v in enumerate(raw_states.values) if _is_blank(v)])
                if any(np.isin(c, blank).any() for c in file_states):
                    raise _Unusual("blank state")
            cols[4] += [lut[c] for c in file_states]  # code -1 (null) picks the last entry
        out = LabelScan()
        out.studies, out.patients, out.findings, out.sources = (v.values for v in vs)
        cat = [np.concatenate(c) if c else np.zeros(0, np.int32) for c in cols]
        out.study, out.patient, out.finding, out.source = cat[:4]
        out.state = cat[4].astype(np.int8)
        out.check()
        return out, []
    except _Unusual:
        df, notes = read_label_tables(paths, state_encoding=state_encoding,  # raises the exact error
                                      blank_state=blank_state)
        return LabelScan.from_frame(df), notes
