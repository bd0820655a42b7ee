"""Bad input to the report labeller: clear CxrevalError (CLI: one line, exit 2) or a per-report note."""

from __future__ import annotations

import pandas as pd
import pytest

from cxreval.cli.main import main
from cxreval.datasets.report_files import read_reports
from cxreval.exceptions import CxrevalError, InvalidParameterError, SchemaError
from cxreval.labeller import label_reports, load_rules
from cxreval.labels import validate_label_table


def test_empty_text_is_a_note_and_missing_labels_not_a_dropped_row():
    t = pd.DataFrame({"study_id": ["a", "b", "c"], "text": ["No effusion.", "", None]})
    res = label_reports(t, sections="whole")
    lab = res.labels
    assert set(lab.study_id) == {"a", "b", "c"} and len(lab) == 3 * 14
    assert lab[lab.study_id.isin(["b", "c"])].state.isna().all()
    assert lab[lab.study_id == "a"].state.notna().all()
    assert res.notes.to_dict("records") == [
        {"study_id": "b", "source": "report", "note": "empty report text"},
        {"study_id": "c", "source": "report", "note": "empty report text"},
    ]
    validate_label_table(lab)


def test_no_recognisable_section_is_reported_not_dropped():
    t = pd.DataFrame(
        {"study_id": ["a", "b"], "text": ["Small left effusion.", "FINDINGS: Small left effusion."]}
    )
    res = label_reports(t, sections="findings,impression,whole")
    lab = res.labels.set_index(["study_id", "source", "finding"])["state"]
    assert pd.isna(lab["a", "report_findings", "Effusion"]) and lab["a", "report", "Effusion"] == 2
    assert lab["b", "report_findings", "Effusion"] == 2 and pd.isna(lab["b", "report_impression", "Effusion"])
    notes = set(map(tuple, res.notes[["study_id", "source", "note"]].to_numpy()))
    assert notes == {
        ("a", "report_findings", "no findings section"),
        ("a", "report_impression", "no impression section"),
        ("b", "report_impression", "no impression section"),
    }


def test_section_columns_missing_section_cell():
    t = pd.DataFrame(
        {"study_id": ["a", "b"], "FINDINGS": ["No effusion.", ""], "Impression": ["Effusion.", "Normal."]}
    )
    res = label_reports(t)
    assert ("b", "report_findings", "no findings section") in set(map(tuple, res.notes.to_numpy()))
    m = res.mentions
    assert set(m.field) == {"FINDINGS", "Impression"} and set(m.section) == {"findings", "impression"}


@pytest.mark.parametrize(
    ("frame", "msg"),
    [
        (pd.DataFrame({"id": ["a"], "text": ["x"]}), "no 'study_id' column"),
        (pd.DataFrame({"study_id": ["a"], "body": ["x"]}), "neither a 'text' column nor a section column"),
        (pd.DataFrame({"study_id": ["a", "a"], "text": ["x", "y"]}), "duplicate study ids ['a']"),
        (
            pd.DataFrame({"study_id": ["a", None], "text": ["x", "y"]}),
            "row 1, column 'study_id': missing study id",
        ),
        (
            pd.DataFrame({"study_id": ["a", "b"], "text": ["x", 3]}),
            "row 1, column 'text': report text must be text",
        ),
        (pd.DataFrame({"study_id": ["a"], "patient_id": [""], "text": ["x"]}), "missing patient id"),
    ],
)
def test_bad_tables(frame, msg):
    with pytest.raises(SchemaError, match=None) as exc:
        label_reports(frame)
    assert msg in str(exc.value)


@pytest.mark.parametrize(
    ("kwargs", "msg"),
    [
        ({"sections": "findings,summary"}, "'sections' parameter"),
        ({"sections": []}, "'sections' parameter"),
        ({"vocabulary": "mimic"}, "'vocabulary' parameter"),
        ({"chunk_size": 0}, "'chunk_size'"),
    ],
)
def test_bad_parameters(kwargs, msg):
    with pytest.raises(InvalidParameterError, match=msg):
        label_reports(pd.DataFrame({"study_id": ["a"], "text": ["x"]}), **kwargs)
    with pytest.raises(InvalidParameterError):
        label_reports("not a table")  # type: ignore[arg-type]


def test_non_utf8_csv_named_with_byte_and_line(tmp_path):
    p = tmp_path / "r.csv"
    p.write_bytes(b"study_id,text\ns1,No effusion\ns2,Caf\xe9 effusion\n")
    with pytest.raises(SchemaError, match=r"not UTF-8 text: byte 35 \(line 3\)"):
        read_reports(p)
    out = tmp_path / "o"
    assert main(["label-reports", "--reports", str(p), "-o", str(out)]) == 2
    assert not out.exists()


