"""Radiographs on disk: one reader at the stored bit depth, its header-only size, the writer, and block-mean
resampling (:func:`box_downsample`).

:func:`read_image` returns the stored pixel values unchanged (no scaling, no 8-bit conversion) as a
:class:`LoadedImage`, with the largest value the file's type allows (``max_value``, the ``data_range`` of
the IQA metrics); :attr:`LoadedImage.image` is the same picture as one float64 grey plane. IQA, the
model commands (``predict``, ``finetune``), the reader study and the localization overlays all read with it.

Formats
-------
* PNG, 8 or 16 bits per sample (1-bit: values 0/1, ``max_value`` 1), greyscale (``L``, ``I;16``) or colour
  (``RGB``, ``RGBA``, ``LA``, palette): the maximum is ``2**bit_depth - 1`` from the PNG header. Pillow
  cannot read 16-bit colour PNGs without reducing them to 8 bits, and it rescales 2- and 4-bit samples, so
  such files are refused instead of being changed silently.
* JPEG (8-bit, greyscale or colour; CMYK and YCbCr are converted to RGB by Pillow first): maximum 255.
* TIFF (via tifffile) and NumPy ``.npy``: unsigned integers (maximum from the dtype: 255, 65535), signed
  integers (``max - min`` of the dtype) or floats holding ``[0, 1]`` (maximum 1.0).
* DICOM (``.dcm``, ``.dicom``, or any file with the ``DICM`` marker at byte 128; needs ``pip install
  pydicom``): the stored values of ``pixel_array``; maximum ``2**BitsStored - 1``. With
  ``dicom_window='voi'`` the file's VOI LUT or window (centre/width) is applied first (pydicom's
  ``apply_voi_lut``), as ``torchxrayvision.utils.read_xray_dcm(voi_lut=True)`` does. Signed pixel data
  (``PixelRepresentation = 1``) is shifted by ``2**(BitsStored - 1)`` into ``[0, max]``; ``MONOCHROME1``
  (bright = low attenuation) is inverted to ``MONOCHROME2`` as ``max - value``. Other photometric
  interpretations are refused.

An alpha channel is dropped (``LA``: the grey channel). A file that cannot be read is an
:class:`ImageReadError` naming it (a missing one an :class:`ImageNotFoundError`), which ``cxreval predict``
records in its read report and carries on.

Examples
--------
>>> import numpy as np, tempfile, pathlib
>>> from PIL import Image
>>> d = pathlib.Path(tempfile.mkdtemp())
>>> Image.fromarray(np.array([[0, 4095], [65535, 7]], dtype=np.uint16)).save(d / "a.png")
>>> img = read_image(d / "a.png")
>>> img.pixels.tolist(), img.max_value, img.bit_depth, img.data_range
([[0, 4095], [65535, 7]], 65535, 16, 65535.0)
"""

from __future__ import annotations

import contextlib
import functools
import struct
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

import numpy as np

from .._typing import PathLike
from .._validation import check_choice
from ..exceptions import DataUnavailableError, InvalidParameterError, SchemaError

__all__ = [
    "read_image",
    "write_image",
    "box_downsample",
]

IMAGE_SUFFIXES: tuple[str, ...] = (".png", ".jpg", ".jpeg", ".tif", ".tiff", ".dcm", ".dicom", ".npy")
"""File name suffixes (case-insensitive) of the images :func:`read_image` reads; what a folder of images
is searched for."""

DISPLAY_SUFFIXES: tuple[str, ...] = (".png", ".tif", ".tiff", ".dcm", ".dicom", ".jpg", ".jpeg")
"""The radiographs a reader study shows (:data:`IMAGE_SUFFIXES` but ``.npy`` arrays), in the order a study's
image is looked for (``STUDY.png`` first): what ``cxreval reader`` serves and ``cxreval plan --images`` copies."""

DICOM_SUFFIXES: tuple[str, ...] = (".dcm", ".dicom")
"""Suffixes read as DICOM whatever the file starts with (other files: by their ``DICM`` marker)."""

DICOM_WINDOWS: tuple[str, ...] = ("none", "voi")
"""``none``: stored values (torchxrayvision's default); ``voi``: apply the file's VOI LUT / window first."""


