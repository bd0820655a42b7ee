"""Images for the reader's page: a rendition for the reader's screen first, the full resolution on zoom.

A radiograph of 2048 x 2500 16-bit pixels is 10 MB; a reader sees it on a screen of about a thousand
pixels' height (two thousand on a 4K screen or at device pixel ratio 2). :func:`render` makes a rendition
``scale`` times smaller in each direction (the mean of each ``scale x scale`` block, edges replicated),
keeping the full bit depth (little-endian uint16): the window and level are applied by the page (in a
worker), as exact as the data, over the whole range of 12- or 16-bit data, whatever the preset; ``scale=1``
is the full resolution. All are sent gzip-compressed (level 1: fast to make, lossless, about a third
smaller for 12-bit data). :func:`decode` detects the bit depth of each image from its pixels (the smallest
of 8, 10, 12, 14 and 16 bits holding the largest value; DICOM: ``BitsStored``), so that the page's
window/level ranges fit the data: 12-bit data in a 16-bit PNG get 0..4095, not 0..65535; for DICOM it also
reads the file's window (``WindowCenter``/``WindowWidth``) and pixel spacing (:func:`dicom_meta`).

Renditions come in a few standard sizes (:data:`SIZES`, :func:`rendition_scale`): the page asks with the
number of device pixels the image's longer side covers on its screen (pane size times device pixel ratio)
and gets the rendition of the smallest standard size at least that large (the native image above the
largest), so however many screens read a study, each image has at most five renditions.

:class:`RenditionCache` keeps renditions in memory (least recently used out, by bytes), makes each one
once when several requests want it at the same time, and renders ahead (:meth:`RenditionCache.warm`) on
a small pool of threads: the server renders a reader's next studies while they read the current one.

Renditions are also kept on disk, in the study folder's :data:`RENDITIONS` folder, one file per image and
scale (not per view): :func:`make_renditions` writes every image's :data:`DISPLAY_FIT` rendition there ahead
of reading (``cxreval reader init``); a rendition made on request (another size, the native image) is
written there once. A file holds the rendition's pixels and what the first request needs beside them
(size, scale, bit depth, data range, ETag, DICOM window and spacing); it is written atomically (a
temporary file renamed into place) and used only while the image's modification time and size match those
it records; otherwise the image is rendered again. The server reads renditions from there first, so a
study's first display costs a file read, not a decode; a display request for a coarser rendition than one
made ahead is answered with the nearest finer one there (never the native image).
"""

from __future__ import annotations

import gzip
import hashlib
import json
import math
import os
import threading
from collections import OrderedDict
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import NamedTuple

import numpy as np

from ..executor import ExecutorLike, get_executor
from ..progress import Progress, as_progress

__all__: list[str] = []

SIZES = (256, 512, 1024, 2048)
"""The standard renditions' sizes: a page that needs ``fit`` pixels along the image's longer side gets the
rendition of the smallest size at least ``fit`` (larger needs: the native image), so that an image has a
few rendition files, whatever the readers' screens (:func:`rendition_scale`)."""
DISPLAY_FIT = 1024
"""The standard size made ahead of reading (``cxreval reader init``): a 1920 x 1080 screen's pane."""
RENDITIONS = ".cxreval-renditions"
"""The folder, inside the study folder, of the renditions kept on disk (one file per image and scale)."""
_BITS = (8, 10, 12, 14, 16)
_MAGIC = b"cxreval-rendition 1\n"


@dataclass(frozen=True)
class Rendition:
    """One rendition of an image: ``body`` is gzip of little-endian uint16 pixels, ``width x height`` of the
    rendition, ``scale`` original pixels per rendition pixel, ``data_range`` = ``2**bits - 1``."""

    body: bytes
    width: int
    height: int
    full_width: int
    full_height: int
    scale: int
    bits: int
    data_range: int
    etag: str
    window: tuple[float, float] | None = None
    spacing: tuple[float, float] | None = None

    def headers(self) -> dict[str, str]:
        """The answer's headers: sizes, scale, bit depth, range, ETag; the DICOM window (``X-Window``:
        centre and width in the rendition's values) and pixel spacing (``X-Pixel-Spacing``: mm per row and
        per column of the full image) where the file has them."""
        extra = {}
        if self.window is not None:
            extra["X-Window"] = f"{self.window[0]:.6g},{self.window[1]:.6g}"
        if self.spacing is not None:
            extra["X-Pixel-Spacing"] = f"{self.spacing[0]:.6g},{self.spacing[1]:.6g}"
        return extra | {
            "X-Width": str(self.width),
            "X-Height": str(self.height),
            "X-Full-Width": str(self.full_width),
            "X-Full-Height": str(self.full_height),
            "X-Scale": str(self.scale),
            "X-Bits": str(self.bits),
            "X-Data-Range": str(self.data_range),
            "ETag": self.etag,
            "Content-Encoding": "gzip",
        }


