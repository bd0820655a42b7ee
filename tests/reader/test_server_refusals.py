"""What the server answers when it cannot serve a request, never a 500: an adjudication whose ``seen`` is
beyond the database's integers 422, a database that cannot answer during the token check (a PostgreSQL
restart) 503 with ``Retry-After``, headers over the limit 431; an item the reader does not read 404, as an
unknown one; images not kept by the browser when the study says so; and three PostgreSQL restarts under
requests to a served study answer no 500."""

from __future__ import annotations

import os
import secrets
import shlex
import shutil
import subprocess
import threading
import time
from pathlib import Path

import pytest

from cxreval.reader.app import MAX_HEADERS, RETRY_AFTER_S
from cxreval.reader.store import ReaderStore
from cxreval.reader.study import load_study

from .conftest import FINDINGS, _h, decision

pytestmark = pytest.mark.filterwarnings("ignore:Using `httpx` with `starlette.testclient`")


def _client(study: Path, url: str):
    from fastapi.testclient import TestClient

    from cxreval.reader.app import create_app

    store, tokens = ReaderStore.create(url, load_study(study))
    return store, tokens, TestClient(create_app(store), raise_server_exceptions=False)


def _conflict(store: ReaderStore, tokens: dict[str, str], key: str = "b1") -> None:
    for name, state in (("alice", "positive"), ("bob", "negative")):
        store.submit(
            store.authenticate(tokens[name]),
            f"{name}-{key}-0001",
            "image",
            key,
            {"labels": {f: "negative" for f in FINDINGS} | {"Effusion": state}, "boxes": []},
        )


def test_a_seen_beyond_the_database_integers_is_422(study_file: Path, db_url: str) -> None:
    store, tokens, c = _client(study_file, db_url)
    _conflict(store, tokens)
    body = {"id": "carol-0000001", "task": "adjudication", "item": "b1"} | decision(
        store, "b1", {"Effusion": "positive"}
    )
    for k, seen in enumerate([2**63, 2**63 - 1, 2**31, 2**64, 10**100, 0, -1]):
        r = c.post(
            "/api/submissions",
            headers=_h(tokens["carol"]),
            json=body | {"id": f"carol-big-{k:04d}", "seen": {"Effusion": seen}},
        )
        assert r.status_code == 422 and "'seen'" in r.json()["detail"] and "2147483647" in r.json()["detail"]
    r = c.post("/api/submissions", headers=_h(tokens["carol"]), json=body | {"seen": {"Effusion": 2**31 - 1}})
    assert r.status_code == 200, r.text  # the largest seq the database holds
    store.close()


def test_database_errors_during_the_token_check_are_503_with_retry_after(
    study_file: Path, sqlite_url: str, monkeypatch
) -> None:
    """A database that cannot answer (here: every read fails as during a PostgreSQL restart) gets 503 with
    ``Retry-After`` on every route, the submission's fast path included; nothing is stored."""
    import sqlalchemy as sa

    store, tokens, c = _client(study_file, sqlite_url)
    n0 = len(store.submissions())

    def down(_fn):
        raise sa.exc.OperationalError(
            "SELECT readers.id", {}, Exception("the database system is shutting down")
        )

    monkeypatch.setattr(store, "read", down)
    image = {"id": "alice-0000001", "task": "image", "item": "a1"}
    image |= {"labels": {f: "negative" for f in FINDINGS}, "boxes": []}
    for method, path, body in (
        ("GET", "/api/me", None),
        ("GET", "/api/queue?task=image", None),
        ("GET", "/api/item?task=image&key=a1", None),
        ("POST", "/api/submissions", image),
    ):
        r = c.request(method, path, headers=_h(tokens["alice"]), json=body)
        assert r.status_code == 503, (path, r.status_code, r.text)
        assert r.headers["retry-after"] == str(RETRY_AFTER_S)
        assert "shutting down" in r.json()["detail"] and "try again" in r.json()["detail"]
    monkeypatch.undo()
    assert len(store.submissions()) == n0
    assert c.get("/api/me", headers=_h(tokens["alice"])).status_code == 200
    store.close()


def test_headers_over_the_limit_are_431(app_client) -> None:
    _store, tokens, c = app_client
    ok = {"X-Pad": "p" * (MAX_HEADERS - 1000)}
    assert c.get("/api/me", headers=_h(tokens["alice"]) | ok).status_code == 200
    for too_much in (
        {"X-Pad": "p" * (MAX_HEADERS + 1)},
        {f"X-Pad-{i}": "p" * 100 for i in range(200)},
        {"Authorization": "Bearer " + "t" * 100_000},
    ):
        r = c.get("/api/me", headers=_h(tokens["alice"]) | too_much)
        assert r.status_code == 431 and str(MAX_HEADERS) in r.json()["detail"]
        r = c.post("/api/submissions", headers=_h(tokens["alice"]) | too_much, json={})
        assert r.status_code == 431


