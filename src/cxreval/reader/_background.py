"""The organiser's background jobs of a study server: an export (:func:`cxreval.reader.export.export_tables`
written as a zip file into the study folder's ``exports/``) or the database's integrity check
(:func:`cxreval.reader.db.check_integrity`), each run in a process of its own, one job at a time, so that no
request waits on one and the readers' requests keep their own CPU: the job's process is at the lowest
priority from its start (:func:`_lowest_priority`), with a database server in a session of its own at a low
group priority (:func:`_own_group`); the database server's process serving it, which no priority of the job
reaches (PostgreSQL's, on this machine or another), works at most :data:`JOB_DUTY` of the time
(:class:`cxreval.reader.db.Pacer`: the export and the check read the log in chunks through a server-side
cursor, resting after each as long as it took).

A job is ``queued``, then ``running`` (with ``done`` of ``total`` rows read), then ``done`` (an export with
its ``file``, a check with its ``result``) or ``failed`` (with its ``error``). An export is written under a
temporary name and renamed once complete (:func:`cxreval.outputs._folder.atomic_file`), under a name no
other export has (the study, the time and the job's id), so that a failed or killed job leaves no partial
file and no export is ever replaced; the temporary files of a killed job are removed when the next one
runs.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import json
import multiprocessing as mp
import os
import threading
import uuid
from collections import deque
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ..outputs._folder import atomic_file, remove_killed_tmp

__all__ = ["JOB_KINDS", "Job", "OrganiserJobs"]

JOB_KINDS: tuple[str, ...] = ("export", "integrity")
"""What an organiser can run in the background."""
EXPORTS = "exports"
"""The folder, inside the study folder, of the exports made by the server."""
JOB_NICENESS = 19
"""How much lower than the server's a job process's CPU priority is (``os.nice``): on a busy machine the
readers' requests are served first."""
JOB_GROUP_NICENESS = 10
"""The niceness of a job's own session (Linux's autogroup, :func:`_own_group`): its weight is a tenth of
another session's, so the readers' processes come first, yet a job is not starved on a machine busy with
other work."""
JOB_DUTY = 0.5
"""The most of the time a database server's process works for a job (:class:`cxreval.reader.db.Pacer`): it
is idle the rest of the time, and its CPU is the readers'."""
_KEPT = 50
"""Finished jobs remembered (the oldest forgotten first; their files stay in the exports folder)."""


def _now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")


@dataclass
class Job:
    """One background job and its state (``queued``, ``running``, ``done``, ``failed``)."""

    id: str
    kind: str
    state: str = "queued"
    queued: str = field(default_factory=_now)
    started: str | None = None
    finished: str | None = None
    done: int = 0
    total: int | None = None
    file: str | None = None
    result: dict[str, Any] | None = None
    error: str | None = None

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


class _PipeProgress:
    """The :class:`~cxreval.progress.Progress` of a job's process: ``(done, total)`` sent to the server."""

    def __init__(self, conn: Any) -> None:
        self.conn, self.n = conn, 0.0
        self.total: float | None = None

    def add(self, description: str, total: float | None = None) -> int:
        self.total = total
        self.conn.send(("progress", 0, total))
        return 0

    def advance(self, task: int, n: float = 1) -> None:
        self.n += n
        self.conn.send(("progress", int(self.n), self.total))

    def done(self, task: int) -> None:
        self.conn.send(("progress", self.total, self.total))


def export_zip(res: Any, path: Path) -> None:
    """Write the export ``res`` (:class:`~cxreval.reader.export.StudyExport`) as a zip file at ``path``: its
    files and ``export.json`` (the study and the counts)."""
    import zipfile

    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for name, text in res.texts.items():
            zf.writestr(name, text.encode("utf-8"))
        zf.writestr("export.json", json.dumps({"study": res.study, **res.to_dict()}, indent=1))