def bit_depth(pixels: np.ndarray) -> int:
    """The smallest of 8, 10, 12, 14 and 16 bits that holds the largest value of integer ``pixels``."""
    top = int(pixels.max()) if pixels.size else 0
    return next((b for b in _BITS if top < 2**b), 16)


class DecodedImage(NamedTuple):
    """What :func:`decode` returns: the image as a uint16 array, its bit depth, and for DICOM its window
    (centre, width in the array's values) and pixel spacing (mm per row, per column) where the file has them."""

    pixels: np.ndarray
    bit_depth: int
    window: tuple[float, float] | None = None
    spacing: tuple[float, float] | None = None


def _first(value: object) -> float | None:
    """The first number of a DICOM value (one number or several), None when absent or not a number."""
    if value is not None and not isinstance(value, (str, bytes, int, float)):
        value = next(iter(value), None)  # type: ignore[call-overload]
    try:
        v = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) else None


def dicom_meta(
    path: Path, factor: float = 1.0
) -> tuple[tuple[float, float] | None, tuple[float, float] | None]:
    """The DICOM file's first window (``WindowCenter``/``WindowWidth``, modality values) as values of the
    array :func:`decode` makes (``RescaleSlope``/``Intercept`` undone, signed data shifted, MONOCHROME1
    inverted as :func:`cxreval.io.images.read_image` does, times ``factor``), and its pixel spacing in mm
    (``PixelSpacing``, else ``ImagerPixelSpacing``: row, column); each None where the file lacks it."""
    import pydicom

    ds = pydicom.dcmread(str(path), force=True, stop_before_pixels=True)
    window = None
    c, w = _first(ds.get("WindowCenter")), _first(ds.get("WindowWidth"))
    if c is not None and w is not None and w > 0:
        slope = _first(ds.get("RescaleSlope")) or 1.0
        c, w = (c - (_first(ds.get("RescaleIntercept")) or 0.0)) / slope, w / abs(slope)
        bits = int(ds.get("BitsStored", 16))
        if int(ds.get("PixelRepresentation", 0)) == 1:
            c += 2 ** (bits - 1)
        if str(ds.get("PhotometricInterpretation", "")) == "MONOCHROME1":
            c = (2**bits - 1) - c
        window = (c * factor, w * factor)
    spacing = None
    for tag in ("PixelSpacing", "ImagerPixelSpacing"):
        v = ds.get(tag)
        try:
            r, col = float(v[0]), float(v[1])
        except (TypeError, ValueError, IndexError):
            continue
        if r > 0 and col > 0 and math.isfinite(r + col):
            spacing = (r, col)
            break
    return window, spacing


def decode(path: str | Path) -> DecodedImage:
    """An image file as a uint16 array and its bit depth. 8- and 16-bit PNG/TIFF/JPEG are read as stored
    (depth from the pixels); other files through :func:`cxreval.io.images.read_image` (DICOM: ``BitsStored``;
    float data or ranges over 16 bits scaled to 0..65535)."""
    p = Path(path)
    if p.suffix.lower() in (".png", ".tif", ".tiff", ".jpg", ".jpeg"):
        from PIL import Image

        with Image.open(p) as im:
            if im.mode in ("I;16", "I;16L", "I;16B", "L"):
                a = np.asarray(im)
                a = a.astype(np.uint16) if a.dtype != np.uint16 else a
                return DecodedImage(a, 8 if im.mode == "L" else bit_depth(a))
    from ..io.images import is_dicom, read_image

    img = read_image(p)
    a, rng_ = img.image, img.data_range
    factor = 1.0
    if rng_ > 65535 or not np.all(a == np.round(a)):
        a, factor, rng_ = a / rng_ * 65535.0, 65535.0 / rng_, 65535.0
    arr = np.clip(np.round(a), 0, 65535).astype(np.uint16)
    bits = next((b for b in _BITS if rng_ <= 2**b - 1), 16)
    window, spacing = dicom_meta(p, factor) if is_dicom(p) else (None, None)
    return DecodedImage(arr, max(bits, bit_depth(arr)), window, spacing)


