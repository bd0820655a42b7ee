"""Tidy tables on disk: the one writer of ``name.csv`` + ``name.parquet`` (:func:`write_table`, block by block
with :class:`TableWriter`) and of ``summary.md`` (:func:`write_summary`), shared by the CLI, the demo and the
bench scripts."""

from __future__ import annotations

from pathlib import Path
from typing import Any

__all__ = ["SUMMARY_FILE", "write_table", "TableWriter", "write_summary"]

SUMMARY_FILE = "summary.md"


def write_table(df: Any, out: Path, name: str, *, parquet: bool = True) -> Path:
    """Write ``df`` as ``out/name.csv`` and (``parquet``) ``out/name.parquet``, without the index.

    Returns
    -------
    path : pathlib.Path
        The CSV file.
    """
    csv = Path(out) / f"{name}.csv"
    df.to_csv(csv, index=False)
    if parquet:
        df.to_parquet(Path(out) / f"{name}.parquet", index=False)
    return csv


class TableWriter:
    """``name.csv`` (and ``name.parquet``) written block by block, for tables too long to hold at once.

    :meth:`write` appends a block's rows to the CSV at once; the Parquet file gets row groups of
    ``row_group_size`` rows whatever the blocks' sizes, so the bytes written depend only on the rows, never on
    how they were cut into blocks (a streamed table is the same file on every executor). The columns, their
    order and types are fixed by the first block. Use as a context manager; on an exception the partial files
    stay in the (temporary) output folder, which :func:`cxreval.outputs.output_folder` removes.

    Examples
    --------
    >>> import tempfile, pandas as pd
    >>> with tempfile.TemporaryDirectory() as d:
    ...     with TableWriter(d, "t") as w:
    ...         w.write(pd.DataFrame({"a": [1, 2]})); w.write(pd.DataFrame({"a": [3]}))
    ...     (Path(d) / "t.csv").read_text().split(), w.n_rows
    (['a', '1', '2', '3'], 3)
    """

    def __init__(
        self, out: str | Path, name: str, *, parquet: bool = True, row_group_size: int = 65536
    ) -> None:
        self.csv = Path(out) / f"{name}.csv"
        self.parquet = Path(out) / f"{name}.parquet" if parquet else None
        self.row_group_size = int(row_group_size)
        self.n_rows = 0
        self._csv_file: Any = None
        self._pq_writer: Any = None
        self._schema: Any = None
        self._columns: list[str] | None = None
        self._pending: list[Any] = []
        self._n_pending = 0

    def write(self, df: Any) -> None:
        """Append the rows of ``df`` (a pandas DataFrame with the first block's columns)."""
        if self._columns is None:
            self._columns = list(df.columns)
            self._csv_file = open(self.csv, "w", newline="")  # noqa: SIM115 - closed by close()
            df.iloc[:0].to_csv(self._csv_file, index=False)
        elif list(df.columns) != self._columns:
            raise ValueError(
                f"TableWriter({self.csv.name}): block columns {list(df.columns)} differ from "
                f"the first block's {self._columns}."
            )
        df.to_csv(self._csv_file, index=False, header=False)
        self.n_rows += len(df)
        if self.parquet is not None and len(df):
            self._pending.append(df)
            self._n_pending += len(df)
            while self._n_pending >= self.row_group_size:
                self._flush(self.row_group_size)

    def _flush(self, n: int) -> None:
        import pandas as pd
        import pyarrow as pa
        import pyarrow.parquet as pq

        block = pd.concat(self._pending, ignore_index=True) if len(self._pending) > 1 else self._pending[0]
        head, rest = block.iloc[:n], block.iloc[n:]
        self._pending, self._n_pending = ([rest] if len(rest) else []), len(rest)
        if self._schema is None:
            table = pa.Table.from_pandas(head, preserve_index=False)
            self._schema = table.schema
            self._pq_writer = pq.ParquetWriter(self.parquet, self._schema)
        else:
            table = pa.Table.from_pandas(head, schema=self._schema, preserve_index=False)
        self._pq_writer.write_table(table, row_group_size=n)

    def close(self) -> None:
        """Write what is pending and close the files (a table without blocks: nothing is written)."""
        try:
            if self._n_pending:
                self._flush(self._n_pending)
        finally:
            if self._pq_writer is not None:
                self._pq_writer.close()
                self._pq_writer = None
            if self._csv_file is not None:
                self._csv_file.close()
                self._csv_file = None

    def __enter__(self) -> TableWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def write_summary(out: Path, text: str) -> Path:
    """Write ``text`` (ending in a newline) as ``out/summary.md``; return the path."""
    p = Path(out) / SUMMARY_FILE
    p.write_text(text if text.endswith("\n") else text + "\n")
    return p
