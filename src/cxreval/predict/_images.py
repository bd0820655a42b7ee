"""Find radiographs: :func:`list_images` turns ``--images DIR|LIST`` into :class:`ImageItem` rows (an id and a
path); each image is then read by :func:`cxreval.io.images.read_image` (its formats: that module's docstring).

Image ids
---------
A folder is searched recursively; an image's id is its path relative to the folder with ``/``
separators (``00013118_008.png`` for a flat NIH folder, as in ``BBox_List_2017``). A LIST is a text file
with one path per line (relative paths are relative to the list's folder; blank lines and lines starting
with ``#`` are ignored) or a CSV with a ``path`` column and an optional ``study_id`` column; the id is
``study_id`` when given, else the path as written.

Examples
--------
>>> import tempfile, pathlib
>>> d = pathlib.Path(tempfile.mkdtemp())
>>> (d / "p1").mkdir()
>>> for name in ("p1/a.png", "b.dcm", "notes.txt"):
...     _ = (d / name).write_bytes(b"")
>>> [it.study_id for it in list_images(d).items]
['b.dcm', 'p1/a.png']
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from ..exceptions import SchemaError
from ..io._read import read_csv_file
from ..io.images import IMAGE_SUFFIXES

__all__ = ["exc_text", "ImageItem", "ImageList", "list_images"]


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
    skipped: tuple[tuple[str, str], ...] = field(default=())  # (path, reason)


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
                skipped.append(
                    (str(p), f"suffix {p.suffix or '(none)'!r} is not one of {list(IMAGE_SUFFIXES)}")
                )
    return items, skipped


def _read_list(path: Path) -> list[ImageItem]:
    base = path.parent
    if path.suffix.lower() == ".csv":
        df = read_csv_file(
            path,
            error=lambda f, exc: f"images={str(f)!r}: cannot be read as a CSV ({exc_text(exc)}).",
            dtype=str,
            keep_default_na=False,
        )
        if "path" not in df.columns:
            raise SchemaError(
                f"images={str(path)!r}: a CSV image list needs a 'path' column (and optionally "
                f"'study_id'); its columns are {list(df.columns)}."
            )
        paths = df["path"].tolist()
        ids = df["study_id"].tolist() if "study_id" in df.columns else paths
        rows = list(zip(ids, paths))
    else:
        try:
            lines = path.read_text().splitlines()
        except (OSError, UnicodeDecodeError) as exc:
            raise SchemaError(
                f"images={str(path)!r}: cannot be read as a text list of image paths ({exc_text(exc)})."
            ) from exc
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
        raise SchemaError(
            f"images={str(source)!r}: no image found (suffixes {list(IMAGE_SUFFIXES)}"
            + (f"; {len(skipped)} other file(s) skipped" if skipped else "")
            + ")."
        )
    ids = pd.Series([it.study_id for it in found])
    dup = ids[ids.duplicated()].unique().tolist()
    if dup:
        raise SchemaError(
            f"images={str(source)!r}: image ids must be unique; {dup[:5]} occur more than once."
        )
    return ImageList(tuple(found), source, tuple(skipped))
