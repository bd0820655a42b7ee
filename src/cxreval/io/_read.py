"""Tables read from disk: one CSV or Parquet file (the format from its suffix), or a folder of such files with
the same columns read as one table (its parts in name order). Every reading of a user's or a result's table
goes through :func:`read_table`, and every CSV file (a data set's published file too) through
:func:`read_csv_file`, so a file that cannot be parsed — not UTF-8, empty, or compressed (``.gz``, ``.zip``,
``.xz``, ``.bz2``, ``.zst``, ``.tar``) with damaged or truncated data — is one
:class:`~cxreval.exceptions.SchemaError` naming it, whichever command reads it."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from ..exceptions import SchemaError

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "TABLE_SUFFIXES",
    "READ_ERRORS",
    "COMPRESSIONS",
    "HeaderError",
    "table_format",
    "read_table",
    "read_csv_file",
    "read_errors",
    "table_files",
    "table_parts",
    "column_names",
]

TABLE_SUFFIXES: tuple[str, ...] = (".csv", ".parquet")
"""The suffixes of the table files cxreval reads (any other is read as CSV when named as one file)."""
READ_ERRORS: tuple[type[BaseException], ...] = (ValueError, OSError, EOFError, ImportError)
"""What pandas and pyarrow raise for a file that is not a table (EOFError: a truncated ``.gz``); the errors of
the decompressors are added by :func:`read_errors`."""
COMPRESSIONS: dict[str, str] = {
    ".gz": "gzip",
    ".zip": "zip",
    ".xz": "xz",
    ".bz2": "bzip2",
    ".zst": "zstd",
    ".tar": "tar",
}
"""The compressed-file suffixes pandas reads a CSV from (by the file's last suffix), and their codec names."""


class HeaderError(Exception):
    """A file whose column names cannot be read without parsing it (its reader then raises the exact error)."""


def table_format(path: str | Path) -> str:
    """``"Parquet"`` for a ``.parquet`` file, else ``"CSV"``."""
    return "Parquet" if Path(path).suffix.lower() == ".parquet" else "CSV"


def _could_not_read(path: Path, exc: BaseException) -> str:
    return f"Could not read {str(path)!r} as {table_format(path)}: {exc or type(exc).__name__}"


class _DamagedData(ValueError):
    """A decompressor's error, said in words: which codec, and that the data is damaged or cut short."""


def read_errors() -> tuple[type[BaseException], ...]:
    """:data:`READ_ERRORS` and the errors the decompressors raise on damaged data (``zlib.error``,
    ``lzma.LZMAError``, ``zipfile.BadZipFile``, ``tarfile.TarError``, zstandard's ``ZstdError``): what a
    reader catches to name the file that cannot be read. (Imported here, not at module import: ``zipfile``
    alone costs 20 ms.)"""
    import lzma
    import sys
    import tarfile
    import zipfile
    import zlib

    zstd = getattr(sys.modules.get("zstandard"), "ZstdError", None)
    return (
        *READ_ERRORS,
        zlib.error,
        lzma.LZMAError,
        zipfile.BadZipFile,
        tarfile.TarError,
        *((zstd,) if isinstance(zstd, type) else ()),
    )


def _in_words(path: Path, exc: BaseException) -> BaseException:
    """``exc`` as read by a person: a decompressor's error (or the end of a file cut short) on a compressed
    file becomes "its gzip data is damaged or cut short (...)"; any other error is returned as it is."""
    codec = COMPRESSIONS.get(path.suffix.lower())
    codec_errors = read_errors()[len(READ_ERRORS) :]
    damaged = isinstance(exc, (*codec_errors, EOFError)) or (isinstance(exc, OSError) and exc.errno is None)
    if codec is None or not damaged:
        return exc
    text = str(exc).strip() or type(exc).__name__
    return _DamagedData(f"its {codec} data is damaged or cut short ({text})")


def read_csv_file(
    path: str | os.PathLike[str],
    *,
    error: Callable[[Path, BaseException], str] | None = None,
    **options: object,
) -> pd.DataFrame:
    """``pandas.read_csv(path, **options)`` — plain or compressed (:data:`COMPRESSIONS`, by suffix) — with
    every way the file can fail to be read turned into one :class:`~cxreval.exceptions.SchemaError` naming it.

    Parameters
    ----------
    path : path
        The CSV file.
    error : callable, optional
        The message from the path and the exception (default: "Could not read 'PATH' as CSV: ...").
    **options
        Passed to :func:`pandas.read_csv` (``dtype``, ``keep_default_na``, ``usecols``...).

    Raises
    ------
    SchemaError
        The file is not a readable CSV: damaged or truncated compressed data, not UTF-8, empty, unparseable.
    """
    import pandas as pd

    p = Path(path)
    try:
        return pd.read_csv(p, **options)
    except read_errors() as exc:
        raise SchemaError((error or _could_not_read)(p, _in_words(p, exc))) from exc


def read_table(
    path: str | Path,
    *,
    text: bool = False,
    dtype: dict[str, type] | None = None,
    error: Callable[[Path, BaseException], str] = _could_not_read,
) -> pd.DataFrame:
    """Read one CSV or Parquet file.

    Parameters
    ----------
    text
        Every CSV cell a string and only a blank cell missing (how the label and prediction tables are read:
        ``NA`` or ``None`` stay text); otherwise pandas' own type inference.
    dtype
        Column types for a CSV file (e.g. ids kept as text); not with ``text``.
    error
        The message for a file that cannot be parsed, from its path and the exception.

    Raises
    ------
    SchemaError
        The file cannot be read as a table (the message from ``error``, naming the file).
    """
    import pandas as pd

    p = Path(path)
    if table_format(p) == "CSV":
        if text:
            return read_csv_file(p, error=error, dtype=str, keep_default_na=False, na_values=[""])
        return read_csv_file(p, error=error, dtype=dtype)
    try:
        return pd.read_parquet(p)
    except READ_ERRORS as exc:
        raise SchemaError(error(p, exc)) from exc


def table_files(path: str | Path) -> list[Path]:
    """``[path]`` for a file; for a folder, its ``.csv``/``.parquet`` files in name order."""
    p = Path(path)
    if not p.is_dir():
        return [p]
    return sorted(f for f in p.iterdir() if f.is_file() and f.suffix.lower() in TABLE_SUFFIXES)


def table_parts(path: str | Path, columns: Sequence[str]) -> list[Path] | None:
    """The files of one table: ``[path]`` for a file; for a folder, its ``.csv``/``.parquet`` files in
    name order when every one has ``columns`` (a partitioned table), else ``None``."""
    p = Path(path)
    if not p.is_dir():
        return [p]
    files = table_files(p)
    if not files:
        return None
    for f in files:
        try:
            names = column_names(f)
        except HeaderError:
            return None
        if not set(columns) <= set(names):
            return None
    return files


def column_names(f: Path) -> list[str]:
    """The column names of the table file ``f``, read from its header (no data block).

    Raises
    ------
    HeaderError
        The header cannot be read.
    """
    import pyarrow as pa
    import pyarrow.csv as pacsv
    import pyarrow.parquet as pq

    try:
        if f.suffix.lower() == ".parquet":
            return list(pq.read_schema(f).names)
        with contextlib.closing(
            pacsv.open_csv(
                f,
                read_options=pacsv.ReadOptions(block_size=1 << 16),
                convert_options=pacsv.ConvertOptions(include_columns=[]),
            )
        ) as r:
            return list(r.schema.names) or _csv_header(f)
    except (pa.ArrowException, OSError, ValueError) as exc:
        raise HeaderError(str(exc)) from exc


def _csv_header(f: Path) -> list[str]:
    import csv

    with open(f, newline="", encoding="utf-8-sig") as fh:
        return next(csv.reader(fh), [])