def test_cli_errors_are_one_line_exit_2(tmp_path, capsys):
    p = tmp_path / "r.csv"
    pd.DataFrame({"study_id": ["a", "a"], "text": ["x", "y"]}).to_csv(p, index=False)
    assert main(["label-reports", "--reports", str(p), "-o", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "duplicate study ids" in err[0] and str(p) in err[0]
    assert not (tmp_path / "o").exists()
    assert main(["label-reports", "--reports", str(tmp_path / "none.csv"), "-o", str(tmp_path / "o")]) == 2
    assert "does not exist" in capsys.readouterr().err
    assert main(["label-reports", "--reports", str(p), "-o", str(tmp_path / "o"), "--sections", "all"]) == 2
    assert "--sections" in capsys.readouterr().err
    assert main(["label-reports", "--reports", str(p), "-o", str(tmp_path / "o"), "--vocabulary", "x"]) == 2
    assert read_reports is not None and isinstance(SchemaError("x"), CxrevalError)


@pytest.mark.parametrize(
    ("yaml_text", "msg"),
    [
        ("findings: [a, b", "not valid YAML"),
        ("- a\n- b\n", "must hold a mapping"),
        ("colour: red\n", "unknown top-level keys ['colour']"),
        ("findings:\n  Effusion:\n    patterns: ['(unclosed']\n", "invalid regular expression"),
        ("findings:\n  Effusion:\n    patterns: ['(?P<x>a)']\n", "named group"),
        ("findings:\n  Effusion:\n    patterns: ['a*']\n", "matches the empty string"),
        ("findings:\n  Pleural Blob:\n    phrases: [blob]\n", "Unknown finding name 'Pleural Blob'"),
        ("findings:\n  Effusion:\n    words: [x]\n", "must be a mapping with keys among"),
        ("triggers:\n  doubt:\n    before: [x]\n", "unknown category 'doubt'"),
        ("scope:\n  before_words: -1\n", "before_words must be an integer"),
    ],
)
def test_bad_rules_files(tmp_path, yaml_text, msg):
    p = tmp_path / "rules.yaml"
    p.write_text(yaml_text)
    with pytest.raises(SchemaError) as exc:
        load_rules(p)
    assert msg in str(exc.value) and str(p) in str(exc.value)


def test_rules_file_missing_or_not_utf8(tmp_path):
    with pytest.raises(SchemaError, match="does not exist"):
        load_rules(tmp_path / "none.yaml")
    p = tmp_path / "r.yaml"
    p.write_bytes(b"scope:\n  before_words: 3 # caf\xe9\n")
    with pytest.raises(SchemaError, match="not UTF-8"):
        load_rules(p)


class BadType:
    def __repr__(self) -> str:
        return "BadType()"


def _ok_table():
    return pd.DataFrame({"study_id": ["a"], "text": ["No effusion."]})


@pytest.mark.parametrize(
    "param", ["reports", "sections", "vocabulary", "rules", "executor", "chunk_size", "progress", "where"]
)
def test_label_reports_rejects_bad_types(param):
    kwargs = {"reports": _ok_table(), param: BadType()}
    with pytest.raises(CxrevalError, match=param):
        label_reports(**kwargs)


def test_other_public_functions_reject_bad_types():
    from cxreval.labeller import compute_precision_recall
    from cxreval.labeller._engine import Engine, tokenize
    from cxreval.labeller._sections import split_sections

    lab = pd.DataFrame(
        {"study_id": ["a"], "patient_id": ["a"], "finding": ["Edema"], "source": ["g"], "state": ["positive"]}
    )
    calls = [
        (lambda: load_rules(BadType()), "rules"),
        (lambda: load_rules(vocabulary=BadType()), "vocabulary"),
        (lambda: read_reports(BadType()), "path"),
        (lambda: split_sections(BadType()), "text"),
        (lambda: tokenize(BadType()), "text"),
        (lambda: Engine(BadType()), "rules"),
        (lambda: Engine(load_rules()).run(BadType()), "texts"),
        (
            lambda: compute_precision_recall(lab, reference="g", predicted="g", findings=BadType()).table,
            "findings",
        ),
        (
            lambda: (
                compute_precision_recall(lab, reference="g", predicted="g", confidence_level=BadType()).table
            ),
            "confidence_level",
        ),
        (
            lambda: compute_precision_recall(lab, reference="g", predicted="g", uncertain=BadType()).table,
            "uncertain",
        ),
        (
            lambda: compute_precision_recall(lab, reference="g", predicted="g", n_resamples=BadType()).table,
            "n_resamples",
        ),
        (lambda: compute_precision_recall(lab, reference=BadType(), predicted="g").table, "source"),
        (lambda: compute_precision_recall(BadType(), reference="g", predicted="g").table, "label table"),
    ]
    for call, name in calls:
        with pytest.raises(CxrevalError, match=name):
            call()


# --- inputs a user gives: header-only files, conflicting columns, ignored columns, unusual reports -----------------


def test_header_only_csv_is_an_error_not_an_empty_output(tmp_path, capsys):
    p = tmp_path / "r.csv"
    p.write_text("study_id,text\n")
    with pytest.raises(SchemaError, match="has no rows"):
        label_reports(read_reports(p).table)
    assert main(["label-reports", "--reports", str(p), "-o", str(tmp_path / "out")]) == 2
    assert "has no rows" in capsys.readouterr().err and not (tmp_path / "out").exists()


def test_text_and_section_columns_together_is_an_error_not_sections_silently_ignored():
    t = pd.DataFrame({"study_id": ["a"], "text": ["No effusion."], "findings": ["Large effusion."]})
    with pytest.raises(SchemaError, match="both a 'text' column and section columns"):
        label_reports(t)


def test_ignored_columns_are_reported_by_the_cli(tmp_path, capsys):
    import json

    p = tmp_path / "r.csv"
    p.write_text("study_id,text,site\ns1,No effusion.,A\n")
    assert main(["label-reports", "--reports", str(p), "-o", str(tmp_path / "out")]) == 0
    assert "['site']" in capsys.readouterr().out
    assert json.loads((tmp_path / "out" / "summary.json").read_text())["ignored_columns"] == ["site"]


def test_run_on_report_without_sentence_ends_keeps_mention_rows_small():
    from cxreval.labeller._labeller import SENTENCE_TEXT_MAX

    text = "FINDINGS: " + " ".join(["no effusion and"] * 3000) + " but mild cardiomegaly"
    res = label_reports(pd.DataFrame({"study_id": ["a"], "text": [text]}), sections="whole")
    m = res.mentions
    assert len(m) == 3001 and m.sentence_text.str.len().max() <= SENTENCE_TEXT_MAX + 6
    last = m.iloc[-1]
    assert text[last.start : last.end] == last.phrase == "cardiomegaly" and last.phrase in last.sentence_text
    assert last.sentence_text.startswith("...") and last.state == "positive"
    short = label_reports(
        pd.DataFrame({"study_id": ["a"], "text": ["No effusion. Mild cardiomegaly."]})
    ).mentions
    assert short.sentence_text.tolist()[:2] == ["No effusion.", "Mild cardiomegaly."]


def test_print_rules_needs_no_reports_or_out(capsys):
    assert main(["label-reports", "--print-rules"]) == 0
    assert "triggers:" in capsys.readouterr().out
    assert main(["label-reports", "--reports", "x.csv"]) == 2
    assert "Missing option --out" in capsys.readouterr().err


def test_bad_yaml_rules_is_one_line_with_position(tmp_path, capsys):
    p = tmp_path / "r.yaml"
    p.write_text("scope: [1,2\n")
    with pytest.raises(SchemaError, match=r"not valid YAML \(line 2, column 1\)") as e:
        load_rules(p)
    assert "\n" not in str(e.value)


def test_clinical_context_sections_are_not_labelled():
    t = pd.DataFrame(
        {
            "study_id": ["a", "b", "c"],
            "indication": ["Rule out pneumonia. History of lung nodules.", "Cough.", "Edema."],
            "comparison": ["Prior pneumothorax.", "", ""],
            "findings": ["Heart size normal. No effusion.", "", ""],
            "impression": ["No acute disease.", "Mild cardiomegaly.", ""],
        }
    )
    res = label_reports(t)
    lab = res.labels.set_index(["study_id", "source", "finding"])["state"]
    for f in ("Pneumonia", "Nodule", "Pneumothorax"):
        assert lab["a", "report", f] == -1  # only in the indication / comparison
    assert lab["a", "report", "Effusion"] == 0 and lab["b", "report", "Cardiomegaly"] == 2
    assert lab["c"].isna().all() and set(res.mentions.section) <= {"findings", "impression"}
    assert ("c", "report", "only clinical context (indication/history/comparison/technique)") in set(
        map(tuple, res.notes.to_numpy())
    )
    text = pd.DataFrame({"study_id": ["a"], "text": ["INDICATION: ? pneumonia\nFINDINGS: Small effusion."]})
    lab = label_reports(text, sections="whole").labels.set_index("finding")["state"]
    assert lab["Pneumonia"] == -1 and lab["Effusion"] == 2
