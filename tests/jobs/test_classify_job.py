"""``cxreval classify`` is one library call: its output folder equals what
:func:`cxreval.jobs.evaluate_classifiers_files` saves, byte for byte (``run.json`` aside), and the
table twin :func:`~cxreval.jobs.evaluate_classifiers` takes what the loaders return."""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd
import pytest

from _factories import label_table, prediction_table
from _same_files import assert_same_files
from cxreval.classification import evaluate_auc
from cxreval.cli.main import main
from cxreval.jobs import evaluate_classifiers, evaluate_classifiers_files
from cxreval.labels import write_labels
from cxreval.labels._long import write_predictions
from cxreval.options import Design, Resampling
from cxreval.results import ReadReport, ReadResult

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "latent"))
from test_evaluate import tables as latent_tables  # noqa: E402


def _inputs(d: Path) -> tuple[pd.DataFrame, pd.DataFrame, Path, Path, Path]:
    d.mkdir()
    preds, labels = prediction_table(40, seed=1), label_table(40, seed=0)
    pp, lp, gp = d / "preds.parquet", d / "labels.csv", d / "groups.csv"
    write_predictions(preds, pp)
    write_labels(labels, lp)
    pd.DataFrame({"model": ["m1", "m2", "m3"], "group": ["A", "A", "B"]}).to_csv(gp, index=False)
    return preds, labels, pp, lp, gp


def _saved(res, folder: Path) -> Path:
    folder.mkdir()
    res.save(folder)
    return folder


def test_command_folder_is_the_job_save(tmp_path):
    _, _, pp, lp, gp = _inputs(tmp_path / "in")
    cli = tmp_path / "cli"
    assert (
        main(
            [
                "classify",
                "-p",
                str(pp),
                "-l",
                str(lp),
                "--model-groups",
                str(gp),
                "-r",
                "CR,Rep1",
                "--n-resamples",
                "30",
                "--seed",
                "4",
                "-o",
                str(cli),
            ]
        )
        == 0
    )
    res = evaluate_classifiers_files(
        pp, lp, model_groups=gp, references=["CR", "Rep1"], resampling=Resampling(n_resamples=30, rng=4)
    )
    assert_same_files(cli, _saved(res, tmp_path / "job"))
    assert {"auc.csv", "auc_comparison.csv", "summary.md"} <= {p.name for p in cli.iterdir()}


def test_command_folder_is_the_job_save_each_design(tmp_path):
    _, _, pp, lp, _ = _inputs(tmp_path / "in")
    cli = tmp_path / "cli"
    assert (
        main(
            [
                "classify",
                "-p",
                str(pp),
                "-l",
                str(lp),
                "--studies",
                "each",
                "--n-resamples",
                "0",
                "-o",
                str(cli),
            ]
        )
        == 0
    )
    res = evaluate_classifiers_files(
        pp, lp, design=Design(studies="each"), resampling=Resampling(n_resamples=0, rng=0)
    )  # --seed 0
    assert_same_files(cli, _saved(res, tmp_path / "job"))


def test_latent_truth_folder_is_the_job_save(tmp_path):
    preds, labs = latent_tables(n=200)
    pp, lp = tmp_path / "preds.csv", tmp_path / "labels.csv"
    write_predictions(preds, pp)
    write_labels(labs, lp)
    cli = tmp_path / "cli"
    assert (
        main(
            [
                "classify",
                "-p",
                str(pp),
                "-l",
                str(lp),
                "--latent-truth",
                "--readers",
                "r1,r2,r3",
                "--n-resamples",
                "5",
                "--seed",
                "1",
                "-o",
                str(cli),
            ]
        )
        == 0
    )
    res = evaluate_classifiers_files(
        pp, lp, readers=["r1", "r2", "r3"], latent_truth=True, resampling=Resampling(n_resamples=5, rng=1)
    )
    assert res.latent and res.comparison is None
    assert_same_files(cli, _saved(res, tmp_path / "job"))
    # the table twin: the same files from the tables in memory
    assert_same_files(
        cli,
        _saved(
            evaluate_classifiers(
                preds,
                labs,
                readers=["r1", "r2", "r3"],
                latent_truth=True,
                resampling=Resampling(n_resamples=5, rng=1),
            ),
            tmp_path / "tables",
        ),
    )


def test_table_job_equals_the_files_job(tmp_path):
    preds, labels, pp, lp, _ = _inputs(tmp_path / "in")
    files = evaluate_classifiers_files(pp, lp, resampling=Resampling(n_resamples=20, rng=2))
    tables = evaluate_classifiers(preds, labels, resampling=Resampling(n_resamples=20, rng=2))
    assert_same_files(_saved(files, tmp_path / "files"), _saved(tables, tmp_path / "tables"))


def test_jobs_take_a_read_result_and_a_list_of_tables(tmp_path):
    preds, labels = prediction_table(30, seed=3), label_table(30, seed=2)
    read = ReadResult(preds, ReadReport("preds.csv", len(preds), len(preds)))
    parts = [labels[labels["source"] == s] for s in ("CR", "Rep1", "Rep2")]
    plain = evaluate_classifiers(preds, labels, resampling=Resampling(n_resamples=10, rng=0))
    loaded = evaluate_classifiers(read, parts, resampling=Resampling(n_resamples=10, rng=0))
    assert_same_files(_saved(plain, tmp_path / "a"), _saved(loaded, tmp_path / "b"))
    auc = evaluate_auc(read, parts, n_resamples=10, rng=0)
    pd.testing.assert_frame_equal(auc.table, plain.auc.table)


def test_latent_readers_refuse_references():
    preds, labels = prediction_table(20), label_table(20)
    with pytest.raises(Exception, match="do not apply with latent_truth=True"):
        evaluate_classifiers(
            preds, labels, readers=["CR", "Rep1", "Rep2"], latent_truth=True, references=["CR"]
        )


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (
            {"latent_truth": False, "anchor": "CR"},
            "--readers, --reader-accuracy and --anchor apply only with --latent-truth.",
        ),
        (
            {"latent_truth": True},
            "--latent-truth needs --readers: the label sources treated as readers (e.g. --readers bc4,bc6,bc8).",
        ),
        (
            {
                "latent_truth": True,
                "readers": ["CR", "Rep1", "Rep2"],
                "design": Design(finding_map="nih_to_google"),
            },
            "--references and --finding-map do not apply with --latent-truth (the reference is the latent "
            "truth of --readers).",
        ),
        ({"design": Design(map_score="max")}, "--map-score needs --finding-map."),
        (
            {"design": Design(finding_map="nih_to_google", map_score="median")},
            "--map-score must be one of max, mean. Got 'median'.",
        ),
    ],
)
def test_the_commands_checks_are_the_jobs(tmp_path, options, message):
    """What ``cxreval classify`` refuses, the job refuses before reading a table, in the library's words that
    the command shows as its options."""
    from cxreval.cli.main import user_message
    from cxreval.exceptions import InvalidParameterError

    missing = tmp_path / "absent.csv"  # never read: the options are checked first
    with pytest.raises(InvalidParameterError) as exc:
        evaluate_classifiers_files(missing, missing, **options)
    assert user_message(str(exc.value), ["classify"]) == message
