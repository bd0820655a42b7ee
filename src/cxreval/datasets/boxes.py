"""Read a file of reference boxes in any of the formats cxreval knows, into the box schema.

``cxreval localize --boxes FILE`` accepts

- ChestX-ray14's ``BBox_List_2017.csv[.gz]`` (header ``Image Index,Finding Label,Bbox [x,y,w,h]``;
  :func:`cxreval.datasets.nih_boxes.read_nih_boxes`);
- VinDr-CXR's ``vinbigdata-train.csv[.gz]`` (columns ``image_id, class_name, class_id, rad_id, x_min, ...``;
  :func:`cxreval.datasets.vindr.read_vindr_boxes`: one box per reader, ``source`` = reader id), the file of
  the registered ``vindr_boxes`` dataset;
- a box table in cxreval's schema (``.csv`` or ``.parquet``): the columns
  :data:`cxreval.schema.BOX_COLUMNS` ``study_id, finding, [source,] x_min, y_min, x_max, y_max``,
  e.g. a table saved from :func:`read_nih_boxes` or :func:`read_vindr_boxes`.

Every format becomes the same table (:func:`cxreval.schema.check_box_table`).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from .._typing import PathLike
from ..exceptions import SchemaError
from ..findings import canonical_finding
from ..io import read_table
from ..io._read import read_csv_file
from ..results import ReadReport, ReadResult
from ..schema import FINDING
from ..schema._boxes import BOX_COORDS, check_box_table
from ..schema._columns import first_true
from .nih_boxes import NIH_HEADER, read_nih_boxes
from .vindr import VINDR_COLUMNS, read_vindr_boxes

__all__ = [
    "read_box_file",
]

BOX_FORMATS: tuple[str, ...] = ("nih", "vindr", "table")
"""The formats :func:`read_box_file` reads: ``BBox_List_2017``, VinDr-CXR's CSV, a cxreval box table."""


def _header(p: Path) -> list[str]:
    if p.suffix == ".parquet":
        try:
            import pyarrow.parquet as pq

            return list(pq.read_schema(p).names)
        except (OSError, ValueError) as exc:
            raise SchemaError(f"{p}: cannot be read as a Parquet file ({exc}).") from exc
    head = read_csv_file(
        p, error=lambda f, exc: f"{f}: cannot be read as a CSV file ({exc}).", nrows=0, dtype=str
    )
    return [str(c).strip() for c in head.columns]


def box_file_format(path: PathLike) -> str:
    """Which of :data:`BOX_FORMATS` the file at ``path`` is, from its header."""
    p = Path(path)
    cols = _header(p)
    if tuple(cols[:2]) == NIH_HEADER:
        return "nih"
    if set(VINDR_COLUMNS) <= set(cols):
        return "vindr"
    return "table"


def read_box_table(path: PathLike) -> ReadResult:
    """Read a box table in cxreval's schema (``.csv`` or ``.parquet``); findings canonicalised.

    Raises
    ------
    SchemaError
        A missing box column (``image_id`` is refused with "did you mean 'study_id'"), an empty
        ``study_id`` or ``finding``, a non-numeric or non-finite coordinate, an unknown finding.
    """
    p = Path(path)
    where = f"the box table {str(p)!r}"
    raw = read_table(
        p,
        dtype={"study_id": str, "source": str},
        error=lambda p, exc: f"{p}: cannot be read as a box table ({exc}).",
    )
    table = check_box_table(raw, where=where).copy()
    for col in table.columns[: len(table.columns) - len(BOX_COORDS)]:
        empty = table[col].isna().to_numpy() | (table[col].astype(str).str.strip() == "").to_numpy()
        if (i := first_true(empty)) is not None:
            raise SchemaError(f"{where}: row {i} has an empty {col!r}.")
        table[col] = table[col].astype(str).str.strip()
    for col in BOX_COORDS:
        vals = pd.to_numeric(table[col], errors="coerce").to_numpy(float)
        bad = ~np.isfinite(vals)
        if (i := first_true(bad)) is not None:
            raise SchemaError(
                f"{where}: row {i} has {col} = {table[col].iloc[i]!r}; expected a finite number."
            )
        table[col] = vals
    canon = {f: canonical_finding(f, where=f"{where}, column 'finding'") for f in pd.unique(table[FINDING])}
    renamed = {k: v for k, v in canon.items() if k != v}
    table[FINDING] = table[FINDING].map(canon)
    notes = tuple(f"renamed finding {k!r} -> {v!r}" for k, v in sorted(renamed.items()))
    return ReadResult(table.reset_index(drop=True), ReadReport(str(p), len(raw), len(raw), notes=notes))


def read_box_file(path: PathLike, *, image_shape: tuple[int, int] | None = None) -> ReadResult:
    """Read reference boxes from ``BBox_List_2017``, VinDr-CXR's CSV or a cxreval box table.

    Parameters
    ----------
    path : path-like
    image_shape : (height, width) or None
        Passed to :func:`~cxreval.datasets.nih_boxes.read_nih_boxes` (boxes must lie inside the image);
        the other formats are checked against the image by the scoring
        (:func:`cxreval.localization.evaluate_heatmaps`).

    Returns
    -------
    res : ReadResult
        ``res.table`` in the box schema (``study_id, finding, [source,] x_min, y_min, x_max, y_max``); the
        report says which format was read.
    """
    p = Path(path)
    fmt = box_file_format(p)
    if fmt == "nih":
        res = read_nih_boxes(p, image_shape=image_shape)
    elif fmt == "vindr":
        res = read_vindr_boxes(p)
    else:
        res = read_box_table(p)
    report = res.report
    if res.table.empty:
        raise SchemaError(f"{p} has no rows (a {fmt} box file with a header and no box).")
    notes = (f"format: {fmt}",) + tuple(report.notes)
    return ReadResult(
        res.table, ReadReport(report.source, report.n_read, report.n_kept, report.dropped, notes)
    )
