"""The progress protocol: how long-running work reports how far it is, to whoever draws it.

Work that reports its progress (the AUC blocks, heatmaps to boxes, report labelling, predictions,
fine-tuning epochs) takes a ``progress=`` parameter: ``None`` (nothing is reported) or any object of the
:class:`Progress` protocol. It adds a task per phase and advances it as items finish, typically from the
``on_item`` callback of :meth:`cxreval.executor.Executor.map`, so the count is the same on every executor.
The CLI's progress bars on stderr (``cxreval.cli._common.progress``) are one such object.

Examples
--------
>>> class Printed(NoProgress):
...     def advance(self, task, n=1):
...         print("advanced", n)
>>> p = as_progress(Printed(), func="example")
>>> p.advance(p.add("reading", total=2), 2)
advanced 2
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from .exceptions import InvalidParameterError

__all__: list[str] = []


@runtime_checkable
class Progress(Protocol):
    """What work reporting its progress needs (a ``progress=`` parameter): tasks with an optional size.

    ``add(description, total)`` starts a task (``total=None``: of unknown size) and returns its id;
    ``advance(task, n)`` counts ``n`` more units done; ``done(task)`` marks it finished. :class:`NoProgress`
    does nothing; the CLI's progress bars (``cxreval.cli._common.progress``) draw them on stderr.
    """

    def add(self, description: str, total: float | None = None) -> int: ...

    def advance(self, task: int, n: float = 1) -> None: ...

    def done(self, task: int) -> None: ...


class NoProgress:
    """The :class:`Progress` that reports nothing (what ``progress=None`` means).

    Examples
    --------
    >>> p = NoProgress()
    >>> p.advance(p.add("reading", total=3))
    """

    def add(self, description: str, total: float | None = None) -> int:
        return 0

    def advance(self, task: int, n: float = 1) -> None:
        pass

    def done(self, task: int) -> None:
        pass


def as_progress(progress: object, *, func: str) -> Progress:
    """The ``progress=`` parameter of ``func`` as a :class:`Progress`: ``None`` is :class:`NoProgress`.

    Raises
    ------
    InvalidParameterError
        ``progress`` is neither ``None`` nor an object with ``add``, ``advance`` and ``done``.
    """
    if progress is None:
        return NoProgress()
    if not isinstance(progress, Progress):
        raise InvalidParameterError(
            f"The 'progress' parameter of {func} must have add(description, total), "
            f"advance(task, n) and done(task) methods (cxreval.progress.Progress) or be None. "
            f"Got {progress!r} instead."
        )
    return progress
