"""Tables on disk and as text: reading a CSV/Parquet file or a folder of parts (``io/_read.py``), writing
``name.csv`` + ``name.parquet`` and ``summary.md`` (``io/_write.py``), the Markdown table renderer
(``io/_markdown.py``). Import every name from ``cxreval.io``."""

from ._markdown import markdown_table
from ._read import read_table
from ._write import write_table

__all__ = [
    "read_table",
    "write_table",
    "markdown_table",
]
