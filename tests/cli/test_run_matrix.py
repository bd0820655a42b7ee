"""The run matrix: every command that writes a folder, against how runs end.

* two concurrent runs into one --out: the second fails at once with a one-line message naming the lock, the
  first succeeds and its output is readable (every file run.json lists exists and parses);
* SIGINT mid-write: exit 130, one line, --out exactly as before;
* SIGKILL mid-write: no folder at --out; the next run takes over the dead run's lock and removes its
  temporary folder;
* --out a file / under a file / unwritable: exit 2, one line, no traceback, before any computation;
* --out the folder that holds the inputs, or a user's folder without cxreval's run.json, with --overwrite:
  refused before computing (exit 2, one line naming the input or the folder), every input intact;
* a blank state cell, a header-only input: refused with the file (and row and column), exit 2;
* a full disk (ENOSPC on a small tmpfs) and a read-only file system (EROFS): one line naming --out and the
  cause, exit 2, nothing left behind.

"Mid-write" is made deterministic by the hold this test installs in the run's process (``_hold.py`` beside it,
wrapping ``write_run_record`` of ``cxreval.outputs._folder``; nothing in the library): a run stops with all its files written in
the temporary folder, prints ``cxreval: test hold`` and waits for SIGUSR1. Runs are
separate processes on small inputs made by the test (tests/cli/conftest.py): forked from a server that has
imported cxreval's command modules once (each child runs ``main(argv)`` as the console script does, and is
signalled by its own pid), so a run costs its computation rather than Python's start-up; one command also
runs the whole matrix as real ``python -m cxreval`` subprocesses.
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pandas as pd
import pytest

from cxreval.cli.main import main

from . import _hold
from .conftest import COMPUTE, WRITING_COMMANDS, command_args

MARK = _hold.MARK
HERE = Path(__file__).resolve().parent


class Run:
    """A cxreval subprocess whose stderr is read by a thread (so waiting for the hold marker cannot hang)."""

    def __init__(self, args: list[str], *, hold: float | None = None) -> None:
        run = (
            ["-m", "cxreval"]
            if hold is None
            else ["-c", _hold.MAIN.format(path=str(HERE), seconds=float(hold))]
        )
        self.proc = subprocess.Popen(
            [sys.executable, *run, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
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

    def send_signal(self, sig: int) -> None:
        self.proc.send_signal(sig)

    def kill(self) -> None:
        self.proc.kill()

    def finish(self, timeout: float = 120) -> tuple[int, list[str]]:
        rc = self.proc.wait(timeout)
        self._t.join(10)
        self.proc.stdout.close()  # type: ignore[union-attr]
        return rc, [ln for ln in self.lines if not ln.startswith(MARK)]


_SERVER = textwrap.dedent("""
    import json, os, sys
    from cxreval.cli import main as m
    for name in m._command_modules():
        m._load_module(name)
    import cxreval.demo, cxreval.report  # noqa: F401  (what the demo command imports when it runs)
    out = sys.stdout
    print("ready", file=out, flush=True)
    for line in sys.stdin:
        req = json.loads(line)
        if req["op"] == "run":
            pid = os.fork()
            if pid == 0:
                fd = os.open(os.devnull, os.O_RDONLY)
                os.dup2(fd, 0)
                os.dup2(os.open(req["stdout"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC), 1)
                os.dup2(os.open(req["stderr"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC), 2)
                sys.stdin = open(os.devnull)
                sys.stdout = os.fdopen(1, "w", buffering=1)
                sys.stderr = os.fdopen(2, "w", buffering=1)
                if req["hold"] is not None:
                    sys.path.insert(0, req["here"])
                    import _hold
                    _hold.install(req["hold"])
                sys.argv = ["cxreval", *req["argv"]]
                code = 1
                try:
                    code = m.main(req["argv"])
                finally:
                    sys.stdout.flush()
                    sys.stderr.flush()
                    os._exit(code)
            print(pid, file=out, flush=True)
        elif req["op"] == "wait":
            _, status = os.waitpid(req["pid"], 0)
            print(os.waitstatus_to_exitcode(status), file=out, flush=True)
""")


class ForkServer:
    """A process that has imported cxreval's commands once and forks one child per run."""

    def __init__(self) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-c", _SERVER], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )
        assert self.proc.stdout.readline().strip() == "ready"  # type: ignore[union-attr]

    def request(self, **req: object) -> int:
        self.proc.stdin.write(json.dumps(req) + "\n")  # type: ignore[union-attr]
        self.proc.stdin.flush()  # type: ignore[union-attr]
        return int(self.proc.stdout.readline())  # type: ignore[union-attr]

    def close(self) -> None:
        self.proc.stdin.close()  # type: ignore[union-attr]
        self.proc.wait(30)


class ForkedRun:
    """A run forked from a :class:`ForkServer`: the same interface as :class:`Run`."""

    _n = 0

    def __init__(self, server: ForkServer, args: list[str], *, hold: float | None = None) -> None:
        ForkedRun._n += 1
        self.server = server
        base = Path(os.environ.get("TMPDIR", "/tmp"))
        self.err = base / f"cxreval-run-{os.getpid()}-{ForkedRun._n}.err"
        outf = self.err.with_suffix(".out")
        self.pid = server.request(
            op="run",
            argv=args,
            hold=None if hold is None else float(hold),
            here=str(HERE),
            stdout=str(outf),
            stderr=str(self.err),
        )
        self._files = (self.err, outf)

    def _lines(self) -> list[str]:
        return self.err.read_text().splitlines() if self.err.exists() else []

    def wait_held(self, timeout: float = 120) -> None:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if any(ln.startswith(MARK) for ln in self._lines()):
                return
            time.sleep(0.02)
        os.kill(self.pid, signal.SIGKILL)
        pytest.fail(f"run never reached the hold point; stderr: {self._lines()}")

    def send_signal(self, sig: int) -> None:
        os.kill(self.pid, sig)

    def kill(self) -> None:
        os.kill(self.pid, signal.SIGKILL)

    def finish(self, timeout: float = 120) -> tuple[int, list[str]]:
        rc = self.server.request(op="wait", pid=self.pid)
        lines = [ln for ln in self._lines() if not ln.startswith(MARK)]
        for f in self._files:
            f.unlink(missing_ok=True)
        return rc, lines


@pytest.fixture(scope="module")
def fork_server():
    server = ForkServer()
    yield server
    server.close()


def _digest(folder: Path) -> dict[str, str]:
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


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


@pytest.mark.parametrize("name", [n for n in WRITING_COMMANDS if n != "demo"])
def test_run_matrix(tmp_path: Path, fork_server: ForkServer, name: str) -> None:
    _matrix(tmp_path, name, lambda args, hold=None: ForkedRun(fork_server, args, hold=hold))


def test_run_matrix_demo(tmp_path: Path, fork_server: ForkServer) -> None:
    """The demo (a 6 MB report per run) in two waves of parallel runs: SIGINT, SIGKILL and a concurrent run.
    Its successful output is checked by tests/demo/test_demo.py."""
    args = command_args("demo", tmp_path / "in")
    out, out2 = tmp_path / "out", tmp_path / "out2"
    _earlier_run(out)
    a = ForkedRun(fork_server, [*args, "-o", str(out), "--overwrite"], hold=120)
    c = ForkedRun(fork_server, [*args, "-o", str(out2)], hold=120)
    a.wait_held()
    c.wait_held()
    rc, err = ForkedRun(fork_server, [*args, "-o", str(out), "--overwrite"]).finish()
    assert rc == 2 and "is being written by another cxreval run" in _one_error_line(err), err
    a.send_signal(signal.SIGINT)
    rc, err = a.finish()
    assert rc == 130 and "interrupted" in _one_error_line(err), err
    assert sorted(p.name for p in out.iterdir()) == ["previous.txt", "run.json"]
    c.kill()
    c.finish()
    assert not out2.exists()
    assert _leftovers(tmp_path, "out") == []


@pytest.mark.slow
def test_run_matrix_real_subprocesses(tmp_path: Path) -> None:
    """The same matrix through the real entry point (``python -m cxreval``), for one command."""
    _matrix(tmp_path, "agree", lambda args, hold=None: Run(args, hold=hold))


def _earlier_run(out: Path) -> None:
    """``out`` as an earlier cxreval run left it (a file and cxreval's run.json): what --overwrite replaces."""
    from cxreval.outputs import output_folder

    with output_folder(out) as d:
        (d / "previous.txt").write_text("an earlier run")


def _matrix(tmp_path: Path, name: str, start) -> None:
    args = command_args(name, tmp_path / "in")
    out, out2 = tmp_path / "out", tmp_path / "out2"
    _earlier_run(out)

    # wave 1: A holds mid-write into out (--overwrite), C holds mid-write into out2
    a = start([*args, "-o", str(out), "--overwrite"], hold=120)
    c = start([*args, "-o", str(out2)], hold=120)
    a.wait_held()
    c.wait_held()
    # concurrent run into the same --out: refused at once, clearly, even with --overwrite
    b = start([*args, "-o", str(out), "--overwrite"])
    rc, err = b.finish()
    assert rc == 2 and "is being written by another cxreval run" in _one_error_line(err), err
    assert sorted(p.name for p in out.iterdir()) == [
        "previous.txt",
        "run.json",
    ]  # nothing visible before the commit
    a.send_signal(signal.SIGUSR1)  # release A: it succeeds and replaces the earlier folder whole
    rc, err = a.finish()
    assert rc == 0, err
    _assert_readable(out)
    assert not (out / "previous.txt").exists()
    # SIGKILL mid-write: no folder at out2
    c.kill()
    c.finish()
    assert not out2.exists()
    assert _leftovers(tmp_path, "out2")  # the dead run's lock and temporary folder, both hidden

    # wave 2: D is interrupted mid-write into out; E runs into out2 after the killed run
    before = _digest(out)
    d = start([*args, "-o", str(out), "--overwrite"], hold=120)
    e = start([*args, "-o", str(out2)])
    d.wait_held()
    d.send_signal(signal.SIGINT)
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

    monkeypatch.setattr(f"{module}.{attr}", boom)  # raising: a stale target would make the check vacuous


@pytest.mark.parametrize("case", ["file", "under-file", "unwritable"])
@pytest.mark.parametrize("name", WRITING_COMMANDS)
def test_bad_out_is_one_line_exit_2_before_computing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, name: str, case: str
) -> None:
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


FILE_WRITERS = {"report"}  # --out is one HTML file, not a folder (its writing belongs to the report change)


def test_every_command_with_out_is_in_the_matrix():
    """A new command writing a folder must join the matrix: add it to WRITING_COMMANDS and command_args."""
    import typer

    from cxreval.cli.main import app

    found = set()

    def walk(cmd, path):
        if hasattr(cmd, "list_commands"):
            for n in cmd.list_commands(None):
                walk(cmd.get_command(None, n), (*path, n))
        elif any("--out" in getattr(p, "opts", []) for p in cmd.params):
            found.add("-".join(path))

    walk(typer.main.get_command(app), ())
    missing = sorted(found - set(WRITING_COMMANDS) - FILE_WRITERS)
    assert not missing, f"commands with --out not in the run matrix (tests/cli/conftest.py): {missing}"


# --------------------------------------------------------------------------- inputs are never lost
def _tree(folder: Path) -> dict[str, str]:
    """Every file under ``folder`` (hidden ones included) with its SHA-256: what must survive a refused run."""
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def _refused(capsys: pytest.CaptureFixture[str], argv: list[str]) -> str:
    capsys.readouterr()
    assert main(argv) == 2
    cap = capsys.readouterr()
    line = _one_error_line(cap.err.strip().splitlines())
    assert line.startswith("cxreval: error: "), line
    return line


NO_INPUT_FILES = ("synth", "demo")
"""Writing commands whose small run reads no file of the test's (their folder is covered by the next test)."""


@pytest.mark.parametrize("name", [n for n in WRITING_COMMANDS if n not in NO_INPUT_FILES])
def test_out_onto_the_input_folder_with_overwrite_keeps_every_input(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    """``-o`` = the folder holding the inputs, ``--overwrite``: refused before computing, naming an input (or
    the folder, where the command's inputs are not files there), and every file in it intact."""
    d = tmp_path / "in"
    args = command_args(name, d)
    before = _tree(d)
    assert before
    _forbid(monkeypatch, COMPUTE[name])
    line = _refused(capsys, [*args, "-o", str(d), "--overwrite"])
    assert "holds the input" in line or "is the input" in line or "cxreval did not write" in line, line
    assert _tree(d) == before


@pytest.mark.parametrize("name", WRITING_COMMANDS)
def test_overwrite_refuses_a_folder_cxreval_did_not_write(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    args = command_args(name, tmp_path / "in")
    user = tmp_path / "thesis"
    user.mkdir()
    (user / "chapter1.tex").write_text("months of work")
    (user / "run.json").write_text('{"not": "a cxreval run record"}')
    _forbid(monkeypatch, COMPUTE[name])
    line = _refused(capsys, [*args, "-o", str(user), "--overwrite"])
    assert f"--out {user} is a folder cxreval did not write" in line, line
    assert sorted(p.name for p in user.iterdir()) == ["chapter1.tex", "run.json"]


@pytest.mark.parametrize("name", ["classify", "agree"])
def test_out_inside_a_folder_input_is_not_replaced(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str
) -> None:
    """A folder of label parts as input and an earlier output inside it: --overwrite would change the input."""
    d = tmp_path / "in"
    args = command_args(name, d)
    parts = d / "parts"
    parts.mkdir()
    (d / "labels.csv").rename(parts / "labels.csv")
    args = [str(parts) if a == str(d / "labels.csv") else a for a in args]
    inner = parts / "res"
    assert main([*args, "-o", str(inner)]) == 0  # a new folder inside the input: nothing removed
    before = _tree(parts)
    line = _refused(capsys, [*args, "-o", str(inner), "--overwrite"])
    assert f"lies inside the input folder {parts}" in line, line
    assert _tree(parts) == before


def test_dotdot_in_out_leaves_no_folder_behind(tmp_path: Path) -> None:
    args = command_args("agree", tmp_path / "in")
    assert main([*args, "-o", str(tmp_path / "a" / "ghost" / ".." / "res")]) == 0
    assert sorted(p.name for p in (tmp_path / "a").iterdir()) == ["res"]


# ------------------------------------------------------------------------------- bad table inputs
LABEL_COMMANDS = ("classify", "rank", "agree", "fuse")
"""The writing commands that read a label table (``-l``)."""


def _labels_arg(args: list[str]) -> Path:
    return Path(args[args.index("-l") + 1])


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
@pytest.mark.parametrize("name", LABEL_COMMANDS)
def test_blank_state_cell_is_refused_with_file_row_and_column(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, fmt: str
) -> None:
    args = command_args(name, tmp_path / "in")
    lab = _labels_arg(args)
    t = pd.read_csv(lab, dtype=str)
    t.loc[7, "state"] = ""
    if fmt == "parquet":
        lab.unlink()
        lab = lab.with_suffix(".parquet")
        t.to_parquet(lab, index=False)
        args[args.index("-l") + 1] = str(lab)
    else:
        t.to_csv(lab, index=False)
    out = tmp_path / "out"
    line = _refused(capsys, [*args, "-o", str(out)])
    assert (
        str(lab) in line and "row 7" in line and "column 'state'" in line and "--blank-state missing" in line
    ), line
    assert not out.exists()


@pytest.mark.parametrize("name", LABEL_COMMANDS)
def test_blank_state_read_as_missing_only_when_asked(tmp_path: Path, name: str) -> None:
    args = command_args(name, tmp_path / "in")
    lab = _labels_arg(args)
    t = pd.read_csv(lab, dtype=str)
    t.loc[7, "state"] = ""
    t.to_csv(lab, index=False)
    assert main([*args, "--blank-state", "missing", "-o", str(tmp_path / "out")]) == 0


def _table_inputs(args: list[str]) -> list[Path]:
    """The CSV tables among a command's arguments."""
    return [Path(a) for a in args if a.endswith(".csv") and Path(a).is_file()]


TABLE_COMMANDS = tuple(
    n for n in WRITING_COMMANDS if n not in ("synth", "demo", "iqa-degrade", "reader-export", "predict")
)
"""The writing commands that read a CSV table (synth, demo, iqa degrade, reader export and predict read none)."""


@pytest.mark.parametrize("name", TABLE_COMMANDS)
def test_header_only_input_is_no_rows(tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str) -> None:
    args = command_args(name, tmp_path / "in")
    tables = _table_inputs(args)
    assert tables, args
    for t in tables:
        original = t.read_text()
        t.write_text(original.splitlines()[0] + "\n")
        line = _refused(capsys, [*args, "-o", str(tmp_path / "out")])
        assert str(t) in line and "has no rows" in line, line
        t.write_text(original)
    assert not (tmp_path / "out").exists()


# ------------------------------------------------------------------------------- file system errors
@pytest.fixture
def small_mount(tmp_path: Path):
    """A mount point for a tmpfs (root only); yields a function mounting one with the given options."""
    if os.geteuid() != 0 or not sys.platform.startswith("linux"):
        pytest.skip("mounting a tmpfs needs root on Linux")
    point = tmp_path / "mnt"
    point.mkdir()
    mounted: list[Path] = []

    def mount(options: str) -> Path:
        r = subprocess.run(
            ["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(point)], capture_output=True, text=True
        )
        if r.returncode != 0:
            pytest.skip(f"cannot mount a tmpfs here: {r.stderr.strip()}")
        mounted.append(point)
        return point

    yield mount
    for p in mounted:
        subprocess.run(["umount", "-l", str(p)], check=False)  # lazy: a busy mount still goes


@pytest.mark.parametrize("name", [n for n in WRITING_COMMANDS if n != "demo"])
def test_disk_full_is_one_line_naming_out(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], small_mount, name: str
) -> None:
    """ENOSPC on a tmpfs of two pages: one line naming --out and the cause, exit 2, nothing left behind."""
    args = command_args(name, tmp_path / "in")
    point = small_mount("size=8k,nr_inodes=64")
    out = point / "res"
    line = _refused(capsys, [*args, "-o", str(out)])
    assert line.startswith(f"cxreval: error: --out {out}") and "No space left on device" in line, line
    left = list(point.iterdir())
    if name == "predict":  # predict keeps its documented resume store (whole shards only) for the rerun
        from cxreval.predict._runner import partial_path

        left = [p for p in left if p != partial_path(out)]
    assert left == []


@pytest.mark.parametrize("name", WRITING_COMMANDS)
def test_read_only_file_system_is_one_line_naming_out(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    small_mount,
    name: str,
) -> None:
    args = command_args(name, tmp_path / "in")
    point = small_mount("ro,size=64k")
    out = point / "sub" / "res"
    _forbid(monkeypatch, COMPUTE[name])
    line = _refused(capsys, [*args, "-o", str(out)])
    assert line.startswith(f"cxreval: error: --out {out}") and "read-only file system" in line, line
