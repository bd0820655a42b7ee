"""What an MRMC ROC analysis needs from a reader study (:mod:`cxreval.reader.mrmc`): a confidence rating per
finding, validated against its scale; aided and unaided sessions, the aided one showing the model's scores and
heat maps; a washout enforced by the server on its (replaceable) clock; each reader's seeded order per session;
and ``ratings.csv``, the long table an MRMC analysis reads. Everything goes through the HTTP API, as the page
sends it."""

from __future__ import annotations

import datetime as dt
import gzip
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from cxreval.exceptions import SchemaError
from cxreval.reader._order import reader_order
from cxreval.reader.export import RATING_COLUMNS, export_tables
from cxreval.reader.store import ReaderStore
from cxreval.reader.study import load_study, study_items

from .conftest import FINDINGS

pytestmark = pytest.mark.filterwarnings("ignore:Using `httpx` with `starlette.testclient`")

IDS = [f"img{i:04d}" for i in range(6)]
T0 = dt.datetime(2026, 3, 2, 9, 30, tzinfo=dt.timezone.utc)


def _h(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def _scores(ids: list[str] = IDS, *, models: tuple[str, ...] = ("densenet",)) -> str:
    """A long prediction table: a distinct score per (model, study, finding)."""
    rows = ["study_id,model,finding,score"]
    for m, model in enumerate(models):
        for i, sid in enumerate(ids):
            for j, f in enumerate(FINDINGS):
                rows.append(f"{sid},{model},{f},{round(0.05 * i + 0.01 * j + 0.3 * m, 4)}")
    return "\n".join(rows) + "\n"


def _study(study_factory, root: Path, extra: str, *, scores: str | None = None) -> Path:
    """An image-only study of six images with the given MRMC keys (two readers, no resolver)."""
    study = study_factory(root, n_images=len(IDS), resolvers=(), extra=extra)
    if scores is not None:
        (root / "predictions.csv").write_text(scores)
    text = study.read_text()
    for key in (
        "reports: reports.csv\n",
        "iqa:\n  pairs: pairs.csv\n  criteria: [overall]\n  scale: [1, 4]\n",
    ):
        text = text.replace(key, "")
    study.write_text(text)
    return study


def _client(study: Path, url: str, clock=None):
    from fastapi.testclient import TestClient

    from cxreval.reader.app import create_app

    store, tokens = ReaderStore.create(url, load_study(study))
    return store, tokens, TestClient(create_app(store, clock=clock))


SESSIONS = (
    "rating: {scale: five_point, with_label: true}\n"
    "sessions:\n  - name: unaided\n  - name: aided\n    model_scores: predictions.csv\n"
    "washout_days: 28\n"
)


class Clock:
    """The server's clock in a test: a time that only the test moves."""

    def __init__(self, t: dt.datetime) -> None:
        self.t = t

    def __call__(self) -> dt.datetime:
        return self.t


# -- the rating ---------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "scale,with_label,values",
    [
        ("five_point", True, {"Effusion": 5, "Cardiomegaly": 1, "Nodule": 3}),
        ("probability", False, {"Effusion": 97.5, "Cardiomegaly": 0, "Nodule": 40}),
    ],
)
def test_a_rating_session_end_to_end_through_the_api(
    study_factory, tmp_path: Path, scale: str, with_label: bool, values: dict
) -> None:
    study = _study(
        study_factory, tmp_path / "s", f"rating: {{scale: {scale}, with_label: {str(with_label).lower()}}}\n"
    )
    store, tokens, c = _client(study, f"sqlite:///{tmp_path / 'r.db'}")
    me = c.get("/api/me", headers=_h(tokens["alice"])).json()
    lo, hi = (1, 5) if scale == "five_point" else (0, 100)
    assert me["rating"] == {"scale": scale, "with_label": with_label, "low": lo, "high": hi}
    assert me["image_tasks"] == ["image"] and me["sessions"] == []
    sent = {}
    for reader in ("alice", "bob"):
        keys = c.get("/api/queue?task=image", headers=_h(tokens[reader])).json()["keys"]
        for k, key in enumerate(keys):
            ratings = {f: v if k % 2 == 0 else lo for f, v in values.items()}
            body = {
                "id": f"{reader}-{k:06d}",
                "task": "image",
                "item": key,
                "ratings": ratings,
                "seconds": 10 + k,
            }
            if with_label:
                body["labels"] = {f: "positive" if r > lo else "negative" for f, r in ratings.items()}
            r = c.post("/api/submissions", headers=_h(tokens[reader]), json=body)
            assert r.status_code == 200 and r.json()["status"] == "stored", r.text
            sent[(reader, key)] = body
    # the derived table (latest per reader and item) carries the rating as sent
    latest = store.latest(task="image")
    assert {(n, i): p["ratings"] for (n, _t, i), p in latest.items()} == {
        k: b["ratings"] for k, b in sent.items()
    }
    assert all(bool(p["labels"]) is with_label for p in latest.values())
    # the item the page reopens holds it too
    assert (
        c.get(f"/api/item?task=image&key={IDS[0]}", headers=_h(tokens["bob"])).json()["mine"]["ratings"]
        == sent[("bob", IDS[0])]["ratings"]
    )
    res = export_tables(store)
    got = pd.read_csv(
        pd.io.common.StringIO(res.texts["ratings.csv"]), dtype={"study_id": str, "patient_id": str}
    )
    assert tuple(got.columns) == RATING_COLUMNS and res.n_finding_ratings == len(got) == 2 * len(IDS) * 3
    want = pd.DataFrame(
        [
            (reader, "image", key, "p" + key[0], f, v, scale, b["seconds"])
            for (reader, key), b in sent.items()
            for f, v in b["ratings"].items()
        ],
        columns=RATING_COLUMNS,
    )
    order = {f: k for k, f in enumerate(FINDINGS)}
    want = want.sort_values(
        ["reader", "study_id", "finding"], key=lambda s: s.map(order) if s.name == "finding" else s
    )
    pd.testing.assert_frame_equal(got, want.reset_index(drop=True), check_dtype=False)
    assert ("img_alice" in res.sources) is with_label
    store.close()


