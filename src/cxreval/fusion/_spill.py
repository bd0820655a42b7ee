"""Fitting the groups of a :class:`~cxreval.fusion._base.GroupedFusion` estimator on an executor.

Work is split by group (a finding, with the default ``pooling='finding'``). Each group's encoded annotations
are written once into a *spill folder* as three ``.npy`` files (``item`` int32, ``reader`` int32, ``label``
int8; :func:`cxreval.spill.spill_arrays`); a task carries only the folder path, the group's index and size,
the method's name and its (small) constructor parameters, and the group's random starts (MACE:
``n_restarts x n_readers x (2 + K)`` numbers). The worker memory-maps its own files and runs ``_fit_group``, the same function the serial fit
runs on the same values, so the parts, and every file written from them, are identical byte for byte.

Shared storage: with a Dask cluster on several machines every worker must see the spill folder under the
same path (put it, or the output folder it lives in, on a shared file system).
"""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from ..spill import load_spilled, spill_arrays
from ._base import Annotations, GroupArrays, GroupedFusion, GroupMap, get_fusion

__all__ = ["executor_group_map", "fit_group_task"]


def _params(est: GroupedFusion) -> dict[str, object]:
    """Constructor parameters of ``est`` except ``rng`` (its draws travel with the tasks)."""
    return {
        k: v for k, v in vars(est).items() if not k.startswith("_") and not k.endswith("_") and k != "rng"
    }


def fit_group_task(
    task: tuple[int, int, object], *, method: str, params: dict[str, object], folder: str, n_readers: int
) -> dict[str, np.ndarray]:
    """Fit one group read from the spill folder (runs in a worker).

    Parameters
    ----------
    task : (group index, number of items, draws)
    method : str
        Registered method name (``'ds'``, ``'mace'``).
    params : dict
        The estimator's constructor parameters (without ``rng``).
    folder : str
        Spill folder holding ``g<index>_item.npy``, ``g<index>_reader.npy``, ``g<index>_label.npy``.
    n_readers : int
        Number of readers of the whole table (reader codes index into it).
    """
    index, n_items, extra = task
    base = Path(folder) / f"g{index}"
    item, reader, label = (
        np.asarray(load_spilled(f"{base}_{c}.npy"), dtype=np.int64) for c in ("item", "reader", "label")
    )
    est = get_fusion(method)(**params)
    return est._fit_group(GroupArrays(item, reader, label, n_items, n_readers), extra)  # type: ignore[attr-defined]


def executor_group_map(executor: Any, folder: str | Path) -> GroupMap:
    """A ``group_map`` for :meth:`GroupedFusion._fit` that fits the groups with ``executor.map``, spilling
    each group's arrays into ``folder`` once (shared by every method fitted with the same groups)."""
    folder = Path(folder)
    written: dict[tuple[str, int], str] = {}

    def group_map(
        est: GroupedFusion, ann: Annotations, groups: list[tuple[str, np.ndarray]], extras: list[object]
    ) -> list[dict[str, np.ndarray]]:
        sub_folder = folder / est.pooling
        for gi, (_, items) in enumerate(groups):
            if (est.pooling, gi) in written:
                continue
            sub = ann.subset(items)
            spill_arrays(
                {
                    "item": sub.item.astype(np.int32),
                    "reader": sub.reader.astype(np.int32),
                    "label": sub.label.astype(np.int8),
                },
                sub_folder,
                prefix=f"g{gi}_",
            )
            written[(est.pooling, gi)] = str(sub_folder)
        func = partial(
            fit_group_task,
            method=est.name,
            params=_params(est),
            folder=str(sub_folder),
            n_readers=ann.n_readers,
        )
        tasks = [(gi, len(items), extra) for gi, ((_, items), extra) in enumerate(zip(groups, extras))]
        return list(executor.map(func, tasks))

    return group_map
