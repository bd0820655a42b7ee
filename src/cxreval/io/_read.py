"""Tables read from disk: one CSV or Parquet file (the format from its suffix), or a folder of such files with
the same columns read as one table (its parts in name order). Every reading of a user's or a result's table
goes through :func:`read_table`, so a file that cannot be parsed is one :class:`~cxreval.exceptions.SchemaError`
naming it, whichever command reads it."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from ..exceptions import SchemaError

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["TABLE_SUFFIXES", "READ_ERRORS", "HeaderError", "table_format", "read_table",
           "table_files", "table_parts", "column_names"]

TABLE_SUFFIXES: tuple[str, ...] = (".csv", ".parquet")
"""The suffixes of the table files cxreval reads (any other is read as CSV when named as one file)."""
READ_ERRORS: tuple[type[BaseException], ...] = (ValueError, OSError, EOFError, ImportError)
"""What pandas and pyarrow raise for a file that is not a table (EOFError: a truncated ``.gz``)."""


class HeaderError(Exception):
    """A file whose column names cannot be read without parsing it (its reader then raises the exact error)."""


def table_format(path: str | Path) -> str:
    """``"Parquet"`` for a ``.parquet`` file, else ``"CSV"``."""
    return "Parquet" if Path(path).suffix.lower() == ".parquet" else "CSV"


def _could_not_read(path: Path, exc: BaseException) -> str:
    return f"Could not read {str(path)!r} as {table_format(path)}: {exc or type(exc).__name__}"


def read_table(path: str | Path, *, text: bool = False, dtype: dict[str, type] | None = None,
               error: Callable[[Path, BaseException], str] = _could_not_read) -> pd.DataFrame:
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
    try:
        if table_format(p) == "Parquet":
            return pd.read_parquet(p)
        if text:
            return pd.read_csv(p, dtype=str, keep_default_na=False, na_values=[""])
        return pd.read_csv(p, dtype=dtype)
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
        with contextlib.closing(pacsv.open_csv(f, read_options=pacsv.ReadOptions(block_size=1 << 16),
                                               convert_options=pacsv.ConvertOptions(include_columns=[]))) as r:
            return list(r.schema.names) or _csv_header(f)
    except (pa.ArrowException, OSError, ValueError) as exc:
        raise HeaderError(str(exc)) from exc


def _csv_header(f: Path) -> list[str]:
    import csv

    with open(f, newline="", encoding="utf-8-sig") as fh:
        return next(csv.reader(fh), [])
