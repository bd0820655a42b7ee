"""``cxreval predict``: model scores (and CAM heatmaps) on a folder of radiographs."""

from __future__ import annotations

from pathlib import Path

import typer

from ._common import (
    cli_executor,
    device_option,
    echo_json,
    executor_option,
    json_option,
    no_download_option,
    out_option,
    overwrite_option,
    show_progress_option,
    weights_dir_option,
)
from ._common import progress as progress_bar

__all__: list[str] = []


def predict(
    images: Path = typer.Option(
        ...,
        "--images",
        "-i",
        help="Folder of images (searched recursively; ids are paths "
        "relative to it) or a list file (one path per line, or a CSV with path[,study_id]).",
    ),
    model: list[str] = typer.Option(
        ...,
        "--model",
        "-m",
        help="xrv:<weights> (e.g. xrv:densenet121-res224-all), "
        "torch:<checkpoint or YAML>, clip:open_clip:ARCH:CHECKPOINT, "
        "clip:open_clip:local-dir:FOLDER, clip:open_clip:hf-hub:ORG/NAME, "
        "clip:hf:FOLDER or clip:hf:ORG/NAME (zero-shot; Hub ids are read from "
        "$CXREVAL_CACHE/models/ORG/NAME or fetched; repeat for several models).",
    ),
    prompts: str = typer.Option(
        None,
        "--prompts",
        help="Zero-shot prompts of clip: models: chestxray14 (default), "
        "chexpert, xqa (its 12 findings, positive prompts only) or a YAML file (per "
        "finding, positive and optional negative prompts).",
    ),
    zero_shot_rule: str = typer.Option(
        "softmax",
        "--zero-shot-rule",
        help="Zero-shot score of clip: models: "
        "softmax (CheXzero: positive vs negative prompts) or max-cosine (XQA: the "
        "largest cosine over the positive prompts); written to run.json.",
    ),
    out: Path = out_option("Output folder (written atomically)."),
    heatmaps: bool = typer.Option(
        False,
        "--heatmaps",
        help="Also write CAM maps per image x finding "
        "(heatmaps/<model>.npz, read by `cxreval localize --heatmaps`).",
    ),
    cam: str = typer.Option("cam", "--cam", help="cam (classifier-weighted features) or gradcam."),
    target_layer: str = typer.Option(
        None,
        "--target-layer",
        help="Module whose output the maps are made from "
        "(default per model: 'features' for xrv DenseNets, 'model.layer4' for ResNets).",
    ),
    batch_size: int = typer.Option(
        16, "--batch-size", help="Images per forward pass (default 16; finetune: 16, 64 for --recipe xrv)."
    ),
    device: str = device_option(),
    workers: int = typer.Option(0, "--workers", help="Threads reading images one batch ahead (0: none)."),
    executor: str = executor_option(),
    weights_dir: Path = weights_dir_option(),
    no_download: bool = no_download_option(),
    dicom_window: str = typer.Option(
        "none", "--dicom-window", help="none (stored values) or voi (apply the DICOM VOI LUT / window first)."
    ),
    restart: bool = typer.Option(
        False,
        "--restart",
        help="Discard the stored batches of an unfinished run into --out instead of resuming it.",
    ),
    overwrite: bool = overwrite_option("Replace an existing --out folder whole."),
    show_progress: bool = show_progress_option(),
    json_out: bool = json_option("Print the summary as JSON."),
) -> None:
    """An interrupted run resumes where it stopped when run again with the same options; unreadable images
    are listed in read_report.csv.

    Example:

    \b
        cxreval predict --images xrays/ --model xrv:densenet121-res224-all --heatmaps --out preds/

    \b
        cxreval predict --images xrays/ --model clip:hf:models/clip-folder --prompts chestxray14 --out zs/
        cxreval predict --images xrays/ --model clip:hf:models/clip-folder --prompts xqa --zero-shot-rule max-cosine --out xqa/
    """
    from ..predict import predict as run

    with cli_executor(executor) as ex, progress_bar(enabled=show_progress) as prog:
        res = run(
            images,
            model,
            out=out,
            overwrite=overwrite,
            heatmaps=heatmaps,
            cam=cam,
            target_layer=target_layer,
            batch_size=batch_size,
            device=device,
            workers=workers,
            weights_dir=weights_dir,
            download=not no_download,
            dicom_window=dicom_window,
            restart=restart,
            prompts=prompts,
            zero_shot_rule=zero_shot_rule,
            executor=ex,
            progress=prog,
        )
    if json_out:
        echo_json(res.to_dict())
        return
    rr = res.read_report
    n_err = int((res.image_status.status == "error").sum())
    typer.echo(
        f"{rr.n_kept} of {rr.n_read} image(s) predicted by {res.mapping.model.nunique()} model(s); "
        f"{len(res.predictions)} score(s) in {out}/predictions.csv"
    )
    if n_err:
        typer.echo(f"{n_err} image(s) could not be read; see {out}/read_report.csv", err=True)


def register(app: typer.Typer) -> None:
    from .main import command_help

    app.command("predict", help=command_help("predict", predict.__doc__))(predict)
