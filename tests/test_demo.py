"""``cxreval demo``: sections degrade to "not built" without data; on real data its numbers equal
independent computations (scikit-learn / scipy) on the same inputs."""

from __future__ import annotations

import html
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from cxreval.cli.main import main
from cxreval.demo import SECTIONS, run_demo
from cxreval.exceptions import InvalidParameterError


def test_demo_without_any_data_lists_every_section(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["demo", "--out", str(tmp_path / "out"), "--data-mirror", str(tmp_path / "no-mirror"),
                 "--cache-dir", str(tmp_path / "empty-cache"), "--offline", "--json"])
    assert code == 0
    res = json.loads(capsys.readouterr().out)
    assert [s["key"] for s in res["sections"]] == [k for k, _, _ in SECTIONS]
    status = {s["key"]: s["status"] for s in res["sections"]}
    # the XQA tables ship with the package and the synthetic study needs no data; the rest needs data
    assert {k for k, v in status.items() if v == "built"} == {"xqa_published", "localization"}
    assert "error" not in status.values()
    assert all(s["reason"] and s["command"] for s in res["sections"] if s["status"] == "not built")
    page = (tmp_path / "out" / "report.html").read_text()
    for key, title, _ in SECTIONS:
        if status[key] == "not built":
            assert html.escape(title) in page
    assert "cxreval data fetch" in page and "--data-mirror" in page


def test_unknown_section(tmp_path: Path) -> None:
    with pytest.raises(InvalidParameterError, match=r"Unknown demo section\(s\) \['nope'\]"):
        run_demo(tmp_path, sections=["nope"])


