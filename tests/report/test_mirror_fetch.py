"""cxreval.datasets.mirror: pinned GitHub files from a mirror, the cache, or a (file://) download."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from cxreval.datasets._pinned import MirrorFile
from cxreval.datasets.mirror import (
    PINNED,
    default_mirror,
    fetch_file,
    mirror_path,
    pinned_file,
    pinned_files,
    read_manifest,
)
from cxreval.exceptions import DataUnavailableError, InvalidParameterError

CONTENT = b"Image Index,prob_Effusion\n00000001_000.png,0.25\n"
ENTRY = MirrorFile(
    "preds/model.csv",
    "owner/repo",
    "a" * 40,
    "out/preds.csv",
    len(CONTENT),
    hashlib.sha256(CONTENT).hexdigest(),
)


@pytest.fixture()
def fake_github(tmp_path: Path) -> str:
    """A folder laid out like raw.githubusercontent.com, served through a file:// URL."""
    p = tmp_path / "gh" / ENTRY.repo / ENTRY.commit / ENTRY.repo_path
    p.parent.mkdir(parents=True)
    p.write_bytes(CONTENT)
    return (tmp_path / "gh").as_uri()


def test_pinned_matches_shared_manifest(shared_data: Path) -> None:
    tables = tuple(e for e in PINNED if not e.local_path.startswith("images/"))
    assert read_manifest(shared_data / "MANIFEST.tsv") == tables
    assert len(pinned_files("nih_fold_predictions/")) == 10
    assert PINNED[0].url().startswith("https://raw.githubusercontent.com/jrzech/reproduce-chexnet/a011a9ab")


def test_pinned_radiographs_are_the_mirror_s(shared_data: Path) -> None:
    """Every radiograph of the mirror's images/nih is pinned (jrzech/reproduce-chexnet's starter_images, the
    commit of its predictions), and the mirror's copy has the pinned size and SHA-256."""
    images = pinned_files("images/nih/")
    on_disk = sorted(f"images/nih/{p.name}" for p in (shared_data / "images" / "nih").glob("*.png"))
    assert len(images) == 39 and sorted(e.local_path for e in images) == on_disk
    assert {(e.repo, e.commit) for e in images} == {(PINNED[0].repo, PINNED[0].commit)}
    assert all(e.repo_path == "starter_images/" + e.local_path.rsplit("/", 1)[1] for e in images)
    for e in images:
        assert fetch_file(e.local_path, mirror=shared_data, download=False) == shared_data / e.local_path


def test_mirror_copy_is_used_and_verified(shared_data: Path) -> None:
    p = fetch_file("chexpert_test/groundtruth.csv", mirror=shared_data, download=False)
    assert p == shared_data / "chexpert_test" / "groundtruth.csv"


def test_download_into_cache_then_cached(tmp_path: Path, fake_github: str) -> None:
    cache = tmp_path / "cache"
    p = fetch_file(
        ENTRY.local_path, mirror=tmp_path / "empty", cache_dir=cache, base_url=fake_github, files=[ENTRY]
    )
    assert p == cache / "mirror" / "preds" / "model.csv" and p.read_bytes() == CONTENT
    # now offline: the verified cached copy is enough
    q = fetch_file(
        ENTRY.local_path,
        mirror=tmp_path / "empty",
        cache_dir=cache,
        base_url="file:///nonexistent",
        files=[ENTRY],
        download=False,
    )
    assert q == p


def _download_error(tmp_path: Path, base_url: str) -> pytest.ExceptionInfo[DataUnavailableError]:
    """The error of fetching ENTRY from ``base_url`` with an empty mirror and cache: one CxrevalError raised from
    cxreval's own frames, without a chained exception."""
    with pytest.raises(DataUnavailableError) as err:
        fetch_file(
            ENTRY.local_path, mirror=tmp_path, cache_dir=tmp_path / "c", base_url=base_url, files=[ENTRY]
        )
    assert err.value.__cause__ is None and err.value.__suppress_context__  # no chained traceback
    assert len(err.traceback) <= 4, err.traceback  # not raised from inside pooch
    return err


def test_offline_is_data_unavailable(tmp_path: Path) -> None:
    err = _download_error(tmp_path, "file:///nowhere")
    err.match(
        r"Could not download 'preds/model.csv' from file:///nowhere/.*FileNotFoundError.*"
        r"To work offline, set CXREVAL_DATA_MIRROR to a folder .*\(holding preds/model.csv\)\.$"
    )
    assert not list((tmp_path / "c").rglob("*.csv"))  # no partial file left behind
    with pytest.raises(DataUnavailableError, match="downloading is off"):
        fetch_file(ENTRY.local_path, mirror=tmp_path, cache_dir=tmp_path / "c", files=[ENTRY], download=False)


def test_checksum_mismatch(tmp_path: Path, fake_github: str) -> None:
    bad = MirrorFile(ENTRY.local_path, ENTRY.repo, ENTRY.commit, ENTRY.repo_path, ENTRY.n_bytes, "0" * 64)
    with pytest.raises(DataUnavailableError, match=r"Checksum mismatch for file://.*expected 0{64}"):
        fetch_file(
            bad.local_path, mirror=tmp_path / "m", cache_dir=tmp_path / "c", base_url=fake_github, files=[bad]
        )
    m = tmp_path / "m" / "preds"
    m.mkdir(parents=True)
    (m / "model.csv").write_bytes(CONTENT.replace(b"0.25", b"0.26"))
    with pytest.raises(
        DataUnavailableError, match=r"Mirror copy .*model\.csv' does not match the pinned SHA-256"
    ):
        fetch_file(ENTRY.local_path, mirror=tmp_path / "m", cache_dir=tmp_path / "c", files=[ENTRY])


