"""The benchmark's peer interpreter: a virtual environment with the peers (piq, crowd-kit) from PyPI.

Usage::

    python bench/peers.py [--folder DIR]        # build (or reuse) it; prints its interpreter
    python bench/run.py iqa:speed_vs_peers --build-peer-venv

The venv lives outside the repository, in ``~/.cache/cxreval-bench/peers`` (``CXREVAL_BENCH_PEERS`` or
``--folder`` to move it). It is created with :mod:`venv` and ``pip install`` of :data:`PEER_PACKAGES`; the
packages of the interpreter that builds it (torch, numpy, scipy: gigabytes that pip would otherwise download
again) are visible *after* the venv's own through a ``.pth`` file, so pip installs only what is missing or
pinned differently. A file in the venv records what was installed; a venv whose record differs is rebuilt.
"""

from __future__ import annotations

import argparse
import json
import os
import site
import subprocess
import sys
import venv
from pathlib import Path

PEER_PACKAGES: tuple[str, ...] = ("piq==0.8.0", "crowd-kit==1.4.2")
"""What the peer parts import: piq (``iqa:speed_vs_peers``), crowd-kit (``fusion:simulation``,
``fusion:vindr_crowdkit``)."""

PEERS_DIR = Path(os.environ.get("CXREVAL_BENCH_PEERS", Path.home() / ".cache" / "cxreval-bench" / "peers"))
_RECORD = "cxreval-bench-peers.json"

__all__ = ["PEER_PACKAGES", "PEERS_DIR", "build_peer_venv"]


def _python(folder: Path) -> Path:
    return folder / ("Scripts/python.exe" if os.name == "nt" else "bin/python")


def build_peer_venv(folder: Path = PEERS_DIR, packages: tuple[str, ...] = PEER_PACKAGES) -> Path:
    """The interpreter of the peer venv in ``folder``, built first when absent or built with other packages."""
    record = {"packages": list(packages), "base": sys.executable, "python": sys.version.split()[0]}
    py = _python(folder)
    rec_path = folder / _RECORD
    if py.exists() and rec_path.exists() and json.loads(rec_path.read_text()) == record:
        return py
    print(f"building the peer venv {folder} ({', '.join(packages)})", file=sys.stderr, flush=True)
    venv.create(folder, with_pip=True, clear=True)
    out = subprocess.run(
        [str(py), "-c", "import site; print(site.getsitepackages()[0])"],
        capture_output=True,
        text=True,
        check=True,
    )
    own = Path(out.stdout.strip())
    base = [p for p in site.getsitepackages() if Path(p).is_dir()]
    (own / "zz_cxreval_bench_base.pth").write_text("".join(f"{p}\n" for p in base))  # after the venv's own
    subprocess.run(
        [str(py), "-m", "pip", "install", "--no-input", "--disable-pip-version-check", *packages], check=True
    )
    rec_path.write_text(json.dumps(record, indent=1) + "\n")
    return py


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python bench/peers.py", description=__doc__.splitlines()[0])
    ap.add_argument(
        "--folder", type=Path, default=PEERS_DIR, help=f"where the venv lives (default {PEERS_DIR})"
    )
    args = ap.parse_args(argv)
    print(build_peer_venv(args.folder))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
