"""The export's files: written with the csv module (a study id with a comma and a quote keeps its columns),
text cells that a spreadsheet would run as formulas prefixed with a quote, notes (unreadable, comment,
seconds) per reader and item."""

from __future__ import annotations

import csv
from pathlib import Path

import pandas as pd
import pytest

from cxreval.reader.export import FORMULA_PREFIXES, export_tables, safe_cell
from cxreval.reader.store import ReaderStore, SubmissionError
from cxreval.reader.study import load_study

from .conftest import FINDINGS, write_png

ODD = ["=HYPERLINK(1)", "+cmd", "-12", "@SUM(A1)", 'a,b"q', "plain"]


@pytest.mark.parametrize("value, expected", [("=1+1", "'=1+1"), ("+x", "'+x"), ("-x", "'-x"), ("@x", "'@x"),
                                             ("\tx", "'\tx"), ("\rx", "'\rx"), ("x=1", "x=1"), ("", ""),
                                             (None, ""), (-1.5, -1.5), (3, 3)])
def test_safe_cell_prefixes_formula_starts_only(value, expected) -> None:
    assert safe_cell(value) == expected
    assert FORMULA_PREFIXES == ("=", "+", "-", "@", "\t", "\r")


def test_odd_study_ids_are_quoted_and_formula_cells_prefixed(tmp_path: Path) -> None:
    root = tmp_path / "s"
    for k, sid in enumerate(ODD):
        write_png(root / "images" / f"{sid}.png", seed=k)
    (root / "study.yaml").write_text(f"findings: [{', '.join(FINDINGS)}]\nimages: images\nreaders: [alice]\n")
    store, tokens = ReaderStore.create(f"sqlite:///{tmp_path / 'r.db'}", load_study(root / "study.yaml"))
    alice = store.authenticate(tokens["alice"])
    for k, sid in enumerate(ODD):
        labels = {f: "negative" for f in FINDINGS} | {"Effusion": "positive"}
        store.submit(alice, f"sub-{k:06d}", "image", sid, {
            "labels": labels, "boxes": [{"finding": "Effusion", "x_min": 1, "y_min": 2, "x_max": 11, "y_max": 22}],
            "comment": "=cmd|' /C calc'!A0", "seconds": 12.5}, client_time="2026-01-31T12:00:00.000Z")
    for bad in ('=HYPERLINK("http://evil","click")', "yesterday", "2026-13-01T00:00:00", "2026-01-31"):
        with pytest.raises(SubmissionError, match="ISO 8601"):
            store.submit(alice, "sub-bad-time", "image", "plain", {"labels": labels}, client_time=bad)
    out = tmp_path / "out"
    out.mkdir()
    res = export_tables(store, out)
    assert res.n_boxes == len(ODD) and res.n_notes == len(ODD)
    want = {("'" + s if s[0] in "=+-@" else s) for s in ODD}
    for name in ("labels.csv", "boxes.csv"):
        with open(out / name, newline="") as fh:
            rows = list(csv.DictReader(fh))
        assert {r["study_id"] for r in rows} == want, name
    with open(out / "boxes" / "img_alice.csv", newline="") as fh:
        rows = list(csv.reader(fh))
    assert rows[0] == ["Image Index", "Finding Label", "Bbox [x", "y", "w", "h]", "", "", ""]  # BBox_List_2017's
    assert all(len(r) == 6 for r in rows[1:]) and {r[0] for r in rows[1:]} == want
    assert [r[2:] for r in rows[1:]] == [["1", "2", "10", "20"]] * len(ODD)
    from cxreval.datasets.nih_boxes import read_nih_boxes

    boxes = read_nih_boxes(out / "boxes" / "img_alice.csv", image_shape=(48, 64)).table
    assert set(boxes["study_id"]) == want
    notes = pd.read_csv(out / "notes.csv", dtype=str, keep_default_na=False)
    assert set(notes["comment"]) == {"'=cmd|' /C calc'!A0"} and set(notes["seconds"]) == {"12.5"}
    audit = pd.read_csv(out / "audit.csv", dtype=str, keep_default_na=False)
    assert set(audit["client_time"]) == {"2026-01-31T12:00:00.000Z"}
    for name in ("labels.csv", "boxes.csv", "audit.csv", "notes.csv", "boxes/img_alice.csv"):
        with open(out / name, newline="") as fh:
            cells = [c for row in csv.reader(fh) for c in row]
        assert not [c for c in cells if c[:1] in FORMULA_PREFIXES], name
    store.close()


def test_an_unreadable_image_has_no_labels_and_is_noted(study_file: Path, tmp_path: Path) -> None:
    store, tokens = ReaderStore.create(f"sqlite:///{tmp_path / 'r.db'}", load_study(study_file))
    alice = store.authenticate(tokens["alice"])
    store.submit(alice, "sub-000001", "image", "a1", {"unreadable": True, "comment": "rotated, cut off"})
    with pytest.raises(SubmissionError, match="no labels"):
        store.submit(alice, "sub-000002", "image", "a2", {"unreadable": True,
                                                         "labels": {f: "negative" for f in FINDINGS}})
    with pytest.raises(SubmissionError, match="seconds"):
        store.submit(alice, "sub-000003", "image", "a2", {"labels": {f: "negative" for f in FINDINGS},
                                                         "seconds": -1})
    out = tmp_path / "out"
    out.mkdir()
    res = export_tables(store, out)
    assert res.n_labels == 0
    notes = pd.read_csv(out / "notes.csv", dtype=str, keep_default_na=False)
    assert notes[["item", "reader", "unreadable", "comment"]].values.tolist() == [["a1", "alice", "1",
                                                                                   "rotated, cut off"]]
    assert store.queue(alice, "image")[0:4] and {x["key"] for x in store.queue(alice, "image") if x["done"]} == {"a1"}
    store.close()