class ImageReadError(SchemaError):
    """One image cannot be read (unreadable, or of an unsupported kind); the message names the file."""


class ImageNotFoundError(ImageReadError, DataUnavailableError):
    """The image file does not exist."""


@dataclass(frozen=True, eq=False)
class LoadedImage:
    """Stored pixel values of one image, with the largest value its type allows.

    Attributes
    ----------
    pixels : numpy.ndarray
        ``(H, W)`` or ``(H, W, 3)`` values as stored (after DICOM windowing, the signed shift and the
        MONOCHROME1 inversion; an alpha channel dropped).
    max_value : int or float
        The largest value the stored type allows: 255, 65535, ``2**BitsStored - 1``; 1.0 for floats.
    bit_depth : int
        Bits per sample (8, 16, ``BitsStored``; 1 for a 1-bit PNG; the float's size for a float image).
    channels : int
        1 or 3.
    format : str
        ``png``, ``jpeg``, ``tiff``, ``npy`` or ``dicom``.
    photometric : str
        ``MONOCHROME1`` / ``MONOCHROME2`` for DICOM (before inversion), the Pillow mode for PNG/JPEG.
    path : str
        The file read ('' for an image made in memory).
    dtype : str
        The stored type (``'uint8'``, ``'uint16'``, ``'float32'``, a DICOM's ``pixel_array`` type, ...).
    """

    pixels: np.ndarray
    max_value: int | float
    bit_depth: int
    channels: int
    format: str
    photometric: str = ""
    path: str = ""
    dtype: str = ""

    @property
    def data_range(self) -> float:
        """``max_value`` as a float: the span of the stored type, the ``data_range`` of the IQA metrics."""
        return float(self.max_value)

    @functools.cached_property
    def image(self) -> np.ndarray:
        """The picture as a 2-D float64 array, values unchanged; a colour image must have identical
        channels (a grey image stored as colour), else :class:`~cxreval.exceptions.SchemaError`."""
        return to_grey(self.pixels, where=self.path or "image").astype(np.float64)

    def to_dict(self) -> dict[str, object]:
        return {
            "path": self.path,
            "dtype": self.dtype,
            "data_range": self.data_range,
            "shape": list(self.image.shape),
        }


def to_grey(a: np.ndarray, *, where: str) -> np.ndarray:
    """Return a 2-D array: a single-channel image, or one channel of an RGB(A) image whose colour
    channels are identical (a grey image stored as colour). Real colour raises :class:`SchemaError`."""
    a = np.asarray(a)
    if a.ndim == 2:
        return a
    if a.ndim == 3 and a.shape[-1] == 1:
        return a[..., 0]
    if a.ndim == 3 and a.shape[-1] in (3, 4):
        rgb = a[..., :3]
        if np.array_equal(rgb[..., 0], rgb[..., 1]) and np.array_equal(rgb[..., 0], rgb[..., 2]):
            return rgb[..., 0]
        raise SchemaError(
            f"{where}: expected a greyscale image; got a colour image of shape {a.shape} whose "
            "channels differ. Convert it to greyscale first."
        )
    raise SchemaError(f"{where}: expected a 2-D greyscale image; got an array of shape {a.shape}.")


def pydicom_available() -> bool:
    """True when the optional pydicom is importable."""
    try:
        import pydicom  # noqa: F401
    except ImportError:
        return False
    return True


def is_dicom(path: PathLike) -> bool:
    """True for a ``.dcm``/``.dicom`` name or a file with the ``DICM`` marker at byte 128."""
    p = Path(path)
    if p.suffix.lower() in DICOM_SUFFIXES:
        return True
    try:
        with open(p, "rb") as fh:
            head = fh.read(132)
    except OSError:
        return False
    return len(head) == 132 and head[128:132] == b"DICM"


def _reason(exc: BaseException) -> str:
    """A decoder's exception as one line: ``Type: message``."""
    return f"{type(exc).__name__}: {'; '.join(x.strip() for x in str(exc).splitlines() if x.strip())}"


