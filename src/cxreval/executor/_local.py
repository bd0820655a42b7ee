"""Executors on this machine: the :class:`Executor` protocol, :class:`SerialExecutor` (in this process) and
:class:`ProcessExecutor` (worker processes), and :func:`chunk_items`."""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from typing import Any, Protocol, TypeAlias, Union, runtime_checkable

from .._typing import SupportsMap
from ..exceptions import InvalidParameterError

__all__ = ["Executor", "ExecutorLike", "OnItem", "SerialExecutor", "ProcessExecutor", "chunk_items"]

_CHUNKS_PER_WORKER = 4


OnItem = Callable[[Any], object]
"""``on_item(item)``: called by :meth:`Executor.map` once per item, after that item's result is in."""


@runtime_checkable
class Executor(Protocol):
    """What the library needs of an executor: ``in_process`` and ``map(func, items, on_item=None) -> list``.

    Attributes
    ----------
    in_process : bool
        Whether ``map`` calls ``func`` in this process (then ``func`` may be bound to arrays in memory, and
        ``on_item`` runs as each item finishes); ``False``: elsewhere (``func`` and the items are pickled, large
        arrays go through :func:`cxreval.spill.spill_arrays`, ``on_item`` runs as each task's results arrive).

    Notes
    -----
    The results come back as a list in the order of ``items`` and equal ``[func(x) for x in items]``; an
    exception raised by ``func`` propagates to the caller (the first one, in item order, here). ``on_item(item)``
    runs in this process once per item after its result is in (in item order in process; elsewhere as tasks end).
    """

    in_process: bool

    def map(
        self, func: Callable[[Any], Any], items: Iterable[Any], *, on_item: OnItem | None = None
    ) -> list[Any]: ...


ExecutorLike: TypeAlias = Union[Executor, SupportsMap, str, None]
"""What every public ``executor=`` accepts, normalised by :func:`get_executor` (a spec string: its ``spec``)."""


class SerialExecutor:
    """The in-process executor: ``map(func, items)`` evaluated eagerly, in order.

    Examples
    --------
    >>> SerialExecutor().map(len, ["ab", "c"])
    [2, 1]
    """

    in_process = True

    def map(
        self, func: Callable[[Any], Any], items: Iterable[Any], *, on_item: OnItem | None = None
    ) -> list[Any]:
        if on_item is None:
            return [func(x) for x in items]
        out = []
        for x in items:
            out.append(func(x))
            on_item(x)
        return out

    def __eq__(self, other: object) -> bool:
        return type(other) is SerialExecutor

    def __hash__(self) -> int:
        return hash(SerialExecutor)

    def __repr__(self) -> str:
        return "SerialExecutor()"


def chunk_items(items: Sequence[Any], n_chunks: int) -> list[list[Any]]:
    """Split ``items`` into at most ``n_chunks`` contiguous, non-empty chunks of near-equal length.

    Examples
    --------
    >>> chunk_items(list(range(7)), 3)
    [[0, 1, 2], [3, 4], [5, 6]]
    """
    n = len(items)
    k = max(1, min(int(n_chunks), n))
    q, r = divmod(n, k)
    out, start = [], 0
    for i in range(k):
        stop = start + q + (1 if i < r else 0)
        if stop > start:
            out.append(list(items[start:stop]))
        start = stop
    return out


def _apply_chunk(func: Callable[[Any], Any], chunk: Sequence[Any]) -> list[Any]:
    """Run ``func`` on every item of one chunk (module level: it is pickled to the workers)."""
    return [func(x) for x in chunk]


_WORKER_FUNC: Callable[[Any], Any] | None = None


def _init_worker(func: Callable[[Any], Any]) -> None:
    """Process-pool initializer: keep the mapped function in the worker (sent once per worker, not per task)."""
    global _WORKER_FUNC
    _WORKER_FUNC = func


