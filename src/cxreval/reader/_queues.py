"""Each reader's queue (the items of a task in their seeded order, which are done), progress and the study's
status, read by :class:`~cxreval.reader.store.ReaderStore`."""

from __future__ import annotations

from typing import Any, NamedTuple

import pandas as pd

from ._order import priority_order, reader_order
from .payloads import Reader, SubmissionError


class QueueFlags(NamedTuple):
    """What :meth:`ReaderStore.queue_flags` returns: the item keys in their seeded order and one ``'0'``/``'1'``
    a key, ``'1'`` where done."""

    keys: list[str]
    flags: str


__all__: list[str] = []


class QueueReads:
    """The queue and progress reads of :class:`~cxreval.reader.store.ReaderStore` (which gives ``sa``, ``t``,
    ``spec``, ``items``, ``read``, ``keys_of``, ``tasks_of``, ``_open_conflicts`` and the caches ``_orders``, ``_done``,
    ``_flags``)."""

    sa: Any
    t: Any
    spec: Any
    items: Any
    read: Any
    keys_of: Any
    tasks_of: Any
    _open_conflicts: Any
    _orders: Any
    _done: Any
    _flags: Any

    def _order(self, reader: Reader, task: str, keys: list[str] | None = None) -> list[str]:
        if keys is not None:  # adjudication: the studies in conflict change
            return reader_order(keys, seed=self.spec.seed, reader=reader.name, task=task)
        hit = self._orders.get((reader.name, task))
        if hit is None:
            keys = sorted(self.keys_of(reader, task))
            if self.spec.order == "priority" and self.spec.kind(task) == "image":
                items = self.items.get(task, {})
                hit = priority_order(keys, {k: items[k]["priority"] for k in keys if "priority" in items[k]})
            else:
                hit = reader_order(keys, seed=self.spec.seed, reader=reader.name, task=task)
            self._orders[(reader.name, task)] = hit
        return hit

    def _n_done_of(self, conn: Any, reader: Reader) -> dict[str, int]:
        """``{task: items labelled}`` of the reader (their ``progress`` rows: one primary-key read)."""
        pt = self.t["progress"]
        return {
            str(t): int(n)
            for t, n in conn.execute(
                self.sa.select(pt.c.task, pt.c.n_done).where(pt.c.reader_id == reader.id)
            )
        }

    def _done_items(self, conn: Any, reader: Reader, task: str) -> set[str]:
        """The items of ``task`` the reader has labelled: kept in memory (updated by :meth:`submit`) and
        checked against the database's count (``progress``), so a write by another process is seen (the
        latest table only grows, so an equal count means equal sets)."""
        sa, lt = self.sa, self.t["latest"]
        n = self._n_done_of(conn, reader).get(task, 0)
        hit = self._done.get((reader.id, task))
        if hit is None or len(hit) != n:
            hit = set(
                conn.execute(sa.select(lt.c.item).where(lt.c.reader_id == reader.id, lt.c.task == task))
                .scalars()
                .all()
            )
            self._done[(reader.id, task)] = hit
            self._flags.pop((reader.id, task), None)
        return hit

    def queue_flags(self, reader: Reader, task: str) -> QueueFlags:
        """The reader's item keys of ``task`` in their seeded order and a string of ``'0'``/``'1'``, one per
        key, ``'1'`` where done. A study to adjudicate is done when every conflicting finding has a
        resolver's label for its current pair of states (by any resolver: the study is adjudicated once)."""
        if task not in self.tasks_of(reader):
            raise SubmissionError(f"Reader {reader.name!r} ({reader.role}) does not do task {task!r}.", 403)
        if task == "adjudication":
            state = self.read(self._open_conflicts)
            keys = self._order(reader, task, list(state))
            return QueueFlags(keys, "".join("1" if state[k] else "0" for k in keys))
        done = self.read(lambda conn: self._done_items(conn, reader, task))
        keys = self._order(reader, task)
        flags = self._flags.get((reader.id, task))
        if flags is None:  # one flag a key, kept up to date by submit()
            flags = self._flags[(reader.id, task)] = (
                {k: i for i, k in enumerate(keys)},
                bytearray(49 if k in done else 48 for k in keys),
            )  # '1', '0'
        return QueueFlags(keys, flags[1].decode())

    def queue(self, reader: Reader, task: str) -> list[dict[str, Any]]:
        """:meth:`queue_flags` as ``[{key, done}]``."""
        keys, flags = self.queue_flags(reader, task)
        return [{"key": k, "done": f == "1"} for k, f in zip(keys, flags)]

    def progress(self, reader: Reader) -> list[dict[str, Any]]:
        """``[{task, n_items, n_done}]`` of a reader's tasks (their ``progress`` rows; a resolver's from the
        conflicts)."""
        tasks = self.tasks_of(reader)
        if "adjudication" in tasks:
            state = self.read(self._open_conflicts)
            return [{"task": "adjudication", "n_items": len(state), "n_done": sum(state.values())}]
        n_done = self.read(lambda conn: self._n_done_of(conn, reader)) if tasks else {}
        return [
            {"task": t, "n_items": len(self.keys_of(reader, t)), "n_done": n_done.get(t, 0)} for t in tasks
        ]

    def status(self, *, rows: bool = False) -> Any:
        """Progress per reader and task: ``reader, role, task, n_items, n_done, n_submissions, last``, read
        from the derived ``progress`` and ``conflicts`` tables (three reads whatever the length of the log),
        as a DataFrame; with ``rows=True`` as ``(list of row dicts, studies in conflict, studies adjudicated)``
        (what the server answers, without a DataFrame)."""
        sa, pt, r, ct = self.sa, self.t["progress"], self.t["readers"], self.t["conflicts"]

        def reads(conn: Any) -> Any:
            readers = conn.execute(sa.select(r.c.id, r.c.name, r.c.role).order_by(r.c.id)).all()
            prog = {
                (int(rid), str(t)): (int(d), int(n), str(last))
                for rid, t, d, n, last in conn.execute(
                    sa.select(pt.c.reader_id, pt.c.task, pt.c.n_done, pt.c.n_submissions, pt.c.last)
                )
            }
            if "adjudication" not in self.spec.tasks:
                return readers, prog, (0, 0)
            per = (
                sa.select(
                    ct.c.study_id,
                    sa.func.sum(sa.case((ct.c.resolution.is_(None), 1), else_=0)).label("n_open"),
                )
                .group_by(ct.c.study_id)
                .subquery()
            )
            n, k = conn.execute(
                sa.select(sa.func.count(), sa.func.sum(sa.case((per.c.n_open == 0, 1), else_=0))).select_from(
                    per
                )
            ).one()  # one row, not one per study
            return readers, prog, (int(n), int(k or 0))

        readers, prog, (n_conflicts, n_resolved) = self.read(reads)
        out = []
        for rid, name, role in readers:
            reader = Reader(int(rid), str(name), str(role))
            for task in self.tasks_of(reader):
                n_done, n_sub, last = prog.get((reader.id, task), (0, 0, ""))
                if task == "adjudication":
                    n_items, n_done = n_conflicts, n_resolved
                else:
                    n_items = len(self.keys_of(reader, task))
                out.append(
                    {
                        "reader": reader.name,
                        "role": reader.role,
                        "task": task,
                        "n_items": n_items,
                        "n_done": n_done,
                        "n_submissions": n_sub,
                        "last": last,
                    }
                )
        if rows:
            return out, n_conflicts, n_resolved
        return pd.DataFrame(
            out, columns=["reader", "role", "task", "n_items", "n_done", "n_submissions", "last"]
        )
