"""Tests of cxreval.datasets: checksum, offline wheel, idempotence, offline error, cache dir."""

from __future__ import annotations

import hashlib
import re
import shutil
import subprocess
import zipfile
from functools import partial

import pytest

from cxreval.cli.main import main
from cxreval.datasets import _fetch as fetch  # its subprocess, monkeypatched
from cxreval.datasets import fetch_metadata, metadata_path
from cxreval.datasets._fetch import METADATA_FILES, WHEEL_FILE, WHEEL_SHA256, resolve_cache_dir
from cxreval.exceptions import CxrevalError, DataUnavailableError
from cxreval.outputs._run_record import sha256_file


def _fake_wheel(tmp_path, *, with_data=True, name=WHEEL_FILE):
    """A small zip with the wheel's layout: torchxrayvision/data/<file> for every metadata file."""
    p = tmp_path / "wheels" / name
    p.parent.mkdir(exist_ok=True)
    with zipfile.ZipFile(p, "w") as zf:
        zf.writestr("torchxrayvision/__init__.py", "")
        if with_data:
            for n in METADATA_FILES:
                zf.writestr(f"torchxrayvision/data/{n}", f"content of {n}\n")
    return p, hashlib.sha256(p.read_bytes()).hexdigest()


def test_sha256_file_matches_hashlib(tmp_path):
    p = tmp_path / "x.bin"
    p.write_bytes(b"abc" * 1000)
    assert sha256_file(p, chunk=7) == hashlib.sha256(b"abc" * 1000).hexdigest()


class _Steps:
    """A Progress that records the tasks added and finished."""

    def __init__(self):
        self.added, self.finished = [], []

    def add(self, description, total=None):
        self.added.append(description)
        return len(self.added) - 1

    def advance(self, task, n=1):
        pass

    def done(self, task):
        self.finished.append(task)


def test_from_wheel_extracts_every_file_then_is_cached(tmp_path):
    whl, sha = _fake_wheel(tmp_path)
    steps = _Steps()
    res = fetch_metadata(cache_dir=tmp_path / "cache", from_wheel=whl, expected_sha256=sha, progress=steps)
    msgs = steps.added
    assert steps.finished == list(range(len(msgs)))  # every step done, in order
    assert res.action == "extracted" and res.wheel_sha256 == sha
    assert res.directory == tmp_path / "cache" / "torchxrayvision-data"
    assert sorted(res.files) == sorted(METADATA_FILES)
    for n, p in res.files.items():
        assert p.read_text() == f"content of {n}\n"
    assert (res.directory / ".wheel_sha256").read_text().strip() == sha
    assert any("verifying SHA-256" in m for m in msgs) and any("extracting" in m for m in msgs)
    assert not list(res.directory.glob("*.part"))
    # second call: nothing to do
    again = fetch_metadata(cache_dir=tmp_path / "cache", from_wheel=whl, expected_sha256=sha)
    assert again.action == "cached" and again.files == res.files
    assert (
        fetch_metadata(cache_dir=tmp_path / "cache", from_wheel=whl, expected_sha256=sha, force=True).action
        == "extracted"
    )
    d = res.to_dict()
    assert d["action"] == "extracted" and d["files"][METADATA_FILES[0]].endswith(METADATA_FILES[0])


def test_missing_file_in_cache_triggers_extraction(tmp_path):
    whl, sha = _fake_wheel(tmp_path)
    res = fetch_metadata(cache_dir=tmp_path, from_wheel=whl, expected_sha256=sha)
    res.files[METADATA_FILES[1]].unlink()
    assert fetch_metadata(cache_dir=tmp_path, from_wheel=whl, expected_sha256=sha).action == "extracted"
    assert res.files[METADATA_FILES[1]].exists()


def test_checksum_mismatch_is_rejected(tmp_path):
    whl, sha = _fake_wheel(tmp_path)
    msg = (
        rf"Checksum mismatch for wheel '{re.escape(str(whl))}': SHA-256 {sha}, expected {WHEEL_SHA256} "
        r"\(torchxrayvision==1.5.7\). The file is corrupt or not the pinned release"
    )
    with pytest.raises(DataUnavailableError, match=msg):
        fetch_metadata(cache_dir=tmp_path / "cache", from_wheel=whl)
    # nothing was stamped as fetched
    assert not (tmp_path / "cache" / "torchxrayvision-data" / ".wheel_sha256").exists()


def test_wheel_without_metadata_and_missing_wheel(tmp_path):
    whl, sha = _fake_wheel(tmp_path, with_data=False)
    with pytest.raises(
        DataUnavailableError,
        match=rf"Wheel '{re.escape(str(whl))}' does not hold the expected "
        r"metadata: .*Data_Entry_2017_v2020.csv.gz",
    ):
        fetch_metadata(cache_dir=tmp_path, from_wheel=whl, expected_sha256=sha)
    with pytest.raises(DataUnavailableError, match=r"Wheel '.*nope.whl' does not exist"):
        fetch_metadata(cache_dir=tmp_path, from_wheel=tmp_path / "nope.whl")


