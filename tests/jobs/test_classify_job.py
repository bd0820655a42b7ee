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
            "--readers, --reader-accuracy, --reader-prior, --anchor and --dependent apply only with --latent-truth.",
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


def test_operating_points_folder_is_the_job_save_on_the_aucs_replicates(tmp_path):
    """--operating-point and --decision-curve add operating_points.csv and decision_curve.csv; the job saves the
    same folder, and its operating points are the library's with the AUCs' seed (the same patient plan)."""
    from cxreval.classification import evaluate_operating_points

    preds, labels, pp, lp, _ = _inputs(tmp_path / "in")
    cli = tmp_path / "cli"
    args = ["classify", "-p", str(pp), "-l", str(lp), "--n-resamples", "25", "--seed", "3", "-o", str(cli)]
    extra = ["--operating-point", "spec=0.8,youden", "--operating-point", "threshold=0.5"]
    assert main([*args, *extra, "--decision-curve", "0.1:0.6:0.1"]) == 0
    points = ["spec=0.8", "youden", "threshold=0.5"]
    res = evaluate_classifiers_files(
        pp,
        lp,
        resampling=Resampling(n_resamples=25, rng=3),
        operating_points=points,
        decision_curve="0.1:0.6:0.1",
    )
    assert_same_files(cli, _saved(res, tmp_path / "job"))
    assert {"operating_points.csv", "decision_curve.csv"} <= {p.name for p in cli.iterdir()}
    assert "## Operating points and decision curves" in (cli / "summary.md").read_text()
    lib = evaluate_operating_points(
        preds, labels, operating_points=points, decision_curve="0.1:0.6:0.1", n_resamples=25, rng=3
    )
    assert res.operating_points is not None
    pd.testing.assert_frame_equal(res.operating_points.table, lib.table)
    pd.testing.assert_frame_equal(res.operating_points.decision_curve, lib.decision_curve)
    plain = evaluate_classifiers_files(pp, lp, resampling=Resampling(n_resamples=25, rng=3))
    pd.testing.assert_frame_equal(plain.table, res.table)  # the AUCs do not change
    assert not {"operating_points", "decision_curve"} & set(plain.tables())


def test_operating_points_alone_or_the_decision_curve_alone(tmp_path):
    preds, labels, *_ = _inputs(tmp_path / "in")
    only_points = evaluate_classifiers(preds, labels, operating_points=["youden"], resampling=Resampling(0))
    only_curve = evaluate_classifiers(preds, labels, decision_curve="0.2:0.4:0.1", resampling=Resampling(0))
    assert "operating_points" in only_points.tables() and "decision_curve" not in only_points.tables()
    assert "decision_curve" in only_curve.tables() and "operating_points" not in only_curve.tables()


@pytest.mark.parametrize(
    ("option", "message"),
    [
        ("spec=1.5", "--operating-point must be in (0, 1) for a specificity. Got 'spec=1.5'."),
        ("sens=0", "--operating-point must be in (0, 1) for a sensitivity. Got 'sens=0'."),
        (
            "accuracy=0.9",
            "--operating-point must be 'threshold=T', 'specificity=S', 'sensitivity=S', 'youden' or "
            "'from=FILE' (e.g. 'specificity=0.9'). Got 'accuracy=0.9' instead.",
        ),
    ],
)
def test_a_bad_operating_point_exits_2_before_reading(tmp_path, capsys, option, message):
    missing = tmp_path / "absent.csv"
    missing.write_text("never read\n")
    out = tmp_path / "out"
    rc = main(
        ["classify", "-p", str(missing), "-l", str(missing), "--operating-point", option, "-o", str(out)]
    )
    assert rc == 2 and not out.exists()
    assert capsys.readouterr().err.strip().splitlines()[-1] == f"cxreval: error: {message}"


def test_a_from_file_without_a_model_exits_2_before_computing(tmp_path, capsys, monkeypatch):
    import cxreval.classification as classification

    _, _, pp, lp, _ = _inputs(tmp_path / "in")
    classify = f"classify -p {pp} -l {lp} --n-resamples 0 --operating-point".split()
    assert main([*classify, "youden", "-o", str(tmp_path / "first")]) == 0
    ops = pd.read_csv(tmp_path / "first" / "operating_points.csv")
    ops[ops.model != "m3"].to_csv(tmp_path / "ops.csv", index=False)
    ops.drop(columns=["threshold"]).to_csv(tmp_path / "no_threshold.csv", index=False)

    def not_called(*args, **kwargs):
        raise AssertionError("computed before checking the operating points")

    monkeypatch.setattr(classification, "evaluate_auc_prepared", not_called)
    for name, expected in (
        ("ops.csv", "has no threshold for model 'm3'"),
        ("no_threshold.csv", "lacks the columns ['threshold']"),
    ):
        out = tmp_path / f"out-{name}"
        rc = main([*classify, f"from={tmp_path / name}", "-o", str(out)])
        err = capsys.readouterr().err.strip().splitlines()
        assert rc == 2 and not out.exists() and len(err) == 1 and expected in err[0]
