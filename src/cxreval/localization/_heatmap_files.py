"""Heatmaps on disk, read map by map: an index built from file headers, and the reader of any slice of it.

``cxreval localize`` accepts maps keyed ``"<image id>/<finding>"`` in

* a ``.npz`` file (``numpy.savez`` / ``savez_compressed``, :func:`cxreval.localization.save_heatmaps`,
  ``cxreval predict --heatmaps``' ``heatmaps/<model>.npz``): member ``"<key>.npy"`` holds one 2-D map;
* a folder of ``.npy`` files: ``DIR/<image id>/<finding>.npy`` (the key is the path below ``DIR`` without
  ``.npy``; an unzipped ``.npz`` is such a folder);
* several of these at once (keys must not repeat across them).

:func:`scan_heatmaps` reads only the headers: the zip directory, each member's local header and its
``.npy`` header (the first bytes of a compressed member), or each ``.npy`` file's header. It refuses an
unreadable file, an encrypted or unsupported zip member, a pickled, non-numeric or non-2-D array,
naming the file and member, before any map is read. The index it returns
(:class:`HeatmapFiles`) says where each map's bytes are; :func:`read_maps` reads the maps of any slice of it
with one ``open`` per file, seeking straight to each map (stored members and ``.npy`` files are read
in place by byte offset, which is what a memory map would page in, without the cost of mapping every
small file; compressed members are inflated one by one), so a task that carries a slice of the index and
the file paths reads its own maps, on any machine that sees the same paths (shared storage). Values are
checked to be finite as they are read.

Examples
--------
>>> import tempfile, pathlib
>>> d = pathlib.Path(tempfile.mkdtemp())
>>> np.savez(d / "maps.npz", **{"im1.png/Mass": np.eye(4), "im2.png/Nodule": np.ones((4, 4))})
>>> idx = scan_heatmaps([d / "maps.npz"])
>>> idx.keys, idx.shape.tolist()
(('im1.png/Mass', 'im2.png/Nodule'), [[4, 4], [4, 4]])
>>> read_maps(idx)[0].tolist() == np.eye(4).tolist()
True
"""

from __future__ import annotations

import ast
import io
import os
import struct
import zipfile
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..exceptions import InvalidParameterError, SchemaError

__all__ = ["HEATMAP_INPUTS", "HeatmapFiles", "scan_heatmaps", "read_maps"]

HEATMAP_INPUTS = (
    "a .npz of maps keyed '<image id>/<finding>' (numpy.savez[_compressed]; the heatmaps/<model>.npz "
    "that predict --heatmaps writes), or a folder of DIR/<image id>/<finding>.npy files; repeat for "
    "several (keys must not repeat)"
)

_LOCAL = struct.Struct("<4s2B4HL2L2H")  # zip local file header (30 bytes)
_LOCAL_SIG = b"PK\x03\x04"
_HEAD = 1024  # bytes read to find a member's .npy header


