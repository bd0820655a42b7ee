"""Assemble one self-contained HTML report from result folders: the answer first, then the evidence.

Page order: the title; **Key findings** (one line per analysis with its number, interval and verdict,
each linking to its section, and the verdict thresholds stated once); the caller's introduction and the
contents; one section per analysis, each part showing its figure first, one sentence on how to read it
and its tables collapsed (``<details>``, paginated and searchable, CSV download); "Not available" (what
no folder holds, with exact commands that produce it); **Methods and provenance** last.

The page inlines Plotly's JavaScript once and every figure's data, so it opens offline and prints; each
figure downloads as PNG or SVG from its mode bar. Output is deterministic: the same folders give the
same bytes. A set of folders without any recognisable result is refused (:class:`NoResultsError`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

import plotly
import plotly.graph_objects as go
from plotly.offline import get_plotlyjs

from .._plots import analyses as plots
from .._version import __version__
from ..exceptions import InvalidParameterError
from ..outputs._folder import atomic_file
from ..outputs._run_record import RUN_FILE
from ._key_findings import SEPARABILITY_NOTE
from ._sections import KINDS, Section, Unavailable, build_sections, detect_kinds
from ._templates import REPORT, Markup
from ._thresholds import Thresholds
from .headline import headline
from .provenance import provenance_html
from .result_files import listed_files, run_record

__all__ = [
    "ReportResult",
    "NoResultsError",
    "find_result_folders",
    "report_inputs",
    "RenderedReport",
    "render_report",
    "write_report",
    "figure_html",
]


class NoResultsError(InvalidParameterError):
    """The folders given hold no file a cxreval analysis writes (nothing to report)."""


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
    headline : bool
        Whether the key-findings panel carries the headline figure (:mod:`cxreval.report.headline`).
    pdf : Path or None
        The page printed to PDF (:func:`print_pdf`), when it was.
    """

    path: Path
    n_bytes: int
    sections: tuple[Section, ...]
    unavailable: tuple[Unavailable, ...]
    headline: bool = False
    pdf: Path | None = None

    @property
    def n_figures(self) -> int:
        """Every figure of the page: the sections' and the headline figure."""
        return sum(s.n_figures for s in self.sections) + int(self.headline)

    def to_dict(self) -> dict[str, object]:
        return {
            "path": str(self.path),
            "n_bytes": self.n_bytes,
            "n_figures": self.n_figures,
            "sections": [s.to_dict() for s in self.sections],
            "unavailable": [u.to_dict() for u in self.unavailable],
        }


def find_result_folders(paths: Sequence[str | Path]) -> list[Path]:
    """Expand the given paths into result folders.

    A path that holds result files is a result folder; otherwise its sub-folders that hold result
    files, and their sub-folders that hold result files, are used (two levels deep, sorted by name), as in a
    ``cxreval demo`` output folder (a section's second result in a sub-folder of the section).

    Raises
    ------
    InvalidParameterError
        If a path is not a directory.
    """
    out: list[Path] = []
    for p in paths:
        p = Path(p)
        if not p.is_dir():
            raise InvalidParameterError(
                f"Result folder {str(p)!r} does not exist or is not a directory; "
                "pass folders written by cxreval commands (classify, rank, agree, ...)."
            )
        if detect_kinds(p):
            out.append(p)
            continue
        for sub in sorted(q for q in p.iterdir() if q.is_dir()):
            out.extend([sub] if detect_kinds(sub) else [])
            out.extend(q for q in sorted(sub.iterdir()) if q.is_dir() and detect_kinds(q))
    return list(dict.fromkeys(out))


def report_inputs(result_dirs: Sequence[str | Path]) -> list[Path]:
    """The files a report of ``result_dirs`` reads, what its page may never replace: in each result folder
    (:func:`find_result_folders`), the files its governing ``run.json`` lists and that ``run.json`` itself, or, in
    a folder without one, the files of every analysis kind (CSV and Parquet). (A file of a result folder that no
    report reads, an earlier ``report.html``, may be replaced with ``overwrite``.)"""
    out: list[Path] = []
    kind_files = {f for k in KINDS for f in k.files}
    kind_files |= {f[:-4] + ".parquet" for f in kind_files if f.endswith(".csv")}
    for folder in find_result_folders(result_dirs):
        found = run_record(folder)
        if found is None:
            out += [folder / f for f in sorted(kind_files) if (folder / f).is_file()]
            continue
        _, prefix = found
        up = folder
        for _ in range(prefix.count("/")):
            up = up.parent
        out += [up / RUN_FILE, *(folder / f for f in sorted(listed_files(folder) or ()))]
    return list(dict.fromkeys(out))


