"""Reader-study latency with a long history: item, queue, me, submission and the resolver's endpoints at
``--images`` images x ``--subs`` submissions per reader x ``--readers`` readers (+ 1 resolver), SQLite and
PostgreSQL, for each source tree given (``--tree NAME=PATH/src``, the server and CLI run with that
``PYTHONPATH``), side by side in one run; then ``cxreval reader status`` and ``export`` wall time, CPU time
and peak memory (``ru_maxrss``) on the same database.

The history is written straight into the append-only ``submissions`` table (the schema every tree shares)
in one transaction, once per backend (the study made by the first tree); each tree then opens its own copy
of that database with its own code (its derived tables dropped and rebuilt from the log on open, and that
time is reported). During the timed phase every reader process loops
``me, queue, item, submission`` (one round every ``--interval`` s, or back to back when slower) and the
resolver loops ``queue, item, pixels, adjudication``, for ``--seconds`` s. Latency is the client's: request
sent to answer read. Targets: p95 < 50 ms (reader endpoints), < 100 ms (resolver); status and export
< 10 s and < 500 MB.

What other load on the machine does not inflate, per request (``--single N``): the CPU milliseconds of the
server process and of the database server's processes (``/proc/PID/stat``), over the timed phase and for
each endpoint with one client sending N requests one at a time; and, in process (the tree's app under
Starlette's test client, N requests per endpoint), the SQL statements the database runs per request
(SQLite: its trace callback, BEGIN and COMMIT included; PostgreSQL: every message psycopg waits on --
queries, pings, BEGIN, COMMIT, ROLLBACK -- i.e. the round trips) and the pool checkouts. ``--json`` writes
every figure, with the load average at the start and end of each timed phase.

PostgreSQL runs when ``CXREVAL_TEST_POSTGRES_URL`` is set (tests/reader/start_postgres.sh).

    .venv/bin/python bench/reader.py history --images 20000 --subs 20000 --seconds 30 \\
        --tree branch=src --tree main=/work/main/src [--json FILE] [--results bench/RESULTS.md]
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import platform
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from _reader_clients import FINDINGS, STATES, _client  # noqa: E402
from _reader_cost import CPU, PROFILE, single  # noqa: E402

__all__ = ["main", "parser", "measure", "as_json", "command"]

ENDPOINTS = [
    "me",
    "queue",
    "item",
    "submission",
    "resolver queue",
    "resolver item",
    "resolver pixels",
    "resolver submission",
]
_INIT = """
import json, sys
from cxreval.reader.store import ReaderStore
from cxreval.reader.study import load_study
store, tokens = ReaderStore.create(sys.argv[1], load_study(sys.argv[2]))
print(json.dumps(tokens))
"""
_OPEN = """
import sys, time
import sqlalchemy as sa
from cxreval.reader.store import ReaderStore
url = sys.argv[1]
eng = sa.create_engine(url.replace("postgresql://", "postgresql+psycopg://", 1))
try:
    from cxreval.reader.db import DERIVED_TABLES
except ImportError:  # a tree without derived tables
    DERIVED_TABLES = ()
with eng.begin() as conn:  # written before the bulk history (by the tree that made the log): rebuilt on open
    for t in {*DERIVED_TABLES, "latest", "progress", "conflicts"}:
        conn.exec_driver_sql(f"DROP TABLE IF EXISTS {t}")
eng.dispose()
t0 = time.perf_counter()
ReaderStore.open(url).close()
print(time.perf_counter() - t0)
"""
_MEASURED = """
import json, resource, sys, time
from cxreval.cli.main import main
t0 = time.perf_counter()
code = main(sys.argv[1:])
ru = resource.getrusage(resource.RUSAGE_SELF)
print(json.dumps({"rc": code, "s": time.perf_counter() - t0, "cpu": ru.ru_utime + ru.ru_stime,
                  "mb": ru.ru_maxrss / 1024}), file=sys.stderr)
