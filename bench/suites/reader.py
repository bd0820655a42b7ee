"""Reader study: submission latency of ``cxreval reader serve`` with concurrent reader processes, and every
endpoint's latency over a long history.

Wraps ``bench/reader.py`` (its ``run_backend`` measures): one uvicorn server on a throw-away study, reader
processes POSTing image labels over keep-alive connections, latency from send to committed answer. SQLite always;
PostgreSQL when ``CXREVAL_TEST_POSTGRES_URL`` points at a server. There is no peer tool; the target is p95 < 50 ms.
The ``history`` part wraps ``bench/reader_history.py`` (its ``measure``) on this checkout: reader and resolver
endpoints, ``status`` and ``export`` on a study whose log already holds the history (2,000 images x 2,000
submissions per reader quick; 20,000 x 20,000 full, the acceptance size), 8 readers.
The ``images`` part wraps ``bench/reader_images.py`` (its ``images``): 8 readers at once on 2048 x 2500 16-bit
radiographs built by the bench, time from moving to the next study to its display rendition decoded and
windowed, with the page's prefetch and the server's read-ahead and without either (the display renditions
made ahead at init, as ``cxreval reader init`` does, in both); targets p95 < 150 ms and < 400 ms. The ``status`` part (its ``status``): ``GET /api/organiser/status`` with 8 readers x 20,000
submissions in the log (2,000 quick); target p95 < 300 ms. The ``render`` part wraps ``bench/reader_render.py``
(its ``measure``): one reader's page in headless Chromium at 1920 x 1080, 3840 x 2160 and 1920 x 1080 at
device pixel ratio 2, the time from moving to a prefetched next study until it is drawn and rasterised,
measured in the page with ``performance.now``; target p95 <= 50 ms. The ``export_under_load`` part wraps
``bench/reader_export.py`` (its ``measure``): 8 readers at one round a second (``me, queue, item,
submission``) while the organiser runs an export and an integrity check as background jobs, on a study whose
log holds 8 x 2,500 submissions (quick) or 8 x 18,000 (full); readers' p50 / p95 / p99 alone and while the
jobs run (target p95 <= 50 ms), the jobs' time, and each export's label rows that disagree with its own
audit log (target 0).
"""

from __future__ import annotations

import os

from suites._common import ROOT, Context, Figures, Part, bench_module

TITLE = "Reader study: submission latency, endpoints over a long history"

__all__ = ["PARTS", "TITLE"]


def submission_latency(ctx: Context) -> Figures:
    rd = bench_module("reader")
    n, readers, warmup = ctx.size(20, 300), 8, ctx.size(5, 20)
    rows = []
    for mode, interval in (("back to back", 0.0), ("one every 100 ms", 0.1)):
        url = f"sqlite:///{ctx.tmp}/bench_{interval}.db"
        rows.append(
            ("SQLite (WAL, synchronous=FULL)", mode, rd.run_backend(url, n, readers, warmup, interval))
        )
    pg = os.environ.get("CXREVAL_TEST_POSTGRES_URL")
    for mode, interval in (("back to back", 0.0), ("one every 100 ms", 0.1)) if pg else ():
        url, drop = rd._postgres_db(pg)
        try:
            rows.append(("PostgreSQL (psycopg 3)", mode, rd.run_backend(url, n, readers, warmup, interval)))
        finally:
            drop()
    fig = Figures()
    t = fig.table(
        f"{readers} reader processes, {n} timed submissions each after {warmup} untimed",
        [
            "backend",
            "each reader submits",
            "submissions",
            "median ms",
            "p95 ms",
            "p99 ms",
            "max ms",
            "server median ms",
            "server p95 ms",
            "submissions/s",
        ],
    )
    for name, mode, r in rows:
        t.add(
            name,
            mode,
            r["n"],
            round(r["median"], 1),
            round(r["p95"], 1),
            round(r["p99"], 1),
            round(r["max"], 1),
            round(r["server_median"], 1),
            round(r["server_p95"], 1),
            round(r["throughput"]),
        )
        fig.checked[f"{name} | {mode} | submissions"] = str(r["n"])
    if not pg:
        t.notes.append("PostgreSQL not measured: CXREVAL_TEST_POSTGRES_URL unset")
    return fig


