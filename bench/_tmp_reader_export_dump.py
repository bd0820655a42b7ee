"""Readers' latency while the organiser exports and checks a study with a large log, and the export's
consistency with its own audit log under that load.

A throw-away study of ``--images`` images and ``--readers`` readers (+ 1 resolver) gets ``--subs`` image
labels per reader written straight into its append-only log (the bulk history of
:mod:`reader_history`, one transaction; the derived tables then rebuilt from it, as on a server's first
open). One server (``create_app`` under uvicorn, no read-ahead) serves it; ``--readers`` reader processes
loop ``me, queue, item, submission`` at one round per ``--interval`` s each (a reader labelling a study a
second: a busy reading session). In each of ``--rounds`` rounds the readers work alone for ``--baseline`` s,
then the organiser starts an export and an integrity check (``POST /api/organiser/jobs``: background jobs,
one after the other, each in a process of its own) and polls them every second (``POLL_S``, as the
organiser's page does) until both are done. Latency is the client's (request sent to answer read),
pooled over the windows with the readers alone (baseline) and over those the jobs ran in: alternating them
keeps the machine's own load from favouring either. A source tree without background jobs (``--tree
NAME=PATH``, e.g. the code before them) is asked for the export and the integrity check in the request
instead, as its organiser page did.

Each export is then downloaded and checked against its own ``audit.csv``: each image label of
``labels.csv`` must be the last image submission of its reader and study in the audit log, and every such
submission must be in ``labels.csv`` (disagreeing rows: 0 when the export is one snapshot).

PostgreSQL runs when ``CXREVAL_TEST_POSTGRES_URL`` is set (tests/reader/start_postgres.sh).

    .venv/bin/python bench/reader_export.py --images 2000 --subs 2500 --rounds 3 --backends sqlite \\
        --tree jobs=src --tree in-request=/path/to/the/code/before/src
"""

from __future__ import annotations

import argparse
import io
import json
import multiprocessing as mp
import os
import subprocess
import sys
import tempfile
import time
import uuid
import zipfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from _reader_clients import FINDINGS, STATES  # noqa: E402
from _reader_cost import get, post  # noqa: E402

__all__ = ["main", "measure", "disagreements", "study_with_history"]

ROOT = Path(__file__).resolve().parent.parent
POLL_S = 1.0
"""Seconds between the organiser's polls of a job (the organiser's page polls the export every second)."""


def _reader(args: tuple[int, str, int, float, object, object]) -> None:
    """One reader: rounds of ``me, queue, item, submission`` until ``stop``; puts ``(start, endpoint,
    ms, status)`` of every request (``start``: wall-clock seconds)."""
    import http.client

    port, token, n_images, interval, stop, out = args
    conn = http.client.HTTPConnection("127.0.0.1", int(port), timeout=600)
    h = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
    rng = np.random.default_rng(abs(hash(token)) % 2**32)
    got: list[tuple[float, str, float, int]] = []
    time.sleep(rng.uniform(0, interval))
    try:
        while not stop.is_set():  # type: ignore[attr-defined]
            t_round = time.perf_counter()
            key = f"i{int(rng.integers(n_images)):05d}"
            labels = {f: STATES[int(v)] for f, v in zip(FINDINGS, rng.choice(3, size=len(FINDINGS)))}
            body = {"id": uuid.uuid4().hex, "task": "image", "item": key, "labels": labels, "boxes": []}
            for name, call in (
                ("me", lambda: get(conn, "/api/me", h)),
                ("queue", lambda: get(conn, "/api/queue?task=image", h)),
                ("item", lambda k=key: get(conn, f"/api/item?task=image&key={k}", h)),
                ("submission", lambda b=body: post(conn, b, h)),
            ):
                t0 = time.time()
                status, _data, dt = call()
                got.append((t0, name, dt * 1000, status))
            time.sleep(max(0.0, interval - (time.perf_counter() - t_round)))
    finally:
        conn.close()
        out.put(got)  # type: ignore[attr-defined]


def disagreements(labels_csv: bytes, audit_csv: bytes) -> int:
    """Image label rows of an export that are not the last image submission of their reader and study in
    the export's own audit log, plus such submissions missing from the labels."""
    import pandas as pd

    audit = pd.read_csv(io.BytesIO(audit_csv), dtype=str, keep_default_na=False)
    audit = audit[audit["task"] == "image"]
    last = audit.assign(seq=audit["seq"].astype(int)).sort_values("seq")
    last = last.drop_duplicates(["reader", "item"], keep="last")
    want = {
        (f"img_{r}", item, f): s
        for r, item, p in zip(last["reader"], last["item"], last["payload"])
        for f, s in json.loads(p)["labels"].items()
    }
    labels = pd.read_csv(io.BytesIO(labels_csv), dtype=str, keep_default_na=False)
    labels = labels[labels["source"].str.startswith("img_")]
    have = dict(zip(zip(labels["source"], labels["study_id"], labels["finding"]), labels["state"]))
    return sum(want.get(k) != v for k, v in have.items()) + sum(k not in have for k in want)