def _lowest_priority(pid: int = 0) -> None:
    """Put the process ``pid`` (0: this one) behind every other on the CPU: Linux's ``SCHED_IDLE`` (any
    other process that wakes up, the server answering a reader, takes the CPU from it at once), and a
    niceness of :data:`JOB_NICENESS` more than the server's where that policy is missing."""
    with contextlib.suppress(OSError, AttributeError):
        nice = min(19, os.getpriority(os.PRIO_PROCESS, 0) + JOB_NICENESS)
        os.setpriority(os.PRIO_PROCESS, pid, max(nice, os.getpriority(os.PRIO_PROCESS, pid)))
    with contextlib.suppress(OSError, AttributeError):
        os.sched_setscheduler(pid, os.SCHED_IDLE, os.sched_param(0))


def _own_group() -> None:
    """Leave the server's session for one of this process's own, at a low group priority. Linux
    shares the CPU between sessions first (autogroups) and ranks a process's policy and niceness only
    within its session: a ``SCHED_IDLE`` job in the server's session still takes a session's share from
    the database server's processes (PostgreSQL's, in a session of their own) that answer the readers.
    Its own session's niceness is :data:`JOB_GROUP_NICENESS`. Not with SQLite: the readers' queries run in
    the server's process, ranked above the job in their session, and a job slowed further would only hold
    its snapshot longer, making each reader's commit copy a longer write-ahead log."""
    with contextlib.suppress(OSError, AttributeError):
        os.setsid()
    with contextlib.suppress(OSError), open("/proc/self/autogroup", "w") as fh:
        fh.write(str(JOB_GROUP_NICENESS))


def _checkpoint(engine: Any) -> None:
    """SQLite: copy the write-ahead log into the database file now, in the job's process, without waiting
    for anyone (``wal_checkpoint(PASSIVE)``). While the job's snapshot was open the log could only grow; the
    next reader's commit would otherwise copy it, fsync included, while the reader waits."""
    if engine.dialect.name == "sqlite":
        with engine.connect() as c:
            c.exec_driver_sql("PRAGMA wal_checkpoint(PASSIVE)")


def _run(kind: str, url: str, out: str, conn: Any) -> None:
    """A job's process: open the study at ``url``, run the job, send ``("done", result)`` or ``("failed",
    message)``."""
    if url.split(":", 1)[0].split("+", 1)[0] != "sqlite":  # SQLite answers the readers in the server
        _own_group()
    _lowest_priority()
    try:
        from .db import Pacer
        from .store import ReaderStore

        store = ReaderStore.open(url)
        store.pacer = Pacer(JOB_DUTY)
        try:
            if kind == "integrity":
                res: Any = store.check_integrity()
            else:
                from .export import export_tables

                res = export_tables(store, progress=_PipeProgress(conn))
            _checkpoint(store.engine)
        finally:
            store.close()
        if kind == "integrity":
            conn.send(("done", res.to_dict()))
            return
        with atomic_file(out) as tmp:
            export_zip(res, tmp)
        conn.send(("done", res.to_dict()))
    except Exception as exc:  # reported to the organiser, whatever it is
        conn.send(("failed", f"{type(exc).__name__}: {exc}"))


