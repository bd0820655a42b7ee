"""The clients of the timed phase of :mod:`reader_history`: a reader looping ``me, queue, item, submission`` and
the resolver looping ``queue, item, pixels, adjudication``, each in its own process, reporting its latencies."""

from __future__ import annotations

import json
import multiprocessing as mp
import time
import uuid

import numpy as np
from _reader_cost import get, post

__all__ = ["FINDINGS", "STATES"]


FINDINGS = ["Effusion", "Cardiomegaly", "Nodule", "Mass"]
STATES = ["negative", "uncertain", "positive"]


def _client(args: tuple[str, str, str, int, float, float, mp.Queue]) -> None:
    """One reader (``role='reader'``) or the resolver: loop its endpoints for ``seconds``."""
    try:
        _loop(args)
    except Exception as exc:  # reported, so that the bench does not wait for a client that died
        args[-1].put(({}, [f"client {args[2]} failed: {exc!r}"]))


def _loop(args: tuple[str, str, str, int, float, float, mp.Queue]) -> None:
    import http.client

    port, token, role, n_images, seconds, interval, out = args
    conn = http.client.HTTPConnection("127.0.0.1", int(port), timeout=600)
    h = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
    rng = np.random.default_rng(abs(hash(token)) % 2**32)
    lat: dict[str, list[float]] = {}
    errors: list[str] = []
    end = time.perf_counter() + seconds
    time.sleep(rng.uniform(0, interval))
    while time.perf_counter() < end:
        t_round = time.perf_counter()
        if role == "reader":
            key = f"i{int(rng.integers(n_images)):05d}"
            labels = {
                f: STATES[int(v)]
                for f, v in zip(FINDINGS, rng.choice(3, size=len(FINDINGS), p=[0.8, 0.1, 0.1]))
            }
            calls = [
                ("me", lambda: get(conn, "/api/me", h)),
                ("queue", lambda: get(conn, "/api/queue?task=image", h)),
                ("item", lambda k=key: get(conn, f"/api/item?task=image&key={k}", h)),
                (
                    "submission",
                    lambda k=key, lab=labels: post(
                        conn,
                        {"id": uuid.uuid4().hex, "task": "image", "item": k, "labels": lab, "boxes": []},
                        h,
                    ),
                ),
            ]
            for name, call in calls:
                status, data, dt = call()
                (lat.setdefault(name, []) if status == 200 else errors).append(
                    dt if status == 200 else f"{name} {status} {data[:200]!r}"
                )
        else:
            status, data, dt = get(conn, "/api/queue?task=adjudication", h)
            if status != 200:
                errors.append(f"resolver queue {status} {data[:200]!r}")
                break
            lat.setdefault("resolver queue", []).append(dt)
            q = json.loads(data)
            if "keys" in q:  # keys + done flags
                open_ = [k for k, d in zip(q["keys"], q["done"]) if d == "0"]
            else:  # a list of {key, done}
                open_ = [x["key"] for x in q["items"] if not x["done"]]
            if not open_:
                break
            key = open_[int(rng.integers(len(open_)))]
            status, data, dt = get(conn, f"/api/item?task=adjudication&key={key}", h)
            if status != 200:
                errors.append(f"resolver item {status} {data[:200]!r}")
                continue
            lat.setdefault("resolver item", []).append(dt)
            item = json.loads(data)
            st, _d, dt = get(conn, f"/api/pixels?task=adjudication&key={key}", h)
            if st == 200:
                lat.setdefault("resolver pixels", []).append(dt)
            body = {
                "id": uuid.uuid4().hex,
                "task": "adjudication",
                "item": key,
                "labels": {f: "negative" for f in item["conflicts"]},
                "conflicts": item["conflicts"],
                "seen": {f: d["seq"] for f, d in item["decided"].items()},
            }
            st, d, dt = post(conn, body, h)
            (lat.setdefault("resolver submission", []) if st == 200 else errors).append(
                dt if st == 200 else f"resolver submission {st} {d[:200]!r}"
            )
        time.sleep(max(0.0, interval - (time.perf_counter() - t_round)))
    conn.close()
    out.put((lat, errors))
