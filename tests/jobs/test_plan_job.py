"""``cxreval plan`` is one library call: its output folder equals what :func:`cxreval.jobs.plan_relabelling_files`
(:func:`cxreval.planning.plan_relabelling` of the files) or, with ``--pilot``, :func:`cxreval.jobs.plan_reader_study_files`
saves, byte for byte (``run.json`` aside), and the analysis takes what the loaders return (a ``ReadResult``, a list
of tables)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from _same_files import assert_same_files
from cxreval.cli.main import main
from cxreval.jobs import plan_reader_study_files, plan_relabelling_files
from cxreval.labels._files import read_label_tables, read_prediction_tables
from cxreval.planning import plan_relabelling, simulate_study_set
from cxreval.results import ReadReport, ReadResult


def _inputs(d: Path) -> tuple[Path, Path, Path]:
    d.mkdir()
    ss = simulate_study_set(
        40,
        auc=[0.85, 0.8, 0.7],
        sensitivity=[0.8, 0.75, 0.7],
        specificity=[0.85, 0.9, 0.8],
        prevalence=0.3,
        rng=0,
    )
    preds, labels, expert = d / "preds.csv", d / "labels.csv", d / "expert.csv"
    ss.predictions.to_csv(preds, index=False)
    ss.labels[ss.labels["source"] != "truth"].to_csv(labels, index=False)
    ss.labels[ss.labels["source"] == "truth"].assign(source="expert").to_csv(expert, index=False)
    return preds, labels, expert


def _saved(res, folder: Path) -> Path:
    folder.mkdir()
    res.save(folder)
    return folder


def test_command_folder_is_the_job_save(tmp_path):
    preds, labels, _ = _inputs(tmp_path / "in")
    cli = tmp_path / "cli"
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
                "ref1,ref2",
                "--budget",
                "8",
                "--budgets",
                "0,4,8",
                "--n-draws",
                "20",
                "--seed",
                "3",
                "-o",
                str(cli),
            ]
        )
        == 0
    )
    res = plan_relabelling(
        read_prediction_tables([preds])[0],
        read_label_tables([labels])[0],
        reference="ref0",
        readers=["ref1", "ref2"],
        budget=8,
        budgets=[0, 4, 8],
        n_draws=20,
        rng=3,
    )
    assert_same_files(cli, _saved(res, tmp_path / "job"))
    assert {"relabel.csv", "power.csv", "study.yaml", "summary.md"} <= {p.name for p in cli.iterdir()}


def test_second_round_folder_is_the_job_save(tmp_path):
    """--anchor-studies FILE (an earlier plan's relabel.csv) is the job's anchor_studies= table."""
    preds, labels, expert = _inputs(tmp_path / "in")
    first = tmp_path / "first"
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
                "--budget",
                "10",
                "--n-draws",
                "10",
                "-o",
                str(first),
            ]
        )
        == 0
    )
    cli = tmp_path / "cli"
    assert (
        main(
            [
                "plan",
                "-p",
                str(preds),
                "-l",
                str(labels),
                "-l",
                str(expert),
                "--reference",
                "ref0",
                "--anchor",
                "expert",
                "--anchor-studies",
                str(first / "relabel.csv"),
                "--budget",
                "6",
                "--n-draws",
                "10",
                "--seed",
                "1",
                "-o",
                str(cli),
            ]
        )
        == 0
    )
    res = plan_relabelling(
        pd.read_csv(preds),
        [pd.read_csv(labels), pd.read_csv(expert)],
        reference="ref0",
        anchor="expert",
        anchor_studies=pd.read_csv(first / "relabel.csv"),
        budget=6,
        n_draws=10,
        rng=1,
    )
    assert_same_files(cli, _saved(res, tmp_path / "job"))
    assert res.estimate.table["n_anchored"].eq(10).all()


def test_job_takes_a_read_result_and_a_list_of_tables(tmp_path):
    preds, labels, _ = _inputs(tmp_path / "in")
    p, lab = pd.read_csv(preds), pd.read_csv(labels)
    opts = {"reference": "ref0", "readers": ["ref1"], "budget": 5, "budgets": [0, 5], "n_draws": 10, "rng": 2}
    plain = plan_relabelling(p, lab, **opts)
    wrapped = plan_relabelling(
        ReadResult(p, ReadReport("preds.csv", len(p), len(p))),
        ReadResult(lab, ReadReport("labels.csv", len(lab), len(lab))),
        **opts,
    )
    halves = plan_relabelling([p.iloc[:50], p.iloc[50:]], [lab.iloc[:30], lab.iloc[30:]], **opts)
    for res in (wrapped, halves):
        for name, table in plain.tables().items():
            pd.testing.assert_frame_equal(res.tables()[name], table, check_dtype=False)


def test_command_folder_is_the_files_job_save(tmp_path):
    """``cxreval plan`` runs :func:`cxreval.jobs.plan_relabelling_files`: the paths and the options as typed."""
    preds, labels, _ = _inputs(tmp_path / "in")
    cli = tmp_path / "cli"
    argv = ["plan", "-p", str(preds), "-l", str(labels), "--reference", "ref0", "--budget", "6"]
    assert main([*argv, "--budgets", "0,3,6", "--n-draws", "10", "--seed", "2", "-o", str(cli)]) == 0
    res = plan_relabelling_files(
        [preds], [labels], reference="ref0", budget=6, budgets="0,3,6", n_draws=10, rng=2
    )
    assert_same_files(cli, _saved(res, tmp_path / "job"))


def test_pilot_command_folder_is_the_files_job_save(shared_data, tmp_path):
    """``cxreval plan --pilot`` runs :func:`cxreval.jobs.plan_reader_study_files`."""
    from _factories import vandyke_pilot

    ratings, labels = vandyke_pilot(
        shared_data / "mrmc" / "vandyke.csv", modalities=("unaided", "aided"), extra_cases=300
    )
    pilot, lab = tmp_path / "pilot.csv", tmp_path / "labels.csv"
    ratings.to_csv(pilot, index=False)
    labels.to_csv(lab, index=False)
    cli = tmp_path / "cli"
    argv = ["plan", "--pilot", str(pilot), "-l", str(lab), "--reference", "truth", "--n-readers", "6,8"]
    assert main([*argv, "--seed", "4", "-o", str(cli)]) == 0
    res = plan_reader_study_files(pilot, [lab], reference="truth", n_readers="6,8", rng=4)
    assert_same_files(cli, _saved(res, tmp_path / "job"))


def test_files_jobs_refuse_what_the_command_refuses(tmp_path):
    """The checks of ``cxreval plan`` are the jobs': their messages name the parameters (the command's
    error handler shows them as its options)."""
    import pytest

    from cxreval.cli.main import user_message
    from cxreval.exceptions import InvalidParameterError

    preds, labels, _ = _inputs(tmp_path / "in")
    with pytest.raises(InvalidParameterError, match="Missing option budget=") as exc:
        plan_relabelling_files([preds], [labels], reference="ref0", budget=None)
    assert user_message(str(exc.value), ["plan"]) == (
        "Missing option --budget: a relabelling plan needs --predictions and --budget (or plan a reader study "
        "with --pilot)."
    )
    with pytest.raises(InvalidParameterError, match="'budgets' parameter") as exc:
        plan_relabelling_files([preds], [labels], reference="ref0", budget=4, budgets="0,x")
    assert user_message(str(exc.value), ["plan"]) == (
        "--budgets must be whole numbers (digits 0-9), comma-separated. Got '0,x': 'x' is not one."
    )
    with pytest.raises(InvalidParameterError) as exc:
        plan_reader_study_files(preds, [labels], reference="ref0", findings=["A", "B"])
    assert (
        user_message(str(exc.value), ["plan"]) == "--pilot plans one finding; --findings names 2: ['A', 'B']."
    )
