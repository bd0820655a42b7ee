"""Reader study at the workstation: time from moving to the next study to its image on screen, with 8
readers at once on realistic radiographs, and the organiser's status over a long log; SQLite and PostgreSQL.

``images``: the bench builds 2048 x 2500 16-bit PNGs holding 12-bit radiograph-like data (a smooth body,
ribs, noise; four distinct images, each copied to every file, so every file is decoded on its own) and a
study assigning each image to one reader (no reader finds another's image in the server's cache). One
``create_app`` server (uvicorn, 127.0.0.1) and 8 reader processes; each reader, for each of its studies:
asks for the item and the display rendition (``level=display&fit=1024``: 1024 x 1250), inflates it and maps
it through a window (what the page does before drawing), then reads for ``read_s`` seconds and submits
its labels. Time to visible = from the move to the next study until its rendition is decoded and windowed
(the first study of each reader is not a *next* study and is left out). The study is made as ``cxreval
reader init`` makes it (:func:`cxreval.reader.create_study`: every display rendition written ahead into the
study folder; its time is reported as ``init_s``). Two ways:

* **with prefetch**: the page's prefetch (the reader's next two studies fetched, one after the other, while
  it reads) and the server's read-ahead (``read_ahead=3``: it renders the reader's next studies when one
  is asked for);
* **without prefetch**: neither (``read_ahead=0``): every display rendition is read from the study folder's
  rendition files when asked for.

``status``: a study whose log holds ``n_subs`` submissions per reader for 8 readers (written straight into
the log, the derived tables then rebuilt from it on open, as a database made before them would be), then
``n_requests`` ``GET /api/organiser/status`` one after another: p50 / p95 from send to answer read.

Servers listen on 127.0.0.1 only; every loop is bounded in count and time.

    .venv/bin/python bench/reader_images.py images [--studies 8] [--read-s 3]
    .venv/bin/python bench/reader_images.py status [--images 20000] [--subs 20000]
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import numpy as np

__all__ = ["radiograph", "images", "status", "fresh_db", "main"]

ROOT = Path(__file__).resolve().parents[1]
FINDINGS = ["Effusion", "Cardiomegaly", "Nodule", "Mass"]
_SERVE = """
import socket, sys, uvicorn
from cxreval.reader.app import create_app
app = create_app(sys.argv[1], read_ahead=int(sys.argv[3]))
sock = socket.socket(); sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
sock.bind(("127.0.0.1", int(sys.argv[2])))
uvicorn.Server(uvicorn.Config(app, log_level="warning", access_log=False)).run(sockets=[sock])
"""


def radiograph(seed: int, shape: tuple[int, int] = (2500, 2048)) -> np.ndarray:
    """A 12-bit chest-radiograph-like uint16 image: dark background, a bright smooth body with lungs, ribs
    and quantum noise (for timing: its PNG compresses like a real one, not like noise or a flat field)."""
    rng = np.random.default_rng(seed)
    h, w = shape
    y, x = np.mgrid[0:h, 0:w].astype(np.float32)
    body = np.exp(-(((x - w / 2) / (w * 0.42)) ** 6 + ((y - h * 0.55) / (h * 0.48)) ** 6))
    lungs = sum(
        np.exp(-(((x - cx) / (w * 0.16)) ** 2 + ((y - h * 0.45) / (h * 0.28)) ** 2))
        for cx in (w * 0.32, w * 0.68)
    )
    ribs = 0.08 * np.sin(y / (h / 28) + 0.3 * np.sin(x / (w / 3))) * lungs
    a = 300 + 3000 * body - 1400 * lungs + 900 * ribs + rng.normal(0, 12, (h, w)) + 40 * rng.random()
    return np.clip(a, 0, 4095).astype(np.uint16)


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait_up(base: str, proc: subprocess.Popen) -> None:
    import httpx

    t0 = time.monotonic()
    while time.monotonic() - t0 < 60:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited with {proc.returncode}")
        try:
            if httpx.get(base + "/", timeout=1).status_code == 200:
                return
        except httpx.HTTPError:
            time.sleep(0.05)
    raise RuntimeError("server did not start in 60 s")


def _image_study(root: Path, n_readers: int, n_studies: int) -> Path:
    from PIL import Image

    (root / "images").mkdir(parents=True)
    bases = []
    for k in range(4):
        p = root / f"base{k}.png"
        Image.fromarray(radiograph(k)).save(p, compress_level=6)
        bases.append(p)
    for i in range(n_readers * n_studies):
        shutil.copy(bases[i % 4], root / "images" / f"cxr{i:04d}.png")
    readers = ", ".join(f"r{i}" for i in range(n_readers))
    (root / "study.yaml").write_text(
        f"name: bench-images\nfindings: [{', '.join(FINDINGS)}]\nimages: images\n"
        f"readers: [{readers}]\nassignment: {{per_image: 1}}\n"
    )
    return root / "study.yaml"


def _reader(args: tuple[str, str, float, bool, float, mp.Queue]) -> None:
    """One reader process (its failure is reported, not lost)."""
    try:
        _read(args)
    except BaseException as exc:  # noqa: BLE001 - sent to the parent, which raises it
        args[-1].put(f"reader failed: {exc!r}")


def _read(args: tuple[str, str, float, bool, float, mp.Queue]) -> None:
    """One reader: every study of its queue, as the page moves through them."""
    import gzip
    import http.client
    from concurrent.futures import ThreadPoolExecutor

    base, token, read_s, prefetch, limit_s, out = args
    host, port = base.rsplit("//", 1)[1].split(":")
    h = {"Authorization": f"Bearer {token}"}
    lut = np.clip((np.arange(65536) - 1000) * (255 / 3000), 0, 255).astype(np.uint8)

    class Conn:
        """A keep-alive connection that reconnects once when the server has closed it (as a browser does)."""

        def __init__(self) -> None:
            self.c = http.client.HTTPConnection(host, int(port), timeout=120)

        def call(
            self, method: str, path: str, body: str | None = None, headers: dict | None = None
        ) -> tuple[http.client.HTTPResponse, bytes]:
            for attempt in (0, 1):
                try:
                    self.c.request(method, path, body=body, headers=headers or h)
                    r = self.c.getresponse()
                    return r, r.read()
                except (BrokenPipeError, ConnectionResetError, http.client.RemoteDisconnected):
                    self.c.close()
                    self.c = http.client.HTTPConnection(host, int(port), timeout=120)
                    if attempt:
                        raise
            raise AssertionError("unreachable")

    def fetch(conn: Conn, key: str) -> np.ndarray:
        r, data = conn.call("GET", f"/api/item?task=image&key={key}")
        assert r.status == 200, data[:200]
        r, body = conn.call(
            "GET",
            f"/api/pixels?task=image&key={key}&level=display&fit=1024",
            headers=h | {"Accept-Encoding": "gzip"},
        )
        assert r.status == 200, body[:200]
        px = np.frombuffer(gzip.decompress(body), "<u2").reshape(
            int(r.getheader("X-Height")), int(r.getheader("X-Width"))
        )
        return lut[px]  # windowed to 8 bits: what the page draws

    conn, side = Conn(), Conn()  # the prefetch has its own connection
    keys = json.loads(conn.call("GET", "/api/queue?task=image")[1])["keys"]
    pool = ThreadPoolExecutor(max_workers=1)
    ahead: dict[str, object] = {}
    visible = []
    t_end = time.monotonic() + limit_s
    for i, key in enumerate(keys):
        if time.monotonic() > t_end:
            break
        t0 = time.perf_counter()
        fut = ahead.pop(key, None)
        _img = fut.result() if fut is not None else fetch(conn, key)  # type: ignore[attr-defined]
        if i:
            visible.append(time.perf_counter() - t0)
        if prefetch:
            for nxt in keys[i + 1 : i + 3]:
                if nxt not in ahead:
                    ahead[nxt] = pool.submit(fetch, side, nxt)
        time.sleep(read_s)
        body = json.dumps(
            {
                "id": uuid.uuid4().hex,
                "task": "image",
                "item": key,
                "labels": dict.fromkeys(FINDINGS, "negative"),
                "boxes": [],
            }
        )
        r, data = conn.call(
            "POST", "/api/submissions", body=body, headers=h | {"Content-Type": "application/json"}
        )
        assert r.status == 200, data[:200]
    pool.shutdown(cancel_futures=True)
    out.put(visible)


def images(
    url: str,
    *,
    n_readers: int = 8,
    n_studies: int = 8,
    read_s: float = 3.0,
    prefetch: bool = True,
    limit_s: float = 300.0,
) -> dict[str, float]:
    """Time to visible (ms) of the next study's display rendition, ``n_readers`` readers at once."""
    from cxreval.reader import create_study

    with tempfile.TemporaryDirectory(prefix="cxreval-bench-images-") as tmp:
        study = _image_study(Path(tmp) / "s", n_readers, n_studies)
        t0 = time.perf_counter()
        tokens = dict(create_study(study, url).tokens)  # `reader init`: every display rendition made ahead
        t_init = time.perf_counter() - t0
        port = _free_port()
        env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
        proc = subprocess.Popen(
            [sys.executable, "-c", _SERVE, url, str(port), "3" if prefetch else "0"],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        base = f"http://127.0.0.1:{port}"
        try:
            _wait_up(base, proc)
            q: mp.Queue = mp.Queue()
            procs = [
                mp.Process(target=_reader, args=((base, tokens[f"r{i}"], read_s, prefetch, limit_s, q),))
                for i in range(n_readers)
            ]
            for p in procs:
                p.start()
            got = [q.get(timeout=limit_s + 300) for _ in procs]
            for p in procs:
                p.join(30)
            failed = [g for g in got if isinstance(g, str)]
            if failed:
                raise RuntimeError("; ".join(failed))
        finally:
            proc.terminate()
            proc.wait(10)
    lat = np.concatenate([np.asarray(g, dtype=float) for g in got]) * 1000
    return {
        "n": int(lat.size),
        "p50": float(np.median(lat)),
        "p95": float(np.percentile(lat, 95)),
        "max": float(lat.max()),
        "init_s": t_init,
        "n_images": n_readers * n_studies,
    }


def status(
    url: str, *, n_images: int = 20000, n_subs: int = 20000, n_readers: int = 8, n_requests: int = 50
) -> dict[str, float]:
    """p50 / p95 (ms) of the organiser's status with ``n_readers x n_subs`` submissions in the log, and the
    seconds the history and the rebuild of the derived tables took."""
    import httpx

    sys.path.insert(0, str(Path(__file__).parent))
    from reader_export import study_with_history

    with tempfile.TemporaryDirectory(prefix="cxreval-bench-status-") as tmp:
        made = study_with_history(url, Path(tmp) / "s", n_images, n_subs, n_readers)
        org, t_hist, t_derived = made["organiser"], made["history_s"], made["derived_s"]
        port = _free_port()
        env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
        proc = subprocess.Popen(
            [sys.executable, "-c", _SERVE, url, str(port), "0"],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        base = f"http://127.0.0.1:{port}"
        lat = []
        try:
            _wait_up(base, proc)
            with httpx.Client(base_url=base, headers={"Authorization": f"Bearer {org}"}, timeout=60) as c:
                first = c.get("/api/organiser/status")
                assert first.status_code == 200, first.text[:300]
                n_sub = sum(r["n_submissions"] for r in first.json()["progress"])
                assert n_sub == n_readers * n_subs, n_sub
                t_end = time.monotonic() + 120
                for _ in range(n_requests):
                    if time.monotonic() > t_end:
                        break
                    t0 = time.perf_counter()
                    r = c.get("/api/organiser/status")
                    lat.append(time.perf_counter() - t0)
                    assert r.status_code == 200
        finally:
            proc.terminate()
            proc.wait(10)
    a = np.asarray(lat) * 1000
    return {
        "n": int(a.size),
        "p50": float(np.median(a)),
        "p95": float(np.percentile(a, 95)),
        "n_submissions": n_readers * n_subs,
        "history_s": t_hist,
        "derived_s": t_derived,
    }


def fresh_db(backend: str, tmp: Path) -> tuple[str, object]:
    """A new empty database of ``backend`` ('sqlite', or 'postgresql' on ``CXREVAL_TEST_POSTGRES_URL``'s
    server) and the function that drops it."""
    if backend == "sqlite":
        return f"sqlite:///{tmp / uuid.uuid4().hex[:8]}.db", (lambda: None)
    sys.path.insert(0, str(Path(__file__).parent))
    from reader import _postgres_db

    return _postgres_db(os.environ["CXREVAL_TEST_POSTGRES_URL"])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("what", choices=["images", "status"])
    ap.add_argument("--studies", type=int, default=8, help="Studies per reader (images).")
    ap.add_argument("--read-s", type=float, default=3.0, help="Seconds a reader reads each study (images).")
    ap.add_argument("--images", type=int, default=20000, help="Images of the study (status).")
    ap.add_argument("--subs", type=int, default=20000, help="Submissions per reader in the log (status).")
    args = ap.parse_args(argv)
    backends = ["sqlite"] + (["postgresql"] if os.environ.get("CXREVAL_TEST_POSTGRES_URL") else [])
    with tempfile.TemporaryDirectory() as tmp:
        for backend in backends:
            for pre in (True, False) if args.what == "images" else (None,):
                url, drop = fresh_db(backend, Path(tmp))
                try:
                    got = (
                        images(url, n_studies=args.studies, read_s=args.read_s, prefetch=bool(pre))
                        if args.what == "images"
                        else status(url, n_images=args.images, n_subs=args.subs)
                    )
                finally:
                    drop()  # type: ignore[operator]
                print(backend, {True: "with prefetch", False: "without prefetch", None: ""}[pre], got)
    return 0


if __name__ == "__main__":
    sys.exit(main())
