"""Split list files: one ``<split>_list.txt`` per part, one study id a line, and the split-name check.

:func:`read_split_lists` reads a folder of ``*list.txt`` files, one split per file, named after the file
(``train_val_list.txt`` → ``train_val``); :func:`write_split_lists` writes them; :func:`check_split_names`
keeps every split name a plain file-name part.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from .._typing import PathLike
from .._validation import check_path
from ..exceptions import InvalidParameterError, SchemaError
from ..outputs._folder import path_inside
from ..results import ReadReport, ReadResult
from ..schema._columns import check_columns

__all__ = ["read_split_lists", "write_split_lists", "check_split_names"]

_SPLIT_COLUMNS = ("study_id", "split")


_SAFE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")


def check_split_names(names: Sequence[str], *, func: str = "check_split_names") -> None:
    """Check that split names are plain file-name parts.

    A split name becomes the file name ``<name>_list.txt``: letters, digits, '_', '.' and '-' only, so that it
    can never name a path outside the output folder (``../x``, ``/x``, ``a/b``).

    Raises
    ------
    InvalidParameterError
        Naming the first offending name and ``func``.

    Examples
    --------
    >>> check_split_names(["train", "val-1"])
    >>> check_split_names(["../evil"])
    Traceback (most recent call last):
    ...
    cxreval.exceptions.InvalidParameterError: The split name '../evil' (check_split_names) is not a plain ...
    """
    for name in names:
        if not isinstance(name, str) or not _SAFE_NAME.fullmatch(name) or ".." in name:
            raise InvalidParameterError(
                f"The split name {name!r} ({func}) is not a plain file-name part; use "
                "letters, digits, '_', '.' and '-' only (it becomes '<name>_list.txt' "
                "inside the output folder)."
            )


def _split_name(path: Path) -> str:
    stem = path.name[: -len(".txt")]
    for suffix in ("_list", "-list", "list"):
        if stem.endswith(suffix) and len(stem) > len(suffix):
            return stem[: -len(suffix)]
    return stem


def read_split_lists(directory: PathLike, *, pattern: str = "*list.txt") -> ReadResult:
    """Read every ``*list.txt`` file of a folder as one split part.

    Each file holds one study id (image file name) per line; the part is named after the file without
    ``_list.txt`` (``train_val_list.txt`` → ``train_val``, ``official_test_list.txt`` → ``official_test``).
    Blank lines are skipped; an id repeated within one file is kept once and reported as dropped.

    Returns
    -------
    res : ReadResult
        ``res.table``: ``study_id, split`` in file then line order; ``res.report`` counts lines read and
        lists repeated ids (``row`` is the 0-based line in its file, ``value`` is ``file:id``).

    Raises
    ------
    SchemaError
        The folder does not exist or holds no matching file.
    """
    check_path(directory, name="directory", func="read_split_lists", allow_none=False)
    d = Path(directory)
    if not d.is_dir():
        raise SchemaError(f"Split folder {str(d)!r} does not exist or is not a folder.")
    files = sorted(p for p in d.glob(pattern) if p.is_file())
    from ..outputs._run_record import run_files

    listed = run_files(d)  # a folder written by a cxreval run: only the files that run wrote
    unlisted: list[str] = []
    if listed is not None:
        keep = {p.resolve() for p in listed}
        unlisted = [p.name for p in files if p.resolve() not in keep]
        files = [p for p in files if p.resolve() in keep]
    if not files:
        raise SchemaError(
            f"Split folder {str(d)!r} holds no file matching {pattern!r}"
            + (" among those its run.json lists" if listed is not None else "")
            + "; each such file is one "
            "split (e.g. train_val_list.txt, test_list.txt)."
        )
    names = [_split_name(p) for p in files]
    if len(set(names)) != len(names):
        raise SchemaError(f"Split files in {str(d)!r} give repeated split names {names}.")
    parts, dropped, n_read = [], [], 0
    for p, name in zip(files, names):
        lines = [ln.strip() for ln in p.read_text().splitlines()]
        ids = pd.Series([ln for ln in lines if ln], dtype="str")
        rows = np.flatnonzero([bool(ln) for ln in lines])
        n_read += len(ids)
        dup = ids.duplicated().to_numpy()
        for r, v in zip(rows[dup], ids[dup]):
            dropped.append({"row": int(r), "reason": f"repeated in {p.name}", "value": f"{p.name}:{v}"})
        parts.append(pd.DataFrame({"study_id": ids[~dup].to_numpy(), "split": name}))
    table = pd.concat(parts, ignore_index=True).astype({"study_id": "str", "split": "str"})
    report = ReadReport(
        str(d),
        n_read,
        len(table),
        dropped=pd.DataFrame(dropped, columns=["row", "reason", "value"]),
        notes=tuple(f"{name}: {p.name}" for p, name in zip(files, names))
        + ((f"not written by the run recorded in run.json, not read: {unlisted}",) if unlisted else ()),
    )
    return ReadResult(table, report)


def write_split_lists(assignments: pd.DataFrame, directory: str | Path) -> dict[str, Path]:
    """Write one ``<split>_list.txt`` per part (study ids, one per line); :func:`read_split_lists` reads them."""
    check_columns(assignments, _SPLIT_COLUMNS, where="assignments")
    check_split_names([str(n) for n in pd.unique(assignments["split"])], func="write_split_lists")
    d = Path(directory)
    d.mkdir(parents=True, exist_ok=True)
    out = {}
    for name, g in assignments.groupby("split", sort=False):
        p = path_inside(d, f"{name}_list.txt", what="split name")
        p.write_text("".join(f"{s}\n" for s in g["study_id"]))
        out[str(name)] = p
    return out
