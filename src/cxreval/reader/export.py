"""Export a reader study into cxreval's own formats, streamed from one consistent read of the database.

* ``labels.csv``: the long label table (``study_id, patient_id, finding, source, state``) read by
  :func:`cxreval.labels.read_labels`, sorted by source, study and finding; one source per reader and task:
  ``img_<reader>`` (``img_<session>_<reader>`` in a study with sessions), ``rep_<section>_<reader>``, and ``conflict_resolved`` (the adjudicated readers' label
  where they agree, the resolver's where they conflict, for the pair of states it resolved; conflicts not
  yet resolved, and resolutions of pairs of states the readers have since changed, are left out and counted);
* ``boxes.csv`` (the box schema with sources, :data:`cxreval.schema.SOURCED_BOX_COLUMNS`:
  ``study_id, finding, source, x_min, y_min, x_max, y_max``), read by ``cxreval localize --boxes``, and, per
  image reader, ``boxes/img_<reader>.csv`` in the ChestX-ray14 ``BBox_List_2017.csv`` layout;
* ``iqa_ratings.csv`` (``image, reference, rater, criterion, rating`` + the pairs file's hidden columns) and,
  per criterion, ``iqa_ratings_<criterion>.csv`` (``image, rater, rating``) for ``cxreval iqa agree``
  (``image`` is the pairs file's ``test`` path, as ``cxreval iqa score`` names it);
* ``ratings.csv`` (a study with a ``rating``, :mod:`cxreval.reader.mrmc`): the long table of an MRMC ROC
  analysis, one row per reader, modality, study and finding, :data:`RATING_COLUMNS` = ``reader, modality,
  study_id, patient_id, finding, rating, scale, seconds`` (``modality``: the session, or ``image`` in a study
  without sessions; ``patient_id``: the study's when it has a patients file, else the study id; ``scale``:
  ``five_point`` or ``probability``; ``seconds``: the reader's time on the image, blank when not sent),
  sorted by modality (in session order), reader, study and finding (in the study's order); a study
  without a rating writes no such file, and its other files are the same as before ratings existed;
* ``notes.csv``: per reader and item, ``unreadable`` (the reader marked the image unreadable), the reader's
  ``comment`` and ``seconds`` spent on it;
* ``audit.csv``: every submission (append-only, in commit order) with server and client times, and
  ``events.csv`` (study created, readers added, tokens replaced).

Every cell is written as RFC 4180 says: a cell holding a comma, a double quote, a carriage return or a line
feed is quoted (quotes doubled), so a bare CR inside a comment cannot end a row. No text cell can start a
formula in a spreadsheet, whichever separator it splits the rows with (comma, semicolon or tab) and whether
or not it trims spaces and quotes (:data:`CELL_RULE`, also written into the export's ``README.md``): a
``'`` is put before every ``=``, ``+``, ``-``, ``@``, tab or CR that starts a text cell or follows a comma,
a semicolon, a tab, a CR or an LF (spaces and double quotes in between), as OWASP's "CSV injection" advice
says, so a study id ``-12`` is exported as ``'-12`` and a comment ``ok;=HYPERLINK(..)`` as
``ok;'=HYPERLINK(..)``. The JSON columns (``audit.csv``'s ``payload``, ``events.csv``'s ``detail``) write
those characters inside their strings as JSON escapes (``\\u003d`` for ``=``) instead, so that they still
decode to exactly what was stored. Numbers are written as numbers.
"""

from __future__ import annotations

import io
import json
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..labels._long import LABEL_COLUMNS
from ..outputs._folder import path_inside
from ..progress import NoProgress, Progress
from ..schema._boxes import SOURCED_BOX_COLUMNS
from .db import paced_chunks, read_snapshot
from .derived import Adjudicated
from .store import ReaderStore

__all__ = [
    "StudyExport",
]

FORMULA_PREFIXES: tuple[str, ...] = ("=", "+", "-", "@", "\t", "\r")
"""First characters that make a spreadsheet read a cell as a formula (:data:`CELL_RULE`)."""
_NIH_HEADER = "Image Index,Finding Label,Bbox [x,y,w,h],,,\n"
RATING_COLUMNS: tuple[str, ...] = (
    "reader",
    "modality",
    "study_id",
    "patient_id",
    "finding",
    "rating",
    "scale",
    "seconds",
)
"""The columns of ``ratings.csv``: the reader-by-modality-by-case long table an MRMC analysis reads."""


