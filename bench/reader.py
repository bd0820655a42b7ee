"""Submission latency of the reader-study server with 8 concurrent readers, SQLite and PostgreSQL.

Starts ``cxreval reader serve`` (one uvicorn process) on a throw-away study, then 8 reader *processes*
(not threads: the clients must not share a GIL with each other) each POST ``--n`` image-label
submissions back to back over a keep-alive connection and time every request from send to the
committed answer. Prints median / p95 / p99 latency and throughput per backend; ``--results`` appends
the table to bench/RESULTS.md. There is no peer tool for this; the target is p95 < 50 ms.

PostgreSQL runs when ``CXREVAL_TEST_POSTGRES_URL`` points at a server (tests/reader/start_postgres.sh
starts one); a fresh database is created and dropped.

    .venv/bin/python bench/reader.py --n 300 [--results bench/RESULTS.md]

``bench/reader.py history ...`` runs :mod:`reader_history` instead (latency with a long history, item,
queue, me, submission and the resolver's endpoints, side by side for several source trees).
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import platform
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import numpy as np

__all__ = ["main"]

FINDINGS = ["Effusion", "Cardiomegaly", "Nodule", "Mass"]
STATES = ["negative", "uncertain", "positive"]


def _study(root: Path, n_readers: int) -> Path:
    from PIL import Image

    rng = np.random.default_rng(0)
    for i in range(20):
        (root / "images").mkdir(parents=True, exist_ok=True)
        Image.fromarray(rng.integers(0, 256, (256, 256)).astype(np.uint8)).save(
            root / "images" / f"i{i:02d}.png"
        )
    readers = ", ".join(f"r{i}" for i in range(n_readers))
    (root / "study.yaml").write_text(
        f"name: bench\nfindings: [{', '.join(FINDINGS)}]\nimages: images\nreaders: [{readers}]\n"
    )
    return root / "study.yaml"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _reader(args: tuple[str, str, list[str], int, int, float, mp.Queue]) -> None:
    """One reader: stdlib http.client over one keep-alive connection (a light client, so that the
    clients' own CPU disturbs the server as little as possible on a small machine)."""
    import http.client
    import json

    base, token, items, n, warmup, interval, out = args
    host, port = base.rsplit("//", 1)[1].split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=60)
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
    lat, server = [], []
    rng = np.random.default_rng(abs(hash(token)) % 2**32)
    time.sleep(rng.uniform(0, interval))  # readers do not start in lockstep
    for k in range(warmup + n):
        labels = {f: STATES[(k + j) % 3] for j, f in enumerate(FINDINGS)}
        body = json.dumps(
            {
                "id": uuid.uuid4().hex,
                "task": "image",
                "item": items[k % len(items)],
                "labels": labels,
                "boxes": [{"finding": "Effusion", "x_min": 10, "y_min": 20, "x_max": 100, "y_max": 120}]
                if labels["Effusion"] != "negative"
                else [],
            }
        )
        t0 = time.perf_counter()
        conn.request("POST", "/api/submissions", body=body, headers=headers)
        r = conn.getresponse()
        data = r.read()
        dt = time.perf_counter() - t0
        if r.status != 200:
            raise RuntimeError(data.decode())
        if k >= warmup:
            lat.append(dt)
            server.append(float(r.getheader("server-timing", "app;dur=nan").split("dur=")[1]) / 1000)
        if interval:
            time.sleep(max(0.0, interval - dt))
    conn.close()
    out.put((lat, server))


