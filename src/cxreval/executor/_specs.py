"""Executor specs: :func:`get_executor` turns an ``ExecutorLike`` into an executor,
:func:`open_executor` also closes it."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from ..exceptions import InvalidParameterError
from ._dask import DaskExecutor
from ._local import Executor, ExecutorLike, OnItem, ProcessExecutor, SerialExecutor, _default_workers

__all__ = ["EXECUTOR_SPECS", "get_executor", "open_executor"]


#: The spec forms :func:`get_executor` accepts, as written in error messages and the CLI's help.
EXECUTOR_SPECS = "serial, process:N, dask:local:N or dask://HOST:PORT"


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
