"""SIIM-ACR Pneumothorax Segmentation (training set): pneumothorax labels and the boxes of its masks.

Citation: Zawacki A, Wu C, Shih G, et al. SIIM-ACR Pneumothorax Segmentation challenge (2019),
https://www.kaggle.com/c/siim-acr-pneumothorax-segmentation; images from ChestX-ray14, 1024 x 1024 DICOM,
masks drawn by radiologists (Filice RW et al., Crowdsourcing pneumothorax annotations using machine learning
annotations on the NIH chest X-ray dataset, J Digit Imaging 33, 490-496 (2020),
doi:10.1007/s10278-019-00299-9).

File: ``train-rle.csv`` (as published; ``.csv`` or gzipped), header ``ImageId, EncodedPixels`` (with the space
before ``EncodedPixels``, as published; either spelling is read), one row per mask (an image with several
pneumothorax regions has several rows) or one row ``-1`` per image without pneumothorax. This is the layout
torchxrayvision's ``SIIM_Pneumothorax_Dataset`` reads (its ``siim-pneumothorax-train-rle.csv.gz``).

RLE convention (the challenge's ``mask_functions.rle2mask``): ``EncodedPixels`` is a list of pairs
``offset length``; pixels are numbered in column-major order (down the first column, then the next: pixel
``k`` is row ``k % 1024``, column ``k // 1024``), and each run starts ``offset`` pixels after the end of the
previous run (the first after pixel 0): run ``i`` covers ``[s_i, s_i + length_i)`` with
``s_i = e_{i-1} + offset_i`` and ``e_i = s_i + length_i`` (``e_0 = 0``). :func:`rle_to_mask` decodes it
(checked against a hand-decoded mask in the tests); a run reaching past the image is refused.

Labels (:func:`load_labels`, source ``siim_radiologists``): ``Pneumothorax`` ``positive`` for an image with
a mask, ``negative`` for ``-1``; ``study_id`` = ``patient_id`` = ``ImageId`` (no patient ids are published).
An image with both ``-1`` and a mask is refused. No uncertain or not-mentioned state.

Boxes (:func:`load_boxes`): the masks of an image are united and split into connected components
(8-connectivity: pixels touching at a corner belong to one component); each component gives one box,
``x_min`` its first column, ``x_max`` one past its last column (same for rows): half-open pixels, ready for
``cxreval localize --boxes``, finding ``Pneumothorax``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from .._typing import PathLike
from ..exceptions import DataUnavailableError, InvalidParameterError, SchemaError
from ..io._read import read_csv_file
from ..labels import validate_label_table
from ..results import ReadReport, ReadResult
from ..schema._boxes import BOX_COLUMNS

__all__ = [
    "load_labels",
    "load_boxes",
]

RLE_FILE = "train-rle.csv"
IMAGE_SIZE = 1024
SOURCE = "siim_radiologists"
_PAGE = "https://www.kaggle.com/c/siim-acr-pneumothorax-segmentation/data"


def _runs(rle: str, shape: tuple[int, int]) -> tuple[np.ndarray, np.ndarray]:
    """The absolute ``[start, end)`` of every run of an ``EncodedPixels`` value (none for ``-1``)."""
    h, w = shape
    text = str(rle).strip()
    if text == "-1":
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    tokens = text.split()
    if not all(t.isascii() and t.lstrip("+-").isdigit() for t in tokens):
        raise SchemaError(f"EncodedPixels {text[:40]!r} is not a list of integers.")
    values = [int(t) for t in tokens]
    if not values or len(values) % 2 or min(values[0::2]) < 0 or min(values[1::2]) <= 0:
        raise SchemaError(f"EncodedPixels {text[:40]!r} is not pairs of an offset (>= 0) and a length (> 0).")
    end = sum(values)  # Python ints: a value beyond 64 bits is a run past the image, not an overflow
    if end > h * w:
        raise SchemaError(f"EncodedPixels {text[:40]!r} runs to pixel {end}, past the {h} x {w} image.")
    nums = np.array(values, dtype=np.int64)
    offsets, lengths = nums[0::2], nums[1::2]
    ends = np.cumsum(offsets + lengths)
    return ends - lengths, ends


def _decode_into(flat: np.ndarray, rle: str, shape: tuple[int, int]) -> None:
    """Set the pixels of ``rle`` in the column-major flat mask ``flat``."""
    for a, b in zip(*_runs(rle, shape)):
        flat[a:b] = True


def rle_to_mask(rle: str, *, shape: tuple[int, int] = (IMAGE_SIZE, IMAGE_SIZE)) -> np.ndarray:
    """Decode one SIIM-ACR ``EncodedPixels`` value (relative offsets, column-major) into a boolean mask.

    Parameters
    ----------
    rle : str
        ``"offset length offset length ..."``; ``"-1"`` is an empty mask.
    shape : (int, int), default=(1024, 1024)
        ``(height, width)`` of the image.

    Returns
    -------
    mask : ndarray of bool, shape ``shape``
        ``mask[row, column]``.

    Raises
    ------
    SchemaError
        Not pairs of non-negative integers (lengths positive), or a run past the last pixel.

    Examples
    --------
    >>> rle_to_mask("1 2 3 1", shape=(3, 3)).astype(int)   # pixels 1, 2 and 2 + 1 + 3 = 6, down the columns
    array([[0, 0, 1],
           [1, 0, 0],
           [1, 0, 0]])
    """
    h, w = shape
    mask = np.zeros(h * w, dtype=bool)
    _decode_into(mask, rle, shape)
    return mask.reshape((h, w), order="F")


def mask_to_boxes(mask: np.ndarray) -> np.ndarray:
    """Half-open boxes ``(x_min, y_min, x_max, y_max)`` of the 8-connected components of a boolean mask.

    Returns
    -------
    boxes : ndarray of int, shape (n_components, 4)
        In the order of :func:`scipy.ndimage.label` (by first pixel, row by row).

    Examples
    --------
    >>> m = np.zeros((4, 6), dtype=bool); m[0:2, 0:2] = True; m[3, 5] = True
    >>> mask_to_boxes(m).tolist()
    [[0, 0, 2, 2], [5, 3, 6, 4]]
    """
    from scipy import ndimage

    m = np.asarray(mask, dtype=bool)
    rows_on, cols_on = np.flatnonzero(m.any(axis=1)), np.flatnonzero(m.any(axis=0))
    if not len(rows_on):
        return np.zeros((0, 4), dtype=np.int64)
    r0, r1, c0, c1 = int(rows_on[0]), int(rows_on[-1]) + 1, int(cols_on[0]), int(cols_on[-1]) + 1
    labels, n = ndimage.label(m[r0:r1, c0:c1], structure=np.ones((3, 3), dtype=int))
    out = np.empty((n, 4), dtype=np.int64)
    for i, (rows, cols) in enumerate(ndimage.find_objects(labels)):
        out[i] = (c0 + cols.start, r0 + rows.start, c0 + cols.stop, r0 + rows.stop)
    return out


def _read(path: PathLike, shape: tuple[int, int] = (IMAGE_SIZE, IMAGE_SIZE)) -> tuple[Path, pd.DataFrame]:
    """The rows of ``train-rle.csv`` (a file or its folder), every ``EncodedPixels`` value checked against an image
    of ``shape`` (what :func:`load_labels` and :func:`load_boxes` both read, so that they accept the same files)."""
    p = Path(path)
    if p.is_dir():
        found = next((p / (RLE_FILE + s) for s in ("", ".gz") if (p / (RLE_FILE + s)).is_file()), None)
        if found is None:
            raise DataUnavailableError(
                f"Folder {str(p)!r} has no {RLE_FILE!r}: download it from {_PAGE} and place it "
                f"in {str(p)!r} under that name."
            )
        p = found
    elif not p.is_file():
        raise DataUnavailableError(
            f"{str(p)!r} does not exist; pass {RLE_FILE} (from {_PAGE}) or its folder."
        )
    df = read_csv_file(
        p,
        error=lambda f, exc: f"Could not read file {str(f)!r} as CSV: {exc}",
        dtype=str,
        keep_default_na=False,
        na_values=[""],
    )
    df.columns = [str(c).strip() for c in df.columns]
    where = f"file {str(p)!r}"
    if "ImageId" not in df.columns or "EncodedPixels" not in df.columns:
        raise SchemaError(
            f"{where} needs the columns 'ImageId, EncodedPixels' (train-rle.csv); columns: "
            f"{list(df.columns)}."
        )
    for c in ("ImageId", "EncodedPixels"):
        miss = df[c].isna().to_numpy()
        if miss.any():
            raise SchemaError(f"Missing {c} in {where}, row {int(np.flatnonzero(miss)[0])}.")
    df["EncodedPixels"] = df["EncodedPixels"].str.strip()
    none = df["EncodedPixels"] == "-1"
    ids = df["ImageId"]
    both = set(ids[none]) & set(ids[~none])
    if both:
        first = next(i for i, v in enumerate(ids) if v in both)
        raise SchemaError(f"Image {ids.iloc[first]!r} in {where} has both '-1' (no pneumothorax) and a mask.")
    for i, rle in zip(np.flatnonzero(~none.to_numpy()), df["EncodedPixels"].to_numpy()[~none.to_numpy()]):
        try:
            _runs(rle, shape)
        except SchemaError as exc:
            raise SchemaError(f"{where}, row {int(i)}, column 'EncodedPixels': {exc}") from None
    return p, df


def load_labels(path: PathLike) -> ReadResult:
    """``Pneumothorax`` of every image of ``train-rle.csv`` (a file or its folder) as a long label table."""
    p, df = _read(path)
    ids = pd.unique(df["ImageId"])
    pos = df.loc[df["EncodedPixels"] != "-1", "ImageId"].unique()
    state = np.where(pd.Index(pos).get_indexer(ids) >= 0, 2, 0).astype(np.int8)
    table = pd.DataFrame(
        {
            "study_id": ids,
            "patient_id": ids,
            "finding": "Pneumothorax",
            "source": SOURCE,
            "state": pd.array(state, dtype="Int8"),
        }
    )
    table = validate_label_table(table, where=f"file {str(p)!r}")
    notes = (
        f"{len(ids):,} images, {int((state == 2).sum()):,} with pneumothorax",
        "patient_id = study_id = ImageId (no patient ids published)",
    )
    return ReadResult(table, ReadReport(str(p), len(df), len(df), notes=notes))


def load_boxes(path: PathLike, *, shape: tuple[int, int] = (IMAGE_SIZE, IMAGE_SIZE)) -> ReadResult:
    """Boxes of the connected components of every image's masks (see the module docstring).

    Returns
    -------
    res : ReadResult
        ``study_id, finding, x_min, y_min, x_max, y_max`` (finding ``Pneumothorax``), images in file order;
        ``res.report.dropped``: the ``-1`` rows (reason ``no mask``).
    """
    if not (
        isinstance(shape, tuple) and len(shape) == 2 and all(isinstance(v, int) and v > 0 for v in shape)
    ):
        raise InvalidParameterError(
            f"The 'shape' parameter of load_boxes must be (height, width) in pixels. Got {shape!r} instead."
        )
    p, df = _read(path, shape)
    rows = []
    masked = df[df["EncodedPixels"] != "-1"]
    for image, g in masked.groupby("ImageId", sort=False):
        flat = np.zeros(shape[0] * shape[1], dtype=bool)
        for rle in g["EncodedPixels"]:
            _decode_into(flat, rle, shape)  # (every value checked by _read)
        rows += [
            (image, "Pneumothorax", *map(float, b)) for b in mask_to_boxes(flat.reshape(shape, order="F"))
        ]
    boxes = pd.DataFrame(rows, columns=list(BOX_COLUMNS))
    drop = np.flatnonzero((df["EncodedPixels"] == "-1").to_numpy())
    dropped = pd.DataFrame(
        {"row": drop, "reason": "no mask", "value": df["ImageId"].to_numpy(dtype=object)[drop]}
    )
    notes = (
        f"{len(boxes):,} boxes (connected components, 8-connectivity) of {len(masked):,} masks on "
        f"{masked['ImageId'].nunique():,} images",
    )
    return ReadResult(boxes, ReadReport(str(p), len(df), len(masked), dropped=dropped, notes=notes))
