"""Shared pieces of the "demo files == CLI files" tests.

Each test module runs one demo section on the real reference data (``run_demo_section``), runs the
analysis command(s) a user would type on the same inputs written to files, and checks with
``assert_same_tables`` that every table the section writes for that result equals the command's table
exactly (values, dtypes, column order). The tests skip visibly without ``../shared/data`` or the fetched
metadata (the ``shared_data`` / ``metadata_dir`` fixtures).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import pandas as pd
import pytest

from cxreval.demo import run_demo

N_RESAMPLES = 20
"""Bootstrap replicates of the demo sections and the commands compared with them (small: the tables are
compared exactly, so any number shows the same code ran)."""


def run_demo_section(key: str, out: Path, shared_data: Path, metadata_dir: Path, **kw: object) -> Path:
    """Run the demo's section ``key`` alone into ``out``; return the section's folder (asserting it was built)."""
    kw = {"n_resamples": N_RESAMPLES, "rng": 0, **kw}
    res = run_demo(
        out, data_mirror=shared_data, cache_dir=metadata_dir.parent, download=False, sections=[key], **kw
    )
    (sec,) = res.sections
    assert sec.status == "built", sec.to_dict()
    assert sec.folder is not None
    return sec.folder


def assert_same_tables(demo: Path, cli: Path, files: Iterable[str]) -> None:
    """Every CSV of ``files`` (and its Parquet twin) is in both folders and equal, exactly."""
    files = list(files)
    assert files, "no files to compare"
    for name in files:
        for ext in (".csv", ".parquet"):
            a, b = demo / Path(name).with_suffix(ext), cli / Path(name).with_suffix(ext)
            assert a.is_file(), (
                f"the demo did not write {a.name} (files: {sorted(p.name for p in demo.iterdir())})"
            )
            assert b.is_file(), (
                f"the command did not write {b.name} (files: {sorted(p.name for p in cli.iterdir())})"
            )
            read = pd.read_csv if ext == ".csv" else pd.read_parquet
            ta, tb = read(a), read(b)
            ta.attrs, tb.attrs = {}, {}
            pd.testing.assert_frame_equal(ta, tb, check_exact=True, obj=f"{name} ({ext}): demo vs command")


def run_recorded_commands(section: Path, cwd: Path, cache: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Run the section's ``commands`` (its run.json) in order in the empty folder ``cwd`` with the same cache;
    return the folder the last command wrote (the section's key)."""
    import json
    import shlex

    from cxreval.cli.main import main

    commands = json.loads((section / "run.json").read_text())["commands"]
    assert commands and all(c.startswith("cxreval ") for c in commands), commands
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    monkeypatch.setenv("CXREVAL_CACHE", str(cache))
    for c in commands:
        assert main(shlex.split(c)[1:]) == 0, c
    return cwd / section.name


def assert_same_bytes(demo: Path, cli: Path, files: Iterable[str]) -> None:
    """Every CSV of ``files`` is byte for byte the same in both folders."""
    for name in files:
        a, b = (demo / name).read_bytes(), (cli / name).read_bytes()
        assert a == b, f"{name}: the demo's file differs from the recorded commands' file"


@pytest.fixture(scope="session")
def demo_section(shared_data: Path, metadata_dir: Path, tmp_path_factory: pytest.TempPathFactory):
    """``demo_section(key, **run_demo_options)`` -> the built section's folder, built once per key and options in
    the session (the tests only read it; each compares it with a run of its own)."""
    built: dict[tuple[str, str], Path] = {}

    def run(key: str, **kw: object) -> Path:
        options = repr(sorted(kw.items()))
        if (key, options) not in built:
            out = tmp_path_factory.mktemp(f"demo-{key}")
            built[key, options] = run_demo_section(key, out, shared_data, metadata_dir, **kw)
        return built[key, options]

    return run