RATING_REFUSALS = [
    ("five_point", 6, "rating 6 is outside the five_point scale 1..5"),
    ("five_point", 0, "rating 0 is outside the five_point scale"),
    ("five_point", 2.5, "rating 2.5 is outside the five_point scale"),
    ("five_point", True, "rating True is outside"),
    ("probability", 101, "rating 101 is outside the probability scale 0..100"),
    ("probability", -0.5, "rating -0.5 is outside the probability scale"),
    ("probability", "50", "rating 50 is outside"),
    ("probability", None, "rating None is outside"),
]


@pytest.mark.parametrize(
    "scale,value,message", RATING_REFUSALS, ids=[f"{s}-{v!r}" for s, v, _ in RATING_REFUSALS]
)
def test_a_rating_outside_the_scale_is_refused_and_nothing_is_stored(
    study_factory, tmp_path: Path, scale: str, value: object, message: str
) -> None:
    study = _study(study_factory, tmp_path / "s", f"rating: {{scale: {scale}}}\n")
    store, tokens, c = _client(study, f"sqlite:///{tmp_path / 'r.db'}")
    ok = {"Effusion": 3, "Cardiomegaly": 4, "Nodule": 5}
    body = {
        "id": "sub-bad-0001",
        "task": "image",
        "item": IDS[0],
        "labels": dict.fromkeys(FINDINGS, "uncertain"),
        "ratings": ok | {"Nodule": value},
    }
    r = c.post("/api/submissions", headers=_h(tokens["alice"]), json=body)
    assert r.status_code == 422 and message in r.json()["detail"] and "'Nodule'" in r.json()["detail"], r.text
    for bad, why in (
        ({"Effusion": 3}, "missing ['Cardiomegaly', 'Nodule']"),
        (ok | {"Hernia": 2}, "Unknown finding 'Hernia'"),
        (None, "'ratings' must be"),
    ):
        r = c.post("/api/submissions", headers=_h(tokens["alice"]), json=body | {"ratings": bad})
        assert r.status_code == 422 and why in r.json()["detail"], r.text
    assert store.submissions().empty
    # the same body with the rating in the scale is stored
    assert (
        c.post("/api/submissions", headers=_h(tokens["alice"]), json=body | {"ratings": ok}).status_code
        == 200
    )
    store.close()


