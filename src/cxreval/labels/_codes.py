"""Text columns as integer codes: each distinct value converted once (ids to text, findings to canonical names)
and looked up in C; the machinery of :mod:`cxreval.labels` (private to the package)."""

from __future__ import annotations

import mmap
from typing import Any

import numpy as np
import pandas as pd

from ..exceptions import SchemaError
from ..findings import canonical_finding
from ._files import _Unusual

__all__: list[str] = []

_MISSING = np.int32(-1)


def _factorize(arr: Any) -> tuple[np.ndarray, np.ndarray]:
    """Codes (-1 = null) and distinct values of an Arrow array or a pandas Series."""
    if isinstance(arr, pd.Series):
        codes, uniq = pd.factorize(arr, use_na_sentinel=True)
        return codes.astype(np.int32, copy=False), np.asarray(uniq, dtype=object)
    import pyarrow as pa
    import pyarrow.compute as pc

    encoded = not pa.types.is_dictionary(arr.type)
    repeat = None
    if (
        encoded
    ):  # a chunked column is encoded chunk by chunk, every chunk given the one dictionary of the whole
        arr, repeat = _distinct_chunks(arr)
        arr = pc.dictionary_encode(arr)
    chunks = arr.chunks if isinstance(arr, pa.ChunkedArray) else [arr]
    if not chunks or not all(c.dictionary.equals(chunks[0].dictionary) for c in chunks[1:]):
        chunks = [arr.combine_chunks()]  # no chunk, or chunks of different dictionaries
    elif repeat is not None:  # a chunk equal to an earlier one takes its codes
        chunks = [chunks[k] for k in repeat]
    ind = chunks[0].indices if len(chunks) == 1 else pa.concat_arrays([c.indices for c in chunks])
    d = chunks[0].dictionary
    idx = (
        (ind.fill_null(-1) if ind.null_count else ind)
        .to_numpy(zero_copy_only=False)
        .astype(np.int32, copy=False)
    )
    if (
        len(d) > 1024 and not encoded
    ):  # a Parquet batch carries its row group's whole dictionary: the values used
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


_SEEN_CHUNKS = 8
"""Distinct chunks a chunk is compared with before :func:`_distinct_chunks` stops looking for repeats."""


def _distinct_chunks(arr: Any) -> tuple[Any, list[int] | None]:
    """A chunked column without the chunks that repeat an earlier one (a long table of one block per model
    repeats its study and finding columns block after block), and each chunk's position among those kept;
    ``(arr, None)`` when no chunk repeats. A comparison of buffers is much cheaper than hashing every value."""
    import pyarrow as pa

    if not isinstance(arr, pa.ChunkedArray) or arr.num_chunks < 2:
        return arr, None
    kept: list[Any] = []
    repeat: list[int] = []
    for c in arr.chunks:
        k = next((i for i, d in enumerate(kept[:_SEEN_CHUNKS]) if len(d) == len(c) and d.equals(c)), None)
        if k is None:
            k = len(kept)
            kept.append(c)
        repeat.append(k)
    if len(kept) == arr.num_chunks:
        return arr, None
    return pa.chunked_array(kept, type=arr.type), repeat


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
        pos = (self._fast.get_indexer(uniq) if self._fast is not None else np.full(len(uniq), -1)).astype(
            np.int32
        )
        new = np.flatnonzero(pos < 0)
        if (
            len(new) and not self.index
        ):  # the first block: its distinct values, in their order (distinct already)
            self.values.extend(uniq[new].tolist())
            self.index.update(zip(self.values, range(len(self.values))))
            pos[new] = np.arange(len(new), dtype=np.int32)
            new = new[:0]
        for k in new.tolist():
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
    b[len(a) :] = fill
    return b


def _column(df: pd.DataFrame, name: str) -> Any:
    """A text column of a frame as :func:`_factorize` takes it: its Arrow array when it has one (no copy)."""
    col = df[name]
    if not isinstance(col, pd.Series):
        raise _Unusual(f"column {name!r} repeated")
    if getattr(col.dtype, "storage", None) == "pyarrow" or isinstance(col.dtype, pd.ArrowDtype):
        import pyarrow as pa

        return pa.array(col.array)  # the column's own Arrow data (__arrow_array__)
    return col.reset_index(drop=True)
