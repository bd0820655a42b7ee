"""Find radiographs and read them at their full bit depth.

:func:`list_images` turns ``--images DIR|LIST`` into :class:`ImageItem` rows (an id and a path);
:func:`read_image` returns the stored pixel values unchanged (no scaling, no 8-bit conversion) together
with the largest value the file's bit depth allows, which is what the model-specific scaling in
:mod:`.preprocess` divides by.

Formats
-------
* PNG, 8 or 16 bits per sample, greyscale (``L``, ``I;16``) or colour (``RGB``, ``RGBA``, ``LA``): the maximum
  is ``2**bit_depth - 1`` from the PNG header (255 or 65535). Pillow cannot read 16-bit colour PNGs without
  reducing them to 8 bits, so such files are reported as an error instead of being squashed silently.
* JPEG (8-bit, greyscale or colour; CMYK and YCbCr are converted to RGB by Pillow first): maximum 255.
* TIFF (unsigned integer samples, via tifffile): maximum from the dtype (255 or 65535).
* DICOM (``.dcm``, ``.dicom``, or any file with the ``DICM`` preamble; needs ``pip install pydicom``):
  the stored values of ``pixel_array``; maximum ``2**BitsStored - 1``. With ``dicom_window='voi'`` the
  file's VOI LUT or window (centre/width) is applied first (pydicom's ``apply_voi_lut``), as
  ``torchxrayvision.utils.read_xray_dcm(voi_lut=True)`` does. ``MONOCHROME1`` (bright = low attenuation)
  is inverted to ``MONOCHROME2`` as ``max - value``. Signed pixel data (``PixelRepresentation = 1``) is
  shifted by ``2**(BitsStored - 1)`` into ``[0, max]``. Other photometric interpretations are an error.

Image ids
---------
A folder is searched recursively; an image's id is its path relative to the folder with ``/``
separators (``00013118_008.png`` for a flat NIH folder, as in ``BBox_List_2017``). A LIST is a text file
with one path per line (relative paths are relative to the list's folder; blank lines and lines starting
with ``#`` are ignored) or a CSV with a ``path`` column and an optional ``study_id`` column; the id is
``study_id`` when given, else the path as written.

Examples
--------
>>> import numpy as np, tempfile, pathlib
>>> from PIL import Image
>>> d = pathlib.Path(tempfile.mkdtemp())
>>> Image.fromarray(np.array([[0, 4095], [65535, 7]], dtype=np.uint16)).save(d / "a.png")
>>> img = read_image(d / "a.png")
>>> img.pixels.tolist(), img.max_value, img.bit_depth
([[0, 4095], [65535, 7]], 65535, 16)
>>> [it.study_id for it in list_images(d).items]
['a.png']
"""

from __future__ import annotations

import os
import re
import struct
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from .._typing import PathLike
from .._validation import check_choice
from ..exceptions import DataUnavailableError, SchemaError

__all__ = ["exc_text", "IMAGE_SUFFIXES", "DICOM_WINDOWS", "ImageItem", "ImageList", "RawImage", "ImageReadError",
           "list_images", "read_image", "is_dicom", "pydicom_available"]


def exc_text(exc: BaseException) -> str:
    """An exception as one line for an error message or a report cell: ``Type: message``.

    A multi-line message (a TorchScript traceback, a YAML error with its excerpt, a list of state_dict
    mismatches) is shortened: a traceback to its last line, a YAML error to its problem and position,
    anything else joined with ``; ``.
    """
    mark, problem = getattr(exc, "problem_mark", None), getattr(exc, "problem", None)
    if problem is not None:
        at = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        return f"{type(exc).__name__}: {problem}{at}"
    lines = [x.strip() for x in str(exc).splitlines() if x.strip()]
    if any(x.startswith("Traceback") for x in lines):
        lines = lines[-1:]
        if re.match(r"[A-Za-z_.]+(Error|Exception): ", lines[0]):  # the last line names its type already
            return lines[0]
    return f"{type(exc).__name__}: {'; '.join(lines)}"

