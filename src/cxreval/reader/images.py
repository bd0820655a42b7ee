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
"""

from __future__ import annotations

import gzip
import hashlib
import math
import threading
from collections import OrderedDict
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import numpy as np

__all__ = ["DISPLAY_FIT", "Rendition", "bit_depth", "decode", "render", "scale_for", "RenditionCache"]

DISPLAY_FIT = 1280
"""Default longest side (pixels) of the display rendition; the page asks for its pane's size."""
_BITS = (8, 10, 12, 14, 16)


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
        return {"X-Width": str(self.width), "X-Height": str(self.height), "X-Full-Width": str(self.full_width),
                "X-Full-Height": str(self.full_height), "X-Scale": str(self.scale), "X-Bits": str(self.bits),
                "X-Data-Range": str(self.data_range), "ETag": self.etag, "Content-Encoding": "gzip"}


def bit_depth(pixels: np.ndarray) -> int:
    """The smallest of 8, 10, 12, 14 and 16 bits that holds the largest value of integer ``pixels``."""
    top = int(pixels.max()) if pixels.size else 0
    return next((b for b in _BITS if top < 2 ** b), 16)


def decode(path: str | Path) -> tuple[np.ndarray, int]:
    """An image file as a uint16 array and its bit depth. 8- and 16-bit PNG/TIFF/JPEG are read as stored
    (depth from the pixels); other files through :func:`cxreval.iqa.read_image` (DICOM: ``BitsStored``;
    float data or ranges over 16 bits scaled to 0..65535)."""
    p = Path(path)
    if p.suffix.lower() in (".png", ".tif", ".tiff", ".jpg", ".jpeg"):
        from PIL import Image

        with Image.open(p) as im:
            if im.mode in ("I;16", "I;16L", "I;16B", "L"):
                a = np.asarray(im)
                a = a.astype(np.uint16) if a.dtype != np.uint16 else a
                return a, 8 if im.mode == "L" else bit_depth(a)
    from ..io.images import read_image

    img = read_image(p)
    a, rng_ = img.image, img.data_range
    if rng_ > 65535 or not np.all(a == np.round(a)):
        a, rng_ = a / rng_ * 65535.0, 65535.0
    arr = np.clip(np.round(a), 0, 65535).astype(np.uint16)
    bits = next((b for b in _BITS if rng_ <= 2 ** b - 1), 16)
    return arr, max(bits, bit_depth(arr))


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
        wide = (2 ** bits - 1) * n + n // 2 >= 2 ** 16  # the block sums would overflow 16 bits
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
    return Rendition(body, int(out.shape[1]), int(out.shape[0]), int(w), int(h), int(scale), int(bits),
                     int(2 ** bits - 1), etag)


class RenditionCache:
    """Renditions by (file, modification, scale), at most ``max_bytes`` of them; each made once however
    many requests ask for it at once; :meth:`warm` renders ahead on ``workers`` threads (at most
    ``max_pending`` waiting)."""

    def __init__(self, *, max_bytes: int = 512 * 2 ** 20, workers: int = 2, max_pending: int = 32) -> None:
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

    def get(self, path: Path, scale: int = 1) -> Rendition:
        """The rendition of ``path`` reduced ``scale`` times (1: full resolution; :func:`scale_for`)."""
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
            value = self._make(path, key)
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

    def _make(self, path: Path, key: tuple[str, int, int, int]) -> Rendition:
        dkey = key[:3]
        with self.lock:
            got = self.decoded.get(dkey)
        if got is None:
            got = decode(path)
            with self.lock:  # the last few decoded images: a zoom after the display rendition decodes nothing
                self.decoded[dkey] = got
                while len(self.decoded) > 4:
                    self.decoded.popitem(last=False)
        pixels, bits = got
        scale = key[3]
        etag = '"' + hashlib.sha256(repr((key[:3], scale)).encode()).hexdigest()[:20] + '"'
        return render(pixels, scale, bits=bits, etag=etag)

    def warm(self, path: Path, scale: int) -> None:
        """Render ``path`` in the background unless it is cached, being made, or too much is waiting."""
        try:
            key = self._key(path, scale)
        except OSError:
            return
        with self.lock:
            if key in self.data or key in self.making or len(self.making) >= self.max_pending:
                return
        self.pool.submit(self._warm, path, scale)

    def _warm(self, path: Path, scale: int) -> None:
        try:
            self.get(path, scale)
        except Exception:  # noqa: BLE001 - the request for it will report the problem
            pass

    def close(self) -> None:
        self.pool.shutdown(wait=False, cancel_futures=True)
