"""Batched, streaming, resumable inference of one or more models over a list of images.

:func:`run_predictions` reads the images in batches (optionally on ``workers`` threads, one batch ahead
of the model), preprocesses each for its models (models with the same :class:`~.preprocess.Preprocessing`
share one read), runs every model on the batch and, with ``heatmaps``, computes CAM or Grad-CAM maps
with :mod:`cxreval.localization` (CAM, Grad-CAM). Each batch goes to the :class:`~.store.PartialStore` at once, so
memory holds one batch whatever the number of images and an interrupted run resumes where it stopped.
An image that cannot be read or preprocessed is recorded with its error and the run carries on.

:func:`write_outputs` turns the store into the output files:

* ``predictions.csv`` / ``.parquet``: ``study_id, model, finding, score`` (cxreval's prediction format;
  findings canonical), ``score`` being the model's output for that finding (after a sigmoid when the
  model's YAML asks for one);
* ``findings_map.csv``: every output of every model, its name, the canonical finding it was written as
  (``cxreval.findings`` aliases) or why it was left out;
* ``read_report.csv``: one row per image listed (``ok`` / ``error`` with the message) and per file skipped;
* ``models.json``: each model's spec, weights file and preprocessing steps;
* ``heatmaps/<model>.npz`` (with ``heatmaps``): maps keyed ``"<study_id>/<finding>"`` for ``cxreval localize``;
* ``summary.md``.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .._validation import check_choice, check_positive_int
from ..exceptions import InvalidParameterError, SchemaError
from ..executor import ExecutorLike, get_executor
from ..progress import Progress, as_progress
from ._batches import BatchPredictions, check_heatmap_models, loaded_batches, model_groups, predict_batch
from ._images import ImageItem
from ._imports import require_torch
from ._models import LoadedModel
from ._prediction_files import PredictResult, model_file_name, write_outputs
from ._store import PartialStore

__all__ = [
    "CAM_METHODS",
    "PredictResult",
    "RunStats",
    "predict",
    "run_predictions",
    "write_outputs",
    "store_config",
    "partial_path",
    "model_file_name",
    "check_heatmap_models",
    "BatchPredictions",
    "predict_batch",
    "model_groups",
    "loaded_batches",
]

CAM_METHODS: tuple[str, ...] = ("cam", "gradcam")


@dataclass(frozen=True)
class RunStats:
    """What one call of :func:`run_predictions` did."""

    n_images: int
    n_resumed: dict[int, int]
    n_read_now: int
    n_errors_now: int


def partial_path(out: str | Path) -> Path:
    """The resume store of a run into ``out``: the hidden folder ``.<name>-predict-partial`` beside it.

    It outlives an interrupted run on purpose (that is what the next run resumes from) and is removed when
    the output folder has been written.
    """
    out = Path(out).expanduser().absolute()
    return out.parent / f".{out.name}-predict-partial"


def store_config(
    models: Sequence[LoadedModel], *, heatmaps: bool, cam: str, target_layer: str | None, dicom_window: str
) -> dict[str, object]:
    """The settings that change results; a resume store is used only with identical settings."""
    return {
        "models": [
            {
                "spec": m.spec,
                "name": m.name,
                "weights_file": m.weights_file,
                "preprocessing": m.preprocessing.to_dict(),
                "findings": [f or "" for f in m.findings],
                "apply_sigmoid": m.apply_sigmoid,
                "zero_shot": m.extra.get("zero_shot"),
            }
            for m in models
        ],
        "heatmaps": bool(heatmaps),
        "cam": cam if heatmaps else None,
        "target_layer": target_layer if heatmaps else None,
        "dicom_window": dicom_window,
    }


def run_predictions(
    items: Sequence[ImageItem],
    models: Sequence[LoadedModel],
    *,
    store: PartialStore,
    heatmaps: bool = False,
    cam: str = "cam",
    target_layer: str | None = None,
    batch_size: int = 16,
    workers: int = 0,
    dicom_window: str = "none",
    progress: Progress | None = None,
    executor: ExecutorLike = None,
    job_options: Mapping[str, Any] | None = None,
) -> RunStats:
    """Predict every image not yet in ``store`` with every model; store each batch as it is done.

    Parameters
    ----------
    items : sequence of ImageItem
    models : sequence of LoadedModel
        From :func:`~cxreval.predict.load_model` (already on their device).
    store : PartialStore
        Where batches go; images it already holds are skipped (resume).
    heatmaps : bool, default=False
        Also compute one map per image and written finding.
    cam : {'cam', 'gradcam'}, default='cam'
        :func:`cxreval.predict.class_activation_maps` or :func:`~cxreval.predict.grad_cam`.
    target_layer : str, optional
        Overrides each model's default CAM layer.
    batch_size : int, default=16
    workers : int, default=0
        Threads reading and preprocessing images one batch ahead of the model (0: in the main thread).
    dicom_window : {'none', 'voi'}
    progress : Progress, optional
        A task counting the images to try in this run, advanced after each stored batch
        (:class:`cxreval.progress.Progress`; the CLI draws its progress bar from it).
    executor : executor, optional
        Where the batches run (:mod:`cxreval.executor`); other than serial, the images are cut into shards that
        worker processes predict, each loading the models itself from their specs (:mod:`.shards`;
        ``job_options``: ``device``, ``weights_dir``, ``prompts``, ``zero_shot_rule``). Results are identical to serial.

    Returns
    -------
    RunStats
    """
    require_torch()
    func = "run_predictions"
    batch_size = check_positive_int(batch_size, name="batch_size", func=func)
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 0:
        raise InvalidParameterError(
            f"The 'workers' parameter of {func} must be an int >= 0. Got {workers!r}."
        )
    check_choice(cam, CAM_METHODS, name="cam", func=func)
    layers = check_heatmap_models(models, target_layer=target_layer) if heatmaps else [None] * len(models)
    groups = model_groups(models)
    todo, resumed = [], {}
    for g, (_, _idx) in enumerate(groups):
        done = store.done(g)
        resumed[g] = sum(it.study_id in done for it in items)
        todo.append([it for it in items if it.study_id not in done])
    total = sum(len(t) for t in todo)
    n_read = n_err = 0
    job_options = job_options or {}
    progress = as_progress(progress, func="run_predictions")
    task = progress.add("cxreval predict (images)", total=total)
    ex = get_executor(executor)
    if ex.in_process:
        records: Iterator[
            tuple[
                int, list[str], dict[int, np.ndarray], dict[int, np.ndarray], list[tuple[str, str, str]], int
            ]
        ] = (
            (
                g,
                *predict_batch(models, idx, batch, loaded, heatmaps=heatmaps, cam=cam, layers=layers),
                len(batch),
            )
            for g, (prep, idx) in enumerate(groups)
            for batch, loaded in loaded_batches(
                todo[g], prep, batch_size=batch_size, workers=workers, dicom_window=dicom_window
            )
        )
    else:
        from .shards import ShardJob, map_shards

        job = ShardJob(
            tuple(m.spec for m in models),
            str(job_options.get("device", "cpu")),
            job_options.get("weights_dir"),
            job_options.get("prompts"),
            heatmaps,
            cam,
            target_layer,
            batch_size,
            dicom_window,
            str(job_options.get("zero_shot_rule", "softmax")),
        )
        records = map_shards(ex, todo, job)
    for g, ids, scores, maps, errors, n_batch in records:
        store.write(g, ids, scores, maps, errors)
        n_read += len(ids)
        n_err += len(errors)
        progress.advance(task, n_batch)
    return RunStats(len(items), resumed, n_read, n_err)


def predict(
    images: str | Path | Sequence[str | Path],
    models: Sequence[str],
    *,
    out: str | Path,
    overwrite: bool = False,
    heatmaps: bool = False,
    cam: str = "cam",
    target_layer: str | None = None,
    batch_size: int = 16,
    device: str = "cpu",
    workers: int = 0,
    weights_dir: str | Path | None = None,
    download: bool = True,
    dicom_window: str = "none",
    restart: bool = False,
    prompts: str | Path | None = None,
    zero_shot_rule: str = "softmax",
    executor: ExecutorLike = None,
    progress: Progress | None = None,
    argv: Sequence[str] | None = None,
) -> PredictResult:
    """List the images, load the models, predict (resuming an unfinished run) and write ``out`` atomically.

    Everything that can be checked is checked before the first image is read: the output path, the
    image list, DICOM support, every model (loaded; ``torch:`` models run once on a blank input), the
    heatmap layers, the output folder's lock (a concurrent run into ``out`` fails at once) and the resume
    store's settings. Batches are kept in ``partial_path(out)`` while the run goes on; the output folder
    appears only when every image has been tried, and the store is then removed.

    Parameters
    ----------
    images : folder, list file, or sequence of image paths
    models : sequence of str
        Model specs (``xrv:<weights>``, ``torch:<path>``, ``clip:...``; see :mod:`cxreval.predict.clip`).
    out : path
        Output folder (see :mod:`cxreval.outputs`).
    overwrite, restart : bool
        Replace an existing ``out``; discard an unfinished run's stored batches.
    weights_dir, download, prompts, zero_shot_rule : see :func:`~cxreval.predict.load_model`
        (``zero_shot_rule`` is written to ``run.json`` whether or not a ``clip:`` model is given); the other
        parameters are :func:`run_predictions`'s.

    Returns
    -------
    PredictResult
    """
    from ..io.images import DICOM_WINDOWS, is_dicom, pydicom_available
    from ..outputs import output_folder
    from ..outputs._folder import check_output_path
    from ._images import list_images
    from ._models import load_model, parse_model_spec

    check_choice(dicom_window, DICOM_WINDOWS, name="dicom_window", func="predict")
    check_choice(cam, CAM_METHODS, name="cam", func="predict")
    from .clip import ZERO_SHOT_RULES

    check_choice(zero_shot_rule, ZERO_SHOT_RULES, name="zero_shot_rule", func="predict")
    check_positive_int(batch_size, name="batch_size", func="predict")  # before the resume store is made
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 0:
        raise InvalidParameterError(
            f"The 'workers' parameter of predict must be an int >= 0. Got {workers!r}."
        )
    if not models:
        raise InvalidParameterError(
            "predict needs at least one model (models=, e.g. xrv:<weights> or torch:<path>)."
        )
    for s in models:  # every --model spec read before anything else is looked at
        parse_model_spec(s)
    guard = [images] if isinstance(images, (str, os.PathLike)) else []
    check_output_path(out, overwrite=overwrite, inputs=guard)
    listing = list_images(images)
    n_dcm = sum(is_dicom(it.path) for it in listing.items if it.path.suffix.lower() in (".dcm", ".dicom"))
    if n_dcm and not pydicom_available():
        from ..exceptions import DataUnavailableError

        raise DataUnavailableError(
            f"images={str(listing.source)!r}: {n_dcm} DICOM file(s) but pydicom is not installed; "
            "pip install 'cxreval[dicom]'."
        )
    loaded = [
        load_model(
            s,
            device=device,
            weights_dir=weights_dir,
            download=download,
            prompts=prompts,
            zero_shot_rule=zero_shot_rule,
        )
        for s in models
    ]
    names = [m.name for m in loaded]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise InvalidParameterError(
            f"two models are named {dup}; give each torch model a different 'name' in its YAML."
        )
    if heatmaps:
        check_heatmap_models(loaded, target_layer=target_layer)
    options: dict[str, Any] = {
        "heatmaps": heatmaps,
        "cam": cam,
        "target_layer": target_layer,
        "batch_size": batch_size,
        "device": device,
        "workers": workers,
        "dicom_window": dicom_window,
        "zero_shot_rule": zero_shot_rule,
    }
    src = Path(str(listing.source))
    inputs = [src] if src.is_file() else []  # a list file is hashed; an image folder is not read twice
    for m in loaded:  # every model's YAML and weights file (run.json: SHA-256)
        for f in (m.extra.get("yaml"), m.weights_file):
            if f and Path(str(f)).is_file() and Path(str(f)) not in inputs:
                inputs.append(Path(str(f)))
    # the output folder's lock is taken before any image is read: a second run into the same --out fails at once
    with output_folder(
        out,
        overwrite=overwrite,
        inputs=inputs,
        argv=argv,
        protect=guard,
        meta={
            "images": listing.source,
            "n_images": len(listing.items),
            "models": [m.spec for m in loaded],
            "zero_shot_rule": zero_shot_rule,
        },
    ) as d:
        store = PartialStore(
            partial_path(out),
            store_config(
                loaded, heatmaps=heatmaps, cam=cam, target_layer=target_layer, dicom_window=dicom_window
            ),
            restart=restart,
        )
        stats = run_predictions(
            listing.items,
            loaded,
            store=store,
            **{
                k: options[k]
                for k in ("heatmaps", "cam", "target_layer", "batch_size", "workers", "dicom_window")
            },
            progress=progress,
            executor=executor,
            job_options={
                "device": device,
                "weights_dir": None if weights_dir is None else str(weights_dir),
                "prompts": None if prompts is None else str(prompts),
                "zero_shot_rule": zero_shot_rule,
            },
        )
        options["resumed_images"] = {str(k): v for k, v in stats.n_resumed.items()}
        res = write_outputs(
            d, store, listing.items, loaded, heatmaps=heatmaps, listing=listing, options=options
        )
        bad = res.image_status[res.image_status["status"] == "error"]
        if len(bad) and not (res.image_status["status"] == "ok").any():
            store.remove()  # nothing to resume: the next run reads every image again
            shown = "; ".join(f"{r.path}: {r.error}" for r in bad.head(3).itertuples())
            raise SchemaError(
                f"images={str(listing.source)!r}: none of the {len(bad)} image(s) could be read, so "
                f"nothing was predicted ({shown}{'; ...' if len(bad) > 3 else ''})."
            )
    store.remove()
    return res
