"""Result files of a folder for the HTML report: which files are results, and reading them.

Which files of a folder are results: when the folder (or the folder of the run that wrote it, up to two
levels up) holds a ``run.json`` (:mod:`cxreval.outputs`), only the files that record lists; other files
in a reused folder are stale and ignored, and a listed file whose SHA-256 differs from the one recorded
(truncated or edited after the run) is refused with an error. Without ``run.json`` every file is read.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import NamedTuple

import pandas as pd

from ..io import read_table
from ..outputs._errors import OutputError
from ..outputs._run_record import RUN_FILE, check_unchanged, read_run

__all__: list[str] = []


class RunRecord(NamedTuple):
    """What :func:`run_record` returns: the ``run.json`` record governing a folder and the prefix of the folder's
    files in its list."""

    record: dict[str, object]
    prefix: str


def run_record(folder: str | Path) -> RunRecord | None:
    """The ``run.json`` record that governs ``folder`` and the prefix of ``folder``'s files in its list.

    The folder's own ``run.json`` wins; else that of its parent or grandparent (a run that wrote several
    folders, such as ``cxreval demo``). None when no such record exists.
    """
    folder = Path(folder)
    prefix = ""
    for up in (folder, folder.parent, folder.parent.parent):
        rec = read_run(up)
        if rec is not None:
            return RunRecord(rec, prefix)
        prefix = f"{up.name}/{prefix}"
    return None


def listed_files(folder: str | Path) -> frozenset[str] | None:
    """Names (relative to ``folder``, ``/``-separated) of the files the governing ``run.json`` lists, or
    None when no ``run.json`` governs the folder (then every file counts)."""
    found = run_record(folder)
    if found is None:
        return None
    rec, prefix = found
    files = rec.get("files") or []
    if not isinstance(files, list):
        return frozenset()
    return frozenset(str(f)[len(prefix) :] for f in files if str(f).startswith(prefix))


def result_path(folder: str | Path, name: str) -> Path | None:
    """``folder/name`` when it is a file the folder's run wrote (see :func:`listed_files`), else None."""
    p = Path(folder) / name
    if not p.is_file():
        return None
    found = run_record(folder)
    if found is None:
        return p
    rec, prefix = found
    listed = listed_files(folder)
    rel = name.replace("\\", "/")
    if listed is not None and rel not in listed:
        return None
    check_unchanged(p, rec, prefix + rel)  # a truncated or edited result file is refused, not shown short
    return p


def find_result_file(folder: Path, name: str) -> Path | None:
    """Return ``folder/name`` or its Parquet twin (``.parquet`` for a ``.csv`` name), else None.

    Files that a ``run.json`` governing the folder does not list are ignored (stale).
    """
    p = result_path(folder, name)
    if p is not None:
        return p
    twin = name[:-4] + ".parquet" if name.endswith(".csv") else None
    if twin is not None and (p := result_path(folder, twin)) is not None:
        return p
    _check_not_lost(folder, [n for n in (name, twin) if n is not None])
    return None


def _check_not_lost(folder: Path, names: Sequence[str]) -> None:
    """Refuse a result file that the governing ``run.json`` lists but that is gone (deleted or moved after the
    run): the report would otherwise leave its section out in silence, as if the run had not written it."""
    listed = listed_files(folder)
    lost = [n for n in names if listed is not None and n.replace("\\", "/") in listed]
    if lost:
        raise OutputError(
            f"{Path(folder) / lost[0]} is missing, yet the folder's {RUN_FILE} lists it (deleted or "
            f"moved after the run?); the report would leave its part out. Re-run the command that wrote "
            f"{folder}, or restore the file."
        )


def read_result_table(path: str | Path) -> pd.DataFrame:
    """Read a CSV or Parquet result table.

    Raises
    ------
    SchemaError
        If the file cannot be parsed as a table; the message names the file.
    """
    return read_table(path, error=lambda p, exc: f"Cannot read result table {str(p)!r}: {exc}")


def missing_columns(df: pd.DataFrame, required: Sequence[str]) -> list[str]:
    """The names in ``required`` that ``df`` lacks."""
    return [c for c in required if c not in df.columns]
