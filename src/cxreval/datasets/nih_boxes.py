"""Reader of ChestX-ray14's radiologist boxes, ``BBox_List_2017.csv`` (or ``.csv.gz``).

The NIH file has one row per box: ``Image Index, Finding Label, Bbox [x,y,w,h]`` with the box as four
float columns ``x, y, w, h`` in pixels of the 1024 x 1024 image; its header ends in empty columns
(``Image Index,Finding Label,Bbox [x,y,w,h],,,``). The public copy holds 984 boxes on 880 images for
the eight ChestX-ray8 findings (Wang et al., CVPR 2017). Findings are canonicalised through
:mod:`cxreval.findings` (``Infiltrate`` -> ``Infiltration``) and the rename is recorded.

Boxes become cxreval's half-open ``(x_min, y_min, x_max, y_max) = (x, y, x + w, y + h)`` floats in the
box schema :data:`cxreval.schema.BOX_COLUMNS` (``Image Index`` is the ``study_id``).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from .._typing import PathLike
from ..exceptions import SchemaError
from ..findings import canonical_finding
from ..io._read import read_csv_file
from ..results import ReadReport, ReadResult
from ..schema._boxes import BOX_COLUMNS
from ..schema._columns import first_true

__all__: list[str] = []

NIH_HEADER = ("Image Index", "Finding Label")
"""The first two header fields of ``BBox_List_2017.csv`` (the third starts with ``Bbox``)."""


def read_nih_boxes(path: PathLike, *, image_shape: tuple[int, int] | None = (1024, 1024)) -> ReadResult:
    """Read ``BBox_List_2017.csv[.gz]`` into a boxes table.

    Parameters
    ----------
    path : path-like
    image_shape : (height, width) or None, default=(1024, 1024)
        When given, every box must lie inside the image.

    Returns
    -------
    res : ReadResult
        ``res.table`` has the columns :data:`BOX_COLUMNS` ``study_id, finding, x_min, y_min, x_max, y_max``
        (one row per box, in file order); ``res.report`` records the rows read and the finding renames. No row is dropped:
        a bad row is an error.

    Raises
    ------
    SchemaError
        On a header that is not the NIH one, a row without six fields, a non-numeric or non-finite
        coordinate, a box with non-positive width or height, or a box outside the image.
    """
    p = Path(path)
    raw = read_csv_file(
        p,
        error=lambda f, exc: f"{f}: cannot be read as a CSV file ({exc}).",
        header=None,
        dtype=str,
        keep_default_na=False,
        skip_blank_lines=True,
        names=list(range(9)),
        engine="python",
    )
    raw = raw.fillna("")
    if raw.empty:
        raise SchemaError(f"{p}: the file is empty; expected the BBox_List_2017 header and rows.")
    head = [str(v).strip() for v in raw.iloc[0]]
    if tuple(head[:2]) != NIH_HEADER or not head[2].startswith("Bbox"):
        raise SchemaError(
            f"{p}: the header {','.join(h for h in head if h)!r} is not BBox_List_2017's; "
            "expected 'Image Index,Finding Label,Bbox [x,y,w,h],,,'."
        )
    body = raw.iloc[1:].reset_index(drop=True)
    if body.empty:
        raise SchemaError(f"{p} has no rows (the BBox_List_2017 header and no box).")
    extra = body.iloc[:, 6:].apply(lambda c: c.str.strip() != "").any(axis=1)
    if (i := first_true(extra)) is not None:
        raise SchemaError(f"{p}: data row {i} has more than 6 non-empty fields: {list(body.iloc[i])}.")
    for col, name in ((0, "Image Index"), (1, "Finding Label")):
        empty = body[col].str.strip() == ""
        if (i := first_true(empty)) is not None:
            raise SchemaError(f"{p}: data row {i} has an empty '{name}'.")
    xywh = np.empty((len(body), 4))
    for k, name in enumerate("xywh"):
        vals = pd.to_numeric(body[2 + k].str.strip(), errors="coerce").to_numpy(float)
        bad = ~np.isfinite(vals)
        if (i := first_true(bad)) is not None:
            raise SchemaError(
                f"{p}: data row {i} (image {body[0][i]!r}) has {name} = {body[2 + k][i]!r}; "
                "expected a finite number."
            )
        xywh[:, k] = vals
    bad = (xywh[:, 2] <= 0) | (xywh[:, 3] <= 0)
    if (i := first_true(bad)) is not None:
        raise SchemaError(
            f"{p}: data row {i} (image {body[0][i]!r}) has a box of non-positive size "
            f"w = {xywh[i, 2]!r}, h = {xywh[i, 3]!r}; expected w > 0 and h > 0 "
            f"({int(bad.sum())} such row(s))."
        )
    x0, y0 = xywh[:, 0], xywh[:, 1]
    x1, y1 = x0 + xywh[:, 2], y0 + xywh[:, 3]
    if image_shape is not None:
        hh, ww = image_shape
        out = (x0 < 0) | (y0 < 0) | (x1 > ww) | (y1 > hh)
        if (i := first_true(out)) is not None:
            raise SchemaError(
                f"{p}: data row {i} (image {body[0][i]!r}) has box x {x0[i]:g}..{x1[i]:g}, "
                f"y {y0[i]:g}..{y1[i]:g} outside the {hh} x {ww} image ({int(out.sum())} such row(s))."
            )
    labels = body[1].str.strip()
    canon = {lab: canonical_finding(lab, where=f"{p}, column 'Finding Label'") for lab in labels.unique()}
    renamed = {k: v for k, v in canon.items() if k != v}
    table = pd.DataFrame(dict(zip(BOX_COLUMNS, (body[0].str.strip(), labels.map(canon), x0, y0, x1, y1))))
    notes = tuple(f"renamed finding {k!r} -> {v!r}" for k, v in sorted(renamed.items()))
    return ReadResult(table, ReadReport(str(p), len(body), len(body), notes=notes))
