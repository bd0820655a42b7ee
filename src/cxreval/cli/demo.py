"""``cxreval demo``: the main job end to end on real public data, into DIR/report.html."""

from __future__ import annotations

from pathlib import Path

import typer

from ..demo.data import MIRROR_LAYOUT
from ..demo.sections import SECTIONS
from ._common import (
    cache_dir_option,
    echo_json,
    json_option,
    n_resamples_option,
    out_option,
    overwrite_option,
    seed_option,
)

__all__: list[str] = []

_SECTION_KEYS = ", ".join(s.key for s in SECTIONS)


def demo(
    out: Path = out_option(
        "Output folder: report.html, one folder per section and run.json (written atomically; "
        "must not exist unless --overwrite). Default: demo-out.",
        default=Path("demo-out"),
    ),
    data_mirror: Path = typer.Option(
        None,
        "--data-mirror",
        help="A local copy of the demo's data, used before "
        "any download (default $CXREVAL_DATA_MIRROR, else ../shared/data when "
        f"present). Layout: {MIRROR_LAYOUT}.",
    ),
    cache_dir: Path = cache_dir_option("Cache directory (default $CXREVAL_CACHE)."),
    n_resamples: int = n_resamples_option("Patient-bootstrap replicates.", min=1),
    seed: int = seed_option(),
    offline: bool = typer.Option(False, "--offline", help="Never download pinned files."),
    section: list[str] = typer.Option(
        None, "--section", help=f"Run only these sections (comma-separated or repeated): {_SECTION_KEYS}."
    ),
    overwrite: bool = overwrite_option(),
    json_out: bool = json_option("Print what was done as JSON."),
) -> None:
    """Fetch what is needed, run the analyses on real public data, write OUT/report.html.

    Example:

    \b
        cxreval demo -o demo-out --section audit,nih_models --n-resamples 200
    """
    from ..demo import run_demo
    from ._common import progress, split_list

    sections = split_list(section, option="--section")
    with progress() as prog:
        res = run_demo(
            out,
            data_mirror=data_mirror,
            cache_dir=cache_dir,
            n_resamples=n_resamples,
            rng=seed,
            download=not offline,
            sections=sections,
            progress=prog,
            overwrite=overwrite,
        )
    if json_out:
        echo_json(res.to_dict())
        return
    if res.data_mirror is None:
        typer.echo("data mirror: none (pinned files from the cache or downloaded from their GitHub commits)")
    else:
        how = {"data_mirror=": "--data-mirror"}.get(res.mirror_source, res.mirror_source)
        typer.echo(
            f"data mirror: {res.data_mirror} (from {how}; each file checked against its pinned SHA-256)"
        )
    for s in res.sections:
        extra = (f": {s.reason}" if s.reason else "") + (f"  [{s.command}]" if s.command else "")
        extra += f"; {s.hint}" if s.hint.startswith("offline:") else ""
        typer.echo(f"{s.status:>9}  {s.title} ({s.seconds:.1f} s){extra}")
    typer.echo(
        f"wrote {Path(out) / res.report.name} ({res.report_bytes / 1e6:.1f} MB) in {res.seconds:.0f} s"
    )


def register(app: typer.Typer) -> None:
    app.command("demo")(demo)