def run_backend(url: str, n: int, readers: int, warmup: int, interval: float = 0.0) -> dict[str, float]:
    """Latency (ms) statistics of ``readers`` reader processes against a fresh server on ``url``; each
    submits back to back (``interval=0``) or one submission every ``interval`` seconds."""
    import httpx

    from cxreval.reader.store import ReaderStore
    from cxreval.reader.study import load_study

    with tempfile.TemporaryDirectory() as tmp:
        store, tokens = ReaderStore.create(url, load_study(_study(Path(tmp) / "s", readers)))
        items = sorted(store.items["image"])
        port = _free_port()
        proc = subprocess.Popen(
            [sys.executable, "-m", "cxreval", "reader", "serve", "--db", url, "--port", str(port)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        base = f"http://127.0.0.1:{port}"
        try:
            for _ in range(600):
                try:
                    if httpx.get(base + "/", timeout=1).status_code == 200:
                        break
                except httpx.HTTPError:
                    time.sleep(0.05)
            q: mp.Queue = mp.Queue()
            procs = [
                mp.Process(target=_reader, args=((base, tok, items, n, warmup, interval, q),))
                for tok in tokens.values()
            ]
            t0 = time.perf_counter()
            for p in procs:
                p.start()
            got = [q.get(timeout=600) for _ in procs]
            lat = np.concatenate([np.asarray(g[0]) for g in got]) * 1000
            srv = np.concatenate([np.asarray(g[1]) for g in got]) * 1000
            wall = time.perf_counter() - t0
            for p in procs:
                p.join()
        finally:
            proc.terminate()
            proc.wait(10)
        n_stored = len(store.submissions())
        assert n_stored == readers * (n + warmup), n_stored
        store.engine.dispose()
    return {
        "n": len(lat),
        "median": float(np.median(lat)),
        "p95": float(np.percentile(lat, 95)),
        "p99": float(np.percentile(lat, 99)),
        "max": float(lat.max()),
        "throughput": len(lat) / wall,
        "server_median": float(np.median(srv)),
        "server_p95": float(np.percentile(srv, 95)),
    }


def _postgres_db(base: str) -> tuple[str, object]:
    import sqlalchemy as sa

    from cxreval.reader.db import make_engine

    name = "cxr_bench_" + uuid.uuid4().hex[:8]
    admin = make_engine(base).execution_options(isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(sa.text(f"CREATE DATABASE {name}"))

    def drop() -> None:
        with admin.connect() as conn:
            conn.execute(sa.text(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)"))

    return base.rsplit("/", 1)[0] + "/" + name, drop


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["history"]:
        sys.path.insert(0, str(Path(__file__).parent))
        from reader_history import main as history

        return int(history(argv[1:]))
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=300, help="Timed submissions per reader.")
    ap.add_argument("--readers", type=int, default=8, help="Concurrent readers (processes).")
    ap.add_argument("--warmup", type=int, default=20, help="Untimed submissions per reader first.")
    ap.add_argument(
        "--interval",
        type=float,
        default=0.1,
        help="Seconds between one reader's submissions in the "
        "paced run (a fast human needs about 1 s per image).",
    )
    ap.add_argument("--results", type=Path, help="Append the table to this RESULTS.md.")
    args = ap.parse_args(argv)
    rows = []
    modes = [("back to back", 0.0), (f"one every {args.interval * 1000:g} ms", args.interval)]
    for mode, interval in modes:
        with tempfile.TemporaryDirectory() as tmp:
            rows.append(
                (
                    "SQLite (WAL, synchronous=FULL)",
                    mode,
                    run_backend(f"sqlite:///{tmp}/bench.db", args.n, args.readers, args.warmup, interval),
                )
            )
    pg = os.environ.get("CXREVAL_TEST_POSTGRES_URL")
    for mode, interval in modes if pg else []:
        url, drop = _postgres_db(pg)  # type: ignore[arg-type]
        try:
            rows.append(
                (
                    "PostgreSQL (psycopg 3, default fsync)",
                    mode,
                    run_backend(url, args.n, args.readers, args.warmup, interval),
                )
            )
        finally:
            drop()  # type: ignore[operator]
    if not pg:
        print("CXREVAL_TEST_POSTGRES_URL unset: PostgreSQL skipped", file=sys.stderr)
    lines = [
        "| backend | each reader submits | readers | submissions | median ms | p95 ms | p99 ms | max ms | "
        "server median ms | server p95 ms | submissions/s |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for name, mode, r in rows:
        lines.append(
            f"| {name} | {mode} | {args.readers} | {r['n']} | {r['median']:.1f} | {r['p95']:.1f} | "
            f"{r['p99']:.1f} | {r['max']:.1f} | {r['server_median']:.1f} | {r['server_p95']:.1f} | "
            f"{r['throughput']:.0f} |"
        )
    table = "\n".join(lines)
    print(table)
    if args.results:
        import sqlalchemy
        import uvicorn

        text = (
            f"\n## Reader study: submission latency\n\n"
            f"`bench/reader.py --n {args.n}`: one `cxreval reader serve` process (uvicorn {uvicorn.__version__}, "
            f"SQLAlchemy {sqlalchemy.__version__}), {args.readers} reader processes each POSTing {args.n} image "
            f"labels (4 findings + 1 box) back to back after {args.warmup} untimed ones; latency = send to "
            f"committed answer, seen by the client (server: body read to commit, from the `Server-Timing` header); readers submit back to back (a stress test) or paced. "
            f"{os.cpu_count()} CPU(s), load average {os.getloadavg()[0]:.1f} at the end (the machine is shared "
            f"with other work), Python {platform.python_version()}. Target: p95 < 50 ms. There is no peer tool "
            "to compare with.\n\n"
            f"{table}\n"
        )
        with open(args.results, "a") as fh:
            fh.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
