"""Images read in batches for the models and the models run on a batch.

:func:`loaded_batches` reads and preprocesses the images (optionally on ``workers`` threads, one batch ahead of
the model; models with the same :class:`~.preprocess.Preprocessing` share one read, :func:`model_groups`); an
image that cannot be read is its error message. :func:`predict_batch` runs the models on one batch, with CAM or
Grad-CAM maps for the layers :func:`check_heatmap_models` checked.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import NamedTuple

import numpy as np

from ..exceptions import CxrevalError, InvalidParameterError
from ..io.images import read_image
from ._images import ImageItem, exc_text
from ._imports import require_torch
from ._models import LoadedModel
from ._preprocess import Preprocessing

__all__ = ["model_groups", "check_heatmap_models", "loaded_batches", "BatchPredictions", "predict_batch"]


def model_groups(models: Sequence[LoadedModel]) -> list[tuple[Preprocessing, list[int]]]:
    groups: dict[Preprocessing, list[int]] = {}
    for i, m in enumerate(models):
        groups.setdefault(m.preprocessing, []).append(i)
    return list(groups.items())


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
