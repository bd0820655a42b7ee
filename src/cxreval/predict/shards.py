"""``predict --executor``: the images cut into shards, each predicted by a worker that loads the models itself.

A shard is ``(group, images)``: images of one preprocessing group (:func:`~.runner.model_groups`), at most
``shard_size`` of them. :func:`predict_shard` runs in a worker (a process or a Dask worker): it loads the models
from their specs once per worker process (kept for the next shard), reads and preprocesses its images in
batches and returns the batches' scores, maps and read errors; the main process stores them
(:class:`~.store.PartialStore`) as they come back, a wave of shards at a time, so an interrupted run resumes
as a serial one does. Weights are never downloaded by a worker: the main process has loaded every model first.
The numbers are those of a serial run (the same batches through the same models). A process executor starts
its workers with ``spawn`` here: torch's thread pools do not survive ``fork``.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import partial

import numpy as np

from ..executor import ExecutorLike
from ._images import ImageItem
from ._models import LoadedModel, load_model
from ._runner import check_heatmap_models, loaded_batches, model_groups, predict_batch

__all__: list[str] = []

_LOADED: dict[tuple[object, ...], list[LoadedModel]] = {}


@dataclass(frozen=True)
class ShardJob:
    """Everything a worker needs besides its images (picklable)."""

    specs: tuple[str, ...]
    device: str
    weights_dir: str | None
    prompts: str | None
    heatmaps: bool
    cam: str
    target_layer: str | None
    batch_size: int
    dicom_window: str
    zero_shot_rule: str = "softmax"


def _models(job: ShardJob) -> list[LoadedModel]:
    key = (job.specs, job.device, job.weights_dir, job.prompts, job.zero_shot_rule)
    if key not in _LOADED:
        _LOADED.clear()
        _LOADED[key] = [
            load_model(
                s,
                device=job.device,
                weights_dir=job.weights_dir,
                download=False,
                prompts=job.prompts,
                zero_shot_rule=job.zero_shot_rule,
            )
            for s in job.specs
        ]
    return _LOADED[key]


Record = tuple[int, list[str], dict[int, np.ndarray], dict[int, np.ndarray], list[tuple[str, str, str]], int]


def predict_shard(job: ShardJob, shard: tuple[int, Sequence[ImageItem]]) -> list[Record]:
    """The batches of one shard: ``(group, ids, scores, maps, errors, n_images)`` each."""
    g, items = shard
    models = _models(job)
    prep, idx = model_groups(models)[g]
    layers: Sequence[str | None] = (
        check_heatmap_models(models, target_layer=job.target_layer) if job.heatmaps else [None] * len(models)
    )
    out: list[Record] = []
    for batch, loaded in loaded_batches(
        items, prep, batch_size=job.batch_size, workers=0, dicom_window=job.dicom_window
    ):
        out.append(
            (
                g,
                *predict_batch(models, idx, batch, loaded, heatmaps=job.heatmaps, cam=job.cam, layers=layers),
                len(batch),
            )
        )
    return out


def map_shards(
    executor: ExecutorLike,
    todo: Sequence[Sequence[ImageItem]],
    job: ShardJob,
    *,
    shard_batches: int = 4,
    wave: int = 8,
) -> Iterator[Record]:
    """Map :func:`predict_shard` over the shards of ``todo`` (one list of images per group), ``wave`` shards per
    ``executor.map``; yield the batches in image order."""
    from ..executor import get_executor
    from ..executor._local import ProcessExecutor

    executor = get_executor(executor)
    if isinstance(executor, ProcessExecutor) and executor.mp_context is None:
        # torch's thread pools do not survive fork (a forked worker can hang in its first convolution)
        executor = ProcessExecutor(
            executor.max_workers, chunks_per_worker=executor.chunks_per_worker, mp_context="spawn"
        )
    size = job.batch_size * shard_batches
    shards = [
        (g, list(items[i : i + size])) for g, items in enumerate(todo) for i in range(0, len(items), size)
    ]
    func = partial(predict_shard, job)
    for k in range(0, len(shards), wave):
        for records in executor.map(func, shards[k : k + wave]):
            yield from records
