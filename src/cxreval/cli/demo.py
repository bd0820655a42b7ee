"""``cxreval demo``: the main job end to end on real public data, into DIR/report.html."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.console import Console

from ._common import echo_json

__all__ = ["register"]


def demo(
    out: Path = typer.Option(Path("demo-out"), "--out", "-o", help="Output folder (report.html + one folder per "
                             "section)."),
    data_mirror: Path = typer.Option(None, "--data-mirror", help="Folder laid out like shared/data (default "
                                     "$CXREVAL_DATA_MIRROR, else ../shared/data when present)."),
    cache_dir: Path = typer.Option(None, "--cache-dir", help="Cache directory (default $CXREVAL_CACHE)."),
    n_resamples: int = typer.Option(1000, "--n-resamples", min=1, help="Patient-bootstrap replicates."),
    seed: int = typer.Option(0, "--seed", help="Random seed."),
    offline: bool = typer.Option(False, "--offline", help="Never download pinned files."),
    section: list[str] = typer.Option(None, "--section", help="Run only these sections (repeatable): audit, "
                                      "nih_vs_google_agreement, nih_models, chexpert_models, chexpert_agreement, "
                                      "chexpert_fusion, xqa_published, localization, localization_real, iqa."),
    overwrite: bool = typer.Option(False, "--overwrite", help="Replace an existing OUT folder whole."),
    json_out: bool = typer.Option(False, "--json", help="Print what was done as JSON."),
) -> None:
    """Fetch what is needed, run the analyses on real public data, write OUT/report.html.

    Example: cxreval demo --out demo-out --overwrite
    """
    from ..demo import run_demo

    console = Console(stderr=True)
    with console.status("cxreval demo") as status:
        res = run_demo(out, data_mirror=data_mirror, cache_dir=cache_dir, n_resamples=n_resamples, rng=seed,
                       download=not offline, sections=section or None, progress=lambda m: status.update(m),
                       overwrite=overwrite)
    if json_out:
        echo_json(res.to_dict())
        return
    for s in res.sections:
        extra = (f": {s.reason}" if s.reason else "") + (f"  [{s.command}]" if s.command else "")
        typer.echo(f"{s.status:>9}  {s.title} ({s.seconds:.1f} s){extra}")
    typer.echo(f"wrote {res.report} ({res.report_bytes / 1e6:.1f} MB) in {res.seconds:.0f} s")


def register(app: typer.Typer) -> None:
    app.command("demo")(demo)
