"""VinDr-CXR reader labels and boxes (``vinbigdata-train.csv.gz``) as cxreval's long tables.

VinDr-CXR [1]_ (the Kaggle "VinBigData Chest X-ray Abnormalities Detection" training set,
https://www.kaggle.com/c/vinbigdata-chest-xray-abnormalities-detection) holds 15,000 posterior–anterior
chest radiographs, each read independently by 3 of 17 radiologists (``R1`` … ``R17``), who drew a box
for every one of 14 local findings they saw, or marked the image ``No finding``. The file ships in the
``torchxrayvision`` wheel (``cxreval data fetch``) with columns
``image_id, class_name, class_id, rad_id, x_min, y_min, x_max, y_max`` (one row per box; ``No finding``
rows have blank coordinates).

Label encoding
--------------
:func:`read_vindr` returns the long label table with **one source per reader id** (``'R1'`` … ``'R17'``).
For every image and every reader who read it, each finding of :data:`cxreval.findings.VINDR` (the 14 local
findings plus ``No Finding``) is

- ``positive`` when that reader drew at least one box of that class on the image (for ``No Finding``:
  marked the image ``No finding``),
- ``negative`` otherwise.

There is no ``uncertain`` state and no missing label: a reader who read an image labels all 15 findings;
a reader who did not read an image contributes no rows for it. Several boxes of one class by one reader
(6,640 rows of the released file) make one positive label; the boxes are kept by :func:`read_vindr_boxes`.

VinDr-CXR has no patient identifiers: ``patient_id`` is set to ``image_id``, so a patient-level
bootstrap resamples images. Say so when reporting confidence intervals on this data.

Reader caveat
-------------
Readers did not read a random sample of images. In the released training labels ``R1``–``R7`` mark
``No finding`` on every image they read (``R2`` draws one box on one image), and ``R8``, ``R9`` and
``R10`` read almost every abnormal image (each about 6,100–6,600 images, 4,146 of them with findings).
The assignment is by blocks: all 4,146 images on which R8–R10 mark a finding were read by exactly
R8 + R9 + R10; 247 more abnormal images were read by three of R11–R17; of the images with any reader
from R1–R7, one is abnormal. Any per-reader statistic (agreement, Dawid–Skene confusion matrices,
MACE competence) therefore mostly reflects *which images a reader was given*, not how well the reader
reads. With ``cxreval fuse --methods ds,mace`` on all 17 readers (15 findings): Dawid–Skene's
sensitivity ``π[POS, POS]`` is 0 for R1–R7, a median of 0.74–0.82 for R8–R10 and 0.05–0.20 for
R11–R17, its specificity 1.0 for R1–R7 and R11–R17 and 0.97–0.99 for R8–R10; MACE's competence is 0 for
R1–R7 and R11–R17 on every local finding and 0.09–0.20 (median) for R8–R10. For an image read only by
readers who never mark anything, both models' posterior equals their prior (all-negative votes carry
no information about a reader who always votes negative), so these images stay negative only because
the prior of each finding is below 1/2.

Boxes
-----
:func:`read_vindr_boxes` returns ``study_id, finding, source, x_min, y_min, x_max, y_max`` in pixels of the
original DICOM, half-open (area ``(x_max - x_min) * (y_max - y_min)``); boxes with a non-positive width or
height are dropped and listed in the report.

References
----------
.. [1] H. Q. Nguyen et al., "VinDr-CXR: An open dataset of chest X-rays with radiologist's annotations",
   Scientific Data 9, 429 (2022). https://doi.org/10.1038/s41597-022-01498-w

Examples
--------
>>> res = read_vindr()                                    # doctest: +SKIP
>>> res.table.groupby("source")["study_id"].nunique()["R8"]  # doctest: +SKIP
6582
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd

from .._typing import PathLike
from ..exceptions import SchemaError
from ..findings import VINDR, canonical_finding
from ..io._read import read_csv_file
from ..labels import validate_label_table
from ..results import ReadReport, ReadResult
from ..schema._boxes import BOX_COORDS, SOURCED_BOX_COLUMNS
from ..schema._columns import check_columns, first_true
from ._fetch import metadata_path

__all__ = [
    "read_vindr",
]

VINDR_FILE = "vinbigdata-train.csv.gz"
VINDR_COLUMNS: tuple[str, ...] = (
    "image_id",
    "class_name",
    "class_id",
    "rad_id",
    "x_min",
    "y_min",
    "x_max",
    "y_max",
)
_READER_RE = re.compile(r"^R(\d+)$")


def _load(path: PathLike | None, cache_dir: PathLike | None) -> tuple[Path, pd.DataFrame, np.ndarray]:
    p = metadata_path(VINDR_FILE, cache_dir=cache_dir, path=path)
    where = f"file {str(p)!r}"
    df = read_csv_file(
        p,
        error=lambda f, exc: f"Could not read {where} as CSV: {exc}",
        dtype={"image_id": str, "class_name": str, "rad_id": str},
    )
    check_columns(df, VINDR_COLUMNS, where=where)
    for col in ("image_id", "class_name", "rad_id"):
        miss = df[col].isna().to_numpy()
        if (i := first_true(miss)) is not None:
            raise SchemaError(
                f"Missing value in {where}, row {i}, column {col!r}; every row needs "
                f"image_id, class_name and rad_id."
            )
    bad = ~df["rad_id"].str.match(_READER_RE)
    if bad.any():
        i = int(np.flatnonzero(bad.to_numpy())[0])
        raise SchemaError(
            f"Reader id {df['rad_id'].iloc[i]!r} in {where}, row {i}, column 'rad_id' is not of "
            f"the form 'R<number>' (expected 'R1' ... 'R17')."
        )
    names = pd.unique(df["class_name"])
    canon = {n: canonical_finding(n, where=f"{where}, column 'class_name'") for n in names}
    outside = [n for n, c in canon.items() if c not in VINDR]
    if outside:
        raise SchemaError(
            f"Class {outside[0]!r} in {where}, column 'class_name' is not a VinDr-CXR finding; "
            f"expected one of {list(VINDR)} (or their VinDr spellings)."
        )
    codes = (
        np.array([VINDR.index(canon[n]) for n in df["class_name"]], dtype=np.int64)
        if len(df)
        else np.zeros(0, dtype=np.int64)
    )
    return p, df, codes


def _reader_order(readers: np.ndarray) -> np.ndarray:
    """Sort key of reader ids: numeric (R2 < R10)."""
    return np.array([int(_READER_RE.match(r).group(1)) for r in readers])  # type: ignore[union-attr]


def read_vindr(path: PathLike | None = None, *, cache_dir: PathLike | None = None) -> ReadResult:
    """Read VinDr-CXR's per-reader labels into the long label table (one source per reader).

    Parameters
    ----------
    path : path, optional
        A copy of ``vinbigdata-train.csv`` (``.gz`` or plain); default the cached file
        (``cxreval data fetch``).
    cache_dir : path, optional
        Cache directory, see :func:`cxreval.datasets.resolve_cache_dir`.

    Returns
    -------
    res : ReadResult
        ``res.table`` has columns ``study_id, patient_id, finding, source, state``: one row per
        (image, reader who read it, finding of :data:`~cxreval.findings.VINDR`), ``state`` positive
        (2) when the reader drew that class on the image and negative (0) otherwise; ``patient_id``
        equals ``study_id`` (VinDr has no patient ids). Rows are sorted by image id, reader number and
        finding order. ``res.report`` counts rows read and notes repeated boxes and any reader who marked
        both ``No finding`` and a finding on the same image (kept as read).

    Raises
    ------
    DataUnavailableError
        The file is neither given nor cached.
    SchemaError
        A missing column or value, a reader id not of the form ``R<n>``, or a class outside VinDr's 15.
    """
    p, df, codes = _load(path, cache_dir)
    n_read = len(df)
    pairs = df[["image_id", "rad_id"]].drop_duplicates()
    img = pairs["image_id"].to_numpy(dtype=object)
    rad = pairs["rad_id"].to_numpy(dtype=object)
    order = np.lexsort((_reader_order(rad), img))
    img, rad = img[order], rad[order]
    k = len(VINDR)
    pair_index = pd.MultiIndex.from_arrays([img, rad])
    row_pair = pair_index.get_indexer(
        pd.MultiIndex.from_arrays([df["image_id"].to_numpy(), df["rad_id"].to_numpy()])
    )
    states = np.zeros((len(img), k), dtype=np.int8)
    states[row_pair, codes] = 2
    table = pd.DataFrame(
        {
            "study_id": np.repeat(img, k),
            "patient_id": np.repeat(img, k),
            "finding": np.tile(np.asarray(VINDR, dtype=object), len(img)),
            "source": np.repeat(rad, k),
            "state": pd.array(states.ravel(), dtype="Int8"),
        }
    )
    table = validate_label_table(table, where=f"file {str(p)!r}")
    notes = []
    n_repeat = int(pd.DataFrame({"r": row_pair, "c": codes}).duplicated().sum())
    if n_repeat:
        notes.append(
            f"{n_repeat} rows repeat an (image, reader, finding) with another box; "
            f"each such finding is one positive label"
        )
    nf = VINDR.index("No Finding")
    both = int(((states[:, nf] == 2) & (np.delete(states, nf, axis=1) == 2).any(axis=1)).sum())
    if both:
        notes.append(f"{both} (image, reader) pairs mark both 'No finding' and a finding; kept as read")
    notes.append("patient_id = image_id: VinDr-CXR has no patient identifiers")
    return ReadResult(table, ReadReport(str(p), n_read, n_read, notes=tuple(notes)))


def read_vindr_boxes(path: PathLike | None = None, *, cache_dir: PathLike | None = None) -> ReadResult:
    """Read VinDr-CXR's reader boxes in the box schema: ``study_id, finding, source, x_min, y_min, x_max, y_max``.

    The columns are :data:`cxreval.schema.SOURCED_BOX_COLUMNS` (``source`` is the reader id),
    so the table can be scored by ``cxreval localize`` (``--boxes vinbigdata-train.csv.gz``) and
    :func:`cxreval.localization.evaluate_heatmaps`.

    ``No finding`` rows carry no box and are not boxes; they are counted in the report as
    ``no finding (no box)``. Boxes with missing coordinates or non-positive width/height are dropped
    with their reason. Coordinates are pixels of the original image, half-open.

    Returns
    -------
    res : ReadResult
        One row per box, in file order; ``res.report.dropped`` lists every row not returned.
    """
    p, df, codes = _load(path, cache_dir)
    coords = df[list(BOX_COORDS)].apply(pd.to_numeric, errors="coerce").to_numpy(float)
    nofind = codes == VINDR.index("No Finding")
    missing = ~np.isfinite(coords).all(axis=1)
    degenerate = ~missing & ((coords[:, 2] <= coords[:, 0]) | (coords[:, 3] <= coords[:, 1]))
    reasons = np.full(len(df), "", dtype=object)
    reasons[~nofind & degenerate] = "non-positive box width or height"
    reasons[~nofind & missing] = "missing box coordinate"
    reasons[nofind] = "no finding (no box)"
    keep = reasons == ""
    drop_idx = np.flatnonzero(~keep)
    dropped = pd.DataFrame(
        {
            "row": drop_idx,
            "reason": reasons[drop_idx],
            "value": df["class_name"].to_numpy(dtype=object)[drop_idx],
        }
    )
    boxes = pd.DataFrame(
        dict(
            zip(
                SOURCED_BOX_COLUMNS,
                (
                    df["image_id"].to_numpy(dtype=object)[keep],
                    np.asarray(VINDR, dtype=object)[codes[keep]],
                    df["rad_id"].to_numpy(dtype=object)[keep],
                    *(coords[keep, j] for j in range(4)),
                ),
            )
        )
    )
    return ReadResult(
        boxes.reset_index(drop=True), ReadReport(str(p), len(df), int(keep.sum()), dropped=dropped)
    )
