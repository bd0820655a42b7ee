"""Fixtures of the reader-study tests: a small study on self-made PNGs, SQLite and PostgreSQL databases,
a server subprocess on a free port."""

from __future__ import annotations

import datetime as dt
import os
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("sqlalchemy", reason="the reader extra (sqlalchemy) is in the test extra")
pytest.importorskip("fastapi", reason="the reader extra (fastapi) is in the test extra")

FINDINGS = ["Effusion", "Cardiomegaly", "Nodule"]
IMAGES = ["a1", "a2", "b1", "c1"]


def write_png(path: Path, *, seed: int, shape: tuple[int, int] = (48, 64), bits: int = 8) -> Path:
    from PIL import Image

    rng = np.random.default_rng(seed)
    hi = 255 if bits == 8 else 4095
    a = rng.integers(0, hi + 1, size=shape)
    path.parent.mkdir(parents=True, exist_ok=True)
    if bits == 8:
        Image.fromarray(a.astype(np.uint8)).save(path)
    else:
        Image.fromarray(a.astype(np.uint16)).save(path)
    return path


def write_dicom(path: Path, pixels: np.ndarray, *, bits: int = 16, **attrs: object) -> Path:
    """A single-frame MONOCHROME2 DICOM file of uint16 ``pixels`` (``bits`` stored), with more ``attrs``
    (e.g. ``WindowCenter``, ``PixelSpacing``, ``PhotometricInterpretation``); needs pydicom."""
    from pydicom.dataset import Dataset, FileMetaDataset
    from pydicom.uid import ExplicitVRLittleEndian, SecondaryCaptureImageStorage, generate_uid

    meta = FileMetaDataset()
    meta.MediaStorageSOPClassUID = SecondaryCaptureImageStorage
    meta.MediaStorageSOPInstanceUID = generate_uid()
    meta.TransferSyntaxUID = ExplicitVRLittleEndian
    ds = Dataset()
    ds.file_meta = meta
    ds.SOPClassUID, ds.SOPInstanceUID = meta.MediaStorageSOPClassUID, meta.MediaStorageSOPInstanceUID
    ds.Rows, ds.Columns, ds.SamplesPerPixel, ds.PhotometricInterpretation = (*pixels.shape, 1, "MONOCHROME2")
    ds.BitsAllocated, ds.BitsStored, ds.HighBit, ds.PixelRepresentation = 16, bits, bits - 1, 0
    for k, v in attrs.items():
        setattr(ds, k, v)
    ds.PixelData = pixels.astype("<u2").tobytes()
    path.parent.mkdir(parents=True, exist_ok=True)
    ds.save_as(path, enforce_file_format=True)
    return path


def make_study(
    root: Path,
    *,
    readers: tuple[str, ...] = ("alice", "bob"),
    resolvers: tuple[str, ...] = ("carol",),
    n_images: int = 4,
    extra: str = "",
) -> Path:
    """A study folder with images (one 16-bit), two reports, three IQA pairs and a study.yaml."""
    ids = IMAGES if n_images == 4 else [f"img{i:04d}" for i in range(n_images)]
    for k, name in enumerate(ids):
        write_png(root / "images" / f"{name}.png", seed=k, bits=16 if k == 1 else 8)
    (root / "patients.csv").write_text("study_id,patient_id\n" + "".join(f"{i},{'p' + i[0]}\n" for i in ids))
    (root / "reports.csv").write_text(
        "study_id,findings,impression\n"
        "a1,Small left effusion.,Effusion.\n"
        "b1,Heart is enlarged.,Cardiomegaly.\n"
    )
    for k in range(2):
        write_png(root / "iqa" / f"ref{k}.png", seed=100 + k)
    rows = ["reference,test,degradation"]
    for k, (ref, deg) in enumerate([(0, "jpeg"), (0, "noise"), (1, "blur")]):
        write_png(root / "iqa" / f"test{k}.png", seed=200 + k)
        rows.append(f"iqa/ref{ref}.png,iqa/test{k}.png,{deg}")
    (root / "pairs.csv").write_text("\n".join(rows) + "\n")
    study = root / "study.yaml"
    study.write_text(f"""name: test-study
seed: 3
findings: [{", ".join(FINDINGS)}]
images: images
patients: patients.csv
reports: reports.csv
sections: [findings, impression]
iqa:
  pairs: pairs.csv
  criteria: [overall]
  scale: [1, 4]
readers: [{", ".join(readers)}]
resolvers: [{", ".join(resolvers)}]
{extra}""")
    return study


