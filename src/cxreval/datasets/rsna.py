"""RSNA Pneumonia Detection Challenge (stage 2 training set): labels and radiologists' boxes.

Citation: Shih G, Wu CC, Halabi SS, et al. Augmenting the National Institutes of Health chest radiograph
dataset with expert annotations of possible pneumonia. Radiology: Artificial Intelligence 1(1), e180041
(2019), doi:10.1148/ryai.2019180041. Data: https://www.kaggle.com/c/rsna-pneumonia-detection-challenge
(26,684 frontal radiographs of ChestX-ray14, 1024 x 1024 DICOM, read by radiologists of the RSNA and STR).

Files (one folder, as published; ``.csv`` or zipped/gzipped):

- ``stage_2_train_labels.csv``: ``patientId, x, y, width, height, Target``, one row per box (``Target`` 1,
  ``x, y`` the box's top-left corner in pixels, ``width, height`` its size) or one row without coordinates
  per image without a box (``Target`` 0);
- ``stage_2_detailed_class_info.csv``: ``patientId, class``, the image's class on each of its rows:
  ``Lung Opacity`` (the images with boxes), ``No Lung Opacity / Not Normal`` or ``Normal``.

These layouts are those of the challenge's data page and of torchxrayvision's ``RSNA_Pneumonia_Dataset``,
which reads ``stage_2_train_labels.csv`` (its ``kaggle_stage_2_train_labels.csv.zip``) with these columns.

Labels (:func:`load_labels`, source ``rsna_radiologists``): the unit is the image, ``study_id`` =
``patient_id`` = ``patientId`` (one image per id). ``Lung Opacity`` and ``Pneumonia`` are ``positive`` when the
image has a box (``Target`` 1: an opacity suspicious for pneumonia; the challenge's target, read as both
findings as torchxrayvision does) and ``negative`` otherwise; ``No Finding`` is ``positive`` for ``Normal``
and ``negative`` for the two other classes. So ``No Lung Opacity / Not Normal`` — an abnormal image without
pneumonia-like opacity — is its own state combination (negative opacity, negative No Finding), counted in
the read report's notes. There is no uncertain or not-mentioned state. A ``Target`` that disagrees with the
class (``Lung Opacity`` without a box or a box on another class) is refused, naming the row.

Boxes (:func:`load_boxes`): ``study_id, finding, x_min, y_min, x_max, y_max`` with finding ``Lung Opacity``,
``x_min = x``, ``y_min = y``, ``x_max = x + width``, ``y_max = y + height`` — half-open pixels of the
1024 x 1024 image (area ``width * height``), ready for ``cxreval localize --boxes``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from .._typing import PathLike
from ..exceptions import DataUnavailableError, SchemaError
from ..io._read import read_csv_file
from ..labels import validate_label_table
from ..results import ReadReport, ReadResult
from ..schema._boxes import BOX_COLUMNS
from ..schema._columns import check_columns, first_true

__all__ = [
    "load_labels",
    "load_boxes",
]

LABELS_FILE = "stage_2_train_labels.csv"
CLASS_FILE = "stage_2_detailed_class_info.csv"
LABEL_COLUMNS: tuple[str, ...] = ("patientId", "x", "y", "width", "height", "Target")
CLASS_COLUMNS: tuple[str, ...] = ("patientId", "class")
CLASSES: tuple[str, ...] = ("Lung Opacity", "No Lung Opacity / Not Normal", "Normal")
SOURCE = "rsna_radiologists"
IMAGE_SIZE = 1024
"""Width and height of every image, in pixels."""
_PAGE = "https://www.kaggle.com/c/rsna-pneumonia-detection-challenge/data"


def _find(path: PathLike, name: str) -> Path:
    p = Path(path)
    if p.is_file():
        if name == LABELS_FILE:
            return p
        p = p.parent
    if not p.is_dir():
        raise DataUnavailableError(
            f"{str(p)!r} does not exist; pass the folder holding {LABELS_FILE} and "
            f"{CLASS_FILE} (from {_PAGE})."
        )
    for suffix in ("", ".zip", ".gz"):
        if (p / (name + suffix)).is_file():
            return p / (name + suffix)
    raise DataUnavailableError(
        f"Folder {str(p)!r} has no {name!r}: download it from {_PAGE} and place it in "
        f"{str(p)!r} under that name."
    )


def _read(p: Path, columns: tuple[str, ...]) -> pd.DataFrame:
    df = read_csv_file(
        p,
        error=lambda f, exc: f"Could not read file {str(f)!r} as CSV: {exc}",
        dtype={"patientId": str, "class": str},
        keep_default_na=False,
        na_values=[""],
    )
    check_columns(df, columns, where=f"file {str(p)!r}")
    miss = df["patientId"].isna().to_numpy()
    if miss.any():
        raise SchemaError(f"Missing patientId in file {str(p)!r}, row {int(np.flatnonzero(miss)[0])}.")
    return df


def _boxes_of(df: pd.DataFrame, where: str) -> tuple[np.ndarray, np.ndarray]:
    """``Target`` (0/1) and the coordinates ``(n, 4)`` of every row, checked."""
    target = pd.to_numeric(df["Target"], errors="coerce").to_numpy(dtype=float)
    bad = ~np.isin(target, (0.0, 1.0))
    if (i := first_true(bad)) is not None:
        raise SchemaError(f"Target {df['Target'].iloc[i]!r} in {where}, row {i} is not 0 or 1.")
    xywh = df[["x", "y", "width", "height"]].apply(pd.to_numeric, errors="coerce").to_numpy(dtype=float)
    has = np.isfinite(xywh).all(axis=1)
    wrong = (target == 1) & (~has | (xywh[:, 2] <= 0) | (xywh[:, 3] <= 0)) | (target == 0) & np.isfinite(
        xywh
    ).any(axis=1)
    if (i := first_true(wrong)) is not None:
        raise SchemaError(
            f"Row {i} of {where}: Target {int(target[i])} with x, y, width, height "
            f"{xywh[i].tolist()}; a box row (Target 1) needs a positive width and height, a row "
            f"without a box (Target 0) blank coordinates."
        )
    return target.astype(np.int8), xywh


def load_labels(path: PathLike) -> ReadResult:
    """The challenge's labels as a long label table (see the module docstring).

    Parameters
    ----------
    path : path
        The folder holding ``stage_2_train_labels.csv`` and ``stage_2_detailed_class_info.csv`` (or the
        labels file, with the class file beside it).

    Returns
    -------
    res : ReadResult
        ``res.table``: ``Lung Opacity``, ``Pneumonia`` and ``No Finding`` of every image (source
        ``rsna_radiologists``); ``res.report``: rows read (of the labels file), images, the class counts.

    Raises
    ------
    DataUnavailableError
        A missing file (named, with where to get it and where to place it).
    SchemaError
        A malformed row, an unknown class, an image with two classes, a class that disagrees with ``Target``.
    """
    lp, cp = _find(path, LABELS_FILE), _find(path, CLASS_FILE)
    lab, cls = _read(lp, LABEL_COLUMNS), _read(cp, CLASS_COLUMNS)
    target, _ = _boxes_of(lab, f"file {str(lp)!r}")
    where_c = f"file {str(cp)!r}"
    unknown = ~cls["class"].isin(CLASSES).to_numpy()
    if (i := first_true(unknown)) is not None:
        raise SchemaError(
            f"Class {cls['class'].iloc[i]!r} in {where_c}, row {i}, column 'class' is not one of "
            f"{list(CLASSES)}."
        )
    one = cls.drop_duplicates()
    two = one["patientId"].duplicated()
    if two.any():
        raise SchemaError(f"Image {one['patientId'][two].iloc[0]!r} has two classes in {where_c}.")
    class_of = one.set_index("patientId")["class"]
    ids = pd.unique(lab["patientId"])
    pos = pd.Series(target, index=lab["patientId"]).groupby(level=0, sort=False).max().reindex(ids).to_numpy()
    img_class = class_of.reindex(ids).to_numpy(dtype=object)
    if pd.isna(img_class).any():
        raise SchemaError(
            f"Image {ids[int(np.flatnonzero(pd.isna(img_class))[0])]!r} of {str(lp)!r} has no class in "
            f"{where_c}."
        )
    extra = sorted(set(class_of.index) - set(ids))
    if extra:
        raise SchemaError(
            f"Image {extra[0]!r} of {where_c} is not in {str(lp)!r} ({len(extra)} such images)."
        )
    mismatch = (pos == 1) != (img_class == "Lung Opacity")
    if (i := first_true(mismatch)) is not None:
        raise SchemaError(
            f"Image {ids[i]!r}: class {img_class[i]!r} in {where_c} but Target {int(pos[i])} in "
            f"{str(lp)!r}; 'Lung Opacity' images are those with a box (Target 1)."
        )
    opacity = np.where(pos == 1, 2, 0).astype(np.int8)
    normal = np.where(img_class == "Normal", 2, 0).astype(np.int8)
    findings = ("Lung Opacity", "Pneumonia", "No Finding")
    states = np.stack([opacity, opacity, normal], axis=1)
    table = pd.DataFrame(
        {
            "study_id": np.repeat(ids, 3),
            "patient_id": np.repeat(ids, 3),
            "finding": np.tile(np.asarray(findings, dtype=object), len(ids)),
            "source": SOURCE,
            "state": pd.array(states.ravel(), dtype="Int8"),
        }
    )
    table = validate_label_table(table, where=f"file {str(lp)!r}")
    counts = pd.Series(img_class).value_counts()
    notes = (
        f"{len(ids):,} images; classes: " + ", ".join(f"{c} {int(counts.get(c, 0)):,}" for c in CLASSES),
        "'No Lung Opacity / Not Normal' images: Lung Opacity and Pneumonia negative, No Finding negative",
        "patient_id = study_id = patientId (one image per id)",
    )
    return ReadResult(table, ReadReport(str(lp), len(lab), len(lab), notes=notes))


def load_boxes(path: PathLike) -> ReadResult:
    """The radiologists' boxes in cxreval's box table: ``study_id, finding, x_min, y_min, x_max, y_max``.

    Parameters
    ----------
    path : path
        The folder holding ``stage_2_train_labels.csv`` (or that file).

    Returns
    -------
    res : ReadResult
        One row per box (finding ``Lung Opacity``, half-open pixels of the 1024 x 1024 image), in file order;
        ``res.report.dropped`` lists the rows without a box (``Target`` 0), reason ``no box``.
    """
    lp = _find(path, LABELS_FILE)
    lab = _read(lp, LABEL_COLUMNS)
    target, xywh = _boxes_of(lab, f"file {str(lp)!r}")
    keep = target == 1
    x, y, w, h = (xywh[keep, j] for j in range(4))
    boxes = pd.DataFrame(
        dict(
            zip(
                BOX_COLUMNS,
                (lab["patientId"].to_numpy(dtype=object)[keep], "Lung Opacity", x, y, x + w, y + h),
            )
        )
    )
    out = (
        (boxes["x_min"] < 0)
        | (boxes["y_min"] < 0)
        | (boxes["x_max"] > IMAGE_SIZE)
        | (boxes["y_max"] > IMAGE_SIZE)
    )
    notes = [f"{len(boxes):,} boxes on {boxes['study_id'].nunique():,} images"]
    if out.any():
        notes.append(
            f"{int(out.sum())} boxes reach outside the {IMAGE_SIZE} x {IMAGE_SIZE} image (kept as read)"
        )
    drop = np.flatnonzero(~keep)
    dropped = pd.DataFrame(
        {"row": drop, "reason": "no box", "value": lab["patientId"].to_numpy(dtype=object)[drop]}
    )
    return ReadResult(
        boxes, ReadReport(str(lp), len(lab), int(keep.sum()), dropped=dropped, notes=tuple(notes))
    )
