"""The study file: validation before any database work, and each reader's seeded item order."""

from __future__ import annotations

from pathlib import Path

import pytest

from cxreval.exceptions import SchemaError
from cxreval.reader._order import reader_order
from cxreval.reader.study import load_study, study_items


def test_study_items_and_tasks(study_file: Path) -> None:
    spec = load_study(study_file)
    assert spec.tasks == ("image", "report", "iqa", "adjudication")
    assert spec.findings == ("Effusion", "Cardiomegaly", "Nodule")
    assert spec.adjudication_readers == ("alice", "bob")
    items = study_items(spec)
    img = {i.key: i.payload for i in items if i.task == "image"}
    assert sorted(img) == ["a1", "a2", "b1", "c1"]
    assert img["a2"]["patient_id"] == "pa" and (img["a2"]["width"], img["a2"]["height"]) == (64, 48)
    rep = sorted(i.key for i in items if i.task == "report")
    assert rep == ["findings:a1", "findings:b1", "impression:a1", "impression:b1"]
    iqa = [i for i in items if i.task == "iqa"]
    assert len(iqa) == 3 and all(i.key.startswith("q") and "test" not in i.key for i in iqa)


def test_vocabulary_findings_and_aliases(study_factory, tmp_path: Path) -> None:
    study = study_factory(tmp_path / "s")
    text = study.read_text().replace("findings: [Effusion, Cardiomegaly, Nodule]", "findings: chestxray8")
    study.write_text(text)
    assert len(load_study(study).findings) == 8
    study.write_text(text.replace("findings: chestxray8", "findings: [Pleural Effusion, Infiltrate]"))
    assert load_study(study).findings == ("Effusion", "Infiltration")


@pytest.mark.parametrize(
    "old,new,message",
    [
        ("images: images", "images: ../outside", "leaves the study folder"),
        ("images: images", "images: /etc", "leaves the study folder"),
        ("reports: reports.csv", "reports: ../../reports.csv", "leaves the study folder"),
        ("findings: [Effusion, Cardiomegaly, Nodule]", "findings: [Effusion, Effusionn]", "Unknown finding"),
        ("findings: [Effusion, Cardiomegaly, Nodule]", "findings: [Effusion, Pleural Effusion]", "repeat"),
        ("seed: 3", "seed: -1", "non-negative"),
        ("seed: 3", "colour: red", "unknown key"),
        ("scale: [1, 4]", "scale: [4, 1]", "increasing"),
        ("readers: [alice, bob]", "readers: [alice, ../bob]", "Invalid reader name"),
        ("readers: [alice, bob]", "readers: [alice, carol]", "distinct"),
        (
            "resolvers: [carol]",
            "resolvers: [carol]\nadjudication:\n  readers: [alice, dave]",
            "two distinct readers",
        ),
        (
            "resolvers: [carol]",
            "resolvers: [carol]\nadjudication:\n  task: report:summary",
            "report:<section>",
        ),
    ],
)
def test_bad_study_files_are_refused(study_factory, tmp_path: Path, old: str, new: str, message: str) -> None:
    study = study_factory(tmp_path / "s")
    text = study.read_text()
    assert old in text
    study.write_text(text.replace(old, new))
    with pytest.raises(SchemaError, match=message):
        study_items(load_study(study))


def test_symlink_out_of_the_study_folder_is_refused(study_factory, tmp_path: Path) -> None:
    study = study_factory(tmp_path / "s")
    (tmp_path / "secret.png").write_bytes((tmp_path / "s" / "images" / "a1.png").read_bytes())
    (tmp_path / "s" / "images" / "z9.png").symlink_to(tmp_path / "secret.png")
    with pytest.raises(SchemaError, match="outside the study folder"):
        study_items(load_study(study))


