"""Arrays handed to an executor's workers through a *spill folder* of ``.npy`` files.

A task sent to worker processes or a Dask cluster is pickled; large read-only arrays (the AUC kernel's scores,
labels and bootstrap counts; fusion's encoded annotations) are written once with :func:`spill_arrays`, each
task carries their paths, and the worker memory-maps them with :func:`load_spilled`. In process
(:attr:`cxreval.executor.Executor.in_process`) nothing is spilled: the same task functions read the arrays
themselves (:func:`load_spilled` passes arrays through).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

import numpy as np

__all__: list[str] = []


def spill_arrays(
    arrays: Mapping[str, np.ndarray | str | None], folder: str | os.PathLike[str], *, prefix: str = ""
) -> dict[str, str | None]:
    """Write each array of ``arrays`` once as ``folder/<prefix><name>.npy``; return the absolute path of each
    (what a task carries to an executor's workers instead of the arrays; :func:`load_spilled` reads them).

    ``None`` and values that are already paths pass through unchanged; ``folder`` is created if needed. On
    a cluster of several machines every worker must see ``folder`` under the same path (shared storage).

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     paths = spill_arrays({"x": np.arange(3), "w": None}, d, prefix="g0_")
    ...     (paths["w"], paths["x"].endswith("g0_x.npy"), load_spilled(paths["x"]).tolist())
    (None, True, [0, 1, 2])
    """
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    out: dict[str, str | None] = {}
    for name, value in arrays.items():
        if value is None or isinstance(value, str):
            out[name] = value
            continue
        path = folder / f"{prefix}{name}.npy"
        np.save(path, np.ascontiguousarray(value))
        out[name] = str(path.resolve())
    return out


def load_spilled(value: np.ndarray | str | None) -> np.ndarray | None:
    """An array written by :func:`spill_arrays`, memory-mapped read-only from its path (arrays and ``None``
    pass through: the same task function runs in process on the arrays themselves)."""
    return np.load(value, mmap_mode="r") if isinstance(value, str) else value
