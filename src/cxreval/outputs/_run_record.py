"""The run record: ``run.json`` (argv, versions, inputs and files with their SHA-256) and the checks against it."""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import cast

from .._typing import PathLike
from ._errors import OutputError

__all__ = [
    "RUN_FILE",
    "is_cxreval_folder",
    "sha256_file",
    "utc_now",
    "write_run_record",
    "read_run",
    "run_files",
    "file_checksums",
    "check_unchanged",
]


RUN_FILE = "run.json"


def is_cxreval_folder(folder: PathLike) -> bool:
    """Whether ``folder`` holds the ``run.json`` of a cxreval run (so ``--overwrite`` may replace it)."""
    p = Path(folder) / RUN_FILE
    try:
        rec = json.loads(p.read_text())
    except (OSError, ValueError):
        return False
    return isinstance(rec, dict) and "cxreval_version" in rec and "files" in rec


def sha256_file(path: PathLike, *, chunk: int = 1 << 20) -> str:
    """SHA-256 hex digest of a file (a folder: of its files' relative names and digests, sorted)."""
    p = Path(path)
    h = hashlib.sha256()
    if p.is_dir():
        for f in sorted(x for x in p.rglob("*") if x.is_file()):
            h.update(str(f.relative_to(p)).encode() + b"\0" + sha256_file(f, chunk=chunk).encode() + b"\n")
        return h.hexdigest()
    with open(p, "rb") as fh:
        while block := fh.read(chunk):
            h.update(block)
    return h.hexdigest()


def utc_now() -> str:
    """The current UTC time as ISO 8601 (seconds), as run.json records it."""
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")


def _inputs_record(inputs: Sequence[str | os.PathLike[str]]) -> list[dict[str, object]]:
    rec = []
    for x in inputs:
        p = Path(x)
        entry: dict[str, object] = {"path": str(p)}
        if p.exists():
            entry["sha256"] = sha256_file(p)
            entry["bytes"] = p.stat().st_size if p.is_file() else None
        rec.append(entry)
    return rec


def write_run_record(
    folder: PathLike,
    *,
    started: str,
    inputs: Sequence[str | os.PathLike[str]] = (),
    argv: Sequence[str] | None = None,
    meta: dict[str, object] | None = None,
) -> dict[str, object]:
    """Write ``folder/run.json`` for a successful run: argv, versions, start/end (UTC), the inputs with their
    SHA-256, every file under ``folder`` (except run.json) with its SHA-256, and ``meta``; return the record."""
    from .._version import __version__

    folder = Path(folder)
    files = sorted(
        str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file() and p.name != RUN_FILE
    )
    record = {
        "argv": list(sys.argv if argv is None else argv),
        "cxreval_version": __version__,
        "python": sys.version.split()[0],
        "started": started,
        "ended": utc_now(),
        "status": "success",
        "inputs": _inputs_record(inputs),
        "files": files,
        "sha256": file_checksums(folder, files),
        **(meta or {}),
    }
    (folder / RUN_FILE).write_text(json.dumps(record, indent=2, default=str) + "\n")
    return record


def read_run(folder: PathLike) -> dict[str, object] | None:
    """The ``run.json`` record of an output folder, or None when the folder has none."""
    p = Path(folder) / RUN_FILE
    if not p.is_file():
        return None
    try:
        return json.loads(p.read_text())
    except (OSError, json.JSONDecodeError) as exc:
        raise OutputError(f"{p} is not a readable run record: {exc}") from None


def run_files(folder: PathLike) -> list[Path] | None:
    """The files a successful run wrote into ``folder`` (from ``run.json``), or None without a run record."""
    rec = read_run(folder)
    if rec is None:
        return None
    return [Path(folder) / f for f in cast("list[str]", rec.get("files", []))]


def file_checksums(folder: PathLike, files: Sequence[str]) -> dict[str, str]:
    """SHA-256 of each file (relative name -> hex digest), as ``run.json`` records them under ``sha256``."""
    return {f: sha256_file(Path(folder) / f) for f in files}


_VERIFIED: dict[tuple[str, int, int], str] = {}


def check_unchanged(path: PathLike, record: dict[str, object], name: str) -> None:
    """Raise :class:`OutputError` when ``path`` no longer has the SHA-256 that ``record`` (a ``run.json``)
    gives for ``name``: a result file truncated, edited or replaced after its run wrote it. Files the record
    has no digest for (older runs) pass."""
    sums = record.get("sha256")
    if not isinstance(sums, dict) or name not in sums:
        return
    p = Path(path)
    st = p.stat()
    key = (str(p.absolute()), st.st_size, st.st_mtime_ns)
    digest = _VERIFIED.get(key) or sha256_file(p)
    _VERIFIED[key] = digest
    if digest != sums[name]:
        raise OutputError(
            f"{p} has changed since the run wrote it (SHA-256 {digest[:12]}... instead of "
            f"{str(sums[name])[:12]}...; truncated or edited?). Re-run the command that wrote it."
        )
