"""``cxreval data audit|split|export -o A`` writes the same files as its job's ``save(B)`` (``audit_dataset``,
``split_dataset``, ``export_dataset``), byte for byte (``run.json`` aside)."""

from __future__ import annotations

from pathlib import Path

import pytest

from _same_files import assert_same_files
from cxreval.cli.main import main
from cxreval.datasets import export_dataset, split_dataset
from cxreval.datasets.audit import audit_dataset
from cxreval.exceptions import InvalidParameterError

ENTRY = (
    "Image Index,Finding Labels,Follow-up #,Patient ID,Patient Age,Patient Gender,View Position\n"
    "00000001_000.png,Cardiomegaly,0,1,57,M,PA\n00000001_001.png,Cardiomegaly|Emphysema,1,1,58,M,PA\n"
    "00000002_000.png,No Finding,0,2,81,M,AP\n00000003_000.png,Hernia,0,3,77,F,PA\n"
    "00000004_000.png,Edema|Effusion,0,4,40,F,AP\n00000005_000.png,No Finding,0,5,33,M,PA\n"
)
BOXES = (
    "Image Index,Finding Label,Bbox [x,y,w,h],,,\n00000001_000.png,Cardiomegaly,10,20,30,40\n"
    "00000004_000.png,Effusion,5,5,50,60\n"
)


@pytest.fixture
def files(tmp_path: Path) -> tuple[Path, Path]:
    entry, boxes = tmp_path / "Data_Entry.csv", tmp_path / "BBox.csv"
    entry.write_text(ENTRY)
    boxes.write_text(BOXES)
    return entry, boxes


def _saved(res, folder: Path) -> Path:
    folder.mkdir()
    res.save(folder)
    return folder


def test_audit_command_equals_the_job(files, tmp_path, capsys):
    entry, boxes = files
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
                str(tmp_path / "cli"),
            ]
        )
        == 0
    )
    res = audit_dataset("chestxray14", entry, bbox_path=boxes)
    assert capsys.readouterr().out == res.summary()
    assert_same_files(tmp_path / "cli", _saved(res, tmp_path / "job"))


def test_audit_of_a_split_command_equals_the_job(files, tmp_path):
    entry, boxes = files
    lists = tmp_path / "lists"
    lists.mkdir()
    (lists / "train_list.txt").write_text("00000001_000.png\n00000002_000.png\n00000004_000.png\n")
    (lists / "test_list.txt").write_text("00000001_001.png\n00000003_000.png\n00000005_000.png\n")
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
                "--split-dir",
                str(lists),
                "-o",
                str(tmp_path / "cli"),
            ]
        )
        == 0
    )
    res = audit_dataset("chestxray14", entry, bbox_path=boxes, split_dir=lists)
    assert res.split is not None and res.split.n_shared_patients == 1  # patient 1 on both sides
    assert_same_files(tmp_path / "cli", _saved(res, tmp_path / "job"))


@pytest.mark.parametrize("by", ["patient", "image"])
def test_split_command_equals_the_job(files, tmp_path, capsys, by):
    entry, _ = files
    assert (
        main(
            [
                "data",
                "split",
                "chestxray14",
                "--data-entry",
                str(entry),
                "--fractions",
                "0.5,0.5",
                "--names",
                "a,b",
                "--by",
                by,
                "--seed",
                "3",
                "-o",
                str(tmp_path / "cli"),
            ]
        )
        == 0
    )
    res = split_dataset("chestxray14", entry, fractions=(0.5, 0.5), names=("a", "b"), by=by, rng=3)
    assert capsys.readouterr().out == res.summary() + "\n"
    assert res.seed == 3 and sorted(p.name for p in (tmp_path / "cli").glob("*_list.txt")) == [
        "a_list.txt",
        "b_list.txt",
    ]
    assert_same_files(tmp_path / "cli", _saved(res, tmp_path / "job"))


def test_stratified_split_command_equals_the_job(files, tmp_path):
    entry, _ = files
    assert (
        main(
            [
                "data",
                "split",
                "chestxray14",
                "--data-entry",
                str(entry),
                "--stratify",
                "Cardiomegaly",
                "--seed",
                "1",
                "-o",
                str(tmp_path / "cli"),
            ]
        )
        == 0
    )
    res = split_dataset("chestxray14", entry, stratify=["Cardiomegaly"], rng=1)
    assert res.split.stratify == ("Cardiomegaly",)
    assert_same_files(tmp_path / "cli", _saved(res, tmp_path / "job"))


def test_export_command_equals_the_job(files, tmp_path, capsys):
    entry, _ = files
    assert main(["data", "export", "chestxray14", "--path", str(entry), "-o", str(tmp_path / "cli")]) == 0
    res = export_dataset("chestxray14", entry)
    assert capsys.readouterr().out == res.summary()
    assert_same_files(tmp_path / "cli", _saved(res, tmp_path / "job"))


def test_the_jobs_refuse_a_bad_name_or_choice(files):
    entry, _ = files
    with pytest.raises(InvalidParameterError, match="'name' parameter of audit_dataset"):
        audit_dataset("padchest", entry)
    with pytest.raises(
        InvalidParameterError, match="'split_dir' parameter of audit_dataset is required for mimic"
    ):
        audit_dataset("mimic_cxr")
    with pytest.raises(InvalidParameterError, match="'by' parameter of split_dataset"):
        split_dataset("chestxray14", entry, by="family")
    with pytest.raises(InvalidParameterError, match="stratify needs by='patient'"):
        split_dataset("chestxray14", entry, by="image", stratify=["Edema"])