"""


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _env(tree: str) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(Path(tree).resolve())}


def _study(root: Path, n_images: int, n_readers: int) -> Path:
    from PIL import Image

    (root / "images").mkdir(parents=True)
    img = Image.fromarray(np.random.default_rng(0).integers(0, 256, (64, 64)).astype(np.uint8))
    for i in range(n_images):
        img.save(root / "images" / f"i{i:05d}.png")
    readers = ", ".join(f"r{i}" for i in range(n_readers))
    (root / "study.yaml").write_text(
        f"name: bench\nfindings: [{', '.join(FINDINGS)}]\nimages: images\n"
        f"readers: [{readers}]\nresolvers: [res]\nadjudication:\n  readers: [r0, r1]\n"
    )
    return root / "study.yaml"


def _history(url: str, n_images: int, n_subs: int, n_readers: int) -> float:
    """Append ``n_subs`` image labels per reader (items in turn, so each image is relabelled when
    ``n_subs > n_images``); r0 and r1 disagree on about one image in five. Returns seconds."""
    import sqlalchemy as sa

    eng = sa.create_engine(url.replace("postgresql://", "postgresql+psycopg://", 1))
    md = sa.MetaData()
    s = sa.Table("submissions", md, autoload_with=eng)
    r = sa.Table("readers", md, autoload_with=eng)
    rng = np.random.default_rng(1)
    t0 = time.perf_counter()
    with eng.begin() as conn:
        ids = dict(conn.execute(sa.select(r.c.name, r.c.id)).all())
        base = rng.choice(3, size=(n_images, len(FINDINGS)), p=[0.7, 0.15, 0.15])
        for k in range(n_readers):
            rows = []
            for j in range(n_subs):
                i = j % n_images
                st = base[i].copy()
                if k == 1 and rng.random() < 0.2:
                    st[int(rng.integers(len(FINDINGS)))] = (st[0] + 1) % 3
                labels = {f: STATES[v] for f, v in zip(FINDINGS, st)}
                payload = {
                    "boxes": [
                        {"finding": "Effusion", "x_max": 40.0, "x_min": 4.0, "y_max": 50.0, "y_min": 5.0}
                    ]
                    if labels["Effusion"] != "negative"
                    else [],
                    "labels": labels,
                }
                rows.append(
                    {
                        "id": f"h{k}-{j:07d}-{uuid.uuid4().hex[:8]}",
                        "reader_id": ids[f"r{k}"],
                        "task": "image",
                        "item": f"i{i:05d}",
                        "payload": json.dumps(payload, sort_keys=True),
                        "client_time": None,
                        "server_time": f"2026-01-01T00:00:00.{j:06d}+00:00",
                    }
                )
            for a in range(0, len(rows), 5000):
                conn.execute(sa.insert(s), rows[a : a + 5000])
    eng.dispose()
    return time.perf_counter() - t0


def _serve(tree: str, url: str, port: int) -> subprocess.Popen:
    import httpx

    proc = subprocess.Popen(
        [sys.executable, "-m", "cxreval", "reader", "serve", "--db", url, "--port", str(port)],
        env=_env(tree),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    for _ in range(1200):
        if proc.poll() is not None:
            raise RuntimeError(f"server exited: {proc.stderr.read().decode()[-500:]}")  # type: ignore[union-attr]
        try:
            if httpx.get(f"http://127.0.0.1:{port}/", timeout=1).status_code == 200:
                return proc
        except httpx.HTTPError:
            time.sleep(0.1)
    raise RuntimeError("server did not start")


def _measured(tree: str, args: list[str], timeout: float) -> dict[str, float]:
    try:
        r = subprocess.run(
            [sys.executable, "-c", _MEASURED, *args],
            env=_env(tree),
            capture_output=True,
            text=True,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired:
        return {"s": float("inf"), "cpu": float("nan"), "mb": float("nan")}
    got = json.loads(r.stderr.strip().splitlines()[-1])
    if got["rc"] != 0:
        raise RuntimeError(f"{args}: {r.stderr[-500:]}")
    return got


def make_log(tree: str, url: str, study: Path, args: argparse.Namespace) -> tuple[dict[str, str], float]:
    """The study made by ``tree``'s ``ReaderStore.create`` and the bulk history appended to its log: the
    tokens and the seconds the history took."""
    init = subprocess.run(
        [sys.executable, "-c", _INIT, url, str(study)],
        env=_env(tree),
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(init.stdout), _history(url, args.images, args.subs, args.readers)


def _copy_db(url: str, name: str, tmp: Path, pg: str | None) -> tuple[str, object]:
    """A copy of the database ``url`` (SQLite: the backup API; PostgreSQL: ``CREATE DATABASE ... TEMPLATE``)
    and the function that drops it."""
    if url.startswith("sqlite"):
        import sqlite3

        dst = tmp / f"{name}-{uuid.uuid4().hex[:6]}.db"
        with sqlite3.connect(url.split("///", 1)[1]) as a, sqlite3.connect(dst) as b:
            a.backup(b)
        a.close()
        b.close()
        return f"sqlite:///{dst}", (lambda: None)
    return _postgres_db(pg, template=url.rsplit("/", 1)[1])  # type: ignore[arg-type]


def run(
    tree: str, url: str, tokens: dict[str, str], t_hist: float, args: argparse.Namespace, tmp: Path
) -> dict[str, object]:
    """One tree on its own copy of the study database: open (its derived tables rebuilt from the log), the
    timed phase, the one-client phase, the in-process profile, then status and export (``phases_s``: the
    wall seconds of each)."""
    clock = [time.perf_counter()]
    opened = subprocess.run(
        [sys.executable, "-c", _OPEN, url], env=_env(tree), capture_output=True, text=True
    )
    if opened.returncode:
        raise RuntimeError(f"opening the study failed: {opened.stderr[-1500:]}")
    t_open = float(opened.stdout.strip().splitlines()[-1])
    clock.append(time.perf_counter())
    port = _free_port()
    proc = _serve(tree, url, port)
    clock.append(time.perf_counter())
    load = [os.getloadavg()[0]]
    try:
        cpu = CPU(proc.pid, url)
        cpu.start()
        q: mp.Queue = mp.Queue()
        clients = [("reader", tokens[f"r{k}"]) for k in range(args.readers)] + [("resolver", tokens["res"])]
        procs = [
            mp.Process(target=_client, args=((port, tok, role, args.images, args.seconds, args.interval, q),))
            for role, tok in clients
        ]
        for p in procs:
            p.start()
        got = [q.get(timeout=args.seconds + 1200) for _ in procs]
        for p in procs:
            p.join()
        load_cpu = cpu.used()
        load.append(os.getloadavg()[0])
        clock.append(time.perf_counter())
        one = single(port, tokens, args.images, args.single, cpu, FINDINGS) if args.single else {}
        clock.append(time.perf_counter())
    finally:
        proc.terminate()
        proc.wait(30)
    lat: dict[str, list[float]] = {}
    errors: list[str] = []
    for g_lat, g_err in got:
        for k, v in g_lat.items():
            lat.setdefault(k, []).extend(v)
        errors += g_err
    stats = {
        k: (len(v), float(np.percentile(v, 50)) * 1000, float(np.percentile(v, 95)) * 1000)
        for k, v in lat.items()
        if v
    }
    n_requests = sum(len(v) for v in lat.values())
    profile = {}
    if args.single:
        pr = subprocess.run(
            [sys.executable, "-c", PROFILE, url, json.dumps(tokens), str(args.single)],
            env=_env(tree),
            capture_output=True,
            text=True,
        )
        if pr.returncode:
            raise RuntimeError(f"profiling failed: {pr.stderr[-1500:]}")
        profile = json.loads(pr.stdout.strip().splitlines()[-1])
    clock.append(time.perf_counter())
    status = _measured(tree, ["reader", "status", "--db", url], args.cli_timeout)
    clock.append(time.perf_counter())
    export = _measured(
        tree,
        ["reader", "export", "--db", url, "--out", str(tmp / f"export-{uuid.uuid4().hex[:6]}")],
        args.cli_timeout,
    )
    clock.append(time.perf_counter())
    phases = dict(
        zip(
            ("open", "server start", "timed", "one client", "profile", "status", "export"),
            np.diff(clock).round(1).tolist(),
        )
    )
    return {
        "history_s": t_hist,
        "phases_s": phases,
        "open_s": t_open,
        "stats": stats,
        "errors": errors[:5],
        "n_errors": len(errors),
        "load_server_cpu_ms": load_cpu[0] / max(n_requests, 1) * 1000,
        "load_db_cpu_ms": load_cpu[1] / max(n_requests, 1) * 1000,
        "loadavg": load,
        "single": one,
        "profile": profile,
        "status": status,
        "export": export,
    }


def _postgres_db(base: str, template: str | None = None) -> tuple[str, object]:
    import sqlalchemy as sa

    name = "cxr_hist_" + uuid.uuid4().hex[:8]
    admin = sa.create_engine(
        base.replace("postgresql://", "postgresql+psycopg://", 1), isolation_level="AUTOCOMMIT"
    )
    with admin.connect() as conn:
        conn.execute(sa.text(f"CREATE DATABASE {name}" + (f" TEMPLATE {template}" if template else "")))

    def drop() -> None:
        with admin.connect() as conn:
            conn.execute(sa.text(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
        admin.dispose()

    return base.rsplit("/", 1)[0] + "/" + name, drop


def _fmt(v: float) -> str:
    return "-" if v != v else (">limit" if v == float("inf") else f"{v:.0f}" if v >= 100 else f"{v:.1f}")


def parser() -> argparse.ArgumentParser:
    """The command line (``parser().parse_args([...])`` gives :func:`measure` its settings)."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--images", type=int, default=2000)
    ap.add_argument("--subs", type=int, default=2000, help="Submissions per reader in the history.")
    ap.add_argument("--readers", type=int, default=8)
    ap.add_argument("--seconds", type=float, default=60.0, help="Timed phase per tree and backend.")
    ap.add_argument(
        "--interval",
        type=float,
        default=1.0,
        help="Seconds per round of one client (a reader labelling an image a second).",
    )
    ap.add_argument("--cli-timeout", type=float, default=300.0, help="Limit for status and export.")
    ap.add_argument("--tree", action="append", required=True, help="NAME=PATH of a source tree (its src/).")
    ap.add_argument("--backends", default="sqlite,postgresql")
    ap.add_argument(
        "--single",
        type=int,
        default=100,
        help="Requests per endpoint in the one-client phase "
        "after the timed one (server and database CPU ms per request) and in the in-process profile "
        "(SQL statements and pool checkouts per request); 0 skips both.",
    )
    ap.add_argument("--results", type=Path, help="Append the tables to this RESULTS.md.")
    ap.add_argument(
        "--json", type=Path, help="Write every figure of every tree and backend to this JSON file."
    )
    return ap


