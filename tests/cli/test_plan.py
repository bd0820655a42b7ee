"""``cxreval plan``: its folder is the job's save(), and bad inputs are one line, exit 2, naming the option."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from cxreval.cli.main import main
from cxreval.planning import plan_relabelling, simulate_study_set


def _inputs(d: Path) -> tuple[Path, Path, object]:
    ss = simulate_study_set(
        40, auc=[0.85, 0.8, 0.7], sensitivity=[0.8, 0.75], specificity=[0.85, 0.9], prevalence=0.3, rng=0
    )
    preds, labels = d / "preds.csv", d / "labels.csv"
    ss.predictions.to_csv(preds, index=False)
    ss.labels[ss.labels["source"] != "truth"].to_csv(labels, index=False)
    return preds, labels, ss


def test_cli_folder_equals_the_jobs_save(tmp_path):
    preds, labels, ss = _inputs(tmp_path)
    out = tmp_path / "cli"
    assert (
        main(
            [
                "plan",
                "-p",
                str(preds),
                "-l",
                str(labels),
                "--reference",
                "ref0",
                "--readers",
                "ref1",
                "--budget",
                "8",
                "--budgets",
                "0,4,8",
                "--n-draws",
                "20",
                "--seed",
                "3",
                "-o",
                str(out),
            ]
        )
        == 0
    )
    res = plan_relabelling(
        pd.read_csv(preds),
        pd.read_csv(labels),
        reference="ref0",
        readers=["ref1"],
        budget=8,
        budgets=[0, 4, 8],
        n_draws=20,
        rng=3,
    )
    lib = tmp_path / "lib"
    lib.mkdir()
    res.save(lib)
    for f in lib.iterdir():
        if f.suffix != ".parquet":
            assert (out / f.name).read_bytes() == f.read_bytes(), f.name
    assert {f.name for f in out.iterdir()} == {f.name for f in lib.iterdir()} | {"summary.md", "run.json"}
    assert (out / "summary.md").read_text().startswith("# Relabelling plan: 8 studies")


@pytest.mark.parametrize(
    ("extra", "option"),
    [
        (["--reference", "ref9"], "--reference"),
        (["--reference", "ref0", "--budget", "41"], "--budget"),
        (["--reference", "ref0", "--readers", "nobody"], "--readers"),
        (["--reference", "ref0", "--budgets", "a,b"], "--budgets"),
        (["--reference", "ref0", "--images", "{d}/none"], "--images"),
        (["--reference", "ref0", "--uniform-floor", "0"], "--uniform-floor"),
    ],
)
def test_bad_inputs_exit_2_naming_the_option(tmp_path, capsys, extra, option):
    preds, labels, _ = _inputs(tmp_path)
    args = [a.replace("{d}", str(tmp_path)) for a in extra]
    if "--budget" not in args:
        args += ["--budget", "5"]
    assert main(["plan", "-p", str(preds), "-l", str(labels), *args, "-o", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err.strip()
    assert option in err and len(err.splitlines()) == 1, err
    assert not (tmp_path / "out").exists()


def test_the_experts_labels_of_the_sample_give_the_design_based_estimate(tmp_path):
    """plan → the expert labels relabel.csv's studies → plan --anchor expert --anchor-studies relabel.csv: the
    second folder's design_auc.csv holds every model's design-based AUC from those labels."""
    preds, labels, ss = _inputs(tmp_path)
    common = ["plan", "-p", str(preds), "--reference", "ref0", "--n-draws", "10", "--seed", "1"]
    assert main([*common, "-l", str(labels), "--budget", "12", "-o", str(tmp_path / "one")]) == 0
    relabel = pd.read_csv(tmp_path / "one" / "relabel.csv")
    assert relabel["inclusion_probability"].between(0, 1, inclusive="right").all() and len(relabel) == 12
    assert pd.read_csv(tmp_path / "one" / "design_auc.csv").empty
    truth = ss.labels[(ss.labels["source"] == "truth") & ss.labels["study_id"].isin(relabel["study_id"])]
    truth.assign(source="expert").to_csv(tmp_path / "expert.csv", index=False)
    anchor = ["--anchor", "expert", "--anchor-studies", str(tmp_path / "one" / "relabel.csv")]
    args = [*common, "-l", str(labels), "-l", str(tmp_path / "expert.csv"), *anchor, "--budget", "5"]
    assert main([*args, "-o", str(tmp_path / "two")]) == 0
    design = pd.read_csv(tmp_path / "two" / "design_auc.csv")
    assert set(design["model"]) == {"m0", "m1", "m2"} and (design["n_sampled"] == 12).all()
    assert "## AUC, design-based estimate" in (tmp_path / "two" / "summary.md").read_text()


def test_predictions_of_one_model_exit_2_naming_predictions(tmp_path, capsys):
    preds, labels, ss = _inputs(tmp_path)
    one = tmp_path / "one.csv"
    ss.predictions[ss.predictions["model"] == "m0"].to_csv(one, index=False)
    assert (
        main(
            [
                "plan",
                "-p",
                str(one),
                "-l",
                str(labels),
                "--reference",
                "ref0",
                "--budget",
                "5",
                "-o",
                str(tmp_path / "out"),
            ]
        )
        == 2
    )
    err = capsys.readouterr().err
    assert "--predictions" in err and "at least two" in err


@pytest.fixture
def pilot_files(shared_data, tmp_path) -> tuple[Path, Path]:
    """Van Dyke's ratings as an unaided/aided pilot and its truth (source 'truth') with 600 unread studies, as CSV."""
    from _factories import vandyke_pilot

    ratings, labels = vandyke_pilot(
        shared_data / "mrmc" / "vandyke.csv", modalities=("unaided", "aided"), extra_cases=600
    )
    ratings.to_csv(tmp_path / "pilot.csv", index=False)
    labels.to_csv(tmp_path / "labels.csv", index=False)
    return tmp_path / "pilot.csv", tmp_path / "labels.csv"