def history(ctx: Context) -> Figures:
    rh = bench_module("reader_history")
    size = str(ctx.size(2000, 20000))
    args = rh.parser().parse_args(
        [
            "--images",
            size,
            "--subs",
            size,
            "--seconds",
            str(ctx.size(10, 30)),
            "--single",
            str(ctx.size(10, 50)),
            "--tree",
            f"checkout={ROOT / 'src'}",
        ]
    )
    rows = rh.measure(args)
    fig = Figures()
    t = fig.table(
        f"{args.readers} readers + 1 resolver, {size} images x {size} submissions per reader in the log, "
        f"{args.seconds:g} s timed per backend",
        ["backend", "endpoint", "requests", "p50 ms", "p95 ms", "target p95 ms"],
    )
    s = fig.table(
        "`cxreval reader status` and `export` on the same database",
        ["backend", "command", "wall s", "CPU s", "peak RSS MB"],
    )
    for _tree, backend, r in rows:
        for endpoint in rh.ENDPOINTS:
            n, p50, p95 = r["stats"][endpoint]
            t.add(
                backend,
                endpoint,
                n,
                round(p50, 1),
                round(p95, 1),
                100 if endpoint.startswith("resolver") else 50,
            )
        for cmd in ("status", "export"):
            s.add(backend, cmd, round(r[cmd]["s"], 2), round(r[cmd]["cpu"], 2), round(r[cmd]["mb"]))
            if backend == "sqlite":  # checked on every machine (PostgreSQL only where a server is given)
                fig.checked[f"{backend} | {cmd} | exit"] = str(r[cmd]["rc"])
        if backend == "sqlite":
            fig.checked[f"{backend} | request errors"] = str(r["n_errors"])
    if not os.environ.get("CXREVAL_TEST_POSTGRES_URL"):
        t.notes.append(
            "PostgreSQL not measured: CXREVAL_TEST_POSTGRES_URL unset (tests/reader/start_postgres.sh)"
        )
    return fig


def _load() -> str:
    return f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPU(s)"


def _backends() -> list[str]:
    return ["sqlite"] + (["postgresql"] if os.environ.get("CXREVAL_TEST_POSTGRES_URL") else [])


def images(ctx: Context) -> Figures:
    ri = bench_module("reader_images")
    n_studies, read_s = ctx.size(3, 8), ctx.size(2.0, 5.0)
    fig = Figures()
    t = fig.table(
        f"8 readers at once, {n_studies} studies each (the first not timed: no study before it), "
        f"{read_s:g} s reading each, 2048 x 2500 16-bit PNGs (12-bit data); display rendition 1024 x 1250",
        [
            "backend",
            "delivery",
            "next studies",
            "p50 ms",
            "p95 ms",
            "max ms",
            "target p95 ms",
            "renditions made at init s",
        ],
    )
    for backend in _backends():
        for pre in (True, False):
            url, drop = ri.fresh_db(backend, ctx.tmp)
            try:
                r = ri.images(url, n_studies=n_studies, read_s=read_s, prefetch=pre)
            finally:
                drop()
            t.add(
                backend,
                "prefetch + read-ahead" if pre else "on demand (no prefetch)",
                r["n"],
                round(r["p50"]),
                round(r["p95"]),
                round(r["max"]),
                150 if pre else 400,
                round(r["init_s"], 1),
            )
            if backend == "sqlite":
                fig.checked[f"{backend} | {'prefetch' if pre else 'on demand'} | next studies"] = str(r["n"])
    t.notes.append(
        f"measured at {_load()} (a machine shared with other work; the 8 readers, inflating and windowing "
        "each rendition, run on the server's CPUs)"
    )
    t.notes.append(
        "renditions made at init: `cxreval reader init`'s display renditions of the study's images, "
        "written into the study folder before the server starts (the server then reads them)"
    )
    if len(_backends()) == 1:
        t.notes.append(
            "PostgreSQL not measured: CXREVAL_TEST_POSTGRES_URL unset (tests/reader/start_postgres.sh)"
        )
    return fig


def render(ctx: Context) -> Figures:
    rr = bench_module("reader_render")
    n = ctx.size(8, 21)
    fig = Figures()
    t = fig.table(
        f"one reader's page in headless Chromium (software canvas), {n - 1} moves to a prefetched next study, "
        "2048 x 2500 16-bit PNGs (12-bit data); ms measured in the page",
        [
            "display",
            "DPR",
            "canvas px",
            "rendition",
            "moves",
            "fitted bitmap drawn 1:1",
            "open p50",
            "open p95",
            "to pixels p50",
            "to pixels p95",
            "to pixels max",
            "next frame p95",
            "target p95",
        ],
    )
    for r in rr.measure(n):
        t.add(
            r["display"],
            r["dpr"],
            r["canvas"],
            r["rendition"],
            r["n"],
            r["drawn 1:1 from the fitted bitmap"],
            round(r["open_p50"], 1),
            round(r["open_p95"], 1),
            round(r["pixels_p50"], 1),
            round(r["pixels_p95"], 1),
            round(r["pixels_max"], 1),
            round(r["frame_p95"], 1),
            50,
        )
        fig.checked[f"{r['display']} DPR {r['dpr']} | rendition"] = str(r["rendition"])
    t.notes.append(
        "open: from the move (what Enter does after saving) until the study is drawn; to pixels: the same "
        "plus reading one canvas pixel back, which makes Chromium rasterise the draw; next frame: until the "
        "next animation frame after it. Before each move the prefetch had finished (the rendition fetched, "
        "windowed in the worker into a bitmap and one resized to the pane), as it does while a reader reads"
    )
    t.notes.append(f"measured at {_load()} (a machine shared with other work)")
    return fig


