"""What every bench suite shares: the run context, parts, tables of figures and the peers.

A *suite* is one module of ``bench/suites`` per capability (classification, fusion, iqa, ...). It lists its
``PARTS``: each :class:`Part` is one measurement, run by ``bench/run.py`` in a fresh process of its own (so that
its peak RSS is its own), and returns a :class:`Figures`: tables of rows, the deterministic figures
``bench/run.py --check`` compares with ``bench/expected``, the peer it was compared with (name and version, or
why it is unavailable) and the ratios to that peer measured in the same run.
"""

from __future__ import annotations

import importlib.metadata
import os
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

__all__ = [
    "BENCH",
    "ROOT",
    "SHARED",
    "Context",
    "Figures",
    "Part",
    "Peer",
    "Table",
    "bench_module",
    "fmt",
    "missing",
    "module_version",
    "peer_unavailable",
]

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "bench"
SHARED = Path(os.environ.get("CXREVAL_DATA_MIRROR", ROOT.parent / "shared" / "data"))


@dataclass(frozen=True)
class Context:
    """How a part runs: ``quick`` sizes or the full ones, its seed, a scratch folder, the peers' interpreters.

    ``peer_pythons`` are the interpreters given with ``--peer-python`` (or ``CXREVAL_PEER_PYTHON``, separated by
    ``os.pathsep``); :meth:`peer_python` finds the one that imports a peer's module.
    """

    quick: bool
    seed: int
    tmp: Path
    peer_pythons: tuple[str, ...] = ()

    def peer_python(self, module: str) -> str | None:
        """The first peer interpreter that imports ``module`` (None when none does)."""
        for py in self.peer_pythons:
            if (
                Path(py).exists()
                and subprocess.run([py, "-c", f"import {module}"], capture_output=True).returncode == 0
            ):
                return py
        return None

    def size(self, quick: object, full: object) -> object:
        return quick if self.quick else full


@dataclass(frozen=True)
class Peer:
    """The tool a part compares cxreval with: its name and version, or the reason it could not run."""

    name: str
    version: str | None = None
    unavailable: str | None = None

    def to_dict(self) -> dict[str, object]:
        return {"name": self.name, "version": self.version, "unavailable": self.unavailable}


def module_version(module: str, dist: str | None = None) -> str | None:
    """The installed version of a distribution (``dist``, default ``module``), or None when not installed."""
    try:
        return importlib.metadata.version(dist or module)
    except importlib.metadata.PackageNotFoundError:
        return None


def peer_unavailable(name: str, module: str, how: str = "") -> Peer:
    return Peer(
        name,
        unavailable=f"peer unavailable: no interpreter imports {module}"
        + (f" ({how})" if how else " (pass --peer-python PATH or set CXREVAL_PEER_PYTHON)"),
    )


@dataclass
class Table:
    """One table of rows (a list of cells per row, in ``columns`` order) with notes printed under it."""

    title: str
    columns: list[str]
    rows: list[list[object]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def add(self, *cells: object) -> None:
        if len(cells) != len(self.columns):
            raise ValueError(f"table {self.title!r}: {len(cells)} cells for columns {self.columns}")
        self.rows.append(list(cells))

    def to_dict(self) -> dict[str, object]:
        return {"title": self.title, "columns": self.columns, "rows": self.rows, "notes": self.notes}


@dataclass
class Figures:
    """What one part measured.

    ``tables``: what RESULTS.md shows. ``checked``: deterministic figures (accuracies, counts, agreements,
    hashes; never timings) as strings, compared exactly by ``bench/run.py --check``. ``peer``: the peer tool.
    ``ratios``: ``{what: value}``, the peer's time over cxreval's (or another ratio), measured in this run.
    ``unavailable``: set when the part could not run here at all (missing data), saying why.
    """

    tables: list[Table] = field(default_factory=list)
    checked: dict[str, str] = field(default_factory=dict)
    peer: Peer | None = None
    ratios: dict[str, float] = field(default_factory=dict)
    unavailable: str | None = None

    def table(self, title: str, columns: list[str]) -> Table:
        t = Table(title, columns)
        self.tables.append(t)
        return t

    def frame(self, title: str, df, *, decimals: int = 4, index: bool = False) -> Table:
        """A pandas DataFrame as a table (floats rounded to ``decimals``; the index as first column if ``index``)."""
        df = df.reset_index() if index else df
        t = self.table(title, [str(c) for c in df.columns])
        for row in df.itertuples(index=False):
            t.rows.append(
                [
                    round(float(v), decimals)
                    if isinstance(v, float)
                    else (v.item() if hasattr(v, "item") else v)
                    for v in row
                ]
            )
        return t

    def to_dict(self) -> dict[str, object]:
        return {
            "tables": [t.to_dict() for t in self.tables],
            "checked": dict(sorted(self.checked.items())),
            "peer": self.peer.to_dict() if self.peer else None,
            "ratios": {k: round(float(v), 3) for k, v in self.ratios.items()},
            "unavailable": self.unavailable,
        }


@dataclass(frozen=True)
class Part:
    """One measurement of a suite: ``run(ctx) -> Figures``; ``doc`` says what it measures and against what.

    ``python_for``: a module the part must import in its own process (a peer such as ``crowdkit``); the part
    then runs in the first ``--peer-python`` interpreter that imports it, with this checkout's ``src`` first
    on ``PYTHONPATH``, and in this interpreter (its peer reported unavailable) when none does.
    """

    name: str
    doc: str
    run: Callable[[Context], Figures]
    python_for: str | None = None


def missing(*paths: Path) -> str | None:
    """``"<path> is missing"`` for the first path that does not exist (shared data, metadata cache), else None."""
    for p in paths:
        if not Path(p).exists():
            return f"data unavailable: {p} is missing"
    return None


def fmt(v: object, spec: str = ".4f") -> str:
    """A figure as printed (and compared): floats with ``spec``, the rest as ``str``."""
    if isinstance(v, float):
        return format(v, spec)
    return str(v)


def bench_module(name: str):
    """Import the measuring script ``bench/<name>.py`` as a module."""
    if str(BENCH) not in sys.path:
        sys.path.insert(0, str(BENCH))
    return __import__(name)