def _pct(ms: list[float]) -> dict[str, float]:
    a = np.asarray(ms, dtype=float)
    if a.size == 0:
        return {"n": 0, "p50": float("nan"), "p95": float("nan"), "p99": float("nan"), "max": float("nan")}
    return {
        "n": int(a.size),
        "p50": float(np.percentile(a, 50)),
        "p95": float(np.percentile(a, 95)),
        "p99": float(np.percentile(a, 99)),
        "max": float(a.max()),
    }


def _serve(url: str, port: int, tree: Path) -> subprocess.Popen:
    from reader_images import _SERVE, _wait_up

    proc = subprocess.Popen(
        [sys.executable, "-c", _SERVE, url, str(port), "0"],
        env={**os.environ, "PYTHONPATH": str(tree)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    _wait_up(f"http://127.0.0.1:{port}", proc)
    return proc


def study_with_history(url: str, root: Path, n_images: int, n_subs: int, n_readers: int) -> dict[str, object]:
    """A study of ``n_readers`` readers (+ a resolver and an organiser) in the folder ``root`` at ``url``,
    with ``n_subs`` image labels per reader written straight into its log, its derived tables rebuilt from
    the log (as on a server's first open): the tokens, the organiser's, and the seconds each step took."""
    import sqlalchemy as sa
    from reader_history import _history, _study

    from cxreval.reader.store import ReaderStore
    from cxreval.reader.study import load_study

    store, tokens = ReaderStore.create(url, load_study(_study(root, n_images, n_readers)))
    org = store.add_reader("organiser", role="organiser")
    store.close()
    t_hist = _history(url, n_images, n_subs, n_readers)
    eng = sa.create_engine(url.replace("postgresql://", "postgresql+psycopg://", 1))
    with eng.begin() as conn:  # rebuilt from the log on open
        for t in ("latest", "progress", "conflicts"):
            conn.exec_driver_sql(f"DROP TABLE IF EXISTS {t}")
    eng.dispose()
    t0 = time.perf_counter()
    ReaderStore.open(url).close()
    return {"tokens": tokens, "organiser": org, "history_s": t_hist, "derived_s": time.perf_counter() - t0}


def _in_request(client: object, log: dict[str, float]) -> dict[str, dict]:
    """A server without background jobs: the export (``GET /api/organiser/export``, answered once made) and
    then the integrity check (``GET /api/organiser/integrity``), as its organiser page asks for them."""
    t0 = time.perf_counter()
    r = client.get("/api/organiser/export")  # type: ignore[attr-defined]
    log["export"] = time.perf_counter() - t0
    ic = client.get("/api/organiser/integrity")  # type: ignore[attr-defined]
    log["integrity"] = time.perf_counter() - t0
    meta = json.loads(zipfile.ZipFile(io.BytesIO(r.content)).read("export.json"))
    return {
        "export": {"state": "done" if r.status_code == 200 else "failed", "result": meta, "zip": r.content},
        "integrity": {"state": "done" if ic.status_code == 200 else "failed", "result": ic.json()},
    }


def _jobs(client: object, log: dict[str, float]) -> dict[str, dict]:
    """Start the export and the integrity check; poll both until done; their jobs, with the seconds from
    the start to done (as the poll saw it) in ``log``. A server without background jobs: :func:`_in_request`."""
    t0 = time.perf_counter()
    if client.post("/api/organiser/jobs?kind=nothing").status_code in (404, 405):  # type: ignore[attr-defined]
        return _in_request(client, log)
    ids = {k: client.post(f"/api/organiser/jobs?kind={k}").json()["id"] for k in ("export", "integrity")}  # type: ignore[attr-defined]
    done: dict[str, dict] = {}
    while len(done) < len(ids):
        time.sleep(POLL_S)
        for kind, job_id in ids.items():
            if kind in done:
                continue
            job = client.get(f"/api/organiser/jobs/{job_id}").json()  # type: ignore[attr-defined]
            if job["state"] in ("done", "failed"):
                done[kind], log[kind] = job, time.perf_counter() - t0
            if time.perf_counter() - t0 > 1800:
                raise RuntimeError(f"the {kind} job did not finish in 30 minutes: {job}")
    return done


def measure(
    url: str,
    *,
    n_images: int = 2000,
    n_subs: int = 2500,
    n_readers: int = 8,
    interval: float = 1.0,
    baseline_s: float = 10.0,
    tree: Path = ROOT / "src",
    rounds: int = 3,
) -> dict[str, object]:
    """Latency (ms) of the readers' requests without and with the organiser's export and integrity check
    running, the jobs' seconds, and the export's rows disagreeing with its audit log; the server runs the
    source tree ``tree`` (a tree without background jobs exports and checks in the request)."""
    import httpx
    from reader_history import _free_port

    with tempfile.TemporaryDirectory(prefix="cxreval-bench-export-") as tmp:
        made = study_with_history(url, Path(tmp) / "s", n_images, n_subs, n_readers)
        tokens = made["tokens"]
        port = _free_port()
        proc = _serve(url, port, tree)
        ctx = mp.get_context("fork")
        stop, out = ctx.Event(), ctx.Queue()
        zips: list[bytes] = []
        readers = [
            ctx.Process(target=_reader, args=((port, tokens[f"r{k}"], n_images, interval, stop, out),))  # type: ignore[index]
            for k in range(n_readers)
        ]
        took: dict[str, list[float]] = {"export": [], "integrity": []}
        idle: list[tuple[float, float]] = []
        busy: list[tuple[float, float]] = []
        try:
            for p in readers:
                p.start()
            time.sleep(2.0)  # every reader under way
            h = {"Authorization": f"Bearer {made['organiser']}"}
            with httpx.Client(base_url=f"http://127.0.0.1:{port}", headers=h, timeout=600) as c:
                for _round in range(rounds):  # idle and busy windows in turn: the machine's own load drifts
                    t0 = time.time()
                    time.sleep(baseline_s)
                    idle.append((t0, time.time()))
                    log: dict[str, float] = {}
                    jobs = _jobs(c, log)
                    busy.append((idle[-1][1], time.time()))
                    for kind in took:
                        took[kind].append(log[kind])
                    export = jobs["export"]
                    if export["state"] != "done" or jobs["integrity"]["state"] != "done":
                        raise RuntimeError(f"a job failed: {jobs}")
                    body = export.get("zip") or c.get(f"/api/organiser/jobs/{export['id']}/file").content
                    zips.append(body)  # checked once the readers stop (the check takes CPU)
                stop.set()
                got = [x for _ in readers for x in out.get(timeout=120)]
        finally:
            stop.set()
            for p in readers:
                p.join(30)
            proc.terminate()
            proc.wait(30)
    json.dump({"got": got, "busy": busy, "idle": idle}, open(os.environ["DUMP"], "w"))
    n_bad = []
    for body in zips:
        zf = zipfile.ZipFile(io.BytesIO(body))
        n_bad.append(disagreements(zf.read("labels.csv"), zf.read("audit.csv")))
    errors = [g for g in got if g[3] != 200]

    def within(windows: list[tuple[float, float]], endpoint: str | None = None) -> dict[str, float]:
        return _pct(
            [
                g[2]
                for g in got
                if g[3] == 200
                and (endpoint is None or g[1] == endpoint)
                and any(a <= g[0] < b for a, b in windows)
            ]
        )

    return {
        "baseline": within(idle),
        "during": within(busy),
        "baseline_submission": within(idle, "submission"),
        "during_submission": within(busy, "submission"),
        "export_s": float(np.median(took["export"])),
        "integrity_s": float(np.median(took["integrity"])),
        "busy_s": sum(b - a for a, b in busy),
        "n_errors": len(errors),
        "n_submissions": n_readers * n_subs,
        "n_exported": int(export["result"]["n_submissions"]),
        "disagreeing_rows": int(sum(n_bad)),
        "integrity_ok": bool(jobs["integrity"]["result"]["ok"]),
        "history_s": made["history_s"],
        "derived_s": made["derived_s"],
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--images", type=int, default=2000)
    ap.add_argument("--subs", type=int, default=2500, help="Submissions per reader in the history.")
    ap.add_argument("--readers", type=int, default=8)
    ap.add_argument("--interval", type=float, default=1.0, help="Seconds per round of one reader.")
    ap.add_argument(
        "--baseline", type=float, default=10.0, help="Seconds of readers alone before each round of jobs."
    )
    ap.add_argument("--rounds", type=int, default=3, help="Rounds of (readers alone, then the jobs).")
    ap.add_argument("--backends", default="sqlite,postgresql")
    ap.add_argument(
        "--tree",
        action="append",
        default=[],
        help="NAME=PATH of a source tree (its src/) the server runs; this checkout's when none is given.",
    )
    args = ap.parse_args(argv)
    trees = [t.split("=", 1) for t in args.tree] or [["checkout", str(ROOT / "src")]]
    from reader_images import fresh_db

    for (name, tree), backend in ((t, b) for b in args.backends.split(",") for t in trees):
        if backend == "postgresql" and not os.environ.get("CXREVAL_TEST_POSTGRES_URL"):
            print("postgresql: skipped (CXREVAL_TEST_POSTGRES_URL unset)")
            continue
        with tempfile.TemporaryDirectory(prefix="cxreval-bench-export-db-") as tmp:
            url, drop = fresh_db(backend, Path(tmp))
            try:
                r = measure(
                    url,
                    n_images=args.images,
                    n_subs=args.subs,
                    n_readers=args.readers,
                    interval=args.interval,
                    baseline_s=args.baseline,
                    tree=Path(tree).resolve(),
                    rounds=args.rounds,
                )
            finally:
                drop()  # type: ignore[operator]
        print(name, backend, json.dumps(r))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