def test_a_study_without_a_rating_refuses_one_and_exports_no_ratings_file(
    app_client, image_submission
) -> None:
    store, tokens, c = app_client
    body = image_submission("sub-000001", "a1") | {"ratings": dict.fromkeys(FINDINGS, 3)}
    r = c.post("/api/submissions", headers=_h(tokens["alice"]), json=body)
    assert r.status_code == 422 and "Unexpected field(s) ['ratings']" in r.json()["detail"]
    assert (
        c.post(
            "/api/submissions", headers=_h(tokens["alice"]), json=image_submission("sub-000002", "a1")
        ).status_code
        == 200
    )
    res = export_tables(store)
    assert (
        "ratings.csv" not in res.texts
        and "n_finding_ratings" not in res.to_dict()
        and res.n_finding_ratings is None
    )
    assert set(res.texts) == {
        "labels.csv",
        "boxes.csv",
        "notes.csv",
        "iqa_ratings.csv",
        "audit.csv",
        "events.csv",
    }


def test_a_box_needs_a_finding_that_may_be_present(study_factory, tmp_path: Path) -> None:
    study = _study(study_factory, tmp_path / "s", "rating: {scale: five_point, with_label: false}\n")
    store, tokens, c = _client(study, f"sqlite:///{tmp_path / 'r.db'}")
    box = {"finding": "Effusion", "x_min": 1, "y_min": 1, "x_max": 10, "y_max": 10}
    body = {
        "id": "sub-000001",
        "task": "image",
        "item": IDS[0],
        "boxes": [box],
        "ratings": {"Effusion": 1, "Cardiomegaly": 2, "Nodule": 2},
    }
    r = c.post("/api/submissions", headers=_h(tokens["alice"]), json=body)
    assert r.status_code == 422 and "rated 1 (absent)" in r.json()["detail"]
    r = c.post(
        "/api/submissions",
        headers=_h(tokens["alice"]),
        json=body | {"labels": dict.fromkeys(FINDINGS, "positive")},
    )
    assert r.status_code == 422 and "instead of labels" in r.json()["detail"]
    body["ratings"]["Effusion"] = 4
    assert c.post("/api/submissions", headers=_h(tokens["alice"]), json=body).status_code == 200
    res = export_tables(store)
    assert res.n_boxes == 1 and res.n_labels == 0 and res.n_finding_ratings == 3
    store.close()


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