@dataclass(frozen=True, eq=False)
class HeatmapFiles:
    """Where each map of a set of heatmap files is: one entry per map, in file order.

    Attributes
    ----------
    files : tuple of str
        The files (``.npz`` files and ``.npy`` files), as given or found.
    keys : tuple of str
        ``"<image id>/<finding>"`` of each map.
    file_index : ndarray of int64
        Which of ``files`` holds the map.
    offset : ndarray of int64
        Byte offset of the map's array data (stored member or ``.npy`` file), or of its compressed
        member data (``deflated``).
    size : ndarray of int64
        Bytes to read there: the array's bytes, or the compressed member's size.
    header : ndarray of int64
        For a compressed member: length of the ``.npy`` header at the start of the inflated stream.
    deflated : ndarray of bool
    dtype : tuple of str
        The array's dtype (``numpy.dtype.str``) of each map.
    shape : ndarray of int64, shape (n, 2)
    fortran : ndarray of bool
        Column-major arrays.
    """

    files: tuple[str, ...]
    keys: tuple[str, ...]
    file_index: np.ndarray
    offset: np.ndarray
    size: np.ndarray
    header: np.ndarray
    deflated: np.ndarray
    dtype: tuple[str, ...]
    shape: np.ndarray
    fortran: np.ndarray

    def __len__(self) -> int:
        return len(self.keys)

    def where(self, i: int) -> str:
        """The file (and member) of map ``i``, for messages."""
        f = self.files[int(self.file_index[i])]
        return f"{f} (member {self.keys[i]}.npy)" if f.endswith(".npz") else f

    def take(self, idx: Sequence[int] | np.ndarray) -> HeatmapFiles:
        """The entries ``idx`` (in that order), with only the files they use."""
        idx = np.asarray(idx, dtype=np.int64)
        used, fi = np.unique(self.file_index[idx], return_inverse=True)
        return HeatmapFiles(
            tuple(self.files[int(u)] for u in used),
            tuple(self.keys[int(i)] for i in idx),
            fi.astype(np.int64),
            self.offset[idx],
            self.size[idx],
            self.header[idx],
            self.deflated[idx],
            tuple(self.dtype[int(i)] for i in idx),
            self.shape[idx],
            self.fortran[idx],
        )


def _parse_npy_header(fh: io.BytesIO, where: str) -> tuple[str, tuple[int, ...], bool, int]:
    """``(dtype.str, shape, fortran, header length)`` of the ``.npy`` stream at ``fh``'s position."""
    start = fh.tell()
    try:
        version = np.lib.format.read_magic(fh)
        if version == (1, 0):
            shape, fortran, dtype = np.lib.format.read_array_header_1_0(fh)
        elif version == (2, 0):
            shape, fortran, dtype = np.lib.format.read_array_header_2_0(fh)
        else:
            # version 3.0 (utf-8 header): the same dictionary, with a 4-byte length
            (n,) = struct.unpack("<I", fh.read(4))
            d = ast.literal_eval(fh.read(n).decode("utf8"))
            shape, fortran, dtype = tuple(d["shape"]), bool(d["fortran_order"]), np.dtype(d["descr"])
    except (ValueError, SyntaxError, KeyError, TypeError, struct.error) as exc:
        raise SchemaError(f"{where}: not a readable .npy array ({exc}).") from exc
    if dtype.hasobject or dtype.kind not in "biuf":
        raise SchemaError(
            f"{where}: heatmap values must be numbers (bool, int or float); the array's dtype is "
            f"{dtype} (pickled objects are never read)."
        )
    if len(shape) != 2 or 0 in shape:
        raise SchemaError(
            f"{where}: a heatmap must be a non-empty 2-D array (rows, columns); got shape {shape}."
        )
    return dtype.str, tuple(int(s) for s in shape), bool(fortran), fh.tell() - start


def _npy_header(head: bytes, where: str, cache: dict[bytes, tuple]) -> tuple[str, tuple[int, ...], bool, int]:
    """:func:`_parse_npy_header` of the bytes ``head`` (the first bytes of a ``.npy`` stream), parsed once
    per distinct header (maps of one run share theirs)."""
    if head[:6] == b"\x93NUMPY" and len(head) >= 10:
        n = 10 + (
            struct.unpack("<H", head[8:10])[0]
            if head[6] == 1
            else struct.unpack("<I", head[8:12])[0] + 2
            if len(head) >= 12
            else 0
        )
        key = head[:n]
        if len(key) == n:
            hit = cache.get(key)
            if hit is None:
                hit = cache[key] = _parse_npy_header(io.BytesIO(key), where)
            return hit
    return _parse_npy_header(io.BytesIO(head), where)