CELL_RULE = """\
No cell of these CSV files starts a formula in a spreadsheet, whatever separator it splits the rows with
(comma, semicolon or tab, in any locale) and whether or not it trims spaces and quotes:

* in every text cell, a single quote (') is put before every =, +, -, @, tab or carriage return that starts
  the cell or follows a comma, a semicolon, a tab, a carriage return or a line feed, with only spaces and
  double quotes in between (so the study id -12 is written '-12, and the comment ok;=HYPERLINK(...) is
  written ok;'=HYPERLINK(...)); remove that quote to get the text as the reader typed it;
* in the JSON columns (payload of audit.csv, detail of events.csv) those four characters are written, inside
  JSON strings, as the JSON escapes \\u003d, \\u002b, \\u002d and \\u0040 instead, so that every payload
  still decodes to exactly what the server stored;
* numbers are written as numbers (none of them negative);
* a cell holding a comma, a double quote, a carriage return or a line feed is quoted ("), its quotes doubled
  (RFC 4180).
"""
"""The rule that keeps spreadsheets from running exported text as formulas (the export's ``README.md``)."""

_TRIGGERS = "=+\\-@\t\r"
_CELL_STARTS = re.compile(f'((?:^|[,;\\t\\r\\n])(?:[^\\S\\t\\r]|")*)(?=[{_TRIGGERS}])')
"""Where a cell may start under any of the separators (after a comma, a semicolon, a tab, a CR or an LF, or
at the start, less spaces and double quotes a spreadsheet may trim) with a formula character."""
_JSON_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')
_JSON_ESCAPES = {ord(c): f"\\u{ord(c):04x}" for c in "=+-@"}
_QUOTED = frozenset(',"\r\n')


def safe_cell(value: object) -> object:
    """``value`` with ``'`` put before every ``=``, ``+``, ``-``, ``@``, tab or CR that starts the text or
    follows a comma, semicolon, tab, CR or LF (spaces and double quotes in between): no cell starts a formula
    whichever separator splits it (:data:`CELL_RULE`); None is ``''``, numbers are kept."""
    if not isinstance(value, str):
        return "" if value is None else value
    return _CELL_STARTS.sub("\\1'", value)


def safe_json(text: str | None) -> str:
    """The JSON text ``text`` with ``=``, ``+``, ``-`` and ``@`` inside its strings written as JSON escapes
    where a spreadsheet could read them as a formula's start: it decodes to the same value."""
    if not text:
        return ""
    if _CELL_STARTS.search(text) is None:
        return text
    return _JSON_STRING.sub(lambda m: m.group(0).translate(_JSON_ESCAPES), text)


def csv_line(values: Iterable[object]) -> str:
    """One CSV row (``\\n``-terminated): a cell holding a comma, a double quote, a CR or an LF quoted, its
    quotes doubled (the :mod:`csv` module leaves a bare CR unquoted); None is an empty cell."""
    out = []
    for v in values:
        s = "" if v is None else str(v)
        out.append('"' + s.replace('"', '""') + '"' if not _QUOTED.isdisjoint(s) else s)
    return ",".join(out) + "\n"


class _Table:
    """A CSV text built row by row (:func:`csv_line`), every text cell through :func:`safe_cell`."""

    def __init__(self, name: str, header: Iterable[str] | None, *, raw_header: str = "") -> None:
        self.name = name
        self.fh = io.StringIO(newline="")
        if raw_header:
            self.fh.write(raw_header)
        if header is not None:
            self.fh.write(csv_line([safe_cell(h) for h in header]))
        self.n = 0

    def row(self, values: Iterable[object]) -> None:
        self.fh.write(csv_line([safe_cell(c) if isinstance(c, str) or c is None else c for c in values]))
        self.n += 1

    def escaped(self, rows: list[tuple[object, ...]]) -> None:
        """Write rows whose text cells the caller has already passed through :func:`safe_cell`."""
        self.fh.write("".join(csv_line(r) for r in rows))
        self.n += len(rows)


