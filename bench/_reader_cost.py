"""What one request of the reader-study server costs, whatever else runs on the machine: CPU time of the
server and database processes (``/proc``), and SQL statements and pool checkouts counted in process. Used
by :mod:`reader_history` (``bench/reader.py history``)."""

from __future__ import annotations

import json
import os
import time
import uuid
from pathlib import Path

import numpy as np

__all__ = ["PROFILE", "CPU", "single", "get", "post"]

PROFILE = """
# run with a tree's PYTHONPATH: python -c PROFILE URL TOKENS_JSON N; prints the figures as JSON
import json, sys, time, warnings
import sqlalchemy as sa
warnings.simplefilter("ignore")
from starlette.testclient import TestClient
from cxreval.reader.app import create_app
url, tokens, n = sys.argv[1], json.loads(sys.argv[2]), int(sys.argv[3])
app = create_app(url)
eng = app.store.engine
count = {"statements": 0, "checkouts": 0}

def hit(*_a, **_k):
    count["statements"] += 1
if eng.dialect.name == "sqlite":  # every statement SQLite runs, BEGIN and COMMIT included
    sa.event.listen(eng, "connect", lambda dbapi, _rec: dbapi.set_trace_callback(hit))
else:  # every message psycopg sends that waits for an answer: queries, pings, BEGIN, COMMIT, ROLLBACK
    import psycopg
    from psycopg import _connection_base as cb
    for cls, name in ((cb.BaseConnection, "_exec_command"), (psycopg.Cursor, "execute"),
                      (psycopg.Cursor, "executemany"), (psycopg.ServerCursor, "execute")):
        def wrap(orig):
            def counted(*a, **k):
                hit()
                return orig(*a, **k)
            return counted
        setattr(cls, name, wrap(getattr(cls, name)))
sa.event.listen(eng, "checkout", lambda *_a: count.__setitem__("checkouts", count["checkouts"] + 1))
eng.pool.dispose()
client = TestClient(app)
images = sorted(app.store.items["image"])
def h(tok):
    return {"Authorization": "Bearer " + tok}
calls = {"me": lambda k: client.get("/api/me", headers=h(tokens["r2"])),
         "queue": lambda k: client.get("/api/queue?task=image", headers=h(tokens["r2"])),
         "item": lambda k: client.get(f"/api/item?task=image&key={images[k % len(images)]}", headers=h(tokens["r2"])),
         "submission": lambda k: client.post("/api/submissions", headers=h(tokens["r2"]), json={
             "id": f"profile-{k:06d}", "task": "image", "item": images[k % len(images)],
             "labels": {"Effusion": "negative", "Cardiomegaly": "positive", "Nodule": "negative", "Mass": "negative"},
             "boxes": []}),
         "submission of an adjudicated reader": lambda k: client.post(
             "/api/submissions", headers=h(tokens["r0"]), json={
                 "id": f"profile-r0-{k:06d}", "task": "image", "item": images[k % len(images)],
                 "labels": {"Effusion": "negative", "Cardiomegaly": "positive", "Nodule": "negative",
                            "Mass": "negative"}, "boxes": []})}
out = {}
for name, call in calls.items():
    for k in range(3):  # warm caches (the reader's order, the auth cache)
        assert call(9000 + k).status_code == 200
    count.update(statements=0, checkouts=0)
    t0 = time.perf_counter()
    for k in range(n):
        r = call(k)
        assert r.status_code == 200, (name, r.status_code, r.text[:300])
    out[name] = {"statements": count["statements"] / n, "checkouts": count["checkouts"] / n,
                 "ms": (time.perf_counter() - t0) / n * 1000}
res = h(tokens["res"])
q = client.get("/api/queue?task=adjudication", headers=res).json()
keys = q["keys"] if "keys" in q else [x["key"] for x in q["items"]]
for name, path in (("resolver queue", lambda k: "/api/queue?task=adjudication"),
                   ("resolver item", lambda k: f"/api/item?task=adjudication&key={keys[k % len(keys)]}"),
                   ("resolver pixels", lambda k: f"/api/pixels?task=adjudication&key={keys[k % len(keys)]}")):
    client.get(path(0), headers=res)
    count.update(statements=0, checkouts=0)
    t0 = time.perf_counter()
    for k in range(n):
        r = client.get(path(k), headers=res)
        assert r.status_code == 200, (name, r.status_code, r.text[:300])
    out[name] = {"statements": count["statements"] / n, "checkouts": count["checkouts"] / n,
                 "ms": (time.perf_counter() - t0) / n * 1000}
got = {"statements": 0, "checkouts": 0, "s": 0.0}
for k in range(n):  # adjudicate one study after another (each read first, not counted)
    item = client.get(f"/api/item?task=adjudication&key={keys[k % len(keys)]}", headers=res).json()
    before = dict(count)
    t0 = time.perf_counter()
    r = client.post("/api/submissions", headers=res, json={"id": f"profile-adj-{k:06d}", "task": "adjudication",
                    "item": item["key"], "labels": {f: "negative" for f in item["conflicts"]},
                    "conflicts": item["conflicts"], "seen": {f: d["seq"] for f, d in item["decided"].items()}})
    got["s"] += time.perf_counter() - t0
    assert r.status_code == 200, ("resolver submission", r.status_code, r.text[:300])
    for c in ("statements", "checkouts"):
        got[c] += count[c] - before[c]
out["resolver submission"] = {"statements": got["statements"] / n, "checkouts": got["checkouts"] / n,
                              "ms": got["s"] / n * 1000}
print(json.dumps(out))
"""


