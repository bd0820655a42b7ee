"""``cxreval reader``'s jobs: ``reader export`` writes what :func:`cxreval.reader.export_study`'s ``save``
writes, byte for byte; ``reader init`` is :func:`cxreval.reader.create_study` (the same study, readers and
display renditions)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from _same_files import assert_same_files

pytest.importorskip("sqlalchemy", reason="the reader extra (sqlalchemy) is in the test extra")

FINDINGS = ["Effusion", "Nodule"]


def _study(root: Path) -> Path:
    from PIL import Image

    rng = np.random.default_rng(0)
    (root / "images").mkdir(parents=True)
    for k, name in enumerate(["s1", "s2", "-3"]):  # '-3': a formula-like id, exported as '-3
        a = rng.integers(0, 4096 if k else 256, size=(30, 40))
        Image.fromarray(a.astype(np.uint16 if k else np.uint8)).save(root / "images" / f"{name}.png")
    (root / "study.yaml").write_text(
        f"name: job-study\nfindings: [{', '.join(FINDINGS)}]\nimages: images\n"
        "readers: [r1, r2]\nresolvers: [boss]\n"
    )
    return root / "study.yaml"


def _labelled(tmp_path: Path) -> str:
    from cxreval.reader import create_study
    from cxreval.reader.store import ReaderStore

    url = f"sqlite:///{tmp_path / 'study.db'}"
    made = create_study(_study(tmp_path / "s"), url)
    store = ReaderStore.open(url)
    for name in ("r1", "r2"):
        reader = store.authenticate(made.tokens[name])
        for k, item in enumerate(sorted(store.items["image"])):
            pos = (k + (name == "r2")) % 2 == 0
            store.submit(
                reader,
                f"{name}-{k:06d}",
                "image",
                item,
                {
                    "labels": {"Effusion": "positive" if pos else "negative", "Nodule": "uncertain"},
                    "boxes": [{"finding": "Effusion", "x_min": 1, "y_min": 2, "x_max": 9, "y_max": 12}]
                    if pos
                    else [],
                    "comment": ["a\r=1+1", "b\n@SUM(1)", "c\r\n+2"][k],
                    "seconds": 4.5,
                },
            )
    store.close()
    return url


def test_reader_export_writes_what_the_job_saves(tmp_path: Path) -> None:
    from cxreval.cli.main import main
    from cxreval.reader import export_study

    url = _labelled(tmp_path)
    assert main(["reader", "export", "--db", url, "--out", str(tmp_path / "cli")]) == 0
    res = export_study(url)
    saved = res.save(tmp_path / "job")
    assert_same_files(tmp_path / "cli", tmp_path / "job")
    assert {p.relative_to(tmp_path / "job").as_posix() for p in saved} == set(res.texts)
    assert {"labels.csv", "boxes.csv", "boxes/img_r1.csv", "notes.csv", "audit.csv", "events.csv"} <= set(
        res.texts
    )
    # 2 readers x 3 studies x 2 findings, and conflict_resolved: the readers agree on Nodule (3 studies) and
    # disagree on Effusion everywhere (3 pairs not yet resolved, left out)
    assert (res.n_labels, res.n_boxes, res.n_notes, res.n_submissions, res.n_unresolved) == (15, 3, 6, 6, 3)
    assert res.sources == ("conflict_resolved", "img_r1", "img_r2")


def test_reader_init_is_create_study(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from cxreval.cli.main import main
    from cxreval.reader.images import RENDITIONS
    from cxreval.reader.store import ReaderStore

    study = _study(tmp_path / "s")
    url = f"sqlite:///{tmp_path / 'cli.db'}"
    assert main(["reader", "init", "--study", str(study), "--db", url, "--executor", "process:2"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "study 'job-study': tasks image, adjudication; items {'image': 3}; findings 2"
    assert [line.split(":")[0] for line in out[1:]] == ["r1", "r2", "boss", "organiser (progress and export)"]
    store = ReaderStore.open(url)
    assert sorted(store.readers()["name"]) == ["boss", "organiser", "r1", "r2"]
    tokens = {line.split(": ")[0]: line.rsplit("#token=", 1)[1] for line in out[1:]}
    assert store.authenticate(tokens["r1"]).name == "r1"
    store.close()
    assert len(list((tmp_path / "s" / RENDITIONS).glob("*.rendition"))) == 3
    from cxreval.reader import create_study

    again = create_study(study, f"sqlite:///{tmp_path / 'job.db'}")  # the renditions are on disk already
    assert (again.renditions.n_made, again.renditions.n_reused) == (0, 3)
    assert dict(again.n_items) == {"image": 3} and set(again.tokens) == {"r1", "r2", "boss"}
    assert again.organiser_token is not None


def test_reader_commands_resolve_the_database_as_study_url(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from cxreval.reader._jobs import READER_DB_ENV, database_files, study_url
    from cxreval.reader.db import DEFAULT_URL

    monkeypatch.delenv(READER_DB_ENV, raising=False)
    assert study_url() == DEFAULT_URL and study_url("sqlite:///a.db") == "sqlite:///a.db"
    monkeypatch.setenv(READER_DB_ENV, "sqlite:///env.db")
    assert study_url() == "sqlite:///env.db" and study_url("sqlite:///a.db") == "sqlite:///a.db"
    assert database_files("sqlite:///x/s.db") == [Path("x/s.db")]
    assert database_files("sqlite://") == [] and database_files("postgresql://u@h/db") == []


def test_add_reader_and_the_server_are_reader_jobs(tmp_path: Path) -> None:
    from cxreval.reader import create_study
    from cxreval.reader._jobs import add_study_reader, open_study_server
    from cxreval.reader.store import ReaderStore

    url = f"sqlite:///{tmp_path / 'study.db'}"
    create_study(_study(tmp_path / "s"), url)
    token = add_study_reader("carol", url, role="resolver")
    store = ReaderStore.open(url)
    assert store.authenticate(token).name == "carol"
    store.close()
    server = open_study_server(url, host="127.0.0.1", port=0)
    try:
        assert server.store.spec.name == "job-study" and server.url.startswith("http://127.0.0.1:")
    finally:
        server.sock.close()
        server.store.close()


def test_export_study_checks_out_before_reading(tmp_path: Path) -> None:
    from cxreval.outputs._errors import OutputError
    from cxreval.reader import export_study

    (tmp_path / "file").write_text("x")
    url = f"sqlite:///{tmp_path / 'absent.db'}"  # never opened: the folder is refused first
    with pytest.raises(OutputError, match=r"out=.*file.* is a file; an output folder is expected"):
        export_study(url, out=tmp_path / "file")
    with pytest.raises(OutputError, match=r"is the input .*file; writing there would destroy it"):
        export_study(f"sqlite:///{tmp_path / 'file'}", out=tmp_path / "file", overwrite=True)
