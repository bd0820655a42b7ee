"""The one seam for parallel work: ``map(func, items) -> list``, in order, results identical to serial.

Map-style work (bootstrap replicates in shards, heatmaps → boxes in chunks of maps) is written as a pure,
top-level function applied to a list of items, and handed to an *executor*. Where it runs is the
executor's business and nobody else's:

* :class:`SerialExecutor` (the default everywhere): in this process, in order.
* :class:`ProcessExecutor`: a ``concurrent.futures.ProcessPoolExecutor`` on this machine; ``func`` (with
  its bound data) goes to each worker once, and the items are cut into contiguous chunks, one task each.
* :class:`DaskExecutor`: a ``dask.distributed`` client (a local cluster of ``N`` worker processes or a
  scheduler address); the optional ``dask`` extra (``pip install cxreval[dask]``).

Every executor says whether it runs in this process (``in_process``: then work may read arrays in memory
and report progress item by item) and takes an ``on_item`` callback, called with each item as its result
comes in (the :class:`Executor` protocol). Any object with a ``map(func, items)`` method returning the
results in the order of ``items`` plugs in the same way (:func:`get_executor` adds what it lacks); every
public ``executor=`` is an :data:`ExecutorLike`, which :func:`get_executor` turns into one, and
:func:`open_executor` does the same as a context manager that closes whatever the executor started (a Dask
``LocalCluster`` and its worker processes), also on an error or Ctrl-C. The specs, as the CLI's ``--executor``:

=========================  ==========================================================================
``serial`` (or ``None``)   in this process
``process`` / ``process:N``  worker processes on this machine (all CPUs / ``N``)
``dask:local:N``           a ``distributed.LocalCluster`` of ``N`` single-threaded worker processes,
                           started on first use and closed when the executor is closed
``dask://HOST:PORT``       the Dask scheduler at ``tcp://HOST:PORT`` (also ``dask:tcp://HOST:PORT``);
                           the workers must see the input paths (shared storage)
``dask``                   the current default client, else a new LocalCluster
=========================  ==========================================================================

Randomness never depends on the executor: every random draw happens before mapping (the bootstrap draws
its whole resampling plan with ``rng`` first; each shard only reads rows of it), so the same inputs and
seed give identical outputs on every executor. Functions handed to a process or Dask executor must be
picklable: module-level functions, or ``functools.partial`` of them with picklable arguments.

Two modules go with the seam. Large arrays reach the workers through a *spill folder*
(:func:`cxreval.spill.spill_arrays` writes them once as ``.npy`` files, each task carries their paths and
:func:`~cxreval.spill.load_spilled` memory-maps them), not inside every task. Work that reports its progress
takes a ``progress=`` object of the :class:`cxreval.progress.Progress` protocol (``add(description, total)``,
``advance(task, n)``, ``done(task)``; the CLI's progress bars are one), typically advanced from ``on_item``.

Examples
--------
>>> ex = get_executor("serial")
>>> ex.map(abs, [-2, 1, -3])
[2, 1, 3]
>>> get_executor("process:2")
ProcessExecutor(max_workers=2)
>>> get_executor(None) == SerialExecutor()
True
>>> seen = []; ex.map(abs, [-2, 1], on_item=seen.append), seen
([2, 1], [-2, 1])
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from typing import Any, Protocol, TypeAlias, Union, runtime_checkable

from ._typing import SupportsMap
from .exceptions import DataUnavailableError, InvalidParameterError

__all__ = [
    "EXECUTOR_SPECS",
    "DASK_CONNECT_TIMEOUT_S",
    "Executor",
    "ExecutorLike",
    "OnItem",
    "SerialExecutor",
    "ProcessExecutor",
    "DaskExecutor",
    "get_executor",
    "open_executor",
    "chunk_items",
]

_CHUNKS_PER_WORKER = 4
_DASK_CHUNKS_PER_WORKER = (
    16  # a Dask task costs ~1 ms: smaller chunks balance uneven items (e.g. micro-average blocks)
)

#: The spec forms :func:`get_executor` accepts, as written in error messages and the CLI's help.
EXECUTOR_SPECS = "serial, process:N, dask:local:N or dask://HOST:PORT"
DASK_CONNECT_TIMEOUT_S = 5.0
"""How long ``dask://HOST:PORT`` waits for the scheduler to answer before the run is refused (Dask's own
default is 30 s)."""


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
        items = list(items)
        if not items:
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


def _import_distributed() -> Any:
    try:
        import dask.distributed as distributed
    except ImportError as exc:
        raise DataUnavailableError(
            "The Dask executor needs dask.distributed, which is not installed; install the optional extra with "
            "`pip install 'cxreval[dask]'` (or use the 'serial' or 'process' executor)."
        ) from exc
    return distributed


class DaskExecutor:
    """A ``dask.distributed`` cluster as the executor (the optional ``dask`` extra).

    Parameters
    ----------
    client : dask.distributed.Client, optional
        The client to submit to. Default: the current default client if there is one, else a client of
        ``address``, else a new local cluster (processes on this machine); a client this executor
        creates is closed by :meth:`close` (or on leaving a ``with`` block).
    address : str, optional
        Scheduler address (``'tcp://host:8786'``) used when ``client`` is not given.
    n_workers : int, optional
        Start a new ``distributed.LocalCluster`` of ``n_workers`` single-threaded worker processes (on first use)
        instead of using the default client; closed by :meth:`close`. Not with ``client`` or ``address``.
    chunks_per_worker : int, default=16
        Tasks per worker thread; items are cut into contiguous chunks as in :class:`ProcessExecutor`.

    Raises
    ------
    DataUnavailableError
        dask.distributed is not installed (raised on construction).

    Notes
    -----
    ``func`` is broadcast to every worker once per :meth:`map` and every chunk task reads it there (scattered
    to one worker only, it would draw every task to that worker: the scheduler runs a task where its data is);
    the results are gathered in item order. A task's exception is re-raised here.
    """

    def __init__(
        self,
        client: Any = None,
        *,
        address: str | None = None,
        n_workers: int | None = None,
        chunks_per_worker: int = _DASK_CHUNKS_PER_WORKER,
    ) -> None:
        self._distributed = _import_distributed()
        if address is not None and (not isinstance(address, str) or not address.strip()):
            raise InvalidParameterError(
                f"The 'address' parameter of DaskExecutor must be a non-empty str. Got {address!r} instead."
            )
        self.n_workers = _check_workers(n_workers, name="n_workers", func="DaskExecutor")
        if self.n_workers is not None and (client is not None or address is not None):
            raise InvalidParameterError(
                "DaskExecutor: 'n_workers' starts a local cluster; it cannot be combined with "
                "'client' or 'address'."
            )
        cpw = _check_workers(chunks_per_worker, name="chunks_per_worker", func="DaskExecutor")
        self.chunks_per_worker = _DASK_CHUNKS_PER_WORKER if cpw is None else cpw
        self.address = address
        self._client = client
        self._owned = False

    in_process = False

    def __repr__(self) -> str:
        if self.n_workers is not None:
            return f"DaskExecutor(n_workers={self.n_workers})"
        return (
            f"DaskExecutor(address={self.address!r})"
            if self._client is None
            else f"DaskExecutor({self._client!r})"
        )

    @property
    def client(self) -> Any:
        """The client used (created on first use when none was given)."""
        if self._client is None:
            dist = self._distributed
            if self.n_workers is not None:
                self._client = _local_client(dist, self.n_workers)
                self._owned = True
                return self._client
            if self.address is None:
                try:
                    self._client = dist.default_client()
                    return self._client
                except ValueError:
                    pass
            if self.address is not None:
                _check_reachable(self.address)
            try:
                self._client = (
                    dist.Client(self.address, timeout=DASK_CONNECT_TIMEOUT_S)
                    if self.address is not None
                    else dist.Client()
                )
            except OSError as exc:
                raise DataUnavailableError(
                    f"Cannot connect to the Dask scheduler at {self.address!r} within "
                    f"{DASK_CONNECT_TIMEOUT_S:g} s: {exc}"
                ) from exc
            except Exception as exc:  # noqa: BLE001 - something answered, but not as a Dask scheduler does
                raise DataUnavailableError(
                    f"{self.address!r} answered, but not as a Dask scheduler "
                    f"({type(exc).__name__}: {str(exc)[:120]}). Is the address right?"
                ) from exc
            self._owned = True
        return self._client

    def _n_threads(self) -> int:
        try:
            n = sum(self.client.nthreads().values())
        except Exception:  # noqa: BLE001 - an exotic client without nthreads(): one task per item chunk of 1 worker
            n = 1
        return max(1, int(n))

    def map(
        self, func: Callable[[Any], Any], items: Iterable[Any], *, on_item: OnItem | None = None
    ) -> list[Any]:
        items = list(items)
        if not items:
            return []
        client = self.client
        chunks = chunk_items(items, self._n_threads() * self.chunks_per_worker)
        [fut_func] = client.scatter([func], hash=False, broadcast=True)
        futures = [client.submit(_apply_chunk, fut_func, c, pure=False) for c in chunks]
        try:
            if on_item is not None:
                chunk_of = {f.key: c for f, c in zip(futures, chunks)}
                for f in self._distributed.as_completed(futures):
                    if f.status != "finished":
                        break  # raised by gather
                    for x in chunk_of[f.key]:
                        on_item(x)
            parts = client.gather(futures)
        finally:
            client.cancel([fut_func])
        return [r for part in parts for r in part]

    def close(self) -> None:
        """Close the client if this executor created it, and the local cluster (its worker processes) with it."""
        if self._owned and self._client is not None:
            cluster = getattr(self._client, "cluster", None)
            try:
                self._client.close()
            finally:
                if cluster is not None:
                    cluster.close()
        self._client = None
        self._owned = False

    def __enter__(self) -> DaskExecutor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _worker_environ() -> dict[str, Any]:
    """Dask's pre-spawn worker environment without ``MALLOC_TRIM_THRESHOLD_``.

    Dask sets ``MALLOC_TRIM_THRESHOLD_=65536`` in its workers by default; that fixes glibc's mmap threshold,
    so every large temporary array is a fresh mmap with fresh page faults, and cxreval's numpy kernels ran
    1.4-1.75x slower per task in a Dask worker than in a plain process (measured: the AUC bootstrap blocks).
    The thread-count variables are kept.
    """
    import dask

    env = dict(dask.config.get("distributed.nanny.pre-spawn-environ", default={}) or {})
    env.pop("MALLOC_TRIM_THRESHOLD_", None)
    return env


def _local_client(dist: Any, n_workers: int) -> Any:
    """A client of a new LocalCluster: ``n_workers`` processes of one thread each, no dashboard, quiet logs,
    glibc's default allocator behaviour (:func:`_worker_environ`)."""
    import logging

    import dask

    # an earlier Dask cluster of this process may have left the variable in os.environ, which workers inherit
    saved = os.environ.pop("MALLOC_TRIM_THRESHOLD_", None)
    try:
        with dask.config.set({"distributed.nanny.pre-spawn-environ": _worker_environ()}):
            cluster = dist.LocalCluster(
                n_workers=n_workers,
                threads_per_worker=1,
                processes=True,
                dashboard_address=None,
                silence_logs=logging.ERROR,
            )
    finally:
        if saved is not None:
            os.environ["MALLOC_TRIM_THRESHOLD_"] = saved
    try:
        return dist.Client(cluster)
    except BaseException:
        cluster.close()
        raise


