"""Tables on disk and as text: reading a CSV/Parquet file or a folder of parts (``io/_read.py``), writing
``name.csv`` + ``name.parquet`` and ``summary.md`` (``io/_write.py``), the Markdown table renderer
(``io/_markdown.py``). Import every name from ``cxreval.io``."""

from ._markdown import markdown_table
from ._read import (
    COMPRESSIONS,
    READ_ERRORS,
    TABLE_SUFFIXES,
    HeaderError,
    column_names,
    read_csv_file,
    read_errors,
    read_table,
    table_files,
    table_format,
    table_parts,
)
from ._write import SUMMARY_FILE, TableWriter, write_summary, write_table

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
    "SUMMARY_FILE",
    "write_table",
    "TableWriter",
    "write_summary",
    "markdown_table",
]
