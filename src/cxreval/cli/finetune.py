"""``cxreval finetune``: train a classifier on a user's labels; its output is a model ``cxreval predict`` loads."""

from __future__ import annotations

from pathlib import Path

import typer

from ._common import (
    command_line,
    device_option,
    echo_json,
    findings_option,
    json_option,
    labels_option,
    no_download_option,
    not_mentioned_option,
    out_option,
    overwrite_option,
    policy_option,
    seed_option,
    show_progress_option,
    split_list,
    state_encoding_option,
    weights_dir_option,
)
from ._common import progress as progress_bar

__all__: list[str] = []


def finetune(
    images: Path = typer.Option(
        ...,
        "--images",
        "-i",
        help="Folder of images (ids: paths relative to it) or a list file, as for cxreval predict.",
    ),
    labels: Path = labels_option(
        "Long label table (study_id = image id, patient_id, finding, source, state)."
    ),
    out: Path = out_option(),
    model: str = typer.Option(
        None,
        "--model",
        "-m",
        help="The model to start from: xrv:<DenseNet weights>, "
        "torch:<checkpoint or YAML> (state_dict with architecture) or clip:... (a "
        "vision-language model's image encoder + a linear classifier; --mode linear-probe "
        "or full).",
    ),
    recipe: str = typer.Option(
        None,
        "--recipe",
        help="chestxray8: the ChestX-ray8 baseline (torchvision trunk, "
        "transition layer, LSE pooling, prediction layer, W-CEL, 1024x1024 input); xrv (with "
        "--model xrv:...): torchxrayvision's training defaults (Adam amsgrad, lr 1e-3, weight "
        "decay 1e-5, batch 64, task-weighted BCE, random affine augmentation).",
    ),
    arch: str = typer.Option(
        "resnet50",
        "--arch",
        help="Trunk of --recipe chestxray8 (resnet18/34/50/101, vgg16, alexnet, googlenet, densenet121).",
    ),
    weights: Path = typer.Option(
        None,
        "--weights",
        help="torchvision ImageNet weights file for --recipe (default: "
        "random initialisation; never downloaded).",
    ),
    mode: str = typer.Option(
        "full",
        "--mode",
        help="linear-probe (frozen features computed once and cached in "
        "features.npz, logistic head), last-layer (head + last backbone stage) or full.",
    ),
    features: Path = typer.Option(
        None,
        "--features",
        help="features.npz of an earlier --mode linear-probe run of "
        "the same model on the same images: reused instead of computed again.",
    ),
    loss: str = typer.Option(
        None,
        "--loss",
        help="bce, wcel (ChestX-ray8's weighted cross-entropy) or xrv "
        "(torchxrayvision's task-weighted BCE); default wcel for --recipe chestxray8, xrv for "
        "--recipe xrv, else bce.",
    ),
    findings: list[str] = findings_option(
        "Findings to train, comma-separated or repeated (default: all labelled)."
    ),
    source: str = typer.Option(
        None, "--source", help="The label source to train on (needed when --labels has several)."
    ),
    policy: str = policy_option(),
    not_mentioned: str = not_mentioned_option(),
    state_encoding: str = state_encoding_option(),
    val_fraction: float = typer.Option(
        0.2, "--val-fraction", help="Fraction of patients in the validation part."
    ),
    epochs: int = typer.Option(10, "--epochs", help="Most epochs (gradient modes)."),
    patience: int = typer.Option(
        3, "--patience", help="Stop after this many epochs without a better macro validation AUC."
    ),
    batch_size: int = typer.Option(
        None, "--batch-size", help="Images per step (default 16; 64 for --recipe xrv)."
    ),
    lr: float = typer.Option(
        None, "--lr", help="Adam learning rate (default 1e-4 for full, 1e-3 otherwise and for --recipe xrv)."
    ),
    weight_decay: float = typer.Option(
        None,
        "--weight-decay",
        help="L2 penalty (Adam weight decay; the linear "
        "probe's weight_decay / 2 * ||W||^2; default 1e-4, 1e-5 for --recipe xrv).",
    ),
    input_size: int = typer.Option(
        None, "--input-size", help="Input side for --recipe (default 1024, the paper's)."
    ),
    name: str = typer.Option(
        None, "--name", help="Model name in model.yaml (the predictions' model column)."
    ),
    seed: int = seed_option("Seed of the split, the initialisation and the batch order."),
    device: str = device_option(),
    keep_interrupted: bool = typer.Option(
        False,
        "--keep-interrupted",
        help="On Ctrl-C, write --out with the best epoch so far (default: write nothing).",
    ),
    weights_dir: Path = weights_dir_option(),
    no_download: bool = no_download_option(),
    overwrite: bool = overwrite_option(),
    show_progress: bool = show_progress_option(),
    json_out: bool = json_option("Print the result as JSON."),
) -> None:
    """Writes model.pt + model.yaml (load with cxreval predict --model torch:OUT/model.yaml), training.csv (epoch,
    finding, train_loss, val_loss, val_auc), split.csv, val_predictions.csv, finetune.json and summary.md.
    Example:

    \b
        cxreval finetune --images xrays/ --labels labels.csv --model torch:base.yaml --mode last-layer -o ft/
        cxreval finetune --images xrays/ --labels labels.csv --recipe chestxray8 --arch resnet50 --device cuda -o cx8/
        cxreval finetune --images xrays/ --labels labels.csv --model clip:hf:models/clip-folder --mode linear-probe -o lp/
    """
    from ..predict import finetune as run

    with progress_bar(enabled=show_progress) as prog:
        res = run(
            images,
            labels,
            out=out,
            model=model,
            recipe=recipe,
            arch=arch,
            weights=weights,
            mode=mode,
            loss=loss,
            findings=split_list(findings, option="--findings"),
            source=source,
            policy=policy,
            not_mentioned=not_mentioned,
            state_encoding=state_encoding,
            val_fraction=val_fraction,
            epochs=epochs,
            patience=patience,
            batch_size=batch_size,
            lr=lr,
            weight_decay=weight_decay,
            rng=seed,
            device=device,
            input_size=input_size,
            name=name,
            keep_interrupted=keep_interrupted,
            overwrite=overwrite,
            weights_dir=weights_dir,
            download=not no_download,
            features=features,
            argv=command_line(),
            progress=prog,
        )
    if json_out:
        echo_json(
            {
                "best_epoch": res.best_epoch,
                "best_val_auc": res.best_val_auc,
                "stopped": res.stopped,
                "training": res.table.to_dict(orient="records"),
            }
        )
        return
    typer.echo(
        f"best epoch {res.best_epoch}: macro validation AUC {res.best_val_auc:.4f} ({res.stopped}); "
        f"model in {out}/model.yaml"
    )


def register(app: typer.Typer) -> None:
    from .main import command_help

    app.command("finetune", help=command_help("finetune", finetune.__doc__))(finetune)
