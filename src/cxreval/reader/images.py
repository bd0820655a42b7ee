"""Images for the reader's page: a display-sized rendition first, the full resolution on zoom.

A radiograph of 2048 x 2500 16-bit pixels is 10 MB; a reader sees it on a screen of about a thousand
pixels' height. :func:`render` makes a rendition ``scale`` times smaller in each direction (the mean of
each ``scale x scale`` block, edges replicated), keeping the full bit depth (little-endian uint16), so
window and level stay as exact as the screen can show; ``scale=1`` is the full resolution. Both are sent
gzip-compressed (level 1: fast to make, about a third smaller for 12-bit data). :func:`decode` detects the
bit depth of each image from its pixels (the smallest of 8, 10, 12, 14 and 16 bits holding the largest
value; DICOM: ``BitsStored``), so that the page's window/level ranges fit the data: 12-bit data in a 16-bit
PNG get 0..4095, not 0..65535.

:class:`RenditionCache` keeps renditions in memory (least recently used out, by bytes), makes each one
once when several requests want it at the same time, and renders ahead (:meth:`RenditionCache.warm`) on
a small pool of threads: the server renders a reader's next studies while they read the current one.

Renditions are also kept on disk, in the study folder's :data:`RENDITIONS` folder: :func:`make_renditions`
writes every image's display rendition there ahead of reading (``cxreval reader init``), one file per image
and scale holding the rendition's pixels and what the first request needs beside them (size, scale, bit
depth, data range, ETag). A file is written atomically (a temporary file renamed into place) and is used
only while the image's modification time and size match those it records; otherwise the image is rendered
again. The server reads renditions from there first, so a study's first display costs a file read, not a
decode; a display request for a coarser rendition than the one made ahead (a smaller pane) is answered with
the nearest finer one there (more pixels than asked: the page scales it down), and a display rendition made
on request is written there too (full resolutions are kept in memory only).
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

DISPLAY_FIT = 1280
"""Default longest side (pixels) of the display rendition; the page asks for its pane's size."""
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

    def headers(self) -> dict[str, str]:
        return {
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
    """What :func:`decode` returns: the image as a uint16 array and its bit depth."""

    pixels: np.ndarray
    bit_depth: int


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
    from ..io.images import read_image

    img = read_image(p)
    a, rng_ = img.image, img.data_range
    if rng_ > 65535 or not np.all(a == np.round(a)):
        a, rng_ = a / rng_ * 65535.0, 65535.0
    arr = np.clip(np.round(a), 0, 65535).astype(np.uint16)
    bits = next((b for b in _BITS if rng_ <= 2**b - 1), 16)
    return DecodedImage(arr, max(bits, bit_depth(arr)))


def scale_for(width: int, height: int, fit: int) -> int:
    """The whole reduction that brings the longer side to at most ``fit`` pixels (1: full resolution)."""
    return max(1, math.ceil(max(width, height) / max(1, fit)))


def render(pixels: np.ndarray, scale: int, *, bits: int, etag: str) -> Rendition:
    """``pixels`` reduced ``scale`` times (block means, rounded; the last row and column of blocks padded
    with the edge pixels), gzip-compressed."""
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
    """Write the display rendition (longest side at most ``fit``) of image ``rel`` of the study folder
    ``root`` unless it is on disk already; True when it was made."""
    base = Path(root)
    path = (base / rel).resolve()
    st = path.stat()
    shape = _image_shape(path)
    if shape is not None:
        file = _disk_file(base / RENDITIONS, base, path, scale_for(*shape, fit))
        if _read_disk(file, st.st_mtime_ns, st.st_size) is not None:
            return False
    pixels, bits = decode(path)
    scale = scale_for(pixels.shape[1], pixels.shape[0], fit)
    file = _disk_file(base / RENDITIONS, base, path, scale)
    if shape is None and _read_disk(file, st.st_mtime_ns, st.st_size) is not None:
        return False
    r = render(pixels, scale, bits=bits, etag=_etag(str(path), st.st_mtime_ns, st.st_size, scale))
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
        The longest side of the display rendition (the page's default pane size).
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
        self.decoded: OrderedDict[tuple[str, int, int], tuple[np.ndarray, int]] = OrderedDict()

    @staticmethod
    def _key(path: Path, scale: int) -> tuple[str, int, int, int]:
        st = path.stat()
        return str(path), st.st_mtime_ns, st.st_size, int(scale)

    def get(self, path: Path, scale: int = 1, *, display: bool = False) -> Rendition:
        """The rendition of ``path`` reduced ``scale`` times (1: full resolution; :func:`scale_for`). A
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
            for s in range(scale, 0, -1) if display else (scale,):  # a missing file costs one failed open
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
        pixels, bits = got
        r = render(pixels, scale, bits=bits, etag=_etag(*dkey, scale))
        if self.root is not None and display:  # display renditions only: full ones stay in memory
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