def _scan_npz(path: Path, fi: int, rows: list[tuple]) -> None:
    cache: dict[bytes, tuple] = {}
    try:
        with zipfile.ZipFile(path) as z, open(path, "rb") as fh:
            for info in z.infolist():
                if info.is_dir():
                    continue
                where = f"{path} (member {info.filename})"
                if not info.filename.endswith(".npy"):
                    raise SchemaError(
                        f"{where}: a heatmap .npz holds only '<image id>/<finding>.npy' members."
                    )
                if info.flag_bits & 0x1:
                    raise SchemaError(f"{where}: encrypted zip members cannot be read.")
                if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
                    raise SchemaError(
                        f"{where}: zip compression {info.compress_type} is not supported "
                        "(stored or deflated, as numpy.savez / savez_compressed write)."
                    )
                fh.seek(info.header_offset)
                raw = fh.read(_HEAD)
                if len(raw) < _LOCAL.size or raw[:4] != _LOCAL_SIG:
                    raise SchemaError(f"{where}: the zip member's local header is damaged.")
                parts = _LOCAL.unpack(raw[: _LOCAL.size])
                skip = _LOCAL.size + parts[10] + parts[11]
                data = info.header_offset + skip
                if len(raw) < skip + min(info.compress_size, 512):
                    fh.seek(data)
                    raw = fh.read(_HEAD)
                    skip = 0
                body = raw[skip : skip + info.compress_size]
                if info.compress_type == zipfile.ZIP_DEFLATED:
                    head = zlib.decompressobj(-15).decompress(body, _HEAD)
                    dt, shape, fortran, hl = _npy_header(head, where, cache)
                    rows.append(
                        (info.filename[:-4], fi, data, info.compress_size, hl, True, dt, shape, fortran)
                    )
                else:
                    dt, shape, fortran, hl = _npy_header(body, where, cache)
                    rows.append(
                        (info.filename[:-4], fi, data + hl, info.file_size - hl, 0, False, dt, shape, fortran)
                    )
    except (OSError, zipfile.BadZipFile, zlib.error, EOFError) as exc:
        raise SchemaError(f"{path}: cannot be read as a NumPy .npz of heatmaps ({exc}).") from exc


def _scan_npy(path: Path, key: str, fi: int, rows: list[tuple], cache: dict[bytes, tuple]) -> None:
    try:
        with open(path, "rb") as fh:
            dt, shape, fortran, hl = _npy_header(fh.read(_HEAD), str(path), cache)
            size = os.fstat(fh.fileno()).st_size - hl
    except OSError as exc:
        raise SchemaError(f"{path}: cannot be read as a .npy heatmap ({exc}).") from exc
    rows.append((key, fi, hl, size, 0, False, dt, shape, fortran))


