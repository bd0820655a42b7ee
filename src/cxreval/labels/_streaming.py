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

DataFrames given to the library (``evaluate_auc(predictions, labels)``) are validated the same way, straight into
codes (:func:`scan_prediction_frame`, :func:`scan_label_frame`): the checks run on the columns and their distinct
values (an Arrow-backed text column dictionary-encoded by Arrow, without a copy), and whatever they do not decide
goes to :func:`~cxreval.labels.validate_predictions` / :func:`~cxreval.labels.validate_label_table`, which raise
their own error.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

import numpy as np
import pandas as pd

from ..exceptions import SchemaError
from ..findings import canonical_finding
from ..schema._states import decode_states, parse_states
from ._codes import _MISSING, _as_text, _canonical, _column, _factorize, _grow, _id_text, _Vocab
from ._files import (
    TABLE_SUFFIXES,
    _column_names,
    _Unusual,
    check_label_headers,
    check_prediction_headers,
    check_state_options,
    read_label_tables,
    read_prediction_tables,
    table_parts,
)
from ._long import LABEL_COLUMNS, PREDICTION_COLUMNS, validate_label_table, validate_predictions

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = [
    "PredictionScan",
    "LabelScan",
    "scan_predictions",
    "ScannedLabels",
    "scan_labels",
    "scan_prediction_frame",
    "scan_label_frame",
]

