"""``cxreval data fetch --all`` then ``make demo`` with the network cut and no data mirror: the pinned files
(prediction and label tables, split lists, the 39 radiographs of the image sections) come from a local index
(``$CXREVAL_PINNED_BASE_URL``, laid out as ``<base>/<repo>/<commit>/<path>``), which is then deleted, so the demo
cannot reach any source but the cache."""

from __future__ import annotations

import hashlib
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from cxreval.datasets._pinned import MirrorFile
from cxreval.datasets.mirror import PINNED, fetch_all_pinned
from cxreval.demo.sections import SECTIONS
from cxreval.exceptions import DataUnavailableError

ROOT = Path(__file__).resolve().parents[2]


def _index(root: Path, files: list[tuple[MirrorFile, bytes]]) -> str:
    for entry, data in files:
        p = root / entry.repo / entry.commit / entry.repo_path
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(data)
    return root.as_uri()


class _Steps:
    def __init__(self) -> None:
        self.steps = 0

    def add(self, description: str, total: float | None = None) -> int:
        self.total = total
        return 0

    def advance(self, task: int, n: float = 1) -> None:
        self.steps += int(n)

    def done(self, task: int) -> None:
        pass


def _entry(name: str, data: bytes) -> MirrorFile:
    return MirrorFile(
        f"toy/{name}", "someone/repo", "0" * 40, f"data/{name}", len(data), hashlib.sha256(data).hexdigest()
    )


def test_fetch_all_from_a_local_index_then_offline(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    a, b = _entry("a.csv", b"x,y\n1,2\n"), _entry("b.txt", b"img.png\n")
    monkeypatch.setenv(
        "CXREVAL_PINNED_BASE_URL", _index(tmp_path / "idx", [(a, b"x,y\n1,2\n"), (b, b"img.png\n")])
    )
    prog = _Steps()
    got = fetch_all_pinned(
        cache_dir=tmp_path / "cache", mirror=tmp_path / "none", files=[a, b], progress=prog
    )
    assert prog.steps == prog.total == 2
    assert got["toy/a.csv"].read_bytes() == b"x,y\n1,2\n"
    assert got["toy/b.txt"] == tmp_path / "cache" / "mirror" / "toy" / "b.txt"
    shutil.rmtree(tmp_path / "idx")  # the network is cut: the cache answers
    again = fetch_all_pinned(
        cache_dir=tmp_path / "cache", mirror=tmp_path / "none", files=[a, b], download=False
    )
    assert again == got


def test_fetch_all_refuses_a_file_that_is_not_the_pinned_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    a = _entry("a.csv", b"x,y\n1,2\n")
    monkeypatch.setenv("CXREVAL_PINNED_BASE_URL", _index(tmp_path / "idx", [(a, b"x,y\n1,3\n")]))
    with pytest.raises(DataUnavailableError, match="Checksum mismatch"):
        fetch_all_pinned(cache_dir=tmp_path / "cache", mirror=tmp_path / "none", files=[a])
    assert not (tmp_path / "cache" / "mirror" / "toy" / "a.csv").exists()


def _venv_running_this_cxreval(venv: Path) -> None:
    """``venv/bin/cxreval``: this interpreter's cxreval (the package under test), so that ``make demo VENV=venv``
    runs the Makefile's demo recipe without installing anything."""
    import cxreval

    src = Path(cxreval.__file__).resolve().parents[1]
    exe = venv / "bin" / "cxreval"
    exe.parent.mkdir(parents=True)
    exe.write_text(
        f"#!/bin/sh\nPYTHONPATH={shlex.quote(str(src))}${{PYTHONPATH:+:$PYTHONPATH}} "
        f'exec {shlex.quote(sys.executable)} -m cxreval "$@"\n'
    )
    exe.chmod(0o755)


@pytest.mark.slow
def test_make_demo_offline_after_fetch_all_builds_every_section(
    shared_data: Path, metadata_dir: Path, tmp_path: Path
) -> None:
    make = shutil.which("make")
    if make is None:
        pytest.skip("make is not installed: `make demo` cannot run")
    missing = [e.local_path for e in PINNED if not (shared_data / e.local_path).is_file()]
    if missing:
        pytest.skip(f"the data mirror lacks pinned files {missing[:3]}")
    index = tmp_path / "idx"
    base = _index(index, [(e, (shared_data / e.local_path).read_bytes()) for e in PINNED])
    cache = tmp_path / "cache"
    shutil.copytree(metadata_dir, cache / metadata_dir.name)  # what `cxreval data fetch` puts there
    clone = tmp_path / "clone"  # a fresh clone: what `make demo` reads, and no ../shared beside it
    clone.mkdir()
    for name in ("Makefile", "pyproject.toml"):
        shutil.copy(ROOT / name, clone / name)
    _venv_running_this_cxreval(clone / "venv")
    env = {k: v for k, v in os.environ.items() if k != "CXREVAL_DATA_MIRROR"}
    env.update(CXREVAL_CACHE=str(cache), CXREVAL_PINNED_BASE_URL=base, COLUMNS="200")
    cli = [str(clone / "venv" / "bin" / "cxreval")]
    fetched = subprocess.run(
        [*cli, "-v", "data", "fetch", "--all"], cwd=clone, env=env, capture_output=True, text=True
    )
    assert fetched.returncode == 0, fetched.stderr
    n_mb = sum(e.n_bytes for e in PINNED) / 1e6
    assert f"cached: {len(PINNED)} pinned reference files ({n_mb:.1f} MB, SHA-256 checked)" in fetched.stdout
    assert re.search(rf"pinned reference files.*{len(PINNED)}/{len(PINNED)}", fetched.stderr), fetched.stderr
    assert all((cache / "mirror" / e.local_path).is_file() for e in PINNED)

    shutil.rmtree(index)  # the network is cut: the index is gone, and any other host is unreachable
    env.update(HTTP_PROXY="http://127.0.0.1:9", HTTPS_PROXY="http://127.0.0.1:9", NO_PROXY="")
    # the README's `make demo`: the Makefile's recipe (`cxreval demo --out demo-out --overwrite`), with a short
    # bootstrap (which sections are built does not depend on it)
    run = subprocess.run(
        [make, "-o", "venv/bin/cxreval", "demo", "VENV=venv", "DEMO_ARGS=--n-resamples 20"],
        cwd=clone,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert "data mirror: none" in run.stdout
    lines = {s.title: line for s in SECTIONS for line in run.stdout.splitlines() if f" {s.title} (" in line}
    assert set(lines) == {s.title for s in SECTIONS}, run.stdout
    not_built = [line for line in lines.values() if not line.lstrip().startswith("built ")]
    assert not not_built, run.stdout
    out = clone / "demo-out"
    assert (out / "report.html").is_file() and (out / "iqa" / "scores" / "scores.csv").is_file()
    page = (out / "report.html").read_text()
    assert "Box overlays: " in page and "cxreval data fetch --all" not in page


def test_readme_states_what_fetch_all_brings() -> None:
    """The README's count and size of the pinned files are those of PINNED."""
    n, mb = len(PINNED), sum(e.n_bytes for e in PINNED) / 1e6
    text = " ".join((ROOT / "README.md").read_text().split())
    assert f"every pinned file ({n} files, {mb:.0f} MB:" in text
    assert "but image quality" not in text