@dataclass(frozen=True)
class StudyExport:
    """The export of a study (:func:`export_tables`, :func:`export_study`): every CSV file's text, and the counts.

    Attributes
    ----------
    texts : dict of str to str
        ``{file name inside the export folder: CSV text}`` (``boxes/img_<reader>.csv`` in a subfolder), in
        the order they are written, and last ``README.md`` (the files and :data:`CELL_RULE`).
    sources : tuple of str
        The label sources in ``labels.csv``.
    n_labels, n_boxes, n_ratings, n_notes, n_submissions : int
        Rows of labels.csv, boxes.csv, iqa_ratings.csv, notes.csv and audit.csv.
    n_unresolved : int
        Conflicting (study, finding) pairs without a resolver's label for their current pair of states
        (left out of ``conflict_resolved``).
    study : str
        The study's name.
    n_finding_ratings : int or None
        Rows of ``ratings.csv`` (None: the study asks for no rating, and writes no such file).
    """

    texts: Mapping[str, str]
    sources: tuple[str, ...]
    n_labels: int
    n_boxes: int
    n_ratings: int
    n_notes: int
    n_submissions: int
    n_unresolved: int
    study: str = ""
    n_finding_ratings: int | None = None

    def to_dict(self) -> dict[str, object]:
        out: dict[str, object] = {
            "n_labels": self.n_labels,
            "sources": list(self.sources),
            "n_boxes": self.n_boxes,
            "n_ratings": self.n_ratings,
            "n_notes": self.n_notes,
            "n_submissions": self.n_submissions,
            "n_unresolved": self.n_unresolved,
        }
        if self.n_finding_ratings is not None:
            out["n_finding_ratings"] = self.n_finding_ratings
        return out

    def save(self, folder: str | Path) -> list[Path]:
        """Write every file (UTF-8, rows ended by ``\\n``) into ``folder`` (created if missing); the paths."""
        d = Path(folder)
        out = []
        for name, text in self.texts.items():
            path = path_inside(d, name, what="export file name")
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(text.encode("utf-8"))
            out.append(path)
        return out


def _sources(conn: Any, store: ReaderStore, names: dict[int, str]) -> list[tuple[str, int, str, str | None]]:
    """``(source, reader_id, task, section)`` of every reader and task with labels, sorted by source (from
    ``progress``: a reader's items in ``latest`` per task, one small table)."""
    sa, pt = store.sa, store.t["progress"]
    out: list[tuple[str, int, str, str | None]] = []
    images = store.spec.image_tasks
    for rid, task in conn.execute(
        sa.select(pt.c.reader_id, pt.c.task).where(pt.c.task.in_((*images, "report")), pt.c.n_done > 0)
    ):
        if task == "image":
            out.append((f"img_{names[rid]}", rid, task, None))
        elif task in images:
            out.append((f"img_{task}_{names[rid]}", rid, task, None))
        else:
            out += [(f"rep_{sec}_{names[rid]}", rid, task, sec) for sec in store.spec.sections]
    return sorted(out)


def _payloads(
    conn: Any, store: ReaderStore, reader_id: int, task: str, section: str | None
) -> Iterator[tuple[str, dict[str, Any]]]:
    """``(item, payload)`` of one reader's latest labels of a task (and section), sorted by item."""
    sa, lt = store.sa, store.t["latest"]
    q = sa.select(lt.c.item, lt.c.payload).where(lt.c.reader_id == reader_id, lt.c.task == task)
    if section is not None:
        q = q.where(lt.c.item.startswith(section + ":", autoescape=True))
    rows = [tuple(r) for chunk in paced_chunks(conn, q, pacer=store.pacer) for r in chunk]
    rows.sort(key=lambda r: r[0])
    for item, payload in rows:
        yield item, json.loads(payload)


def _conflict_resolved(
    conn: Any, store: ReaderStore, adj: Adjudicated, names: dict[int, str], labels: _Table
) -> int:
    sa, ct = store.sa, store.t["conflicts"]
    ids = {n: i for i, n in names.items()}
    if not all(r in ids for r in adj.readers):
        return 0
    final = {
        (sid, f): s
        for sid, f, s in conn.execute(
            sa.select(ct.c.study_id, ct.c.finding, ct.c.resolution).where(ct.c.resolution.is_not(None))
        )
    }
    a = dict(_payloads(conn, store, ids[adj.readers[0]], adj.task, adj.section))
    b = dict(_payloads(conn, store, ids[adj.readers[1]], adj.task, adj.section))
    meta = store.items[adj.task]
    order = {f: k for k, f in enumerate(store.spec.findings)}
    rows = []
    unresolved = 0
    for item, pa in a.items():
        pb = b.get(item)
        if pb is None:
            continue
        sid = adj.study_of(adj.task, item)
        for f in sorted(pa["labels"], key=order.__getitem__):
            if f not in pb["labels"]:
                continue
            sa_, sb_ = pa["labels"][f], pb["labels"][f]
            state = sa_ if sa_ == sb_ else final.get((sid, f))
            if state is None:
                unresolved += 1
                continue
            rows.append((sid, meta[item]["patient_id"], order[f], f, state))
    for sid, pid, _k, f, state in sorted(rows):
        labels.row((sid, pid, f, "conflict_resolved", state))
    return unresolved