def test_offline_pip_failure_gives_clear_error(tmp_path, monkeypatch):
    calls = []

    def fake_run(cmd, **kwargs):
        calls.append(cmd)
        return subprocess.CompletedProcess(
            cmd,
            1,
            stdout="",
            stderr=(
                "WARNING: Retrying ... NewConnectionError\n"
                "ERROR: Could not find a version that satisfies the requirement torchxrayvision==1.5.7\n"
            ),
        )

    monkeypatch.setattr(fetch.subprocess, "run", fake_run)
    msg = (
        r"Could not download torchxrayvision==1.5.7 from PyPI \(offline\?\): ERROR: Could not find a version.*"
        r"run `cxreval data fetch --from-wheel PATH`"
    )
    with pytest.raises(DataUnavailableError, match=msg):
        fetch_metadata(cache_dir=tmp_path)
    cmd = calls[0]
    assert cmd[1:4] == ["-m", "pip", "download"] and "--no-deps" in cmd and "torchxrayvision==1.5.7" in cmd
    assert "install" not in cmd


def test_pip_cannot_run(tmp_path, monkeypatch):
    def boom(cmd, **kwargs):
        raise OSError("no such interpreter")

    monkeypatch.setattr(fetch.subprocess, "run", boom)
    with pytest.raises(
        DataUnavailableError,
        match=r"Could not run pip to download torchxrayvision==1.5.7: "
        r"no such interpreter",
    ):
        fetch_metadata(cache_dir=tmp_path)


def test_download_path_with_fake_pip(tmp_path, monkeypatch):
    whl, sha = _fake_wheel(tmp_path)

    def fake_pip(cmd, **kwargs):
        dest = cmd[cmd.index("-d") + 1]
        shutil.copy(whl, f"{dest}/{WHEEL_FILE}")
        return subprocess.CompletedProcess(cmd, 0, stdout="Saved\n", stderr="")

    monkeypatch.setattr(fetch.subprocess, "run", fake_pip)
    res = fetch_metadata(cache_dir=tmp_path / "c", expected_sha256=sha)
    assert res.action == "downloaded" and res.files[METADATA_FILES[0]].exists()
    # the downloaded wheel lived in a temporary folder that is gone
    assert [p.name for p in (tmp_path / "c").iterdir()] == ["torchxrayvision-data"]


def test_cache_dir_resolution(tmp_path, monkeypatch):
    monkeypatch.delenv("CXREVAL_CACHE", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert resolve_cache_dir() == tmp_path / "xdg" / "cxreval"
    monkeypatch.setenv("CXREVAL_CACHE", str(tmp_path / "env"))
    assert resolve_cache_dir() == tmp_path / "env"
    assert resolve_cache_dir(tmp_path / "arg") == tmp_path / "arg"


def test_metadata_path(tmp_path):
    with pytest.raises(
        DataUnavailableError,
        match=r"BBox_List_2017.csv.gz is not in the cache .*; run "
        r"`cxreval data fetch` first",
    ):
        metadata_path("BBox_List_2017.csv.gz", cache_dir=tmp_path)
    with pytest.raises(DataUnavailableError, match=r"'x.csv' is not one of the fetched metadata files"):
        metadata_path("x.csv", cache_dir=tmp_path)
    with pytest.raises(DataUnavailableError, match=r"File '.*mine.csv' does not exist"):
        metadata_path("BBox_List_2017.csv.gz", path=tmp_path / "mine.csv")
    own = tmp_path / "mine.csv"
    own.write_text("x")
    assert metadata_path("BBox_List_2017.csv.gz", path=own) == own


def test_cli_fetch_from_wheel(tmp_path, monkeypatch, capsys):
    whl, sha = _fake_wheel(tmp_path)
    # the pinned checksum rejects the fake wheel: exit 2 and one line
    assert main(["data", "fetch", "--from-wheel", str(whl), "--cache-dir", str(tmp_path / "c")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("cxreval: error: Checksum mismatch for wheel")
    import cxreval.jobs._data as data_jobs

    monkeypatch.setattr(data_jobs, "fetch_metadata", partial(fetch_metadata, expected_sha256=sha))
    assert main(["data", "fetch", "--from-wheel", str(whl), "--cache-dir", str(tmp_path / "c")]) == 0
    assert capsys.readouterr().out.startswith(f"extracted: {len(METADATA_FILES)} metadata files in ")
    assert (
        main(["data", "fetch", "--from-wheel", str(whl), "--cache-dir", str(tmp_path / "c"), "--json"]) == 0
    )
    assert '"action": "cached"' in capsys.readouterr().out


def test_errors_are_cxreval_errors():
    assert issubclass(DataUnavailableError, CxrevalError) and issubclass(DataUnavailableError, OSError)


def test_downloaded_wheel_with_wrong_checksum_is_refused_and_not_kept(tmp_path, monkeypatch):
    """pooch verifies the wheel pip downloaded; a mismatch is one clear error and leaves no wheel behind."""
    whl, sha = _fake_wheel(tmp_path)

    def fake_pip(cmd, **kwargs):
        shutil.copy(whl, f"{cmd[cmd.index('-d') + 1]}/{WHEEL_FILE}")
        return subprocess.CompletedProcess(cmd, 0, stdout="Saved\n", stderr="")

    monkeypatch.setattr(fetch.subprocess, "run", fake_pip)
    with pytest.raises(
        DataUnavailableError,
        match=rf"Checksum mismatch for wheel '.*{re.escape(WHEEL_FILE)}': "
        rf"SHA-256 {sha}, expected {WHEEL_SHA256} \(torchxrayvision",
    ):
        fetch_metadata(cache_dir=tmp_path / "c")
    assert not list((tmp_path / "c").rglob("*.whl"))
    assert not (tmp_path / "c" / "torchxrayvision-data" / ".wheel_sha256").exists()
