"""`cxreval data list`, `data split` and `data audit` through main(argv): the registry listing, patient-level splits
written as list files and audited for leakage, split names kept inside --out, and only the run's own lists
audited."""

from __future__ import annotations

import json

import pytest

from cxreval.cli.main import main

from .conftest import command_args, one_error_line


def test_data_list(capsys):
    assert main(["data", "list"]) == 0
    out = capsys.readouterr().out.splitlines()
    names = [ln.split()[0] for ln in out]
    from cxreval.datasets import list_datasets

    assert names == list_datasets()
    assert main(["data", "list", "vindr*", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert [x["name"] for x in d] == ["vindr", "vindr_boxes"]
    assert d[0]["loader"] == "cxreval.datasets.vindr.read_vindr" and d[0]["available"] is True


def _data_entry(tmp_path, n_patients=40, per_patient=3):
    rows = ["Image Index,Finding Labels,Follow-up #,Patient ID,Patient Age,Patient Gender,View Position"]
    for p in range(1, n_patients + 1):
        for k in range(per_patient):
            label = "Edema" if p % 4 == 0 else "No Finding"
            rows.append(f"{p:08d}_{k:03d}.png,{label},{k},{p},50,M,PA")
    path = tmp_path / "de.csv"
    path.write_text("\n".join(rows) + "\n")
    return path


def test_data_split_then_audit(tmp_path, capsys):
    de = _data_entry(tmp_path)
    out = tmp_path / "split"
    assert (
        main(
            [
                "data",
                "split",
                "chestxray14",
                "--data-entry",
                str(de),
                "--out",
                str(out),
                "--fractions",
                "0.5,0.25,0.25",
                "--stratify",
                "Edema",
                "--seed",
                "3",
                "--json",
            ]
        )
        == 0
    )
    d = json.loads(capsys.readouterr().out)
    assert [s["n_patients"] for s in d["split"]["sizes"]] == [20, 10, 10]
    assert d["split"]["stratify"] == ["Edema"] and d["leakage"]["n_shared_patients"] == 0
    assert sorted(p.name for p in out.glob("*list.txt")) == [
        "test_list.txt",
        "train_list.txt",
        "val_list.txt",
    ]
    assert (out / "assignments.parquet").exists() and (out / "summary.md").exists()
    bb = tmp_path / "bb.csv"
    bb.write_text("Image Index,Finding Label,Bbox [x,y,w,h],,,\n00000001_000.png,Atelectasis,1,1,5,5\n")
    assert (
        main(
            [
                "data",
                "audit",
                "chestxray14",
                "--data-entry",
                str(de),
                "--bbox-list",
                str(bb),
                "--split-dir",
                str(out),
                "--json",
            ]
        )
        == 0
    )
    a = json.loads(capsys.readouterr().out)
    assert a["split"]["n_shared_patients"] == 0 and a["n_images"] == 120 and a["boxes"]["n_boxes"] == 1
    assert sorted(s["n_studies"] for s in a["split"]["sizes"]) == [30, 30, 60]


def test_data_split_by_image_leaks(tmp_path, capsys):
    de = _data_entry(tmp_path)
    out = tmp_path / "img"
    assert (
        main(
            [
                "data",
                "split",
                "chestxray14",
                "--data-entry",
                str(de),
                "--out",
                str(out),
                "--by",
                "image",
                "--fractions",
                "0.8,0.2",
                "--names",
                "train,test",
                "--json",
            ]
        )
        == 0
    )
    d = json.loads(capsys.readouterr().out)
    assert d["split"]["unit"] == "study" and d["leakage"]["leaks"] is True
    assert d["leakage"]["n_shared_patients"] > 0


@pytest.mark.parametrize(
    "args, msg",
    [
        (["--by", "family"], "--by must be 'patient' or 'image'. Got 'family' instead."),
        (["--fractions", "a,b"], "--fractions must be comma-separated numbers. Got 'a,b' instead."),
        (
            ["--fractions", "0.5,0.6"],
            "--fractions must be a sequence of floats",
        ),  # the flag, not patient_split
        (["--by", "image", "--stratify", "Edema"], "--stratify needs --by patient."),
    ],
)
def test_data_split_errors(tmp_path, capsys, args, msg):
    de = _data_entry(tmp_path)
    assert (
        main(["data", "split", "chestxray14", "--data-entry", str(de), "--out", str(tmp_path / "o"), *args])
        == 2
    )
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and msg in err[0]


@pytest.mark.parametrize("names", ["../evil,test", "a/b,test", "/abs,test", "..,test"])
def test_data_split_names_cannot_escape_out(tmp_path, capsys, names):
    args = command_args("data-split", tmp_path / "in")
    args[args.index("--names") + 1] = names
    before = sorted(str(p) for p in tmp_path.rglob("*"))
    assert main([*args, "-o", str(tmp_path / "out" / "split")]) == 2
    assert "is not a plain file-name part" in one_error_line(capsys)
    assert sorted(str(p) for p in tmp_path.rglob("*")) == before


def test_stale_split_lists_are_not_audited(tmp_path, capsys):
    audit_args = command_args("data-audit", tmp_path / "in")
    de = audit_args[audit_args.index("--data-entry") + 1]
    out = tmp_path / "split"
    assert (
        main(
            [
                "data",
                "split",
                "chestxray14",
                "--data-entry",
                de,
                "--fractions",
                "0.5,0.5",
                "--names",
                "train,test",
                "-o",
                str(out),
            ]
        )
        == 0
    )
    capsys.readouterr()
    # a stale list beside the run's files (e.g. copied in by hand) would make every patient of it shared
    (out / "old_list.txt").write_text("".join(f"{p:08d}_000.png\n" for p in range(1, 31)))
    assert main([*audit_args, "--split-dir", str(out), "--json"]) == 0
    audit = json.loads(capsys.readouterr().out)["split"]
    assert audit["n_shared_patients"] == 0
    assert sorted(s["split"] for s in audit["sizes"]) == ["test", "train"]