def get(conn, path: str, headers: dict[str, str]) -> tuple[int, bytes, float]:
    t0 = time.perf_counter()
    conn.request("GET", path, headers=headers)
    r = conn.getresponse()
    data = r.read()
    return r.status, data, time.perf_counter() - t0


def post(conn, body: dict, headers: dict[str, str]) -> tuple[int, bytes, float]:
    t0 = time.perf_counter()
    conn.request("POST", "/api/submissions", body=json.dumps(body), headers=headers)
    r = conn.getresponse()
    data = r.read()
    return r.status, data, time.perf_counter() - t0


def _cpu_s(pids: list[int]) -> dict[int, float]:
    """User + system CPU seconds of each live process (``/proc/PID/stat``)."""
    tick = os.sysconf("SC_CLK_TCK")
    out = {}
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        out[pid] = (int(fields[11]) + int(fields[12])) / tick
    return out


def _db_pids(url: str) -> list[int]:
    """The PostgreSQL server processes serving ``url``'s database (none for SQLite: it runs in the server)."""
    if not url.startswith("postgresql"):
        return []
    import sqlalchemy as sa

    eng = sa.create_engine(
        url.replace("postgresql://", "postgresql+psycopg://", 1), poolclass=sa.pool.NullPool
    )
    with eng.connect() as conn:
        pids = [
            int(p)
            for (p,) in conn.execute(
                sa.text(
                    "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()"
                )
            )
        ]
    eng.dispose()
    return pids


class CPU:
    """CPU seconds used by the server process and the database's server processes since ``start()``."""

    def __init__(self, server_pid: int, url: str) -> None:
        self.server_pid, self.url = server_pid, url

    def start(self) -> None:
        self.t0 = (_cpu_s([self.server_pid]).get(self.server_pid, 0.0), _cpu_s(_db_pids(self.url)))

    def used(self) -> tuple[float, float]:
        srv0, db0 = self.t0
        db1 = _cpu_s(_db_pids(self.url))
        return (
            _cpu_s([self.server_pid])[self.server_pid] - srv0,
            sum(v - db0.get(pid, 0.0) for pid, v in db1.items()),
        )


def _decision(item: dict) -> dict:
    """Every conflict of a resolver's item decided negative, naming the pairs and decisions it showed."""
    return {
        "labels": {f: "negative" for f in item["conflicts"]},
        "conflicts": item["conflicts"],
        "seen": {f: d["seq"] for f, d in item.get("decided", {}).items()},
    }


def single(
    port: int, tokens: dict[str, str], n_images: int, n: int, cpu: CPU, findings: list[str]
) -> dict[str, dict[str, float]]:
    """One client, one request at a time: each endpoint ``n`` times; the client's latency (p50, p95) and the
    server's and database's CPU milliseconds per request (what the load of other processes does not inflate)."""
    import http.client

    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
    rd = {"Authorization": f"Bearer {tokens['r2']}", "Content-Type": "application/json"}
    rs = {"Authorization": f"Bearer {tokens['res']}", "Content-Type": "application/json"}
    rng = np.random.default_rng(7)
    status, data, _ = get(conn, "/api/queue?task=adjudication", rs)
    q = json.loads(data)
    open_ = q["keys"] if "keys" in q else [x["key"] for x in q["items"]]
    plan = {
        "me": lambda k: get(conn, "/api/me", rd),
        "queue": lambda k: get(conn, "/api/queue?task=image", rd),
        "item": lambda k: get(conn, f"/api/item?task=image&key=i{int(rng.integers(n_images)):05d}", rd),
        "submission": lambda k: post(
            conn,
            {
                "id": uuid.uuid4().hex,
                "task": "image",
                "item": f"i{int(rng.integers(n_images)):05d}",
                "labels": {f: "negative" for f in findings},
                "boxes": [],
            },
            rd,
        ),
        "resolver queue": lambda k: get(conn, "/api/queue?task=adjudication", rs),
        "resolver item": lambda k: get(conn, f"/api/item?task=adjudication&key={open_[k % len(open_)]}", rs),
        "resolver pixels": lambda k: get(
            conn, f"/api/pixels?task=adjudication&key={open_[k % len(open_)]}", rs
        ),
    }
    todo = []  # studies to adjudicate and their conflicts, read before the timed adjudications
    for key in open_[1 : n + 2]:
        st, body, _ = get(conn, f"/api/item?task=adjudication&key={key}", rs)
        if st == 200:
            todo.append((key, json.loads(body)))
    plan["resolver submission"] = lambda k: post(
        conn,
        {
            "id": uuid.uuid4().hex,
            "task": "adjudication",
            "item": todo[k % len(todo)][0],
            **_decision(todo[k % len(todo)][1]),
        },
        rs,
    )
    out = {}
    for name, call in plan.items():
        if name != "resolver submission":
            call(0)
        cpu.start()
        lat = []
        for k in range(n):
            st, body, dt = call(k)
            if st != 200:
                raise RuntimeError(f"{name}: {st} {body[:200]!r}")
            lat.append(dt)
        srv, db = cpu.used()
        out[name] = {
            "p50": float(np.percentile(lat, 50)) * 1000,
            "p95": float(np.percentile(lat, 95)) * 1000,
            "server_cpu_ms": srv / n * 1000,
            "db_cpu_ms": db / n * 1000,
        }
    conn.close()
    return out