def status(ctx: Context) -> Figures:
    ri = bench_module("reader_images")
    size = ctx.size(2000, 20000)
    fig = Figures()
    t = fig.table(
        f"`GET /api/organiser/status`, 8 readers x {size} submissions in the log, one request at a time",
        [
            "backend",
            "submissions",
            "requests",
            "p50 ms",
            "p95 ms",
            "target p95 ms",
            "history written s",
            "derived tables rebuilt s",
        ],
    )
    for backend in _backends():
        url, drop = ri.fresh_db(backend, ctx.tmp)
        try:
            r = ri.status(url, n_images=size, n_subs=size, n_requests=ctx.size(20, 50))
        finally:
            drop()
        t.add(
            backend,
            r["n_submissions"],
            r["n"],
            round(r["p50"], 1),
            round(r["p95"], 1),
            300,
            round(r["history_s"], 1),
            round(r["derived_s"], 1),
        )
        if backend == "sqlite":
            fig.checked[f"{backend} | submissions"] = str(r["n_submissions"])
    t.notes.append(f"measured at {_load()}")
    return fig


def export_under_load(ctx: Context) -> Figures:
    re_ = bench_module("reader_export")
    n_subs, rounds = ctx.size(2500, 18000), ctx.size(2, 3)
    fig = Figures()
    t = fig.table(
        f"8 readers, one round (me, queue, item, submission) a second each, 8 x {n_subs} submissions in the "
        f"log; {rounds} rounds of 8 s readers alone, then an export and an integrity check (background jobs)",
        [
            "backend",
            "window",
            "requests",
            "p50 ms",
            "p95 ms",
            "p99 ms",
            "submission p95 ms",
            "target p95 ms",
            "export s",
            "integrity check s",
            "disagreeing rows",
        ],
    )
    for backend in _backends():
        url, drop = bench_module("reader_images").fresh_db(backend, ctx.tmp)
        try:
            r = re_.measure(url, n_images=2000, n_subs=n_subs, rounds=rounds, baseline_s=8.0)
        finally:
            drop()
        for window, key in (("readers alone", "baseline"), ("export + check running", "during")):
            a, sub = r[key], r[f"{key}_submission"]
            busy = key == "during"
            t.add(
                backend,
                window,
                a["n"],
                round(a["p50"], 1),
                round(a["p95"], 1),
                round(a["p99"], 1),
                round(sub["p95"], 1),
                50,
                round(r["export_s"], 1) if busy else "",
                round(r["integrity_s"], 1) if busy else "",
                r["disagreeing_rows"] if busy else "",
            )
        fig.checked[f"{backend} | disagreeing rows"] = str(r["disagreeing_rows"])
        fig.checked[f"{backend} | request errors"] = str(r["n_errors"])
    t.notes.append(
        "export s / integrity check s: median over the rounds, from the organiser's POST to the poll (every second) that saw "
        "it done (the check is queued behind the export: its time includes the export's)"
    )
    t.notes.append(f"measured at {_load()}")
    if len(_backends()) == 1:
        t.notes.append(
            "PostgreSQL not measured: CXREVAL_TEST_POSTGRES_URL unset (tests/reader/start_postgres.sh)"
        )
    return fig


PARTS = (
    Part(
        "submission_latency",
        "Median / p95 / p99 latency and throughput of image-label submissions by 8 "
        "concurrent reader processes, back to back and paced (20 submissions each quick, 300 full).",
        submission_latency,
    ),
    Part(
        "history",
        "p50 / p95 of me, queue, item, submission and the resolver's queue, item, pixels and "
        "adjudication with 8 readers over a long history, and status/export time and memory (2,000 x 2,000 quick, "
        "20,000 x 20,000 full).",
        history,
    ),
    Part(
        "images",
        "Time to the next study's image visible (display rendition), 8 readers at once on 2048 x 2500 "
        "16-bit radiographs, with prefetch + read-ahead and on demand, both backends.",
        images,
    ),
    Part(
        "render",
        "Per-study render time measured in the page (headless Chromium) after prefetch, at 1920 x 1080, "
        "3840 x 2160 and 1920 x 1080 at DPR 2, on 2048 x 2500 16-bit radiographs (7 moves quick, 20 full).",
        render,
    ),
    Part(
        "status",
        "p50 / p95 of the organiser's status with 8 readers x 20,000 submissions in the log (2,000 quick), "
        "both backends.",
        status,
    ),
    Part(
        "export_under_load",
        "Readers' p50 / p95 / p99 while the organiser's export and integrity check run in the background "
        "(8 readers, 8 x 2,500 submissions quick, 8 x 18,000 full), and each export checked against its "
        "own audit log, both backends.",
        export_under_load,
    ),
)
