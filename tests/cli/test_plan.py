"""``cxreval plan``: its folder is the job's save(), and bad inputs are one line, exit 2, naming the option."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from cxreval.cli.main import main
from cxreval.planning import plan_relabelling, simulate_study_set


def _inputs(d: Path) -> tuple[Path, Path, object]:
    ss = simulate_study_set(40, auc=[0.85, 0.8, 0.7], sensitivity=[0.8, 0.75], specificity=[0.85, 0.9],
                            prevalence=0.3, rng=0)
    preds, labels = d / "preds.csv", d / "labels.csv"
    ss.predictions.to_csv(preds, index=False)
    ss.labels[ss.labels["source"] != "truth"].to_csv(labels, index=False)
    return preds, labels, ss


def test_cli_folder_equals_the_jobs_save(tmp_path):
    preds, labels, ss = _inputs(tmp_path)
    out = tmp_path / "cli"
    assert main(["plan", "-p", str(preds), "-l", str(labels), "--reference", "ref0", "--readers", "ref1",
                 "--budget", "8", "--budgets", "0,4,8", "--n-draws", "20", "--seed", "3", "-o", str(out)]) == 0
    res = plan_relabelling(pd.read_csv(preds), pd.read_csv(labels), reference="ref0", readers=["ref1"], budget=8,
                           budgets=[0, 4, 8], n_draws=20, rng=3)
    lib = tmp_path / "lib"
    lib.mkdir()
    res.save(lib)
    for f in lib.iterdir():
        if f.suffix != ".parquet":
            assert (out / f.name).read_bytes() == f.read_bytes(), f.name
    assert {f.name for f in out.iterdir()} == {f.name for f in lib.iterdir()} | {"summary.md", "run.json"}
    assert (out / "summary.md").read_text().startswith("# Relabelling plan: 8 studies")


@pytest.mark.parametrize(("extra", "option"), [
    (["--reference", "ref9"], "--reference"),
    (["--reference", "ref0", "--budget", "41"], "--budget"),
    (["--reference", "ref0", "--readers", "nobody"], "--readers"),
    (["--reference", "ref0", "--budgets", "a,b"], "--budgets"),
    (["--reference", "ref0", "--images", "{d}/none"], "--images"),
])
def test_bad_inputs_exit_2_naming_the_option(tmp_path, capsys, extra, option):
    preds, labels, _ = _inputs(tmp_path)
    args = [a.replace("{d}", str(tmp_path)) for a in extra]
    if "--budget" not in args:
        args += ["--budget", "5"]
    assert main(["plan", "-p", str(preds), "-l", str(labels), *args, "-o", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err.strip()
    assert option in err and len(err.splitlines()) == 1, err
    assert not (tmp_path / "out").exists()


def test_predictions_of_one_model_exit_2_naming_predictions(tmp_path, capsys):
    preds, labels, ss = _inputs(tmp_path)
    one = tmp_path / "one.csv"
    ss.predictions[ss.predictions["model"] == "m0"].to_csv(one, index=False)
    assert main(["plan", "-p", str(one), "-l", str(labels), "--reference", "ref0", "--budget", "5",
                 "-o", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert "--predictions" in err and "at least two" in err
