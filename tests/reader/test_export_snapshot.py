"""One snapshot per export on both backends: taken while readers keep submitting (and with a submission
committed between its reads), an export's label rows are the latest submission of each reader and item in
its own audit log."""

from __future__ import annotations

import io
import json
import threading
from pathlib import Path

import pandas as pd

from cxreval.reader.export import export_tables
from cxreval.reader.store import ReaderStore
from cxreval.reader.study import load_study

from .conftest import FINDINGS


def _body(k: int) -> dict:
    states = ("negative", "uncertain", "positive")
    return {"labels": {f: states[(k + j) % 3] for j, f in enumerate(FINDINGS)}, "boxes": []}


def _disagreements(texts: dict[str, str]) -> list[tuple[str, str, str, str, str]]:
    """``(source, study, finding, label, audit's label)`` of the image labels of ``labels.csv`` that are not
    the latest image submission of their reader and study in ``audit.csv`` (and of audit entries missing)."""
    audit = pd.read_csv(io.StringIO(texts["audit.csv"]), dtype=str, keep_default_na=False)
    latest: dict[tuple[str, str, str], str] = {}
    for _, row in audit[audit["task"] == "image"].iterrows():  # in commit order: the last one stands
        for f, s in json.loads(row["payload"])["labels"].items():
            latest[(f"img_{row['reader']}", row["item"], f)] = s
    labels = pd.read_csv(io.StringIO(texts["labels.csv"]), dtype=str, keep_default_na=False)
    got = {
        (r.source, r.study_id, r.finding): r.state for r in labels.itertuples() if r.source.startswith("img_")
    }
    out = [(*k, v, latest.get(k, "")) for k, v in got.items() if latest.get(k) != v]
    return out + [(*k, "", v) for k, v in latest.items() if k not in got]


def test_an_export_is_one_snapshot_under_concurrent_submissions(study_file: Path, db_url: str) -> None:
    store, tokens = ReaderStore.create(db_url, load_study(study_file))
    who = {n: store.authenticate(tokens[n]) for n in ("alice", "bob")}
    keys = sorted(store.items["image"])
    stop = threading.Event()
    counter = iter(range(10**6))
    lock = threading.Lock()

    def submit(name: str) -> None:
        with lock:
            k = next(counter)
        store.submit(who[name], f"{name}-{k:08d}", "image", keys[k % len(keys)], _body(k))

    def keep_submitting(name: str) -> None:
        while not stop.is_set():
            submit(name)

    sa = store.sa
    armed = threading.local()

    @sa.event.listens_for(store.engine, "before_cursor_execute")
    def _between_reads(conn, cursor, statement, params, context, executemany) -> None:
        """Commit a submission just before the export reads the audit log (after it read the labels)."""
        if getattr(armed, "on", False) and "FROM submissions JOIN readers" in statement:
            armed.on = False
            submit("alice")

    for name in who:
        for j, key in enumerate(keys):
            store.submit(who[name], f"{name}-first-{j:04d}", "image", key, _body(j))
    threads = [threading.Thread(target=keep_submitting, args=(n,)) for n in who]
    for t in threads:
        t.start()
    try:
        results = []
        for _ in range(3):
            armed.on = True
            results.append(export_tables(store))
            assert not armed.on  # the submission went in between the reads
    finally:
        stop.set()
        for t in threads:
            t.join()
    for res in results:
        assert _disagreements(dict(res.texts)) == []
        image_rows = [ln for ln in res.texts["labels.csv"].splitlines() if ",img_" in ln]
        assert len(image_rows) == 2 * len(keys) * len(FINDINGS)
    assert results[-1].n_submissions < len(store.submissions())  # the export did not see the later ones
    store.close()
