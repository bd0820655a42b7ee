"""The pieces a report section is made of: :class:`Block` (a figure, how to read it, tables), :class:`Section`,
:class:`Kind` (an analysis kind: its result files, its demo section and command, its builder),
:class:`Unavailable`, the readers every builder uses (:func:`load_table`, :func:`table_block`,
:func:`result_block`) and the figure of a table of differences (:func:`difference_figure`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd
import plotly.graph_objects as go

from .._plots import dot_interval
from ..results import TableResult
from ._key_finding_base import KeyFinding, _str
from .html_tables import html_table
from .result_files import find_result_file, missing_columns, read_result_table

__all__ = [
    "Unavailable",
    "Block",
    "Section",
    "Kind",
    "result_files",
    "load_table",
    "table_block",
    "difference_figure",
]


@dataclass(frozen=True)
class Unavailable:
    """A section the report could not build: its title, why, the exact commands that would produce it
    (each runnable as written) and a hint in words (data it needs, placeholders)."""

    title: str
    reason: str
    command: str = ""
    hint: str = ""
    commands: tuple[str, ...] = ()

    @property
    def all_commands(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(c for c in (self.command, *self.commands) if c))

    def to_dict(self) -> dict[str, object]:
        return {**asdict(self), "commands": list(self.all_commands)}


@dataclass(frozen=True)
class Block:
    """One part of a section: a heading, an optional figure, how to read it, HTML (tables, text) and notes."""

    heading: str
    figure: go.Figure | None = None
    html: str = ""
    missing: str = ""  # non-empty: the part is not available, and why
    how: str = ""  # one sentence: how to read the figure (or what the tables hold)
    shown: bool = False  # its tables open (the list a reader acts on), not collapsed


@dataclass(frozen=True)
class Section:
    """A section of the report built from one result folder and one analysis kind."""

    kind: str
    title: str
    folder: Path
    blocks: tuple[Block, ...] = field(default=())
    key: KeyFinding | None = None

    @property
    def n_figures(self) -> int:
        return sum(b.figure is not None for b in self.blocks)

    def to_dict(self) -> dict[str, object]:
        return {
            "kind": self.kind,
            "title": self.title,
            "folder": str(self.folder),
            "n_figures": self.n_figures,
            "key_finding": None if self.key is None else self.key.to_dict(),
            "blocks": [
                {"heading": b.heading, "figure": b.figure is not None, "missing": b.missing}
                for b in self.blocks
            ],
        }


@dataclass(frozen=True)
class Kind:
    """An analysis kind: its files, the demo section that computes it on public data, its own command.

    ``results`` are the result classes whose files the kind shows; for such a kind ``files`` is the union of
    their ``FILES`` (:func:`result_files`), so that the report never re-types a file name an analysis owns.
    ``replaces`` names the kinds whose files this kind's folders also hold and its builder shows: their files
    are no evidence of this kind, and in a folder of this kind they get no section of their own.
    """

    name: str
    title: str
    files: tuple[str, ...]
    demo_section: str
    own_command: str
    build: Callable[[Path], list[Block]]
    results: tuple[type[TableResult], ...] = ()
    replaces: tuple[str, ...] = ()

    @property
    def commands(self) -> tuple[str, str]:
        """Two exact, runnable commands: this analysis on public data, and the help of its command."""
        return (
            f"cxreval demo --out cxreval-demo-{self.name} --section {self.demo_section}",
            f"{self.own_command} --help",
        )


def result_files(*results: type[TableResult]) -> tuple[str, ...]:
    """The file names the result classes own (their ``FILES`` values), in order, without repeats."""
    return tuple(dict.fromkeys(f for r in results for f in r.FILES.values()))


def load_table(
    folder: Path, name: str, required: tuple[str, ...]
) -> tuple[pd.DataFrame | None, Path | None, str]:
    """Read ``name`` from ``folder``; return (table, path, why-missing)."""
    path = find_result_file(folder, name)
    if path is None:
        return None, None, f"{name} not found in {folder}"
    df = read_result_table(path)
    miss = missing_columns(df, required)
    if miss:
        return df, path, f"{path.name} lacks column(s) {miss}; it has {list(df.columns)}"
    if df.empty:
        return df, path, f"{path.name} has no rows"
    return df, path, ""


def table_block(
    heading: str,
    folder: Path,
    name: str,
    required: tuple[str, ...],
    figure: Callable[[pd.DataFrame], go.Figure | None] | None = None,
    caption: str = "",
    extra: Callable[[pd.DataFrame], str] | None = None,
    how: str = "",
    shown: bool = False,
) -> Block | None:
    """A block showing ``name`` as a table, with a figure when the required columns are present (``shown``: the
    table open on the page, not collapsed)."""
    df, path, why = load_table(folder, name, required)
    if path is None:
        return None
    if df is None or why:
        body = html_table(df, name=path.stem, source=path) if df is not None and not df.empty else ""
        return Block(heading, None, body, why, how)
    fig = figure(df) if figure is not None else None
    body = (extra(df) if extra is not None else "") + html_table(
        df, name=path.stem, caption=caption, source=path
    )
    return Block(heading, fig, body, how=how, shown=shown)


def result_block(
    heading: str,
    folder: Path,
    result: type[TableResult],
    key: str,
    required: tuple[str, ...] | None = None,
    **options: Any,
) -> Block | None:
    """:func:`table_block` of the result's file ``key`` (of ``result.FILES``) drawn by ``result.figure``; the
    required columns are ``result.COLUMNS`` unless given."""
    columns = result.COLUMNS if required is None else required
    return table_block(heading, folder, result.FILES[key], columns, figure=result.figure, **options)


def difference_figure(
    d: pd.DataFrame,
    value: str,
    pair: tuple[str, str],
    *,
    title: str,
    value_title: str,
    joiner: str = " · ",
    color: str | None = None,
) -> go.Figure:
    """A dot per row at the difference ``value`` with its interval (``ci_low``, ``ci_high``) against 0, one row of
    the y axis per finding and ``pair`` (its two columns joined by ``joiner``), one trace per ``color``."""
    d = d.assign(pair=_str(d, pair[0]) + joiner + _str(d, pair[1]))
    return dot_interval(
        d,
        value=value,
        category=["finding", "pair"],
        low="ci_low",
        high="ci_high",
        color=color,
        title=title,
        value_title=value_title,
        reference_line=0.0,
    )