def _spec_count(spec: str, arg: str, prefix: str = "process:") -> int:
    try:
        n = int(arg)
    except ValueError:
        n = 0
    if n < 1 or str(n) != arg.strip():
        raise InvalidParameterError(
            f"Executor spec {spec!r}: the number of workers after {prefix!r} must be a "
            f"positive int (e.g. '{prefix}4'). Got {arg!r} instead."
        )
    return n


def get_executor(spec: ExecutorLike = None) -> Executor:
    """An executor from a spec.

    Parameters
    ----------
    spec : None, str or object with ``map``
        ``None`` or ``'serial'``: :class:`SerialExecutor`; ``'process'`` or ``'process:N'``:
        :class:`ProcessExecutor` with all CPUs or ``N`` workers; ``'dask:local:N'``: :class:`DaskExecutor` on a
        new LocalCluster of ``N`` worker processes; ``'dask://HOST:PORT'`` or ``'dask:ADDRESS'``: the scheduler
        at ``tcp://HOST:PORT`` / ``ADDRESS`` (``'dask:tcp://10.0.0.1:8786'``); ``'dask'``: the default client or
        a new local cluster; an :class:`Executor` is returned as is, and another object with a callable ``map``
        as an :class:`Executor` calling it (``in_process`` as the object says, else ``False``).

    Returns
    -------
    ex : Executor

    Raises
    ------
    InvalidParameterError
        An unknown spec or a bad worker count.
    DataUnavailableError
        ``'dask...'`` without dask.distributed installed.

    Examples
    --------
    >>> get_executor("process")
    ProcessExecutor(max_workers=None)
    >>> get_executor("threads")
    Traceback (most recent call last):
    ...
    cxreval.exceptions.InvalidParameterError: Unknown executor spec 'threads'; expected serial, process:N, \
dask:local:N or dask://HOST:PORT (or 'process', 'dask', 'dask:tcp://HOST:PORT', or an object with a map(func, items) \
method).
    """
    if spec is None:
        return SerialExecutor()
    if not isinstance(spec, str):
        if callable(getattr(spec, "map", None)):
            if isinstance(getattr(spec, "in_process", None), bool) and _takes_on_item(spec.map):
                return spec  # type: ignore[return-value]
            return _MapOnly(spec)
        raise InvalidParameterError(
            f"The executor must be None, a spec string or an object with a map(func, items) "
            f"method. Got {spec!r} of type {type(spec).__name__} instead."
        )
    kind, sep, arg = spec.strip().partition(":")
    kind = kind.strip().lower()
    if kind == "serial" and not sep:
        return SerialExecutor()
    if kind == "process":
        return ProcessExecutor(_spec_count(spec, arg) if sep else None)
    if kind == "dask":
        arg = arg.strip()
        if sep and not arg:
            raise InvalidParameterError(
                f"Executor spec {spec!r}: give a scheduler address after 'dask:' "
                "(e.g. 'dask://127.0.0.1:8786') or a local cluster ('dask:local:2')."
            )
        if arg.startswith("local"):
            _, sep2, n = arg.partition(":")
            if arg != "local" and not sep2:
                raise InvalidParameterError(
                    f"Executor spec {spec!r}: expected 'dask:local:N' (e.g. 'dask:local:2')."
                )
            return DaskExecutor(n_workers=_spec_count(spec, n, "dask:local:") if sep2 else _default_workers())
        if arg.startswith("//"):
            if not arg[2:].strip():
                raise InvalidParameterError(
                    f"Executor spec {spec!r}: give HOST:PORT after 'dask://' (e.g. 'dask://127.0.0.1:8786')."
                )
            arg = "tcp:" + arg
        return DaskExecutor(address=arg if sep else None)
    raise InvalidParameterError(
        f"Unknown executor spec {spec!r}; expected {EXECUTOR_SPECS} (or 'process', 'dask', "
        "'dask:tcp://HOST:PORT', or an object with a map(func, items) method)."
    )


