"""`cxreval classify --latent-truth`: the folder equals the library's save(), the two-reader refusal (exit 2)."""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd

from cxreval.cli.main import main
from cxreval.labels import write_labels
from cxreval.labels._long import write_predictions
from cxreval.latent import evaluate_latent_auc

from .conftest import one_error_line

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "latent"))
from test_evaluate import tables  # noqa: E402


def _files(tmp_path):
    preds, labs = tables(n=300)
    pp, lp = tmp_path / "preds.csv", tmp_path / "labels.csv"
    write_predictions(preds, pp)
    write_labels(labs, lp)
    return preds, labs, pp, lp


def test_folder_equals_the_library_result(tmp_path):
    preds, labs, pp, lp = _files(tmp_path)
    out = tmp_path / "out"
    rc = main(
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
            "20",
            "--seed",
            "1",
            "-o",
            str(out),
        ]
    )
    assert rc == 0
    res = evaluate_latent_auc(preds, labs, readers=["r1", "r2", "r3"], n_resamples=20, rng=1)
    (tmp_path / "lib").mkdir()
    saved = res.save(tmp_path / "lib")
    for name, file in res.FILES.items():
        assert (out / file).read_bytes() == saved[name].read_bytes(), file
    assert set(pd.read_csv(out / "auc.csv")["reference"]) == {"latent"}
    assert "readers' errors are independent" in (out / "summary.md").read_text()


def test_two_readers_exit_2_with_the_sentence(tmp_path, capsys):
    _, _, pp, lp = _files(tmp_path)
    out = tmp_path / "out"
    rc = main(
        ["classify", "-p", str(pp), "-l", str(lp), "--latent-truth", "--readers", "r1,r2", "-o", str(out)]
    )
    assert rc == 2 and not out.exists()
    line = one_error_line(capsys)
    assert (
        "With fewer than three readers of a finding the latent-class model is not identified: give each "
        "reader's sensitivity and specificity (--reader-accuracy), plausible ranges of them (--reader-prior) or "
        "a subset of studies labelled by an anchor reference treated as exact (--anchor)."
    ) in line


def test_known_accuracies_make_two_readers_usable(tmp_path):
    _, _, pp, lp = _files(tmp_path)
    three = tmp_path / "three"
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
                "0",
                "-o",
                str(three),
            ]
        )
        == 0
    )
    out = tmp_path / "two"
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
                "r1,r2",
                "--reader-accuracy",
                str(three / "reader_accuracy.csv"),
                "--n-resamples",
                "0",
                "-o",
                str(out),
            ]
        )
        == 0
    )
    assert pd.read_csv(out / "reader_accuracy.csv")["fixed"].all()


def test_a_prior_makes_two_readers_usable_and_a_bad_one_exits_2(tmp_path, capsys):
    _, _, pp, lp = _files(tmp_path)
    ranges = {
        "sensitivity_low": 0.6,
        "sensitivity_high": 0.95,
        "specificity_low": 0.7,
        "specificity_high": 0.97,
    }
    prior = pd.DataFrame(
        [{"finding": f, "source": r, **ranges} for f in ("Edema", "Effusion") for r in ("r1", "r2")]
    )
    prior.to_csv(tmp_path / "prior.csv", index=False)
    out = tmp_path / "two"
    args = [
        "classify",
        "-p",
        str(pp),
        "-l",
        str(lp),
        "--latent-truth",
        "--readers",
        "r1,r2",
        "--n-resamples",
        "0",
    ]
    assert main([*args, "--reader-prior", str(tmp_path / "prior.csv"), "-o", str(out)]) == 0
    sens = pd.read_csv(out / "latent_sensitivity.csv")
    assert set(sens.loc[sens["analysis"] == "accuracy_range", "setting"]) == {
        "low ends",
        "high ends",
        "no prior",
    }
    prior.assign(sensitivity_low=1.5).to_csv(tmp_path / "bad.csv", index=False)
    assert main([*args, "--reader-prior", str(tmp_path / "bad.csv"), "-o", str(tmp_path / "bad")]) == 2
    line = one_error_line(capsys)
    assert (
        "bad.csv" in line and "sensitivity_low/sensitivity_high" in line and not (tmp_path / "bad").exists()
    )