def rendition_scale(width: int, height: int, fit: int) -> int:
    """The whole reduction of the standard rendition for a page that needs ``fit`` pixels along the image's
    longer side: the largest whose result keeps at least the smallest of :data:`SIZES` that is ``>= fit``
    (never fewer pixels than the screen shows); 1 (the native image) when ``fit`` exceeds every size."""
    size = next((s for s in SIZES if s >= fit), None)
    return 1 if size is None else max(1, max(width, height) // size)


def render(
    pixels: np.ndarray,
    scale: int,
    *,
    bits: int,
    etag: str,
    window: tuple[float, float] | None = None,
    spacing: tuple[float, float] | None = None,
) -> Rendition:
    """``pixels`` reduced ``scale`` times (block means, rounded; the last row and column of blocks padded
    with the edge pixels), gzip-compressed; ``window`` and ``spacing`` (:class:`DecodedImage`) go with it."""
    h, w = pixels.shape
    if scale > 1:
        ph, pw = -h % scale, -w % scale
        a = np.pad(pixels, ((0, ph), (0, pw)), mode="edge") if ph or pw else pixels
        hh, ww = a.shape[0] // scale, a.shape[1] // scale
        n = scale * scale
        wide = (2**bits - 1) * n + n // 2 >= 2**16  # the block sums would overflow 16 bits
        acc = np.zeros((hh, ww), dtype=np.uint32 if wide else np.uint16)
        for dy in range(scale):  # integer block sums, in place: no float copy of the whole image
            for dx in range(scale):
                acc += a[dy::scale, dx::scale]
        acc += n // 2
        acc //= n
        out = acc.astype("<u2", copy=False)
    else:
        out = pixels.astype("<u2", copy=False)
    body = gzip.compress(out.tobytes(), compresslevel=1, mtime=0)
    return Rendition(
        body,
        int(out.shape[1]),
        int(out.shape[0]),
        int(w),
        int(h),
        int(scale),
        int(bits),
        int(2**bits - 1),
        etag,
        window,
        spacing,
    )


@dataclass(frozen=True)
class RenditionsMade:
    """What :func:`make_renditions` did: ``n_made`` renditions rendered and written, ``n_reused`` already on
    disk for the image as it is now, in ``folder``."""

    folder: Path
    n_made: int
    n_reused: int


def _etag(source: str, mtime_ns: int, size: int, scale: int) -> str:
    return '"' + hashlib.sha256(repr(((source, mtime_ns, size), scale)).encode()).hexdigest()[:20] + '"'


def _disk_file(folder: Path, root: Path, path: Path, scale: int) -> Path:
    """The file of ``path``'s rendition reduced ``scale`` times in ``folder`` (named by the image's path
    inside the study folder ``root`` and the scale)."""
    try:
        name = path.relative_to(root).as_posix()
    except ValueError:
        name = str(path)
    return folder / (hashlib.sha256(f"{name}\n{scale}".encode()).hexdigest()[:32] + ".rendition")


def _read_disk(file: Path, mtime_ns: int, size: int) -> Rendition | None:
    """The rendition in ``file`` if it was made from the image as it is now (its modification time and size),
    else None (missing, torn or stale files included)."""
    try:
        data = file.read_bytes()
    except OSError:
        return None
    end = data.find(b"\n", len(_MAGIC))
    if not data.startswith(_MAGIC) or end < 0:
        return None
    try:
        h = json.loads(data[len(_MAGIC) : end])
        if h["mtime_ns"] != mtime_ns or h["size"] != size or len(data) - end - 1 != h["n"]:
            return None
        return Rendition(
            data[end + 1 :],
            h["width"],
            h["height"],
            h["full_width"],
            h["full_height"],
            h["scale"],
            h["bits"],
            h["data_range"],
            h["etag"],
            None if h.get("window") is None else (float(h["window"][0]), float(h["window"][1])),
            None if h.get("spacing") is None else (float(h["spacing"][0]), float(h["spacing"][1])),
        )
    except (ValueError, KeyError, TypeError):
        return None


def _write_disk(file: Path, r: Rendition, mtime_ns: int, size: int) -> None:
    """Write ``r`` into ``file`` atomically (a temporary file in the same folder, renamed into place)."""
    head = {
        "mtime_ns": mtime_ns,
        "size": size,
        "n": len(r.body),
        "width": r.width,
        "height": r.height,
        "full_width": r.full_width,
        "full_height": r.full_height,
        "scale": r.scale,
        "bits": r.bits,
        "data_range": r.data_range,
        "etag": r.etag,
        "window": r.window,
        "spacing": r.spacing,
    }
    file.parent.mkdir(parents=True, exist_ok=True)
    tmp = file.with_name(f".{file.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    try:
        with open(tmp, "wb") as fh:
            fh.write(_MAGIC + json.dumps(head, sort_keys=True).encode() + b"\n" + r.body)
        os.replace(tmp, file)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def _image_shape(path: Path) -> tuple[int, int] | None:
    """(width, height) from the file's header (PNG, TIFF, JPEG), None where only decoding tells."""
    if path.suffix.lower() not in (".png", ".tif", ".tiff", ".jpg", ".jpeg"):
        return None
    from PIL import Image

    with Image.open(path) as im:
        return int(im.size[0]), int(im.size[1])


def _make_one(root: str, fit: int, rel: str) -> bool:
    """Write the standard rendition for ``fit`` (:func:`rendition_scale`) of image ``rel`` of the study folder
    ``root`` unless it is on disk already; True when it was made."""
    base = Path(root)
    path = (base / rel).resolve()
    st = path.stat()
    shape = _image_shape(path)
    if shape is not None:
        file = _disk_file(base / RENDITIONS, base, path, rendition_scale(*shape, fit))
        if _read_disk(file, st.st_mtime_ns, st.st_size) is not None:
            return False
    got = decode(path)
    scale = rendition_scale(got.pixels.shape[1], got.pixels.shape[0], fit)
    file = _disk_file(base / RENDITIONS, base, path, scale)
    if shape is None and _read_disk(file, st.st_mtime_ns, st.st_size) is not None:
        return False
    r = render(
        got.pixels,
        scale,
        bits=got.bit_depth,
        etag=_etag(str(path), st.st_mtime_ns, st.st_size, scale),
        window=got.window,
        spacing=got.spacing,
    )
    _write_disk(file, r, st.st_mtime_ns, st.st_size)
    return True


def make_renditions(
    root: str | Path,
    images: Sequence[str],
    *,
    fit: int = DISPLAY_FIT,
    executor: ExecutorLike = None,
    progress: Progress | None = None,
) -> RenditionsMade:
    """Write the display rendition of every image into ``root``'s :data:`RENDITIONS` folder, ahead of reading.

    Parameters
    ----------
    root : str or Path
        The study folder.
    images : sequence of str
        The images' paths inside ``root`` (each rendered once, however often it is named).
    fit : int, default=DISPLAY_FIT
        The device pixels along the image's longer side the rendition serves (:func:`rendition_scale`).
    executor : ExecutorLike, default=None
        Where the images are rendered (:func:`cxreval.executor.get_executor`; ``None``: this process).
    progress : Progress or None, default=None
        One task, advanced per image.

    Returns
    -------
    RenditionsMade
        How many were made, and how many were already there for the image as it is now (reused).
    """
    base = Path(root).resolve()
    todo = sorted(set(images))
    ex = get_executor(executor)
    p = as_progress(progress, func="make_renditions")
    task = p.add("display renditions", total=len(todo))
    made = ex.map(partial(_make_one, str(base), int(fit)), todo, on_item=lambda _item: p.advance(task))
    p.done(task)
    n = sum(bool(m) for m in made)
    return RenditionsMade(base / RENDITIONS, n, len(todo) - n)


class RenditionCache:
    """Renditions by (file, modification, scale), at most ``max_bytes`` of them in memory; each made once
    however many requests ask for it at once; :meth:`warm` renders ahead on ``workers`` threads (at most
    ``max_pending`` waiting). With ``root`` (the study folder), renditions are read from its
    :data:`RENDITIONS` folder before any is made, and those made are written there."""

    def __init__(
        self,
        *,
        root: str | Path | None = None,
        max_bytes: int = 512 * 2**20,
        workers: int = 2,
        max_pending: int = 32,
    ) -> None:
        self.root = None if root is None else Path(root).resolve()
        self.max_bytes, self.max_pending = max_bytes, max_pending
        self.data: OrderedDict[tuple[str, int, int, int], Rendition] = OrderedDict()
        self.size = 0
        self.making: dict[tuple[str, int, int, int], Future] = {}
        self.lock = threading.Lock()
        self.pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="cxreval-reader-render")
        self.decoded: OrderedDict[tuple[str, int, int], DecodedImage] = OrderedDict()

    @staticmethod
    def _key(path: Path, scale: int) -> tuple[str, int, int, int]:
        st = path.stat()
        return str(path), st.st_mtime_ns, st.st_size, int(scale)

    def get(self, path: Path, scale: int = 1, *, display: bool = False) -> Rendition:
        """The rendition of ``path`` reduced ``scale`` times (1: full resolution; :func:`rendition_scale`). A
        ``display`` rendition may be a finer one on disk (the nearest: the one made ahead for a larger pane)
        when none of ``scale`` is there; one made is written to disk."""
        key = self._key(path, scale)
        with self.lock:
            hit = self.data.get(key)
            if hit is not None:
                self.data.move_to_end(key)
                return hit
            fut = self.making.get(key)
            mine = fut is None
            if mine:
                fut = self.making[key] = Future()
        if not mine:
            return fut.result()  # type: ignore[union-attr]
        try:
            value = self._make(path, key, display)
        except BaseException as exc:
            with self.lock:
                self.making.pop(key, None)
            fut.set_exception(exc)  # type: ignore[union-attr]
            raise
        with self.lock:
            self.making.pop(key, None)
            self.data[key] = value
            self.size += len(value.body)
            while self.size > self.max_bytes and len(self.data) > 1:
                _, old = self.data.popitem(last=False)
                self.size -= len(old.body)
        fut.set_result(value)  # type: ignore[union-attr]
        return value

    def _make(self, path: Path, key: tuple[str, int, int, int], display: bool = False) -> Rendition:
        dkey = key[:3]
        scale = key[3]
        if self.root is not None:
            folder = self.root / RENDITIONS
            # a display rendition may be a finer one made ahead (a smaller pane), never the native image
            for s in range(scale, 1, -1) if display and scale > 1 else (scale,):
                got_disk = _read_disk(_disk_file(folder, self.root, path, s), key[1], key[2])
                if got_disk is not None:
                    return got_disk
        with self.lock:
            got = self.decoded.get(dkey)
        if got is None:
            got = decode(path)
            with self.lock:  # the last few decoded images: a zoom after the display rendition decodes nothing
                self.decoded[dkey] = got
                while len(self.decoded) > 4:
                    self.decoded.popitem(last=False)
        r = render(
            got.pixels,
            scale,
            bits=got.bit_depth,
            etag=_etag(*dkey, scale),
            window=got.window,
            spacing=got.spacing,
        )
        if self.root is not None:  # one file per image and scale, whatever the screens asking for it
            try:
                _write_disk(_disk_file(self.root / RENDITIONS, self.root, path, scale), r, key[1], key[2])
            except OSError:  # a read-only study folder: served from memory only
                pass
        return r

    def warm(self, path: Path, scale: int, *, display: bool = False) -> None:
        """Render ``path`` in the background unless it is cached, being made, or too much is waiting
        (``display``: as for :meth:`get`)."""
        try:
            key = self._key(path, scale)
        except OSError:
            return
        with self.lock:
            if key in self.data or key in self.making or len(self.making) >= self.max_pending:
                return
        self.pool.submit(self._warm, path, scale, display)

    def _warm(self, path: Path, scale: int, display: bool) -> None:
        try:
            self.get(path, scale, display=display)
        except Exception:  # noqa: BLE001 - the request for it will report the problem
            pass

    def close(self) -> None:
        self.pool.shutdown(wait=False, cancel_futures=True)
