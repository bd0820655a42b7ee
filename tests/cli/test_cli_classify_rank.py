"""Tests of `cxreval classify` and `cxreval rank` through main(argv)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from scipy.stats import kendalltau, rankdata, spearmanr

from cxreval.cli.main import main
from cxreval.labels import write_labels
from cxreval.labels._long import write_predictions

from .conftest import command_args, one_error_line


def _files(tmp_path, n=80, n_models=5, rng=0):
    g = np.random.default_rng(rng)
    studies = [f"s{i}" for i in range(n)]
    pat = [f"p{i // 2}" for i in range(n)]
    truth = g.random(n) < 0.4
    labs = []
    for r in ("CR", "Rep1"):
        st = np.where(truth ^ (g.random(n) < 0.15), "positive", "negative").astype(object)
        st[g.random(n) < 0.1] = "uncertain"
        labs.append(
            pd.DataFrame(
                {
                    "study_id": studies,
                    "patient_id": pat,
                    "finding": "Pleural Effusion",
                    "source": r,
                    "state": st,
                }
            )
        )
        labs.append(
            pd.DataFrame(
                {
                    "study_id": studies,
                    "patient_id": pat,
                    "finding": "Atelectasis",
                    "source": r,
                    "state": np.where(g.random(n) < 0.3, "positive", "negative"),
                }
            )
        )
    preds = []
    for m in range(n_models):
        for f in ("Effusion", "Atelectasis"):
            preds.append(
                pd.DataFrame(
                    {
                        "study_id": studies,
                        "model": f"M{m}",
                        "finding": f,
                        "score": np.round(truth * g.random() + g.normal(size=n), 2),
                    }
                )
            )
    lp, pp = tmp_path / "labels.csv", tmp_path / "preds.parquet"
    write_labels(pd.concat(labs, ignore_index=True), lp)
    write_predictions(pd.concat(preds, ignore_index=True), pp)
    gp = tmp_path / "groups.csv"
    pd.DataFrame(
        {
            "model": [f"M{m}" for m in range(n_models)],
            "group": ["A" if m < 3 else "B" for m in range(n_models)],
        }
    ).to_csv(gp, index=False)
    return pp, lp, gp


def test_classify_writes_auc_table(tmp_path, capsys):
    pp, lp, gp = _files(tmp_path)
    out = tmp_path / "out"
    rc = main(
        [
            "classify",
            "-p",
            str(pp),
            "-l",
            str(lp),
            "--model-groups",
            str(gp),
            "--n-resamples",
            "50",
            "--seed",
            "3",
            "--out",
            str(out),
        ]
    )
    assert rc == 0
    t = pd.read_csv(out / "auc.csv")
    assert list(t.columns) == [
        "model",
        "group",
        "finding",
        "reference",
        "auc",
        "ci_low",
        "ci_high",
        "n_pos",
        "n_neg",
        "n_dropped",
        "chance",
    ]
    assert set(t.finding) == {"Effusion", "Atelectasis", "macro", "micro"}
    assert (out / "auc.parquet").is_file() and "cxreval classify" in (out / "summary.md").read_text()
    assert (t.dropna().ci_low <= t.dropna().auc).all()
    # deterministic: same seed, same bytes
    out2 = tmp_path / "out2"
    main(
        [
            "classify",
            "-p",
            str(pp),
            "-l",
            str(lp),
            "--model-groups",
            str(gp),
            "--n-resamples",
            "50",
            "--seed",
            "3",
            "--out",
            str(out2),
        ]
    )
    assert (out / "auc.csv").read_bytes() == (out2 / "auc.csv").read_bytes()
    capsys.readouterr()
    assert (
        main(
            [
                "classify",
                "-p",
                str(pp),
                "-l",
                str(lp),
                "-r",
                "CR",
                "-f",
                "Effusion",
                "--n-resamples",
                "5",
                "--out",
                str(tmp_path / "o3"),
                "--json",
            ]
        )
        == 0
    )
    js = json.loads(capsys.readouterr().out)
    assert {r["reference"] for r in js["auc"]} == {"CR"}


def test_classify_errors_exit_2(tmp_path, capsys):
    pp, lp, _ = _files(tmp_path)
    assert main(["classify", "-p", str(pp), "-l", str(lp), "-r", "Nope", "--out", str(tmp_path / "o")]) == 2
    assert "Unknown reference 'Nope'" in capsys.readouterr().err
    assert (
        main(["classify", "-p", str(tmp_path / "missing.csv"), "-l", str(lp), "--out", str(tmp_path / "o")])
        == 2
    )
    assert "does not exist" in capsys.readouterr().err


def test_rank_from_predictions(tmp_path):
    pp, lp, gp = _files(tmp_path, n_models=6)
    out = tmp_path / "r"
    assert (
        main(
            [
                "rank",
                "-p",
                str(pp),
                "-l",
                str(lp),
                "--model-groups",
                str(gp),
                "--n-resamples",
                "40",
                "--out",
                str(out),
            ]
        )
        == 0
    )
    c = pd.read_csv(out / "rank_correlation.csv")
    for col in (
        "finding",
        "group",
        "reference_a",
        "reference_b",
        "method",
        "statistic",
        "boot_mean",
        "boot_sd",
        "ci_low",
        "ci_high",
    ):
        assert col in c.columns
    # no published values to compare with: the table is RankingStabilityResult's, as the demo writes it
    assert "paper_mean" not in c.columns and "paper_sd" not in c.columns
    assert set(c.group) == {"All Models", "A", "B"} and c.boot_mean.notna().all()
    r = pd.read_csv(out / "rankings.csv")
    a = pd.read_csv(out / "auc.csv")
    e = a[(a.finding == "Effusion") & (a.group != "summary")]
    x = e[e.reference == "CR"].set_index("model").auc
    y = e[e.reference == "Rep1"].set_index("model").auc.reindex(x.index)
    row = c[(c.finding == "Effusion") & (c.group == "All Models") & (c.method == "SRCC")].iloc[0]
    d = rankdata(x) - rankdata(y)  # the XQA-Chest paper's formula by default
    assert row.statistic == pytest.approx(1 - 6 * (d**2).sum() / (len(x) * (len(x) ** 2 - 1)), abs=1e-12)
    assert set(c.variant) == {"formula", "tau-a"} and set(c.finding) >= {"macro", "micro"}
    assert set(r.columns) >= {"finding", "group", "reference", "model", "auc", "rank", "tied"}
    assert (out / "top_changes.csv").is_file()
    assert "the XQA-Chest paper's formula" in (out / "summary.md").read_text()
    # the scipy variants on request, stated in the table and the summary
    out2 = tmp_path / "r2"
    assert (
        main(
            [
                "rank",
                "-p",
                str(pp),
                "-l",
                str(lp),
                "--model-groups",
                str(gp),
                "--n-resamples",
                "40",
                "--kendall",
                "tau-b",
                "--spearman",
                "pearson",
                "--out",
                str(out2),
            ]
        )
        == 0
    )
    c2 = pd.read_csv(out2 / "rank_correlation.csv")
    assert set(c2.variant) == {"pearson", "tau-b"}
    row = c2[(c2.finding == "Effusion") & (c2.group == "All Models") & (c2.method == "SRCC")].iloc[0]
    assert row.statistic == pytest.approx(spearmanr(x, y).statistic, abs=1e-12)
    row = c2[(c2.finding == "Effusion") & (c2.group == "All Models") & (c2.method == "KRCC")].iloc[0]
    assert row.statistic == pytest.approx(kendalltau(x, y).statistic, abs=1e-12)
    s2 = (out2 / "summary.md").read_text()
    assert "scipy.stats.spearmanr" in s2 and "scipy.stats.kendalltau" in s2


def test_rank_from_packaged_xqa_table(tmp_path, capsys):
    out = tmp_path / "x"
    assert main(["rank", "--auc-table", "xqa", "--out", str(out), "--json"]) == 0
    js = json.loads(capsys.readouterr().out)
    assert js["n_resamples"] == 0
    c = pd.read_csv(out / "rank_correlation.csv", keep_default_na=False, na_values=[""])
    assert (
        c.paper_mean.notna().sum() == 168
    )  # every published row, the 8 micro rows without a recomputed value
    micro = c[c.finding == "micro"]
    assert (
        len(micro) == 8
        and micro.statistic.isna().all()
        and micro.note.str.contains("micro-average AUC").all()
    )
    assert js["kendall"] == "tau-a" and js["spearman"] == "formula"
    s = (out / "summary.md").read_text()
    assert "0.80 ± 0.07" in s and "GLORIA-G-CUH" in s
    # a user AUC table with a 'Macro average' finding
    t = pd.read_csv(out / "rankings.csv")
    user = t[(t.group == "All Models") & (t.dataset == "XQA-RR")][["model", "finding", "reference", "auc"]]
    p = tmp_path / "auc.csv"
    user.to_csv(p, index=False)
    assert main(["rank", "--auc-table", str(p), "--out", str(tmp_path / "y")]) == 0
    c2 = pd.read_csv(tmp_path / "y" / "rank_correlation.csv")
    assert set(c2.finding) == {"Atelectasis", "Consolidation", "Lung Opacity", "Effusion", "macro"}


def test_rank_variant_errors_exit_2(tmp_path, capsys):
    assert main(["rank", "--auc-table", "xqa", "--kendall", "tau-c", "--out", str(tmp_path / "o")]) == 2
    assert "--kendall must be one of ['tau-a', 'tau-b']" in capsys.readouterr().err
    assert main(["rank", "--auc-table", "xqa", "--spearman", "kendall", "--out", str(tmp_path / "o")]) == 2
    assert not (tmp_path / "o").exists()


def test_rank_needs_inputs(tmp_path, capsys):
    assert main(["rank", "--out", str(tmp_path / "o")]) == 2
    assert "needs --auc-table, or both --predictions and --labels" in capsys.readouterr().err
    assert main(["rank", "--auc-table", str(tmp_path / "none.csv"), "--out", str(tmp_path / "o")]) == 2


@pytest.mark.parametrize("value", ["0", "-1"])
def test_rank_min_models_below_one_is_refused_before_reading(tmp_path, capsys, value):
    """--min-models 0 or -1 would skip no group while claiming to: one line naming the option, exit 2, nothing
    written."""
    out = tmp_path / "r"
    assert main(["rank", "--auc-table", "xqa", "--min-models", value, "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert "--min-models must be a positive integer" in err and value in err
    assert not out.exists()


def test_classify_reads_parquet_and_upper_case_csv_model_files(tmp_path, capsys):
    args = command_args("classify", tmp_path)
    preds = pd.read_csv(args[args.index("-p") + 1])
    folder = tmp_path / "wide"
    folder.mkdir()
    for m, g in preds.groupby("model"):
        wide = g.pivot(index="study_id", columns="finding", values="score").reset_index()
        {
            "m1": lambda w: w.to_csv(folder / "m1.csv", index=False),
            "m2": lambda w: w.to_parquet(folder / "m2.parquet", index=False),
            "m3": lambda w: w.to_csv(folder / "m3.CSV", index=False),
        }[m](wide)
    (folder / "notes.txt").write_text("x")
    args[args.index("-p") + 1] = str(folder)
    assert main([*args, "-o", str(tmp_path / "o"), "--json"]) == 0
    auc = pd.DataFrame(json.loads(capsys.readouterr().out)["auc"])
    assert set(auc.model) == {"m1", "m2", "m3", "Mean"}
    assert "notes.txt" in (tmp_path / "o" / "summary.md").read_text()  # what was not read is said


@pytest.mark.parametrize("auc", [1.7, -0.2])
def test_rank_refuses_auc_outside_0_1(tmp_path, capsys, auc):
    rows = [
        {"model": f"m{i}", "finding": "Edema", "reference": r, "auc": 0.5 + 0.1 * i}
        for i in range(3)
        for r in ("A", "B")
    ]
    rows[4]["auc"] = auc
    p = tmp_path / "auc.csv"
    pd.DataFrame(rows).to_csv(p, index=False)
    assert main(["rank", "--auc-table", str(p), "-o", str(tmp_path / "o")]) == 2
    assert f"'auc' {auc:g} is outside [0, 1]" in one_error_line(capsys)


def test_summaries_state_the_separability_verdicts_in_either_order_of_references(tmp_path):
    """summary.md of classify and rank ends with every comparison of auc_comparison.csv and its verdict, the same
    lines whichever reference is given first."""
    pp, lp, _ = _files(tmp_path)
    labels = pd.read_csv(lp)
    for k, order in enumerate((("CR", "Rep1"), ("Rep1", "CR"))):
        part = tmp_path / f"labels{k}"
        part.mkdir()
        for r in order:
            labels[labels.source == r].to_csv(part / f"{r}.csv", index=False)
        args = [
            "-p",
            str(pp),
            "-l",
            str(part / f"{order[0]}.csv"),
            "-l",
            str(part / f"{order[1]}.csv"),
            "--n-resamples",
            "50",
            "--seed",
            "0",
        ]
        assert main(["classify", *args, "-o", str(tmp_path / f"c{k}")]) == 0
        assert main(["rank", *args, "--min-models", "2", "-o", str(tmp_path / f"r{k}")]) == 0
    verdicts = []
    for name in ("c0", "c1", "r0", "r1"):
        text = (tmp_path / name / "summary.md").read_text()
        assert "## Is the best model separable?" in text
        section = text.split("## Is the best model separable?", 1)[1]
        rows = pd.read_csv(tmp_path / name / "auc_comparison.csv")
        lines = [ln for ln in section.splitlines() if ln.startswith("- ")]
        assert len(lines) == len(rows) > 0
        assert all(ln.endswith(("**separable**", "**not separable**")) for ln in lines)
        verdicts.append(section)
    assert verdicts[0] == verdicts[1] and verdicts[2] == verdicts[3]


def test_design_notes_say_what_an_option_did_not_do(tmp_path, capsys):
    """--missing-scores chance with every score present says it had no effect; without a finding map a
    reference's finding no model scores is in coverage.csv as 'not scored' and in the design; rank says when the
    dataset column is blank; rank --auc-table of a user's own table has no XQA notes and no paper columns."""
    pp, lp, _ = _files(tmp_path)
    labels = pd.read_csv(lp)
    extra = labels[labels.finding == "Atelectasis"].assign(finding="Fracture")
    lp2 = tmp_path / "labels2.csv"
    pd.concat([labels, extra[extra.source == "Rep1"]], ignore_index=True).to_csv(lp2, index=False)
    capsys.readouterr()
    assert (
        main(
            [
                "classify",
                "-p",
                str(pp),
                "-l",
                str(lp2),
                "--missing-scores",
                "chance",
                "--n-resamples",
                "20",
                "-o",
                str(tmp_path / "c"),
            ]
        )
        == 0
    )
    shown = capsys.readouterr().out
    assert "Missing scores `chance` had no effect" in shown
    cov = pd.read_csv(tmp_path / "c" / "coverage.csv")
    assert cov[cov.status == "not scored"][["finding", "reference"]].values.tolist() == [["Fracture", "Rep1"]]
    assert "Rep1 labels ['Fracture']" in shown and "--finding-map" in shown
    summary = (tmp_path / "c" / "summary.md").read_text()
    assert "Missing scores `chance` had no effect" in summary and "not scored" in summary
    assert main(["rank", "-p", str(pp), "-l", str(lp), "--n-resamples", "20", "-o", str(tmp_path / "r")]) == 0
    assert "Column `dataset` is blank" in (tmp_path / "r" / "summary.md").read_text()
    assert (
        main(
            [
                "rank",
                "-p",
                str(pp),
                "-l",
                str(lp),
                "--n-resamples",
                "20",
                "--dataset",
                "NIH",
                "-o",
                str(tmp_path / "r2"),
            ]
        )
        == 0
    )
    assert "Column `dataset` is blank" not in (tmp_path / "r2" / "summary.md").read_text()
    assert main(["rank", "--auc-table", str(tmp_path / "c" / "auc.csv"), "-o", str(tmp_path / "t")]) == 0
    rc = pd.read_csv(tmp_path / "t" / "rank_correlation.csv")
    assert not [c for c in rc.columns if c.startswith("paper") or c in ("note", "diff_vs_paper")]
    text = (tmp_path / "t" / "summary.md").read_text()
    assert "2-decimal" not in text and "`paper`" not in text and "Tables 26-29" not in text
    assert "Column `dataset` is blank" not in text  # a table's datasets are its own column
    assert (
        main(["rank", "--auc-table", "xqa", "-o", str(tmp_path / "x")]) == 0
    )  # the paper's own tables: beside it
    assert "`paper` = the XQA paper's bootstrap mean ± sd" in (tmp_path / "x" / "summary.md").read_text()
