"""``cxreval data fetch`` and ``cxreval data audit``."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.console import Console

from ..datasets.fetch import fetch_metadata
from ._common import echo_json

__all__ = ["register"]

data_app = typer.Typer(no_args_is_help=True, help="Obtain public metadata and audit datasets and splits.")


@data_app.command("fetch")
def fetch(
    cache_dir: Path = typer.Option(None, "--cache-dir", help="Cache directory (default $CXREVAL_CACHE or "
                                   "$XDG_CACHE_HOME/cxreval)."),
    from_wheel: Path = typer.Option(None, "--from-wheel", help="Use a local torchxrayvision-1.5.7 wheel (offline)."),
    force: bool = typer.Option(False, "--force", help="Extract again even if cached."),
    json_out: bool = typer.Option(False, "--json", help="Print the result as JSON."),
) -> None:
    """Download the torchxrayvision==1.5.7 wheel (pip, no install), verify its SHA-256, extract metadata."""
    console = Console(stderr=True)
    with console.status("fetching public metadata") as status:
        res = fetch_metadata(cache_dir_=cache_dir, from_wheel=from_wheel, force=force,
                             progress=lambda msg: status.update(msg))
    if json_out:
        echo_json(res.to_dict())
    else:
        typer.echo(f"{res.action}: {len(res.files)} metadata files in {res.directory}")


def register(app: typer.Typer) -> None:
    app.add_typer(data_app, name="data")
