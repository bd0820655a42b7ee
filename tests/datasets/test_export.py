"""``cxreval data export``: a registered dataset written as cxreval's long table, read back by the label reader."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from cxreval.cli.main import main
from cxreval.datasets import export_dataset, load_dataset
from cxreval.labels import read_labels


def _data_entry(d: Path) -> Path:
    rows = [
        "Image Index,Finding Labels,Follow-up #,Patient ID,Patient Age,Patient Gender,View Position",
        "00000001_000.png,Edema|Mass,0,1,50,M,PA",
        "00000001_001.png,No Finding,1,1,51,M,PA",
        "00000002_000.png,Effusion,0,2,60,F,AP",
    ]
    p = d / "Data_Entry_2017.csv"
    p.write_text("\n".join(rows) + "\n")
    return p


def test_export_writes_the_loaders_table_and_it_reads_back(tmp_path: Path, capsys) -> None:
    de = _data_entry(tmp_path)
    assert main(["data", "export", "chestxray14", "--path", str(de), "-o", str(tmp_path / "out")]) == 0
    out = tmp_path / "out"
    assert sorted(p.name for p in out.iterdir()) == ["labels.csv", "labels.parquet", "run.json", "summary.md"]
    direct = load_dataset("chestxray14", de).table
    back = read_labels(out / "labels.csv").table
    pd.testing.assert_frame_equal(
        back.reset_index(drop=True), direct.reset_index(drop=True), check_dtype=False
    )
    assert set(back.loc[(back["study_id"] == "00000001_000.png") & (back["state"] == 2), "finding"]) == {
        "Edema",
        "Mass",
    }
    assert "rows read" in capsys.readouterr().out
    assert export_dataset("chestxray14", de).tables().keys() == {"labels"}


def test_export_refuses_an_unknown_name_and_a_missing_file_before_reading(tmp_path: Path, capsys) -> None:
    assert main(["data", "export", "chestxray_14", "-o", str(tmp_path / "a")]) == 2
    assert "Did you mean 'chestxray14'" in capsys.readouterr().err
    assert (
        main(
            ["data", "export", "chestxray14", "--path", str(tmp_path / "nope.csv"), "-o", str(tmp_path / "b")]
        )
        == 2
    )
    assert "does not exist" in capsys.readouterr().err
    assert not (tmp_path / "a").exists() and not (tmp_path / "b").exists()


def test_export_openi_mesh_is_the_demo_reference(metadata_dir: Path, tmp_path: Path) -> None:
    """The OpenI MeSH labels the demo validates the report labeller against, with the reports dropped and why."""
    assert (
        main(
            [
                "data",
                "export",
                "openi_mesh",
                "--cache-dir",
                str(metadata_dir.parent),
                "-o",
                str(tmp_path / "o"),
            ]
        )
        == 0
    )
    labels = pd.read_csv(tmp_path / "o" / "labels.csv")
    dropped = pd.read_csv(tmp_path / "o" / "dropped.csv")
    assert labels["study_id"].nunique() + len(dropped) == 3955 and set(labels["source"]) == {"openi_mesh"}
    assert set(dropped["reason"]) == {"only unusable MeSH major codes ['No Indexing']"}
    assert set(labels["state"]) <= {
        "negative",
        "uncertain",
        "positive",
    }  # names: read back without an encoding


def test_exported_labels_feed_label_reports_validation(metadata_dir: Path, tmp_path: Path) -> None:
    """The README's chain: export OpenI's MeSH codes, validate the report labeller against them."""
    cache = str(metadata_dir.parent)
    assert main(["data", "export", "openi_mesh", "--cache-dir", cache, "-o", str(tmp_path / "om")]) == 0
    reports = metadata_dir / "NLMCXR_reports.tgz"
    assert (
        main(
            [
                "label-reports",
                "--reports",
                str(reports),
                "--sections",
                "whole",
                "--validate-against",
                str(tmp_path / "om" / "labels.csv"),
                "--findings",
                "Cardiomegaly,Effusion",
                "--n-resamples",
                "20",
                "-o",
                str(tmp_path / "lr"),
            ]
        )
        == 0
    )
    val = pd.read_csv(tmp_path / "lr" / "labeller_validation.csv").set_index("finding")
    assert {"Cardiomegaly", "Effusion"} <= set(val.index) and (
        val.loc[["Cardiomegaly", "Effusion"], "f1"] > 0.5
    ).all()


def test_export_half_refuses_other_datasets_and_unknown_halves(tmp_path: Path, capsys) -> None:
    assert main(["data", "export", "chexpert_test", "--half", "held-out", "-o", str(tmp_path / "a")]) == 2
    assert "--half splits openi_mesh only" in capsys.readouterr().err
    assert main(["data", "export", "openi_mesh", "--half", "heldout", "-o", str(tmp_path / "b")]) == 2
    assert "--half must be one of ['development', 'held-out', 'all']" in capsys.readouterr().err
    assert not (tmp_path / "a").exists() and not (tmp_path / "b").exists()


def test_export_openi_mesh_halves_partition_the_reports_with_images(
    metadata_dir: Path, tmp_path: Path
) -> None:
    cache = str(metadata_dir.parent)
    ids = {}
    for half in ("development", "held-out", "all"):
        assert (
            main(
                [
                    "data",
                    "export",
                    "openi_mesh",
                    "--half",
                    half,
                    "--cache-dir",
                    cache,
                    "-o",
                    str(tmp_path / half),
                ]
            )
            == 0
        )
        ids[half] = set(pd.read_csv(tmp_path / half / "labels.csv")["study_id"])
    assert not ids["development"] & ids["held-out"] and ids["development"] | ids["held-out"] == ids["all"]
    assert abs(len(ids["development"]) - len(ids["held-out"])) <= 1 and len(ids["all"]) == 3759


def test_export_of_a_dataset_outside_the_metadata_asks_for_path(tmp_path: Path, capsys) -> None:
    assert main(["data", "export", "chexpert_test", "-o", str(tmp_path / "o")]) == 2
    assert "pass --path (your copy: a folder)" in capsys.readouterr().err
    assert not (tmp_path / "o").exists()
