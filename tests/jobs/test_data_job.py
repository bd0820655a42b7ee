"""``cxreval data audit|split|export -o A`` writes the same files as its job's ``save(B)``
(:func:`cxreval.jobs.audit_dataset_files`, ``split_dataset_files``, ``export_dataset_files``, and the analyses they
run, ``audit_dataset``, ``split_dataset``, ``export_dataset``), byte for byte (``run.json`` aside); ``data fetch``
and ``data list`` print what their jobs return; the jobs refuse a bad name, option or path with the command's
message, before any reading."""

from __future__ import annotations

from pathlib import Path

import pytest

from _same_files import assert_same_files
from cxreval.cli.main import main
from cxreval.datasets import export_dataset, split_dataset
from cxreval.datasets.audit import audit_dataset
from cxreval.exceptions import InvalidParameterError, SchemaError
from cxreval.jobs import (
    audit_dataset_files,
    export_dataset_files,
    fetch_dataset_metadata,
    list_registered_datasets,
    split_dataset_files,
)

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
    assert_same_files(tmp_path / "cli", _saved(res, tmp_path / "lib"))
    job = audit_dataset_files("chestxray14", data_entry=entry, bbox_list=boxes)
    assert_same_files(tmp_path / "cli", _saved(job, tmp_path / "job"))


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
    res = audit_dataset_files("chestxray14", data_entry=entry, bbox_list=boxes, split_dir=lists)
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
    job = split_dataset_files("chestxray14", path=entry, fractions="0.5,0.5", names="a,b", by=by, rng=3)
    assert_same_files(tmp_path / "cli", _saved(job, tmp_path / "job_files"))
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
    res = split_dataset_files("chestxray14", path=entry, stratify="Cardiomegaly", rng=1)
    assert res.split.stratify == ("Cardiomegaly",)
    assert_same_files(tmp_path / "cli", _saved(res, tmp_path / "job"))


def test_export_command_equals_the_job(files, tmp_path, capsys):
    entry, _ = files
    assert main(["data", "export", "chestxray14", "--path", str(entry), "-o", str(tmp_path / "cli")]) == 0
    res = export_dataset("chestxray14", entry)
    assert capsys.readouterr().out == res.summary()
    assert_same_files(tmp_path / "cli", _saved(res, tmp_path / "lib"))
    job = export_dataset_files("chestxray14", path=entry)
    assert job.sources == (entry,) and dict(job.options) == {}
    assert_same_files(tmp_path / "cli", _saved(job, tmp_path / "job"))


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


def test_list_and_fetch_jobs(tmp_path, capsys):
    specs = list_registered_datasets("vindr*")
    assert [s.name for s in specs] == ["vindr", "vindr_boxes"]
    assert main(["data", "list", "vindr*", "--json"]) == 0
    assert '"name": "vindr_boxes"' in capsys.readouterr().out
    with pytest.raises(SchemaError, match=r"^from_wheel= .*nope.whl does not exist\.$"):
        fetch_dataset_metadata(cache_dir=tmp_path / "c", from_wheel=tmp_path / "nope.whl")
    (tmp_path / "file").write_text("x")
    with pytest.raises(SchemaError, match=r"^--cache-dir .* is a file; a folder is expected\.$"):
        fetch_dataset_metadata(cache_dir=tmp_path / "file")


def test_the_file_jobs_refuse_with_the_command_messages(files, tmp_path):
    entry, boxes = files
    with pytest.raises(InvalidParameterError, match="cxreval data audit: unknown dataset 'chestxray1'"):
        audit_dataset_files("chestxray1")
    with pytest.raises(InvalidParameterError, match="data_entry= and bbox_list= are ChestX-ray14 files"):
        audit_dataset_files("mimic_cxr", data_entry=entry)
    with pytest.raises(InvalidParameterError, match="path= is the mimic_cxr folder"):
        audit_dataset_files("chestxray14", path=tmp_path)
    with pytest.raises(SchemaError, match=r"--split-dir .*nope does not exist\."):
        audit_dataset_files("chestxray14", data_entry=entry, split_dir=tmp_path / "nope")
    with pytest.raises(InvalidParameterError, match="fractions= must be comma-separated numbers"):
        split_dataset_files("chestxray14", path=entry, fractions="a,b")
    with pytest.raises(InvalidParameterError, match="by= must be 'patient' or 'image'. Got 'x' instead."):
        split_dataset_files("chestxray14", path=entry, by="x")
    with pytest.raises(InvalidParameterError, match="stratify= needs by='patient'"):
        split_dataset_files("chestxray14", path=entry, by="image", stratify="Edema")
    with pytest.raises(InvalidParameterError, match="--views applies to mimic_cxr, chexpert, chexpert_train"):
        export_dataset_files("chestxray14", path=entry, views="PA")
    with pytest.raises(InvalidParameterError, match="half= splits openi_mesh only"):
        export_dataset_files("chestxray14", path=entry, half="all")
    with pytest.raises(SchemaError, match=r"path= .*nope.csv' does not exist\."):
        export_dataset_files("chestxray14", path=tmp_path / "nope.csv")


def test_export_maps_logit_models_through_the_sigmoid_and_says_so(tmp_path, capsys):
    """``data export nih_predictions --logits sigmoid`` equals the job; only the logit model's scores change, to
    1/(1 + exp(-x)); summary.md names it and how, run.json records the option; other datasets and values are
    refused before reading."""
    import json

    import numpy as np
    import pandas as pd

    folder = tmp_path / "preds"
    folder.mkdir()
    cols = ["Image Index", "prob_Mass", "prob_Nodule"]
    pd.DataFrame([["x1.png", 0.1, 0.2], ["x2.png", 0.4, 0.5]], columns=cols).to_csv(
        folder / "a.csv", index=False
    )
    pd.DataFrame([["x1.png", -1.0, 2.0], ["x2.png", 3.0, 0.0]], columns=cols).to_csv(
        folder / "b_logits.csv", index=False
    )
    out = tmp_path / "cli"
    assert (
        main(
            [
                "data",
                "export",
                "nih_predictions",
                "--path",
                str(folder),
                "--logits",
                "sigmoid",
                "-o",
                str(out),
            ]
        )
        == 0
    )
    job = export_dataset_files("nih_predictions", path=folder, logits="sigmoid")
    assert dict(job.options) == {"logits": "sigmoid"}
    assert_same_files(out, _saved(job, tmp_path / "job"))
    got = pd.read_csv(out / "predictions.csv")
    kept = export_dataset_files("nih_predictions", path=folder).table
    assert got[got.model == "a"]["score"].tolist() == kept[kept.model == "a"]["score"].tolist()
    logit = kept[kept.model == "b_logits"]["score"].to_numpy()
    assert np.allclose(got[got.model == "b_logits"]["score"], 1 / (1 + np.exp(-logit)), rtol=0, atol=1e-15)
    summary = (out / "summary.md").read_text()
    assert (
        "b_logits: logits mapped through the sigmoid 1/(1 + exp(-x))" in summary
        and "a: logits" not in summary
    )
    assert json.loads((out / "run.json").read_text())["logits"] == "sigmoid"
    with pytest.raises(InvalidParameterError, match="--logits applies to nih_predictions only"):
        export_dataset_files("chestxray14", logits="sigmoid")
    with pytest.raises(InvalidParameterError, match="Did you mean 'sigmoid'"):
        export_dataset_files("nih_predictions", path=folder, logits="sigmod")
    capsys.readouterr()
