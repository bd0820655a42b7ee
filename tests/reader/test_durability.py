"""Durability and concurrency against a real server process: SIGKILL while readers submit loses no
acknowledged submission; 8 readers x 500 submissions lose and duplicate nothing. SQLite and PostgreSQL."""

from __future__ import annotations

import http.client
import json
import threading
import time
import uuid
from pathlib import Path

import pytest

from cxreval.reader.store import ReaderStore
from cxreval.reader.study import load_study

pytestmark = pytest.mark.slow

FINDINGS = ["Effusion", "Cardiomegaly", "Nodule"]
STATES = ["negative", "uncertain", "positive"]


def _study(study_factory, root: Path, n_readers: int, n_images: int) -> Path:
    readers = tuple(f"r{i}" for i in range(n_readers))
    return study_factory(root, readers=readers, resolvers=(), n_images=n_images)


def _body(sid: str, item: str, k: int) -> dict:
    labels = {f: STATES[(k + j) % 3] for j, f in enumerate(FINDINGS)}
    return {"id": sid, "task": "image", "item": item, "labels": labels, "boxes": []}


def _post(conn, token: str, body: dict) -> tuple[int, dict]:
    conn.request(
        "POST",
        "/api/submissions",
        body=json.dumps(body),
        headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
    )
    r = conn.getresponse()
    return r.status, json.loads(r.read())


def _reader_loop(
    base: str,
    token: str,
    items: list[str],
    n: int,
    acked: list[str],
    sent: list[dict],
    stop: threading.Event,
    retry_every: int = 0,
) -> None:
    """One reader over one keep-alive connection (stdlib http.client: light enough that 8 client threads
    do not starve the server of CPU)."""
    host, port = base.rsplit("//", 1)[1].split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=30)
    try:
        for k in range(n):
            if stop.is_set():
                return
            body = _body(uuid.uuid4().hex, items[k % len(items)], k)
            sent.append(body)
            try:
                status, res = _post(conn, token, body)
                if retry_every and k % retry_every == 0:  # a retried POST (lost answer): stored once
                    status2, res2 = _post(conn, token, body)
                    assert status2 == 200 and res2["status"] == "duplicate" and res2["seq"] == res["seq"]
            except (OSError, http.client.HTTPException):
                return  # the server is gone: this submission is unacknowledged
            assert status == 200, res
            acked.append(body["id"])
    finally:
        conn.close()


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_sigkill_loses_no_acknowledged_submission(
    backend, request, study_factory, server_factory, tmp_path: Path
) -> None:
    url = (
        f"sqlite:///{tmp_path / 'kill.db'}"
        if backend == "sqlite"
        else request.getfixturevalue("postgres_url")
    )
    store, tokens = ReaderStore.create(url, load_study(_study(study_factory, tmp_path / "s", 4, 6)))
    items = sorted(store.items["image"])
    server = server_factory(url).start()
    acked: list[list[str]] = [[] for _ in tokens]
    sent: list[list[dict]] = [[] for _ in tokens]
    stop = threading.Event()
    threads = [
        threading.Thread(target=_reader_loop, args=(server.base, tok, items, 100000, acked[i], sent[i], stop))
        for i, tok in enumerate(tokens.values())
    ]
    for t in threads:
        t.start()
    t0 = time.monotonic()
    while sum(map(len, acked)) < 200 and time.monotonic() - t0 < 30:
        time.sleep(0.01)
    server.kill()  # SIGKILL mid-stream: requests are in flight
    stop.set()
    for t in threads:
        t.join(30)
    all_acked = [i for a in acked for i in a]
    assert len(all_acked) >= 200
    store.engine.dispose()
    check = ReaderStore.open(url)
    integrity = check.check_integrity()
    assert integrity.ok, integrity.problems
    stored = set(check.submissions()["id"])
    assert set(all_acked) <= stored  # every acknowledged submission survived
    # the page resends what was not acknowledged: after a restart everything is stored exactly once
    server2 = server_factory(url).start()
    import httpx

    for tok, bodies in zip(tokens.values(), sent):
        with httpx.Client(base_url=server2.base, headers={"Authorization": f"Bearer {tok}"}, timeout=30) as c:
            for body in bodies[-5:]:
                r = c.post("/api/submissions", json=body)
                assert r.status_code == 200
                assert r.json()["status"] == ("duplicate" if body["id"] in stored else "stored")
    sub = check.submissions()
    assert sub["id"].is_unique and set(all_acked) <= set(sub["id"])
    assert check.check_integrity().ok
    check.engine.dispose()


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_8_readers_x_500_submissions_nothing_lost_or_duplicated(
    backend, request, study_factory, server_factory, tmp_path: Path
) -> None:
    url = (
        f"sqlite:///{tmp_path / 'load.db'}"
        if backend == "sqlite"
        else request.getfixturevalue("postgres_url")
    )
    store, tokens = ReaderStore.create(url, load_study(_study(study_factory, tmp_path / "s", 8, 20)))
    items = sorted(store.items["image"])
    server = server_factory(url).start()
    acked: list[list[str]] = [[] for _ in tokens]
    sent: list[list[dict]] = [[] for _ in tokens]
    stop = threading.Event()
    errors: list[BaseException] = []

    def run(i: int, tok: str) -> None:
        try:
            _reader_loop(server.base, tok, items, 500, acked[i], sent[i], stop, retry_every=25)
        except BaseException as exc:  # surfaced below
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(i, tok)) for i, tok in enumerate(tokens.values())]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not errors, errors[:1]
    assert [len(a) for a in acked] == [500] * 8
    sub = store.submissions()
    assert len(sub) == 4000 and sub["id"].is_unique
    assert set(sub["id"]) == {i for a in acked for i in a}
    assert sub.groupby("reader").size().to_dict() == {f"r{i}": 500 for i in range(8)}
    # the latest label per reader and item is the last one each reader sent for it
    latest = store.latest(task="image")
    for i, bodies in enumerate(sent):
        last = {b["item"]: b["labels"] for b in bodies}
        for item, labels in last.items():
            assert latest[(f"r{i}", "image", item)]["labels"] == labels
    assert store.check_integrity().ok
    store.engine.dispose()
    # the progress counts kept with each submission equal the items each reader labelled
    assert [
        p["n_done"]
        for i in range(8)
        for p in store.progress(store.authenticate(tokens[f"r{i}"]))
        if p["task"] == "image"
    ] == [len({b["item"] for b in bodies}) for bodies in sent]