@pytest.fixture
def study_file(tmp_path: Path) -> Path:
    return make_study(tmp_path / "study")


@pytest.fixture
def sqlite_url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'study.db'}"


def _postgres_base() -> str:
    url = os.environ.get("CXREVAL_TEST_POSTGRES_URL")
    if not url:
        pytest.skip("CXREVAL_TEST_POSTGRES_URL is not set (.ci/run starts a PostgreSQL server and sets it)")
    return url


@pytest.fixture
def postgres_url() -> Iterator[str]:
    """A fresh PostgreSQL database on the server of CXREVAL_TEST_POSTGRES_URL, dropped afterwards."""
    import sqlalchemy as sa

    from cxreval.reader.db import make_engine

    base = _postgres_base()
    name = "cxr_" + uuid.uuid4().hex[:12]
    try:
        admin = make_engine(base).execution_options(isolation_level="AUTOCOMMIT")
        with admin.connect() as conn:
            conn.execute(sa.text(f"CREATE DATABASE {name}"))
    except Exception as exc:  # unreachable server, wrong credentials
        pytest.skip(f"PostgreSQL at CXREVAL_TEST_POSTGRES_URL is not reachable: {exc}")
    url = base.rsplit("/", 1)[0] + "/" + name
    try:
        yield url
    finally:
        with admin.connect() as conn:
            conn.execute(sa.text(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
        admin.dispose()


@pytest.fixture(params=["sqlite", "postgresql"])
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'study.db'}"
    return request.getfixturevalue("postgres_url")


def _ephemeral_ports() -> tuple[int, int]:
    """The kernel's range of ports for outgoing connections (Linux's default when it cannot be read)."""
    try:
        low, high = Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()
        return int(low), int(high)
    except (OSError, ValueError):
        return 32768, 60999


def free_port() -> int:
    """A port nothing listens on, outside the kernel's range for outgoing connections (so that no client
    connection of a busy machine takes it before the server binds it), drawn at random."""
    import random

    low, _high = _ephemeral_ports()
    rng = random.Random()
    for _ in range(200):
        port = rng.randrange(10000, max(low, 10001))
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    with socket.socket() as s:  # every draw taken: any port the kernel gives
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


STARTUP_S = 30.0
"""How long a server may take to answer its first request on an idle machine (Python start and imports)."""


def startup_deadline(base: float = STARTUP_S) -> float:
    """Seconds to wait for a server subprocess to answer, scaled with the machine's load: ``base`` times the
    1-minute load average per core when above 1 (a busy 2-core machine running the whole suite starts a
    subprocess several times slower), at most 10 x ``base``."""
    try:
        per_core = os.getloadavg()[0] / (os.cpu_count() or 1)
    except OSError:  # no load average on this platform
        per_core = 1.0
    return base * min(10.0, max(1.0, per_core))


def wait_until_serving(proc: subprocess.Popen[bytes], base_url: str, *, require_ok: bool = True) -> float:
    """Wait until the server subprocess ``proc`` answers ``GET /`` (its readiness signal: it answers only once
    it listens with the database open; with ``require_ok``, with status 200), for as long as it is alive and
    within :func:`startup_deadline`. Returns
    the seconds it took; raises when it exits first or the deadline passes (naming the deadline and the load)."""
    import httpx

    limit, t0 = startup_deadline(), time.monotonic()
    while time.monotonic() - t0 < limit:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited with {proc.returncode}")
        try:
            if httpx.get(base_url + "/", timeout=1).status_code == 200 or not require_ok:
                return time.monotonic() - t0
        except httpx.HTTPError:
            pass
        time.sleep(0.05)
    raise RuntimeError(
        f"server did not start in {limit:.0f} s (load average {os.getloadavg()[0]:.1f} on "
        f"{os.cpu_count()} cores)"
    )


class Server:
    """``cxreval reader serve`` in a subprocess (so that it can be SIGKILLed)."""

    def __init__(self, url: str, port: int | None = None, log: Path | None = None) -> None:
        self.url, self.port = url, port or free_port()
        self.chosen = port is None
        self.base = f"http://127.0.0.1:{self.port}"
        self.log = log
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> Server:
        """Start the server and wait until it serves; on a port of our choosing that another process took
        in the meantime (the server exits 2, naming the busy port), start it again on another."""
        for attempt in range(3):
            out = open(self.log, "ab") if self.log else subprocess.DEVNULL  # noqa: SIM115
            self.proc = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "cxreval",
                    "reader",
                    "serve",
                    "--db",
                    self.url,
                    "--port",
                    str(self.port),
                ],
                stdout=out,
                stderr=out,
            )
            try:
                wait_until_serving(self.proc, self.base)
                return self
            except RuntimeError:
                if not self.chosen or self.proc.poll() != 2 or attempt == 2:
                    raise
            self.port = free_port()
            self.base = f"http://127.0.0.1:{self.port}"
        return self

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait()

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.kill()