IMAGE_SUFFIXES: tuple[str, ...] = (".png", ".jpg", ".jpeg", ".tif", ".tiff", ".dcm", ".dicom")
"""File name suffixes (case-insensitive) taken from an image folder."""

DICOM_WINDOWS: tuple[str, ...] = ("none", "voi")
"""``none``: stored values (torchxrayvision's default); ``voi``: apply the file's VOI LUT / window first."""


class ImageReadError(SchemaError):
    """One image cannot be read; the run records it in the read report and carries on."""


@dataclass(frozen=True)
class ImageItem:
    """One image to predict: its id (``study_id`` in the outputs) and its file."""

    study_id: str
    path: Path


@dataclass(frozen=True)
class ImageList:
    """The images found, plus the files that were skipped and why (never dropped silently)."""

    items: tuple[ImageItem, ...]
    source: str
    skipped: tuple[tuple[str, str], ...] = field(default=())   # (path, reason)


@dataclass(frozen=True)
class RawImage:
    """Stored pixel values of one image.

    Attributes
    ----------
    pixels : numpy.ndarray
        ``(H, W)`` or ``(H, W, C)`` integer values as stored (after DICOM windowing / MONOCHROME1 inversion).
    max_value : int
        The largest value the bit depth allows (255, 65535, ``2**BitsStored - 1``).
    bit_depth : int
    channels : int
    format : str
        ``png``, ``jpeg``, ``tiff`` or ``dicom``.
    photometric : str
        ``MONOCHROME1`` / ``MONOCHROME2`` for DICOM (before inversion), the Pillow mode otherwise.
    """

    pixels: np.ndarray
    max_value: int
    bit_depth: int
    channels: int
    format: str
    photometric: str = ""


def pydicom_available() -> bool:
    try:
        import pydicom  # noqa: F401
    except ImportError:
        return False
    return True


def is_dicom(path: PathLike) -> bool:
    """True for a ``.dcm``/``.dicom`` name or a file with the ``DICM`` marker at byte 128."""
    p = Path(path)
    if p.suffix.lower() in (".dcm", ".dicom"):
        return True
    try:
        with open(p, "rb") as fh:
            head = fh.read(132)
    except OSError:
        return False
    return len(head) == 132 and head[128:132] == b"DICM"


def _walk(folder: Path) -> tuple[list[ImageItem], list[tuple[str, str]]]:
    items, skipped = [], []
    for root, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for f in sorted(files):
            p = Path(root) / f
            if f.startswith("."):
                continue
            if p.suffix.lower() in IMAGE_SUFFIXES:
                items.append(ImageItem(p.relative_to(folder).as_posix(), p))
            else:
                skipped.append((str(p), f"suffix {p.suffix or '(none)'!r} is not one of {list(IMAGE_SUFFIXES)}"))
    return items, skipped


def _read_list(path: Path) -> list[ImageItem]:
    base = path.parent
    if path.suffix.lower() == ".csv":
        try:
            df = pd.read_csv(path, dtype=str, keep_default_na=False)
        except (OSError, ValueError) as exc:
            raise SchemaError(f"images={str(path)!r}: cannot be read as a CSV ({exc_text(exc)}).") from exc
        if "path" not in df.columns:
            raise SchemaError(f"images={str(path)!r}: a CSV image list needs a 'path' column (and optionally "
                              f"'study_id'); its columns are {list(df.columns)}.")
        paths = df["path"].tolist()
        ids = df["study_id"].tolist() if "study_id" in df.columns else paths
        rows = list(zip(ids, paths))
    else:
        try:
            lines = path.read_text().splitlines()
        except (OSError, UnicodeDecodeError) as exc:
            raise SchemaError(f"images={str(path)!r}: cannot be read as a text list of image paths "
                              f"({exc_text(exc)}).") from exc
        rows = [(s, s) for s in (ln.strip() for ln in lines) if s and not s.startswith("#")]
    items = []
    for i, (sid, p) in enumerate(rows):
        if not str(p).strip() or not str(sid).strip():
            raise SchemaError(f"images={str(path)!r}: row {i} has an empty path or study_id.")
        q = Path(p).expanduser()
        items.append(ImageItem(str(sid).strip(), q if q.is_absolute() else base / q))
    return items


