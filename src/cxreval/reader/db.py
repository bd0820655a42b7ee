"""The reader study's database: schema, engine (SQLite in WAL mode with full sync, or PostgreSQL) and
integrity check.

Submissions are append-only: a row is never updated or deleted; a reader's label for an item is their
latest submission for it. Every submission carries a client-generated id, unique in the table, so a
retried request is stored once.

Three tables are derived from that log, updated in the transaction that appends each submission, so that
no request reads a reader's whole history: ``latest`` (the latest submission per reader, task and item,
and ``n``, the reader's number of submissions of it), ``progress`` (per reader and task, the number of
items in ``latest``, of submissions and the last one's server time: a reader's progress is one primary-key
read, the organiser's status one read of this table) and ``conflicts`` (per study and finding where the two adjudicated readers disagree: both
states and the resolver's label for exactly that pair of states, if any).
:func:`cxreval.reader.derived.replay` recomputes them from the log (a database made before one of them
existed gets them on first open).
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from ..exceptions import CxrevalError, InvalidParameterError

__all__ = [
    "DERIVED_TABLES",
    "make_engine",
]

DEFAULT_URL = "sqlite:///cxreval-reader.db"
SCHEMA_VERSION = "2"
DERIVED_TABLES: tuple[str, ...] = ("latest", "progress", "conflicts")
"""Tables derived from the submission log (never the source of truth; rebuilt from it when a database made
before one of them, or one of their columns, existed is opened)."""


def require_sqlalchemy() -> Any:
    """Import SQLAlchemy or raise a clear error naming the extra to install."""
    try:
        import sqlalchemy
    except ImportError as exc:  # pragma: no cover - depends on the optional extra
        raise CxrevalError(
            "The reader study needs the 'reader' extra: pip install 'cxreval[reader]'."
        ) from exc
    return sqlalchemy


def _build() -> tuple[Any, dict[str, Any]]:
    sa = require_sqlalchemy()
    md = sa.MetaData()
    columns = {
        "meta": (
            sa.Column("key", sa.String(64), primary_key=True),
            sa.Column("value", sa.Text, nullable=False),
        ),
        "readers": (
            sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
            sa.Column("name", sa.String(64), nullable=False, unique=True),
            sa.Column("role", sa.String(16), nullable=False),
            sa.Column("token_hash", sa.String(64), nullable=False, unique=True),
            sa.Column("created_at", sa.String(40), nullable=False),
        ),
        "items": (
            sa.Column("task", sa.String(16), primary_key=True),
            sa.Column("key", sa.String(512), primary_key=True),
            sa.Column("payload", sa.Text, nullable=False),
        ),
        "submissions": (
            sa.Column("seq", sa.Integer, primary_key=True, autoincrement=True),
            sa.Column("id", sa.String(64), nullable=False, unique=True),
            sa.Column("reader_id", sa.Integer, sa.ForeignKey("readers.id"), nullable=False),
            sa.Column("task", sa.String(16), nullable=False),
            sa.Column("item", sa.String(512), nullable=False),
            sa.Column("payload", sa.Text, nullable=False),
            sa.Column("client_time", sa.String(40)),
            sa.Column("server_time", sa.String(40), nullable=False),
            sa.Index("ix_submissions_reader_task", "reader_id", "task"),
        ),
        "latest": (
            sa.Column("reader_id", sa.Integer, sa.ForeignKey("readers.id"), primary_key=True),
            sa.Column("task", sa.String(16), primary_key=True),
            sa.Column("item", sa.String(512), primary_key=True),
            sa.Column("seq", sa.Integer, nullable=False),
            sa.Column("payload", sa.Text, nullable=False),
            sa.Column("server_time", sa.String(40), nullable=False),
            sa.Column("n", sa.Integer, nullable=False),
        ),
        "progress": (
            sa.Column("reader_id", sa.Integer, sa.ForeignKey("readers.id"), primary_key=True),
            sa.Column("task", sa.String(16), primary_key=True),
            sa.Column("n_done", sa.Integer, nullable=False),
            sa.Column("n_submissions", sa.Integer, nullable=False),
            sa.Column("last", sa.String(40), nullable=False),
        ),
        "conflicts": (
            sa.Column("study_id", sa.String(512), primary_key=True),
            sa.Column("finding", sa.String(64), primary_key=True),
            sa.Column("state_a", sa.String(16), nullable=False),
            sa.Column("state_b", sa.String(16), nullable=False),
            sa.Column("resolution", sa.String(16)),
            sa.Column("resolved_by", sa.Integer, sa.ForeignKey("readers.id")),
            sa.Column("resolved_seq", sa.Integer),
        ),
        "events": (
            sa.Column("seq", sa.Integer, primary_key=True, autoincrement=True),
            sa.Column("time", sa.String(40), nullable=False),
            sa.Column("kind", sa.String(32), nullable=False),
            sa.Column("reader", sa.String(64)),
            sa.Column("detail", sa.Text, nullable=False),
        ),
    }
    t = {name: sa.Table(name, md, *cols) for name, cols in columns.items()}
    return md, t


_CACHE: dict[str, Any] = {}


def metadata() -> Any:
    """The SQLAlchemy ``MetaData`` of the schema."""
    if "md" not in _CACHE:
        _CACHE["md"], _CACHE["tables"] = _build()
    return _CACHE["md"]


def tables() -> dict[str, Any]:
    """The schema's tables by name: meta, readers, items, submissions, latest, progress, conflicts, events."""
    metadata()
    return _CACHE["tables"]


