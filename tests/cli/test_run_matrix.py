"""The run matrix of issue 17: every command that writes a folder, against how runs end.

* two concurrent runs into one --out: the second fails at once with a one-line message naming the lock, the
  first succeeds and its output is readable (every file run.json lists exists and parses);
* SIGINT mid-write: exit 130, one line, --out exactly as before;
* SIGKILL mid-write: no folder at --out; the next run takes over the dead run's lock and removes its
  temporary folder;
* --out a file / under a file / unwritable: exit 2, one line, no traceback, before any computation.

"Mid-write" is made deterministic by ``CXREVAL_TEST_HOLD_S`` (cxreval.outputs): with it set, a run stops with
all its files written in the temporary folder, prints ``cxreval: test hold`` and waits for SIGUSR1. Runs are
subprocesses (``python -m cxreval``) on small inputs made by the test (tests/cli/conftest.py).
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pandas as pd
import pytest

from cxreval.cli.main import main

from .conftest import COMPUTE, WRITING_COMMANDS, command_args

MARK = "cxreval: test hold"


class Run:
    """A cxreval subprocess whose stderr is read by a thread (so waiting for the hold marker cannot hang)."""

    def __init__(self, args: list[str], *, hold: float | None = None) -> None:
        env = dict(os.environ)
        env.pop("CXREVAL_TEST_HOLD_S", None)
        if hold is not None:
            env["CXREVAL_TEST_HOLD_S"] = str(hold)
        self.proc = subprocess.Popen([sys.executable, "-m", "cxreval", *args], stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True, env=env)
        self.lines: list[str] = []
        self.held = threading.Event()
        self._t = threading.Thread(target=self._read, daemon=True)
        self._t.start()

    def _read(self) -> None:
        for line in self.proc.stderr:  # type: ignore[union-attr]
            self.lines.append(line.rstrip("\n"))
            if line.startswith(MARK):
                self.held.set()

    def wait_held(self, timeout: float = 120) -> None:
        if not self.held.wait(timeout):
            self.proc.kill()
            pytest.fail(f"run never reached the hold point; stderr: {self.lines}")

    def finish(self, timeout: float = 120) -> tuple[int, list[str]]:
        rc = self.proc.wait(timeout)
        self._t.join(10)
        self.proc.stdout.close()  # type: ignore[union-attr]
        return rc, [ln for ln in self.lines if not ln.startswith(MARK)]


def _digest(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def _assert_readable(out: Path) -> None:
    rec = json.loads((out / "run.json").read_text())
    assert rec["status"] == "success" and rec["files"]
    on_disk = sorted(str(p.relative_to(out)) for p in out.rglob("*") if p.is_file() and p.name != "run.json")
    assert sorted(rec["files"]) == on_disk  # nothing stale, nothing missing
    for f in rec["files"]:
        p = out / f
        if p.suffix == ".csv":
            pd.read_csv(p)
        elif p.suffix == ".parquet":
            pd.read_parquet(p)


def _leftovers(parent: Path, name: str) -> list[str]:
    return sorted(p.name for p in parent.iterdir() if p.name.startswith(f".{name}."))


def _one_error_line(lines: list[str]) -> str:
    assert len(lines) == 1 and not any("Traceback" in ln for ln in lines), lines
    return lines[0]


@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.slow) if n == "demo" else n
                                  for n in WRITING_COMMANDS])
def test_run_matrix(tmp_path: Path, name: str) -> None:
    args = command_args(name, tmp_path / "in")
    out, out2 = tmp_path / "out", tmp_path / "out2"
    out.mkdir()
    (out / "previous.txt").write_text("an earlier run")

    # wave 1: A holds mid-write into out (--overwrite), C holds mid-write into out2
    a = Run([*args, "-o", str(out), "--overwrite"], hold=120)
    c = Run([*args, "-o", str(out2)], hold=120)
    a.wait_held()
    c.wait_held()
    # concurrent run into the same --out: refused at once, clearly, even with --overwrite
    b = Run([*args, "-o", str(out), "--overwrite"])
    rc, err = b.finish()
    assert rc == 2 and "is being written by another cxreval run" in _one_error_line(err), err
    assert sorted(p.name for p in out.iterdir()) == ["previous.txt"]  # nothing visible before the commit
    a.proc.send_signal(signal.SIGUSR1)  # release A: it succeeds and replaces the earlier folder whole
    rc, err = a.finish()
    assert rc == 0, err
    _assert_readable(out)
    assert not (out / "previous.txt").exists()
    # SIGKILL mid-write: no folder at out2
    c.proc.kill()
    c.finish()
    assert not out2.exists()
    assert _leftovers(tmp_path, "out2")  # the dead run's lock and temporary folder, both hidden

    # wave 2: D is interrupted mid-write into out; E runs into out2 after the killed run
    before = _digest(out)
    d = Run([*args, "-o", str(out), "--overwrite"], hold=120)
    e = Run([*args, "-o", str(out2)])
    d.wait_held()
    d.proc.send_signal(signal.SIGINT)
    rc, err = d.finish()
    assert rc == 130 and "interrupted" in _one_error_line(err), err
    assert _digest(out) == before
    rc, err = e.finish()
    assert rc == 0, err
    _assert_readable(out2)
    assert _leftovers(tmp_path, "out") == [] and _leftovers(tmp_path, "out2") == []


def _forbid(monkeypatch: pytest.MonkeyPatch, dotted: str) -> None:
    module, attr = dotted.rsplit(".", 1)

    def boom(*a: object, **k: object) -> None:
        raise AssertionError(f"{dotted} ran although --out was unusable")

    monkeypatch.setattr(f"{module}.{attr}", boom, raising=False)


@pytest.mark.parametrize("case", ["file", "under-file", "unwritable"])
@pytest.mark.parametrize("name", WRITING_COMMANDS)
def test_bad_out_is_one_line_exit_2_before_computing(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                      monkeypatch: pytest.MonkeyPatch, name: str, case: str) -> None:
    args = command_args(name, tmp_path / "in")
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    if case == "file":
        out = blocker
    elif case == "under-file":
        out = blocker / "sub" / "out"
    else:
        if os.geteuid() == 0:
            pytest.skip("root can write to read-only folders")
        ro = tmp_path / "ro"
        ro.mkdir()
        ro.chmod(0o500)
        out = ro / "out"
    _forbid(monkeypatch, COMPUTE[name])
    capsys.readouterr()
    assert main([*args, "-o", str(out)]) == 2
    cap = capsys.readouterr()
    line = _one_error_line(cap.err.strip().splitlines())
    assert line.startswith("cxreval: error: --out ") and str(out) in line
    assert cap.out == ""
