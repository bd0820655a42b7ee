"""Aided and unaided sessions of a reader study (:mod:`cxreval.reader.mrmc`): the washout enforced by the server on
its (replaceable) clock, each reader's seeded order per session, the aided session's heat maps, and adjudication
of the first session's labels. Everything goes through the HTTP API, as the page sends it."""

from __future__ import annotations

import datetime as dt
import gzip
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from cxreval.reader._order import reader_order
from cxreval.reader.export import export_tables
from cxreval.reader.store import ReaderStore
from cxreval.reader.study import load_study, study_items

from .conftest import FINDINGS, IDS, SESSIONS, T0, Clock, _client, _h, _scores, _study

pytestmark = pytest.mark.filterwarnings("ignore:Using `httpx` with `starlette.testclient`")


# -- sessions and the washout -------------------------------------------------------------------------------------
def test_aided_items_open_only_after_the_washout_on_the_servers_clock(study_factory, tmp_path: Path) -> None:
    study = _study(study_factory, tmp_path / "s", SESSIONS, scores=_scores())
    clock = Clock(T0)
    store, tokens, c = _client(study, f"sqlite:///{tmp_path / 'r.db'}", clock)
    alice = _h(tokens["alice"])
    me = c.get("/api/me", headers=alice).json()
    assert me["image_tasks"] == ["unaided", "aided"] and me["washout_days"] == 28
    assert [t["task"] for t in me["tasks"]] == ["unaided", "aided"]
    key = IDS[2]

    def reading(sid: str, task: str, ratings: dict) -> dict:
        return {
            "id": sid,
            "task": task,
            "item": key,
            "labels": dict.fromkeys(FINDINGS, "uncertain"),
            "ratings": ratings,
        }

    # before the unaided reading: the aided item is locked, shows nothing of the case and refuses a reading
    q = c.get("/api/queue?task=aided", headers=alice).json()
    assert set(q["locked"]) == set(IDS) and q["locked"][key] == {
        "opens": None,
        "why": "read this case in session 'unaided' first",
    }
    item = c.get(f"/api/item?task=aided&key={key}", headers=alice).json()
    assert item["locked"] is True and "scores" not in item and "width" not in item
    assert c.get(f"/api/pixels?task=aided&key={key}&level=display", headers=alice).status_code == 403
    r = c.post(
        "/api/submissions", headers=alice, json=reading("alice-aided-01", "aided", dict.fromkeys(FINDINGS, 2))
    )
    assert r.status_code == 403 and "'unaided' first" in r.json()["detail"]
    # the unaided reading, stamped with the clock's time
    r = c.post(
        "/api/submissions",
        headers=alice,
        json=reading("alice-unaided-01", "unaided", dict.fromkeys(FINDINGS, 2)),
    )
    assert r.status_code == 200 and r.json()["server_time"] == T0.isoformat(timespec="microseconds")
    opens = T0 + dt.timedelta(days=28)
    for later in (dt.timedelta(days=1), dt.timedelta(days=28) - dt.timedelta(seconds=1)):
        clock.t = T0 + later
        lock = c.get("/api/queue?task=aided", headers=alice).json()["locked"][key]
        assert (
            lock["opens"] == opens.isoformat(timespec="seconds") and "28 days (washout_days)" in lock["why"]
        )
        r = c.post(
            "/api/submissions",
            headers=alice,
            json=reading("alice-aided-02", "aided", dict.fromkeys(FINDINGS, 4)),
        )
        assert r.status_code == 403 and "opens at 2026-03-30 09:30 UTC" in r.json()["detail"], r.text
    assert c.get(f"/api/pixels?task=aided&key={key}&level=display", headers=alice).status_code == 403
    # bob's aided item stays locked: the washout is per reader
    clock.t = opens
    assert key not in c.get("/api/queue?task=aided", headers=alice).json()["locked"]
    assert key in c.get("/api/queue?task=aided", headers=_h(tokens["bob"])).json()["locked"]
    item = c.get(f"/api/item?task=aided&key={key}", headers=alice).json()
    assert item["model"] == "densenet" and item["scores"] == {
        f: round(0.05 * 2 + 0.01 * j, 4) for j, f in enumerate(FINDINGS)
    }
    assert (
        "scores" not in c.get(f"/api/item?task=unaided&key={key}", headers=alice).json()
    )  # unaided: no model
    assert c.get(f"/api/pixels?task=aided&key={key}&level=display", headers=alice).status_code == 200
    r = c.post(
        "/api/submissions", headers=alice, json=reading("alice-aided-02", "aided", dict.fromkeys(FINDINGS, 4))
    )
    assert r.status_code == 200 and r.json()["server_time"] == opens.isoformat(timespec="microseconds")
    # once read aided, the unaided reading is closed; a retry of the stored unaided submission stays a retry
    r = c.post(
        "/api/submissions",
        headers=alice,
        json=reading("alice-unaided-02", "unaided", dict.fromkeys(FINDINGS, 5)),
    )
    assert r.status_code == 403 and "closed" in r.json()["detail"] and "'aided'" in r.json()["detail"]
    r = c.post(
        "/api/submissions",
        headers=alice,
        json=reading("alice-unaided-01", "unaided", dict.fromkeys(FINDINGS, 2)),
    )
    assert r.status_code == 200 and r.json()["status"] == "duplicate"
    assert c.get("/api/queue?task=unaided", headers=alice).json()["locked"][key]["why"].startswith("closed")
    assert len(store.submissions()) == 2
    res = export_tables(store)
    got = pd.read_csv(pd.io.common.StringIO(res.texts["ratings.csv"]))
    assert got[["reader", "modality", "study_id", "finding", "rating"]].values.tolist() == [
        ["alice", "unaided", key, f, 2] for f in FINDINGS
    ] + [["alice", "aided", key, f, 4] for f in FINDINGS]
    assert res.sources == ("img_aided_alice", "img_unaided_alice")
    store.close()


