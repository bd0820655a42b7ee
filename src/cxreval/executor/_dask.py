"""The Dask executor: a ``dask.distributed`` client, a local cluster or a scheduler address
(the optional ``dask`` extra)."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from typing import Any

from ..exceptions import DataUnavailableError, InvalidParameterError
from ._local import OnItem, _apply_chunk, _check_workers, chunk_items

__all__ = ["DASK_CONNECT_TIMEOUT_S", "DaskExecutor"]


_DASK_CHUNKS_PER_WORKER = (
    16  # a Dask task costs ~1 ms: smaller chunks balance uneven items (e.g. micro-average blocks)
)


DASK_CONNECT_TIMEOUT_S = 5.0
"""How long ``dask://HOST:PORT`` waits for the scheduler to answer before the run is refused (Dask's own
default is 30 s)."""


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
        if not (items := list(items)):
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
