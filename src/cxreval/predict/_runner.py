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

import json
import os
import re
from collections.abc import Iterator, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import pandas as pd

from .._validation import check_choice, check_positive_int
from ..exceptions import CxrevalError, InvalidParameterError, SchemaError
from ..executor import ExecutorLike, get_executor
from ..io.images import read_image
from ..labels import validate_predictions
from ..progress import Progress, as_progress
from ..results import ReadReport
from ._images import ImageItem, ImageList, exc_text
from ._models import LoadedModel, require_torch
from ._preprocess import Preprocessing
from ._store import NpzWriter, PartialStore

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


@dataclass(frozen=True)
class PredictResult:
    """The assembled outputs of a prediction run (see :func:`write_outputs`)."""

    predictions: pd.DataFrame
    mapping: pd.DataFrame
    read_report: ReadReport
    image_status: pd.DataFrame
    files: dict[str, str] = field(default_factory=dict)

    def to_dict(self) -> dict[str, object]:
        return {
            "n_predictions": int(len(self.predictions)),
            "models": sorted(self.predictions.model.unique()),
            "read_report": self.read_report.to_dict(),
            "files": dict(self.files),
        }


def partial_path(out: str | Path) -> Path:
    """The resume store of a run into ``out``: the hidden folder ``.<name>-predict-partial`` beside it.

    It outlives an interrupted run on purpose (that is what the next run resumes from) and is removed when
    the output folder has been written.
    """
    out = Path(out).expanduser().absolute()
    return out.parent / f".{out.name}-predict-partial"


def model_file_name(name: str) -> str:
    """A file-name-safe form of a model name."""
    return re.sub(r"[^A-Za-z0-9._+-]+", "_", name).strip("_") or "model"


def model_groups(models: Sequence[LoadedModel]) -> list[tuple[Preprocessing, list[int]]]:
    groups: dict[Preprocessing, list[int]] = {}
    for i, m in enumerate(models):
        groups.setdefault(m.preprocessing, []).append(i)
    return list(groups.items())


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


def check_heatmap_models(models: Sequence[LoadedModel], *, target_layer: str | None) -> list[str]:
    """The CAM target layer of each model; raises before any work when a model cannot give heatmaps."""
    layers = []
    for m in models:
        layer = target_layer or m.target_layer
        if m.scripted:
            raise InvalidParameterError(
                f"heatmaps=True: model {m.name} is TorchScript, whose layers cannot be hooked; "
                "give it as a state_dict with 'architecture' in its YAML."
            )
        if not layer:
            raise InvalidParameterError(
                f"heatmaps=True: model {m.name} has no default CAM target layer; pass "
                "target_layer= (a convolutional stage, e.g. 'features') or set "
                "target_layer in its YAML."
            )
        names = dict(m.module.named_modules())
        if layer not in names:
            top = [n for n in names if n and "." not in n][:20]
            raise InvalidParameterError(
                f"target_layer={layer!r}: model {m.name} has no such module; its top-level modules are {top}."
            )
        layers.append(layer)
    return layers


def _load_one(item: ImageItem, prep: Preprocessing, dicom_window: str) -> np.ndarray | str:
    try:
        return prep.apply(read_image(item.path, dicom_window=dicom_window))
    except CxrevalError as exc:
        msg = str(exc)
        return msg if str(item.path) in msg else f"{item.path}: {msg}"
    except (MemoryError, ValueError, OSError) as exc:
        return f"{item.path}: {exc_text(exc)}"


def _batches(items: Sequence[ImageItem], size: int) -> Iterator[list[ImageItem]]:
    for i in range(0, len(items), size):
        yield list(items[i : i + size])


def loaded_batches(
    items: Sequence[ImageItem], prep: Preprocessing, *, batch_size: int, workers: int, dicom_window: str
) -> Iterator[tuple[list[ImageItem], list[np.ndarray | str]]]:
    if workers <= 0:
        for b in _batches(items, batch_size):
            yield b, [_load_one(it, prep, dicom_window) for it in b]
        return
    with ThreadPoolExecutor(max_workers=workers) as ex:
        pending: list[tuple[list[ImageItem], list[Future[np.ndarray | str]]]] = []
        it = _batches(items, batch_size)
        for _ in range(2):  # the current batch and one ahead
            b = next(it, [])
            if b:
                pending.append((b, [ex.submit(_load_one, x, prep, dicom_window) for x in b]))
        while pending:
            b, futs = pending.pop(0)
            nxt = next(it, [])
            if nxt:
                pending.append((nxt, [ex.submit(_load_one, x, prep, dicom_window) for x in nxt]))
            yield b, [f.result() for f in futs]


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