def test_a_zero_washout_opens_the_aided_item_at_once(study_factory, tmp_path: Path) -> None:
    study = _study(
        study_factory,
        tmp_path / "s",
        SESSIONS.replace("washout_days: 28", "washout_days: 0"),
        scores=_scores(),
    )
    store, tokens, c = _client(study, f"sqlite:///{tmp_path / 'r.db'}", Clock(T0))
    body = {
        "labels": dict.fromkeys(FINDINGS, "negative"),
        "ratings": dict.fromkeys(FINDINGS, 2),
        "item": IDS[0],
    }
    for k, task in enumerate(("unaided", "aided")):
        r = c.post(
            "/api/submissions", headers=_h(tokens["bob"]), json=body | {"id": f"bob-{k:06d}", "task": task}
        )
        assert r.status_code == 200, r.text
    store.close()


def test_each_readers_order_per_session_is_seeded_and_reproducible(study_factory, tmp_path: Path) -> None:
    study = _study(study_factory, tmp_path / "s", SESSIONS, scores=_scores())
    orders = []
    for k in range(2):  # two databases of the same study file
        store, tokens, c = _client(study, f"sqlite:///{tmp_path / f'r{k}.db'}", Clock(T0))
        orders.append(
            {
                (n, t): c.get(f"/api/queue?task={t}", headers=_h(tokens[n])).json()["keys"]
                for n in ("alice", "bob")
                for t in ("unaided", "aided")
            }
        )
        store.close()
    assert orders[0] == orders[1]
    for (n, t), keys in orders[0].items():
        assert sorted(keys) == IDS and keys == reader_order(IDS, seed=3, reader=n, task=t)
    assert len({tuple(v) for v in orders[0].values()}) == 4  # each reader and session its own order


def test_heat_maps_of_an_aided_session(study_factory, tmp_path: Path) -> None:
    root = tmp_path / "s"
    study = _study(
        study_factory,
        root,
        SESSIONS.replace("predictions.csv\n", "predictions.csv\n    heatmaps: maps\n").replace(
            "washout_days: 28", "washout_days: 0"
        ),
        scores=_scores(),
    )
    m = np.arange(12, dtype=float).reshape(3, 4) * 2.0 - 5
    (root / "maps" / IDS[1]).mkdir(parents=True)
    np.save(root / "maps" / IDS[1] / "Pleural Effusion.npy", m)  # a finding's alias: its canonical name
    np.save(root / "maps" / IDS[1] / "Nodule.npy", np.full((2, 2), 7.0))
    spec = load_study(study)
    aided = {i.key: i.payload for i in study_items(spec) if i.task == "aided"}
    assert aided[IDS[1]]["heatmaps"] == ["Effusion", "Nodule"] and aided[IDS[0]]["heatmaps"] == []
    store, tokens, c = _client(study, f"sqlite:///{tmp_path / 'r.db'}", Clock(T0))
    alice = _h(tokens["alice"])
    body = {
        "id": "alice-000001",
        "task": "unaided",
        "item": IDS[1],
        "labels": dict.fromkeys(FINDINGS, "negative"),
        "ratings": dict.fromkeys(FINDINGS, 1),
    }
    assert c.get(f"/api/heatmap?task=aided&key={IDS[1]}&finding=Effusion", headers=alice).status_code == 403
    assert c.post("/api/submissions", headers=alice, json=body).status_code == 200
    assert c.get(f"/api/item?task=aided&key={IDS[1]}", headers=alice).json()["heatmaps"] == [
        "Effusion",
        "Nodule",
    ]
    r = c.get(f"/api/heatmap?task=aided&key={IDS[1]}&finding=Effusion", headers=alice)
    assert r.status_code == 200 and (r.headers["x-width"], r.headers["x-height"]) == ("4", "3")
    raw = r.content if len(r.content) == 12 else gzip.decompress(r.content)
    want = np.round((m - m.min()) / (m.max() - m.min()) * 255).astype(np.uint8)
    assert np.frombuffer(raw, np.uint8).reshape(3, 4).tolist() == want.tolist()
    flat = c.get(f"/api/heatmap?task=aided&key={IDS[1]}&finding=Nodule", headers=alice)
    assert set(flat.content if len(flat.content) == 4 else gzip.decompress(flat.content)) == {0}
    for path, status in (
        (f"/api/heatmap?task=aided&key={IDS[1]}&finding=Cardiomegaly", 404),
        (f"/api/heatmap?task=unaided&key={IDS[1]}&finding=Effusion", 404),
        ("/api/heatmap?task=aided&key=../study.yaml&finding=Effusion", 404),
    ):
        assert c.get(path, headers=alice).status_code == status, path
    store.close()


