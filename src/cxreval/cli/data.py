"""``cxreval data fetch``, ``cxreval data audit`` and ``cxreval data list``."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.console import Console

from ..datasets.fetch import fetch_metadata
from ..exceptions import InvalidParameterError
from ._common import echo_json

__all__ = ["register", "AUDITABLE"]

AUDITABLE: tuple[str, ...] = ("chestxray14",)
"""Datasets ``cxreval data audit`` knows."""

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


@data_app.command("audit")
def audit(
    dataset: str = typer.Argument(..., help=f"Dataset to audit: one of {', '.join(AUDITABLE)}."),
    split_dir: Path = typer.Option(None, "--split-dir", help="Folder of *list.txt files, one split per file "
                                   "(e.g. train_val_list.txt, test_list.txt)."),
    path: Path = typer.Option(None, "--data-entry", help="Your own Data_Entry_2017*.csv[.gz] (default: fetched copy)."),
    bbox_path: Path = typer.Option(None, "--bbox-list", help="Your own BBox_List_2017.csv[.gz] (default: fetched)."),
    cache_dir: Path = typer.Option(None, "--cache-dir", help="Cache directory of `cxreval data fetch`."),
    out: Path = typer.Option(None, "--out", help="Write audit.json, tables (CSV + Parquet) and summary.md here."),
    json_out: bool = typer.Option(False, "--json", help="Print the audit as JSON."),
) -> None:
    """Images, patients, findings, views, boxes and split leakage of a dataset."""
    from ..datasets.audit import _summary, audit_chestxray14, write_audit

    if dataset not in AUDITABLE:
        raise InvalidParameterError(f"cxreval data audit: unknown dataset {dataset!r}; expected one of "
                                    f"{list(AUDITABLE)}.")
    console = Console(stderr=True)
    with console.status(f"auditing {dataset}"):
        res = audit_chestxray14(path=path, bbox_path=bbox_path, split_dir=split_dir, cache_dir=cache_dir)
    if out is not None:
        written = write_audit(res, out)
        console.print(f"wrote audit.json, summary.md and {len(written) - 2} tables (CSV + Parquet) to {out}")
    if json_out:
        echo_json(res.to_dict())
    else:
        typer.echo(_summary(res), nl=False)


@data_app.command("list")
def list_(
    pattern: str = typer.Argument("*", help="Glob pattern on dataset names."),
    json_out: bool = typer.Option(False, "--json", help="Print the registry as JSON."),
) -> None:
    """List the registered datasets and their loaders."""
    from ..datasets import DATA_LOADERS, list_datasets

    names = list_datasets(pattern)
    specs = [DATA_LOADERS[n] for n in names]
    if json_out:
        echo_json([dict(s.to_dict(), available=s.available) for s in specs])
        return
    width = max((len(n) for n in names), default=4)
    for s in specs:
        flag = "" if s.available else "  (loader not installed)"
        src = s.default or f"your {s.path}"
        typer.echo(f"{s.name:<{width}}  {s.kind:<8}  {s.description}  [{src}]{flag}")


def register(app: typer.Typer) -> None:
    app.add_typer(data_app, name="data")
