"""``cxreval demo -o A --section audit`` writes the same files as its job, ``run_demo(B, sections=['audit'])``,
byte for byte (each folder's ``run.json`` aside, and ``report.html``, whose provenance shows each folder's
``run.json``: the command line and times), and the job reports one task per section to ``progress``."""

from __future__ import annotations

from pathlib import Path

import pytest

from _same_files import assert_same_files
from cxreval.cli.main import main
from cxreval.demo import run_demo
from cxreval.exceptions import InvalidParameterError, SchemaError


class _Tasks:
    """A Progress that records the tasks added and finished."""

    def __init__(self) -> None:
        self.added: list[str] = []
        self.finished: list[int] = []

    def add(self, description: str, total: float | None = None) -> int:
        self.added.append(description)
        return len(self.added) - 1

    def advance(self, task: int, n: float = 1) -> None:
        pass

    def done(self, task: int) -> None:
        self.finished.append(task)


def test_demo_command_equals_the_job(shared_data: Path, metadata_dir: Path, tmp_path: Path) -> None:
    common = [
        "--data-mirror",
        str(shared_data),
        "--cache-dir",
        str(metadata_dir.parent),
        "--offline",
        "--section",
        "audit",
        "--seed",
        "0",
    ]
    out = tmp_path / "demo-out"  # the report names the section folders: both runs write to the same path
    assert main(["demo", "-o", str(out), *common]) == 0
    out.rename(tmp_path / "cli")
    tasks = _Tasks()
    res = run_demo(
        out,
        data_mirror=shared_data,
        cache_dir=metadata_dir.parent,
        download=False,
        sections=["audit"],
        rng=0,
        progress=tasks,
    )
    assert [s.status for s in res.sections] == ["built"]
    assert tasks.added == [f"demo: {res.sections[0].title}"] and tasks.finished == [0]
    assert (out / "chestxray14_audit" / "summary.md").exists()
    assert_same_files(tmp_path / "cli", out, ignore=frozenset({"run.json", "report.html"}))
    for page in (tmp_path / "cli" / "report.html", out / "report.html"):
        assert "chestxray14_audit" in page.read_text()


def test_the_demo_takes_an_int_seed(tmp_path: Path) -> None:
    import numpy as np

    with pytest.raises(InvalidParameterError, match="'rng' parameter of run_demo must be an int seed"):
        run_demo(tmp_path / "out", rng=np.random.default_rng(0), sections=["audit"])
    assert not (tmp_path / "out").exists()


def test_the_demo_refuses_a_bad_section_or_folder_before_any_work(tmp_path: Path) -> None:
    with pytest.raises(
        InvalidParameterError, match=r"^sections=: unknown section\(s\) \['nope'\]; known: audit, "
    ):
        run_demo(tmp_path / "out", sections=["nope"])
    (tmp_path / "file").write_text("x")
    with pytest.raises(SchemaError, match=r"^--data-mirror .*file is a file; a folder is expected\.$"):
        run_demo(tmp_path / "out", data_mirror=tmp_path / "file", sections=["audit"])
    with pytest.raises(SchemaError, match=r"^--cache-dir .*file is a file; a folder is expected\.$"):
        run_demo(tmp_path / "out", cache_dir=tmp_path / "file", sections=["audit"])
    assert not (tmp_path / "out").exists()
