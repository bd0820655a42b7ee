"""Compare two cxreval output folders table by table: ``python bench/compare_outputs.py A B``.

Used to show that a refactoring leaves what ``cxreval demo`` / ``agree`` / ``synth`` write unchanged
build the folder from one source tree and from another, then compare.

- Both folders must hold the same files (relative paths); ``run.json`` files are ignored (they record
  argv, times and digests).
- ``.csv`` and ``.parquet``: read with pandas and compared exactly (values, dtypes, column order); for CSV,
  byte-identity is reported as well. A Parquet file whose table is equal but whose embedded metadata
  differs (e.g. ``PANDAS_ATTRS``, where pandas stored ``DataFrame.attrs``) is reported as a note.
- ``.json``: parsed and compared; ``.npz``: array by array; ``.png``: bytes.
- Text (``.md``, ``.txt``, ``.yaml``, ``.html``...): compared after masking the two folders' own paths,
  timestamps, durations, SHA-256 digests and UUIDs (the HTML report names the folders it read and embeds
  run records, also inside its base64 ``data:text/csv`` download links, which are decoded first), and the
  byte size listed next to a ``.parquet`` file name (Parquet files are compared as tables).

Two options declare an intended change, so that everything else is still compared exactly:

- ``--rename OLD=NEW`` (repeatable): a column renamed in a table of ``A`` (a vocabulary change:
  ``image_id`` -> ``study_id``); ``A``'s tables are renamed before the comparison, and each rename actually
  applied is printed as a note.
- ``--allow-new``: files only in ``B`` (a result that now writes every file of its ``FILES``) are notes, not
  differences; a file only in ``A`` is always a difference.

Exit status 0 when every file is equal, 1 otherwise (each difference is printed with its file).
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import numpy as np
import pandas as pd

__all__ = ["compare_folders", "main"]

IGNORED = {"run.json"}
_MASKS = (
    (re.compile(r"\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:?\d\d)?"), "<time>"),
    (re.compile(r"\b[0-9a-f]{64}\b"), "<sha256>"),
    (re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b"), "<uuid>"),
    (re.compile(r"\b\d+(?:\.\d+)? ?s\b"), "<secs>"),
    # the size of a Parquet file in a provenance listing: Parquet files are compared as tables above, and their
    # size changes with metadata that is not part of the table (PANDAS_ATTRS)
    (re.compile(r"(\.parquet(?:,|</td><td class=\"num\">))\d+"), r"\1<bytes>"),
)


_DATA_URI = re.compile(r"data:(text/[a-z]+)(;charset=[\w-]+)?;base64,([A-Za-z0-9+/=]+)")


def _decode_text_uris(text: str) -> str:
    """Inline ``data:text/...;base64,`` payloads (the report's CSV downloads) as text, so they get masked."""
    import base64

    return _DATA_URI.sub(
        lambda m: f"data:{m.group(1)},{base64.b64decode(m.group(3)).decode('utf-8', 'replace')}", text
    )


def _mask(text: str, root: Path | None = None) -> str:
    text = _decode_text_uris(text)
    if root is not None:  # the output folder's own path (the report names the folders it read)
        for r in sorted({str(root.resolve()), str(root)}, key=len, reverse=True):
            text = text.replace(r, "<out>")
    for pat, repl in _MASKS:
        text = pat.sub(repl, text)
    return text


def _files(root: Path) -> set[str]:
    return {p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file() and p.name not in IGNORED}


def _frames_equal(
    a: pd.DataFrame,
    b: pd.DataFrame,
    renames: dict[str, str] | None = None,
    notes: list[str] | None = None,
    name: str = "",
) -> str:
    a, b = a.copy(), b.copy()
    a.attrs, b.attrs = {}, {}
    hit = {k: v for k, v in (renames or {}).items() if k in a.columns}
    if hit:
        a = a.rename(columns=hit)
        if notes is not None:
            notes.append(f"{name}: renamed " + ", ".join(f"{k} -> {v}" for k, v in hit.items()))
    try:
        pd.testing.assert_frame_equal(a, b, check_exact=True)
    except AssertionError as exc:
        return " ".join(str(exc).split())[:400]
    return ""


def _compare_file(
    a: Path,
    b: Path,
    notes: list[str],
    roots: tuple[Path, Path] | None = None,
    renames: dict[str, str] | None = None,
) -> str:
    """'' when equal, else why not; equal-but-noteworthy things go to ``notes``."""
    suffix = a.suffix.lower()
    if suffix == ".csv":
        if a.read_bytes() == b.read_bytes():
            return ""
        why = _frames_equal(pd.read_csv(a), pd.read_csv(b), renames, notes, a.name)
        if not why:
            notes.append(f"{a.name}: equal tables, different bytes")
        return why
    if suffix == ".parquet":
        why = _frames_equal(pd.read_parquet(a), pd.read_parquet(b), renames, notes, a.name)
        if not why and a.read_bytes() != b.read_bytes():
            import pyarrow.parquet as pq

            ka, kb = (set((pq.read_schema(p).metadata or {}).keys()) for p in (a, b))
            extra = sorted(k.decode() for k in ka ^ kb)
            notes.append(
                f"{a.name}: equal tables, different file metadata"
                + (f" (only in one: {extra})" if extra else "")
            )
        return why
    if suffix == ".json":
        ja, jb = (json.loads(_mask(p.read_text(), r)) for p, r in zip((a, b), roots or (None, None)))
        return "" if ja == jb else "JSON content differs"
    if suffix == ".npz":
        with np.load(a, allow_pickle=False) as za, np.load(b, allow_pickle=False) as zb:
            if sorted(za.files) != sorted(zb.files):
                return f"arrays {sorted(za.files)} vs {sorted(zb.files)}"
            bad = [k for k in za.files if not np.array_equal(za[k], zb[k], equal_nan=za[k].dtype.kind == "f")]
            return f"arrays differ: {bad}" if bad else ""
    if suffix in (".png", ".jpg", ".jpeg", ".npy", ".gz", ".pt"):
        return "" if a.read_bytes() == b.read_bytes() else "bytes differ"
    ta, tb = (_mask(p.read_text(errors="replace"), r) for p, r in zip((a, b), roots or (None, None)))
    if ta == tb:
        return ""
    la, lb = ta.splitlines(), tb.splitlines()
    i = next((i for i, (x, y) in enumerate(zip(la, lb)) if x != y), min(len(la), len(lb)))
    return (
        f"text differs from line {i + 1}: {la[i][:160] if i < len(la) else '<end>'!r} vs "
        f"{lb[i][:160] if i < len(lb) else '<end>'!r}"
    )


def compare_folders(
    a: str | Path,
    b: str | Path,
    *,
    out=sys.stdout,
    renames: dict[str, str] | None = None,
    allow_new: bool = False,
) -> int:
    """Print every difference between folders ``a`` and ``b``; return the number of differences.

    ``renames`` ``{old: new}``: columns of ``a``'s tables renamed before comparing; ``allow_new``: files only
    in ``b`` are notes instead of differences.
    """
    a, b = Path(a), Path(b)
    fa, fb = _files(a), _files(b)
    problems = [f"only in {a}: {f}" for f in sorted(fa - fb)]
    notes: list[str] = []
    if allow_new:
        notes += [f"{f}: new in {b}" for f in sorted(fb - fa)]
    else:
        problems += [f"only in {b}: {f}" for f in sorted(fb - fa)]
    n_tables = 0
    for rel in sorted(fa & fb):
        n_tables += rel.endswith((".csv", ".parquet"))
        file_notes: list[str] = []
        why = _compare_file(a / rel, b / rel, file_notes, (a, b), renames)
        notes += [f"{rel}: {n.split(': ', 1)[1]}" for n in file_notes]
        if why:
            problems.append(f"{rel}: {why}")
    for n in notes:
        print(f"note  {n}", file=out)
    for p in problems:
        print(f"DIFF  {p}", file=out)
    print(
        f"{len(fa & fb)} files compared ({n_tables} tables), {len(problems)} difference(s), {len(notes)} note(s); "
        f"run.json ignored",
        file=out,
    )
    return len(problems)


def main(argv: list[str] | None = None) -> int:
    import argparse

    ap = argparse.ArgumentParser(
        prog="python bench/compare_outputs.py",
        description="Compare two cxreval output folders table by table.",
    )
    ap.add_argument("a", type=Path, help="the folder written by the old code")
    ap.add_argument("b", type=Path, help="the folder written by the new code")
    ap.add_argument(
        "--rename",
        action="append",
        default=[],
        metavar="OLD=NEW",
        help="a column renamed on purpose (applied to A's tables); repeatable",
    )
    ap.add_argument("--allow-new", action="store_true", help="files only in B are notes, not differences")
    try:
        args = ap.parse_args(sys.argv[1:] if argv is None else argv)
    except SystemExit as exc:  # usage error: argparse has printed why
        return int(exc.code or 0)
    if not (args.a.is_dir() and args.b.is_dir()):
        print("compare_outputs: FOLDER_A and FOLDER_B must be existing folders", file=sys.stderr)
        return 2
    bad = [r for r in args.rename if r.count("=") != 1 or not all(r.split("="))]
    if bad:
        print(f"compare_outputs: --rename takes OLD=NEW, got {bad}", file=sys.stderr)
        return 2
    renames = dict(r.split("=") for r in args.rename)
    return 1 if compare_folders(args.a, args.b, renames=renames, allow_new=args.allow_new) else 0


if __name__ == "__main__":
    sys.exit(main())
