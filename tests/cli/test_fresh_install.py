"""The package installed with its runtime dependencies only (a fresh venv, ``pip install -e .``): ``cxreval --help``,
``cxreval --version``, a bare ``cxreval`` and every subcommand's ``--help`` work.

The test extra brings packages the runtime does not (click among them, through other packages), so the suite's own
environment cannot show a missing runtime dependency; this test builds an environment that can.
"""

from __future__ import annotations

import os
import subprocess
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def runtime_cxreval(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The ``cxreval`` script of a fresh venv holding cxreval and its runtime dependencies alone."""
    env_dir = tmp_path_factory.mktemp("runtime-venv")
    venv.EnvBuilder(with_pip=True).create(env_dir)
    python = env_dir / "bin" / "python"
    done = subprocess.run(
        [str(python), "-m", "pip", "install", "--disable-pip-version-check", "-q", "-e", str(ROOT)],
        capture_output=True,
        text=True,
        timeout=900,
    )
    if done.returncode != 0:
        pytest.skip(
            f"pip could not install cxreval's runtime dependencies here: {done.stderr.strip()[-400:]}"
        )
    return env_dir / "bin" / "cxreval"


def _run(script: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    return subprocess.run([str(script), *args], capture_output=True, text=True, timeout=120, env=env)


def _command_paths(script: Path, path: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    """Every command path the help lists, walked from the root's ``--help`` output."""
    out = _run(script, *path, "--help")
    assert out.returncode == 0, (path, out.stderr)
    lines = out.stdout.splitlines()
    if "Commands:" not in lines:
        return []
    names = [
        line.split()[0]
        for line in lines[lines.index("Commands:") + 1 :]
        if line.startswith("  ") and line.split()
    ]
    found = []
    for name in names:
        found.append((*path, name))
        found.extend(_command_paths(script, (*path, name)))
    return found


def test_runtime_venv_lacks_test_only_packages(runtime_cxreval: Path) -> None:
    python = runtime_cxreval.parent / "python"
    probe = subprocess.run([str(python), "-c", "import pytest"], capture_output=True, text=True)
    assert probe.returncode != 0, "the runtime venv must not hold the test extra"


def test_help_version_and_bare_command(runtime_cxreval: Path) -> None:
    help_out = _run(runtime_cxreval, "--help")
    assert help_out.returncode == 0, help_out.stderr
    assert "Commands:" in help_out.stdout and "classify" in help_out.stdout
    version = _run(runtime_cxreval, "--version")
    assert version.returncode == 0 and version.stdout.startswith("cxreval "), version.stderr
    bare = _run(runtime_cxreval)
    assert "internal error" not in bare.stderr and "Traceback" not in bare.stderr
    assert "Commands:" in bare.stdout + bare.stderr


def test_every_subcommand_help(runtime_cxreval: Path) -> None:
    paths = _command_paths(runtime_cxreval)
    assert len(paths) >= 15, paths
    for path in paths:
        out = _run(runtime_cxreval, *path, "--help")
        assert out.returncode == 0, (path, out.stderr)
        assert "Usage: cxreval" in out.stdout, path
        assert "internal error" not in out.stderr, (path, out.stderr)