def export_tables(store: ReaderStore, *, progress: Progress | None = None) -> StudyExport:
    """Every export table of ``store``, from the latest submission per reader, task and item, read in one
    read transaction (a consistent snapshot while readers keep working).

    ``progress``: one task, its total the rows read (latest labels and audit entries), advanced as they
    are written."""
    spec, items = store.spec, store.items
    sa, t = store.sa, store.t
    order = {f: k for k, f in enumerate(spec.findings)}
    text = {f: safe_cell(f) for f in spec.findings}
    adj = Adjudicated.of(spec)
    tables: list[_Table] = []

    def table(name: str, header: Iterable[str] | None, **kw: Any) -> _Table:
        tables.append(_Table(name, header, **kw))
        return tables[-1]

    conn = read_snapshot(store.engine)
    try:
        pt = t["progress"]
        labelled = sa.case((pt.c.task.in_((*spec.image_tasks, "report")), pt.c.n_done), else_=0)
        total = int(conn.execute(sa.select(sa.func.sum(pt.c.n_submissions + labelled))).scalar() or 0)
        bar = progress if progress is not None else NoProgress()
        step = bar.add("export", total)
        names = {int(i): str(n) for i, n in conn.execute(sa.select(t["readers"].c.id, t["readers"].c.name))}
        labels = table("labels.csv", LABEL_COLUMNS)
        boxes = table("boxes.csv", SOURCED_BOX_COLUMNS)
        notes = table("notes.csv", ("task", "item", "study_id", "reader", "unreadable", "comment", "seconds"))
        rated: list[tuple[Any, ...]] = []
        sources: list[str] = []
        n_unresolved = 0
        plan = _sources(conn, store, names)
        if adj is not None:
            plan.append(("conflict_resolved", -1, "", None))
            plan.sort()
        for src, rid, task, section in plan:
            if src == "conflict_resolved":
                before = labels.n
                n_unresolved = _conflict_resolved(conn, store, adj, names, labels)  # type: ignore[arg-type]
                if labels.n > before:
                    sources.append(src)
                continue
            per_reader = None
            before = labels.n
            src_e = safe_cell(src)
            n_read = 0
            for item, payload in _payloads(conn, store, rid, task, section):
                n_read += 1
                meta = items[task][item]
                sid = meta["study_id"]
                sid_e, pid_e = safe_cell(sid), safe_cell(meta["patient_id"])
                lab = payload["labels"]
                labels.escaped(
                    [(sid_e, pid_e, text[f], src_e, lab[f]) for f in sorted(lab, key=order.__getitem__)]
                )
                for b in payload.get("boxes", []):
                    if per_reader is None:
                        per_reader = table(f"boxes/{src}.csv", None, raw_header=_NIH_HEADER)
                    boxes.row((sid, b["finding"], src, b["x_min"], b["y_min"], b["x_max"], b["y_max"]))
                    per_reader.row(
                        (
                            sid,
                            b["finding"],
                            f"{b['x_min']:g}",
                            f"{b['y_min']:g}",
                            f"{b['x_max'] - b['x_min']:g}",
                            f"{b['y_max'] - b['y_min']:g}",
                        )
                    )
                for f, v in payload.get("ratings", {}).items() if task in spec.image_tasks else ():
                    rated.append(
                        (task, names[rid], sid, order[f], meta["patient_id"], f, v, payload.get("seconds"))
                    )
                if "seconds" in payload or payload.get("comment") or payload.get("unreadable"):
                    notes.row(
                        (
                            task,
                            item,
                            sid,
                            names[rid],
                            int(bool(payload.get("unreadable"))),
                            payload.get("comment", ""),
                            payload.get("seconds", ""),
                        )
                    )
            if labels.n > before:
                sources.append(src)
            bar.advance(step, n_read)
        n_finding_ratings = None if spec.rating is None else _finding_ratings(rated, spec, table)
        n_ratings = _iqa(conn, store, names, table, notes)
        n_sub = _audit(conn, store, table, lambda n: bar.advance(step, n))
        ev = t["events"]
        events = table("events.csv", ("seq", "time", "kind", "reader", "detail"))
        for row in conn.execute(
            sa.select(ev.c.seq, ev.c.time, ev.c.kind, ev.c.reader, ev.c.detail).order_by(ev.c.seq)
        ):
            events.row((*row[:4], safe_json(row[4])))
        bar.done(step)
    finally:
        conn.rollback()
        conn.close()
    return StudyExport(
        {**{tb.name: tb.fh.getvalue() for tb in tables}, "README.md": _readme(spec.name, tables)},
        tuple(sources),
        labels.n,
        boxes.n,
        n_ratings,
        notes.n,
        n_sub,
        n_unresolved,
        spec.name,
        n_finding_ratings,
    )


