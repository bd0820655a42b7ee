"""Tables for the HTML report: reading result files, rendering HTML tables with a CSV download link.

Every table shown in the report carries a link that downloads the full table as CSV straight from the
page (a ``data:text/csv;base64,...`` URI, so the file works offline). Long tables are paginated and
searchable in the browser (the page's small inline script; without script every row is listed) and hold
their first ``max_rows`` rows; the download always holds every row unless the CSV is larger than
``max_embed_bytes``, in which case the link is replaced by the path of the file on disk.

Which files of a folder are results: when the folder (or the folder of the run that wrote it, up to two
levels up) holds a ``run.json`` (:mod:`cxreval.outputs`), only the files that record lists; other files
in a reused folder are stale and ignored, and a listed file whose SHA-256 differs from the one recorded
(truncated or edited after the run) is refused with an error. Without ``run.json`` every file is read.
"""

from __future__ import annotations

import base64
import html
import math
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from ..exceptions import SchemaError
from ..outputs import check_unchanged, read_run

__all__ = [
    "read_result_table",
    "find_result_file",
    "listed_files",
    "run_record",
    "missing_columns",
    "csv_data_uri",
    "html_table",
    "format_value",
    "MAX_ROWS",
    "PAGE_ROWS",
    "result_path",
    "MAX_EMBED_BYTES",
]

MAX_ROWS = 1000
"""Rows held on the page per table, paginated and searchable (the CSV download holds all rows)."""

PAGE_ROWS = 20
"""Rows per page of a paginated table."""

MAX_EMBED_BYTES = 4_000_000
"""Largest CSV (bytes) embedded in the page as a download link."""


def run_record(folder: str | Path) -> tuple[dict[str, object], str] | None:
    """The ``run.json`` record that governs ``folder`` and the prefix of ``folder``'s files in its list.

    The folder's own ``run.json`` wins; else that of its parent or grandparent (a run that wrote several
    folders, such as ``cxreval demo``). None when no such record exists.
    """
    folder = Path(folder)
    prefix = ""
    for up in (folder, folder.parent, folder.parent.parent):
        rec = read_run(up)
        if rec is not None:
            return rec, prefix
        prefix = f"{up.name}/{prefix}"
    return None


def listed_files(folder: str | Path) -> frozenset[str] | None:
    """Names (relative to ``folder``, ``/``-separated) of the files the governing ``run.json`` lists, or
    None when no ``run.json`` governs the folder (then every file counts)."""
    found = run_record(folder)
    if found is None:
        return None
    rec, prefix = found
    files = rec.get("files") or []
    if not isinstance(files, list):
        return frozenset()
    return frozenset(str(f)[len(prefix):] for f in files if str(f).startswith(prefix))


def result_path(folder: str | Path, name: str) -> Path | None:
    """``folder/name`` when it is a file the folder's run wrote (see :func:`listed_files`), else None."""
    p = Path(folder) / name
    if not p.is_file():
        return None
    found = run_record(folder)
    if found is None:
        return p
    rec, prefix = found
    listed = listed_files(folder)
    rel = name.replace("\\", "/")
    if listed is not None and rel not in listed:
        return None
    check_unchanged(p, rec, prefix + rel)  # a truncated or edited result file is refused, not shown short
    return p


def find_result_file(folder: Path, name: str) -> Path | None:
    """Return ``folder/name`` or its Parquet twin (``.parquet`` for a ``.csv`` name), else None.

    Files that a ``run.json`` governing the folder does not list are ignored (stale).
    """
    p = result_path(folder, name)
    if p is not None:
        return p
    if name.endswith(".csv"):
        return result_path(folder, name[:-4] + ".parquet")
    return None


def read_result_table(path: str | Path) -> pd.DataFrame:
    """Read a CSV or Parquet result table.

    Raises
    ------
    SchemaError
        If the file cannot be parsed as a table; the message names the file.
    """
    path = Path(path)
    try:
        if path.suffix == ".parquet":
            return pd.read_parquet(path)
        return pd.read_csv(path)
    except (ValueError, OSError, ImportError) as exc:
        raise SchemaError(f"Cannot read result table {str(path)!r}: {exc}") from exc


def missing_columns(df: pd.DataFrame, required: Sequence[str]) -> list[str]:
    """The names in ``required`` that ``df`` lacks."""
    return [c for c in required if c not in df.columns]


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


def html_table(df: pd.DataFrame, *, name: str, caption: str = "", max_rows: int = MAX_ROWS,
               max_embed_bytes: int = MAX_EMBED_BYTES, source: str | Path | None = None,
               digits: int = 3) -> str:
    """Render ``df`` as an HTML table with a CSV download link.

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
    n = len(df)
    parts = ['<div class="table-block">']
    head = []
    if caption:
        head.append(f'<span class="caption">{html.escape(caption)}</span>')
    uri = csv_data_uri(df)
    if len(uri) <= max_embed_bytes * 4 // 3 + 64:
        head.append(f'<a class="download" download="{html.escape(fname)}" href="{uri}">'
                    f'download {html.escape(fname)} ({n} rows)</a>')
    else:
        where = f" at {html.escape(str(source))}" if source else ""
        head.append(f'<span class="download-note">{html.escape(fname)} ({n} rows) is too large to embed; '
                    f'the file is{where}</span>')
    parts.append('<div class="table-head">' + " ".join(head) + "</div>")
    shown = df.head(max_rows)
    paged = len(shown) > PAGE_ROWS
    attrs = f' data-page-rows="{PAGE_ROWS}"' if paged else ""
    parts.append(f'<div class="table-scroll"><table class="data{" paged" if paged else ""}"{attrs}><thead><tr>')
    parts.extend(f"<th>{html.escape(str(c))}</th>" for c in shown.columns)
    parts.append("</tr></thead><tbody>")
    numeric = [pd.api.types.is_numeric_dtype(shown[c]) for c in shown.columns]
    for row in shown.itertuples(index=False, name=None):
        cells = []
        for v, isnum in zip(row, numeric):
            cls = ' class="num"' if isnum else ""
            cells.append(f"<td{cls}>{html.escape(format_value(v, digits=digits))}</td>")
        parts.append("<tr>" + "".join(cells) + "</tr>")
    parts.append("</tbody></table></div>")
    if n > max_rows:
        parts.append(f'<p class="note">The page holds the first {max_rows} of {n} rows; the download holds all '
                     'rows.</p>')
    parts.append("</div>")
    return "".join(parts)
