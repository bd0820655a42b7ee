"""The order of a reader's queue: seeded per reader by default; with ``order: priority`` (a relabelling plan's study)
the ``priority`` column of the patients file, the same for every reader: in the store, over HTTP and in the page."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from cxreval.exceptions import SchemaError
from cxreval.reader._order import priority_order, reader_order

pytest.importorskip("sqlalchemy", reason="the reader extra (sqlalchemy) is in the test extra")


def _plan(tmp_path: Path, *, images: bool = True) -> tuple[Path, pd.DataFrame, Path]:
    """A relabelling plan's folder (8 of 30 simulated studies), its relabel.csv and the image folder."""
    from PIL import Image

    from cxreval.planning import plan_relabelling, simulate_study_set

    ss = simulate_study_set(
        30, auc=[0.85, 0.8, 0.7], sensitivity=[0.8], specificity=[0.85], prevalence=0.3, rng=0
    )
    imgs = tmp_path / "imgs"
    imgs.mkdir()
    for i, sid in enumerate(ss.truth.index):
        Image.new("L", (16, 12), 10 + i).save(imgs / f"{sid}.png")
    res = plan_relabelling(
        ss.predictions,
        ss.labels[ss.labels["source"] != "truth"],
        reference="ref0",
        budget=8,
        n_draws=10,
        images=imgs if images else None,
        rng=0,
    )
    out = tmp_path / "plan"
    out.mkdir()
    res.save(out)
    return out, res.table, imgs


def test_priority_order_sorts_by_priority_then_key_and_puts_the_unranked_last():
    assert priority_order(["c", "a", "b", "d"], {"c": 1, "a": 3, "b": 1}) == ["b", "c", "a", "d"]
    keys = [f"k{i}" for i in range(20)]
    assert reader_order(keys, seed=0, reader="x", task="image") != sorted(keys)  # the default is shuffled


def test_a_plans_queue_is_its_priority_order_for_every_reader_over_http(tmp_path):
    from fastapi.testclient import TestClient

    from cxreval.reader.app import create_app
    from cxreval.reader.store import ReaderStore
    from cxreval.reader.study import load_study

    out, relabel, _ = _plan(tmp_path)
    planned = list(relabel["study_id"])
    assert planned != sorted(planned)  # the test tells the priority order from the sorted one
    spec = load_study(out / "study.yaml")
    assert spec.order == "priority"
    store, _ = ReaderStore.create(f"sqlite:///{tmp_path / 's.db'}", spec)
    tokens = {r: store.add_reader(r) for r in ("expert1", "expert2")}
    with TestClient(create_app(store)) as client:
        for token in tokens.values():
            r = client.get("/api/queue?task=image", headers={"Authorization": f"Bearer {token}"})
            assert r.status_code == 200 and r.json()["keys"] == planned
    store.engine.dispose()
    reopened = ReaderStore.open(f"sqlite:///{tmp_path / 's.db'}")  # the order is stored with the study
    assert reopened.spec.order == "priority"
    reopened.close()


def test_without_order_the_readers_get_their_own_seeded_orders(tmp_path):
    from cxreval.reader.payloads import Reader
    from cxreval.reader.store import ReaderStore
    from cxreval.reader.study import load_study

    out, relabel, _ = _plan(tmp_path)
    study = out / "study.yaml"
    study.write_text(study.read_text().replace("order: priority\n", ""))
    store, _ = ReaderStore.create(f"sqlite:///{tmp_path / 's.db'}", load_study(study))
    store.add_reader("expert1")
    order = [x["key"] for x in store.queue(Reader(1, "expert1", "reader"), "image")]
    assert sorted(order) == sorted(relabel["study_id"]) and order != list(relabel["study_id"])
    assert order == reader_order(sorted(order), seed=0, reader="expert1", task="image")
    store.close()


@pytest.mark.parametrize(
    ("edit", "match"),
    [
        (lambda y, c: (y.replace("patients: images.csv\n", ""), c), "give both 'images' and 'patients'"),
        (lambda y, c: (y.replace("order: priority", "order: urgent"), c), "'order' must be one of"),
        (lambda y, c: (y, c.drop(columns="priority")), "needs a 'priority' column"),
        (lambda y, c: (y, c.assign(priority="first")), "column 'priority' must hold whole numbers"),
    ],
)
def test_a_bad_priority_order_is_refused_naming_the_key(tmp_path, edit, match):
    from cxreval.reader.study import load_study, study_items

    out, _, _ = _plan(tmp_path)
    yaml_text, table = edit((out / "study.yaml").read_text(), pd.read_csv(out / "images.csv"))
    (out / "study.yaml").write_text(yaml_text)
    table.to_csv(out / "images.csv", index=False)
    with pytest.raises(SchemaError, match=match):
        study_items(load_study(out / "study.yaml"))


def test_reader_init_images_copies_the_planned_studies_and_checks_the_folder(tmp_path, capsys):
    from cxreval.cli.main import main

    out, relabel, imgs = _plan(tmp_path, images=False)
    db = f"sqlite:///{tmp_path / 's.db'}"
    assert main(["reader", "init", "--study", str(out / "study.yaml"), "--db", db]) == 2
    assert "--images" in capsys.readouterr().err  # the error names the option that fixes it
    missing = tmp_path / "few"
    missing.mkdir()
    (missing / f"{relabel['study_id'][0]}.png").write_bytes(
        (imgs / f"{relabel['study_id'][0]}.png").read_bytes()
    )
    assert (
        main(["reader", "init", "--study", str(out / "study.yaml"), "--images", str(missing), "--db", db])
        == 2
    )
    err = capsys.readouterr().err
    assert "--images" in err and "holds no image of 7 selected studies" in err and len(err.splitlines()) == 1
    assert not (out / "images").exists()  # nothing copied when a study is missing
    assert (
        main(
            [
                "reader",
                "init",
                "--study",
                str(out / "study.yaml"),
                "--images",
                str(tmp_path / "no"),
                "--db",
                db,
            ]
        )
        == 2
    )
    assert "--images" in capsys.readouterr().err
    assert (
        main(["reader", "init", "--study", str(out / "study.yaml"), "--images", str(imgs), "--db", db]) == 0
    )
    for sid in relabel["study_id"]:
        assert (out / "images" / f"{sid}.png").read_bytes() == (imgs / f"{sid}.png").read_bytes()


@pytest.mark.browser
@pytest.mark.slow
def test_the_page_opens_the_plans_studies_in_priority_order(tmp_path, server_factory):
    import shutil

    from cxreval.reader.store import ReaderStore
    from cxreval.reader.study import load_study

    from .test_browser import _launch, _ready, _wait

    out, relabel, _ = _plan(tmp_path)
    planned = list(relabel["study_id"])
    url = f"sqlite:///{tmp_path / 'b.db'}"
    store, _ = ReaderStore.create(url, load_study(out / "study.yaml"))
    token = store.add_reader("expert1")
    store.close()
    server = server_factory(url).start()
    browser, profile = _launch((1280, 900), 1.0)
    try:
        browser.get(f"{server.base}/#token={token}")
        _ready(browser, planned[0])  # the first study shown is priority 1
        _wait(browser, "return S.queue.length > 0")
        assert browser.execute_script("return S.queue.map((x) => x.key)") == planned
        assert browser.execute_script("return document.getElementById('item-title').textContent").startswith(
            "1 / 8"
        )
    finally:
        browser.quit()
        shutil.rmtree(profile, ignore_errors=True)