# -- bad study files ----------------------------------------------------------------------------------------------
BAD_STUDIES = [
    (
        "rating: {scale: ten_point}\n",
        None,
        "key 'rating.scale': expected one of ['five_point', 'probability']",
    ),
    ("rating: {scale: five_point, with_label: maybe}\n", None, "key 'rating.with_label'"),
    ("rating: {scale: five_point, colour: red}\n", None, "key 'rating': expected a mapping"),
    (
        SESSIONS.replace("washout_days: 28", "washout_days: -3"),
        _scores(),
        "key 'washout_days': expected a number of days >= 0",
    ),
    (SESSIONS.replace("washout_days: 28", "washout_days: two"), _scores(), "key 'washout_days'"),
    ("washout_days: 7\n", None, "a washout separates the readings of two sessions"),
    (SESSIONS.replace("- name: aided", "- name: image"), _scores(), "key 'sessions[1]'.name"),
    (SESSIONS.replace("- name: aided", "- name: unaided"), _scores(), "listed twice"),
    (SESSIONS.replace("- name: aided", "- name: an-aided-session-name"), _scores(), "1-16 letters"),
    (
        SESSIONS.replace("    model_scores: predictions.csv\n", "    model: densenet\n"),
        _scores(),
        "names a model of",
    ),
    (
        SESSIONS,
        _scores(IDS[:3] + IDS[4:]),
        f"has no score for 1 of the study's 6 images, e.g. study_id ['{IDS[3]}']",
    ),
    (
        SESSIONS,
        _scores().replace(f"{IDS[5]},densenet,Nodule", f"{IDS[5]},densenet,Mass"),
        f"no score of study_id '{IDS[5]}' for finding(s) ['Nodule']",
    ),
    (SESSIONS, _scores(models=("densenet", "resnet")), "holds the scores of 2 models ['densenet', 'resnet']"),
    (
        SESSIONS.replace("predictions.csv\n", "predictions.csv\n    model: vit\n"),
        _scores(),
        "has no model 'vit'",
    ),
    (SESSIONS.replace("predictions.csv", "../predictions.csv"), _scores(), "leaves the study folder"),
    (SESSIONS.replace("predictions.csv", "nothing.csv"), _scores(), "nothing.csv does not exist"),
    (
        SESSIONS.replace("predictions.csv\n", "predictions.csv\n    heatmaps: maps\n"),
        _scores(),
        "maps does not exist",
    ),
]


@pytest.mark.parametrize(
    "extra,scores,message", BAD_STUDIES, ids=[f"bad{k}" for k in range(len(BAD_STUDIES))]
)
def test_bad_mrmc_keys_are_refused_naming_the_file_and_the_field(
    study_factory, tmp_path: Path, extra: str, scores: str | None, message: str
) -> None:
    study = _study(study_factory, tmp_path / "s", extra, scores=scores)
    with pytest.raises(SchemaError) as err:
        study_items(load_study(study))
    text = str(err.value)  # the study file for its keys, the data file (and the session's key) for its data
    assert message in text
    assert str(study) in text or ("'sessions' 'aided', " in text and str(study.parent) in text), text


def test_heat_maps_of_no_study_image_are_refused(study_factory, tmp_path: Path) -> None:
    root = tmp_path / "s"
    study = _study(
        study_factory,
        root,
        SESSIONS.replace("predictions.csv\n", "predictions.csv\n    heatmaps: maps.npz\n"),
        scores=_scores(),
    )
    np.savez(root / "maps.npz", **{"other/Effusion": np.ones((2, 2))})
    with pytest.raises(SchemaError, match="none of the 1 maps .* is keyed '<study_id>/<finding>'"):
        study_items(load_study(study))


def test_the_study_with_sessions_round_trips_through_the_database(study_factory, tmp_path: Path) -> None:
    study = _study(study_factory, tmp_path / "s", SESSIONS, scores=_scores())
    spec = load_study(study)
    store, _tokens = ReaderStore.create(f"sqlite:///{tmp_path / 'r.db'}", spec)
    store.close()
    again = ReaderStore.open(f"sqlite:///{tmp_path / 'r.db'}")
    assert again.spec == spec and again.spec.rating == spec.rating and again.spec.washout_days == 28
    assert json.loads(json.dumps(spec.to_dict()))["sessions"][1]["model_scores"] == "predictions.csv"
    again.close()


