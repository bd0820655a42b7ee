"""The report labeller's results own their files: ``cxreval label-reports`` writes what ``save`` writes, and
``--validate-against`` writes what :func:`cxreval.labeller.compute_precision_recall` gives."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from cxreval.cli.main import main
from cxreval.exceptions import InvalidParameterError, SchemaError
from cxreval.labeller import (
    LabellerValidationResult,
    ReportLabelsResult,
    compute_precision_recall,
    label_reports,
    prf_markdown,
)
from cxreval.labeller._validation import PRF_COLUMNS
from cxreval.labels import write_labels

from .test_cli_chain import _reports
from .test_validation import _tables


def test_labeller_validation_result_owns_its_file(tmp_path):
    t, *_ = _tables()
    res = compute_precision_recall(t, reference="gold", predicted="lab", n_resamples=30, rng=3)
    assert isinstance(res, LabellerValidationResult) and res.reference == "gold" and res.predicted == "lab"
    assert res.findings == ("Atelectasis", "Mass", "Effusion") and res.n_resamples == 30
    pd.testing.assert_frame_equal(
        res.table, compute_precision_recall(t, reference="gold", predicted="lab", n_resamples=30, rng=3).table
    )
    paths = res.save(tmp_path)
    assert set(paths) == set(res.FILES) and {p.name for p in tmp_path.iterdir()} == {
        "labeller_validation.csv",
        "labeller_validation.parquet",
    }
    assert tuple(pd.read_csv(paths["labeller_validation"]).columns) == res.COLUMNS == PRF_COLUMNS
    assert res.summary() == prf_markdown(res.table)
    assert json.dumps(res.to_dict(), default=str)


def test_reference_labels_and_the_inferred_reference_source():
    t, *_ = _tables()
    gold, lab = t[t["source"] == "gold"], t[t["source"] == "lab"]
    a = compute_precision_recall(t, reference="gold", predicted="lab", n_resamples=20, rng=0)
    b = compute_precision_recall(lab, reference_labels=gold, predicted="lab", n_resamples=20, rng=0)
    assert b.reference == "gold"
    pd.testing.assert_frame_equal(a.table, b.table)
    with pytest.raises(SchemaError, match="2 sources"):
        compute_precision_recall(lab, reference_labels=t, predicted="lab")
    with pytest.raises(InvalidParameterError, match="reference"):
        compute_precision_recall(t, predicted="lab")
    # a vocabulary name is expanded: chestxray8 names findings these sources do not label
    with pytest.raises(SchemaError, match="does not label .*Cardiomegaly"):
        compute_precision_recall(t, reference="gold", predicted="lab", findings="chestxray8", n_resamples=5)


def test_report_labels_result_owns_its_files(tmp_path):
    rp, _ = _reports(tmp_path, n=12)
    res = label_reports(pd.read_csv(rp), sections="findings,whole")
    (tmp_path / "out").mkdir()
    paths = res.save(tmp_path / "out")
    assert set(paths) == {*ReportLabelsResult.FILES, "summary_md"}  # summary.md: what the command writes too
    assert {p.name for p in (tmp_path / "out").iterdir()} == {
        *ReportLabelsResult.FILES.values(),
        "labels.parquet",
        "summary.md",
    }
    lab = pd.read_csv(paths["labels"])
    assert tuple(lab.columns) == ReportLabelsResult.COLUMNS
    assert set(lab["state"].dropna()) <= {"not_mentioned", "negative", "uncertain", "positive"}
    pd.testing.assert_frame_equal(
        pd.read_parquet(tmp_path / "out" / "labels.parquet"), res.tables()["labels"], check_dtype=False
    )
    summary = json.loads(paths["summary"].read_text())
    assert summary == json.loads(json.dumps(res.to_dict(), default=str)) and summary["n_reports"] == 12
    md = res.summary()
    assert md.startswith("# Report-derived labels") and "| source | finding |" in md and "- reports: 12" in md


def test_label_reports_validate_against(tmp_path, capsys):
    rp, _ = _reports(tmp_path, n=40)
    table = pd.read_csv(rp)
    ref = label_reports(table, sections="impression").labels.assign(source="human")  # a stand-in reference
    ref_path = write_labels(ref, tmp_path / "ref.csv")
    out = tmp_path / "out"
    assert (
        main(
            [
                "label-reports",
                "--reports",
                str(rp),
                "--sections",
                "findings,whole",
                "--validate-against",
                str(ref_path),
                "--findings",
                "Effusion,Atelectasis",
                "--n-resamples",
                "25",
                "--seed",
                "4",
                "-o",
                str(out),
                "--json",
            ]
        )
        == 0
    )
    printed = json.loads(capsys.readouterr().out)
    assert printed["validation"]["reference"] == "human" and printed["validation"]["predicted"] == "report"
    lab = label_reports(table, sections="findings,whole").labels
    want = compute_precision_recall(
        lab,
        reference_labels=ref,
        predicted="report",
        findings=["Effusion", "Atelectasis"],
        n_resamples=25,
        rng=4,
    ).table
    got = pd.read_parquet(
        out / LabellerValidationResult.FILES["labeller_validation"].replace(".csv", ".parquet")
    )
    pd.testing.assert_frame_equal(got, want)
    assert (out / "summary.md").read_text().count("## Against human") == 1
    assert np.isfinite(got["f1"]).all()


@pytest.mark.parametrize(
    "args, message",
    [
        (
            ["--sections", "findings,impression", "--validate-against", "REF"],
            "--validate-against scores one source",
        ),
        (["--sections", "whole", "--validate-against", "REF"], "2 sources"),
        (["--sections", "whole", "--findings", "Mass"], "give --validate-against LABELS too"),
    ],
)
def test_label_reports_validate_against_refuses_before_labelling(
    tmp_path, capsys, monkeypatch, args, message
):
    rp, _ = _reports(tmp_path, n=6)
    t = label_reports(pd.read_csv(rp), sections="findings,impression").labels
    ref_path = write_labels(t, tmp_path / "two_sources.csv")

    def not_reached(*a, **k):
        raise AssertionError("labelled before refusing the options")

    monkeypatch.setattr(
        "cxreval.labeller._labeller.check_report_table", not_reached
    )  # the first labelling step
    out = tmp_path / "out"
    args = [str(ref_path) if a == "REF" else a for a in args]
    assert main(["label-reports", "--reports", str(rp), *args, "-o", str(out)]) == 2
    assert message in capsys.readouterr().err and not out.exists()
