"""``cxreval label-reports`` writes what its job writes: the folder of the command equals
``label_reports_file(...).save()``, byte for byte (``run.json`` aside), and so does ``label_reports`` of the file
read; ``label_reports`` takes a ``ReadResult`` (a report file as read) and an executor spec string, and a list of
reference label tables."""

from __future__ import annotations

import pandas as pd
import pytest

from _same_files import assert_same_files
from cxreval.cli.main import main
from cxreval.datasets.report_files import read_report_file
from cxreval.jobs import label_reports_file, label_rules_text
from cxreval.labeller import label_reports
from cxreval.labeller._rules import packaged_rules_text
from cxreval.labels import write_labels
from cxreval.labels._files import read_label_tables

PHRASES = (
    "No pleural effusion.",
    "Small left pleural effusion.",
    "Possible atelectasis at the bases.",
    "Cardiomegaly.",
    "Lungs are clear.",
    "No pneumothorax.",
    "Mild pulmonary edema.",
)


def _reports(tmp_path, n=30):
    rows = [
        {
            "study_id": f"s{i}",
            "patient_id": f"p{i // 2}",
            "findings": " ".join(PHRASES[(i + k) % len(PHRASES)] for k in range(2)),
            "impression": PHRASES[(3 * i) % len(PHRASES)] if i % 5 else "",
        }
        for i in range(n)
    ]
    path = tmp_path / "reports.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    return path


def _reference(tmp_path, reports):
    ref = label_reports(pd.read_csv(reports).iloc[::2], sections="impression").labels.assign(source="human")
    return write_labels(ref, tmp_path / "ref.csv")


@pytest.mark.parametrize("validate", [False, True], ids=["labels", "validate-against"])
def test_command_folder_is_the_job_save(tmp_path, validate):
    reports = _reports(tmp_path)
    options, job = ["--sections", "findings,impression"], {"sections": "findings,impression"}
    if validate:
        ref = _reference(tmp_path, reports)
        options = [
            "--sections",
            "whole",
            "--validate-against",
            str(ref),
            "--findings",
            "Effusion,Cardiomegaly",
            "--n-resamples",
            "20",
            "--seed",
            "4",
            "--uncertain",
            "positive",
        ]
        job = {
            "sections": "whole",
            "reference_labels": read_label_tables([ref])[0],
            "findings": ["Effusion", "Cardiomegaly"],
            "n_resamples": 20,
            "rng": 4,
            "uncertain": "positive",
        }
    assert (
        main(
            [
                "label-reports",
                "--reports",
                str(reports),
                *options,
                "--chunk-size",
                "7",
                "-o",
                str(tmp_path / "cli"),
            ]
        )
        == 0
    )
    res = label_reports(read_report_file(reports), where=f"file {str(reports)!r}", chunk_size=7, **job)
    (tmp_path / "job").mkdir()
    res.save(tmp_path / "job")
    assert_same_files(tmp_path / "cli", tmp_path / "job")
    assert validate == (tmp_path / "job" / "labeller_validation.csv").is_file()
    files = dict(job)
    if validate:
        files["reference_labels"] = ref
    out = tmp_path / "files"
    res = label_reports_file(reports, out, chunk_size=7, **files)
    out.mkdir()
    res.save(out)
    assert_same_files(tmp_path / "cli", out)


def test_print_rules_prints_the_jobs_text(capsys):
    assert main(["label-reports", "--print-rules", "--vocabulary", "chexpert"]) == 0
    assert capsys.readouterr().out == label_rules_text("chexpert") + "\n"
    assert label_rules_text("chexpert") == packaged_rules_text("chexpert")


def test_job_takes_a_read_result_an_executor_spec_and_a_list_of_tables(tmp_path):
    reports = _reports(tmp_path)
    read = read_report_file(reports)
    ref = read_label_tables([_reference(tmp_path, reports)])[0]
    kw = {"sections": "whole", "reference_labels": ref, "n_resamples": 10, "rng": 0}
    whole = label_reports(read.table, read=read.report, **kw)
    halves = [ref.iloc[: len(ref) // 2], ref.iloc[len(ref) // 2 :]]
    res = label_reports(read, executor="process:2", chunk_size=8, **{**kw, "reference_labels": halves})
    assert res.read == read.report
    for name, df in whole.tables().items():
        pd.testing.assert_frame_equal(res.tables()[name], df, obj=name)
    pd.testing.assert_frame_equal(res.validation.table, whole.validation.table)


def test_files_job_checks_everything_before_reading(tmp_path, capsys):
    from cxreval.exceptions import InvalidParameterError, SchemaError
    from cxreval.outputs._errors import OutputError

    reports = _reports(tmp_path)
    with pytest.raises(InvalidParameterError, match="Missing option out="):
        label_reports_file(tmp_path / "nope.csv", None)
    with pytest.raises(SchemaError, match="reference_labels=.* does not exist"):
        label_reports_file(reports, tmp_path / "o", reference_labels=tmp_path / "nope.csv")
    (tmp_path / "taken").write_text("x")
    with pytest.raises(OutputError, match="is a file"):
        label_reports_file(reports, tmp_path / "taken")
    assert main(["label-reports", "--reports", str(reports), "--vocabulary", "bogus", "-o", "x"]) == 2
    assert "--vocabulary must be one of ['chestxray14', 'chexpert']. Got 'bogus'." in capsys.readouterr().err