def list_images(images: str | os.PathLike[str] | Sequence[str | os.PathLike[str]]) -> ImageList:
    """The images of a folder (recursive), a list file (text or CSV), or a sequence of files.

    Raises
    ------
    SchemaError
        If the folder or list does not exist, holds no image, or two images get the same id.
    """
    if isinstance(images, (str, os.PathLike)):
        src = Path(images).expanduser()
        if src.is_dir():
            found, skipped = _walk(src)
        elif src.is_file():
            found, skipped = _read_list(src), []
        else:
            raise SchemaError(f"images={str(src)!r} does not exist; give a folder of images or a list file.")
        source = str(src)
    else:
        found = [ImageItem(Path(p).name, Path(p)) for p in images]
        skipped, source = [], "sequence of paths"
    if not found:
        raise SchemaError(f"images={str(source)!r}: no image found (suffixes {list(IMAGE_SUFFIXES)}"
                          + (f"; {len(skipped)} other file(s) skipped" if skipped else "") + ").")
    ids = pd.Series([it.study_id for it in found])
    dup = ids[ids.duplicated()].unique().tolist()
    if dup:
        raise SchemaError(f"images={str(source)!r}: image ids must be unique; {dup[:5]} occur more than once.")
    return ImageList(tuple(found), source, tuple(skipped))


def _png_header(path: Path) -> tuple[int, int] | None:
    """(bit depth, colour type) from a PNG's IHDR chunk, or None if the file is not a PNG."""
    with open(path, "rb") as fh:
        head = fh.read(26)
    if len(head) < 26 or head[:8] != b"\x89PNG\r\n\x1a\n" or head[12:16] != b"IHDR":
        return None
    return struct.unpack(">BB", head[24:26])


def _read_pil(path: Path) -> RawImage:
    from PIL import Image, UnidentifiedImageError

    png = _png_header(path)
    try:
        with Image.open(path) as im:
            im.load()
            mode, fmt = im.mode, (im.format or "").lower()
            if png is not None and png[0] == 16 and png[1] in (2, 4, 6):
                raise ImageReadError(f"{path}: a 16-bit colour PNG (colour type {png[1]}) cannot be read at full "
                                     "depth; save it as a 16-bit greyscale PNG.")
            if mode == "P":
                im2 = im.convert("RGBA" if "transparency" in im.info else "RGB")
                arr, mode = np.asarray(im2), im2.mode
            elif mode == "1":
                arr = np.asarray(im.convert("L"))
            elif mode in ("CMYK", "YCbCr", "LAB", "HSV"):   # ink / other colour spaces: their samples are not grey
                im2 = im.convert("RGB")
                arr, mode = np.asarray(im2), f"{mode}->RGB"
            else:
                arr = np.asarray(im)
    except (UnidentifiedImageError, OSError, SyntaxError, ValueError) as exc:
        raise ImageReadError(f"{path}: cannot be read as an image ({exc_text(exc)}).") from exc
    if png is not None:
        if png[0] < 8:
            raise ImageReadError(f"{path}: a {png[0]}-bit PNG is not supported; expected 8 or 16 bits per sample.")
        depth = int(png[0])
    elif arr.dtype == np.uint8 or mode in ("L", "RGB", "RGBA", "LA"):
        depth = 8
    elif arr.dtype == np.uint16:
        depth = 16
    else:
        raise ImageReadError(f"{path}: unsupported pixel type (Pillow mode {mode!r}, dtype {arr.dtype}); expected "
                             "8- or 16-bit unsigned samples.")
    if arr.ndim == 3 and mode in ("LA",):
        arr = arr[..., 0]
    elif arr.ndim == 3 and arr.shape[2] == 4:
        arr = arr[..., :3]                                            # alpha dropped
    return RawImage(_check_pixels(arr, path), (1 << depth) - 1, depth, 1 if arr.ndim == 2 else arr.shape[2],
                    "png" if png is not None else ("jpeg" if fmt in ("jpeg", "mpo") else fmt or "image"), mode)