def test_unknown_file_hint() -> None:
    with pytest.raises(
        InvalidParameterError,
        match=r"No pinned reference file 'chexpert_test/groundtruth.cvs'.*"
        r"Did you mean 'chexpert_test/groundtruth.csv'",
    ):
        pinned_file("chexpert_test/groundtruth.cvs")


def test_mirror_only_paths(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CXREVAL_DATA_MIRROR", str(tmp_path))
    assert default_mirror() == tmp_path
    (tmp_path / "xqa_tables").mkdir()
    assert mirror_path("xqa_tables") == tmp_path / "xqa_tables"
    with pytest.raises(DataUnavailableError, match=r"'images/nih' is not in the data mirror"):
        mirror_path("images/nih")


OTHER = b"Image Index,prob_Effusion\n00000002_000.png,0.75\n"
FOLDER = (
    ENTRY,
    MirrorFile(
        "preds/other.csv",
        "owner/repo",
        "a" * 40,
        "out/other.csv",
        len(OTHER),
        hashlib.sha256(OTHER).hexdigest(),
    ),
)


def test_fetch_folder_holds_exactly_the_pinned_files(tmp_path: Path, fake_github: str) -> None:
    """A folder of pinned files: the mirror's when it holds exactly them, else one cache folder holding them all
    (copied from the mirror, downloaded for the rest), every copy checked against its SHA-256."""
    from cxreval.datasets.mirror import fetch_folder

    gh = Path(fake_github.removeprefix("file://")) / "owner" / "repo" / ("a" * 40) / "out"
    (gh / "other.csv").write_bytes(OTHER)
    mirror, cache = tmp_path / "mirror", tmp_path / "cache"
    (mirror / "preds").mkdir(parents=True)
    (mirror / "preds" / "model.csv").write_bytes(
        CONTENT
    )  # one of the two in the mirror, the other downloaded
    got = fetch_folder("preds/", mirror=mirror, cache_dir=cache, base_url=fake_github, files=FOLDER)
    assert got == cache / "mirror" / "preds" and sorted(p.name for p in got.iterdir()) == [
        "model.csv",
        "other.csv",
    ]
    assert (got / "model.csv").read_bytes() == CONTENT and (got / "other.csv").read_bytes() == OTHER
    (mirror / "preds" / "other.csv").write_bytes(OTHER)  # now the mirror holds exactly the pinned files
    assert (
        fetch_folder("preds/", mirror=mirror, cache_dir=cache, download=False, files=FOLDER)
        == mirror / "preds"
    )
    (mirror / "preds" / "notes.csv").write_text("not pinned")  # an extra file: the cache folder, never it
    assert fetch_folder("preds/", mirror=mirror, cache_dir=cache, download=False, files=FOLDER) == got
    (mirror / "preds" / "other.csv").write_bytes(OTHER + b"x")
    with pytest.raises(DataUnavailableError, match="does not match the pinned SHA-256"):
        fetch_folder("preds/", mirror=mirror, cache_dir=cache, download=False, files=FOLDER)


def test_no_network_is_one_short_error(tmp_path: Path) -> None:
    """Offline (here: a port nobody listens on), the error is one CxrevalError whose message says why in a few
    words and what to do, with no chained exception (a notebook would print ~60 lines of requests' traceback)."""
    msg = str(_download_error(tmp_path, "http://127.0.0.1:9").value)
    assert "(no connection to 127.0.0.1:9; offline, or behind a proxy that blocks it?)" in msg, msg
    assert "CXREVAL_DATA_MIRROR" in msg and "HTTPConnectionPool" not in msg and len(msg) < 400, msg


def test_cli_offline_names_its_option(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`cxreval data export` of a pinned dataset without the network: one line naming --path and the environment
    variable, never a Python keyword (mirror=, path=)."""
    from cxreval.cli.main import main

    monkeypatch.chdir(tmp_path)  # no ../shared/data beside it
    monkeypatch.delenv("CXREVAL_DATA_MIRROR", raising=False)
    for var in ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy"):
        monkeypatch.setenv(var, "http://127.0.0.1:9")  # a proxy nobody listens on: offline, at once
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    args = [
        "data",
        "export",
        "nih_predictions",
        "--cache-dir",
        str(tmp_path / "cache"),
        "-o",
        str(tmp_path / "o"),
    ]
    assert main(args) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and err.startswith("cxreval: error: Could not download"), err
    assert "set CXREVAL_DATA_MIRROR to a folder" in err and "Or pass --path (a folder holding" in err, err
    assert "mirror=" not in err and "path=" not in err, err
    assert not (tmp_path / "o").exists()


def test_one_environment_variable_names_the_local_data() -> None:
    """The local copy of the reference data has one name across the code, tests, benchmarks, docs and CI."""
    import re

    root = Path(__file__).resolve().parents[2]
    names: set[str] = set()
    files = [root / "README.md", root / "Makefile", *root.glob(".ci/*")]
    for sub in ("src", "tests", "bench", "docs"):
        files += [
            p for p in (root / sub).rglob("*") if p.suffix in {".py", ".md", ".yml", ".yaml", ".toml", ".sh"}
        ]
    for p in files:
        if p.is_file():
            names |= set(
                re.findall(r"CXREVAL_[A-Z_]*(?:DATA|MIRROR|SHARED)[A-Z_]*", p.read_text(errors="replace"))
            )
    assert names == {"CXREVAL_DATA_MIRROR"}, names
