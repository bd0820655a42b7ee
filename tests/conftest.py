"""Shared fixtures. Tests that need ../shared/data or the fetched metadata skip visibly without them."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest

# Started in the background (`nohup ... &`, some CI runners), the test process inherits SIGINT ignored, and so would
# every cxreval it starts: the Ctrl-C tests (run matrix, reader) would wait for an exit that never comes.
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

ROOT = Path(__file__).resolve().parents[1]
SHARED_DATA = Path(os.environ.get("CXREVAL_DATA_MIRROR", ROOT.parent / "shared" / "data"))


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """Path of ../shared/data (reference data); skips when absent."""
    if not SHARED_DATA.is_dir():
        pytest.skip(f"reference data not found at {SHARED_DATA} (set CXREVAL_DATA_MIRROR)")
    return SHARED_DATA


@pytest.fixture(scope="session")
def metadata_dir() -> Path:
    """The torchxrayvision metadata cache; skips when `cxreval data fetch` has not run."""
    from cxreval.datasets._fetch import resolve_cache_dir

    d = resolve_cache_dir() / "torchxrayvision-data"
    if not (d / ".wheel_sha256").exists():
        pytest.skip(f"public metadata not cached in {d}; run `cxreval data fetch`")
    return d


@pytest.fixture(scope="session")
def dask_cluster():
    """Address (``tcp://127.0.0.1:PORT``) of a real ``distributed.LocalCluster`` with 2 single-threaded worker
    processes, shared by the session's tests; skips with a reason when the ``dask`` extra is missing."""
    distributed = pytest.importorskip(
        "dask.distributed", reason="dask[distributed] (test extra) is not installed"
    )
    import logging

    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None, silence_logs=logging.ERROR
    ) as cluster:
        yield cluster.scheduler_address