def test_connections_cut_by_the_database_server_are_replaced_without_an_error(
    study_factory, postgres_url, tmp_path: Path
) -> None:
    """Pooled connections are not pinged before use: when the server drops them (a restart, an
    administrator's pg_terminate_backend), the next read is run once more on a fresh connection and the
    next submission is retried by the group commit; neither reaches the reader as an error."""
    import sqlalchemy as sa

    from cxreval.reader.db import make_engine

    store, tokens = ReaderStore.create(postgres_url, load_study(_study(study_factory, tmp_path / "s", 2, 4)))
    r0 = store.authenticate(tokens["r0"])
    items = sorted(store.items["image"])
    store.submit(
        r0, "cut-000001", "image", items[0], {"labels": {f: "negative" for f in FINDINGS}, "boxes": []}
    )
    assert store.progress(r0)[0]["n_done"] == 1 and store.mine(r0, "image", items[0]) is not None
    admin = make_engine(postgres_url.rsplit("/", 1)[0] + "/postgres").execution_options(
        isolation_level="AUTOCOMMIT"
    )
    with admin.connect() as conn:
        cut = (
            conn.execute(
                sa.text("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = :db"),
                {"db": postgres_url.rsplit("/", 1)[1]},
            )
            .scalars()
            .all()
        )
    admin.dispose()
    assert cut and all(cut)  # the pool's connections are gone
    assert store.mine(r0, "image", items[0])["labels"]["Effusion"] == "negative"
    res = store.submit(
        r0, "cut-000002", "image", items[1], {"labels": {f: "positive" for f in FINDINGS}, "boxes": []}
    )
    assert res.status == "stored"
    assert store.progress(r0)[0]["n_done"] == 2 and store.queue_flags(r0, "image")[1].count("1") == 2
    store.close()