def test_pilot_folder_equals_the_jobs_save_and_opens_in_reader_init(
    pilot_files, tmp_path, capsys, monkeypatch
):
    pytest.importorskip("sqlalchemy", reason="the reader extra (sqlalchemy) is in the test extra")
    from PIL import Image

    from cxreval.jobs import plan_reader_study

    pilot, labels = pilot_files
    (tmp_path / "imgs").mkdir()
    for sid in pd.read_csv(labels)["study_id"]:
        Image.new("L", (8, 8), 128).save(tmp_path / "imgs" / f"{sid}.png")
    out = tmp_path / "cli"
    assert (
        main(
            [
                "plan",
                "--pilot",
                str(pilot),
                "-l",
                str(labels),
                "--reference",
                "truth",
                "--images",
                str(tmp_path / "imgs"),
                "--seed",
                "4",
                "--washout-days",
                "14",
                "--n-readers",
                "6,8,10",
                "-o",
                str(out),
            ]
        )
        == 0
    )
    echo = capsys.readouterr().out
    assert "design: 8 readers x 188 cases" in echo and f"reader init --study {out / 'study.yaml'}" in echo
    res = plan_reader_study(
        pd.read_csv(pilot),
        pd.read_csv(labels),
        reference="truth",
        images=tmp_path / "imgs",
        washout_days=14,
        n_readers=[6, 8, 10],
        rng=4,
    )
    lib = tmp_path / "lib"
    lib.mkdir()
    res.save(lib)
    for f in lib.iterdir():
        if f.is_file() and f.suffix != ".parquet":
            assert (out / f.name).read_bytes() == f.read_bytes(), f.name
    assert {f.name for f in out.iterdir()} == {f.name for f in lib.iterdir()} | {"run.json"}
    assert sorted(p.name for p in (out / "images").iterdir()) == sorted(
        p.name for p in (lib / "images").iterdir()
    )
    monkeypatch.chdir(out)
    assert main(["reader", "init", "--study", "study.yaml", "--db", "sqlite:///study.db"]) == 0


@pytest.mark.parametrize(
    ("extra", "options"),
    [
        (["--pilot", "{d}/one.csv", "--reference", "truth"], ["--pilot"]),
        (["--pilot", "{d}/pilot.csv", "--reference", "truht"], ["--reference"]),
        (["--pilot", "{d}/pilot.csv", "--reference", "truth", "--budget", "50"], ["--pilot", "--budget"]),
        (
            ["--pilot", "{d}/pilot.csv", "--reference", "truth", "-p", "{d}/pilot.csv"],
            ["--pilot", "--predictions"],
        ),
        (["--pilot", "{d}/pilot.csv", "--reference", "truth", "--effect", "1.5"], ["--effect"]),
        (["--pilot", "{d}/pilot.csv", "--reference", "truth", "--n-readers", "4,x"], ["--n-readers"]),
        (
            ["--pilot", "{d}/pilot.csv", "--reference", "truth", "--latent-sources", "a,b,c"],
            ["--latent-sources"],
        ),
        (["--pilot", "{d}/none.csv", "--reference", "truth"], ["--pilot"]),
        (["--reference", "truth"], ["--predictions"]),
        (["--reference", "truth", "--effect", "0.05"], ["--effect", "--pilot"]),
    ],
)
def test_bad_pilot_plans_exit_2_naming_the_options(pilot_files, tmp_path, capsys, extra, options):
    pilot, labels = pilot_files
    p = pd.read_csv(pilot)
    p[p["modality"] == "aided"].to_csv(tmp_path / "one.csv", index=False)
    args = [a.replace("{d}", str(tmp_path)) for a in extra]
    assert main(["plan", "-l", str(labels), *args, "-o", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err.strip()
    assert all(o in err for o in options) and len(err.splitlines()) == 1, err
    assert not (tmp_path / "out").exists()
