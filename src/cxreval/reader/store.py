"""The reader study's store: create a study, add readers (tokens stored as SHA-256), validate and append
submissions (idempotent by client id; returns after commit), each reader's queue in a seeded order, and
the conflicts a resolver adjudicates.

Payloads, by task (``labels`` map finding -> state name):

* ``image``: ``{"labels": {...every finding...}, "boxes": [{"finding", "x_min", "y_min", "x_max", "y_max"}]}``
  (pixels of the original image, half-open, inside it); ``"unreadable": true`` instead of labels marks an
  image that cannot be read; a study with a ``rating`` adds ``"ratings": {...every finding: its confidence on
  the scale...}`` (without ``labels`` when ``rating.with_label`` is false); a study with ``sessions`` has one
  such task per session, named by it, whose items open per the washout (:mod:`cxreval.reader.mrmc`);
* ``report``: ``{"labels": {...every finding...}}`` (``not_mentioned`` allowed);
* ``iqa``: ``{"ratings": {criterion: int in the scale, ...every criterion...}}``;
* ``adjudication``: ``{"labels": {finding: state, ...}}`` for some of the study's conflicting findings, and
  ``"conflicts": {finding: {reader_a: state, reader_b: state}}`` (required), the pairs of states they resolve
  as the resolver's page showed them (409 for pairs that have changed since), and ``"seen": {finding: seq}``,
  the decision the page showed for a finding already decided (``null`` or absent: none). A decision on a
  finding another resolver has decided since the page was opened is refused (409), so the first stands
  until a resolver who has seen it decides again (:mod:`cxreval.reader.derived`).

Every task also takes ``"comment"`` (free text, at most :data:`MAX_COMMENT` characters) and ``"seconds"``
(time the reader spent on the item, 0 to 86400).
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import re
import secrets
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, NamedTuple, TypeVar

import pandas as pd

from ..exceptions import SchemaError
from ._order import assign_images
from ._queues import QueueReads
from .commit import GroupCommitter
from .conflicts import ConflictReads
from .db import (
    DERIVED_TABLES,
    SCHEMA_VERSION,
    Pacer,
    check_integrity,
    make_engine,
    metadata,
    require_sqlalchemy,
    tables,
)
from .derived import Deriver, replay
from .mrmc import SessionLocks
from .payloads import (
    PayloadChecks,
    Reader,
    SubmissionError,
    check_client_time,
)
from .study import StudySpec, check_name, study_items

__all__ = [
    "ReaderStore",
]

ROLES: tuple[str, ...] = ("reader", "resolver", "organiser")
"""Readers label and rate, resolvers adjudicate, organisers follow progress and download the export."""
AUTH_TTL = 5.0
_T = TypeVar("_T")
_ID_RE = re.compile(r"^[A-Za-z0-9_-]{8,64}$")
_SUBMISSION_COLUMNS = ("seq", "id", "name", "role", "task", "item", "payload", "client_time", "server_time")
"""The columns of the submission log (``name`` and ``role``: the reader's), as :meth:`ReaderStore.submissions`
and the export's ``audit.csv`` list them."""


def now() -> str:
    """The current UTC time, ISO 8601 with microseconds."""
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="microseconds")


def utc_now() -> _dt.datetime:
    """The current time, aware, in UTC: the default clock of a :class:`ReaderStore`."""
    return _dt.datetime.now(_dt.timezone.utc)


def hash_token(token: str) -> str:
    """SHA-256 hex of a token (tokens are 32 random bytes, so a fast hash suffices)."""
    return hashlib.sha256(token.encode()).hexdigest()


@dataclass(frozen=True)
class SubmitResult:
    """What :meth:`ReaderStore.submit` stored: ``status`` is ``'stored'`` or ``'duplicate'`` (a retry)."""

    id: str
    status: str
    seq: int
    server_time: str

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