def measure(args: argparse.Namespace) -> list[tuple[str, str, dict]]:
    """``(tree, backend, figures)`` of every tree on every backend (see the module docstring)."""
    trees = [t.split("=", 1) for t in args.tree]
    pg = os.environ.get("CXREVAL_TEST_POSTGRES_URL")
    rows = []
    with tempfile.TemporaryDirectory() as tmp_:
        tmp = Path(tmp_)
        study = _study(tmp / "study", args.images, args.readers)
        for backend in args.backends.split(","):
            if backend == "postgresql" and not pg:
                print("CXREVAL_TEST_POSTGRES_URL unset: PostgreSQL skipped", file=sys.stderr)
                continue
            # one log per backend, made by the first tree; each tree runs on its own copy of it
            if backend == "sqlite":
                log_url, drop_log = f"sqlite:///{tmp / 'log.db'}", (lambda: None)
            else:
                log_url, drop_log = _postgres_db(pg)  # type: ignore[arg-type]
            try:
                tokens, t_hist = make_log(trees[0][1], log_url, study, args)
                for name, tree in trees:
                    url, drop = _copy_db(log_url, name, tmp, pg)
                    try:
                        res = run(tree, url, tokens, t_hist, args, tmp)
                    finally:
                        drop()  # type: ignore[operator]
                    print(name, backend, json.dumps(res), file=sys.stderr, flush=True)
                    rows.append((name, backend, res))
            finally:
                drop_log()  # type: ignore[operator]
    return rows


