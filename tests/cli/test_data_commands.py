"""Tests of the command line entry point: --version, --help on every command, CxrevalError -> exit 2."""

from __future__ import annotations

import json

import pytest
import typer

import cxreval
from cxreval.cli.main import app, main


def _commands():
    """Every command path of the app, e.g. ('data', 'audit'), found by walking the click tree."""
    root = typer.main.get_command(app)
    out = [()]

    def walk(cmd, path):
        if hasattr(cmd, "list_commands"):  # the root group loads command modules lazily
            for name in cmd.list_commands(None):
                out.append((*path, name))
                walk(cmd.get_command(None, name), (*path, name))

    walk(root, ())
    return out


COMMANDS = _commands()


def test_version(capsys):
    assert main(["--version"]) == 0
    assert capsys.readouterr().out.strip() == f"cxreval {cxreval.__version__}"


def test_known_commands_are_registered():
    assert {("data",), ("data", "fetch"), ("data", "audit"), ("data", "list")} <= set(COMMANDS)


@pytest.mark.parametrize("path", COMMANDS, ids=lambda p: " ".join(p) or "cxreval")
def test_help_on_every_command(path, capsys):
    assert main([*path, "--help"]) == 0
    out = capsys.readouterr().out
    assert "Usage:" in out and ("cxreval " + " ".join(path)).strip() in " ".join(out.split())


def test_cxreval_error_is_one_line_and_exit_2(tmp_path, capsys):
    rc = main(["data", "audit", "chestxray14", "--data-entry", str(tmp_path / "missing.csv"),
               "--bbox-list", str(tmp_path / "missing_bbox.csv")])
    assert rc == 2
    cap = capsys.readouterr()
    lines = cap.err.strip().splitlines()
    assert len(lines) == 1 and cap.out == ""
    assert lines[0] == f"cxreval: error: File '{tmp_path / 'missing.csv'}' does not exist."


def test_usage_error_exit_code(capsys):
    assert main(["data", "audit"]) == 2  # click usage error: missing argument
    assert "Missing argument" in capsys.readouterr().err
    assert main(["no-such-command"]) == 2


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
    assert main(["data", "split", "chestxray14", "--data-entry", str(de), "--out", str(out), "--fractions",
                 "0.5,0.25,0.25", "--stratify", "Edema", "--seed", "3", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert [s["n_patients"] for s in d["split"]["sizes"]] == [20, 10, 10]
    assert d["split"]["stratify"] == ["Edema"] and d["leakage"]["n_shared_patients"] == 0
    assert sorted(p.name for p in out.glob("*list.txt")) == ["test_list.txt", "train_list.txt", "val_list.txt"]
    assert (out / "assignments.parquet").exists() and (out / "summary.md").exists()
    bb = tmp_path / "bb.csv"
    bb.write_text("Image Index,Finding Label,Bbox [x,y,w,h],,,\n00000001_000.png,Atelectasis,1,1,5,5\n")
    assert main(["data", "audit", "chestxray14", "--data-entry", str(de), "--bbox-list", str(bb),
                 "--split-dir", str(out), "--json"]) == 0
    a = json.loads(capsys.readouterr().out)
    assert a["split"]["n_shared_patients"] == 0 and a["n_images"] == 120 and a["boxes"]["n_boxes"] == 1
    assert sorted(s["n_studies"] for s in a["split"]["sizes"]) == [30, 30, 60]


def test_data_split_by_image_leaks(tmp_path, capsys):
    de = _data_entry(tmp_path)
    out = tmp_path / "img"
    assert main(["data", "split", "chestxray14", "--data-entry", str(de), "--out", str(out), "--by", "image",
                 "--fractions", "0.8,0.2", "--names", "train,test", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["split"]["unit"] == "study" and d["leakage"]["leaks"] is True
    assert d["leakage"]["n_shared_patients"] > 0


@pytest.mark.parametrize("args, msg", [
    (["--by", "family"], "--by must be 'patient' or 'image'. Got 'family' instead."),
    (["--fractions", "a,b"], "--fractions must be comma-separated numbers. Got 'a,b' instead."),
    (["--fractions", "0.5,0.6"], "--fractions must be a sequence of floats"),  # the flag, not patient_split
    (["--by", "image", "--stratify", "Edema"], "--stratify needs --by patient."),
])
def test_data_split_errors(tmp_path, capsys, args, msg):
    de = _data_entry(tmp_path)
    assert main(["data", "split", "chestxray14", "--data-entry", str(de), "--out", str(tmp_path / "o"), *args]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and msg in err[0]