def test_adjudication_in_a_study_with_sessions_compares_the_first_sessions_labels(
    study_factory, tmp_path: Path
) -> None:
    from .conftest import decision

    study = _study(study_factory, tmp_path / "s", SESSIONS, scores=_scores())
    study.write_text(study.read_text().replace("resolvers: []", "resolvers: [carol]"))
    store, tokens, c = _client(study, f"sqlite:///{tmp_path / 'r.db'}", Clock(T0))
    assert store.spec.tasks == ("unaided", "aided", "adjudication")
    for reader, state in (("alice", "positive"), ("bob", "negative")):
        body = {
            "id": f"{reader}-000001",
            "task": "unaided",
            "item": IDS[0],
            "labels": dict.fromkeys(FINDINGS, "negative") | {"Effusion": state},
            "ratings": dict.fromkeys(FINDINGS, 3),
        }
        assert c.post("/api/submissions", headers=_h(tokens[reader]), json=body).status_code == 200
    carol = _h(tokens["carol"])
    item = c.get(f"/api/item?task=adjudication&key={IDS[0]}", headers=carol).json()
    assert (
        item["conflicts"] == {"Effusion": {"alice": "positive", "bob": "negative"}} and item["image"] is True
    )
    assert (
        c.get(f"/api/pixels?task=adjudication&key={IDS[0]}&level=display", headers=carol).status_code == 200
    )
    r = c.post(
        "/api/submissions",
        headers=carol,
        json={
            "id": "carol-000001",
            "task": "adjudication",
            "item": IDS[0],
            **decision(store, IDS[0], {"Effusion": "uncertain"}),
        },
    )
    assert r.status_code == 200, r.text
    res = export_tables(store)
    labels = pd.read_csv(pd.io.common.StringIO(res.texts["labels.csv"]))
    resolved = labels[labels["source"] == "conflict_resolved"].set_index("finding")["state"].to_dict()
    assert resolved == {"Effusion": "uncertain", "Cardiomegaly": "negative", "Nodule": "negative"}
    store.close()


def test_a_reading_refused_by_the_washout_does_not_fail_the_readings_committed_with_it(
    study_factory, tmp_path: Path
) -> None:
    """Concurrent submissions share a transaction (group commit); one refused inside it (403) is rolled back
    alone: every other reading is stored and answered after its commit."""
    from concurrent.futures import ThreadPoolExecutor

    from cxreval.reader.payloads import SubmissionError

    study = _study(study_factory, tmp_path / "s", SESSIONS, scores=_scores())
    store, tokens = ReaderStore.create(f"sqlite:///{tmp_path / 'r.db'}", load_study(study))
    store.clock = Clock(T0)
    alice, bob = store.authenticate(tokens["alice"]), store.authenticate(tokens["bob"])
    body = {"labels": dict.fromkeys(FINDINGS, "negative"), "ratings": dict.fromkeys(FINDINGS, 2)}
    jobs = [
        (bob if k % 2 else alice, f"sub-{k:06d}", "unaided" if k % 2 else "aided", IDS[k % len(IDS)])
        for k in range(24)
    ]

    def send(job):
        reader, sid, task, item = job
        try:
            return store.submit(reader, sid, task, item, body).status
        except SubmissionError as exc:
            return exc.status

    with ThreadPoolExecutor(8) as ex:
        got = list(ex.map(send, jobs))
    assert got == [403 if task == "aided" else "stored" for _r, _s, task, _i in jobs]
    sub = store.submissions()
    assert set(sub["task"]) == {"unaided"} and len(sub) == 12 and set(sub["reader"]) == {"bob"}
    store.close()