def command(args: argparse.Namespace) -> str:
    """The command line that reruns ``args``."""
    return (
        f"bench/reader.py history --images {args.images} --subs {args.subs} --readers {args.readers} "
        f"--seconds {args.seconds:g} --interval {args.interval:g} --single {args.single} "
        f"--backends {args.backends} " + " ".join(f"--tree {t}" for t in args.tree)
    )


def as_json(args: argparse.Namespace, rows: list[tuple[str, str, dict]]) -> dict[str, object]:
    """Every figure of :func:`measure` with the command, CPU count and Python version."""
    trees = dict(t.split("=", 1) for t in args.tree)
    return {
        "command": command(args),
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "runs": [{"tree": n, "path": trees[n], "backend": b, **r} for n, b, r in rows],
    }


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    trees = [t.split("=", 1) for t in args.tree]
    rows = measure(args)
    head = (
        "| tree | backend | "
        + " | ".join(f"{e} p50 / p95 ms" for e in ENDPOINTS)
        + " | status s (CPU s) / MB | export s (CPU s) / MB | log built s | derived built s |"
    )
    lines = [head, "|" + "---|" * (len(ENDPOINTS) + 6)]
    for name, backend, r in rows:
        st = r["stats"]
        cells = [f"{_fmt(st[e][1])} / {_fmt(st[e][2])} (n={st[e][0]})" if e in st else "-" for e in ENDPOINTS]
        cli = [f"{_fmt(r[c]['s'])} ({_fmt(r[c]['cpu'])}) / {_fmt(r[c]['mb'])}" for c in ("status", "export")]
        lines.append(
            f"| {name} | {backend} | " + " | ".join(cells) + f" | {cli[0]} | {cli[1]} | "
            f"{r['history_s']:.0f} | {r['open_s']:.1f} |"
        )
    lines += [
        "",
        "| tree | backend | load average (start, end) | server CPU ms / request | database CPU ms / "
        "request |",
        "|---|---|---|---|---|",
    ]
    for name, backend, r in rows:
        lines.append(
            f"| {name} | {backend} | {r['loadavg'][0]:.1f}, {r['loadavg'][1]:.1f} | "
            f"{r['load_server_cpu_ms']:.2f} | {r['load_db_cpu_ms']:.2f} |"
        )
    if args.single:
        lines += [
            "",
            "| tree | backend | endpoint | one client p50 / p95 ms | server CPU ms | database CPU ms | "
            "SQL statements | pool checkouts |",
            "|---|---|---|---|---|---|---|---|",
        ]
        for name, backend, r in rows:
            for e in [*ENDPOINTS, *(k for k in r["profile"] if k not in ENDPOINTS)]:
                one, pr = r["single"].get(e), r["profile"].get(e)
                lines.append(
                    f"| {name} | {backend} | {e} | "
                    + (
                        f"{_fmt(one['p50'])} / {_fmt(one['p95'])} | {one['server_cpu_ms']:.2f} | "
                        f"{one['db_cpu_ms']:.2f}"
                        if one
                        else "- | - | -"
                    )
                    + " | "
                    + (f"{pr['statements']:.2f} | {pr['checkouts']:.2f}" if pr else "- | -")
                    + " |"
                )
    table = "\n".join(lines)
    print(table)
    if args.json:
        args.json.write_text(json.dumps(as_json(args, rows), indent=1))
    if args.results:
        text = (
            f"\n## Reader study: latency with a long history\n\n"
            f"`{command(args)}`: {args.images} images, {args.subs} "
            f"submissions per reader x {args.readers} readers in the log, + 1 resolver; {args.readers} reader "
            f"processes loop me, queue, item, submission and the resolver queue, item, pixels, adjudication "
            f"for {args.seconds:g} s (one round per {args.interval:g} s, back to back when slower); client "
            f"latency. Then one client, one request at a time, {args.single} requests per endpoint: the server "
            f"process's and the database server's CPU per request (from /proc, what other load does not "
            f"inflate), and in process (the tree's app under Starlette's test client) the SQL statements the "
            f"database runs per request (SQLite: its trace callback, BEGIN/COMMIT included; PostgreSQL: every "
            f"message psycopg waits on: queries, pings, BEGIN, COMMIT, ROLLBACK = round trips) and pool "
            f"checkouts. {os.cpu_count()} CPU(s), Python {platform.python_version()}. Trees: "
            + ", ".join(f"{n} = `{t}`" for n, t in trees)
            + ". `-`: no request finished in the timed phase.\n\n"
            f"{table}\n"
        )
        with open(args.results, "a") as fh:
            fh.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
