"""Tests of cxreval.datasets.padchest (PadChest labels, physician and RNN sources)."""

from __future__ import annotations

import ast
import gzip

import numpy as np
import pandas as pd
import pytest

from cxreval.datasets import load_dataset
from cxreval.datasets.padchest import (
    PADCHEST_FILE,
    PADCHEST_MAPPING,
    SOURCES,
    load_labels,
    parse_label_lists,
)
from cxreval.exceptions import DataUnavailableError, InvalidParameterError, SchemaError
from cxreval.findings import CHESTXRAY14
from cxreval.labels import validate_label_table

HEADER = "ImageID,StudyID,PatientID,Projection,MethodLabel,Labels\n"
ROWS = [
    ("i1.png", "s1", "p1", "PA", "Physician", "['cardiomegaly', ' pleural effusion']"),
    ("i2.png", "s1", "p1", "L", "Physician", "['normal']"),
    (
        "i3.png",
        "s2",
        "p2",
        "PA",
        "RNN_model",
        "['laminar atelectasis', 'COPD signs', ' subcutaneous emphysema', '']",
    ),
    ("i4.png", "s3", "p3", "AP", "RNN_model", "['hiatal hernia', 'Nodule', 'exclude', 'COPD signs']"),
    ("i5.png", "s4", "p4", "PA", "RNN_model", "['normal', 'cardiomegaly']"),
    # dropped rows, one per reason
    ("", "s5", "p5", "PA", "Physician", "['normal']"),
    ("i7.png", "s6", "", "PA", "Physician", "['normal']"),
    ("i8.png", "s7", "p7", "PA", "Radiologist", "['normal']"),
    ("i9.png", "s8", "p8", "PA", "RNN_model", "nan"),
    ("i10.png", "s9", "p9", "PA", "RNN_model", "['']"),
    ("i11.png", "s10", "p10", "PA", "RNN_model", "['exclude', '']"),
]


def _write(tmp_path, rows=ROWS, header=HEADER, name="padchest.csv"):
    p = tmp_path / name
    p.write_text(header + "".join(",".join(f'"{v}"' for v in r) + "\n" for r in rows))
    return p


def test_small_file_mapping_sources_and_drops(tmp_path):
    res = load_labels(_write(tmp_path))
    t, rep = res.table, res.report
    findings = list(dict.fromkeys(PADCHEST_MAPPING.values()))
    assert findings == [*CHESTXRAY14, "No Finding"]
    assert rep.n_read == 11 and rep.n_kept == 5 and rep.n_kept + rep.n_dropped == rep.n_read
    assert len(t) == 5 * len(findings) and t.columns.tolist() == [
        "study_id",
        "patient_id",
        "finding",
        "source",
        "state",
    ]
    pos = t[t.state == 2].groupby("study_id")["finding"].apply(sorted).to_dict()
    assert pos == {
        "i1.png": ["Cardiomegaly", "Effusion"],
        "i2.png": ["No Finding"],
        "i3.png": ["Atelectasis"],
        "i4.png": ["Hernia", "Nodule"],
        "i5.png": ["Cardiomegaly", "No Finding"],
    }
    # subcutaneous emphysema is not Emphysema; everything unlisted is negative, nothing else
    assert set(t["state"].unique()) == {0, 2}
    assert t.loc[(t.study_id == "i3.png") & (t.finding == "Emphysema"), "state"].item() == 0
    src = t.groupby("study_id")["source"].first().to_dict()
    assert src == {
        "i1.png": "padchest_physician",
        "i2.png": "padchest_physician",
        "i3.png": "padchest_rnn",
        "i4.png": "padchest_rnn",
        "i5.png": "padchest_rnn",
    }
    assert t.groupby("study_id")["patient_id"].first().to_dict()["i2.png"] == "p1"
    pd.testing.assert_frame_equal(validate_label_table(t), t, check_dtype=False)
    d = rep.dropped
    assert d["row"].tolist() == [5, 6, 7, 8, 9, 10]
    assert [r.split(" (")[0] for r in d["reason"]] == [
        "missing ImageID",
        "missing PatientID",
        "unknown MethodLabel",
        "unparseable Labels",
        "no informative label",
        "no informative label",
    ]
    assert d["value"].tolist()[2:4] == ["Radiologist", "nan"]
    notes = "\n".join(rep.notes)
    assert "images per source: padchest_physician 2, padchest_rnn 3" in notes
    assert (
        "2 unmapped PadChest terms (term: images; not labels here): 'copd signs' 2, 'subcutaneous emphysema' 1"
        in notes
    )
    assert "'normal' listed together with a mapped abnormal finding in 1 images" in notes


def test_custom_mapping_and_registry(tmp_path):
    p = _write(tmp_path)
    res = load_labels(p, mapping={"COPD signs": "Emphysema", "cardiomegaly": "Cardiomegaly"})
    t = res.table
    assert sorted(t["finding"].unique()) == ["Cardiomegaly", "Emphysema"]
    pos = t[t.state == 2].groupby("finding")["study_id"].apply(sorted).to_dict()
    assert pos == {"Cardiomegaly": ["i1.png", "i5.png"], "Emphysema": ["i3.png", "i4.png"]}
    reg = load_dataset("padchest", p)
    pd.testing.assert_frame_equal(reg.table, load_labels(p).table)
    assert reg.report.n_dropped == 6