@pytest.mark.slow
def test_demo_real_data_matches_independent_computation(shared_data: Path, metadata_dir: Path,
                                                        tmp_path: Path) -> None:
    from scipy.stats import kendalltau, spearmanr
    from sklearn.metrics import cohen_kappa_score, roc_auc_score

    from cxreval.datasets import google, nih

    res = run_demo(tmp_path, data_mirror=shared_data, cache_dir=metadata_dir.parent, n_resamples=20, rng=0,
                   download=False, sections=["nih_models", "chexpert_models", "chexpert_fusion", "xqa_published", "localization"])
    status = {s.key: s.status for s in res.sections}
    assert set(status.values()) == {"built"}, [s.to_dict() for s in res.sections]
    assert res.report_bytes < 20_000_000

    # NIH: jrzech DenseNet-121, Pneumothorax, against Google's expert labels on the shared images
    auc = pd.read_csv(tmp_path / "nih_models" / "auc.csv")
    g = google.load_labels(cache_dir=metadata_dir.parent).table
    g = g[g["finding"] == "Pneumothorax"].set_index("study_id")["state"]
    pr = pd.read_csv(shared_data / "nih_fold_predictions" / "jrzech_densenet121.csv").set_index("Image Index")
    common = pr.index.intersection(g.index)
    assert len(common) == 935
    want = roc_auc_score((g[common] == 2).astype(int), pr.loc[common, "prob_Pneumothorax"])
    got = auc.query("model == 'jrzech_densenet121' and finding == 'Pneumothorax' and reference == 'google_expert'")
    assert got["auc"].item() == pytest.approx(want, abs=1e-12)
    # ... and against NIH text-mined labels (Nodule or Mass = Nodule OR Mass; score = max)
    n = nih.load_labels(cache_dir=metadata_dir.parent).table
    n = n[n["study_id"].isin(common) & n["finding"].isin(["Nodule", "Mass"])]
    y = (n.pivot(index="study_id", columns="finding", values="state") == 2).any(axis=1).astype(int)[common]
    s = pr.loc[common, ["prob_Nodule", "prob_Mass"]].max(axis=1)
    got = auc.query("model == 'jrzech_densenet121' and finding == 'Nodule or Mass' and reference == 'nih_textmined'")
    assert got["auc"].item() == pytest.approx(roc_auc_score(y, s), abs=1e-12)

    # CheXpert: drnet, Cardiomegaly, against the consensus and against radiologist bc4
    auc = pd.read_csv(tmp_path / "chexpert_models" / "auc.csv")
    preds = pd.read_csv(shared_data / "chexpert_test/example_models/predictions/standard/drnet_predictions.csv")
    for ref, path in [("consensus", "groundtruth.csv"), ("bc4", "radiologists/benchmark_radiologists/bc4.csv")]:
        lab = pd.read_csv(shared_data / "chexpert_test" / path).merge(preds, on="Study", suffixes=("_y", "_s"))
        want = roc_auc_score(lab["Cardiomegaly_y"], lab["Cardiomegaly_s"])
        got = auc.query(f"model == 'drnet' and finding == 'Cardiomegaly' and reference == '{ref}'")["auc"].item()
        assert got == pytest.approx(want, abs=1e-12)
    # rank correlation of the 10 models' Cardiomegaly AUCs, consensus vs bc4, equals scipy's
    a = auc[(auc["finding"] == "Cardiomegaly") & (auc["model"] != "Mean")].pivot(
        index="model", columns="reference", values="auc")
    rc = pd.read_csv(tmp_path / "chexpert_models" / "rank_correlation.csv")
    row = rc.query("finding == 'Cardiomegaly' and group == 'All Models' and reference_a == 'consensus' "
                   "and reference_b == 'bc4'")
    assert row.query("method == 'SRCC'")["statistic"].item() == pytest.approx(
        spearmanr(a["consensus"], a["bc4"]).statistic, abs=1e-12)
    assert row.query("method == 'KRCC'")["statistic"].item() == pytest.approx(
        kendalltau(a["consensus"], a["bc4"]).statistic, abs=1e-12)

    # fusion: majority vote of the 5 ground-truth readers reproduces the published consensus exactly
    fa = pd.read_csv(tmp_path / "chexpert_fusion" / "fusion_agreement.csv")
    assert np.allclose(fa.loc[fa["method"] == "mv", "kappa_w"], 1.0)
    fused = pd.read_csv(tmp_path / "chexpert_fusion" / "fused_labels.csv")
    ds = fused[(fused["method"] == "ds") & (fused["finding"] == "Edema")].set_index("study_id")["state"]
    gt = pd.read_csv(shared_data / "chexpert_test" / "groundtruth.csv").set_index("Study")["Edema"] * 2
    want = cohen_kappa_score(gt[ds.index], ds, weights="quadratic")
    got = fa.query("method == 'ds' and finding == 'Edema'")["kappa_w"].item()
    assert got == pytest.approx(want, abs=1e-12)

    # XQA: point SRCC recomputed from the published AUCs, beside the paper's bootstrap mean
    xa = pd.read_csv(shared_data / "xqa_tables" / "xqa_auc_tables_16_25.csv")
    sub = xa[(xa["dataset"] == "XQA-RR") & (xa["finding"] == "Atelectasis") & (xa["model"] != "Mean")].pivot(
        index="model", columns="reference", values="auc")
    rc = pd.read_csv(tmp_path / "xqa_published" / "rank_correlation.csv")
    row = rc.query("dataset == 'XQA-RR' and finding == 'Atelectasis' and group == 'All Models' and "
                   "reference_a == 'CR' and reference_b == 'Rep1' and method == 'SRCC'")
    assert row["statistic"].item() == pytest.approx(spearmanr(sub["CR"], sub["Rep1"]).statistic, abs=1e-12)
    assert row["paper_mean"].item() == pytest.approx(0.80)

    # localization: the seed's synthetic study, its printed output kept verbatim
    from cxreval.localization.synthetic import synthetic_study

    assert (tmp_path / "localization_synthetic" / "synth_output.txt").read_text() == "\n".join(
        synthetic_study(0).lines) + "\n"