def test_latent_options_without_latent_truth_are_refused(tmp_path, capsys):
    _, _, pp, lp = _files(tmp_path)
    rc = main(["classify", "-p", str(pp), "-l", str(lp), "--readers", "r1,r2,r3", "-o", str(tmp_path / "o")])
    assert rc == 2 and "apply only with --latent-truth" in one_error_line(capsys)


def test_verbose_without_a_terminal_logs_the_progress(caplog, monkeypatch):
    import logging

    from cxreval.cli._common import progress

    monkeypatch.setattr("cxreval.cli._progress._may_be_terminal", lambda: False)
    with caplog.at_level(logging.INFO, logger="cxreval"), progress() as p:
        t = p.add("bootstrap replicates refitted", total=4000)
        p.advance(t, 1000)
        p.done(t)
    assert "bootstrap replicates refitted: 4,000/4,000 (100%)" in caplog.text
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="cxreval"), progress() as p:  # without -v: nothing
        p.done(p.add("bootstrap replicates refitted", total=4000))
    assert caplog.text == ""


def _four_readers(tmp_path):
    """The files of ``_files`` with a fourth reader ``r4`` that copies ``r3``."""
    preds, labs, pp, _ = _files(tmp_path)
    four = pd.concat([labs, labs[labs["source"] == "r3"].assign(source="r4")], ignore_index=True)
    lp4 = tmp_path / "labels4.csv"
    write_labels(four, lp4)
    return preds, four, pp, lp4


def test_dependent_groups_reach_the_model_and_the_refusal_names_them(tmp_path, capsys):
    preds, four, pp, lp4 = _four_readers(tmp_path)
    out = tmp_path / "dep"
    args = ["classify", "-p", str(pp), "-l", str(lp4), "--latent-truth", "--readers", "r1,r2,r3,r4"]
    assert main([*args, "--dependent", "r3,r4", "--n-resamples", "0", "-o", str(out)]) == 0
    auc = pd.read_csv(out / "auc.csv", keep_default_na=False)
    assert set(auc["dependent"]) == {"r3+r4"}
    want = evaluate_latent_auc(
        preds, four, readers=["r1", "r2", "r3", "r4"], dependent=[("r3", "r4")], n_resamples=0
    )
    assert (out / "auc.csv").read_bytes() == want.save(tmp_path / "lib")["auc"].read_bytes()
    assert {"latent_sensitivity.csv", "latent_comparators.csv"} <= {p.name for p in out.iterdir()}
    bad = tmp_path / "bad"
    rc = main([*args[:-1], "r1,r2,r3", "--dependent", "r1,r2", "-o", str(bad)])
    assert rc == 2 and not bad.exists()
    assert "r1+r2 (declared dependent, one reader)" in one_error_line(capsys)


def test_dependent_flagged_reaches_the_model_and_equals_the_library(tmp_path):
    preds, four, pp, lp4 = _four_readers(tmp_path)
    out = tmp_path / "flagged"
    args = ["classify", "-p", str(pp), "-l", str(lp4), "--latent-truth", "--readers", "r1,r2,r3,r4"]
    assert main([*args, "--dependent", "flagged", "--n-resamples", "0", "-o", str(out)]) == 0
    want = evaluate_latent_auc(
        preds, four, readers=["r1", "r2", "r3", "r4"], dependent="flagged", n_resamples=0
    )
    assert (out / "auc.csv").read_bytes() == want.save(tmp_path / "lib")["auc"].read_bytes()
    grouped = {(f, f"{a}+{b}") for f, a, b, m in want.flagged_pairs or () if m}
    auc = pd.read_csv(out / "auc.csv", keep_default_na=False)
    assert grouped and grouped == {
        (f, d) for f, d in zip(auc["finding"], auc["dependent"]) if d and f != "macro"
    }
    assert "grouped per finding because the pair checks flagged them" in (out / "summary.md").read_text()