def insert_or_replace(
    conn: Any,
    table: Any,
    row: dict[str, Any],
    keys: tuple[str, ...],
    *,
    update: dict[str, Any] | None = None,
    omit: tuple[str, ...] = (),
) -> None:
    """Insert ``row`` (less the ``omit`` keys), or update the row with the same primary key ``keys`` with the
    row's other values or ``update`` (SQLite and PostgreSQL ``INSERT ... ON CONFLICT DO UPDATE``)."""
    from sqlalchemy.dialects import postgresql, sqlite

    name = conn.dialect.name
    insert = sqlite.insert if name == "sqlite" else postgresql.insert
    row = {k: v for k, v in row.items() if k not in omit}
    stmt = insert(table).values(**row)
    conn.execute(
        stmt.on_conflict_do_update(
            index_elements=list(keys),
            set_=update if update is not None else {k: v for k, v in row.items() if k not in keys},
        )
    )


def insert_new(conn: Any, table: Any, row: dict[str, Any], *, returning: Any = None) -> Any:
    """``INSERT ... ON CONFLICT DO NOTHING RETURNING`` of ``row``: the ``returning`` column's value (by
    default the first primary-key column's) when it was inserted, None when a row with the same unique key
    exists. One statement (``RETURNING``, not the row count: psycopg's is -1 here)."""
    from sqlalchemy.dialects import postgresql, sqlite

    insert = sqlite.insert if conn.dialect.name == "sqlite" else postgresql.insert
    col = returning if returning is not None else list(table.primary_key.columns)[0]
    return conn.execute(insert(table).values(**row).on_conflict_do_nothing().returning(col)).scalar()


def _normalise_url(url: str) -> str:
    if url.startswith("postgresql://") or url.startswith("postgres://"):
        return "postgresql+psycopg://" + url.split("://", 1)[1]
    return url


def make_engine(url: str = DEFAULT_URL, *, pool_size: int = 16) -> Any:
    """An engine for ``url``: SQLite gets ``journal_mode=WAL``, ``synchronous=FULL``, foreign keys and a
    30 s busy timeout on every connection; ``postgresql://`` URLs use psycopg 3. Pooled connections are not
    pinged at checkout (a round trip per request): a connection the server has cut fails its statement,
    SQLAlchemy then discards the pool, and the caller retries (:meth:`cxreval.reader.store.ReaderStore.read`,
    the group commit's retry).

    Raises
    ------
    InvalidParameterError
        If the URL is not an SQLite or PostgreSQL URL, or its driver is missing.
    """
    sa = require_sqlalchemy()
    url = _normalise_url(str(url))
    try:
        parsed = sa.engine.make_url(url)
    except Exception as exc:
        raise InvalidParameterError(
            f"url={url!r} is not an SQLAlchemy URL (e.g. sqlite:///study.db or "
            f"postgresql://user@127.0.0.1/db): {exc}"
        ) from exc
    backend = parsed.get_backend_name()
    if backend == "sqlite":
        if parsed.database in (None, "", ":memory:"):
            raise InvalidParameterError(f"url={url!r}: the reader study needs an SQLite file, not memory.")
        engine = sa.create_engine(
            url,
            connect_args={"timeout": 30, "check_same_thread": False},
            pool_size=pool_size,
            max_overflow=pool_size,
        )

        @sa.event.listens_for(engine, "connect")
        def _pragmas(dbapi_conn: Any, _record: Any) -> None:  # pragma: no cover - exercised via engine use
            cur = dbapi_conn.cursor()
            cur.execute("PRAGMA journal_mode=WAL")
            cur.execute("PRAGMA synchronous=FULL")
            cur.execute("PRAGMA foreign_keys=ON")
            cur.execute("PRAGMA busy_timeout=30000")
            cur.close()

        return engine
    if backend == "postgresql":
        try:
            return sa.create_engine(url, pool_size=pool_size, max_overflow=pool_size)
        except ImportError as exc:
            raise InvalidParameterError(
                f"url={url!r} needs psycopg: pip install 'cxreval[reader]' 'psycopg[binary]'."
            ) from exc
    raise InvalidParameterError(f"url={url!r}: only sqlite:/// and postgresql:// URLs are supported.")


@dataclass(frozen=True)
class IntegrityResult:
    """Outcome of :func:`check_integrity`.

    Attributes
    ----------
    ok : bool
    problems : tuple of str
        Empty when ``ok``.
    n_submissions : int
    """

    ok: bool
    problems: tuple[str, ...]
    n_submissions: int

    def to_dict(self) -> dict[str, object]:
        return {"ok": self.ok, "problems": list(self.problems), "n_submissions": self.n_submissions}


