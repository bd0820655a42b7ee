"""cxreval.outputs: atomic folders and files, run.json, locks, refusal of unusable paths."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from cxreval.outputs import output_folder
from cxreval.outputs._errors import OutputError
from cxreval.outputs._folder import atomic_file, check_output_path
from cxreval.outputs._run_record import RUN_FILE, read_run, run_files, sha256_file


def test_success_moves_folder_and_records_run(tmp_path):
    src = tmp_path / "in.csv"
    src.write_text("a,b\n1,2\n")
    out = tmp_path / "res"
    with output_folder(out, inputs=[src], argv=["cxreval", "x"], meta={"seed": 3}) as d:
        assert not out.exists() and d.parent == out.parent
        (d / "t.csv").write_text("x\n1\n")
    rec = read_run(out)
    assert rec["status"] == "success" and rec["files"] == ["t.csv"] and rec["seed"] == 3
    assert rec["inputs"][0]["sha256"] == sha256_file(src)
    assert run_files(out) == [out / "t.csv"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.csv", "res"]  # no lock, no temp left


def test_failure_leaves_nothing_and_keeps_old_output(tmp_path):
    out = tmp_path / "res"
    with output_folder(out) as d:
        (d / "old.txt").write_text("old")
    with pytest.raises(KeyboardInterrupt), output_folder(out, overwrite=True) as d:
        (d / "new.txt").write_text("half")
        raise KeyboardInterrupt
    assert sorted(p.name for p in out.iterdir()) == ["old.txt", RUN_FILE]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["res"]


def test_existing_output_refused_unless_overwrite_which_replaces_whole(tmp_path):
    out = tmp_path / "res"
    with output_folder(out) as d:  # an earlier cxreval run
        (d / "stale.csv").write_text("stale")
    with pytest.raises(OutputError, match="already exists.*overwrite=True"), output_folder(out):
        pytest.fail("body must not run")
    with output_folder(out, overwrite=True) as d:
        (d / "fresh.csv").write_text("fresh")
    assert sorted(p.name for p in out.iterdir()) == ["fresh.csv", RUN_FILE]


def test_empty_existing_folder_is_accepted(tmp_path):
    out = tmp_path / "res"
    out.mkdir()
    with output_folder(out) as d:
        (d / "a").write_text("1")
    assert (out / "a").read_text() == "1"


@pytest.mark.parametrize("case", ["file", "under_file", "unwritable"])
def test_unusable_paths_refused_before_work(tmp_path, case):
    f = tmp_path / "f"
    f.write_text("x")
    if case == "file":
        out, match = f, "is a file"
    elif case == "under_file":
        out, match = f / "sub", "is a file, so nothing"
    else:
        if os.geteuid() == 0:
            pytest.skip("root can write to read-only folders")
        ro = tmp_path / "ro"
        ro.mkdir(mode=0o500)
        out, match = ro / "res", "not writable"
    with pytest.raises(OutputError, match=match):
        check_output_path(out)


def test_concurrent_run_into_same_out_fails_clearly(tmp_path):
    out = tmp_path / "res"
    with output_folder(out) as d:
        (d / "a").write_text("1")
        with pytest.raises(OutputError, match="being written by another cxreval run"), output_folder(out):
            pass
    assert (out / "a").read_text() == "1"


def test_lock_and_temp_of_killed_run_are_taken_over(tmp_path):
    out = tmp_path / "res"
    code = (
        "import os,sys; from cxreval.outputs import output_folder\n"
        f"with output_folder({str(out)!r}) as d:\n    (d/'a').write_text('1'); os._exit(9)\n"
    )
    assert subprocess.run([sys.executable, "-c", code]).returncode == 9
    assert not out.exists()
    assert any(p.name.endswith(".cxreval-lock") for p in tmp_path.iterdir())
    with output_folder(out) as d:
        (d / "b").write_text("2")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["res"]
    assert json.loads((out / RUN_FILE).read_text())["files"] == ["b"]


def test_atomic_file(tmp_path):
    out = tmp_path / "r.html"
    with pytest.raises(RuntimeError), atomic_file(out) as t:
        t.write_text("partial")
        raise RuntimeError
    assert not out.exists() and list(tmp_path.iterdir()) == []
    with atomic_file(out) as t:
        t.write_text("ok")
    assert out.read_text() == "ok"
    with pytest.raises(OutputError, match="already exists"), atomic_file(out):
        pass
    with atomic_file(out, overwrite=True) as t:
        t.write_text("new")
    assert out.read_text() == "new"


def test_output_moved_aside_by_a_killed_run_is_restored(tmp_path):
    """A run SIGKILLed between moving the previous output aside and renaming the new one in."""
    out = tmp_path / "res"
    with output_folder(out) as d:
        (d / "old.txt").write_text("old")
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True
    )
    pid = int(dead.stdout)
    out.rename(tmp_path / f".res.tmp-{pid}-old-abcd1234")
    (tmp_path / f".res.tmp-{pid}-deadbeef").mkdir()  # the new folder it never renamed in
    with pytest.raises(OutputError, match="already exists"), output_folder(out):
        pytest.fail("body must not run: the restored output exists")
    assert sorted(p.name for p in out.iterdir()) == ["old.txt", RUN_FILE]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["res"]
