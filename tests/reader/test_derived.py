"""The derived tables (latest state per reader and item, items done per reader and task, conflicts with their
resolutions): kept in step
with the append-only log in the submission's transaction, equal to a replay of the log, and adjudication
per (study, finding, pair of states)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from cxreval.reader.derived import label_diff, merge_conflicts, replay
from cxreval.reader.export import export_tables
from cxreval.reader.store import ReaderStore
from cxreval.reader.study import load_study

from .conftest import FINDINGS, IMAGES, decision


def _labels(**states: str) -> dict:
    out = {"labels": {f: "negative" for f in FINDINGS}, "boxes": []}
    out["labels"].update(states)
    return out


def _cr(store: ReaderStore, folder: Path) -> tuple[dict, int]:
    folder.mkdir()
    res = export_tables(store)
    res.save(folder)
    lab = pd.read_csv(folder / "labels.csv", dtype=str)
    cr = lab[lab["source"] == "conflict_resolved"]
    return {(r.study_id, r.finding): r.state for r in cr.itertuples()}, res.n_unresolved


def _derived(store: ReaderStore) -> tuple[list, list, list]:
    t = store.t
    with store.engine.connect() as conn:
        lt = sorted(tuple(r) for r in conn.execute(store.sa.select(t["latest"])))
        ct = sorted(tuple(r) for r in conn.execute(store.sa.select(t["conflicts"])))
        pt = sorted(tuple(r) for r in conn.execute(store.sa.select(t["progress"])))
    return lt, ct, pt


def _done_in_log(store: ReaderStore) -> list[tuple[int, str, int, int, str]]:
    """``(reader_id, task, distinct items, submissions, last server time)`` counted from the log itself
    (an adjudication's distinct items are 0: its progress is the conflicts')."""
    log = store.submissions()
    ids = dict(zip(store.readers()["name"], store.readers()["id"]))
    g = log.groupby(["reader", "task"])
    n, k, last = g["item"].nunique(), g.size(), g["server_time"].max()
    return sorted(
        (int(ids[r]), str(t), 0 if t == "adjudication" else int(n[(r, t)]), int(k[(r, t)]), str(last[(r, t)]))
        for (r, t) in n.index
    )


def test_label_diff_and_merge_keep_a_resolution_only_for_its_pair() -> None:
    assert label_diff({"E": "uncertain", "C": "negative"}, {"E": "negative", "C": "negative"}) == {
        "E": ("uncertain", "negative")
    }
    row = {
        "state_a": "uncertain",
        "state_b": "negative",
        "resolution": "negative",
        "resolved_by": 3,
        "resolved_seq": 9,
    }
    assert merge_conflicts({"E": row}, {"E": ("uncertain", "negative")})["E"] is row
    changed = merge_conflicts({"E": row}, {"E": ("uncertain", "positive")})["E"]
    assert changed["resolution"] is None and changed["state_b"] == "positive"
    assert merge_conflicts({"E": row}, {}) == {}


def test_stale_adjudication_no_longer_overrides_the_readers(study_factory, tmp_path: Path) -> None:
    """alice uncertain vs bob negative -> rita resolves negative -> bob changes to uncertain: the readers
    agree, conflict_resolved is uncertain (not rita's negative). bob then says positive: a new pair, back in
    rita's queue, unresolved in the export; rita's first label stays in the audit log."""
    study = study_factory(tmp_path / "s", resolvers=("rita",))
    store, tokens = ReaderStore.create(f"sqlite:///{tmp_path / 'r.db'}", load_study(study))
    alice, bob, rita = (store.authenticate(tokens[n]) for n in ("alice", "bob", "rita"))
    store.submit(alice, "alice-a1-01", "image", "a1", _labels(Effusion="uncertain"))
    store.submit(bob, "bob-a1-0001", "image", "a1", _labels())
    assert store.conflicts() == {"a1": {"Effusion": {"alice": "uncertain", "bob": "negative"}}}
    assert store.queue(rita, "adjudication") == [{"key": "a1", "done": False}]
    store.submit(rita, "rita-a1-001", "adjudication", "a1", decision(store, "a1", {"Effusion": "negative"}))
    assert store.queue(rita, "adjudication") == [{"key": "a1", "done": True}]
    got, unresolved = _cr(store, tmp_path / "e1")
    assert got[("a1", "Effusion")] == "negative" and unresolved == 0

    store.submit(bob, "bob-a1-0002", "image", "a1", _labels(Effusion="uncertain"))
    assert store.conflicts() == {} and store.queue(rita, "adjudication") == []
    got, unresolved = _cr(store, tmp_path / "e2")
    assert got[("a1", "Effusion")] == "uncertain" and unresolved == 0

    store.submit(bob, "bob-a1-0003", "image", "a1", _labels(Effusion="positive"))
    assert store.conflicts() == {"a1": {"Effusion": {"alice": "uncertain", "bob": "positive"}}}
    assert store.queue(rita, "adjudication") == [{"key": "a1", "done": False}]
    got, unresolved = _cr(store, tmp_path / "e3")
    assert ("a1", "Effusion") not in got and unresolved == 1
    audit = pd.read_csv(tmp_path / "e3" / "audit.csv")
    rita_rows = audit[audit["reader"] == "rita"]
    assert json.loads(rita_rows["payload"].iloc[0]) == {
        "labels": {"Effusion": "negative"},
        "conflicts": {"Effusion": {"alice": "uncertain", "bob": "negative"}},
        "seen": {"Effusion": None},
    }
    st = store.status().set_index(["reader", "task"])
    assert (st.loc[("rita", "adjudication"), "n_items"], st.loc[("rita", "adjudication"), "n_done"]) == (1, 0)

    # a resolver who saw the old pair is refused (409), not applied to the new one
    from cxreval.reader.payloads import SubmissionError

    with pytest.raises(SubmissionError, match="changed since") as e:
        store.submit(
            rita,
            "rita-a1-002",
            "adjudication",
            "a1",
            {
                "labels": {"Effusion": "negative"},
                "conflicts": {"Effusion": {"alice": "uncertain", "bob": "negative"}},
            },
        )
    assert e.value.status == 409
    store.submit(
        rita,
        "rita-a1-003",
        "adjudication",
        "a1",
        {
            "labels": {"Effusion": "positive"},
            "conflicts": {"Effusion": {"alice": "uncertain", "bob": "positive"}},
        },
    )
    got, unresolved = _cr(store, tmp_path / "e4")
    assert got[("a1", "Effusion")] == "positive" and unresolved == 0
    # alice changes her side: the pair changes again and rita's label no longer applies
    store.submit(alice, "alice-a1-02", "image", "a1", _labels(Effusion="negative"))
    assert store.queue(rita, "adjudication") == [{"key": "a1", "done": False}]
    with pytest.raises(SubmissionError, match="not in conflict"):
        store.submit(rita, "rita-a1-004", "adjudication", "a1", {"labels": {"Nodule": "positive"}})
    store.close()


def test_incremental_tables_equal_a_replay_of_the_log(study_factory, db_url: str, tmp_path: Path) -> None:
    """300 random submissions (readers changing their minds, partial and stale adjudications): the tables
    kept in each transaction equal both a replay of the log and the latest rows read from the log itself
    (SQLite and PostgreSQL)."""
    study = study_factory(
        tmp_path / "s",
        readers=("alice", "bob", "dave"),
        resolvers=("rita", "sam"),
        extra="adjudication:\n  readers: [alice, bob]\n",
    )
    store, tokens = ReaderStore.create(db_url, load_study(study))
    who = {n: store.authenticate(tokens[n]) for n in tokens}
    rng = np.random.default_rng(7)
    states = ["negative", "uncertain", "positive"]
    n_adj = 0
    for k in range(300):
        if k % 4 == 3:
            conflicts = store.conflicts()
            if conflicts:
                sid = sorted(conflicts)[int(rng.integers(len(conflicts)))]
                fs = [f for f in conflicts[sid] if rng.random() < 0.7] or list(conflicts[sid])[:1]
                store.submit(
                    who[str(rng.choice(["rita", "sam"]))],
                    f"adj-{k:06d}",
                    "adjudication",
                    sid,
                    decision(store, sid, {f: str(rng.choice(states)) for f in fs}),
                )
                n_adj += 1
                continue
        reader = str(rng.choice(["alice", "bob", "dave"]))
        item = str(rng.choice(IMAGES))
        labels = {f: str(rng.choice(states, p=[0.6, 0.2, 0.2])) for f in FINDINGS}
        store.submit(who[reader], f"sub-{k:06d}", "image", item, {"labels": labels, "boxes": []})
    assert n_adj > 20
    kept = _derived(store)
    log = store.submissions()
    last = log.groupby(["reader", "task", "item"])["payload"].last()
    assert {k: json.loads(v) for k, v in last.items()} == store.latest()
    assert kept[2] == _done_in_log(store) and len(kept[2]) == 5
    with store.engine.begin() as conn:
        replay(conn, store.spec)
    assert _derived(store) == kept
    assert any(r[4] is not None for r in kept[1]) and any(r[4] is None for r in kept[1])
    store.close()


@pytest.mark.parametrize("dropped", [("latest", "conflicts", "progress"), ("progress",)])
def test_a_database_without_the_derived_tables_gets_them_on_open(
    study_file: Path, tmp_path: Path, dropped
) -> None:
    """A database from before the derived tables, or from before the progress counts, gets them from its log."""
    url = f"sqlite:///{tmp_path / 'r.db'}"
    store, tokens = ReaderStore.create(url, load_study(study_file))
    alice, bob = store.authenticate(tokens["alice"]), store.authenticate(tokens["bob"])
    store.submit(alice, "alice-b1-01", "image", "b1", _labels(Effusion="positive"))
    store.submit(bob, "bob-b1-0001", "image", "b1", _labels())
    kept = _derived(store)
    store.close()
    with store.engine.begin() as conn:
        for table in dropped:
            conn.exec_driver_sql(f"DROP TABLE {table}")
    store.engine.dispose()
    again = ReaderStore.open(url)
    assert _derived(again) == kept and set(again.conflicts()) == {"b1"}
    assert kept[2] == _done_in_log(again) and again.progress(alice)[0]["n_done"] == 1
    again.close()
