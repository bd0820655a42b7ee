"""The export's files: written with the csv module (a study id with a comma and a quote keeps its columns),
text cells that a spreadsheet would run as formulas prefixed with a quote, notes (unreadable, comment,
seconds) per reader and item."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pandas as pd
import pytest

from cxreval.reader.export import FORMULA_PREFIXES, export_tables, safe_cell
from cxreval.reader.payloads import SubmissionError
from cxreval.reader.store import ReaderStore
from cxreval.reader.study import load_study

from .conftest import FINDINGS, write_png

ODD = ["=HYPERLINK(1)", "+cmd", "-12", "@SUM(A1)", 'a,b"q', "plain"]


@pytest.mark.parametrize(
    "value, expected",
    [
        ("=1+1", "'=1+1"),
        ("+x", "'+x"),
        ("-x", "'-x"),
        ("@x", "'@x"),
        ("\tx", "'\tx"),
        ("\rx", "'\rx"),
        ("x=1", "x=1"),
        ("", ""),
        (None, ""),
        (-1.5, -1.5),
        (3, 3),
    ],
)
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
        store.submit(
            alice,
            f"sub-{k:06d}",
            "image",
            sid,
            {
                "labels": labels,
                "boxes": [{"finding": "Effusion", "x_min": 1, "y_min": 2, "x_max": 11, "y_max": 22}],
                "comment": "=cmd|' /C calc'!A0",
                "seconds": 12.5,
            },
            client_time="2026-01-31T12:00:00.000Z",
        )
    for bad in ('=HYPERLINK("http://evil","click")', "yesterday", "2026-13-01T00:00:00", "2026-01-31"):
        with pytest.raises(SubmissionError, match="ISO 8601"):
            store.submit(alice, "sub-bad-time", "image", "plain", {"labels": labels}, client_time=bad)
    out = tmp_path / "out"
    out.mkdir()
    res = export_tables(store)
    res.save(out)
    assert res.n_boxes == len(ODD) and res.n_notes == len(ODD)
    want = {("'" + s if s[0] in "=+-@" else s) for s in ODD}
    for name in ("labels.csv", "boxes.csv"):
        with open(out / name, newline="") as fh:
            rows = list(csv.DictReader(fh))
        assert {r["study_id"] for r in rows} == want, name
    with open(out / "boxes" / "img_alice.csv", newline="") as fh:
        rows = list(csv.reader(fh))
    assert rows[0] == [
        "Image Index",
        "Finding Label",
        "Bbox [x",
        "y",
        "w",
        "h]",
        "",
        "",
        "",
    ]  # BBox_List_2017's
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
        store.submit(
            alice,
            "sub-000002",
            "image",
            "a2",
            {"unreadable": True, "labels": {f: "negative" for f in FINDINGS}},
        )
    with pytest.raises(SubmissionError, match="seconds"):
        store.submit(
            alice, "sub-000003", "image", "a2", {"labels": {f: "negative" for f in FINDINGS}, "seconds": -1}
        )
    out = tmp_path / "out"
    out.mkdir()
    res = export_tables(store)
    res.save(out)
    assert res.n_labels == 0
    notes = pd.read_csv(out / "notes.csv", dtype=str, keep_default_na=False)
    assert notes[["item", "reader", "unreadable", "comment"]].values.tolist() == [
        ["a1", "alice", "1", "rotated, cut off"]
    ]
    assert store.queue(alice, "image")[0:4] and {
        x["key"] for x in store.queue(alice, "image") if x["done"]
    } == {"a1"}
    store.close()


LINE_BREAK_COMMENTS = ["a\r=1+1", "b\n@SUM(1)", "c\r\n+2", "-2+3", "d,\r-1;\n=2\t+3", 'e"\r"=1']
CONTROL = "".join(chr(c) for c in (*range(1, 32), 127, *range(128, 160)))  # every control character but NUL


def _fragments(text: str) -> list[str]:
    """The cells of ``text`` read with every CR or LF as a row break, by the csv module and by a plain split
    at commas, semicolons and tabs (a spreadsheet's own guess of the separator), surrounding quotes removed."""
    import re

    cells = []
    for line in re.split("[\r\n]", text):
        cells += [c for row in csv.reader([line]) for c in row]
        cells += re.split("[,;\t]", line)
    return [c.strip('"') for c in cells] + cells


def test_no_exported_cell_starts_a_formula_even_split_at_line_breaks(tmp_path: Path) -> None:
    import unicodedata

    from cxreval.labels import read_labels

    root = tmp_path / "s"
    names = [
        "=x",
        'a,b"q',
        "-1",
        "plain",
        "\u202eevil",
        "x y;z",
    ]  # every name init allows: no control characters
    for k, sid in enumerate(names):
        write_png(root / "images" / f"{sid}.png", seed=k)
    (root / "study.yaml").write_text(f"findings: [{', '.join(FINDINGS)}]\nimages: images\nreaders: [alice]\n")
    store, tokens = ReaderStore.create(f"sqlite:///{tmp_path / 'r.db'}", load_study(root / "study.yaml"))
    alice = store.authenticate(tokens["alice"])
    comments = LINE_BREAK_COMMENTS[: len(names) - 1] + ["z" + CONTROL + "=1"]
    assert len(comments) == len(names)
    for k, (sid, comment) in enumerate(zip(names, comments)):
        store.submit(
            alice,
            f"sub-{k:06d}",
            "image",
            sid,
            {
                "labels": {f: "negative" for f in FINDINGS} | {"Effusion": "positive"},
                "boxes": [{"finding": "Effusion", "x_min": 1, "y_min": 2, "x_max": 11, "y_max": 22}],
                "comment": comment,
            },
        )
    out = tmp_path / "out"
    out.mkdir()
    res = export_tables(store)
    for f in (f for f in res.save(out) if f.suffix == ".csv"):
        with open(f, newline="", encoding="utf-8") as fh:
            text = fh.read()
        starts = [c for c in _fragments(text) if c[:1] in FORMULA_PREFIXES]
        assert starts == [], (Path(f).name, starts[:5])
    with open(out / "notes.csv", newline="", encoding="utf-8") as fh:
        raw = fh.read()
    for c in (c for c in comments if "\r" in c or "\n" in c):  # every cell with a CR or LF is quoted
        assert '"' + str(safe_cell(c)).replace('"', '""') + '"' in raw
    with open(out / "notes.csv", newline="", encoding="utf-8") as fh:
        got = [r["comment"] for r in csv.DictReader(fh)]
    assert sorted(got) == sorted(str(safe_cell(c)) for c in comments)
    assert all(unicodedata.category(ch) == "Cc" for ch in CONTROL) and any(CONTROL[:9] in g for g in got)
    labels = read_labels(out / "labels.csv").table
    assert set(labels["study_id"]) == {str(safe_cell(n)) for n in names}
    assert len(labels) == len(names) * len(FINDINGS)
    store.close()


@pytest.mark.parametrize("char", ["\r", "\n", "\t", "\x1b", "\x7f", "\x85"])
def test_image_names_with_control_characters_are_refused_at_init(tmp_path: Path, char: str) -> None:
    from cxreval.exceptions import SchemaError

    root = tmp_path / "s"
    write_png(root / "images" / "fine.png", seed=0)
    write_png(root / "images" / f"bad{char}name.png", seed=1)
    (root / "study.yaml").write_text(f"findings: [{', '.join(FINDINGS)}]\nimages: images\nreaders: [alice]\n")
    shown = ("bad" + char + "name").encode("unicode_escape").decode()
    with pytest.raises(SchemaError, match="control character") as e:
        ReaderStore.create(f"sqlite:///{tmp_path / 'r.db'}", load_study(root / "study.yaml"))
    assert shown in str(e.value) and f"U+{ord(char):04X}" in str(e.value)
    assert not (tmp_path / "r.db").exists()


HOSTILE = 'ok;=HYPERLINK(CHAR(104)&"x";CHAR(120));'
HOSTILE_TEXTS = [
    HOSTILE,
    "fine\t=1+1",
    'a," @SUM(1)',
    "b; -2",
    "c\r\n +3",
    'say "hi";"=1"',
    "plain, no formula",
]


def _cells(text: str, sep: str) -> list[str]:
    """Every cell of ``text`` split at ``sep``: by the csv module, and by a plain split at ``sep`` after
    breaking rows at every CR or LF (what a spreadsheet that guesses does)."""
    import re

    cells = [c for row in csv.reader(io.StringIO(text, newline=""), delimiter=sep) for c in row]
    for line in re.split("[\r\n]", text):
        cells += line.split(sep)
    return cells


def _formula_cells(text: str) -> list[tuple[str, str]]:
    """``(separator, cell)`` of every cell that starts a formula under a comma, semicolon or tab separator:
    after leading spaces and double quotes, ``=``, ``+``, ``-`` or ``@``; after leading double quotes and
    spaces other than tab and CR, a tab or a CR."""
    bad = []
    for sep in (",", ";", "\t"):
        for c in _cells(text, sep):
            trimmed = c.lstrip("".join(ch for ch in c if ch.isspace()) + '"')
            raw = c.lstrip(' "')
            if trimmed.startswith(("=", "+", "-", "@")) or raw.startswith(("\t", "\r")):
                bad.append((sep, c))
    return bad


def hostile_study(study_factory, tmp_path: Path) -> ReaderStore:
    """A study whose comments, file names, patient ids and IQA columns are crafted to be formulas after a
    comma, a semicolon, a tab, a CR or LF, a quote or spaces; every reader has submitted, with a conflict
    resolved."""
    root = tmp_path / "s"
    study = study_factory(root, extra="adjudication:\n  readers: [alice, bob]\n")
    ids = ["-12", "a;=1", "@x", "b1 ;+2"]
    for k, sid in enumerate(ids):
        write_png(root / "images" / f"{sid}.png", seed=40 + k)
    with open(root / "patients.csv", "a", newline="") as fh:
        w = csv.writer(fh)
        for sid, pid in zip(ids, [HOSTILE, "b; -2", 'a," @SUM(1)', "=1+1"]):  # no control characters
            w.writerow([sid, pid])
    with open(root / "pairs.csv", "a", newline="") as fh:
        write_png(root / "iqa" / "=t9.png", seed=300)
        csv.writer(fh).writerow(["iqa/ref0.png", "iqa/=t9.png", "x;=HYPERLINK(1);"])
    store, tokens = ReaderStore.create(f"sqlite:///{tmp_path / 'r.db'}", load_study(study))
    who = {n: store.authenticate(t) for n, t in tokens.items()}
    k = 0
    for name in ("alice", "bob"):
        for j, sid in enumerate(store.items["image"]):
            k += 1
            labels = {f: "negative" for f in FINDINGS} | {
                "Effusion": "positive" if name == "alice" else "negative"
            }
            body = {"labels": labels, "boxes": [], "comment": HOSTILE_TEXTS[(j + k) % len(HOSTILE_TEXTS)]}
            store.submit(who[name], f"sub-{k:06d}", "image", sid, body)
        for j, key in enumerate(store.items["iqa"]):
            k += 1
            body = {"ratings": {"overall": 2}, "comment": HOSTILE_TEXTS[j % len(HOSTILE_TEXTS)]}
            store.submit(who[name], f"sub-{k:06d}", "iqa", key, body)
    conflicts, _ = store.read(lambda conn: store.conflict_rows(conn, "a;=1"))
    store.submit(
        who["carol"],
        "sub-carol-01",
        "adjudication",
        "a;=1",
        {"labels": {"Effusion": "positive"}, "conflicts": conflicts, "comment": HOSTILE},
    )
    return store


def test_no_cell_starts_a_formula_under_any_separator(study_factory, tmp_path: Path) -> None:
    """Hostile comments, file names, patient ids and IQA columns: no cell of any exported CSV starts a
    formula when the file is split at commas, semicolons or tabs, and the README states the rule."""
    import json

    store = hostile_study(study_factory, tmp_path)
    res = export_tables(store)
    for name, text in res.texts.items():
        if name.endswith(".csv"):
            assert _formula_cells(text) == [], name
    assert "conflict_resolved" in res.sources and res.n_notes >= 2 * len(store.items["image"])
    notes = pd.read_csv(io.StringIO(res.texts["notes.csv"]), dtype=str, keep_default_na=False)
    assert 'ok;\'=HYPERLINK(CHAR(104)&"x";CHAR(120));' in set(notes["comment"])
    audit = pd.read_csv(io.StringIO(res.texts["audit.csv"]), dtype=str, keep_default_na=False)
    assert [json.loads(p) for p in audit["payload"]] == [
        json.loads(p) for p in store.submissions()["payload"]
    ]
    assert "formula" in res.texts["README.md"] and "ok;'=HYPERLINK(...)" in res.texts["README.md"]
    store.close()