@contextlib.contextmanager
def _reading(p: Path, kind: str) -> Iterator[None]:
    """A decoder's failure on ``p`` (not one of ours) as one :class:`ImageReadError` naming the file."""
    try:
        yield
    except SchemaError:
        raise
    except Exception as exc:  # the decoders raise many types for a broken file
        raise ImageReadError(f"{p}: cannot be read as {kind} ({_reason(exc)}).") from exc


def _image_file(path: PathLike) -> Path:
    p = Path(path)
    if not p.is_file():
        raise ImageNotFoundError(f"Image file {p} does not exist.")
    return p


def _range_of(dtype: np.dtype) -> int | float:
    """The span of a stored type: ``max`` of an unsigned type, ``max - min`` of a signed one, 1 otherwise."""
    if np.issubdtype(dtype, np.bool_):
        return 1
    if np.issubdtype(dtype, np.integer):
        info = np.iinfo(dtype)
        return int(info.max) if info.min == 0 else int(info.max) - int(info.min)
    return 1.0


def _png_header(path: Path) -> tuple[int, int] | None:
    """(bit depth, colour type) from a PNG's IHDR chunk, or None if the file is not a PNG."""
    with open(path, "rb") as fh:
        head = fh.read(26)
    if len(head) < 26 or head[:8] != b"\x89PNG\r\n\x1a\n" or head[12:16] != b"IHDR":
        return None
    depth, colour = struct.unpack(">BB", head[24:26])
    return int(depth), int(colour)


def _read_pil(path: Path) -> LoadedImage:
    from PIL import Image

    png = _png_header(path)
    if png is not None and png[0] == 16 and png[1] in (2, 4, 6):
        raise ImageReadError(
            f"{path}: a 16-bit colour PNG (colour type {png[1]}) cannot be read at full "
            "depth; save it as a 16-bit greyscale PNG."
        )
    if png is not None and png[0] in (2, 4) and png[1] == 0:
        raise ImageReadError(
            f"{path}: a {png[0]}-bit PNG is not supported; expected 1, 8 or 16 bits per sample."
        )
    with _reading(path, "an image"), Image.open(path) as im:
        im.load()
        mode, fmt = im.mode, (im.format or "").lower()
        if mode == "P":
            im2 = im.convert("RGBA" if "transparency" in im.info else "RGB")
            arr, mode = np.asarray(im2), im2.mode
        elif mode in ("CMYK", "YCbCr", "LAB", "HSV"):  # ink / other colour spaces: their samples are not grey
            im2 = im.convert("RGB")
            arr, mode = np.asarray(im2), f"{mode}->RGB"
        else:
            arr = np.asarray(im)
    if mode in ("I;16", "I;16B", "I;16L") or (
        mode == "I" and arr.size and arr.min() >= 0 and arr.max() <= 65535
    ):
        arr = arr.astype(np.uint16)  # 16-bit PNGs may open as 32-bit ints holding 0..65535
    if arr.ndim == 3 and mode == "LA":
        arr = arr[..., 0]
    if png is not None:
        depth = png[0]
        top: int | float = 1 if depth == 1 else (1 << depth) - 1
    elif arr.dtype in (np.uint8, np.uint16, np.bool_):
        top = _range_of(arr.dtype)
        depth = 1 if arr.dtype == np.bool_ else 8 * arr.dtype.itemsize
    else:
        raise ImageReadError(
            f"{path}: unsupported pixel type (Pillow mode {mode!r}, dtype {arr.dtype}); expected "
            "8- or 16-bit unsigned samples."
        )
    kind = "png" if png is not None else ("jpeg" if fmt in ("jpeg", "mpo") else fmt or "image")
    return _loaded(arr, top, depth, kind, mode, path)


def _read_array(path: Path) -> LoadedImage:
    if path.suffix.lower() == ".npy":
        with _reading(path, "a NumPy .npy array"):
            arr = np.load(path, allow_pickle=False)
        kind = "npy"
    else:
        import tifffile

        with _reading(path, "a TIFF"):
            arr = tifffile.imread(str(path))
        kind = "tiff"
    if not (np.issubdtype(arr.dtype, np.number) or arr.dtype == np.bool_) or np.issubdtype(
        arr.dtype, np.complexfloating
    ):
        raise ImageReadError(
            f"{path}: non-numeric pixel type {arr.dtype}; expected integer or float samples."
        )
    depth = 1 if arr.dtype == np.bool_ else 8 * arr.dtype.itemsize
    return _loaded(arr, _range_of(arr.dtype), depth, kind, kind, path)