_CSV_BLOCK = 4 << 20  # bytes of CSV per block (larger blocks cost more read-ahead memory, no speed)
_PARQUET_BATCH = 1 << 18  # rows per Parquet batch
_NO_ROW = np.iinfo(np.int64).max
_I32_MAX = int(np.iinfo(np.int32).max)


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
                strings = [
                    c
                    for c in columns
                    if pa.types.is_string(schema.field(c).type)
                    or pa.types.is_large_string(schema.field(c).type)
                ]
                pf = pq.ParquetFile(f, read_dictionary=strings)
                batches = pf.iter_batches(batch_size=_PARQUET_BATCH, columns=list(columns))
            else:
                types = {
                    c: (pa.float64() if c in numeric else pa.dictionary(pa.int32(), pa.string()))
                    for c in columns
                }
                batches = pacsv.open_csv(
                    f,
                    read_options=pacsv.ReadOptions(block_size=_CSV_BLOCK),
                    convert_options=pacsv.ConvertOptions(
                        column_types=types,
                        include_columns=list(columns),
                        null_values=[""],
                        strings_can_be_null=True,
                        quoted_strings_can_be_null=True,
                    ),
                )
            for b in batches:
                out = {c: b.column(c) for c in columns}
                for c in numeric:
                    out[c] = out[c].cast(pa.float64())
                yield out
            del batches
            pa.default_memory_pool().release_unused()  # the reader's buffers, back to the system
        except (pa.ArrowException, OSError, ValueError) as exc:
            raise _Unusual(str(exc)) from exc


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
        self._s = _Vocab(_id_text)
        self._m = _Vocab(_id_text)
        self._f = _Vocab(_canonical)
        self.studies, self.models, self.findings = self._s.values, self._m.values, self._f.values

    def add(
        self,
        study: pa.Array | pd.Series,
        model: pa.Array | pd.Series,
        finding: pa.Array | pd.Series,
        score: np.ndarray,
    ) -> None:
        """Add one block (Arrow arrays or pandas Series of the four columns)."""
        self._add_codes(
            self._s.codes(study), self._m.codes(model, cache=True), self._f.codes(finding, cache=True), score
        )

    def _add_codes(self, s: np.ndarray, m: np.ndarray, f: np.ndarray, score: np.ndarray) -> None:
        n = len(s)
        if n == 0:
            return
        if (s < 0).any() or (m < 0).any() or (f < 0).any():
            raise _Unusual("missing id")
        if not np.isfinite(score).all():
            raise _Unusual("non-finite score")
        nf = len(self.findings) + 1
        key = np.multiply(m, nf, dtype=np.int32 if len(self.models) * nf < _I32_MAX else np.int64)
        key += f
        if not self.scores and self._add_dense(s, key, score):
            return
        # the rows of each (model, finding) slot, in row order: a radix sort when the keys fit 16 bits
        order = np.argsort(key.astype(np.uint16) if key.max() < 1 << 16 else key, kind="stable")
        ks = key[order]
        cuts = np.flatnonzero(ks[1:] != ks[:-1]) + 1
        bounds = np.concatenate([[0], cuts, [n]]).tolist()
        s_sorted, score_sorted = s[order], score[order]
        for lo, hi in zip(bounds[:-1], bounds[1:]):
            first_pos = int(order[lo])
            slot = (int(m[first_pos]), int(f[first_pos]))
            sp = s_sorted[lo:hi]
            a = self.scores.get(slot)
            a = _grow(
                np.full(0, np.nan) if a is None else a, max(int(sp.max()) + 1, len(self.studies)), np.nan
            )
            a[sp] = score_sorted[lo:hi]
            self.scores[slot] = a
            if slot not in self.slot_first:
                self.slot_first[slot] = (self.n_rows + first_pos, int(sp[0]))
            # each study's first row with this finding (a study appears once per slot unless duplicated, an
            # error found by check_unique)
            j = slot[1]
            first = self.first_row.get(j)
            first = _grow(
                np.full(0, _NO_ROW, dtype=np.int64) if first is None else first, len(self.studies), _NO_ROW
            )
            rows = order[lo:hi] + self.n_rows
            first[sp] = np.minimum(first[sp], rows)
            self.first_row[j] = first
        self.n_rows += n

    def _add_dense(self, s: np.ndarray, key: np.ndarray, score: np.ndarray) -> bool:
        """The first block, when its slots x studies are no more cells than twice its rows: every score in one
        scatter into a (slot, study) matrix whose rows become the slots' arrays, and every row number in one
        scatter into a matrix of the same cells, whose minima give the first rows. False (nothing done) otherwise.

        Few, narrow temporaries (int32 cell numbers computed in place, the row numbers written over ``key``,
        which is consumed): the arrays have one item per row, and fresh memory is what a first call pays for
        most."""
        n, n_studies = len(s), len(self.studies)
        present = np.flatnonzero(np.bincount(key))
        n_cells = len(present) * n_studies
        if n_cells > 2 * n:
            return False
        itype = np.int32 if max(n_cells, n) < _I32_MAX else np.int64
        slot_of = np.zeros(int(present[-1]) + 1, dtype=itype)
        slot_of[present] = np.arange(len(present), dtype=itype)
        cell = slot_of[key]  # slot, then (slot, study) as one flat cell number: one gather/scatter each
        cell *= n_studies
        cell += s
        table = np.full((len(present), n_studies), np.nan)
        table.reshape(-1)[cell] = score  # a repeated (slot, study) leaves fewer scores: check_unique
        # each cell's row (of a repeated cell one of them: check_unique fails then, and the rows are not used)
        row_of = np.full((len(present), n_studies), n, dtype=itype)
        rows = (
            key if key.dtype == itype else np.empty(n, dtype=itype)
        )  # the keys are read: their memory, reused
        rows[0] = 0
        rows[1:] = 1
        np.cumsum(rows, out=rows)
        row_of.reshape(-1)[cell] = rows
        del cell, rows
        first_of_slot = row_of.min(axis=1)
        nf = len(self.findings) + 1
        for i, sl in enumerate(present.tolist()):
            slot = (sl // nf, sl % nf)
            self.scores[slot] = table[i]
            r = int(first_of_slot[i])
            self.slot_first[slot] = (r, int(s[r]))
        slot_finding = present % nf
        for j in np.unique(slot_finding).tolist():
            first = np.min(row_of[slot_finding == j], axis=0).astype(np.int64)
            first[first == n] = _NO_ROW
            self.first_row[j] = first
        self.n_rows = n
        return True

    def check_unique(self) -> None:
        """Every (study, model, finding) at most once: the scores written equal the rows read."""
        if sum(int(np.isfinite(a).sum()) for a in self.scores.values()) != self.n_rows:
            raise _Unusual("duplicate rows")

    @classmethod
    def from_frame(cls, df: pd.DataFrame) -> PredictionScan:
        """Codes of a table already checked by :func:`~cxreval.labels.validate_predictions`."""
        scan = cls()
        scan.add(
            df["study_id"].reset_index(drop=True),
            df["model"].reset_index(drop=True),
            df["finding"].reset_index(drop=True),
            df["score"].to_numpy(dtype=float),
        )
        scan.check_unique()
        return scan


def _frame_check(df: object, columns: Sequence[str]) -> pd.DataFrame:
    if not isinstance(df, pd.DataFrame) or not set(columns) <= set(df.columns) or df.empty:
        raise _Unusual("not a table with those columns")
    return df


def scan_prediction_frame(df: pd.DataFrame, *, where: str = "prediction table") -> PredictionScan:
    """A prediction DataFrame validated straight into codes, as :func:`~cxreval.labels.validate_predictions`
    validates it: the checks run on the columns and their distinct values (the text columns of an Arrow-backed
    frame dictionary-encoded by Arrow); anything they do not decide themselves goes to
    :func:`~cxreval.labels.validate_predictions`, which raises its error (or returns the table scanned here)."""
    try:
        _frame_check(df, PREDICTION_COLUMNS)
        sc = df["score"]
        if not isinstance(sc, pd.Series) or sc.dtype.kind not in "fiu":
            raise _Unusual("scores not numbers")
        scan = PredictionScan()
        scan.add(
            _column(df, "study_id"),
            _column(df, "model"),
            _column(df, "finding"),
            sc.to_numpy(dtype=float, na_value=np.nan),
        )
        scan.check_unique()
        return scan
    except _Unusual:
        return PredictionScan.from_frame(validate_predictions(df, where=where))


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
    others = sorted(
        f.name
        for f in p.iterdir()
        if f.is_file() and f.suffix.lower() not in TABLE_SUFFIXES and not f.name.startswith(".")
    )
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
                fcodes.append(
                    scan._f.code_of(
                        canonical_finding(c[len(prefix) :] if prefix and c.startswith(prefix) else c)
                    )
                )
                cols.append(c)
            except SchemaError:
                ignored.append(c)
        if not cols:
            raise _Unusual("no score columns")
        model = scan._m.code_of(f.stem)
        k = len(cols)
        for b in _blocks([f], [id_column, *cols], numeric=cols):
            s = scan._s.codes(b[id_column])
            score = np.column_stack(
                [np.asarray(b[c].to_numpy(zero_copy_only=False), dtype=float) for c in cols]
            )
            n = len(s)
            scan._add_codes(
                np.repeat(s, k),
                np.full(n * k, model, dtype=np.int32),
                np.tile(np.asarray(fcodes, dtype=np.int32), n),
                score.ravel(),
            )
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
        pairs = pairs[np.r_[True, pairs[1:] != pairs[:-1]]] // (
            len(self.patients) + 1
        )  # distinct pairs' studies
        if (pairs[1:] == pairs[:-1]).any():
            raise _Unusual("two patients")

    @classmethod
    def from_frame(cls, df: pd.DataFrame) -> LabelScan:
        """Codes of a table already checked by :func:`~cxreval.labels.validate_label_table`."""
        out = cls()
        vs = [_Vocab(lambda v: v) for _ in range(4)]
        cols = ("study_id", "patient_id", "finding", "source")
        study, patient, finding, source = (
            vs[k].codes(df[c].reset_index(drop=True)) for k, c in enumerate(cols)
        )
        st = df["state"].reset_index(drop=True).astype("Int8")
        state = st.to_numpy(dtype=np.int16, na_value=cls.MISSING_STATE).astype(np.int8)
        out.studies, out.patients, out.findings, out.sources = (v.values for v in vs)
        out.study, out.patient, out.finding, out.source, out.state = study, patient, finding, source, state
        return out


