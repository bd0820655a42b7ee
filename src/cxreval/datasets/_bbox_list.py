"""ChestX-ray14's radiologist boxes (``BBox_List_2017.csv``) as ``study_id, finding`` rows, for the audit."""

from __future__ import annotations

import importlib

import numpy as np
import pandas as pd

from .._typing import PathLike
from ..exceptions import SchemaError
from ..findings import CHESTXRAY14, canonical_finding
from ..io._read import read_csv_file
from ..schema._columns import check_columns
from ._fetch import metadata_path

__all__ = ["BBOX_FILE", "count_boxes"]

BBOX_FILE = "BBox_List_2017.csv.gz"


def _read_boxes(bbox_path: PathLike | None, cache_dir: PathLike | None) -> tuple[pd.DataFrame, str, str]:
    """``study_id, finding`` per box: via :mod:`cxreval.datasets.nih_boxes` when present, else the CSV."""
    try:
        boxes_mod = importlib.import_module("cxreval.datasets.nih_boxes")
    except ImportError:
        boxes_mod = None
    reader = next(
        (getattr(boxes_mod, n) for n in ("read_nih_boxes", "read_bbox_list") if hasattr(boxes_mod, n)), None
    )
    if reader is not None:
        p = metadata_path(BBOX_FILE, cache_dir=cache_dir, path=bbox_path)
        res = reader(p)
        table = res.table if hasattr(res, "table") else res
        out = pd.DataFrame(
            {
                "study_id": table["study_id"].astype("str").to_numpy(),
                "finding": table["finding"].astype("str").to_numpy(),
            }
        )
        return out, str(p), f"boxes read with cxreval.datasets.nih_boxes.{reader.__name__}"
    p = metadata_path(BBOX_FILE, cache_dir=cache_dir, path=bbox_path)
    return (
        count_boxes(p),
        str(p),
        "boxes counted directly from the BBox_List CSV (nih_boxes reader not available)",
    )


def count_boxes(path: PathLike) -> pd.DataFrame:
    """``study_id, finding`` for every row of a ``BBox_List_2017.csv[.gz]`` (canonical finding names).

    Raises
    ------
    SchemaError
        Missing columns, missing image name, or a finding that is not a ChestX-ray14 finding.
    """
    where = f"file {str(path)!r}"
    df = read_csv_file(
        path,
        error=lambda f, exc: f"Could not read {str(f)!r} as a BBox_List CSV: {exc}",
        dtype=str,
        keep_default_na=False,
        na_values=[""],
    )
    check_columns(df, ("Image Index", "Finding Label"), where=where)
    if df.empty:
        raise SchemaError(f"{path} has no rows (a BBox_List file with a header and no box).")
    miss = df["Image Index"].isna().to_numpy()
    if miss.any():
        raise SchemaError(
            f"Missing image name in {where}, row {int(np.flatnonzero(miss)[0])}, column 'Image Index'."
        )
    names = {}
    for i, v in zip(*np.unique(df["Finding Label"].astype(str), return_index=True)[::-1]):
        canon = canonical_finding(v, where=f"{where}, row {int(i)}, column 'Finding Label'")
        if canon not in CHESTXRAY14:
            raise SchemaError(
                f"Box label {v!r} in {where}, row {int(i)}, column 'Finding Label' is not a "
                f"ChestX-ray14 finding."
            )
        names[v] = canon
    return pd.DataFrame(
        {
            "study_id": df["Image Index"].astype("str").to_numpy(),
            "finding": df["Finding Label"].astype(str).map(names).astype("str").to_numpy(),
        }
    )
