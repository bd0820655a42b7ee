"""The tables derived from the submission log, kept in step with it.

Every appended submission updates, in the same transaction:

* ``latest``: the reader's latest payload for (task, item), so that a reader's item costs one indexed read
  whatever the length of their history;
* ``progress``: per reader and task, the number of items in ``latest`` (adjudication aside: its progress is
  the conflicts'), raised by one when a submission is the reader's first of an item, the number of
  submissions and the last one's server time (what the organiser's status shows, without reading the log);
* ``conflicts``: when the submission is one of the two adjudicated readers' labels, the (study, finding)
  rows where the two latest labels disagree, with both states. A resolver's label applies to exactly one
  (study, finding, pair of states): when either reader changes their state the row is replaced and its
  resolution dropped (the adjudication stays in the log and the audit), so the study returns to the
  resolver's queue; when the readers come to agree the row goes. A resolver's label is applied only to a
  row that is undecided, decided by the same resolver, or decided by the submission the resolver saw
  (the adjudication's ``seen``: the seq of the decision its page showed); a decision on a row another
  resolver has decided since is refused (409) and rolled back with its submission, so the first stands.

:func:`replay` recomputes both tables from the log in commit order (the same rules, in memory), for a
database made before the tables existed and as the reference the incremental path is tested against.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple

from .db import insert_or_replace, tables
from .mrmc import washout_refusal
from .payloads import SubmissionError
from .study import StudySpec

__all__: list[str] = []


@dataclass(frozen=True)
class Adjudicated:
    """Which readers' labels of which task a study's conflicts compare.

    Attributes
    ----------
    task : str
        ``'image'`` (or the first session, in a study with sessions) or ``'report'``.
    section : str or None
        The report section (items ``<section>:<study_id>``), None for images.
    readers : (str, str)
    """

    task: str
    section: str | None
    readers: tuple[str, str]

    @classmethod
    def of(cls, spec: StudySpec) -> Adjudicated | None:
        if "adjudication" not in spec.tasks:
            return None
        a, b = spec.adjudication_readers
        if spec.adjudication_task == "image":  # with sessions: the first session's labels
            return cls(spec.image_tasks[0], None, (a, b))
        return cls("report", spec.adjudication_task[7:], (a, b))

    def study_of(self, task: str, item: str) -> str | None:
        """The study id an item of ``task`` is adjudicated as, or None when it is not adjudicated."""
        if task != self.task:
            return None
        if self.section is None:
            return item
        prefix = self.section + ":"
        return item[len(prefix) :] if item.startswith(prefix) else None

    def item_of(self, study_id: str) -> str:
        return study_id if self.section is None else f"{self.section}:{study_id}"


def label_diff(labels_a: Mapping[str, str], labels_b: Mapping[str, str]) -> dict[str, tuple[str, str]]:
    """``{finding: (state_a, state_b)}`` of the findings both label and disagree on."""
    return {f: (s, labels_b[f]) for f, s in labels_a.items() if f in labels_b and labels_b[f] != s}


def merge_conflicts(
    current: Mapping[str, dict[str, Any]], diff: Mapping[str, tuple[str, str]]
) -> dict[str, dict[str, Any]]:
    """The conflict rows of a study after its readers' labels changed: a finding whose pair of states is
    unchanged keeps its row (and resolution); a changed or new pair gets a row without resolution."""
    out: dict[str, dict[str, Any]] = {}
    for f, (sa, sb) in diff.items():
        row = current.get(f)
        if row is not None and (row["state_a"], row["state_b"]) == (sa, sb):
            out[f] = row
        else:
            out[f] = {
                "state_a": sa,
                "state_b": sb,
                "resolution": None,
                "resolved_by": None,
                "resolved_seq": None,
            }
    return out


def _resolutions(payload: Mapping[str, Any], readers: tuple[str, str]) -> Iterable[tuple[str, str, str, str]]:
    """``(finding, label, state_a, state_b)`` of an adjudication payload (labels + the pairs they resolve)."""
    pairs = payload.get("conflicts", {})
    for f, s in payload.get("labels", {}).items():
        pair = pairs.get(f)
        if pair is not None:
            yield f, s, pair[readers[0]], pair[readers[1]]


class Deriver:
    """Updates ``latest``, ``progress`` and ``conflicts`` for one appended submission, inside its transaction.

    Parameters
    ----------
    spec : StudySpec
    """

    def __init__(self, spec: StudySpec) -> None:
        import sqlalchemy as sa

        self.sa, self.t, self.adj = sa, tables(), Adjudicated.of(spec)
        self._ids: tuple[int, int] | None = None
        self.sessions, self.washout_days = spec.session_names, spec.washout_days

    def _reader_ids(self, conn: Any) -> tuple[int, int] | None:
        if self._ids is None and self.adj is not None:
            r = self.t["readers"]
            got = dict(
                conn.execute(self.sa.select(r.c.name, r.c.id).where(r.c.name.in_(self.adj.readers))).all()
            )
            if len(got) == 2:  # both readers added (a study may add them after init)
                self._ids = (int(got[self.adj.readers[0]]), int(got[self.adj.readers[1]]))
        return self._ids

    def __call__(self, conn: Any, row: Mapping[str, Any], seq: int, stamp: str) -> None:
        lt, pt = self.t["latest"], self.t["progress"]
        if row["task"] in self.sessions:
            self._check_washout(conn, row, stamp)
        key = {"reader_id": row["reader_id"], "task": row["task"], "item": row["item"]}
        up = _insert(conn)(lt).values(**key, seq=seq, payload=row["payload"], server_time=stamp, n=1)
        n = conn.execute(
            up.on_conflict_do_update(  # one statement: inserted (n = 1) or replaced (n + 1)
                index_elements=["reader_id", "task", "item"],
                set_={
                    "seq": up.excluded.seq,
                    "payload": up.excluded.payload,
                    "server_time": up.excluded.server_time,
                    "n": lt.c.n + 1,
                },
            ).returning(lt.c.n)
        ).scalar_one()
        first = int(n == 1 and row["task"] != "adjudication")  # the reader's first label of the item
        insert_or_replace(
            conn,
            pt,
            {
                "reader_id": row["reader_id"],
                "task": row["task"],
                "n_done": first,
                "n_submissions": 1,
                "last": stamp,
            },
            ("reader_id", "task"),
            update={"n_done": pt.c.n_done + first, "n_submissions": pt.c.n_submissions + 1, "last": stamp},
        )
        if self.adj is None:
            return
        if row["task"] == "adjudication":
            self._resolve(conn, row, seq)
            return
        sid = self.adj.study_of(row["task"], row["item"])
        ids = self._reader_ids(conn) if sid is not None else None
        if ids is not None and row["reader_id"] in ids:
            self._recompute(conn, sid, row, ids)  # type: ignore[arg-type]

    def _check_washout(self, conn: Any, row: Mapping[str, Any], stamp: str) -> None:
        """Refuse (403, rolling the submission back) a reading of a session's item that is not open at the
        batch's server time ``stamp`` (:func:`cxreval.reader.mrmc.washout_refusal`): read from the reader's
        latest readings of the case in the other sessions, inside the transaction that would store it."""
        sa, lt = self.sa, self.t["latest"]
        others = [s for s in self.sessions if s != row["task"]]
        readings = {
            str(t): str(when)
            for t, when in conn.execute(
                sa.select(lt.c.task, lt.c.server_time).where(
                    lt.c.reader_id == row["reader_id"], lt.c.task.in_(others), lt.c.item == row["item"]
                )
            )
        }
        _opens, why = washout_refusal(
            self.sessions, row["task"], readings, stamp, washout_days=self.washout_days
        )
        if why is not None:
            raise SubmissionError(
                f"Item {row['item']!r} of session {row['task']!r} is not open to this reader: {why}; "
                "nothing was saved.",
                403,
            )

    def _recompute(self, conn: Any, sid: str, row: Mapping[str, Any], ids: tuple[int, int]) -> None:
        sa, lt, ct = self.sa, self.t["latest"], self.t["conflicts"]
        other = ids[1] if row["reader_id"] == ids[0] else ids[0]
        theirs = conn.execute(
            sa.select(lt.c.payload).where(
                lt.c.reader_id == other, lt.c.task == row["task"], lt.c.item == row["item"]
            )
        ).scalar()
        got = (
            {row["reader_id"]: row["payload"]}
            if theirs is None
            else {row["reader_id"]: row["payload"], other: theirs}
        )
        diff = (
            label_diff(json.loads(got[ids[0]])["labels"], json.loads(got[ids[1]])["labels"])
            if len(got) == 2
            else {}
        )
        current = {
            r.finding: dict(r._mapping) for r in conn.execute(sa.select(ct).where(ct.c.study_id == sid))
        }
        new = merge_conflicts(current, diff)
        gone = [f for f in current if f not in new or new[f] is not current[f]]
        if gone:
            conn.execute(sa.delete(ct).where(ct.c.study_id == sid, ct.c.finding.in_(gone)))
        add = [
            {
                "study_id": sid,
                "finding": f,
                **{k: v for k, v in r.items() if k not in ("study_id", "finding")},
            }
            for f, r in new.items()
            if f not in current or r is not current[f]
        ]
        if add:
            conn.execute(sa.insert(ct), add)

    def _resolve(self, conn: Any, row: Mapping[str, Any], seq: int) -> None:
        """Apply a resolver's labels to the conflict rows of exactly the pairs of states they saw, and only
        where the row is undecided, decided by this resolver, or decided by the submission whose seq the
        resolver saw (``seen``); otherwise raise 409 (the transaction, and the submission, are rolled back)."""
        sa, ct = self.sa, self.t["conflicts"]
        payload = json.loads(row["payload"])
        seen = payload.get("seen", {})
        for f, s, sa_, sb_ in _resolutions(payload, self.adj.readers):  # type: ignore[union-attr]
            ok = sa.or_(ct.c.resolved_seq.is_(None), ct.c.resolved_by == row["reader_id"])
            if seen.get(f) is not None:
                ok = sa.or_(ok, ct.c.resolved_seq == int(seen[f]))
            done = conn.execute(
                sa.update(ct)
                .where(
                    ct.c.study_id == row["item"],
                    ct.c.finding == f,
                    ct.c.state_a == sa_,
                    ct.c.state_b == sb_,
                    ok,
                )
                .values(resolution=s, resolved_by=row["reader_id"], resolved_seq=seq)
                .returning(ct.c.finding)
            ).first()
            if done is None:
                raise SubmissionError(
                    f"Study {row['item']!r}, {f}: decided by another resolver since this page "
                    "was opened, or the readers' labels changed; nothing was saved. Reload the "
                    "study (press L) to see the current decision.",
                    409,
                )


def _insert(conn: Any) -> Any:
    from sqlalchemy.dialects import postgresql, sqlite

    return sqlite.insert if conn.dialect.name == "sqlite" else postgresql.insert


class ReplayCounts(NamedTuple):
    """What :func:`replay` returns: the row counts of ``latest`` and ``conflicts``."""

    latest: int
    conflicts: int


def replay(conn: Any, spec: StudySpec) -> ReplayCounts:
    """Recompute ``latest``, ``progress`` and ``conflicts`` from the submission log in commit order (inside
    the caller's transaction); return the row counts of ``latest`` and ``conflicts``."""
    import sqlalchemy as sa

    t = tables()
    s, lt, ct, r = t["submissions"], t["latest"], t["conflicts"], t["readers"]
    adj = Adjudicated.of(spec)
    names = dict(conn.execute(sa.select(r.c.id, r.c.name)).all())
    latest: dict[tuple[int, str, str], dict[str, Any]] = {}
    labels: dict[tuple[str, str], dict[str, str]] = {}  # (reader name, study id) of the adjudicated task
    conflicts: dict[str, dict[str, dict[str, Any]]] = {}
    rows = conn.execute(
        sa.select(s.c.seq, s.c.reader_id, s.c.task, s.c.item, s.c.payload, s.c.server_time)
        .order_by(s.c.seq)
        .execution_options(stream_results=True, yield_per=5000)
    )
    activity: dict[tuple[int, str], list[Any]] = {}  # (reader, task): [n_done, n_submissions, last]
    for seq, reader_id, task, item, payload, stamp in rows:
        prev = latest.get((reader_id, task, item))
        latest[(reader_id, task, item)] = {
            "reader_id": reader_id,
            "task": task,
            "item": item,
            "seq": seq,
            "payload": payload,
            "server_time": stamp,
            "n": 1 if prev is None else prev["n"] + 1,
        }
        act = activity.setdefault((reader_id, task), [0, 0, stamp])
        act[0] += int(prev is None and task != "adjudication")
        act[1] += 1
        act[2] = stamp
        if adj is None:
            continue
        if task == "adjudication":
            cur = conflicts.get(item, {})
            for f, lab, sa_, sb_ in _resolutions(json.loads(payload), adj.readers):
                c = cur.get(f)
                if c is not None and (c["state_a"], c["state_b"]) == (sa_, sb_):
                    cur[f] = {**c, "resolution": lab, "resolved_by": reader_id, "resolved_seq": seq}
            continue
        sid = adj.study_of(task, item)
        name = names.get(reader_id)
        if sid is None or name not in adj.readers:
            continue
        labels[(name, sid)] = json.loads(payload)["labels"]
        la, lb = labels.get((adj.readers[0], sid)), labels.get((adj.readers[1], sid))
        diff = label_diff(la, lb) if la is not None and lb is not None else {}
        merged = merge_conflicts(conflicts.get(sid, {}), diff)
        if merged:
            conflicts[sid] = merged
        else:
            conflicts.pop(sid, None)
    conn.execute(sa.delete(lt))
    conn.execute(sa.delete(ct))
    conn.execute(sa.delete(t["progress"]))
    batch = list(latest.values())
    for k in range(0, len(batch), 5000):
        conn.execute(sa.insert(lt), batch[k : k + 5000])
    if activity:
        conn.execute(
            sa.insert(t["progress"]),
            [
                {"reader_id": r_, "task": t_, "n_done": a[0], "n_submissions": a[1], "last": a[2]}
                for (r_, t_), a in activity.items()
            ],
        )
    crow = [{"study_id": sid, "finding": f, **c} for sid, fs in conflicts.items() for f, c in fs.items()]
    for k in range(0, len(crow), 5000):
        conn.execute(sa.insert(ct), crow[k : k + 5000])
    return ReplayCounts(len(batch), len(crow))