def scan_label_frame(
    df: pd.DataFrame, *, where: str = "label table", require_patient: bool = True
) -> LabelScan:
    """A label DataFrame validated straight into codes, as :func:`~cxreval.labels.validate_label_table`
    validates it (see :func:`scan_prediction_frame`): anything the column checks do not decide goes to
    :func:`~cxreval.labels.validate_label_table`, which raises its error."""
    try:
        cols = [c for c in LABEL_COLUMNS if c != "patient_id" or require_patient]
        _frame_check(df, cols)
        out = LabelScan()
        vs = _Vocab(_id_text), _Vocab(_id_text), _Vocab(_canonical), _Vocab(_id_text)
        out.study = vs[0].codes(_column(df, "study_id"))
        n = len(out.study)
        out.patient = (
            vs[1].codes(_column(df, "patient_id"))
            if "patient_id" in df.columns
            else np.full(n, _MISSING, dtype=np.int32)
        )
        out.finding = vs[2].codes(_column(df, "finding"), cache=True)
        out.source = vs[3].codes(_column(df, "source"), cache=True)
        if (out.study < 0).any() or (out.finding < 0).any() or (out.source < 0).any():
            raise _Unusual("missing id, finding or source")
        out.studies, out.patients, out.findings, out.sources = (v.values for v in vs)
        st = df["state"]
        if not isinstance(st, pd.Series):
            raise _Unusual("state repeated")
        if str(st.dtype) == "Int8":
            state = st.to_numpy(dtype=np.int16, na_value=LabelScan.MISSING_STATE)
            if not np.isin(state, (-1, 0, 1, 2, LabelScan.MISSING_STATE)).all():
                raise _Unusual("state outside the domain")
        else:
            idx, uniq = _factorize(_column(df, "state"))
            try:
                parsed = parse_states(pd.Series(list(uniq) + [None], dtype=object))
            except SchemaError as exc:
                raise _Unusual(str(exc)) from exc
            state = parsed.to_numpy(dtype=np.int16, na_value=LabelScan.MISSING_STATE)[idx]  # -1 (null): last
        out.state = state.astype(np.int8)
        out.check()
        return out
    except _Unusual:
        return LabelScan.from_frame(validate_label_table(df, where=where, require_patient=require_patient))