def _apply_worker_chunk(chunk: Sequence[Any]) -> list[Any]:
    """Run the worker's function (see :func:`_init_worker`) on one chunk."""
    func = _WORKER_FUNC
    if func is None:  # pragma: no cover - only if the pool was built without the initializer
        raise RuntimeError("cxreval.executor: worker process has no function to run.")
    return [func(x) for x in chunk]


def _check_workers(value: object, *, name: str, func: str) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise InvalidParameterError(
            f"The '{name}' parameter of {func} must be a positive int or None. Got {value!r} instead."
        )
    return int(value)


def _default_workers() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not on Linux
        return max(1, os.cpu_count() or 1)


class ProcessExecutor:
    """Worker processes on this machine (``concurrent.futures.ProcessPoolExecutor``).

    Each :meth:`map` starts a pool whose workers receive ``func`` once (the pool's initializer: no copy at
    all under the ``fork`` start method), cuts ``items`` into contiguous chunks (``chunks_per_worker`` per
    worker, at most one per item), runs one task per chunk, returns the results in item order and shuts
    the pool down; no process outlives the call. So a function bound to large read-only data
    (``functools.partial``) costs one transfer per worker, and each task carries only its items.

    Parameters
    ----------
    max_workers : int, optional
        Worker processes (default: the CPUs this process may use). A map over fewer items uses fewer.
    chunks_per_worker : int, default=4
        Tasks per worker; more balances uneven items better, fewer pickles ``func`` fewer times.
    mp_context : {'fork', 'spawn', 'forkserver'} or multiprocessing context, optional
        Start method of the workers (default: the platform's). Under ``'spawn'`` and ``'forkserver'``
        ``func`` must be importable by name in a fresh interpreter.

    Notes
    -----
    ``func`` and the items are pickled: use module-level functions (or ``functools.partial`` of one).
    An exception raised in a worker is re-raised here with its original type and message.
    """

    def __init__(
        self,
        max_workers: int | None = None,
        *,
        chunks_per_worker: int = _CHUNKS_PER_WORKER,
        mp_context: Any = None,
    ) -> None:
        self.max_workers = _check_workers(max_workers, name="max_workers", func="ProcessExecutor")
        cpw = _check_workers(chunks_per_worker, name="chunks_per_worker", func="ProcessExecutor")
        self.chunks_per_worker = _CHUNKS_PER_WORKER if cpw is None else cpw
        if isinstance(mp_context, str):
            methods = multiprocessing.get_all_start_methods()
            if mp_context not in methods:
                raise InvalidParameterError(
                    f"The 'mp_context' parameter of ProcessExecutor must be one of {methods} "
                    f"or a multiprocessing context. Got {mp_context!r} instead."
                )
            mp_context = multiprocessing.get_context(mp_context)
        self.mp_context = mp_context

    in_process = False

    def __repr__(self) -> str:
        return f"ProcessExecutor(max_workers={self.max_workers})"

    def map(
        self, func: Callable[[Any], Any], items: Iterable[Any], *, on_item: OnItem | None = None
    ) -> list[Any]:
        if not (items := list(items)):
            return []
        workers = min(self.max_workers or _default_workers(), len(items))
        chunks = chunk_items(items, workers * self.chunks_per_worker)
        with ProcessPoolExecutor(
            max_workers=workers, mp_context=self.mp_context, initializer=_init_worker, initargs=(func,)
        ) as pool:
            futures = [pool.submit(_apply_worker_chunk, c) for c in chunks]
            try:
                if on_item is not None:
                    chunk_of = dict(zip(futures, chunks))
                    for f in as_completed(futures):
                        if f.exception() is not None:
                            break  # raised below, by the first failed chunk in item order
                        for x in chunk_of[f]:
                            on_item(x)
                parts = [f.result() for f in futures]
            except BaseException:
                for f in futures:
                    f.cancel()
                raise
        return [r for part in parts for r in part]