def _readme(study: str, tables: list[_Table]) -> str:
    """The export's ``README.md``: its files and :data:`CELL_RULE`."""
    files = "".join(f"* `{tb.name}`: {tb.n} rows\n" for tb in tables)
    return (
        f"# The export of reader study {study!r}\n\nMade by `cxreval reader export` (UTF-8, one row a line, "
        "described in `cxreval.reader.export`):\n\n"
        f"{files}\n## Opening these files in a spreadsheet\n\n{CELL_RULE}"
    )


def _finding_ratings(rated: list[tuple[Any, ...]], spec: Any, table: Any) -> int:
    """Write ``ratings.csv`` from ``(task, reader, study_id, finding index, patient_id, finding, rating,
    seconds)`` rows, sorted by modality (session order), reader, study and finding."""
    session = {t: k for k, t in enumerate(spec.image_tasks)}
    out = table("ratings.csv", RATING_COLUMNS)
    for task, reader, sid, _k, pid, f, v, seconds in sorted(rated, key=lambda r: (session[r[0]], *r[1:4])):
        out.row((reader, task, sid, pid, f, v, spec.rating.scale, seconds))
    return int(out.n)


def _iqa(conn: Any, store: ReaderStore, names: dict[int, str], table: Any, notes: _Table) -> int:
    sa, lt = store.sa, store.t["latest"]
    meta = store.items.get("iqa", {})
    hidden = sorted({k for m in meta.values() for k in m["hidden"]})
    rows = []
    for rid, item, payload in conn.execute(
        sa.select(lt.c.reader_id, lt.c.item, lt.c.payload).where(lt.c.task == "iqa")
    ):
        m = meta[item]
        p = json.loads(payload)
        if "seconds" in p or p.get("comment"):
            notes.row(("iqa", item, m["test"], names[rid], 0, p.get("comment", ""), p.get("seconds", "")))
        for c, v in p["ratings"].items():
            rows.append(
                (c, m["test"], names[rid], m["reference"], v, *(m["hidden"].get(k, "") for k in hidden))
            )
    rows.sort(key=lambda r: r[:3])
    full = table("iqa_ratings.csv", ("image", "reference", "rater", "criterion", "rating", *hidden))
    per: dict[str, Any] = {}
    for c, image, rater, ref, v, *rest in rows:
        full.row((image, ref, rater, c, v, *rest))
        if c not in per:
            per[c] = table(f"iqa_ratings_{c}.csv", ("image", "rater", "rating"))
        per[c].row((image, rater, v))
    return len(rows)


def _audit(conn: Any, store: ReaderStore, table: Any, advance: Any) -> int:
    """Write ``audit.csv`` (every submission, in commit order, read in chunks: :func:`paced_chunks`);
    ``advance(n)`` after each chunk of ``n`` rows."""
    audit = table(
        "audit.csv",
        ("seq", "submission_id", "reader", "role", "task", "item", "payload", "client_time", "server_time"),
    )
    for chunk in paced_chunks(conn, store._log_query(), pacer=store.pacer):
        for row in chunk:
            audit.row((*row[:6], safe_json(row[6]), *row[7:]))
        advance(len(chunk))
    return int(audit.n)