class BatchPredictions(NamedTuple):
    """What :func:`predict_batch` returns: the studies predicted, the scores and maps per model, and the errors."""

    study_ids: list[str]
    scores: dict[int, np.ndarray]
    maps: dict[int, np.ndarray]
    errors: list[tuple[str, str, str]]


def predict_batch(
    models: Sequence[LoadedModel],
    idx: Sequence[int],
    batch: Sequence[ImageItem],
    loaded: Sequence[np.ndarray | str],
    *,
    heatmaps: bool,
    cam: str,
    layers: Sequence[str | None],
) -> BatchPredictions:
    """Scores (and maps) of the models ``idx`` on one read batch: ``(ids predicted, scores, maps, errors)``."""
    torch = require_torch()
    from ._cam import class_activation_maps, grad_cam

    ok = [i for i, v in enumerate(loaded) if not isinstance(v, str)]
    errors = [
        (batch[i].study_id, str(batch[i].path), str(loaded[i]))
        for i in range(len(batch))
        if isinstance(loaded[i], str)
    ]
    scores, maps = {}, {}
    if ok:
        xb = torch.from_numpy(np.stack([loaded[i] for i in ok]))
        for mi in idx:
            m = models[mi]
            dev = next(iter(m.module.parameters()), xb).device
            used = m.used
            with torch.inference_mode():
                y = m.module(xb.to(dev))
                if m.apply_sigmoid:
                    y = torch.sigmoid(y)
            scores[mi] = y[:, torch.as_tensor(used, device=y.device)].double().cpu().numpy()
            if heatmaps:
                if cam == "cam":
                    maps[mi] = class_activation_maps(
                        m.module,
                        xb,
                        target_layer=str(layers[mi]),
                        classifier=m.classifier,
                        classes=used.tolist(),
                        batch_size=len(ok),
                        device=dev,
                    )
                else:
                    maps[mi] = grad_cam(
                        m.module,
                        xb,
                        target_layer=str(layers[mi]),
                        classes=used.tolist(),
                        batch_size=len(ok),
                        device=dev,
                    )
    return BatchPredictions([batch[i].study_id for i in ok], scores, maps, errors)


def _read_report_table(
    items: Sequence[ImageItem],
    listing: ImageList | None,
    ok_ids: set[str],
    errors: dict[str, tuple[str, str]],
) -> pd.DataFrame:
    rows = []
    for it in items:
        if it.study_id in errors:
            rows.append((it.study_id, str(it.path), "error", errors[it.study_id][1]))
        elif it.study_id in ok_ids:
            rows.append((it.study_id, str(it.path), "ok", ""))
        else:
            rows.append((it.study_id, str(it.path), "missing", "not predicted (internal error)"))
    for path, why in listing.skipped if listing is not None else ():
        rows.append(("", path, "skipped", why))
    return pd.DataFrame(rows, columns=["study_id", "path", "status", "error"])


