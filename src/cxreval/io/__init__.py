"""Tables on disk and as text: ``name.csv`` + ``name.parquet`` and ``summary.md`` (:mod:`cxreval.io.write`), the
Markdown table renderer (:mod:`cxreval.io.markdown`)."""

from .markdown import markdown_table
from .write import SUMMARY_FILE, TableWriter, write_summary, write_table

__all__ = ["SUMMARY_FILE", "write_table", "TableWriter", "write_summary", "markdown_table"]