SNAPSHOT_CHUNK_ROWS = 2000
"""Rows a long read (an export, the integrity check) takes from the database at a time."""


class Pacer:
    """Keeps the database server's work for a long read to at most ``duty`` of the time: :meth:`rest`,
    called after each chunk, sleeps ``1 / duty - 1`` times the seconds the chunk took to arrive (the
    server's process working for it, on this machine or another, at the server's priority: no priority of
    the reading process reaches it). ``duty`` 1 (the default): no pause.

    Raises
    ------
    InvalidParameterError
        If ``duty`` is not in (0, 1].
    """

    def __init__(self, duty: float = 1.0) -> None:
        if not 0 < duty <= 1:
            raise InvalidParameterError(f"duty={duty!r}: expected a fraction of the time in (0, 1].")
        self.duty = float(duty)

    def rest(self, waited: float) -> None:
        """Sleep ``1 / duty - 1`` times ``waited`` seconds (the server's work on the last chunk)."""
        if self.duty < 1:
            time.sleep(waited * (1 / self.duty - 1))


def read_snapshot(engine: Any) -> Any:
    """A connection in one read-only transaction that sees the database as it was when it began (its first
    read), whatever is committed meanwhile: PostgreSQL's ``REPEATABLE READ READ ONLY``; on SQLite an explicit
    ``BEGIN`` (Python's sqlite3 begins a transaction only before a write, so each read would otherwise see
    the database as it is then). Close it with ``rollback()`` and ``close()``."""
    conn = engine.connect()
    if engine.dialect.name == "postgresql":
        conn = conn.execution_options(isolation_level="REPEATABLE READ", postgresql_readonly=True)
    conn.begin()
    if engine.dialect.name == "sqlite":
        conn.exec_driver_sql("BEGIN")
    return conn


def paced_chunks(
    conn: Any, query: Any, *, rows: int = SNAPSHOT_CHUNK_ROWS, pacer: Pacer | None = None
) -> Iterator[list[Any]]:
    """The rows of ``query`` on ``conn`` (in a transaction: :func:`read_snapshot`), in lists of at most
    ``rows``, read through a server-side cursor one chunk at a time. With a ``pacer``, on a database server
    (PostgreSQL) it rests (:meth:`Pacer.rest`) before asking for the next chunk: the server's process
    serving the read works in short bursts, idle between them. SQLite works in the reading process itself,
    at that process's priority: no rest."""
    result = conn.execution_options(stream_results=True, yield_per=rows).execute(query)
    server = conn.dialect.name != "sqlite"
    while True:
        t0 = time.perf_counter()
        chunk = result.fetchmany(rows)
        took = time.perf_counter() - t0
        if not chunk:
            return
        yield chunk
        if pacer is not None and server:
            pacer.rest(took)


def check_integrity(engine: Any, *, pacer: Pacer | None = None) -> IntegrityResult:
    """The database's own check (SQLite ``PRAGMA integrity_check``) plus the study's invariants: unique
    submission ids, every submission's reader known, every payload valid JSON.

    Read in one read-only snapshot (:func:`read_snapshot`), the log in chunks (:func:`paced_chunks`, paced
    by ``pacer``: by sequence number for the readers and payloads, by id along its unique index for
    duplicated ids, each compared with the one before): the database server sorts and joins nothing of the
    whole log."""
    sa = require_sqlalchemy()
    t = tables()
    problems: list[str] = []
    s, r = t["submissions"], t["readers"]
    conn = read_snapshot(engine)
    try:
        if engine.dialect.name == "sqlite":
            rows = [r[0] for r in conn.exec_driver_sql("PRAGMA integrity_check").fetchall()]
            if rows != ["ok"]:
                problems.append(f"sqlite integrity_check: {rows[:5]}")
            fk = conn.exec_driver_sql("PRAGMA foreign_key_check").fetchall()
            if fk:
                problems.append(f"sqlite foreign_key_check: {len(fk)} violation(s)")
        known = {int(i) for i in conn.execute(sa.select(r.c.id)).scalars()}
        n = orphans = 0
        not_json: int | None = None
        for chunk in paced_chunks(
            conn, sa.select(s.c.seq, s.c.reader_id, s.c.payload).order_by(s.c.seq), pacer=pacer
        ):
            n += len(chunk)
            orphans += sum(rid not in known for _seq, rid, _p in chunk)
            for seq, _rid, payload in chunk if not_json is None else ():
                try:
                    json.loads(payload)
                except ValueError:
                    not_json = int(seq)
                    break
        repeated, last = 0, None
        for chunk in paced_chunks(conn, sa.select(s.c.id).order_by(s.c.id), pacer=pacer):
            for (sid,) in chunk:
                repeated += sid == last
                last = sid
    finally:
        conn.rollback()
        conn.close()
    if repeated:
        problems.append(f"{repeated} duplicated submission id(s)")
    if orphans:
        problems.append(f"{orphans} submission(s) of unknown readers")
    if not_json is not None:
        problems.append(f"submission seq {not_json}: payload is not JSON")
    return IntegrityResult(not problems, tuple(problems), int(n))