def write_outputs(
    folder: str | Path,
    store: PartialStore,
    items: Sequence[ImageItem],
    models: Sequence[LoadedModel],
    *,
    heatmaps: bool = False,
    listing: ImageList | None = None,
    options: dict[str, object] | None = None,
) -> PredictResult:
    """Assemble the stored batches into the output files in ``folder`` (see the module docstring)."""
    from ..localization._heatmap_keys import heatmap_dict

    folder = Path(folder)
    groups = model_groups(models)
    order = {it.study_id: k for k, it in enumerate(items)}
    frames: list[pd.DataFrame] = []
    errors: dict[str, tuple[str, str]] = {}
    ok_ids: dict[int, set[str]] = {g: set() for g in range(len(groups))}
    writers: dict[int, NpzWriter] = {}
    files: dict[str, str] = {}
    if heatmaps:
        (folder / "heatmaps").mkdir()
        for i, m in enumerate(models):
            rel = f"heatmaps/{model_file_name(m.name)}.npz"
            writers[i] = NpzWriter(folder / rel)
            files[f"heatmaps:{m.name}"] = rel
    try:
        for s in store.shards(with_maps=heatmaps):
            ids = s.ids.tolist()
            ids_keep = [k for k, sid in enumerate(ids) if sid in order]
            if not ids_keep and not len(s.err_ids):
                continue
            for sid, path, msg in zip(s.err_ids.tolist(), s.err_paths.tolist(), s.err_msgs.tolist()):
                errors[sid] = (path, msg)
            ok_ids[s.group].update(ids[k] for k in ids_keep)
            keep_ids = [ids[k] for k in ids_keep]
            for mi, sc in s.scores.items():
                m = models[mi]
                fnames = [f for f in m.findings if f is not None]
                sc = sc[ids_keep]
                frames.append(
                    pd.DataFrame(
                        {
                            "study_id": np.repeat(np.asarray(keep_ids, dtype=object), len(fnames)),
                            "model": m.name,
                            "finding": np.tile(np.asarray(fnames, dtype=object), len(keep_ids)),
                            "score": sc.ravel(),
                        }
                    )
                )
                if heatmaps and mi in s.maps and keep_ids:
                    for key, arr in heatmap_dict(
                        s.maps[mi][ids_keep], image_ids=keep_ids, findings=fnames
                    ).items():
                        writers[mi].add(key, arr)
    finally:
        for w in writers.values():
            w.close()
    all_ok = set().union(*ok_ids.values()) if ok_ids else set()
    errors = {k: v for k, v in errors.items() if k not in all_ok}
    preds = (
        pd.concat(frames, ignore_index=True)
        if frames
        else pd.DataFrame({"study_id": [], "model": [], "finding": [], "score": []})
    )
    bad = ~np.isfinite(preds["score"].to_numpy(dtype=float))
    for sid, mname in preds.loc[bad, ["study_id", "model"]].drop_duplicates().itertuples(index=False):
        errors[sid] = (errors.get(sid, ("", ""))[0], f"model {mname} returned a non-finite score")
    preds = preds[~bad]
    mindex = {m.name: i for i, m in enumerate(models)}
    fpos = {(m.name, f): j for m in models for j, f in enumerate(m.findings) if f is not None}
    preds = preds.assign(
        _m=preds.model.map(mindex),
        _i=preds.study_id.map(order),
        _f=[fpos[(a, b)] for a, b in zip(preds.model, preds.finding)],
    )
    preds = (
        preds.sort_values(["_m", "_i", "_f"], kind="stable")
        .drop(columns=["_m", "_i", "_f"])
        .reset_index(drop=True)
    )
    preds = validate_predictions(preds, where="cxreval predict")
    preds.to_csv(folder / "predictions.csv", index=False)
    preds.to_parquet(folder / "predictions.parquet", index=False)
    mapping = pd.concat([m.mapping_table() for m in models], ignore_index=True)
    mapping.to_csv(folder / "findings_map.csv", index=False)
    status = _read_report_table(items, listing, all_ok, errors)
    status.to_csv(folder / "read_report.csv", index=False)
    (folder / "models.json").write_text(
        json.dumps(
            {"models": [m.describe() for m in models], "options": options or {}}, indent=2, default=str
        )
        + "\n"
    )
    err = status[status.status != "ok"].reset_index(drop=True)
    dropped = pd.DataFrame(
        {
            "row": err.index.to_numpy() * 0 - 1,
            "reason": err.status.to_numpy(),
            "value": (err.path + ": " + err.error).to_numpy(),
        }
    )
    report = ReadReport(
        listing.source if listing is not None else "images",
        len(items),
        len(all_ok),
        dropped,
        notes=tuple(f"{m.name}: {m.spec}" for m in models),
    )
    files.update(
        {
            "predictions": "predictions.csv",
            "findings_map": "findings_map.csv",
            "read_report": "read_report.csv",
            "models": "models.json",
        }
    )
    n_err = int((status.status == "error").sum())
    lines = [
        f"# cxreval predict: {len(items)} image(s) x {len(models)} model(s)",
        "",
        f"Images predicted: {len(all_ok)}; unreadable: {n_err}; other files skipped: "
        f"{int((status.status == 'skipped').sum())} (see read_report.csv).",
        "",
    ]
    for m in models:
        lines += [f"## {m.name} (`{m.spec}`)", "", f"Weights: {m.weights_file}", "", "Preprocessing:", ""]
        lines += [f"{k}. {s}" for k, s in enumerate(m.preprocessing.steps(), 1)]
        lines += [
            "",
            "Outputs -> findings: "
            + ", ".join(f"{o or '(empty)'} -> {f or 'left out'}" for o, f in zip(m.outputs, m.findings)),
            "",
        ]
    if n_err:
        lines += ["## Unreadable images", ""] + [
            f"- {r.path}: {r.error}" for r in status[status.status == "error"].head(50).itertuples()
        ]
    (folder / "summary.md").write_text("\n".join(lines) + "\n")
    return PredictResult(preds, mapping, report, status, files)


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
    options = {
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
            heatmaps=heatmaps,
            cam=cam,
            target_layer=target_layer,
            batch_size=batch_size,
            workers=workers,
            dicom_window=dicom_window,
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
