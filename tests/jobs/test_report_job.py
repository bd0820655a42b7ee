"""``cxreval report DIR -o A/report.html`` writes the same page as its job,
``write_report_page([DIR], B/report.html)`` (and the renderer it calls, ``write_report``), byte for byte; the job
refuses a bad ``out`` or ``--pdf`` target before any work."""

from __future__ import annotations

from pathlib import Path

import pytest

from _same_files import assert_same_files
from cxreval.cli.main import main
from cxreval.datasets.audit import audit_dataset
from cxreval.exceptions import InvalidParameterError
from cxreval.jobs import write_report_page
from cxreval.report import write_report

ENTRY = (
    "Image Index,Finding Labels,Follow-up #,Patient ID,Patient Age,Patient Gender,View Position\n"
    "00000001_000.png,Cardiomegaly,0,1,57,M,PA\n00000002_000.png,No Finding,0,2,81,M,AP\n"
    "00000003_000.png,Hernia|Edema,0,3,77,F,PA\n"
)
BOXES = "Image Index,Finding Label,Bbox [x,y,w,h],,,\n00000001_000.png,Cardiomegaly,10,20,30,40\n"


def test_report_command_equals_the_job(tmp_path: Path, capsys) -> None:
    entry, boxes, results = tmp_path / "Data_Entry.csv", tmp_path / "BBox.csv", tmp_path / "audit"
    entry.write_text(ENTRY)
    boxes.write_text(BOXES)
    assert (
        main(
            [
                "data",
                "audit",
                "chestxray14",
                "--data-entry",
                str(entry),
                "--bbox-list",
                str(boxes),
                "-o",
                str(results),
            ]
        )
        == 0
    )
    (tmp_path / "cli").mkdir()
    (tmp_path / "job").mkdir()
    capsys.readouterr()
    assert (
        main(["report", str(results), "-o", str(tmp_path / "cli" / "report.html"), "--title", "Audit"]) == 0
    )
    assert "1 section(s)" in capsys.readouterr().out
    res = write_report_page([results], tmp_path / "job" / "report.html", title="Audit")
    assert res.sections and res.path.stat().st_size > 10_000 and res.pdf is None
    assert_same_files(tmp_path / "cli", tmp_path / "job")
    (tmp_path / "lib").mkdir()
    write_report([results], tmp_path / "lib" / "report.html", title="Audit")
    assert_same_files(tmp_path / "cli", tmp_path / "lib")
    with pytest.raises(InvalidParameterError, match="would replace the HTML page it is printed from"):
        write_report_page([results], tmp_path / "page.pdf", pdf=True)
    with pytest.raises(Exception, match="overwrite"):  # an existing page without overwrite
        write_report_page([results], tmp_path / "job" / "report.html")
    # and the page shows the audit the job computed
    assert f"{audit_dataset('chestxray14', entry, bbox_path=boxes).n_images}" in res.path.read_text()
