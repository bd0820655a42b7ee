"""``cxreval data fetch``, ``audit``, ``split``, ``export`` and ``list``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer
from rich.console import Console

from ..datasets._dataset_split import SPLITTABLE
from ..datasets.audit import AUDITABLE
from ._common import (
    cache_dir_option,
    echo_json,
    echo_result,
    json_option,
    out_option,
    overwrite_option,
    progress,
    save_output,
    seed_option,
)
from .main import command_group

__all__: list[str] = []

data_app = command_group("Obtain public metadata and audit datasets and splits.")


def _data_entry_option() -> Any:
    """``--data-entry`` of ``audit`` and ``split``: a ChestX-ray14 Data_Entry file instead of the fetched one."""
    return typer.Option(
        None, "--data-entry", help="Your own Data_Entry_2017*.csv[.gz] (default: fetched copy)."
    )


@data_app.command("fetch")
def fetch(
    cache_dir: Path = cache_dir_option(
        "Cache directory (default $CXREVAL_CACHE or $XDG_CACHE_HOME/cxreval)."
    ),
    from_wheel: Path = typer.Option(
        None, "--from-wheel", help="Use a local torchxrayvision-1.5.7 wheel (offline)."
    ),
    force: bool = typer.Option(False, "--force", help="Extract again even if cached."),
    all_files: bool = typer.Option(
        False,
        "--all",
        help="Also every pinned reference file the demo uses (predictions, CheXpert labels, radiographs), "
        "SHA-256 checked, into the cache, so that the demo later runs offline "
        "($CXREVAL_PINNED_BASE_URL: a local index laid out as <base>/<repo>/<commit>/<path>).",
    ),
    json_out: bool = json_option("Print the result as JSON."),
) -> None:
    """Download the torchxrayvision==1.5.7 wheel (pip, no install), verify its SHA-256, extract metadata.

    Example:

    \b
        cxreval data fetch --cache-dir ~/.cache/cxreval
        cxreval data fetch --all
    """
    from ..jobs import fetch_dataset_metadata

    with progress() as prog:
        res = fetch_dataset_metadata(
            cache_dir=cache_dir, from_wheel=from_wheel, force=force, all_files=all_files, progress=prog
        )
    if json_out:
        echo_json(res.to_dict())
    else:
        typer.echo(f"{res.action}: {len(res.files)} metadata files in {res.directory}")
        if res.pinned:
            typer.echo(
                f"cached: {len(res.pinned)} pinned reference files ({res.pinned_bytes / 1e6:.1f} MB, SHA-256 "
                f"checked) in {res.pinned_directory}"
            )


@data_app.command("audit")
def audit(
    dataset: str = typer.Argument(..., help=f"Dataset to audit: one of {', '.join(AUDITABLE)}."),
    split_dir: Path = typer.Option(
        None,
        "--split-dir",
        help="chestxray14: folder of *list.txt files, one split per "
        "file (e.g. train_val_list.txt, test_list.txt); mimic_cxr (required): the folder "
        "holding mimic-cxr-2.0.0-split.csv.gz.",
    ),
    path: Path = typer.Option(
        None,
        "--path",
        help="mimic_cxr: the folder holding the label and metadata files (default: --split-dir).",
    ),
    data_entry: Path = _data_entry_option(),
    bbox_list: Path = typer.Option(
        None, "--bbox-list", help="Your own BBox_List_2017.csv[.gz] (default: fetched)."
    ),
    cache_dir: Path = cache_dir_option(),
    out: Path = out_option(
        "Write audit.json, tables (CSV + Parquet), summary.md and run.json into this folder "
        "(atomically; must not exist unless --overwrite). Default: none, the audit is only "
        "printed.",
        default=None,
    ),
    overwrite: bool = overwrite_option(),
    json_out: bool = json_option("Print the audit as JSON."),
) -> None:
    """Images, patients, findings, views, boxes and split leakage of a dataset.

    Beside the ChestX-ray14 counts, ChestX-ray8's published ones (Wang et al., CVPR 2017: 108,948 images,
    32,717 patients, Table 1 per finding) are printed in the summary and the JSON and written as
    published_counts.csv: the files audited are the extended release, not the paper's.

    With --split-dir, only the *list.txt files listed in a run.json (when the folder has one, as written by
    `cxreval data split`) are read, so stale lists from an earlier run are never audited.

    MIMIC-CXR: --split-dir is the folder of mimic-cxr-2.0.0-split.csv.gz; the audit counts its images, studies
    and patients per part and the patients (and studies) on more than one side (0 on the published split).

    Example:

    \b
        cxreval data audit chestxray14 --split-dir my-split -o audit-out
        cxreval data audit mimic_cxr --split-dir mimic-cxr-jpg -o mimic-audit
    """
    from ..jobs import audit_dataset_files

    console = Console(stderr=True)
    with console.status(f"auditing {dataset}"):
        res = audit_dataset_files(
            dataset,
            data_entry=data_entry,
            bbox_list=bbox_list,
            split_dir=split_dir,
            path=path,
            cache_dir=cache_dir,
            out=out,
            overwrite=overwrite,
        )
    if out is not None:
        written = save_output(
            res, out, overwrite=overwrite, inputs=[p for p in (data_entry, bbox_list, split_dir, path) if p]
        )
        console.print(
            f"wrote {', '.join(Path(p).name for k, p in written.items() if k != 'summary')}, summary.md "
            f"(tables also as Parquet) to {out}"
        )
    echo_result(res, json_out=json_out)


@data_app.command("split")
def split(
    dataset: str = typer.Argument(..., help=f"Dataset to split: one of {', '.join(SPLITTABLE)}."),
    out: Path = out_option(
        "Folder for <split>_list.txt files, assignments, summary.md and run.json (atomically; "
        "must not exist unless --overwrite)."
    ),
    fractions: str = typer.Option(
        "0.7,0.1,0.2", "--fractions", help="Comma-separated fractions summing to 1."
    ),
    names: str = typer.Option(None, "--names", help="Comma-separated split names (default train,val,test)."),
    stratify: str = typer.Option(None, "--stratify", help="Comma-separated findings to stratify by."),
    by: str = typer.Option("patient", "--by", help="'patient' (no leakage) or 'image' (leaky baseline)."),
    seed: int = seed_option(),
    path: Path = _data_entry_option(),
    cache_dir: Path = cache_dir_option(),
    overwrite: bool = overwrite_option(),
    json_out: bool = json_option("Print split sizes and leakage as JSON."),
) -> None:
    """Draw a seeded patient-level (or image-level) split and write it as *_list.txt files.

    Example:

    \b
        cxreval data split chestxray14 --fractions 0.7,0.1,0.2 --stratify Edema --seed 0 -o my-split
    """
    from ..jobs import split_dataset_files

    res = split_dataset_files(
        dataset,
        fractions=fractions,
        names=names,
        stratify=stratify,
        by=by,
        rng=seed,
        path=path,
        cache_dir=cache_dir,
        out=out,
        overwrite=overwrite,
    )
    save_output(res, out, overwrite=overwrite, inputs=[path] if path else [], meta={"seed": seed})
    echo_result(res, json_out=json_out, nl=True)


@data_app.command("export")
def export(
    dataset: str = typer.Argument(..., help="A registered dataset (`cxreval data list`), e.g. openi_mesh."),
    out: Path = out_option(
        "Folder for <kind>.csv + .parquet (labels, boxes, reports, metadata or predictions), dropped.csv when "
        "the reader dropped rows, summary.md and run.json (atomically; must not exist unless "
        "--overwrite)."
    ),
    path: Path = typer.Option(
        None,
        "--path",
        help="Your own copy of the dataset's file or folder (default: the "
        "fetched copy, `cxreval data fetch`).",
    ),
    cache_dir: Path = cache_dir_option(),
    half: str = typer.Option(
        None,
        "--half",
        help="openi_mesh only: the reports with images of one half of "
        "cxreval.datasets.openi.openi_tuning_split, 'development' (the packaged report-labeller "
        "rules were tuned on it), 'held-out' (out-of-sample) or 'all' (both); the others are "
        "listed in dropped.csv. Default: every report with usable codes.",
    ),
    views: str = typer.Option(
        None,
        "--views",
        help="mimic_cxr, chexpert, chexpert_train: comma-separated views, e.g. "
        "PA,AP: keep the studies with such an image (MIMIC-CXR's ViewPosition, from "
        "mimic-cxr-2.0.0-metadata.csv.gz; CheXpert's AP/PA, or Lateral); the others are listed "
        "in dropped.csv.",
    ),
    split_part: str = typer.Option(
        None,
        "--split",
        help="mimic_cxr only: keep the studies of one part of the official split: train, validate or test.",
    ),
    logits: str = typer.Option(
        "keep",
        "--logits",
        help="nih_predictions only: 'keep' a logit model's scores as given (the default; AUCs and ROC operating "
        "points are the same either way) or 'sigmoid': map them through 1/(1 + exp(-x)) into [0, 1], which "
        "decision curves and calibration read as probabilities; summary.md names each model mapped.",
    ),
    overwrite: bool = overwrite_option(),
    json_out: bool = json_option("Print the read report as JSON."),
) -> None:
    """Write a registered dataset as cxreval's long table, the input of agree, classify, fuse, localize and
    label-reports --validate-against.

    Example:

    \b
        cxreval data export openi_mesh -o openi-mesh
        cxreval label-reports --reports NLMCXR_reports.tgz --sections whole --validate-against openi-mesh/labels.csv -o out
        cxreval data export openi_mesh --half held-out -o openi-mesh-held-out
        cxreval data export mimic_cxr --path mimic-cxr-jpg --views PA,AP -o mimic-labels
        cxreval data export nih_predictions -o nih-preds
        cxreval data export nih_predictions --logits sigmoid -o nih-probs
    """
    from ..jobs import export_dataset_files

    res = export_dataset_files(
        dataset,
        path=path,
        cache_dir=cache_dir,
        half=half,
        views=views,
        split=split_part,
        logits=logits,
        out=out,
        overwrite=overwrite,
    )
    meta: dict[str, object] = {"dataset": res.name, **res.options}
    save_output(res, out, overwrite=overwrite, inputs=res.sources, meta=meta)
    echo_result(res, json_out=json_out)


@data_app.command("list")
def list_(
    pattern: str = typer.Argument("*", help="Glob pattern on dataset names."),
    json_out: bool = json_option("Print the registry as JSON."),
) -> None:
    """List the registered datasets and their loaders.

    Example:

    \b
        cxreval data list 'vindr*'
    """
    from ..jobs import list_registered_datasets

    specs = list_registered_datasets(pattern)
    if json_out:
        echo_json([dict(s.to_dict(), available=s.available) for s in specs])
        return
    width = max((len(s.name) for s in specs), default=4)
    for s in specs:
        flag = "" if s.available else "  (loader not installed)"
        src = s.default or f"your {s.path}"
        typer.echo(f"{s.name:<{width}}  {s.kind:<8}  {s.description}  [{src}]{flag}")


def register(app: typer.Typer) -> None:
    app.add_typer(data_app, name="data")