def test_cxreval_reader_export_writes_ratings_csv_an_mrmc_analysis_reads_as_it_is(
    study_factory, tmp_path: Path, capsys
) -> None:
    """Two readers, two modalities, a five-point rating per finding: ``ratings.csv`` gives each reader's
    empirical AUC per modality by a group-by on its columns (sklearn's ``roc_auc_score`` on the ratings sent)."""
    from sklearn.metrics import roc_auc_score

    from cxreval.cli.main import main

    study = _study(
        study_factory,
        tmp_path / "s",
        SESSIONS.replace("washout_days: 28", "washout_days: 0.5"),
        scores=_scores(),
    )
    (study.parent / "patients.csv").write_text("study_id,patient_id\n" + "".join(f"{i},p{i}\n" for i in IDS))
    url = f"sqlite:///{tmp_path / 'r.db'}"
    clock = Clock(T0)
    store, tokens, c = _client(study, url, clock)
    truth = {sid: int(i % 2 == 0) for i, sid in enumerate(IDS)}  # Effusion present in every other image
    rng = np.random.default_rng(0)
    sent = {}
    for task in ("unaided", "aided"):
        for reader in ("alice", "bob"):
            for k, sid in enumerate(IDS):
                r = int(np.clip(2 + 2 * truth[sid] + rng.integers(-1, 2), 1, 5))
                sent[(reader, task, sid)] = r
                body = {
                    "id": f"{reader}-{task}-{k:04d}",
                    "task": task,
                    "item": sid,
                    "seconds": 7,
                    "labels": dict.fromkeys(FINDINGS, "negative")
                    | {"Effusion": "positive" if r > 3 else "negative"},
                    "ratings": {"Effusion": r, "Cardiomegaly": 1, "Nodule": 2},
                }
                assert c.post("/api/submissions", headers=_h(tokens[reader]), json=body).status_code == 200
        clock.t += dt.timedelta(days=1)
    store.close()
    capsys.readouterr()
    assert main(["reader", "export", "--db", url, "--out", str(tmp_path / "out")]) == 0
    assert f"{2 * 2 * len(IDS) * 3} finding ratings (ratings.csv)" in capsys.readouterr().out
    table = pd.read_csv(tmp_path / "out" / "ratings.csv")
    eff = table[table["finding"] == "Effusion"].assign(truth=lambda d: d["study_id"].map(truth))
    got = (
        eff.groupby(["reader", "modality"])
        .apply(lambda d: roc_auc_score(d["truth"], d["rating"]), include_groups=False)
        .to_dict()
    )
    want = {
        (reader, task): roc_auc_score([truth[s] for s in IDS], [sent[(reader, task, s)] for s in IDS])
        for reader in ("alice", "bob")
        for task in ("unaided", "aided")
    }
    assert got == pytest.approx(want) and len(got) == 4
    assert set(table["scale"]) == {"five_point"} and set(table["seconds"]) == {7}
    assert table["modality"].tolist()[: 3 * len(IDS) * 2] == ["unaided"] * (
        3 * len(IDS) * 2
    )  # session order first
    # and `cxreval mrmc` reads it as it is: the same AUCs, and the OR analysis of the two sessions
    pd.DataFrame(
        {
            "study_id": IDS,
            "patient_id": IDS,
            "finding": "Effusion",
            "source": "truth",
            "state": ["positive" if truth[s] else "negative" for s in IDS],
        }
    ).to_csv(tmp_path / "truth.csv", index=False)
    assert (
        main(
            [
                "mrmc",
                "--ratings",
                str(tmp_path / "out" / "ratings.csv"),
                "-l",
                str(tmp_path / "truth.csv"),
                "-r",
                "truth",
                "-f",
                "Effusion",
                "--scale",
                "1:5",
                "-o",
                str(tmp_path / "mrmc"),
            ]
        )
        == 0
    )
    aucs = pd.read_csv(tmp_path / "mrmc" / "mrmc_reader_auc.csv")
    assert aucs.set_index(["reader", "modality"])["auc"].to_dict() == pytest.approx(want)
    tests = pd.read_csv(tmp_path / "mrmc" / "mrmc_tests.csv")
    assert set(zip(tests["method"], tests["analysis"])) == {
        (m, a) for m in ("OR", "DBM") for a in ("RRRC", "FRRC", "RRFC")
    }


def test_init_renders_each_image_once_for_all_sessions(study_factory, tmp_path: Path) -> None:
    from cxreval.reader import create_study

    study = _study(study_factory, tmp_path / "s", SESSIONS, scores=_scores())
    made = create_study(study, f"sqlite:///{tmp_path / 'r.db'}", fit=64)
    assert dict(made.n_items) == {"unaided": len(IDS), "aided": len(IDS)}
    assert made.renditions.n_made == len(IDS)


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
