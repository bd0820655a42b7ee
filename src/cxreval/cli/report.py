"""``cxreval report``: result folders -> one self-contained HTML report."""

from __future__ import annotations

from pathlib import Path

import typer

from ._common import echo_json

__all__ = ["register"]


def report(
    result_dirs: list[Path] = typer.Argument(..., help="Folders written by cxreval commands (or their parent "
                                             "folder, e.g. a `cxreval demo` output)."),
    out: Path = typer.Option(Path("report.html"), "--out", "-o", help="HTML file to write."),
    title: str = typer.Option("cxreval report", "--title", help="Page title."),
    json_out: bool = typer.Option(False, "--json", help="Print what was written as JSON."),
) -> None:
    """Write one self-contained HTML page (Plotly inlined, CSV downloads) from analysis result folders."""
    from ..report import write_report

    res = write_report(result_dirs, out, title=title)
    if json_out:
        echo_json(res.to_dict())
    else:
        typer.echo(f"wrote {res.path} ({res.n_bytes / 1e6:.1f} MB): {len(res.sections)} section(s), "
                   f"{res.n_figures} figure(s); {len(res.unavailable)} listed as not available")


def register(app: typer.Typer) -> None:
    app.command("report")(report)
