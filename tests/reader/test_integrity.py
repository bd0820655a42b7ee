"""The integrity check and the chunked reads of the organiser's long jobs: the check finds each broken
invariant (a payload that is not JSON, a submission of an unknown reader, a duplicated submission id) on
both backends; a chunked read returns every row once, in order, in chunks no larger than asked, resting
between chunks on a database server when paced, and a pacer rests in proportion to the server's work."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from cxreval.exceptions import InvalidParameterError
from cxreval.reader import db
from cxreval.reader.store import ReaderStore
from cxreval.reader.study import load_study

from .conftest import FINDINGS


def _store_with_log(study_file: Path, url: str, n: int) -> ReaderStore:
    store, tokens = ReaderStore.create(url, load_study(study_file))
    who = store.authenticate(tokens["alice"])
    keys = sorted(store.items["image"])
    body = {"labels": {f: "negative" for f in FINDINGS}, "boxes": []}
    for k in range(n):
        store.submit(who, f"alice-{k:04d}", "image", keys[k % len(keys)], body)
    return store


def _break(store: ReaderStore, url: str, statements: list[str]) -> None:
    """Run ``statements`` with the database's own guards off (foreign keys; on PostgreSQL the unique id)."""
    if store.engine.dialect.name == "sqlite":
        con = sqlite3.connect(url.removeprefix("sqlite:///"))  # foreign keys off: sqlite3's default
        with con:
            for sql in statements:
                con.execute(sql)
        con.close()
        return
    with store.engine.begin() as conn:
        conn.exec_driver_sql("ALTER TABLE submissions DROP CONSTRAINT submissions_reader_id_fkey")
        conn.exec_driver_sql("ALTER TABLE submissions DROP CONSTRAINT submissions_id_key")
        for sql in statements:
            conn.exec_driver_sql(sql)


def test_the_integrity_check_finds_each_broken_invariant(study_file: Path, db_url: str) -> None:
    store = _store_with_log(study_file, db_url, 30)
    assert store.check_integrity().ok
    broken = [
        "UPDATE submissions SET payload = '{\"labels\": ' WHERE seq = 7",
        "UPDATE submissions SET reader_id = 999 WHERE seq IN (3, 11)",
    ]
    if store.engine.dialect.name == "postgresql":  # SQLite's unique index cannot be dropped
        broken.append("UPDATE submissions SET id = 'alice-0000' WHERE seq IN (5, 9)")
    _break(store, db_url, broken)
    got = store.check_integrity()
    assert not got.ok and got.n_submissions == 30
    assert "submission seq 7: payload is not JSON" in got.problems
    assert "2 submission(s) of unknown readers" in got.problems
    if store.engine.dialect.name == "postgresql":
        assert "2 duplicated submission id(s)" in got.problems
    else:
        assert any(p.startswith("sqlite foreign_key_check: 2 violation") for p in got.problems)
    store.close()


def test_a_chunked_read_returns_every_row_once_and_rests_on_a_server_when_paced(
    study_file: Path, db_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = _store_with_log(study_file, db_url, 23)
    slept: list[float] = []
    monkeypatch.setattr(db.time, "sleep", slept.append)
    s = store.t["submissions"]
    query = store.sa.select(s.c.seq, s.c.id).order_by(s.c.seq)
    got = {}
    for name, pacer in (("unpaced", None), ("paced", db.Pacer(0.5))):
        conn = db.read_snapshot(store.engine)
        try:
            got[name] = list(db.paced_chunks(conn, query, rows=5, pacer=pacer))
        finally:
            conn.rollback()
            conn.close()
        if pacer is None:
            assert slept == []
    for chunks in got.values():
        assert [len(c) for c in chunks] == [5, 5, 5, 5, 3]
        assert [r[1] for c in chunks for r in c] == [f"alice-{k:04d}" for k in range(23)]
    if store.engine.dialect.name == "postgresql":  # the server's process rests after each chunk
        assert len(slept) == 5 and all(x > 0 for x in slept)
    else:  # SQLite reads in this process, at its priority
        assert slept == []
    store.close()


def test_a_pacer_rests_in_proportion_to_the_servers_work(monkeypatch: pytest.MonkeyPatch) -> None:
    slept: list[float] = []
    monkeypatch.setattr(db.time, "sleep", slept.append)
    db.Pacer(0.25).rest(0.4)  # a quarter of the time: rests 3 times as long as the server worked
    db.Pacer(1.0).rest(0.4)  # all the time: no rest
    assert slept == pytest.approx([1.2])
    with pytest.raises(InvalidParameterError, match="duty=0"):
        db.Pacer(0)