def _read_dicom(path: Path, *, window: str) -> LoadedImage:
    try:
        import pydicom
    except ImportError as exc:
        raise DataUnavailableError(
            f"pydicom is not installed; pip install 'cxreval[dicom]' to read DICOM files ({path})."
        ) from exc
    try:
        from pydicom.pixels import apply_voi_lut
    except ImportError:  # pydicom < 3
        from pydicom.pixel_data_handlers.util import apply_voi_lut  # type: ignore[no-redef]
    with _reading(path, "a DICOM image"):
        ds = pydicom.dcmread(str(path), force=True)
        photometric = str(ds.PhotometricInterpretation)
        if photometric not in ("MONOCHROME1", "MONOCHROME2"):
            raise ImageReadError(
                f"{path}: DICOM PhotometricInterpretation {photometric!r} is not supported; "
                "expected MONOCHROME1 or MONOCHROME2."
            )
        bits = int(ds.BitsStored)
        stored = ds.pixel_array
        data = stored
        if window == "voi":
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                data = apply_voi_lut(data, ds, index=0)
    maxval = (1 << bits) - 1
    data = np.asarray(data)
    if int(getattr(ds, "PixelRepresentation", 0)) == 1 and window == "none":
        data = data.astype(np.int64) + (1 << (bits - 1))
    if data.ndim != 2:
        raise ImageReadError(f"{path}: DICOM pixel data has shape {data.shape}; expected one 2-D frame.")
    if photometric == "MONOCHROME1":
        data = maxval - data
    return _loaded(data, maxval, bits, "dicom", photometric, path, dtype=str(stored.dtype))


def _loaded(
    arr: np.ndarray,
    top: int | float,
    depth: int,
    kind: str,
    photometric: str,
    path: Path,
    *,
    dtype: str | None = None,
) -> LoadedImage:
    """The checked pixels as a :class:`LoadedImage`: 2-D or 3 channels (alpha dropped), finite, not empty."""
    if arr.ndim == 3 and arr.shape[2] == 4:
        arr = arr[..., :3]  # alpha dropped
    if arr.ndim == 3 and arr.shape[2] == 1:
        arr = arr[..., 0]
    if arr.ndim not in (2, 3) or arr.shape[0] == 0 or arr.shape[1] == 0:
        raise ImageReadError(
            f"{path}: image has shape {arr.shape}; expected (H, W) or (H, W, C) with H, W > 0."
        )
    if arr.ndim == 3 and arr.shape[2] != 3:
        raise ImageReadError(f"{path}: image has {arr.shape[2]} channels; expected 1 or 3.")
    if arr.dtype.kind == "f" and not np.isfinite(arr).all():
        raise ImageReadError(f"{path}: image holds non-finite values.")
    return LoadedImage(
        arr,
        top,
        depth,
        1 if arr.ndim == 2 else 3,
        kind,
        photometric,
        str(path),
        str(arr.dtype) if dtype is None else dtype,
    )


def read_image(path: PathLike, *, dicom_window: str = "none") -> LoadedImage:
    """Read one image at its stored bit depth (PNG, JPEG, TIFF, NumPy ``.npy``, DICOM; see the module
    docstring for each format).

    Parameters
    ----------
    path : path-like
    dicom_window : {'none', 'voi'}, default='none'
        For DICOM: ``voi`` applies the file's VOI LUT / window before anything else.

    Returns
    -------
    LoadedImage
        ``pixels`` as stored and ``max_value``; ``image`` (float64, 2-D) and ``data_range`` for the metrics.

    Raises
    ------
    ImageNotFoundError
        If the file does not exist (a :class:`~cxreval.exceptions.DataUnavailableError` and an
        :class:`ImageReadError`).
    ImageReadError
        If the file is unreadable or of an unsupported kind.
    DataUnavailableError
        A DICOM file without pydicom installed.
    """
    check_choice(dicom_window, DICOM_WINDOWS, name="dicom_window", func="read_image")
    p = _image_file(path)
    if is_dicom(p):
        return _read_dicom(p, window=dicom_window)
    if p.suffix.lower() in (".tif", ".tiff", ".npy"):
        return _read_array(p)
    return _read_pil(p)


