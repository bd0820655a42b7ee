"""Progress on the command line: rich bars on a terminal, log lines with ``-v`` elsewhere, nothing otherwise."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from typing import Any

from ..progress import NoProgress, Progress

__all__ = ["progress"]


class _RichProgress(NoProgress):
    def __init__(self, bar: Any) -> None:
        self.bar = bar

    def add(self, description: str, total: float | None = None) -> int:
        return int(self.bar.add_task(description, total=total))

    def advance(self, task: int, n: float = 1) -> None:
        self.bar.advance(task, n)

    def done(self, task: int) -> None:
        t = self.bar.tasks[[x.id for x in self.bar.tasks].index(task)]
        self.bar.update(task, total=t.total if t.total is not None else 1, completed=t.total or 1)


class _LoggedProgress(NoProgress):
    """Progress as log lines (``-v`` when stderr is not a terminal): each task's count at most every
    ``every`` seconds, and when it is done."""

    def __init__(self, every: float = 5.0) -> None:
        import logging
        import time

        self.log, self.clock, self.every = logging.getLogger("cxreval"), time.monotonic, every
        self.tasks: dict[int, list[Any]] = {}  # id: [description, total, completed, start, last logged]

    def add(self, description: str, total: float | None = None) -> int:
        now = self.clock()
        self.tasks[len(self.tasks) + 1] = [description, total, 0.0, now, now]
        return len(self.tasks)

    def _line(self, t: list[Any]) -> None:
        desc, total, done, start = t[0], t[1], t[2], t[3]
        count = f"{done:,.0f}/{total:,.0f} ({done / total:.0%})" if total else f"{done:,.0f}"
        self.log.info("%s: %s, %.0f s", desc, count, self.clock() - start)
        t[4] = self.clock()

    def advance(self, task: int, n: float = 1) -> None:
        t = self.tasks.get(task)
        if t is not None:
            t[2] += n
            if self.clock() - t[4] >= self.every:
                self._line(t)

    def done(self, task: int) -> None:
        t = self.tasks.get(task)
        if t is not None:
            t[2] = t[1] if t[1] else t[2]
            self._line(t)


def _may_be_terminal() -> bool:
    """Whether rich could call stderr a terminal: a tty, or an environment that forces one."""
    import os

    forced = any(
        os.environ.get(k)
        for k in ("FORCE_COLOR", "TTY_INTERACTIVE", "TTY_COMPATIBLE", "JUPYTER_COLUMNS", "JUPYTER_LINES")
    )
    try:
        return forced or sys.stderr.isatty()
    except (AttributeError, ValueError):
        return True  # an unusual stream: let rich decide


@contextlib.contextmanager
def progress(*, enabled: bool | None = None) -> Iterator[Progress]:
    """Rich progress bars on stderr (off when stderr is not a terminal, where ``-v`` logs the counts every few
    seconds instead): ``p.add(description, total)``, ``p.advance(task)``, ``p.done(task)``. Phases without a
    known size show a spinner and the elapsed time."""
    if enabled is None and not _may_be_terminal():  # rich is not imported for a pipe or a file
        enabled = False
    if enabled is False:
        import logging

        # -v (--verbose) without a terminal: the progress as log lines
        yield _LoggedProgress() if logging.getLogger("cxreval").isEnabledFor(logging.INFO) else NoProgress()
        return
    from rich.console import Console

    console = Console(stderr=True)
    if enabled is None:
        enabled = console.is_terminal
    if not enabled:
        yield NoProgress()
        return
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        SpinnerColumn,
        TextColumn,
        TimeElapsedColumn,
    )
    from rich.progress import Progress as Bars

    with Bars(
        SpinnerColumn(),
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
        transient=True,
    ) as bar:
        yield _RichProgress(bar)