@pytest.fixture
def study_factory():
    """``make_study(root, **kw)``: a study folder on self-made PNGs."""
    return make_study


@pytest.fixture
def server_factory(tmp_path: Path):
    """``Server(url)``: ``cxreval reader serve`` in a subprocess; stopped at teardown."""
    started: list[Server] = []

    def factory(url: str, port: int | None = None) -> Server:
        s = Server(url, port, log=tmp_path / "server.log")
        started.append(s)
        return s

    yield factory
    for s in started:
        s.stop()


@pytest.fixture
def app_client(study_file: Path, sqlite_url: str):
    """(store, tokens, TestClient) on a fresh SQLite study."""
    from fastapi.testclient import TestClient

    from cxreval.reader.app import create_app
    from cxreval.reader.store import ReaderStore
    from cxreval.reader.study import load_study

    store, tokens = ReaderStore.create(sqlite_url, load_study(study_file))
    with TestClient(create_app(store)) as client:
        yield store, tokens, client
    store.engine.dispose()


def image_body(sid: str, item: str, states: dict[str, str] | None = None, boxes: list | None = None) -> dict:
    """A complete image-task submission (every finding negative unless given)."""
    labels = {f: "negative" for f in FINDINGS}
    labels.update(states or {})
    return {"id": sid, "task": "image", "item": item, "labels": labels, "boxes": boxes or []}


@pytest.fixture
def image_submission():
    return image_body


def decision(store, study_id: str, labels: dict[str, str]) -> dict:
    """An adjudication body as the resolver's page sends it: ``labels``, the pairs of states it saw and the
    decisions it saw (``seen``), read from the store now."""
    conflicts, decided = store.read(lambda conn: store.conflict_rows(conn, study_id))
    return {
        "labels": labels,
        "conflicts": {f: conflicts[f] for f in labels if f in conflicts},
        "seen": {f: decided[f]["seq"] for f in labels if f in decided},
    }


# -- MRMC studies: six images, ratings, sessions (tests/reader/test_mrmc*.py) ---------------------------------
IDS = [f"img{i:04d}" for i in range(6)]
T0 = dt.datetime(2026, 3, 2, 9, 30, tzinfo=dt.timezone.utc)


def _h(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def _scores(ids: list[str] = IDS, *, models: tuple[str, ...] = ("densenet",)) -> str:
    """A long prediction table: a distinct score per (model, study, finding)."""
    rows = ["study_id,model,finding,score"]
    for m, model in enumerate(models):
        for i, sid in enumerate(ids):
            for j, f in enumerate(FINDINGS):
                rows.append(f"{sid},{model},{f},{round(0.05 * i + 0.01 * j + 0.3 * m, 4)}")
    return "\n".join(rows) + "\n"


def _study(study_factory, root: Path, extra: str, *, scores: str | None = None) -> Path:
    """An image-only study of six images with the given MRMC keys (two readers, no resolver)."""
    study = study_factory(root, n_images=len(IDS), resolvers=(), extra=extra)
    if scores is not None:
        (root / "predictions.csv").write_text(scores)
    text = study.read_text()
    for key in (
        "reports: reports.csv\n",
        "iqa:\n  pairs: pairs.csv\n  criteria: [overall]\n  scale: [1, 4]\n",
    ):
        text = text.replace(key, "")
    study.write_text(text)
    return study


def _client(study: Path, url: str, clock=None):
    from fastapi.testclient import TestClient

    from cxreval.reader.app import create_app
    from cxreval.reader.store import ReaderStore
    from cxreval.reader.study import load_study

    store, tokens = ReaderStore.create(url, load_study(study))
    return store, tokens, TestClient(create_app(store, clock=clock))


SESSIONS = (
    "rating: {scale: five_point, with_label: true}\n"
    "sessions:\n  - name: unaided\n  - name: aided\n    model_scores: predictions.csv\n"
    "washout_days: 28\n"
)


class Clock:
    """The server's clock in a test: a time that only the test moves."""

    def __init__(self, t: dt.datetime) -> None:
        self.t = t

    def __call__(self) -> dt.datetime:
        return self.t