def _spatial(shape: tuple[int, ...], p: Path) -> tuple[int, int]:
    """(H, W) of a stored array shape as :func:`to_grey` accepts it (2-D, or channels last)."""
    if len(shape) == 2 or (len(shape) == 3 and shape[-1] in (1, 3, 4)):
        return int(shape[0]), int(shape[1])
    raise ImageReadError(f"{p}: expected a 2-D greyscale image; got an array of shape {tuple(shape)}.")


class ImageSize(NamedTuple):
    """What :func:`image_size` returns: the image's height and width in pixels."""

    height: int
    width: int


def image_size(path: PathLike) -> ImageSize:
    """Height and width of an image file from its header, without decoding the pixels.

    A cheap check of the files a long run will read (``cxreval iqa score`` checks every pair before
    scoring): the file exists and its header is that of an image :func:`read_image` reads.

    Returns
    -------
    size : tuple of int
        ``(height, width)``.

    Raises
    ------
    ImageNotFoundError
        If the file does not exist.
    ImageReadError
        If the header is not that of a readable 2-D image.
    """
    p = _image_file(path)
    suffix = p.suffix.lower()
    if is_dicom(p):
        import pydicom

        with _reading(p, "a DICOM image"):
            ds = pydicom.dcmread(str(p), stop_before_pixels=True, force=True)
            return ImageSize(int(ds.Rows), int(ds.Columns))
    if suffix == ".npy":
        with _reading(p, "a NumPy .npy array"):
            shape = np.load(p, mmap_mode="r", allow_pickle=False).shape
    elif suffix in (".tif", ".tiff"):
        import tifffile

        with _reading(p, "a TIFF"), tifffile.TiffFile(str(p)) as tf:
            shape = tf.series[0].shape
    else:
        from PIL import Image

        with _reading(p, "an image"), Image.open(p) as im:
            w, h = im.size
            shape = (h, w) if im.mode not in ("RGB", "RGBA", "P") else (h, w, 3)
    return ImageSize(*_spatial(tuple(shape), p))


def write_image(path: PathLike, image: np.ndarray, *, data_range: float, dtype: str = "uint16") -> Path:
    """Write a float image to disk in the stored type ``dtype``.

    Integer types store ``round(clip(image, 0, data_range) / data_range * max_of_dtype)``; ``'float32'``
    stores ``image / data_range`` in a float TIFF (or ``.npy``) without rounding.

    Parameters
    ----------
    path : str or Path
        ``.png`` or ``.tif``/``.tiff`` (``uint8``/``uint16``), ``.tif``/``.npy`` for ``float32``/``float64``.
    image : numpy.ndarray of shape (H, W)
    data_range : float
        The span of ``image``'s values.
    dtype : {'uint8', 'uint16', 'float32', 'float64'}, default='uint16'

    Returns
    -------
    path : Path
    """
    p = Path(path)
    img = np.asarray(image, dtype=np.float64) / float(data_range)
    suffix = p.suffix.lower()
    if dtype in ("uint8", "uint16"):
        top = 255 if dtype == "uint8" else 65535
        arr = np.rint(np.clip(img, 0.0, 1.0) * top).astype(dtype)
    elif dtype in ("float32", "float64"):
        if suffix == ".png":
            raise InvalidParameterError(f"Cannot store a {dtype} image as PNG ({p}); use .tif or .npy.")
        arr = img.astype(dtype)
    else:
        raise InvalidParameterError(
            f"write_image: dtype must be one of ['uint8', 'uint16', 'float32', 'float64']. "
            f"Got {dtype!r} instead."
        )
    p.parent.mkdir(parents=True, exist_ok=True)
    if suffix == ".npy":
        np.save(p, arr)
    elif suffix in (".tif", ".tiff"):
        import tifffile

        tifffile.imwrite(str(p), arr)
    elif suffix == ".png":
        from PIL import Image

        Image.fromarray(arr).save(p, format="PNG")
    else:
        raise InvalidParameterError(
            f"write_image: unsupported file suffix {p.suffix!r} for {p}; use .png, .tif, .tiff or .npy."
        )
    return p


