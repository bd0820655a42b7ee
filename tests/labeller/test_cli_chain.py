"""`cxreval label-reports` output feeds `agree`, `classify` and `rank` unchanged."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from cxreval.cli.main import main
from cxreval.labels import read_labels
from cxreval.labels._long import write_predictions

TEMPL = {
    "Effusion": ("Small left pleural effusion.", "No pleural effusion.", "Possible small effusion."),
    "Atelectasis": ("Bibasilar atelectasis.", "No atelectasis.", "Opacity may represent atelectasis."),
}


def _reports(tmp_path, n=60, rng=0):
    g = np.random.default_rng(rng)
    rows, truth = [], {}
    for i in range(n):
        f_parts, i_parts = [], []
        for f, (pos, neg, unc) in TEMPL.items():
            k = g.integers(0, 3)
            truth[(f"s{i}", f)] = k == 0
            f_parts.append((pos, neg, unc)[k])
            # the impression sometimes omits or hedges what the findings say
            i_parts.append((pos, neg, unc)[k] if g.random() < 0.7 else (unc if k == 0 else ""))
        rows.append(
            {
                "study_id": f"s{i}",
                "patient_id": f"p{i // 2}",
                "findings": " ".join(f_parts),
                "impression": " ".join(x for x in i_parts if x) or "No acute disease.",
            }
        )
    p = tmp_path / "reports.csv"
    pd.DataFrame(rows).to_csv(p, index=False)
    preds = []
    for m in range(4):
        for f in TEMPL:
            s = np.array([truth[(f"s{i}", f)] for i in range(n)], dtype=float)
            preds.append(
                pd.DataFrame(
                    {
                        "study_id": [f"s{i}" for i in range(n)],
                        "model": f"M{m}",
                        "finding": f,
                        "score": np.round(s * (0.5 + 0.3 * m) + g.normal(size=n), 3),
                    }
                )
            )
    pp = tmp_path / "preds.csv"
    write_predictions(pd.concat(preds, ignore_index=True), pp)
    return p, pp


def test_label_reports_then_agree_classify_rank(tmp_path, capsys):
    rp, pp = _reports(tmp_path)
    out = tmp_path / "labels"
    assert main(["label-reports", "--reports", str(rp), "-o", str(out), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["n_reports"] == 60 and summary["notes"] == {}
    from cxreval.labeller import ReportLabelsResult

    assert {p.name for p in out.iterdir()} == {
        "labels.csv",
        "labels.parquet",
        "mentions.csv",
        "notes.csv",
        "summary.json",
        "summary.md",
        "run.json",
    }
    assert set(ReportLabelsResult.FILES.values()) <= {p.name for p in out.iterdir()}
    lab = read_labels(out / "labels.csv").table
    assert set(lab.source) == {"report_findings", "report_impression", "report"}
    pq = read_labels(out / "labels.parquet").table
    pd.testing.assert_frame_equal(lab.reset_index(drop=True), pq.reset_index(drop=True), check_dtype=False)
    # every label that is not not_mentioned is traced to a mention in its section
    men = pd.read_csv(out / "mentions.csv")
    rep = pd.read_csv(rp).set_index("study_id")
    for r in men.sample(20, random_state=0).itertuples():
        assert rep.loc[r.study_id, r.field][r.start : r.end] == r.phrase
        assert r.phrase in r.sentence_text
    eff = lab[(lab.source == "report_findings") & (lab.finding == "Effusion")].set_index("study_id")["state"]
    m_eff = men[(men.section == "findings") & (men.finding == "Effusion")]
    assert set(m_eff.study_id) == set(eff[eff >= 0].index)
    # agree: findings vs impression
    assert (
        main(
            [
                "agree",
                "--labels",
                str(out / "labels.csv"),
                "--pairs",
                "report_findings:report_impression",
                "--findings",
                "Effusion,Atelectasis",
                "--out",
                str(tmp_path / "agree"),
            ]
        )
        == 0
    )
    agr = pd.read_csv(tmp_path / "agree" / "agreement.csv")
    assert set(agr.finding) == {"Effusion", "Atelectasis", "macro", "micro"}
    assert agr.kappa_w.between(-1, 1).all()
    # classify and rank against the three report sources
    assert (
        main(
            [
                "classify",
                "-p",
                str(pp),
                "-l",
                str(out / "labels.csv"),
                "--n-resamples",
                "30",
                "--seed",
                "1",
                "--out",
                str(tmp_path / "cls"),
            ]
        )
        == 0
    )
    auc = pd.read_csv(tmp_path / "cls" / "auc.csv")
    assert set(auc.reference) == {"report_findings", "report_impression", "report"}
    assert (
        main(
            [
                "rank",
                "-p",
                str(pp),
                "-l",
                str(out / "labels.parquet"),
                "--n-resamples",
                "30",
                "--out",
                str(tmp_path / "rank"),
            ]
        )
        == 0
    )
    rc = pd.read_csv(tmp_path / "rank" / "rank_correlation.csv")
    assert {"report_findings", "report_impression", "report"} >= set(rc.reference_a) | set(rc.reference_b)


def test_rerun_needs_overwrite(tmp_path, capsys):
    rp, _ = _reports(tmp_path, n=6)
    out = tmp_path / "o"
    assert main(["label-reports", "--reports", str(rp), "-o", str(out), "--sections", "whole"]) == 0
    first = (out / "labels.csv").read_bytes()
    assert main(["label-reports", "--reports", str(rp), "-o", str(out)]) == 2
    assert "already exists" in capsys.readouterr().err
    assert (
        main(
            [
                "label-reports",
                "--reports",
                str(rp),
                "-o",
                str(out),
                "--sections",
                "whole",
                "--overwrite",
                "--executor",
                "process:2",
            ]
        )
        == 0
    )
    assert (out / "labels.csv").read_bytes() == first


@pytest.mark.fetched
def test_openi_archive(tmp_path, metadata_dir):
    out = tmp_path / "openi"
    assert (
        main(
            [
                "label-reports",
                "--reports",
                str(metadata_dir / "NLMCXR_reports.tgz"),
                "-o",
                str(out),
                "--sections",
                "findings,impression,whole",
            ]
        )
        == 0
    )
    lab = read_labels(out / "labels.parquet").table
    assert lab.study_id.nunique() == 3955
    notes = pd.read_csv(out / "notes.csv")
    # OpenI: 530 reports without FINDINGS, 34 without IMPRESSION; 28 of them have no text in any section
    assert (notes.source == "report_findings").sum() == 530
    assert (notes.source == "report_impression").sum() == 34
    assert (notes.note == "empty report text").sum() == 3 * 28
    assert lab[lab.source == "report"].state.isna().sum() == 28 * 14


def test_print_rules(capsys):
    assert (
        main(["label-reports", "--reports", "x", "-o", "y", "--print-rules", "--vocabulary", "chexpert"]) == 0
    )
    out = capsys.readouterr().out
    assert "uncertain_pre_negation" in out and "Support Devices" in out