def _is_blank(v: object) -> bool:
    return v is None or (isinstance(v, str) and v.strip() == "") or (isinstance(v, float) and v != v)


def _decode_lut(raw: list, *, encoding: str | None, blank_state: str | None) -> np.ndarray:
    """State codes of a file's distinct raw states (last entry: null) under ``encoding``: a blank that is to be
    refused becomes a missing state here, and the caller refuses it only if a row has one."""
    refuse = blank_state == "refuse" or (blank_state is None and encoding is None)
    try:
        dec = decode_states(
            pd.Series(raw + [None], dtype=object),
            encoding=encoding,
            blank_state="missing" if refuse else blank_state,
        )
    except SchemaError as exc:
        raise _Unusual(str(exc)) from exc
    return dec.to_numpy(dtype=np.int16, na_value=LabelScan.MISSING_STATE).astype(np.int8)


class ScannedLabels(NamedTuple):
    """What :func:`scan_labels` returns: the labels read into codes, and the readers' notes."""

    scan: LabelScan
    notes: list[str]


def scan_labels(
    paths: Sequence[str | Path],
    *,
    state_encoding: str | None = None,
    blank_state: str | None = None,
    require_patient: bool = False,
) -> ScannedLabels:
    """Read label inputs (long tables: files or folders of parts) into a :class:`LabelScan`, one block at a
    time, states read under ``state_encoding`` and ``blank_state`` per file (see
    :func:`~cxreval.schema.decode_states`); the headers are checked first (``patient_id`` a required column
    when ``require_patient``); errors as :func:`read_label_tables` raises them."""
    check_state_options(state_encoding, blank_state)
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
        return ScannedLabels(out, [])
    except _Unusual:
        df, notes = read_label_tables(
            paths,
            state_encoding=state_encoding,  # raises the exact error
            blank_state=blank_state,
            require_patient=require_patient,
        )
        return ScannedLabels(LabelScan.from_frame(df), notes)
