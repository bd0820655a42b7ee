"""The organiser's exports and integrity checks run in the background (a process of their own): readers are
answered while one runs, a failed or killed export leaves no partial file, and no export replaces another."""

from __future__ import annotations

import os
import time
import zipfile
from pathlib import Path

from cxreval.outputs._folder import remove_killed_tmp
from cxreval.reader._background import OrganiserJobs

from .conftest import image_body


def _h(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def _wait(jobs: OrganiserJobs, job_id: str, timeout: float = 60) -> None:
    end = time.monotonic() + timeout
    while jobs.get(job_id).state not in ("done", "failed"):  # type: ignore[union-attr]
        assert time.monotonic() < end, jobs.get(job_id)
        time.sleep(0.05)


def test_readers_are_answered_while_an_export_runs(app_client) -> None:
    store, tokens, c = app_client
    org = store.add_reader("olga", role="organiser")
    for k, key in enumerate(sorted(store.items["image"])):
        assert c.post(
            "/api/submissions", headers=_h(tokens["alice"]), json=image_body(f"sub-alice-{k:04d}", key)
        ).is_success
    job = c.post("/api/organiser/jobs?kind=export", headers=_h(org)).json()
    assert job["state"] in ("queued", "running")
    again = c.post("/api/organiser/jobs?kind=export", headers=_h(org)).json()
    assert again["id"] == job["id"]  # one export at a time: the running one is answered
    answered = []
    for k in range(5):  # the export's process is still starting: readers need not wait for it
        t0 = time.perf_counter()
        assert c.get("/api/me", headers=_h(tokens["bob"])).status_code == 200
        assert c.get("/api/queue?task=image", headers=_h(tokens["bob"])).status_code == 200
        r = c.post("/api/submissions", headers=_h(tokens["bob"]), json=image_body(f"sub-bob-{k:04d}", "a1"))
        assert r.status_code == 200
        answered.append(
            (time.perf_counter() - t0, c.get(f"/api/organiser/jobs/{job['id']}", headers=_h(org)))
        )
    assert answered[0][1].json()["state"] in ("queued", "running"), answered[0][1].json()
    assert max(dt for dt, _ in answered) < 2.0
    jobs = c.app.jobs
    _wait(jobs, job["id"])
    done = jobs.get(job["id"])
    assert done.state == "done", done.error
    assert done.result["n_submissions"] >= len(store.items["image"])
    assert done.done == done.total >= done.result["n_submissions"]  # its progress: every row read
    assert zipfile.ZipFile(jobs.path(done)).read("labels.csv").decode().count("img_alice") == 12


def test_a_failed_export_leaves_no_file_and_none_is_replaced(study_file: Path, sqlite_url: str) -> None:
    from cxreval.reader.store import ReaderStore
    from cxreval.reader.study import load_study

    store, _tokens = ReaderStore.create(sqlite_url, load_study(study_file))
    root = Path(store.spec.root)
    store.close()
    jobs = OrganiserJobs(sqlite_url, root, "test study")
    try:
        first = jobs.start("export")
        _wait(jobs, first.id)
        assert first.state == "done" and first.file.startswith("test_study-export-")
        kept = jobs.path(first).read_bytes()  # type: ignore[union-attr]
        second = jobs.start("export")
        _wait(jobs, second.id)
        assert second.file != first.file and jobs.path(first).read_bytes() == kept  # type: ignore[union-attr]
        broken = OrganiserJobs(f"sqlite:///{root / 'missing.db'}", root, "test study")
        failed = broken.start("export")
        _wait(broken, failed.id)
        broken.close()
        assert failed.state == "failed" and "does not exist" in failed.error  # type: ignore[operator]
        assert sorted(p.name for p in (root / "exports").iterdir()) == sorted([first.file, second.file])
        killed = jobs.start("export")
        proc = None
        while proc is None or not proc.is_alive():
            proc = jobs._proc
            time.sleep(0.01)
        proc.kill()  # interrupted (while it starts, or reads): the job fails, saying so, and leaves no file
        _wait(jobs, killed.id)
        assert killed.state == "failed" and "exit code -9" in killed.error  # type: ignore[operator]
        assert sorted(p.name for p in (root / "exports").iterdir()) == sorted([first.file, second.file])
    finally:
        jobs.close()


def test_the_temporary_file_of_a_killed_export_is_removed(tmp_path: Path) -> None:
    pid = os.getpid()
    dead = tmp_path / ".s-export.zip.tmp-999999999-abcd"  # as atomic_file names them
    alive = tmp_path / f".t-export.zip.tmp-{pid}-abcd"
    kept = tmp_path / "s-export-20260101T000000Z-0123.zip"
    for p in (dead, alive, kept):
        p.write_bytes(b"x")
    assert remove_killed_tmp(tmp_path) == [dead]
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([alive.name, kept.name])