def test_parse_label_lists():
    s = pd.Series(["['a', ' B ']", "[]", "['x',]", None, "nan", "['it''s']", "['a', ' B ']"])
    terms, ok = parse_label_lists(s)
    assert ok.tolist() == [True, True, False, False, False, False, True]
    assert terms.tolist() == [["a", "b"], [], [], [], [], [], ["a", "b"]]
    # the regex agrees with Python's literal parser on every list literal it accepts
    for text, good, got in zip(s, ok, terms):
        if good:
            assert [x.strip().casefold() for x in ast.literal_eval(text)] == got


def test_bad_inputs(tmp_path):
    with pytest.raises(SchemaError, match=r"padchest.csv' is missing required column\(s\) \['MethodLabel'\]"):
        load_labels(
            _write(
                tmp_path,
                [r[:4] + r[5:] for r in ROWS],
                header="ImageID,StudyID,PatientID,Projection,Labels\n",
            )
        )
    dup = [*ROWS[:3], ROWS[0]]
    with pytest.raises(
        SchemaError, match=r"Duplicate image 'i1.png' in file .*column 'ImageID' \(rows \[0, 3\]\)"
    ):
        load_labels(_write(tmp_path, dup, name="dup.csv"))
    bad = tmp_path / "bad.csv.gz"
    bad.write_bytes(b"not gzip at all")
    with pytest.raises(SchemaError, match=r"Could not read '.*bad.csv.gz' as a PadChest labels CSV"):
        load_labels(bad)
    p = _write(tmp_path)
    with pytest.raises(SchemaError, match=r"mapping of PadChest term 'copd signs'"):
        load_labels(p, mapping={"copd signs": "COPD"})
    with pytest.raises(InvalidParameterError, match=r"cannot map 'exclude'"):
        load_labels(p, mapping={"exclude": "Mass"})
    with pytest.raises(InvalidParameterError, match=r"maps 'nodule' to both 'Nodule' and 'Mass'"):
        load_labels(p, mapping={"nodule": "Nodule", "Nodule ": "Mass"})
    with pytest.raises(InvalidParameterError, match=r"must be a non-empty mapping .* Got \{\} instead"):
        load_labels(p, mapping={})
    with pytest.raises(InvalidParameterError, match=r"must map str to str. Got 'nodule': 3 instead"):
        load_labels(p, mapping={"nodule": 3})  # type: ignore[dict-item]
    with pytest.raises(DataUnavailableError, match=rf"{PADCHEST_FILE} is not in the cache"):
        load_labels(cache_dir=tmp_path)


@pytest.mark.slow
def test_real_file_counts(metadata_dir):
    path = metadata_dir / PADCHEST_FILE
    res = load_labels(path)
    t, rep = res.table, res.report
    with gzip.open(path, "rt") as fh:
        raw = pd.read_csv(
            fh, usecols=["ImageID", "PatientID", "MethodLabel", "Labels"], dtype=str, keep_default_na=False
        )
    assert rep.n_read == len(raw) == 160_861
    assert rep.n_kept + rep.n_dropped == rep.n_read
    per_source = t.groupby("source")["study_id"].nunique()
    assert set(per_source.index) == set(SOURCES) and int(per_source.sum()) == rep.n_kept
    # physician-labelled images: kept + dropped equals an independent count (about 27% of the release)
    n_phys = int((raw["MethodLabel"] == "Physician").sum())
    dropped_phys = int((raw["MethodLabel"].to_numpy()[rep.dropped["row"].to_numpy()] == "Physician").sum())
    assert int(per_source["padchest_physician"]) + dropped_phys == n_phys == 39_053
    assert 0.24 < n_phys / len(raw) < 0.25 + 0.03
    # independent parse: literal_eval of every parseable list, exact term match, per source
    ok = raw["Labels"].str.startswith("[")
    assert rep.reasons()["unparseable Labels (expected a list literal such as \"['normal']\")"] == int(
        (~ok).sum()
    )
    lists = raw.loc[ok, "Labels"].map(lambda s: {x.strip().casefold() for x in ast.literal_eval(s)})
    informative = lists.map(lambda s: bool(s - {"", "exclude"}))
    assert rep.n_kept == int(informative.sum())
    kept = raw.loc[ok][informative.to_numpy()]
    kept_lists = lists[informative]
    for finding in ("Cardiomegaly", "Pneumothorax", "No Finding", "Atelectasis"):
        terms = {k for k, v in PADCHEST_MAPPING.items() if v == finding}
        has = kept_lists.map(lambda s, terms=terms: bool(s & terms)).to_numpy()
        for method, source in (("Physician", "padchest_physician"), ("RNN_model", "padchest_rnn")):
            want = int((has & (kept["MethodLabel"] == method).to_numpy()).sum())
            got = int(((t.finding == finding) & (t.source == source) & (t.state == 2)).sum())
            assert got == want, (finding, source)
    # exact terms, not substrings: 'subcutaneous emphysema' alone is not Emphysema
    sub = kept_lists.map(lambda s: "subcutaneous emphysema" in s and "emphysema" not in s).to_numpy()
    ids = set(kept["ImageID"].to_numpy()[sub])
    assert len(ids) > 100 and (t.loc[t.study_id.isin(ids) & (t.finding == "Emphysema"), "state"] == 0).all()
    assert np.array_equal(t["study_id"].to_numpy()[:: t["finding"].nunique()], kept["ImageID"].to_numpy())