def scan_heatmaps(paths: Sequence[str | os.PathLike[str]] | str | os.PathLike[str]) -> HeatmapFiles:
    """Index the maps of ``.npz`` files and folders of ``.npy`` files from their headers only.

    Parameters
    ----------
    paths : path-like or sequence of path-like
        ``.npz`` files and folders (every ``*.npy`` below a folder, in sorted path order; the key is
        the path below the folder without ``.npy``).

    Returns
    -------
    index : HeatmapFiles
        Entries in the order of ``paths``, then zip-member or path order.

    Raises
    ------
    SchemaError
        A missing or unreadable file, a folder without ``.npy`` files, a member that is not a numeric
        2-D ``.npy`` array, a truncated array, or a key given twice; the message names the file.
    """
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    if not isinstance(paths, Sequence) or not all(isinstance(p, (str, os.PathLike)) for p in paths):
        raise InvalidParameterError(
            f"The 'paths' parameter of scan_heatmaps must be a path or a sequence of paths "
            f"(.npz files, folders of .npy). Got {paths!r} instead."
        )
    files: list[str] = []
    rows: list[tuple] = []
    for p in map(Path, paths):
        if p.is_dir():
            found = sorted(q for q in p.rglob("*.npy") if q.is_file())
            if not found:
                hint = " (it holds .npz files: pass them instead)" if any(p.glob("*.npz")) else ""
                raise SchemaError(
                    f"{p}: a heatmap folder must hold '<image id>/<finding>.npy' files; found none{hint}."
                )
            cache: dict[bytes, tuple] = {}
            for q in found:
                files.append(str(q))
                _scan_npy(q, q.relative_to(p).with_suffix("").as_posix(), len(files) - 1, rows, cache)
        elif p.is_file():
            if p.suffix.lower() != ".npz":
                raise SchemaError(f"{p}: heatmaps must be a .npz file or a folder of .npy files.")
            files.append(str(p))
            _scan_npz(p, len(files) - 1, rows)
        else:
            raise SchemaError(f"{p}: no such heatmap file or folder.")
    if not rows:
        raise SchemaError(f"no heatmaps in {', '.join(map(str, paths))}.")
    keys, fi, off, size, hl, defl, dts, shapes, fortran = zip(*rows)
    idx = HeatmapFiles(
        tuple(files),
        tuple(keys),
        np.array(fi, np.int64),
        np.array(off, np.int64),
        np.array(size, np.int64),
        np.array(hl, np.int64),
        np.array(defl, bool),
        tuple(dts),
        np.array(shapes, np.int64).reshape(-1, 2),
        np.array(fortran, bool),
    )
    want = idx.shape.prod(axis=1) * np.array([np.dtype(d).itemsize for d in dts])
    short = ~idx.deflated & (idx.size < want)
    if short.any():
        i = int(np.flatnonzero(short)[0])
        raise SchemaError(
            f"{idx.where(i)}: the array is truncated ({int(idx.size[i])} of {int(want[i])} bytes)."
        )
    seen: dict[str, int] = {}
    for i, k in enumerate(idx.keys):
        j = seen.setdefault(k, i)
        if j != i:
            raise SchemaError(f"heatmap key {k!r} appears twice: in {idx.where(j)} and in {idx.where(i)}.")
    return idx


def read_maps(index: HeatmapFiles) -> list[np.ndarray]:
    """The maps of ``index`` as float64 arrays, in order, each checked to be finite.

    Raises
    ------
    SchemaError
        A map holding NaN or inf, or bytes that cannot be read; the message names the file and key.
    """
    if not isinstance(index, HeatmapFiles):
        raise InvalidParameterError(
            f"The 'index' parameter of read_maps must be a HeatmapFiles (from scan_heatmaps). "
            f"Got {index!r} instead."
        )
    out: list[np.ndarray] = []
    handles: dict[int, io.BufferedReader] = {}
    try:
        for i in range(len(index)):
            fi = int(index.file_index[i])
            fh = handles.get(fi)
            if fh is None:
                fh = handles[fi] = open(index.files[fi], "rb")
            fh.seek(int(index.offset[i]))
            raw = fh.read(int(index.size[i]))
            dt = np.dtype(index.dtype[i])
            shape = tuple(int(s) for s in index.shape[i])
            n = shape[0] * shape[1] * dt.itemsize
            if index.deflated[i]:
                raw = zlib.decompressobj(-15).decompress(raw, int(index.header[i]) + n)[
                    int(index.header[i]) :
                ]
            if len(raw) < n:
                raise SchemaError(f"{index.where(i)}: the array is truncated ({len(raw)} of {n} bytes).")
            a = np.frombuffer(raw, dtype=dt, count=shape[0] * shape[1])
            a = a.reshape(shape, order="F" if index.fortran[i] else "C").astype(float)
            if not np.isfinite(a).all():
                bad = np.argwhere(~np.isfinite(a))
                raise SchemaError(
                    f"{index.where(i)}: heatmap {index.keys[i]!r} must be finite; found "
                    f"{float(a[tuple(bad[0])])!r} at index {tuple(int(v) for v in bad[0])} "
                    f"({len(bad)} non-finite value(s))."
                )
            out.append(a)
    except (OSError, zlib.error) as exc:
        raise SchemaError(f"{index.where(len(out))}: cannot read the heatmap ({exc}).") from exc
    finally:
        for fh in handles.values():
            fh.close()
    return out