class OrganiserJobs:
    """The background jobs of the study at ``url`` whose folder is ``root``: one worker thread runs them in
    turn, each in a fresh process (``spawn``: nothing of the server's threads or connections is copied) at
    the lowest CPU priority (:func:`_lowest_priority`).

    Parameters
    ----------
    url : str
        The study database's SQLAlchemy URL (opened again by each job's process).
    root : Path
        The study folder; exports go to its ``exports/`` folder.
    study : str
        The study's name (the start of each export's file name).
    """

    def __init__(self, url: str, root: Path, study: str) -> None:
        self.url, self.folder = url, Path(root) / EXPORTS
        self.prefix = "".join(c if c.isalnum() or c in "-_." else "_" for c in study) or "study"
        self.jobs: dict[str, Job] = {}
        self._todo: deque[Job] = deque()
        self._lock = threading.Lock()
        self._wake = threading.Condition(self._lock)
        self._worker: threading.Thread | None = None
        self._proc: Any = None
        self._closed = False

    def start(self, kind: str) -> Job:
        """Queue a job of ``kind`` (:data:`JOB_KINDS`), or return the one of that kind already queued or
        running."""
        with self._lock:
            for job in self.jobs.values():
                if job.kind == kind and job.state in ("queued", "running"):
                    return job
            job = Job(uuid.uuid4().hex[:12], kind)
            self.jobs[job.id] = job
            finished = [j for j in self.jobs.values() if j.state in ("done", "failed")]
            for old in finished[: max(0, len(finished) - _KEPT)]:
                del self.jobs[old.id]
            self._todo.append(job)
            if self._worker is None:
                self._worker = threading.Thread(target=self._work, name="organiser-jobs", daemon=True)
                self._worker.start()
            self._wake.notify()
            return job

    def get(self, job_id: str) -> Job | None:
        with self._lock:
            return self.jobs.get(job_id)

    def latest(self, kind: str) -> Job | None:
        """The last finished job of ``kind`` (done or failed), or None."""
        with self._lock:
            ended = [j for j in self.jobs.values() if j.kind == kind and j.state in ("done", "failed")]
        return max(ended, key=lambda j: j.finished or "", default=None)

    def pending(self, kind: str) -> Job | None:
        """The job of ``kind`` queued or running, or None."""
        with self._lock:
            return next(
                (j for j in self.jobs.values() if j.kind == kind and j.state in ("queued", "running")), None
            )

    def path(self, job: Job) -> Path | None:
        """The export file of a done export job, when it is still there."""
        if job.file is None:
            return None
        p = self.folder / job.file
        return p if p.is_file() else None

    def close(self) -> None:
        """Stop the worker: the running job's process is ended (its temporary file removed), queued jobs
        are dropped."""
        with self._lock:
            self._closed = True
            self._todo.clear()
            self._wake.notify()
            proc = self._proc
        if proc is not None and proc.is_alive():
            proc.terminate()
        if self._worker is not None:
            self._worker.join(10)
        remove_killed_tmp(self.folder)

    def _work(self) -> None:
        while True:
            with self._lock:
                while not self._todo and not self._closed:
                    self._wake.wait()
                if self._closed:
                    return
                job = self._todo.popleft()
            self._one(job)

    def _one(self, job: Job) -> None:
        ctx = mp.get_context("spawn")
        here, there = ctx.Pipe(duplex=False)
        stamp = _dt.datetime.now(_dt.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
        name = f"{self.prefix}-export-{stamp}-{job.id}.zip" if job.kind == "export" else None
        outcome: tuple[Any, ...] = ("failed", "the job's process ended before it finished")
        try:
            remove_killed_tmp(self.folder)
            if name is not None:
                self.folder.mkdir(parents=True, exist_ok=True)
            proc = ctx.Process(
                target=_run,
                args=(job.kind, self.url, str(self.folder / (name or "-")), there),
                name=f"cxreval-{job.kind}",
                daemon=True,
            )
            with self._lock:
                if self._closed:
                    return
                job.state, job.started, self._proc = "running", _now(), proc
            proc.start()
            if proc.pid is not None:  # before it imports anything: a second of CPU otherwise
                _lowest_priority(proc.pid)
            there.close()
            while True:
                try:
                    msg = here.recv()
                except EOFError:  # the process ended
                    break
                if msg[0] == "progress":
                    job.done, job.total = int(msg[1] or 0), None if msg[2] is None else int(msg[2])
                else:
                    outcome = msg
            proc.join()
            if outcome[0] == "failed" and proc.exitcode:
                outcome = ("failed", f"{outcome[1]} (exit code {proc.exitcode})")
        except Exception as exc:  # a process that could not start: the job failed, the worker goes on
            outcome = ("failed", f"{type(exc).__name__}: {exc}")
        finally:
            here.close()
            remove_killed_tmp(self.folder)
        with self._lock:
            self._proc = None
            job.finished = _now()
            if outcome[0] == "done":
                job.state, job.result = "done", outcome[1]
                job.file = name
            else:
                job.state, job.error = "failed", str(outcome[1])