def figure_html(fig: go.Figure, div_id: str) -> str:
    """A figure as an HTML ``div`` plus the script that draws it with the page's Plotly configuration
    (``cxrevalPlot`` of ``templates/report.js``: PNG and SVG download); fixed id for reproducible output."""
    payload = fig.to_json().replace("</", "<\\/")
    return REPORT.render(
        "figure.html.j2", div_id=div_id, height=int(fig.layout.height or 450), payload=Markup(payload)
    )


def _slug(text: str, used: set[str]) -> str:
    s = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:60] or "section"
    base, i = s, 2
    while s in used:
        s, i = f"{base}-{i}", i + 1
    used.add(s)
    return s


class MissingGroup(NamedTuple):
    """Parts not available that one command brings (``command`` empty: none can; the reason says why)."""

    titles: tuple[str, ...]
    command: str


def missing_by_command(missing: Sequence[Unavailable], limit: int = 4) -> list[MissingGroup]:
    """What is missing, for the first screen: the titles grouped by the first command that builds them, in the
    order first met; at most ``limit`` groups (the rest is in the "Not available" list)."""
    groups: dict[str, list[str]] = {}
    for u in missing:
        groups.setdefault(next(iter(u.all_commands), ""), []).append(u.title)
    return [MissingGroup(tuple(t), c) for c, t in list(groups.items())[:limit]]


def _key_findings_html(
    sections: Sequence[Section], ids: Sequence[str], missing: Sequence[Unavailable], thresholds: Thresholds
) -> str:
    head = headline(sections)

    def place(pair: tuple[Section, str]) -> tuple[bool, bool, bool]:
        """The headline comparison's lines first, then what to relabel (the next step, when a plan is present),
        then the other model comparisons, then page order."""
        sec = pair[0]
        in_head = head is not None and sec.folder == head.section.folder
        compares = head is not None and sec.kind in ("classification", "ranking")
        return (not in_head, sec.kind != "relabelling", not compares)

    order = sorted(zip(sections, ids), key=place)
    return REPORT.render(
        "key_findings.html.j2",
        order=order,
        head_figure=Markup(figure_html(head.figure, "fig-headline")) if head is not None else "",
        head_caption=head.caption if head is not None else "",
        n_missing=len(missing),
        missing_groups=missing_by_command(missing),
        source="defaults" if thresholds.source == "defaults" else f"from {thresholds.source}",
        thresholds=thresholds.describe(),
        separability_note=SEPARABILITY_NOTE,
    )


class RenderedReport(NamedTuple):
    """What :func:`render_report` returns: the HTML document, its sections and everything listed as not available."""

    page: str
    sections: list[Section]
    unavailable: list[Unavailable]