def test_reader_order_is_seeded_per_reader_and_task() -> None:
    keys = [f"k{i:03d}" for i in range(50)]
    a = reader_order(keys, seed=0, reader="alice", task="image")
    assert a == reader_order(
        list(reversed(keys)), seed=0, reader="alice", task="image"
    )  # input order irrelevant
    assert sorted(a) == keys
    others = [
        reader_order(keys, seed=0, reader="bob", task="image"),
        reader_order(keys, seed=0, reader="alice", task="report"),
        reader_order(keys, seed=1, reader="alice", task="image"),
    ]
    assert all(o != a and sorted(o) == keys for o in others)


def test_sqlite_runs_in_wal_mode_with_full_sync(tmp_path: Path) -> None:
    from cxreval.reader.db import make_engine

    engine = make_engine(f"sqlite:///{tmp_path / 'p.db'}")
    with engine.connect() as conn:
        assert conn.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
        assert conn.exec_driver_sql("PRAGMA synchronous").scalar() == 2  # FULL
        assert conn.exec_driver_sql("PRAGMA foreign_keys").scalar() == 1
    engine.dispose()


@pytest.mark.parametrize(
    "url,message",
    [("sqlite://", "not memory"), ("mysql://u@h/db", "only sqlite"), ("not a url", "not an SQLAlchemy URL")],
)
def test_bad_database_urls(url: str, message: str) -> None:
    from cxreval.exceptions import InvalidParameterError
    from cxreval.reader.db import make_engine

    with pytest.raises(InvalidParameterError, match=message):
        make_engine(url)


def test_serve_binds_localhost_by_default() -> None:
    import inspect

    from cxreval.cli.reader import serve_cmd
    from cxreval.reader.app import serve

    assert inspect.signature(serve).parameters["host"].default == "127.0.0.1"
    assert inspect.signature(serve_cmd).parameters["host"].default.default == "127.0.0.1"


def test_assignment_per_image_is_balanced_seeded_and_enforced(study_factory, tmp_path: Path) -> None:
    from collections import Counter

    from cxreval.reader._order import assign_images
    from cxreval.reader.payloads import SubmissionError
    from cxreval.reader.store import ReaderStore

    keys = [f"i{k:03d}" for k in range(17)]
    readers = ("r1", "r2", "r3", "r4", "r5")
    got = assign_images(keys, readers, per_image=3, seed=0)
    per_image = Counter(k for ks in got.values() for k in ks)
    assert set(per_image) == set(keys) and set(per_image.values()) == {3}  # 3 distinct readers each
    assert sorted(len(v) for v in got.values()) == [10, 10, 10, 10, 11]  # 51 reads over 5 readers
    assert (
        assign_images(keys, readers, per_image=3, seed=0)
        == got
        != assign_images(keys, readers, per_image=3, seed=1)
    )
    assert assign_images(keys, readers, per_image=0, seed=0) == {r: set(keys) for r in readers}

    study = study_factory(
        tmp_path / "s",
        readers=("alice", "bob", "dave"),
        extra="assignment: {per_image: 2}\nadjudication:\n  readers: [alice, bob]\n",
    )
    store, tokens = ReaderStore.create(f"sqlite:///{tmp_path / 'r.db'}", load_study(study))
    assert store.spec.per_image == 2
    who = {n: store.authenticate(tokens[n]) for n in ("alice", "bob", "dave")}
    mine = {n: {x["key"] for x in store.queue(who[n], "image")} for n in who}
    assert sorted(Counter(k for ks in mine.values() for k in ks).values()) == [2, 2, 2, 2]
    assert sorted(len(v) for v in mine.values()) == [2, 3, 3]  # 8 reads over 3 readers
    other = next(k for k in store.items["image"] if k not in mine["dave"])
    with pytest.raises(SubmissionError, match="Unknown image item") as e:
        store.submit(
            who["dave"],
            "dave-00000001",
            "image",
            other,
            {"labels": {f: "negative" for f in store.spec.findings}},
        )
    assert e.value.status == 404  # as for an unknown image: no reader learns which images others read
    assert ReaderStore.open(str(store.engine.url)).spec.per_image == 2  # stored with the study
    with pytest.raises(SchemaError, match="per_image"):
        load_study(study_factory(tmp_path / "t", extra="assignment: {per_image: 5}\n"))
    store.close()
