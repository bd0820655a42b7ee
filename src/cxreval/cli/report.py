"""``cxreval report``: result folders -> one self-contained HTML report (and optionally its PDF)."""

from __future__ import annotations

from pathlib import Path

import typer

from ..exceptions import InvalidParameterError
from ._common import echo_json, json_option

__all__ = ["register"]


def report(
    result_dirs: list[Path] = typer.Argument(
        ...,
        help="Folders written by cxreval commands (or their parent folder, e.g. a `cxreval demo` output).",
    ),
    out: Path = typer.Option(
        Path("report.html"), "--out", "-o", help="HTML file to write (atomically). Default: report.html."
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
    overwrite: bool = typer.Option(False, "--overwrite", help="Replace an existing OUT (and its PDF)."),
    json_out: bool = json_option("Print what was written as JSON."),
) -> None:
    """Write one self-contained HTML page (key findings first, Plotly inlined, CSV downloads) from result folders.

    Example: cxreval report demo-out --out report.html --pdf --overwrite
    """
    from ..outputs import check_output_path
    from ..report import find_chromium, load_thresholds, print_pdf, report_inputs, write_report

    th = load_thresholds(thresholds)
    inputs = [*report_inputs(result_dirs), *([thresholds] if thresholds is not None else [])]
    check_output_path(out, overwrite=overwrite, kind="file", inputs=inputs)
    pdf_out = out.with_suffix(".pdf")
    if pdf:  # checked before any work
        if pdf_out.absolute() == out.absolute():
            raise InvalidParameterError(
                f"--out {str(out)!r} with --pdf: the PDF (--out with .pdf) would replace the "
                "HTML page it is printed from. Give --out a .html name."
            )
        find_chromium()
        check_output_path(pdf_out, overwrite=overwrite, kind="file", inputs=inputs)
    res = write_report(result_dirs, out, title=title, thresholds=th, overwrite=overwrite)
    pdf_path = print_pdf(res.path, pdf_out, overwrite=overwrite, inputs=inputs) if pdf else None
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
