"""``cxreval data fetch --all`` then ``cxreval demo --offline`` with no data mirror: the pinned files come from
a local index (``$CXREVAL_PINNED_BASE_URL``, laid out as ``<base>/<repo>/<commit>/<path>``), which is then
deleted, so the demo cannot reach any source but the cache."""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import pytest

from cxreval.datasets._pinned import MirrorFile
from cxreval.datasets.mirror import PINNED, fetch_all_pinned
from cxreval.demo import run_demo
from cxreval.demo.sections import SECTIONS
from cxreval.exceptions import DataUnavailableError

ALL_BUT_IQA = [s.key for s in SECTIONS if s.key != "iqa"]
"""Every demo section but image quality, whose fixture only the data mirror holds."""


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


@pytest.mark.slow
def test_demo_offline_after_fetch_all_builds_every_section_but_iqa(
    shared_data: Path, metadata_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    missing = [e.local_path for e in PINNED if not (shared_data / e.local_path).is_file()]
    if missing:
        pytest.skip(f"the data mirror lacks pinned files {missing[:3]}")
    base = _index(tmp_path / "idx", [(e, (shared_data / e.local_path).read_bytes()) for e in PINNED])
    cache = tmp_path / "cache"
    shutil.copytree(metadata_dir, cache / metadata_dir.name)  # what `cxreval data fetch` puts there
    work = tmp_path / "clone"  # no ../shared beside it
    work.mkdir()
    monkeypatch.chdir(work)
    monkeypatch.delenv("CXREVAL_DATA_MIRROR", raising=False)
    monkeypatch.setenv("CXREVAL_PINNED_BASE_URL", base)
    fetch_all_pinned(cache_dir=cache)
    shutil.rmtree(tmp_path / "idx")  # the network is cut
    monkeypatch.delenv("CXREVAL_PINNED_BASE_URL")
    res = run_demo(
        tmp_path / "out", cache_dir=cache, n_resamples=20, rng=0, download=False, sections=ALL_BUT_IQA
    )
    assert res.data_mirror is None
    status = {s.key: (s.status, s.reason) for s in res.sections}
    assert all(v[0] == "built" for v in status.values()), status
