"""MIMIC-CXR's reports (mimic-cxr-reports.zip and its files/ tree) as a report table: ids from the path,
MIMIC's section headers found by the labeller, `cxreval label-reports` on the zip."""

from __future__ import annotations

import zipfile

import pandas as pd
import pytest

from cxreval.cli.main import main
from cxreval.datasets.mimic_reports import read_mimic_reports
from cxreval.datasets.report_files import read_report_file
from cxreval.exceptions import DataUnavailableError, SchemaError
from cxreval.labeller._sections import split_sections

from .._factories import MIMIC_REPORT, write_mimic_folder


@pytest.fixture()
def mimic(tmp_path):
    return write_mimic_folder(tmp_path / "mimic-cxr")


def test_zip_ids_from_the_path(mimic):
    res = read_mimic_reports(mimic / "mimic-cxr-reports.zip")
    t = res.table
    assert list(t.columns) == ["study_id", "patient_id", "text"]
    assert t["study_id"].tolist() == ["50414267", "53189527", "55555555", "56666666", "57375967"]
    assert t.set_index("study_id").loc["57375967", "patient_id"] == "10000764"
    assert t.set_index("study_id").loc["50414267", "text"] == MIMIC_REPORT
    # the folder holding the zip, and the unzipped tree, read the same
    assert read_mimic_reports(mimic).table.equals(t)
    tree = mimic / "unzipped"
    with zipfile.ZipFile(mimic / "mimic-cxr-reports.zip") as zf:
        zf.extractall(tree)
    assert read_mimic_reports(tree).table.equals(t)
    assert read_mimic_reports(tree / "files").table.equals(t)
    assert read_report_file(tree).table.equals(t)


def test_mimic_headers_split_into_sections():
    found = [(s.name, s.header, MIMIC_REPORT[s.start : s.end].strip()) for s in split_sections(MIMIC_REPORT)]
    assert [(n, h) for n, h, _ in found] == [
        ("preamble", ""),
        ("technique", "EXAMINATION"),
        ("indication", "INDICATION"),
        ("technique", "TECHNIQUE"),
        ("comparison", "COMPARISON"),
        ("findings", "FINDINGS"),
        ("impression", "IMPRESSION"),
    ]
    secs = {n: t for n, _, t in found}
    assert secs["findings"].startswith("There is a small left pleural effusion.")
    assert secs["impression"] == "Small left pleural effusion.  No pneumonia."
    assert secs["indication"].startswith("___M with cough")
    assert found[1][2] == "CHEST (PA AND LAT)"
    assert secs["comparison"] == "None."
    assert "FINAL REPORT" in secs["preamble"]


def test_other_members_are_dropped_with_their_reason_and_bad_inputs_named(mimic, tmp_path):
    z = tmp_path / "r.zip"
    with zipfile.ZipFile(z, "w") as zf:
        zf.writestr("files/p10/p10000032/s50414267.txt", "FINDINGS: Normal.")
        zf.writestr("files/p10/p10000032/notes.txt", "x")
        zf.writestr("files/p11/p10000032/s50000000.txt", "group folder does not match the subject")
    res = read_mimic_reports(z)
    assert res.table["study_id"].tolist() == ["50414267"]
    assert res.report.dropped["value"].tolist() == [
        "files/p10/p10000032/notes.txt",
        "files/p11/p10000032/s50000000.txt",
    ]
    (tmp_path / "bad.zip").write_text("not a zip")
    with pytest.raises(SchemaError, match="bad.zip.*not a zip archive"):
        read_mimic_reports(tmp_path / "bad.zip")
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(DataUnavailableError, match="mimic-cxr-reports.zip"):
        read_mimic_reports(empty)
    with pytest.raises(DataUnavailableError, match="does not exist"):
        read_mimic_reports(tmp_path / "absent.zip")


def test_label_reports_on_the_zip(mimic, tmp_path):
    out = tmp_path / "labelled"
    assert (
        main(
            [
                "label-reports",
                "--reports",
                str(mimic / "mimic-cxr-reports.zip"),
                "--vocabulary",
                "chexpert",
                "-o",
                str(out),
            ]
        )
        == 0
    )
    lab = pd.read_csv(out / "labels.csv", dtype=str)
    s = lab[lab.study_id == "50414267"].set_index(["source", "finding"])["state"]
    assert s[("report_findings", "Effusion")] == "positive"
    assert s[("report_impression", "Effusion")] == "positive"
    assert s[("report_impression", "Pneumonia")] == "negative"
    # INDICATION ("evaluate for pneumonia") is not labelled: the findings section does not mention pneumonia
    assert s[("report_findings", "Pneumonia")] == "not_mentioned"


def test_exported_reports_are_a_label_reports_input(mimic, tmp_path):
    out = tmp_path / "reports"
    assert main(["data", "export", "mimic_cxr_reports", "--path", str(mimic), "-o", str(out)]) == 0
    t = pd.read_csv(out / "reports.csv", dtype=str, keep_default_na=False)
    assert list(t.columns) == ["study_id", "patient_id", "text"] and len(t) == 5
    assert (
        main(
            [
                "label-reports",
                "--reports",
                str(out / "reports.csv"),
                "--sections",
                "impression",
                "-o",
                str(tmp_path / "lab"),
            ]
        )
        == 0
    )
