"""Tables on disk and as text: reading a CSV/Parquet file or a folder of parts (:mod:`cxreval.io.read`), writing
``name.csv`` + ``name.parquet`` and ``summary.md`` (:mod:`cxreval.io.write`), the Markdown table renderer
(:mod:`cxreval.io.markdown`)."""

from .markdown import markdown_table
from .read import TABLE_SUFFIXES, read_table, table_parts
from .write import SUMMARY_FILE, TableWriter, write_summary, write_table

__all__ = ["TABLE_SUFFIXES", "read_table", "table_parts", "SUMMARY_FILE", "write_table", "TableWriter", "write_summary", "markdown_table"]
