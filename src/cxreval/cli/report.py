"""``cxreval report``: result folders -> one self-contained HTML report (and optionally its PDF)."""

from __future__ import annotations

from pathlib import Path

import typer

from ._common import echo_json, json_option, out_option, overwrite_option

__all__: list[str] = []


def report(
    result_dirs: list[Path] = typer.Argument(
        ...,
        help="Folders written by cxreval commands (or their parent folder, e.g. a `cxreval demo` output).",
    ),
    out: Path = out_option(
        "HTML file to write (atomically). Default: report.html.", default=Path("report.html")
    ),
    title: str = typer.Option("cxreval report", "--title", help="Page title."),
    thresholds: Path = typer.Option(
        None,
        "--thresholds",
        help="JSON file of verdict thresholds (keys srcc, kappa, "
        "kappa_name: label -> lower bound); default SRCC 0.9/0.7 and Landis & Koch κ.",
    ),
    pdf: bool = typer.Option(
        False,
        "--pdf",
        help="Also print the report to PDF (OUT with .pdf) with headless "
        "Chromium; the first page is the key findings.",
    ),
    overwrite: bool = overwrite_option("Replace an existing OUT (and its PDF)."),
    json_out: bool = json_option("Print what was written as JSON."),
) -> None:
    """Write one self-contained HTML page (key findings first, Plotly inlined, CSV downloads) from result folders.

    Example: cxreval report demo-out --out report.html --pdf --overwrite
    """
    from ..jobs import write_report_page

    res = write_report_page(
        result_dirs, out, title=title, thresholds=thresholds, pdf=pdf, overwrite=overwrite
    )
    pdf_path = res.pdf
    if json_out:
        echo_json({**res.to_dict(), "pdf": None if pdf_path is None else str(pdf_path)})
    else:
        typer.echo(
            f"wrote {res.path} ({res.n_bytes / 1e6:.1f} MB): {len(res.sections)} section(s), "
            f"{res.n_figures} figure(s); {len(res.unavailable)} listed as not available"
            + (f"; {pdf_path}" if pdf_path else "")
        )


def register(app: typer.Typer) -> None:
    app.command("report")(report)
