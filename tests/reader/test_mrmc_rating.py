"""A confidence rating per finding in a reader study (:mod:`cxreval.reader.mrmc`), validated against its scale
through the HTTP API, as the page sends it; a box needs a finding that may be present."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from cxreval.reader.export import RATING_COLUMNS, export_tables

from .conftest import FINDINGS, IDS, _client, _h, _study

pytestmark = pytest.mark.filterwarnings("ignore:Using `httpx` with `starlette.testclient`")


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
        "README.md",
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