def _read_tiff(path: Path) -> RawImage:
    import tifffile

    try:
        arr = tifffile.imread(path)
    except Exception as exc:  # tifffile raises many types for a broken file
        raise ImageReadError(f"{path}: cannot be read as a TIFF ({exc_text(exc)}).") from exc
    if arr.dtype not in (np.uint8, np.uint16):
        raise ImageReadError(f"{path}: TIFF samples are {arr.dtype}; expected 8- or 16-bit unsigned integers.")
    if arr.ndim == 3 and arr.shape[2] == 4:
        arr = arr[..., :3]
    depth = 8 * arr.dtype.itemsize
    return RawImage(_check_pixels(arr, path), (1 << depth) - 1, depth, 1 if arr.ndim == 2 else arr.shape[2], "tiff",
                    "tiff")


def _read_dicom(path: Path, *, window: str) -> RawImage:
    try:
        import pydicom
    except ImportError as exc:
        raise DataUnavailableError("pydicom is not installed; pip install 'cxreval[dicom]' to read DICOM "
                                   f"files ({path}).") from exc
    try:
        from pydicom.pixels import apply_voi_lut
    except ImportError:  # pydicom < 3
        from pydicom.pixel_data_handlers.util import apply_voi_lut  # type: ignore[no-redef]
    try:
        ds = pydicom.dcmread(path, force=True)
        photometric = str(ds.PhotometricInterpretation)
        if photometric not in ("MONOCHROME1", "MONOCHROME2"):
            raise ImageReadError(f"{path}: DICOM PhotometricInterpretation {photometric!r} is not supported; "
                                 "expected MONOCHROME1 or MONOCHROME2.")
        bits = int(ds.BitsStored)
        data = ds.pixel_array
        if window == "voi":
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                data = apply_voi_lut(data, ds, index=0)
    except ImageReadError:
        raise
    except Exception as exc:  # pydicom raises many types for a broken file
        raise ImageReadError(f"{path}: cannot be read as a DICOM image ({exc_text(exc)}).") from exc
    maxval = (1 << bits) - 1
    data = np.asarray(data)
    if int(getattr(ds, "PixelRepresentation", 0)) == 1 and window == "none":
        data = data.astype(np.int64) + (1 << (bits - 1))
    if data.ndim != 2:
        raise ImageReadError(f"{path}: DICOM pixel data has shape {data.shape}; expected one 2-D frame.")
    if photometric == "MONOCHROME1":
        data = maxval - data
    return RawImage(_check_pixels(data, path), maxval, bits, 1, "dicom", photometric)


def _check_pixels(arr: np.ndarray, path: Path) -> np.ndarray:
    if arr.ndim not in (2, 3) or arr.shape[0] == 0 or arr.shape[1] == 0:
        raise ImageReadError(f"{path}: image has shape {arr.shape}; expected (H, W) or (H, W, C) with H, W > 0.")
    if arr.ndim == 3 and arr.shape[2] not in (1, 3):
        raise ImageReadError(f"{path}: image has {arr.shape[2]} channels; expected 1 or 3.")
    if arr.dtype.kind == "f" and not np.isfinite(arr).all():
        raise ImageReadError(f"{path}: image holds non-finite values.")
    return arr


def read_image(path: PathLike, *, dicom_window: str = "none") -> RawImage:
    """Read one image at its full bit depth (see the module docstring for each format).

    Parameters
    ----------
    path : path-like
    dicom_window : {'none', 'voi'}, default='none'
        For DICOM: ``voi`` applies the file's VOI LUT / window before anything else.

    Returns
    -------
    RawImage

    Raises
    ------
    ImageReadError
        The file is missing, unreadable, or of an unsupported kind (the run records it and carries on).
    DataUnavailableError
        A DICOM file without pydicom installed.
    """
    check_choice(dicom_window, DICOM_WINDOWS, name="dicom_window", func="read_image")
    p = Path(path)
    if not p.is_file():
        raise ImageReadError(f"{p}: file not found.")
    if is_dicom(p):
        return _read_dicom(p, window=dicom_window)
    if p.suffix.lower() in (".tif", ".tiff"):
        return _read_tiff(p)
    return _read_pil(p)