def render_report(
    result_dirs: Sequence[str | Path],
    *,
    title: str = "cxreval report",
    unavailable: Sequence[Unavailable] = (),
    intro_html: str = "",
    list_missing_kinds: bool = False,
    thresholds: Thresholds | None = None,
    allow_empty: bool = False,
) -> RenderedReport:
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
        Trusted HTML placed under the key findings (e.g. the demo's description).
    list_missing_kinds : bool, default=False
        Also list each analysis kind that no folder holds as not available, with exact commands (off: a report
        of a user's own folders shows only the analyses present).
    thresholds : Thresholds, optional
        Verdict thresholds of the key findings (default :class:`~cxreval.report.Thresholds`).
    allow_empty : bool, default=False
        Render a page even when no folder holds a result (the demo, whose sections all failed).

    Returns
    -------
    page : str
        The HTML document.
    sections : list of Section
    unavailable : list of Unavailable
        Everything listed as not available.

    Raises
    ------
    NoResultsError
        If no folder holds a recognisable result and ``allow_empty`` is False (nothing is rendered).
    """
    th = thresholds or Thresholds()
    folders = find_result_folders(result_dirs)
    if not folders and not allow_empty:
        names = sorted({f for k in KINDS for f in k.files})
        raise NoResultsError(
            f"No cxreval results in {', '.join(str(Path(p)) for p in result_dirs)}: none of "
            f"these folders (or their sub-folders) holds {', '.join(names)} listed by its run.json. "
            "Pass folders written by cxreval commands (classify, rank, agree, fuse, localize, "
            "iqa, data audit) or by cxreval demo."
        )
    sections: list[Section] = []
    with plots.reference_colors():
        for f in folders:
            sections.extend(build_sections(f, thresholds=th))
        blocks_html = _sections_html(sections)
    missing = list(unavailable)
    if list_missing_kinds:
        found = {s.kind for s in sections}
        where = ", ".join(str(Path(p)) for p in result_dirs) or "(no folder given)"
        for k in KINDS:
            if k.name not in found:
                missing.append(
                    Unavailable(
                        k.title,
                        f"no result folder holds {' / '.join(k.files)} (searched {where})",
                        commands=k.commands,
                        hint="The first command computes this analysis on public data; the "
                        "second shows how to run it on yours.",
                    )
                )
    ids, bodies = zip(*blocks_html) if blocks_html else ((), ())
    body = list(bodies)
    if missing:
        body.append(REPORT.render("unavailable.html.j2", items=missing))
    prov_folders: dict[Path, list[str]] = {}
    for sec in sections:
        prov_folders.setdefault(sec.folder, []).append(sec.title)
    provenance = provenance_html(
        list(prov_folders.items()), thresholds=th, version=__version__, plotly_version=plotly.__version__
    )
    body.append(REPORT.render("methods.html.j2", body=Markup(provenance)))
    key_html = _key_findings_html(sections, ids, missing, th)
    n_fig = sum(s.n_figures for s in sections) + int('id="fig-headline"' in key_html)
    page = REPORT.render(
        "page.html.j2",
        title=title,
        version=__version__,
        style=Markup(REPORT.static_text("report.css")),
        plotlyjs=Markup(get_plotlyjs()),
        script=Markup(REPORT.static_text("report.js")),
        n_sections=len(sections),
        n_figures=n_fig,
        intro=Markup(intro_html),
        key_findings=Markup(key_html),
        toc=Markup(
            REPORT.render("page_contents.html.j2", sections=list(zip(sections, ids)), missing=bool(missing))
        ),
        body=Markup("\n".join(body)),
    )
    return RenderedReport(page, sections, missing)


def _sections_html(sections: Sequence[Section]) -> list[tuple[str, str]]:
    """(id, HTML) of each section (the template ``templates/section.html.j2``): per part, the figure, how to
    read it, then its tables collapsed; the figures numbered in page order."""
    used = {"key-findings", "not-available", "methods", "contents"}
    out = []
    n_fig = 0
    for sec in sections:
        sid = _slug(sec.title, used)
        parts = []
        for blk in sec.blocks:
            figure = ""
            if blk.figure is not None:
                n_fig += 1
                figure = Markup(figure_html(blk.figure, f"fig-{n_fig}"))
            n_tab = blk.html.count('<table class="data')
            what = "the table" if n_tab == 1 else f"the {n_tab} tables" if n_tab else "the output"
            parts.append({"block": blk, "figure": figure, "tables": Markup(blk.html), "what": what})
        out.append((sid, REPORT.render("section.html.j2", sid=sid, sec=sec, parts=parts)))
    return out


def write_report(
    result_dirs: Sequence[str | Path], out: str | Path, *, overwrite: bool = False, **kwargs: Any
) -> ReportResult:
    """Render the report (see :func:`render_report`) and write it to ``out`` atomically.

    Parameters
    ----------
    overwrite : bool, default=False
        Replace an existing ``out``; when False an existing file is refused before any work
        (:class:`~cxreval.outputs.OutputError`). ``out`` is never a file the report reads
        (:func:`report_inputs`: an input destroyed), overwrite or not.

    Returns
    -------
    res : ReportResult
    """
    from ..outputs._folder import check_output_path

    inputs = report_inputs(result_dirs)  # the page may not replace a file it reads
    check_output_path(out, overwrite=overwrite, kind="file", inputs=inputs)
    page, sections, missing = render_report(result_dirs, **kwargs)
    data = page.encode("utf-8")
    with atomic_file(out, overwrite=overwrite, inputs=inputs) as tmp:
        tmp.write_bytes(data)
    return ReportResult(
        Path(out), len(data), tuple(sections), tuple(missing), headline='id="fig-headline"' in page
    )