def test_an_item_a_reader_does_not_read_is_404_as_an_unknown_one(study_factory, tmp_path: Path) -> None:
    study = study_factory(
        tmp_path / "s",
        readers=("alice", "bob", "dave"),
        extra="assignment: {per_image: 1}\nadjudication:\n  readers: [alice, bob]\n",
    )
    store, tokens, c = _client(study, f"sqlite:///{tmp_path / 'r.db'}")
    dave = store.authenticate(tokens["dave"])
    other = next(k for k in sorted(store.items["image"]) if k not in store.keys_of(dave, "image"))
    for key in (other, "no-such-study"):
        answers = [
            c.get(f"/api/item?task=image&key={key}", headers=_h(tokens["dave"])),
            c.get(f"/api/pixels?task=image&key={key}&level=display", headers=_h(tokens["dave"])),
            c.post(
                "/api/submissions",
                headers=_h(tokens["dave"]),
                json={"id": f"dave-{len(key):08d}", "task": "image", "item": key}
                | {"labels": {f: "negative" for f in FINDINGS}},
            ),
        ]
        for r in answers:
            assert r.status_code == 404 and r.json() == {"detail": f"Unknown image item {key!r}."}
    store.close()


@pytest.mark.parametrize(
    "extra, cache", [("", "private, max-age=3600"), ("cache_images: false\n", "private, no-store")]
)
def test_images_are_not_kept_by_the_browser_when_the_study_says_so(
    study_factory, tmp_path: Path, extra: str, cache: str
) -> None:
    study = study_factory(tmp_path / "s", extra=extra)
    store, tokens, c = _client(study, f"sqlite:///{tmp_path / 'r.db'}")
    for level in ("display", "full"):
        r = c.get(f"/api/pixels?task=image&key=a1&level={level}", headers=_h(tokens["alice"]))
        assert r.status_code == 200 and r.headers["cache-control"] == cache
    store.close()
    from cxreval.exceptions import SchemaError

    with pytest.raises(SchemaError, match="'cache_images' must be true"):
        load_study(study_factory(tmp_path / "t", extra="cache_images: sometimes\n"))


def _throwaway_postgres() -> tuple[str, Path]:
    script = Path(__file__).with_name("start_postgres.sh")
    try:
        proc = subprocess.run([str(script)], capture_output=True, text=True, timeout=120)
    except (OSError, subprocess.TimeoutExpired) as exc:
        pytest.skip(f"cannot start a PostgreSQL server: {exc}")
    if proc.returncode != 0:
        pytest.skip(f"cannot start a PostgreSQL server: {proc.stderr.strip()[-200:]}")
    url, data = proc.stdout.split()
    return url, Path(data)


def _pg_ctl(data: Path, *args: str) -> None:
    bins = sorted(Path("/usr/lib/postgresql").glob("*/bin/pg_ctl"), key=lambda p: int(p.parts[-3]))
    pg_ctl = str(bins[-1])
    log = str(data.parent / "server.log")  # the server started again writes there, not into our pipes
    cmd = [pg_ctl, "-D", str(data), "-l", log, "-w", "-t", "60", *args]
    if os.geteuid() == 0:
        cmd = ["su", "postgres", "-s", "/bin/sh", "-c", shlex.join(cmd)]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=120)


def test_three_postgresql_restarts_under_requests_answer_no_500(study_file: Path, server_factory) -> None:
    """Readers keep asking (their own pages, submissions, and tokens the server has not seen, whose check
    reads the database) while PostgreSQL restarts three times: every answer is 2xx or 4xx, or 503 with
    ``Retry-After`` while the database is down; every acknowledged submission is stored."""
    import httpx

    url, data = _throwaway_postgres()
    try:
        store, tokens = ReaderStore.create(url, load_study(study_file))
        store.close()
        server = server_factory(url).start()
        stop = threading.Event()
        answers: list[tuple[int, str, str]] = []
        acknowledged: list[str] = []

        def reader(name: str) -> None:
            with httpx.Client(base_url=server.base, timeout=30) as client:
                k = 0
                while not stop.is_set():
                    k += 1
                    sid = f"{name}-{k:08d}"
                    body = {"id": sid, "task": "image", "item": ["a1", "a2", "b1", "c1"][k % 4]}
                    body |= {"labels": {f: "negative" for f in FINDINGS}, "boxes": []}
                    for method, path, token, payload in (
                        ("GET", "/api/me", tokens[name], None),
                        ("GET", "/api/me", secrets.token_urlsafe(32), None),
                        ("GET", "/api/queue?task=image", tokens[name], None),
                        ("POST", "/api/submissions", tokens[name], body),
                    ):
                        try:
                            r = client.request(method, path, headers=_h(token), json=payload)
                        except httpx.HTTPError as exc:
                            answers.append((-1, path, type(exc).__name__))
                            continue
                        answers.append((r.status_code, path, r.headers.get("retry-after", "")))
                        if path == "/api/submissions" and r.status_code == 200:
                            acknowledged.append(sid)
                    time.sleep(0.01)

        threads = [threading.Thread(target=reader, args=(n,)) for n in ("alice", "bob")]
        for t in threads:
            t.start()
        try:
            for _ in range(3):
                time.sleep(1.0)
                _pg_ctl(data, "restart", "-m", "fast")
            time.sleep(1.5)
        finally:
            stop.set()
            for t in threads:
                t.join()
        assert [a for a in answers if a[0] >= 500 and a[0] != 503 or a[0] == -1] == []
        down = [a for a in answers if a[0] == 503]
        assert down and all(a[2] == str(RETRY_AFTER_S) for a in down)  # the restarts were seen
        assert {a[0] for a in answers[-8:]} <= {200, 401}  # served again once it is back
        store = ReaderStore.open(url)
        assert set(acknowledged) <= set(store.submissions()["id"])
        store.close()
    finally:
        try:
            _pg_ctl(data, "stop", "-m", "immediate")
        finally:
            shutil.rmtree(data.parent, ignore_errors=True)
