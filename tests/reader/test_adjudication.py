"""Two resolvers on one conflict (SQLite and PostgreSQL): a decision names the pairs of states and the
decision it saw; a second resolver's decision from a page opened before the first decision is refused
(409) and the export keeps the first; one who has seen the first decision may replace it. The refusal
holds inside the transaction too (two decisions validated against the same state, appended one after
the other)."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from cxreval.reader.export import export_tables
from cxreval.reader.payloads import SubmissionError
from cxreval.reader.store import ReaderStore
from cxreval.reader.study import load_study

from .conftest import FINDINGS

pytestmark = pytest.mark.filterwarnings("ignore:Using `httpx` with `starlette.testclient`")


def _h(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


@pytest.fixture
def two_resolvers(study_factory, db_url: str, tmp_path: Path):
    from fastapi.testclient import TestClient

    from cxreval.reader.app import create_app

    study = study_factory(tmp_path / "s", resolvers=("carol", "dan"))
    store, tokens = ReaderStore.create(db_url, load_study(study))
    who = {n: store.authenticate(t) for n, t in tokens.items()}
    for name, state in (("alice", "positive"), ("bob", "negative")):
        store.submit(
            who[name],
            f"{name}-b1-0001",
            "image",
            "b1",
            {"labels": {f: "negative" for f in FINDINGS} | {"Effusion": state}, "boxes": []},
        )
    with TestClient(create_app(store), raise_server_exceptions=False) as client:
        yield store, tokens, who, client
    store.close()


def _resolved(store: ReaderStore, out: Path) -> dict:
    out.mkdir()
    export_tables(store).save(out)
    labels = pd.read_csv(out / "labels.csv")
    cr = labels[labels["source"] == "conflict_resolved"]
    return dict(zip(zip(cr["study_id"], cr["finding"]), cr["state"]))


def _decide(item: dict, state: str, sid: str) -> dict:
    """What the resolver's page sends: its labels, the pairs and the decisions the item showed."""
    return {
        "id": sid,
        "task": "adjudication",
        "item": item["key"],
        "labels": {f: state for f in item["conflicts"]},
        "conflicts": item["conflicts"],
        "seen": {f: d["seq"] for f, d in item["decided"].items()},
    }


def test_a_stale_second_decision_is_refused_and_the_first_kept(two_resolvers, tmp_path: Path) -> None:
    store, tokens, _who, c = two_resolvers
    url = "/api/item?task=adjudication&key=b1"
    page_carol = c.get(url, headers=_h(tokens["carol"])).json()
    page_dan = c.get(url, headers=_h(tokens["dan"])).json()  # opened before carol decides
    assert page_dan["decided"] == {} and page_dan["conflicts"] == {
        "Effusion": {"alice": "positive", "bob": "negative"}
    }
    first = c.post(
        "/api/submissions", headers=_h(tokens["carol"]), json=_decide(page_carol, "positive", "carol-0001")
    )
    assert first.status_code == 200
    second = c.post(
        "/api/submissions", headers=_h(tokens["dan"]), json=_decide(page_dan, "negative", "dan-00001")
    )
    assert second.status_code == 409 and "carol decided 'positive'" in second.json()["detail"]
    assert _resolved(store, tmp_path / "e1")[("b1", "Effusion")] == "positive"
    assert [p["labels"] for (n, _t, _i), p in store.latest(task="adjudication").items()] == [
        {"Effusion": "positive"}
    ]
    # dan reloads: the page shows carol's decision and its seq; a decision naming it replaces it
    again = c.get(url, headers=_h(tokens["dan"])).json()
    assert again["decided"] == {"Effusion": {"label": "positive", "by": "carol", "seq": first.json()["seq"]}}
    third = c.post(
        "/api/submissions", headers=_h(tokens["dan"]), json=_decide(again, "negative", "dan-00002")
    )
    assert third.status_code == 200
    assert _resolved(store, tmp_path / "e2")[("b1", "Effusion")] == "negative"
    # carol's old page has not seen dan's decision: her own earlier decision no longer stands, so she is refused
    stale = c.post(
        "/api/submissions", headers=_h(tokens["carol"]), json=_decide(page_carol, "uncertain", "carol-0002")
    )
    assert stale.status_code == 409
    assert _resolved(store, tmp_path / "e3")[("b1", "Effusion")] == "negative"


def test_the_same_resolver_may_change_their_own_decision(two_resolvers, tmp_path: Path) -> None:
    store, tokens, _who, c = two_resolvers
    page = c.get("/api/item?task=adjudication&key=b1", headers=_h(tokens["carol"])).json()
    for k, state in enumerate(("positive", "uncertain")):
        r = c.post(
            "/api/submissions", headers=_h(tokens["carol"]), json=_decide(page, state, f"carol-000{k}")
        )
        assert r.status_code == 200, r.text
    assert _resolved(store, tmp_path / "e")[("b1", "Effusion")] == "uncertain"


def test_the_refusal_holds_inside_the_transaction(two_resolvers, tmp_path: Path) -> None:
    """Both decisions checked against the undecided conflict (as two requests racing would be), then
    appended in turn: the second is rolled back by the conditional update, not stored."""
    store, _tokens, who, _c = two_resolvers
    bodies = {
        n: {"labels": {"Effusion": s}, "conflicts": {"Effusion": {"alice": "positive", "bob": "negative"}}}
        for n, s in (("carol", "positive"), ("dan", "negative"))
    }
    rows = {
        n: {
            "id": f"{n}-race-01",
            "reader_id": who[n].id,
            "task": "adjudication",
            "item": "b1",
            "payload": json.dumps(store.validate(who[n], "adjudication", "b1", b), sort_keys=True),
            "client_time": None,
        }
        for n, b in bodies.items()
    }
    store._committer().append(rows["carol"])
    with pytest.raises(SubmissionError, match="decided by another resolver") as e:
        store._committer().append(rows["dan"])
    assert e.value.status == 409
    assert list(store.submissions(task="adjudication")["reader"]) == ["carol"]
    assert _resolved(store, tmp_path / "e")[("b1", "Effusion")] == "positive"


@pytest.mark.parametrize(
    "body, status, message",
    [
        ({"labels": {"Effusion": "positive"}}, 422, "'conflicts'"),
        ({"labels": {"Effusion": "positive"}, "conflicts": {}}, 422, "'conflicts'"),
        (
            {
                "labels": {"Effusion": "positive"},
                "conflicts": {"Effusion": {"alice": "positive", "bob": "uncertain"}},
            },
            409,
            "changed since",
        ),
        (
            {
                "labels": {"Effusion": "positive"},
                "conflicts": {"Effusion": {"alice": "positive", "bob": "negative"}},
                "seen": {"Effusion": "x"},
            },
            422,
            "'seen'",
        ),
    ],
)
def test_a_decision_must_name_what_it_saw(two_resolvers, body, status, message) -> None:
    store, tokens, _who, c = two_resolvers
    r = c.post(
        "/api/submissions",
        headers=_h(tokens["carol"]),
        json={"id": "carol-bad-01", "task": "adjudication", "item": "b1", **body},
    )
    assert r.status_code == status and message in r.json()["detail"]
    assert store.submissions(task="adjudication").empty
