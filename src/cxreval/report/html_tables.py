"""HTML tables of the report: every table shown carries a link that downloads the full table as CSV straight
from the page (a ``data:text/csv;base64,...`` URI, so the file works offline). Long tables are paginated and
searchable in the browser (the page's small inline script; without script every row is listed) and hold
their first ``max_rows`` rows; the download always holds every row unless the CSV is larger than
``max_embed_bytes``, in which case the link is replaced by the path of the file on disk.
"""

from __future__ import annotations

import base64
import math
from pathlib import Path

import numpy as np
import pandas as pd

from ._templates import REPORT

__all__: list[str] = []

MAX_ROWS = 1000
"""Rows held on the page per table, paginated and searchable (the CSV download holds all rows)."""

PAGE_ROWS = 20
"""Rows per page of a paginated table."""

MAX_EMBED_BYTES = 4_000_000
"""Largest CSV (bytes) embedded in the page as a download link."""


def csv_data_uri(df: pd.DataFrame) -> str:
    """``df`` as CSV in a base64 ``data:`` URI (UTF-8)."""
    payload = df.to_csv(index=False).encode("utf-8")
    return "data:text/csv;charset=utf-8;base64," + base64.b64encode(payload).decode("ascii")


def format_value(v: object, *, digits: int = 3) -> str:
    """Short display text of one cell: floats to ``digits`` decimals, missing as an empty string."""
    if v is None or (isinstance(v, float) and math.isnan(v)) or v is pd.NA:
        return ""
    if isinstance(v, (bool, np.bool_)):
        return str(bool(v))
    if isinstance(v, (int, np.integer)):
        return str(int(v))
    if isinstance(v, (float, np.floating)):
        f = float(v)
        if math.isinf(f):
            return "inf" if f > 0 else "-inf"
        if f == int(f) and abs(f) < 1e15 and digits >= 0 and abs(f) >= 1:
            return str(int(f))
        return f"{f:.{digits}f}"
    return str(v)


def html_table(
    df: pd.DataFrame,
    *,
    name: str,
    caption: str = "",
    max_rows: int = MAX_ROWS,
    max_embed_bytes: int = MAX_EMBED_BYTES,
    source: str | Path | None = None,
    digits: int = 3,
) -> str:
    """Render ``df`` as an HTML table with a CSV download link (the template ``templates/table.html.j2``).

    Parameters
    ----------
    df : pandas.DataFrame
        The table.
    name : str
        File name offered by the download link (``.csv`` is appended when missing).
    caption : str, default=''
        Text above the table.
    max_rows : int, default=MAX_ROWS
        Rows held on the page (paginated by :data:`PAGE_ROWS`, searchable); the download holds every row.
    max_embed_bytes : int, default=MAX_EMBED_BYTES
        Larger CSVs are not embedded; the link text gives ``source`` instead.
    source : path, optional
        The file the table was read from, shown beside the link.
    digits : int, default=3
        Decimals shown for floats (the CSV keeps full precision).

    Returns
    -------
    html : str
    """
    fname = name if name.endswith(".csv") else f"{name}.csv"
    uri = csv_data_uri(df)
    shown = df.head(max_rows)
    numeric = [pd.api.types.is_numeric_dtype(shown[c]) for c in shown.columns]
    rows = [
        [(format_value(v, digits=digits), isnum) for v, isnum in zip(row, numeric)]
        for row in shown.itertuples(index=False, name=None)
    ]
    return REPORT.render(
        "table.html.j2",
        fname=fname,
        caption=caption,
        uri=uri if len(uri) <= max_embed_bytes * 4 // 3 + 64 else "",
        source=source or "",
        n_rows=len(df),
        max_rows=max_rows,
        page_rows=PAGE_ROWS if len(shown) > PAGE_ROWS else 0,
        columns=list(shown.columns),
        rows=rows,
    )
