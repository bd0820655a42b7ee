"""Assemble one self-contained HTML report from result folders.

The page inlines Plotly's JavaScript once (``plotly.offline.get_plotlyjs()``) and every figure's data,
so it opens offline; every table links a CSV download (``data:`` URI). Sections follow the order of
the folders given; analysis kinds that no folder holds, and sections a caller could not build (see
:class:`~cxreval.report.sections.Unavailable`), are listed under "Not available" with the reason and the
command that would produce them. Output is deterministic: the same folders give the same bytes.
"""

from __future__ import annotations

import html
import re
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from string import Template

import plotly.graph_objects as go
from plotly.offline import get_plotlyjs

from .. import __version__
from ..exceptions import InvalidParameterError
from .sections import KINDS, Section, Unavailable, build_sections, detect_kinds

__all__ = ["ReportResult", "find_result_folders", "render_report", "write_report", "figure_html"]

_PLOTLY_CONFIG = {"displaylogo": False, "responsive": True,
                  "toImageButtonOptions": {"format": "svg"}, "modeBarButtonsToRemove": ["sendDataToCloud"]}


@dataclass(frozen=True)
class ReportResult:
    """What :func:`write_report` wrote.

    Attributes
    ----------
    path : Path
        The HTML file.
    n_bytes : int
        Its size.
    sections : tuple of Section
        The sections built, in page order.
    unavailable : tuple of Unavailable
        The sections listed as not available.
    """

    path: Path
    n_bytes: int
    sections: tuple[Section, ...]
    unavailable: tuple[Unavailable, ...]

    @property
    def n_figures(self) -> int:
        return sum(s.n_figures for s in self.sections)

    def to_dict(self) -> dict[str, object]:
        return {"path": str(self.path), "n_bytes": self.n_bytes, "n_figures": self.n_figures,
                "sections": [s.to_dict() for s in self.sections],
                "unavailable": [u.to_dict() for u in self.unavailable]}


def find_result_folders(paths: Sequence[str | Path]) -> list[Path]:
    """Expand the given paths into result folders.

    A path that holds result files is a result folder; otherwise its sub-folders that hold result
    files are used (two levels deep, sorted by name), as in a ``cxreval demo`` output folder.

    Raises
    ------
    InvalidParameterError
        If a path is not a directory.
    """
    out: list[Path] = []
    for p in paths:
        p = Path(p)
        if not p.is_dir():
            raise InvalidParameterError(f"Result folder {str(p)!r} does not exist or is not a directory; "
                                        "pass folders written by cxreval commands (classify, rank, agree, ...).")
        if detect_kinds(p):
            out.append(p)
            continue
        for sub in sorted(q for q in p.iterdir() if q.is_dir()):
            if detect_kinds(sub):
                out.append(sub)
            else:
                out.extend(q for q in sorted(sub.iterdir()) if q.is_dir() and detect_kinds(q))
    return list(dict.fromkeys(out))


def figure_html(fig: go.Figure, div_id: str) -> str:
    """A figure as an HTML ``div`` plus script (no Plotly library, fixed id for reproducible output)."""
    return fig.to_html(full_html=False, include_plotlyjs=False, include_mathjax=False, div_id=div_id,
                       config=_PLOTLY_CONFIG, default_width="100%", default_height=f"{fig.layout.height or 450}px")


def _slug(text: str, used: set[str]) -> str:
    s = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:60] or "section"
    base, i = s, 2
    while s in used:
        s, i = f"{base}-{i}", i + 1
    used.add(s)
    return s


def _template(name: str) -> str:
    return resources.files("cxreval.report").joinpath("templates").joinpath(name).read_text(encoding="utf-8")


def _unavailable_html(items: Sequence[Unavailable]) -> str:
    lis = []
    for u in items:
        cmd = f"<br>to produce it: <code>{html.escape(u.command)}</code>" if u.command else ""
        lis.append(f"<li><strong>{html.escape(u.title)}</strong>: {html.escape(u.reason)}{cmd}</li>")
    return '<ul class="unavailable">' + "".join(lis) + "</ul>"


