"""Reader study: submission latency of ``cxreval reader serve`` with concurrent reader processes.

Wraps ``bench/reader.py`` (its ``run_backend`` measures): one uvicorn server on a throw-away study, reader
processes POSTing image labels over keep-alive connections, latency from send to committed answer. SQLite always;
PostgreSQL when ``CXREVAL_TEST_POSTGRES_URL`` points at a server. There is no peer tool; the target is p95 < 50 ms.
"""

from __future__ import annotations

import os

from suites._common import Context, Figures, Part, bench_module

TITLE = "Reader study: submission latency"

__all__ = ["PARTS", "TITLE"]


def submission_latency(ctx: Context) -> Figures:
    rd = bench_module("reader")
    n, readers, warmup = ctx.size(20, 300), 8, ctx.size(5, 20)
    rows = []
    for mode, interval in (("back to back", 0.0), ("one every 100 ms", 0.1)):
        url = f"sqlite:///{ctx.tmp}/bench_{interval}.db"
        rows.append(("SQLite (WAL, synchronous=FULL)", mode, rd.run_backend(url, n, readers, warmup, interval)))
    pg = os.environ.get("CXREVAL_TEST_POSTGRES_URL")
    for mode, interval in (("back to back", 0.0), ("one every 100 ms", 0.1)) if pg else ():
        url, drop = rd._postgres_db(pg)
        try:
            rows.append(("PostgreSQL (psycopg 3)", mode, rd.run_backend(url, n, readers, warmup, interval)))
        finally:
            drop()
    fig = Figures()
    t = fig.table(f"{readers} reader processes, {n} timed submissions each after {warmup} untimed",
                  ["backend", "each reader submits", "submissions", "median ms", "p95 ms", "p99 ms", "max ms",
                   "server median ms", "server p95 ms", "submissions/s"])
    for name, mode, r in rows:
        t.add(name, mode, r["n"], round(r["median"], 1), round(r["p95"], 1), round(r["p99"], 1), round(r["max"], 1),
              round(r["server_median"], 1), round(r["server_p95"], 1), round(r["throughput"]))
        fig.checked[f"{name} | {mode} | submissions"] = str(r["n"])
    if not pg:
        t.notes.append("PostgreSQL not measured: CXREVAL_TEST_POSTGRES_URL unset")
    return fig


PARTS = (
    Part("submission_latency", "Median / p95 / p99 latency and throughput of image-label submissions by 8 "
         "concurrent reader processes, back to back and paced (20 submissions each quick, 300 full).",
         submission_latency),
)
