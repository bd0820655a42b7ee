"""What a request costs the database, whatever the length of the history: the statements each serving path
runs (counted by SQLite's trace callback) and that each one is a search of an index, never a scan of a
table (SQLite's ``EXPLAIN QUERY PLAN``). The one scan allowed is the resolver's list of the studies in
conflict, which is the answer itself."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
import sqlalchemy as sa

from cxreval.reader.store import ReaderStore
from cxreval.reader.study import load_study

from .conftest import FINDINGS, decision

_QUIET = ("BEGIN", "COMMIT", "PRAGMA", "ROLLBACK")


@pytest.fixture
def traced(study_factory, tmp_path: Path):
    study = study_factory(
        tmp_path / "s",
        readers=("alice", "bob", "dave"),
        resolvers=("rita",),
        extra="adjudication:\n  readers: [alice, bob]\n",
    )
    url = f"sqlite:///{tmp_path / 'q.db'}"
    store, tokens = ReaderStore.create(url, load_study(study))
    store.close()
    store = ReaderStore.open(url)
    log: list[str] = []
    sa.event.listen(store.engine, "connect", lambda dbapi, _rec: dbapi.set_trace_callback(log.append))
    store.engine.pool.dispose()
    who = {n: store.authenticate(tokens[n]) for n in tokens}
    for k, reader in enumerate(("alice", "bob", "dave")):  # a history: every image labelled by everyone
        for j, item in enumerate(sorted(store.items["image"])):
            labels = {f: "negative" for f in FINDINGS}
            if reader == "bob" and j % 2:
                labels["Nodule"] = "positive"
            store.submit(who[reader], f"h-{k}-{j:04d}-x", "image", item, {"labels": labels, "boxes": []})
    yield store, who, tokens, log, tmp_path / "q.db"
    store.close()


def _run(log: list[str], fn) -> list[str]:
    log.clear()
    fn()
    return [s for s in log if not s.lstrip().upper().startswith(_QUIET)]


def _scans(db: Path, statements: list[str]) -> list[str]:
    """The plan lines of ``statements`` that scan a whole table (SQLite words them ``SCAN <table>``)."""
    con = sqlite3.connect(db)
    try:
        return [
            f"{row[3]} in {s!r}"
            for s in statements
            for row in con.execute("EXPLAIN QUERY PLAN " + s)
            if row[3].startswith("SCAN")
        ]
    finally:
        con.close()


def test_each_reader_request_is_one_indexed_statement_and_a_submission_a_few(traced) -> None:
    store, who, tokens, log, db = traced
    alice, dave = who["alice"], who["dave"]
    store.queue_flags(dave, "image")  # the first call per reader loads the done flags (one more read)
    costs = {
        "me": _run(log, lambda: store.progress(dave)),
        "queue": _run(log, lambda: store.queue_flags(dave, "image")),
        "item": _run(log, lambda: store.mine(dave, "image", "a1")),
        "auth (once per token and 5 s)": _run(
            log, lambda: (store._auth_cache.clear(), store.authenticate(tokens["dave"]))
        ),
        "submission": _run(
            log,
            lambda: store.submit(
                dave, "d-new-0001", "image", "a1", {"labels": {f: "positive" for f in FINDINGS}, "boxes": []}
            ),
        ),
        "adjudicated reader's submission": _run(
            log,
            lambda: store.submit(
                alice,
                "a-new-0001",
                "image",
                "a2",
                {"labels": {f: "uncertain" for f in FINDINGS}, "boxes": []},
            ),
        ),
    }
    assert {k: len(v) for k, v in costs.items()} == {
        "me": 1,
        "queue": 1,
        "item": 1,
        "auth (once per token and 5 s)": 1,
        "submission": 3,  # the log row, the latest row, its update (a relabelled item)
        # + the other reader's label, the conflicts read, one delete, one insert per finding now in conflict (3)
        "adjudicated reader's submission": 9,
    }
    # a first label of an item raises the reader's progress count in the same transaction
    store.submit(
        who["rita"], "r-adj-0001", "adjudication", "a2", decision(store, "a2", {"Effusion": "negative"})
    )
    assert store.progress(dave) == [
        {"task": t, "n_items": len(store.keys_of(dave, t)), "n_done": 4 if t == "image" else 0}
        for t in store.tasks_of(dave)
    ]
    assert _scans(db, [s for v in costs.values() for s in v]) == []
    # progress is read, not counted (a count over the reader's items grows with their history)
    assert not [s for k in ("me", "queue") for s in costs[k] if "count(" in s.lower()]


def test_the_resolvers_requests_search_indexes_except_the_list_of_conflicts(traced) -> None:
    store, who, _tokens, log, db = traced
    rita = who["rita"]
    queue = _run(log, lambda: store.queue_flags(rita, "adjudication"))
    item = _run(log, lambda: store.adjudication_view(rita, "a2"))
    body = decision(store, "a2", {"Nodule": "negative"})
    submission = _run(log, lambda: store.submit(rita, "r-adj-0002", "adjudication", "a2", body))
    assert (len(queue), len(item)) == (1, 3)
    assert (
        len(submission) <= 5
    )  # the conflicts read (validation), the log row, the latest row, the resolution
    assert _scans(db, item + submission) == []
    assert [s.split(" USING ")[0].split(" in ")[0] for s in _scans(db, queue)] == ["SCAN conflicts"]
