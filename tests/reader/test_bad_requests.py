"""Malformed requests on both backends: text no database stores (NUL, lone surrogates) in any query
parameter, body field, key or item is answered 400; a seeded fuzz of well over 150 malformed requests per
backend (every endpoint, every role, bad text, wrong types, odd keys, broken JSON, wrong methods, and valid
requests of the right reader with one field replaced, so that they reach the database) gets no answer of
500 or more."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from cxreval.reader.store import ReaderStore
from cxreval.reader.study import load_study

from .conftest import FINDINGS

pytestmark = pytest.mark.filterwarnings("ignore:Using `httpx` with `starlette.testclient`")

BAD_TEXT = ["\x00", "a\x00b", "\ud800", "x\udfffy", "b1\x00"]
ENCODED_BAD = ["%00", "b1%00", "%ED%A0%80", "%ED%BF%BF", "%FF", "%C0%AF"]
GETS = [
    "/api/me?x={v}",
    "/api/queue?task={v}",
    "/api/item?task=image&key={v}",
    "/api/item?task={v}&key=b1",
    "/api/item?task=adjudication&key={v}",
    "/api/pixels?task=image&key={v}",
    "/api/pixels?task=adjudication&key={v}",
    "/api/pixels?task=iqa&key={v}&which=test",
    "/api/pixels?task=iqa&key=q&which={v}",
    "/api/organiser/status?x={v}",
    "/api/organiser/integrity?{v}=1",
]


@pytest.fixture
def served(study_file: Path, db_url: str):
    from fastapi.testclient import TestClient

    from cxreval.reader.app import create_app

    store, tokens = ReaderStore.create(db_url, load_study(study_file))
    tokens["olga"] = store.add_reader("olga", role="organiser")
    who = {n: store.authenticate(t) for n, t in tokens.items()}
    for name, state in (("alice", "positive"), ("bob", "negative")):  # a conflict, so adjudication reads run
        store.submit(
            who[name],
            f"{name}-b1-0001",
            "image",
            "b1",
            {"labels": {f: "negative" for f in FINDINGS} | {"Effusion": state}, "boxes": []},
        )
    with TestClient(create_app(store), raise_server_exceptions=False) as client:
        yield store, tokens, client
    store.close()


def _h(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def _raw(obj: object) -> bytes:
    """JSON text of ``obj`` with lone surrogates written as escapes (as a browser's JSON.stringify does)."""
    return json.dumps(obj).encode()


def test_bad_text_anywhere_is_400(served) -> None:
    store, tokens, c = served
    n0 = len(store.submissions())
    for path in GETS:
        for v in ENCODED_BAD:
            for who in ("alice", "carol", "olga"):
                r = c.get(path.format(v=v), headers=_h(tokens[who]))
                assert r.status_code == 400, (path, v, who, r.status_code, r.text)
    image = {"id": "sub-bad-0001", "task": "image", "item": "b1", "labels": {f: "negative" for f in FINDINGS}}
    adjudication = {
        "id": "sub-bad-0002",
        "task": "adjudication",
        "item": "b1",
        "labels": {"Effusion": "positive"},
        "conflicts": {"Effusion": {"alice": "positive", "bob": "negative"}},
    }
    for bad in BAD_TEXT:
        for who, body in (("alice", image), ("carol", adjudication)):
            variants = [
                {**body, "item": bad},
                {**body, "item": body["item"] + bad},
                {**body, "task": bad},
                {**body, "comment": "fine " + bad},
                {**body, "labels": {bad: "negative"}},
                {**body, "labels": {"Effusion": bad}},
                {**body, bad: 1},
                {**body, "client_time": bad},
                {**body, "conflicts": {"Effusion": {bad: "positive"}}},
                {**body, "id": "sub" + bad + "0001"},
                {**body, "boxes": [{"finding": bad, "x_min": 0, "y_min": 0, "x_max": 1, "y_max": 1}]},
            ]
            for v in variants:
                r = c.post(
                    "/api/submissions",
                    headers=_h(tokens[who]) | {"Content-Type": "application/json"},
                    content=_raw(v),
                )
                assert r.status_code == 400 and "NUL" in r.json()["detail"], (who, v, r.status_code, r.text)
    assert len(store.submissions()) == n0


def _fuzz_requests(
    rng: np.random.Generator, tokens: dict[str, str]
) -> list[tuple[str, str, dict, bytes | None]]:
    """(method, path, headers, body) of malformed requests, drawn with ``rng``."""
    odd = [
        "",
        " ",
        "..",
        "../study.yaml",
        "a" * 600,
        "%00",
        "%ED%A0%80",
        "%FF%FE",
        "b1%0D%0A=1",
        "b1'--",
        "\u202eb1",
        "%F0%9F%98%80",
        "null",
        "[]",
        "{}",
        "-1",
        "1e309",
        "%25",
        "b1&key=a1",
        "adjudication",
    ]
    bodies: list[bytes] = [
        b"",
        b"{",
        b"[]",
        b"null",
        b"1",
        b'"x"',
        b"{}" * 3,
        b"\xff\xfe",
        b'{"id": 1}',
        b'{"id": "sub-fuzz-01", "task": "image"}',
        b'{"id": "sub-fuzz-01", "task": 1, "item": []}',
        b'{"id": "sub-fuzz-01", "task": "image", "item": "b1", "labels": "x"}',
        b'{"id": "sub-fuzz-01", "task": "image", "item": "b1", "labels": {"Effusion": 1}}',
        b'{"id": "sub-fuzz-01", "task": "image", "item": "b1", "labels": {}, "boxes": {}}',
        b'{"id": "sub-fuzz-01", "task": "iqa", "item": "q", "ratings": {"overall": 1e400}}',
        b'{"id": "sub-fuzz-01", "task": "adjudication", "item": "b1", "labels": null}',
        b'{"id": "sub-fuzz-01", "task": "adjudication", "item": "b1", "labels": '
        b'{"Effusion": "positive"}, "conflicts": [], "seen": 5}',
        b'{"id": "sub-fuzz-01", "task": "adjudication", "item": "b1\\u0000", "labels": {}}',
        b'{"id": "sub-fuzz-01", "task": "image", "item": "\\ud800", "labels": {}}',
        b'{"id": "\\udc00sub-fuzz", "task": "image", "item": "b1"}',
        b'{"id": "sub-fuzz-01", "task": "image", "item": "b1", "comment": "\\u0000"}',
        b'{"id": "sub-fuzz-01", "task": "image", "item": "b1", "client_time": "\\ud83d"}',
        b"[" * 5000 + b"]" * 5000,
        b'{"a": ' * 3000 + b"1" + b"}" * 3000,
    ]
    paths = [
        "/api/me",
        "/api/queue",
        "/api/item",
        "/api/pixels",
        "/api/organiser/status",
        "/api/organiser/jobs",
        "/api/organiser/jobs/{o}",
        "/api/organiser/jobs/{o}/file",
        "/api/organiser/integrity",
        "/api/submissions",
        "/api/nothing",
        "/static/{o}",
    ]
    params = ["task", "key", "which"]
    auths = [
        *(f"Bearer {t}" for t in tokens.values()),
        "",
        "Bearer",
        "Bearer x",
        "Basic abc",
        "Bearer " + "a" * 200,
    ]
    out = []
    for _ in range(120):  # anything, anywhere
        path = str(rng.choice(paths)).replace("{o}", str(rng.choice(odd)))
        q = "&".join(
            f"{p}={rng.choice(odd + ['image', 'iqa', 'report', 'adjudication', 'b1', 'test'])}"
            for p in params
            if rng.random() < 0.7
        )
        method = (
            "POST"
            if path == "/api/submissions" and rng.random() < 0.8
            else str(rng.choice(["GET", "POST", "PUT"]))
        )
        body = bodies[int(rng.integers(len(bodies)))] if method != "GET" else None
        out.append(
            (
                method,
                path + ("?" + q if q else ""),
                {"Authorization": str(rng.choice(auths)), "Content-Type": "application/json"},
                body,
            )
        )
    # valid requests of the right reader with one field or parameter replaced: they reach the database
    values: list[object] = [
        "\x00",
        "b1\x00",
        "\ud800",
        "b1\udfff",
        "a" * 600,
        "",
        1,
        -1,
        1.5,
        None,
        True,
        [],
        {},
        ["b1"],
        {"b1": 1},
        "b1\r\n=1",
        "\u202e",
        "'; DROP TABLE items; --",
        10**30,
    ]
    posts = [
        (
            "alice",
            {
                "id": "sub-fuzz-0001",
                "task": "image",
                "item": "b1",
                "boxes": [],
                "labels": {f: "negative" for f in FINDINGS},
                "comment": "ok",
                "seconds": 3,
            },
        ),
        (
            "carol",
            {
                "id": "sub-fuzz-0002",
                "task": "adjudication",
                "item": "b1",
                "labels": {"Effusion": "positive"},
                "conflicts": {"Effusion": {"alice": "positive", "bob": "negative"}},
                "seen": {"Effusion": None},
            },
        ),
        (
            "alice",
            {
                "id": "sub-fuzz-0003",
                "task": "report",
                "item": "findings:a1",
                "labels": {f: "not_mentioned" for f in FINDINGS},
            },
        ),
    ]
    gets = [
        ("alice", "/api/item", {"task": "image", "key": "b1"}),
        ("carol", "/api/item", {"task": "adjudication", "key": "b1"}),
        ("carol", "/api/pixels", {"task": "adjudication", "key": "b1"}),
        ("alice", "/api/pixels", {"task": "image", "key": "b1"}),
        ("alice", "/api/queue", {"task": "image"}),
        ("alice", "/api/pixels", {"task": "iqa", "key": "q", "which": "test"}),
    ]
    for k in range(160):
        if k % 2:
            who, body = posts[int(rng.integers(len(posts)))]
            body = json.loads(json.dumps(body))
            field = str(rng.choice(sorted(body)))
            v = values[int(rng.integers(len(values)))]
            if isinstance(body[field], dict) and body[field] and rng.random() < 0.5:
                inner = str(rng.choice(sorted(body[field])))
                body[field][inner if rng.random() < 0.7 else str(v)] = v
            else:
                body[field] = v
            out.append(
                (
                    "POST",
                    "/api/submissions",
                    {"Authorization": f"Bearer {tokens[who]}", "Content-Type": "application/json"},
                    _raw(body),
                )
            )
        else:
            from urllib.parse import quote

            who, path, ps = gets[int(rng.integers(len(gets)))]
            ps = dict(ps)
            ps[str(rng.choice(sorted(ps)))] = str(values[int(rng.integers(len(values)))])
            q = "&".join(f"{a}={quote(b, errors='surrogatepass')}" for a, b in ps.items())
            out.append(("GET", f"{path}?{q}", {"Authorization": f"Bearer {tokens[who]}"}, None))
    return out


def test_a_fuzz_of_malformed_requests_gets_no_server_error(served) -> None:
    store, tokens, c = served
    n0 = len(store.submissions())
    requests = _fuzz_requests(np.random.default_rng(38), tokens)
    statuses = []
    for method, path, headers, body in requests:
        r = c.request(method, path, headers=headers, content=body)
        statuses.append((r.status_code, method, path, (body or b"")[:60]))
    assert len(statuses) >= 150 * 2 - 20
    assert [s for s in statuses if s[0] >= 500] == []
    assert len({s[0] for s in statuses}) >= 5  # the fuzz reaches many refusals, not one
    stored = store.submissions()  # a mutation may leave a valid request (an empty comment): stored, and valid
    assert (
        set(stored["id"][n0:]) <= {"sub-fuzz-0001", "sub-fuzz-0002", "sub-fuzz-0003"}
        and store.check_integrity().ok
    )


BIG = [
    2**31,
    2**31 - 1,
    2**53 + 1,
    2**63,
    2**63 - 1,
    2**64,
    -(2**63) - 1,
    10**30,
    10**400,
    -1,
    0,
    1e308,
    -1e308,
]


def _hostile_requests(rng: np.random.Generator, store: ReaderStore, tokens: dict[str, str]) -> list[tuple]:
    """(method, path, headers, body) of 200 requests a hostile reader sends: integers beyond the database's
    in every integer field of every task's body, oversized and odd headers, odd paths and query values."""
    conflicts, _ = store.read(lambda conn: store.conflict_rows(conn, "b1"))
    bodies = {
        "alice": {
            "task": "image",
            "item": "b1",
            "labels": {f: "positive" for f in FINDINGS},
            "boxes": [{"finding": "Effusion", "x_min": 1, "y_min": 1, "x_max": 5, "y_max": 5}],
            "seconds": 3,
        },
        "bob": {
            "task": "iqa",
            "item": sorted(store.items["iqa"])[0],
            "ratings": {"overall": 2},
            "seconds": 1,
        },
        "carol": {
            "task": "adjudication",
            "item": "b1",
            "labels": {"Effusion": "positive"},
            "conflicts": conflicts,
            "seen": {"Effusion": 1},
        },
    }
    ints = {
        "alice": [("seconds",), ("boxes", 0, "x_min"), ("boxes", 0, "y_max")],
        "bob": [("seconds",), ("ratings", "overall")],
        "carol": [("seen", "Effusion"), ("seconds",)],
    }
    out: list[tuple] = []
    for k in range(90):  # a valid body of the right reader with one integer field out of range
        who = str(rng.choice(sorted(bodies)))
        body = json.loads(json.dumps(bodies[who])) | {"id": f"sub-big-{k:04d}"}
        field = ints[who][int(rng.integers(len(ints[who])))]
        at = body
        for step in field[:-1]:
            at = at[step]
        at[field[-1]] = BIG[int(rng.integers(len(BIG)))]
        headers = {"Authorization": f"Bearer {tokens[who]}", "Content-Type": "application/json"}
        out.append(("POST", "/api/submissions", headers, json.dumps(body).encode()))
    paths = [
        "/api/me",
        "/api/queue?task=image",
        "/api/item?task=image&key=b1",
        "/api/pixels?task=image&key=b1&level=display&fit={n}",
        "/api/pixels?task=image&key=b1&level=display&fit=-{n}",
        "/api/organiser/status",
        "/api/submissions",
        "/api/heatmap?task=image&key=b1&finding=Effusion",
        "//api//me",
        "/api/item/../../study.yaml",
        "/static/..%2f..%2fstudy.yaml",
        "/api/queue?task=image&task=iqa&task={n}",
        "/api/organiser/jobs?kind={n}",
        "/api/organiser/jobs/{n}",
        "/api/organiser/jobs/{n}/file",
    ]
    for _ in range(110):  # odd headers and paths
        path = str(rng.choice(paths)).replace("{n}", str(BIG[int(rng.integers(len(BIG)))]))
        who = str(rng.choice(sorted(tokens)))
        headers = {"Authorization": f"Bearer {tokens[who]}"}
        kind = int(rng.integers(6))
        if kind == 0:
            headers["Authorization"] = "Bearer " + "a" * int(rng.integers(17_000, 120_000))
        elif kind == 1:
            headers.update({f"X-Pad-{i}": "v" * 200 for i in range(int(rng.integers(90, 400)))})
        elif kind == 2:
            headers["If-None-Match"] = '"' + "e" * int(rng.integers(1, 15_000)) + '"'
        elif kind == 3:
            headers["Authorization"] = b"Bearer " + bytes(int(c) for c in rng.integers(33, 256, 40))  # type: ignore[assignment]
        elif kind == 4:
            headers["Content-Length"] = str(BIG[int(rng.integers(len(BIG)))])
        else:
            headers["Range"] = f"bytes={BIG[int(rng.integers(len(BIG)))]}-"
        method = "POST" if path == "/api/submissions" else str(rng.choice(["GET", "GET", "POST", "DELETE"]))
        out.append((method, path, headers, b"{}" if method == "POST" and kind != 4 else None))
    return out


def test_200_hostile_requests_get_no_server_error(served) -> None:
    """Integers beyond 2^31 and 2^63 in every integer field (an adjudication's ``seen``, seconds, ratings, box
    coordinates, a rendition's size), headers over the limit, odd paths: each answered 4xx with a message."""
    store, tokens, c = served
    n0 = len(store.submissions())
    got = []
    for method, path, headers, body in _hostile_requests(np.random.default_rng(51), store, tokens):
        r = c.request(method, path, headers=headers, content=body)
        got.append((r.status_code, method, path[:60], body or b""))
        if r.status_code >= 400:
            assert r.headers["content-type"].startswith("application/json") and r.json()["detail"], got[-1]
    assert len(got) == 200
    assert [g for g in got if g[0] >= 500] == []
    statuses = {g[0] for g in got}
    assert {422, 431} <= statuses and len(statuses) >= 5
    assert any(g[0] == 422 and b'"seen"' in g[3] for g in got)
    assert store.check_integrity().ok and len(store.submissions()) - n0 <= 90