def _takes_on_item(method: Callable[..., Any]) -> bool:
    import inspect

    try:
        params = inspect.signature(method).parameters.values()
    except (TypeError, ValueError):  # pragma: no cover - a builtin without a signature
        return False
    return any(p.name == "on_item" or p.kind is p.VAR_KEYWORD for p in params)


class _MapOnly:
    """An object with only ``map(func, items)`` made an :class:`Executor`: ``in_process`` as it says (else
    ``False``: arrays are spilled for it), ``on_item`` called for every item once its ``map`` returns."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.in_process = bool(getattr(inner, "in_process", False))

    def __repr__(self) -> str:
        return repr(self.inner)

    def map(
        self, func: Callable[[Any], Any], items: Iterable[Any], *, on_item: OnItem | None = None
    ) -> list[Any]:
        items = list(items)
        out = list(self.inner.map(func, items))
        if on_item is not None:
            for x in items:
                on_item(x)
        return out


def _check_reachable(address: str) -> None:
    """A TCP scheduler address answers within :data:`DASK_CONNECT_TIMEOUT_S` (a refused port fails at once,
    where Dask's client would retry until its timeout)."""
    import socket

    if not address.startswith("tcp://"):
        return
    host, _, port = address[len("tcp://") :].rpartition(":")
    try:
        with socket.create_connection((host.strip("[]"), int(port)), timeout=DASK_CONNECT_TIMEOUT_S):
            pass
    except (OSError, ValueError) as exc:
        raise DataUnavailableError(
            f"Cannot connect to the Dask scheduler at {address!r} (waited at most "
            f"{DASK_CONNECT_TIMEOUT_S:g} s): {exc}. Is it running, and is the address "
            f"right?"
        ) from None


@contextlib.contextmanager
def open_executor(spec: ExecutorLike = None) -> Iterator[Executor]:
    """:func:`get_executor` as a context manager: the executor, closed on leaving (error and Ctrl-C included).

    Whatever the executor started is stopped on exit: the LocalCluster of ``'dask:local:N'`` (and ``'dask'``
    when it had to start one) with its worker processes, and the client of ``'dask://HOST:PORT'`` (the
    remote cluster itself keeps running). A bad spec raises before anything starts; a Dask cluster starts on
    the first ``map``, so a command that fails its input checks never starts one.

    Examples
    --------
    >>> with open_executor("process:2") as ex:
    ...     ex.map(abs, [-1, 2])
    [1, 2]
    """
    ex = get_executor(spec)
    try:
        yield ex
    finally:
        close = getattr(ex, "close", None)
        if callable(close) and ex is not spec:
            close()