def _unreachable(engine: Any, exc: Any) -> SchemaError:
    """One line naming the database (password hidden) and the driver's reason (its lines joined)."""
    reason = " ".join(str(getattr(exc, "orig", exc)).split())
    return SchemaError(
        f"url={engine.url.render_as_string(hide_password=True)!r}: cannot connect to the database "
        f"server ({reason}); check host, port, user and that the server is running."
    )


def _not_a_study_db(engine: Any, exc: Any) -> SchemaError:
    reason = " ".join(str(getattr(exc, "orig", exc)).split())
    return SchemaError(
        f"url={engine.url.render_as_string(hide_password=True)!r} cannot be used ({reason}); "
        "give a database made by `cxreval reader init` or a new file name."
    )


class CreatedStore(NamedTuple):
    """What :meth:`ReaderStore.create` returns: the store and ``{name: token}`` of the readers added."""

    store: ReaderStore
    tokens: dict[str, str]


class ReaderStore(PayloadChecks, ConflictReads, SessionLocks, QueueReads):
    """A study in a database (see the module docstring).

    Parameters
    ----------
    url_or_engine : str or sqlalchemy.Engine
        An SQLAlchemy URL (``sqlite:///study.db``, ``postgresql://...``) or an engine.

    Attributes
    ----------
    clock : callable
        ``clock() -> datetime`` (aware): the server time of every stored submission and of every washout
        decision (:mod:`cxreval.reader.mrmc`); :func:`utc_now` unless replaced (a test moves it on).
    """

    def __init__(self, url_or_engine: Any) -> None:
        self.sa = require_sqlalchemy()
        self.engine = make_engine(url_or_engine) if isinstance(url_or_engine, str) else url_or_engine
        self._reads = (
            self.engine
            if self.engine.dialect.name == "sqlite"  # no BEGIN before a read anyway
            else self.engine.execution_options(isolation_level="AUTOCOMMIT")
        )
        self.t = tables()
        self._spec: StudySpec | None = None
        self._items: dict[str, dict[str, dict[str, Any]]] | None = None
        self._writer: GroupCommitter | None = None
        self._auth_cache: dict[str, tuple[Reader, float]] = {}
        self._orders: dict[tuple[str, str], list[str]] = {}
        self._uid: str | None = None
        self._assigned: dict[str, set[str]] | None = None
        self._done: dict[tuple[int, str], set[str]] = {}
        self._flags: dict[tuple[int, str], tuple[dict[str, int], bytearray]] = {}
        self.clock: Callable[[], _dt.datetime] = utc_now
        self.pacer = Pacer()
        """Paces the database server's work for the long reads (export, integrity check): not by default;
        the organiser's background jobs keep it to half the time (:mod:`cxreval.reader._background`)."""

    def stamp(self) -> str:
        """The clock's time as a stored server time (UTC, ISO 8601 with microseconds)."""
        return self.clock().astimezone(_dt.timezone.utc).isoformat(timespec="microseconds")

    @classmethod
    def open(cls, url: str) -> ReaderStore:
        """Open an existing study database (an SQLite file that does not exist is not created).

        Raises
        ------
        SchemaError
            If the database holds no study.
        """
        sa = require_sqlalchemy()
        try:
            parsed = sa.engine.make_url(str(url))
        except Exception:  # make_engine names the problem
            parsed = None
        if parsed is not None and parsed.get_backend_name() == "sqlite" and parsed.database:
            file = parsed.database  # sqlite:///file:PATH?mode=ro&uri=true names PATH
            if parsed.query.get("uri") in ("true", "1") and file.startswith("file:"):
                file = file[5:].split("?", 1)[0]
            if not Path(file).is_file():
                raise SchemaError(
                    f"url={url!r}: the SQLite file {file} does not exist; run `cxreval reader init` first."
                )
        store = cls(url)
        _ = store.spec
        store._ensure_derived()
        return store

    def _ensure_derived(self) -> None:
        """Create and fill (from the log) the derived tables of a database made before they, or one of their
        columns, existed; a derived table lacking a column is dropped and rebuilt."""
        sa = self.sa
        insp = sa.inspect(self.engine)
        have = set(insp.get_table_names())
        stale = [
            n
            for n in DERIVED_TABLES
            if n in have
            and not {c.name for c in self.t[n].columns} <= {c["name"] for c in insp.get_columns(n)}
        ]
        if set(DERIVED_TABLES) <= have and not stale:
            return
        if stale:
            metadata().drop_all(self.engine, tables=[self.t[n] for n in stale])
        metadata().create_all(self.engine, tables=[self.t[n] for n in DERIVED_TABLES])
        with self.engine.begin() as conn:
            replay(conn, self.spec)
            self._event(conn, "derived_tables_built", None, {"tables": list(DERIVED_TABLES)})

    def check_writable(self) -> None:
        """Raise :class:`SchemaError` (one line: the database and the reason) unless a write transaction
        can be opened and written to; nothing is left behind (the transaction is rolled back)."""
        sa, meta = self.sa, self.t["meta"]
        try:
            with self.engine.connect() as conn:
                tx = conn.begin()
                try:
                    conn.execute(sa.insert(meta).values(key="write_check", value=now()))
                finally:
                    tx.rollback()
        except sa.exc.DBAPIError as exc:
            reason = " ".join(str(getattr(exc, "orig", exc)).split())
            raise SchemaError(
                f"url={self.engine.url.render_as_string(hide_password=True)!r} is not writable "
                f"({reason}); the server would refuse every submission. Fix the file's or folder's "
                "permissions (or the disk, or the database role), then start again."
            ) from exc

    def read(self, fn: Callable[[Any], _T]) -> _T:
        """``fn(conn)`` on one pooled connection, each statement its own snapshot (PostgreSQL: autocommit,
        one round trip a statement, no BEGIN and no ROLLBACK at check-in); run once more on a fresh
        connection when the pooled one had been cut (a database restart: connections are not pinged)."""
        for attempt in (0, 1):
            try:
                with self._reads.connect() as conn:
                    return fn(conn)
            except self.sa.exc.DBAPIError as exc:
                if attempt or not exc.connection_invalidated:
                    raise
        raise AssertionError("unreachable")

    # -- creation -----------------------------------------------------------------------------------
    @classmethod
    def create(cls, url: str, spec: StudySpec) -> CreatedStore:
        """Create the schema, store the study and its items, add its readers and resolvers.

        Returns the store and ``{name: token}`` of the readers added (tokens are shown once).

        Raises
        ------
        SchemaError
            If the database already holds a study, or the study's data are invalid.
        """
        items = study_items(spec)  # validate every file before touching the database
        store = cls(url)
        sa = store.sa
        try:
            insp = sa.inspect(store.engine)
        except sa.exc.OperationalError as exc:
            if store.engine.dialect.name != "sqlite":
                raise _unreachable(store.engine, exc) from exc
            raise _not_a_study_db(store.engine, exc) from exc
        except sa.exc.DatabaseError as exc:
            raise _not_a_study_db(store.engine, exc) from exc
        if insp.has_table("meta"):
            with store.engine.connect() as conn:
                row = conn.execute(
                    sa.select(store.t["meta"].c.value).where(store.t["meta"].c.key == "study")
                ).first()
            if row is not None:
                name = json.loads(row[0]).get("name")
                raise SchemaError(
                    f"The database {store.engine.url!r} already holds study {name!r}; use a new "
                    "database for a new study."
                )
        metadata().create_all(store.engine)
        with store.engine.begin() as conn:
            conn.execute(
                sa.insert(store.t["meta"]),
                [
                    {"key": "study", "value": json.dumps(spec.to_dict())},
                    {"key": "schema_version", "value": SCHEMA_VERSION},
                    {"key": "created_at", "value": now()},
                ],
            )
            if items:
                conn.execute(
                    sa.insert(store.t["items"]),
                    [
                        {"task": it.task, "key": it.key, "payload": json.dumps(dict(it.payload))}
                        for it in items
                    ],
                )
            store._event(conn, "init", None, {"study": spec.name, "n_items": len(items)})
        tokens = {
            name: store.add_reader(name, role=role)
            for names, role in ((spec.readers, "reader"), (spec.resolvers, "resolver"))
            for name in names
        }
        return CreatedStore(store, tokens)

    def _event(self, conn: Any, kind: str, reader: str | None, detail: Mapping[str, Any]) -> None:
        conn.execute(
            self.sa.insert(self.t["events"]).values(
                time=now(), kind=kind, reader=reader, detail=json.dumps(dict(detail))
            )
        )

    @property
    def spec(self) -> StudySpec:
        """The study stored in the database."""
        if self._spec is None:
            sa = self.sa
            try:
                with self.engine.connect() as conn:
                    row = conn.execute(
                        sa.select(self.t["meta"].c.value).where(self.t["meta"].c.key == "study")
                    ).first()
            except sa.exc.OperationalError as exc:
                if self.engine.dialect.name != "sqlite":
                    raise _unreachable(self.engine, exc) from exc
                raise SchemaError(
                    f"Cannot read a study from {self.engine.url!r}: {' '.join(str(exc.orig).split())}. "
                    "Run `cxreval reader init` first."
                ) from exc
            except sa.exc.ProgrammingError as exc:
                raise SchemaError(
                    f"The database {self.engine.url!r} holds no study; run `cxreval reader init`."
                ) from exc
            except sa.exc.DatabaseError as exc:  # e.g. a file that is not an SQLite database
                raise _not_a_study_db(self.engine, exc) from exc
            if row is None:
                raise SchemaError(
                    f"The database {self.engine.url!r} holds no study; run `cxreval reader init`."
                )
            self._spec = StudySpec.from_dict(json.loads(row[0]))
        return self._spec

    @property
    def study_uid(self) -> str:
        """An id of this study database (its name and creation time, hashed): the page keeps its offline
        queue per study and reader under it."""
        if self._uid is None:
            meta = self.t["meta"]
            with self.engine.connect() as conn:
                created = conn.execute(
                    self.sa.select(meta.c.value).where(meta.c.key == "created_at")
                ).scalar()
            self._uid = hashlib.sha256(f"{self.spec.name}\n{created}".encode()).hexdigest()[:16]
        return self._uid

    @property
    def items(self) -> dict[str, dict[str, dict[str, Any]]]:
        """``{task: {key: payload}}`` of the stored image, report and IQA items."""
        if self._items is None:
            out: dict[str, dict[str, dict[str, Any]]] = {t: {} for t in ("image", "report", "iqa")}
            with self.engine.connect() as conn:
                for task, key, payload in conn.execute(self.sa.select(self.t["items"])):
                    out.setdefault(task, {})[key] = json.loads(payload)
            self._items = out
        return self._items

    # -- readers ------------------------------------------------------------------------------------
    def add_reader(self, name: str, *, role: str = "reader", new_token: bool = False) -> str:
        """Add a reader (or a resolver) and return their token; ``new_token=True`` replaces the token of an
        existing reader (their old link stops working). Only the token's hash is stored."""
        sa, r = self.sa, self.t["readers"]
        check_name(name)
        if role not in ROLES:
            raise SchemaError(f"Unknown role {role!r}; expected one of {list(ROLES)}.")
        token = secrets.token_urlsafe(32)
        with self.engine.begin() as conn:
            row = conn.execute(sa.select(r.c.id, r.c.role).where(r.c.name == name)).first()
            if row is not None:
                if not new_token:
                    raise SchemaError(f"Reader {name!r} exists; pass new_token=True to replace their link.")
                if row[1] != role:
                    raise SchemaError(f"Reader {name!r} is a {row[1]}; a new token keeps the role.")
                conn.execute(sa.update(r).where(r.c.id == row[0]).values(token_hash=hash_token(token)))
                self._event(conn, "token_replaced", name, {"role": role})
            else:
                conn.execute(
                    sa.insert(r).values(name=name, role=role, token_hash=hash_token(token), created_at=now())
                )
                self._event(conn, "reader_added", name, {"role": role})
        return token

    def authenticate(self, token: str | None) -> Reader | None:
        """The reader whose token this is, or None. A valid token is remembered for :data:`AUTH_TTL`
        seconds, so a replaced token (``add-reader --new-token``) stops working within that time."""
        if not isinstance(token, str) or not (20 <= len(token) <= 128):
            return None
        h = hash_token(token)
        hit = self._auth_cache.get(h)
        if hit is not None and hit[1] > time.monotonic():
            return hit[0]
        r = self.t["readers"]
        row = self.read(
            lambda conn: conn.execute(
                self.sa.select(r.c.id, r.c.name, r.c.role).where(r.c.token_hash == h)
            ).first()
        )
        if row is None:
            return None
        reader = Reader(int(row[0]), str(row[1]), str(row[2]))
        if len(self._auth_cache) > 10000:
            self._auth_cache.clear()
        self._auth_cache[h] = (reader, time.monotonic() + AUTH_TTL)
        return reader

    def readers(self) -> pd.DataFrame:
        """``id, name, role, created_at`` of every reader."""
        r = self.t["readers"]
        with self.engine.connect() as conn:
            rows = conn.execute(
                self.sa.select(r.c.id, r.c.name, r.c.role, r.c.created_at).order_by(r.c.id)
            ).all()
        return pd.DataFrame(rows, columns=["id", "name", "role", "created_at"])

    def keys_of(self, reader: Reader, task: str) -> set[str] | dict[str, Any]:
        """The item keys of ``task`` the reader reads: with ``assignment: {per_image: k}`` the images
        assigned to them (readers added after ``init`` read none), otherwise every item."""
        items = self.items.get(task, {})
        if self.spec.kind(task) != "image" or not self.spec.per_image:
            return items
        if self._assigned is None:
            self._assigned = assign_images(
                sorted(items), self.spec.readers, per_image=self.spec.per_image, seed=self.spec.seed
            )
        return self._assigned.get(reader.name, set())

    def tasks_of(self, reader: Reader) -> tuple[str, ...]:
        """Tasks a reader does: resolvers adjudicate, readers do the rest, organisers none."""
        if reader.role == "organiser":
            return ()
        if reader.role == "resolver":
            return ("adjudication",) if "adjudication" in self.spec.tasks else ()
        return tuple(t for t in self.spec.tasks if t != "adjudication")

    # -- submissions --------------------------------------------------------------------------------
    def submit(
        self,
        reader: Reader,
        submission_id: str,
        task: str,
        item: str,
        body: Mapping[str, Any],
        *,
        client_time: str | None = None,
    ) -> SubmitResult:
        """Validate and append a submission; return once the transaction holding it (and the derived
        tables' update, :mod:`cxreval.reader.derived`) has committed (concurrent submissions share a
        transaction: :mod:`cxreval.reader.commit`).

        A second submission with the same id from the same reader with the same content is a retry and
        is answered ``'duplicate'`` without storing anything; the same id with other content or from another
        reader is refused (409). A database that cannot store it (read-only, disk full, server gone) is
        a :class:`SubmissionError` with status 503 and the database's reason: nothing is acknowledged.
        """
        if not isinstance(submission_id, str) or not _ID_RE.match(submission_id):
            raise SubmissionError("'id' must be 8-64 characters [A-Za-z0-9_-] (a client-generated UUID).")
        if client_time is not None:
            check_client_time(client_time)
        payload = self.validate(reader, task, item, body)
        row = {
            "id": submission_id,
            "reader_id": reader.id,
            "task": task,
            "item": item,
            "payload": json.dumps(payload, sort_keys=True),
            "client_time": client_time,
        }
        try:
            res = self._committer().append(row)
        except (
            self.sa.exc.OperationalError,
            self.sa.exc.InterfaceError,
            self.sa.exc.InternalError,
            OSError,
        ) as exc:
            reason = " ".join(str(getattr(exc, "orig", exc)).split())[:200]
            raise SubmissionError(
                f"The study database cannot store submissions now ({reason}); nothing was "
                "saved: your labels stay in this browser and are resent. Tell the study "
                "organiser.",
                503,
            ) from exc
        done = self._done.get((reader.id, task))
        if done is not None and task != "adjudication":
            done.add(item)
            flags = self._flags.get((reader.id, task))
            if flags is not None and item in flags[0]:
                flags[1][flags[0][item]] = ord("1")
        return SubmitResult(submission_id, res.status, res.seq, res.server_time)

    def _committer(self) -> GroupCommitter:
        if self._writer is None:
            self._writer = GroupCommitter(
                self.engine,
                self.t["submissions"],
                now=self.stamp,
                on_append=Deriver(self.spec),
                conflict=lambda sid: SubmissionError(
                    f"Submission id {sid!r} was already used for another submission.", 409
                ),
            )
        return self._writer

    def close(self) -> None:
        """Stop the writer thread and release the database connections."""
        if self._writer is not None:
            self._writer.close()
        self.engine.dispose()

    def submissions(self, *, reader_id: int | None = None, task: str | None = None) -> pd.DataFrame:
        """Every stored submission (``seq, id, reader, role, task, item, payload, client_time, server_time``),
        in commit order; optionally of one reader and/or task (the whole log: for audits, not for serving)."""
        q = self._log_query(reader_id=reader_id, task=task)
        with self.engine.connect() as conn:
            rows = conn.execute(q).all()
        return pd.DataFrame(
            rows,
            columns=["seq", "id", "reader", "role", "task", "item", "payload", "client_time", "server_time"],
        )

    def latest(
        self, *, reader_id: int | None = None, task: str | None = None
    ) -> dict[tuple[str, str, str], dict]:
        """``{(reader, task, item): payload}`` of the latest submission per reader, task and item (the
        ``latest`` table), in commit order."""
        q = self._log_query("latest", ("name", "task", "item", "payload"), reader_id=reader_id, task=task)
        with self.engine.connect() as conn:
            return {(n, t, i): json.loads(p) for n, t, i, p in conn.execute(q)}

    def _log_query(
        self,
        table: str = "submissions",
        columns: Sequence[str] = _SUBMISSION_COLUMNS,
        *,
        reader_id: int | None = None,
        task: str | None = None,
    ) -> Any:
        """A select of ``columns`` of ``table`` (``submissions`` or ``latest``; ``name`` and ``role`` are the
        reader's), in commit order, optionally of one reader and/or task; by default the submission log (the
        columns of :meth:`submissions` and of the export's ``audit.csv``)."""
        t, r = self.t[table], self.t["readers"]
        q = (
            self.sa.select(*(r.c[c] if c in ("name", "role") else t.c[c] for c in columns))
            .join(r, t.c.reader_id == r.c.id)
            .order_by(t.c.seq)
        )
        if reader_id is not None:
            q = q.where(t.c.reader_id == reader_id)
        if task is not None:
            q = q.where(t.c.task == task)
        return q

    def mine(self, reader: Reader, task: str, item: str) -> dict[str, Any] | None:
        """The reader's latest payload for one item, or None (one primary-key read)."""
        return self.read(lambda conn: self._mine(conn, reader, task, item))

    def _mine(self, conn: Any, reader: Reader, task: str, item: str) -> dict[str, Any] | None:
        lt = self.t["latest"]
        p = conn.execute(
            self.sa.select(lt.c.payload).where(
                lt.c.reader_id == reader.id, lt.c.task == task, lt.c.item == item
            )
        ).scalar()
        return None if p is None else json.loads(p)

    def check_integrity(self) -> Any:
        """See :func:`cxreval.reader.db.check_integrity`."""
        return check_integrity(self.engine, pacer=self.pacer)