# box_downsample conventions -> (zero/edge rows before the image as a function of f, numpy.pad mode)
_BOX_CONVENTIONS = {
    "matlab": (lambda f: (f - 1) // 2, "constant"),
    "replicate": (lambda f: f // 2, "edge"),
    "pool": (None, "none"),
}


def box_downsample(image: np.ndarray, f: int, *, convention: str = "matlab") -> np.ndarray:
    """Average ``f x f`` blocks and keep one value per block, in one of three alignments.

    * ``'matlab'``: MATLAB's ``y = conv2(x, ones(f)/f^2, 'same'); y(1:f:end, 1:f:end)``: ``(f - 1) // 2``
      zero rows/columns before the image and zeros after it as needed (output ``ceil(H/f) x ceil(W/f)``).
    * ``'replicate'``: ``f // 2`` edge-replicated rows/columns before the image, replicated ones after it as
      needed (piq's VSI: replicate padding then ``avg_pool2d``).
    * ``'pool'``: blocks from the origin, the remainder dropped (torch's ``avg_pool2d``; ``floor(H/f)``).

    ``f <= 1`` returns ``image`` unchanged.
    """
    if f <= 1:
        return image
    top_of, mode = _BOX_CONVENTIONS[
        check_choice(convention, _BOX_CONVENTIONS, name="convention", func="box_downsample")
    ]
    x = np.asarray(image, dtype=np.float64)
    h, w = x.shape
    if top_of is None:
        nh, nw, top, edge = h // f, w // f, 0, False
    else:
        nh, nw, top, edge = -(-h // f), -(-w // f), top_of(f), mode == "edge"
    # block sums without a padded copy: the blocks inside the image by a reshape (rows) and f strided adds
    # (columns) of views; the few blocks that overlap the padding summed apart (zero or edge rows/columns)
    rows = _block_sums(x, f, nh, top, edge, axis=0)
    out = _block_sums(rows, f, nw, top, edge, axis=1)
    out *= 1.0 / (f * f)
    return out


def _block_sums(x: np.ndarray, f: int, n: int, top: int, edge: bool, *, axis: int) -> np.ndarray:
    """Sums along ``axis`` (0 or 1) of a 2-D array's ``n`` blocks of ``f`` that start ``top`` before index 0;
    indices outside the array are zero or, with ``edge``, its first/last row (column)."""
    h = x.shape[axis]
    shape = (n, x.shape[1]) if axis == 0 else (x.shape[0], n)
    acc = np.empty(shape)

    def at(a: int, b: int, step: int = 1) -> tuple[slice, ...]:
        return (slice(a, b, step),) if axis == 0 else (slice(None), slice(a, b, step))

    lo, hi = -(-top // f), max(-(-top // f), min(n, (h + top) // f))  # the blocks entirely inside
    if hi > lo:
        start, stop = lo * f - top, hi * f - top
        if axis == 0:  # f contiguous rows per block: numpy's reduction over the middle axis of a view
            acc[lo:hi] = x[start:stop].reshape(hi - lo, f, -1).sum(axis=1)
        else:  # f strided views of the columns
            inner = acc[:, lo:hi]
            np.copyto(inner, x[:, start:stop:f])
            for k in range(1, f):
                inner += x[:, start + k : stop : f]
    for i in [*range(0, min(lo, n)), *range(max(hi, lo), n)]:  # the blocks over the padding
        start = i * f - top
        a, b = max(start, 0), min(start + f, h)
        part = x[at(a, b)].sum(axis=axis) if b > a else np.zeros(x.shape[1 - axis])
        if edge:
            part = (
                part
                + max(0, -start) * x[at(0, 1)].sum(axis=axis)
                + max(0, start + f - h) * x[at(h - 1, h)].sum(axis=axis)
            )
        acc[at(i, i + 1)] = part.reshape(acc[at(i, i + 1)].shape)
    return acc