def render_report(result_dirs: Sequence[str | Path], *, title: str = "cxreval report",
                  unavailable: Sequence[Unavailable] = (), intro_html: str = "",
                  list_missing_kinds: bool = True) -> tuple[str, list[Section], list[Unavailable]]:
    """Render the report page.

    Parameters
    ----------
    result_dirs : sequence of path
        Result folders (or parents of result folders, see :func:`find_result_folders`).
    title : str, default='cxreval report'
        Page title.
    unavailable : sequence of Unavailable, default=()
        Sections the caller could not build, listed with their reason.
    intro_html : str, default=''
        Trusted HTML placed under the title (e.g. the demo's description).
    list_missing_kinds : bool, default=True
        Also list each analysis kind that no folder holds as not available.

    Returns
    -------
    page : str
        The HTML document.
    sections : list of Section
    unavailable : list of Unavailable
        Everything listed as not available.
    """
    folders = find_result_folders(result_dirs)
    sections: list[Section] = []
    for f in folders:
        sections.extend(build_sections(f))
    missing = list(unavailable)
    if list_missing_kinds:
        found = {s.kind for s in sections}
        where = ", ".join(str(Path(p)) for p in result_dirs) or "(no folder given)"
        for k in KINDS:
            if k.name not in found:
                missing.append(Unavailable(k.title, f"no result folder holds {' / '.join(k.files)} (searched {where})",
                                           k.command))
    used: set[str] = set()
    toc, body = [], []
    n_fig = 0
    shown_summary: set[Path] = set()
    for sec in sections:
        sid = _slug(sec.title, used)
        toc.append(f'<li><a href="#{sid}">{html.escape(sec.title)}</a></li>')
        parts = [f'<section class="report-section" id="{sid}"><h2>{html.escape(sec.title)}</h2>',
                 f'<p class="folder">from <code>{html.escape(str(sec.folder))}</code></p>']
        summary = sec.folder / "summary.md"
        if summary.is_file() and sec.folder not in shown_summary:
            shown_summary.add(sec.folder)
            parts.append(f"<details><summary>summary.md</summary><pre class=\"output\">"
                         f"{html.escape(summary.read_text(errors='replace'))}</pre></details>")
        for blk in sec.blocks:
            parts.append(f'<div class="block"><h3>{html.escape(blk.heading)}</h3>')
            if blk.missing:
                parts.append(f'<p class="missing">Not available: {html.escape(blk.missing)}</p>')
            if blk.figure is not None:
                n_fig += 1
                parts.append(f'<div class="figure">{figure_html(blk.figure, f"fig-{n_fig}")}</div>')
            parts.append(blk.html)
            parts.append("</div>")
        parts.append("</section>")
        body.append("".join(parts))
    if missing:
        toc.append('<li><a href="#not-available">Not available</a></li>')
        body.append('<section class="report-section" id="not-available"><h2>Not available</h2>'
                    + _unavailable_html(missing) + "</section>")
    if not sections:
        body.insert(0, '<p class="missing">No analysis results were found in the folders given.</p>')
    page = Template(_template("report.html")).substitute(
        title=html.escape(title), version=__version__, style=_template("report.css"), plotlyjs=get_plotlyjs(),
        n_sections=len(sections), n_figures=n_fig, intro=intro_html, toc="<ol>" + "".join(toc) + "</ol>",
        body="\n".join(body))
    return page, sections, missing


def write_report(result_dirs: Sequence[str | Path], out: str | Path, **kwargs: object) -> ReportResult:
    """Render the report (see :func:`render_report`) and write it to ``out``.

    Returns
    -------
    res : ReportResult
    """
    page, sections, missing = render_report(result_dirs, **kwargs)  # type: ignore[arg-type]
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    data = page.encode("utf-8")
    out.write_bytes(data)
    return ReportResult(out, len(data), tuple(sections), tuple(missing))
