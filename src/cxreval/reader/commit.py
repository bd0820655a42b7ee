"""Group commit: one writer thread appends the submissions that arrive while a commit is running in the
next transaction, so concurrent readers share a disk flush instead of queueing one flush each.

A request's caller blocks until the transaction holding its row has committed (SQLite ``synchronous=FULL``
or PostgreSQL's durable commit); only then is the answer sent. With one reader the batch is that one row
and nothing waits. A retried id is answered from the stored row (``'duplicate'``), an id reused for other
content raises :class:`~cxreval.reader.payloads.SubmissionError` (409).
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any

from .db import insert_new

__all__: list[str] = []

_STOP = object()


@dataclass(frozen=True)
class Appended:
    """Outcome of one appended row: ``status`` is ``'stored'`` or ``'duplicate'``."""

    status: str
    seq: int
    server_time: str


@dataclass
class _Job:
    row: dict[str, Any]
    future: Future = field(default_factory=Future)


class GroupCommitter:
    """Serialise appends to the ``submissions`` table through one writer thread.

    Parameters
    ----------
    engine : sqlalchemy.Engine
    table : sqlalchemy.Table
        The submissions table.
    conflict : callable
        ``conflict(submission_id) -> Exception`` raised for an id reused with other content.
    now : callable
        Server time stamp for a committed batch.
    on_append : callable, optional
        ``on_append(conn, row, seq, server_time)``, called inside the transaction after each stored row
        (the derived tables: :class:`cxreval.reader.derived.Deriver`), so they commit with it or not at all.
    max_batch : int, default=256
    """

    def __init__(
        self,
        engine: Any,
        table: Any,
        *,
        conflict: Callable[[str], Exception],
        now: Callable[[], str],
        on_append: Callable[[Any, dict[str, Any], int, str], None] | None = None,
        max_batch: int = 256,
    ) -> None:
        import sqlalchemy as sa

        self.sa, self.engine, self.t = sa, engine, table
        self.conflict, self.now, self.max_batch = conflict, now, max_batch
        self.on_append = on_append
        self.q: queue.Queue[Any] = queue.Queue()
        self.lock = threading.Lock()
        self.thread: threading.Thread | None = None

    def append(self, row: dict[str, Any], *, timeout: float = 120.0) -> Appended:
        """Queue ``row`` (columns id, reader_id, task, item, payload, client_time) and wait for its commit."""
        with self.lock:
            if self.thread is None or not self.thread.is_alive():
                self.thread = threading.Thread(target=self._run, name="cxreval-reader-writer", daemon=True)
                self.thread.start()
        job = _Job(row)
        self.q.put(job)
        return job.future.result(timeout=timeout)

    def close(self) -> None:
        """Stop the writer thread after the queued rows."""
        with self.lock:
            if self.thread is not None and self.thread.is_alive():
                self.q.put(_STOP)
                self.thread.join(30)
            self.thread = None

    def _run(self) -> None:
        while True:
            first = self.q.get()
            if first is _STOP:
                return
            batch = [first]
            stop = False
            while len(batch) < self.max_batch:
                try:
                    nxt = self.q.get_nowait()
                except queue.Empty:
                    break
                if nxt is _STOP:
                    stop = True
                    break
                batch.append(nxt)
            self._commit_batch(batch)
            if stop:
                return

    def _commit_batch(self, batch: list[_Job]) -> None:
        try:
            results = self._commit(batch)
        except Exception as exc:
            if len(batch) > 1:  # one bad row (or a race with another process) must not fail the others
                for job in batch:
                    self._commit_batch([job])
                return
            results = self._retry_single(batch[0], exc)
        for job, res in zip(batch, results):
            if isinstance(res, Exception):
                job.future.set_exception(res)
            else:
                job.future.set_result(res)

    def _retry_single(self, job: _Job, exc: Exception) -> list[Any]:
        sa = self.sa
        for attempt in range(5):  # a concurrent writer in another process: its row or its lock
            if not isinstance(exc, (sa.exc.IntegrityError, sa.exc.OperationalError)):
                break
            time.sleep(0.01 * 2**attempt)
            try:
                return self._commit([job])
            except Exception as again:
                exc = again
        return [exc]

    def _commit(self, batch: list[_Job]) -> list[Any]:
        sa, s = self.sa, self.t
        stamp = self.now()
        out: list[Any] = []
        mine: dict[str, tuple[Any, ...]] = {}
        with self.engine.begin() as conn:  # commits on leaving the block, before any answer is set
            for job in batch:
                r = job.row
                key = (r["reader_id"], r["task"], r["item"], r["payload"])
                prev = mine.get(r["id"])
                if prev is None:  # a new id is one statement; a retried one is found by its unique id
                    seq = insert_new(conn, s, {**r, "server_time": stamp}, returning=s.c.seq)
                    if seq is not None:
                        if self.on_append is not None:
                            self.on_append(conn, r, int(seq), stamp)
                        mine[r["id"]] = (seq, *key, stamp)
                        out.append(Appended("stored", int(seq), stamp))
                        continue
                    v = conn.execute(
                        sa.select(
                            s.c.seq, s.c.reader_id, s.c.task, s.c.item, s.c.payload, s.c.server_time
                        ).where(s.c.id == r["id"])
                    ).one()
                    prev = mine[r["id"]] = tuple(v)
                out.append(
                    Appended("duplicate", int(prev[0]), str(prev[5]))
                    if prev[1:5] == key
                    else self.conflict(r["id"])
                )
        return out
