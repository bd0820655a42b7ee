"""``cxreval demo``: sections degrade to "not built" without data; on real data its numbers equal
independent computations (scikit-learn / scipy) and what the analysis commands (``cxreval classify``,
``rank``, ``agree``) produce on the same inputs; its report renders in headless Chromium.

The demo runs once per module (:func:`demo_out`) with 20 resamples and a light IQA configuration.
"""

from __future__ import annotations

import html
import importlib.util
import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from cxreval.cli.main import main
from cxreval.demo import run_demo
from cxreval.demo.data import CHEXPERT_MODELS
from cxreval.demo.sections import SECTIONS
from cxreval.exceptions import InvalidParameterError

ROOT = Path(__file__).resolve().parents[2]
REAL_SECTIONS = [
    "nih_models",
    "chexpert_models",
    "chexpert_agreement",
    "chexpert_fusion",
    "xqa_published",
    "localization",
    "localization_real",
    "iqa",
]
IQA_METRICS = ["psnr", "ssim", "gmsd"]


def test_demo_without_any_data_lists_every_section(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(
        [
            "demo",
            "--out",
            str(tmp_path / "out"),
            "--data-mirror",
            str(tmp_path / "no-mirror"),
            "--cache-dir",
            str(tmp_path / "empty-cache"),
            "--offline",
            "--json",
        ]
    )
    assert code == 0
    res = json.loads(capsys.readouterr().out)
    assert res["data_mirror"] == str(tmp_path / "no-mirror") and res["mirror_source"] == "data_mirror="
    assert [s["key"] for s in res["sections"]] == [s.key for s in SECTIONS]
    status = {s["key"]: s["status"] for s in res["sections"]}
    # the XQA tables ship with the package and the synthetic study needs no data; the rest needs data
    assert {k for k, v in status.items() if v == "built"} == {"xqa_published", "localization"}
    assert "error" not in status.values()
    assert all(s["reason"] and s["command"] for s in res["sections"] if s["status"] == "not built")
    page = (tmp_path / "out" / "report.html").read_text()
    for key, title in ((s.key, s.title) for s in SECTIONS):
        if status[key] == "not built":
            assert html.escape(title) in page
    assert "cxreval data fetch" in page and "--data-mirror" in page
    # the first screen (the key-findings panel) names each missing section and the command that brings it
    first = page.split('id="key-findings"', 1)[1].split("</section>", 1)[0]
    for s in res["sections"]:
        if s["status"] == "not built":
            assert (
                html.escape(s["title"]) in first and f'<code class="command">{s["command"]}</code>' in first
            )
    assert status["iqa"] == "not built" and "cxreval data fetch --all" in first


def test_bad_parameters(tmp_path: Path) -> None:
    with pytest.raises(InvalidParameterError, match=r"sections=: unknown section\(s\) \['nope'\]"):
        run_demo(tmp_path, sections=["nope"])
    with pytest.raises(
        InvalidParameterError, match=r"'iqa_metrics' parameter of run_demo .* Got \['psnrr'\]"
    ):
        run_demo(tmp_path, iqa_metrics=["psnrr"])
    with pytest.raises(
        InvalidParameterError, match=r"'iqa_images' parameter of run_demo must be a positive int. Got 0"
    ):
        run_demo(tmp_path, iqa_images=0)


@pytest.fixture(scope="module")
def demo_out(shared_data: Path, metadata_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("demo")
    res = run_demo(
        out,
        data_mirror=shared_data,
        cache_dir=metadata_dir.parent,
        n_resamples=20,
        rng=0,
        download=False,
        sections=REAL_SECTIONS,
        iqa_metrics=IQA_METRICS,
        iqa_images=2,
    )
    status = {s.key: s.status for s in res.sections}
    assert status == dict.fromkeys(REAL_SECTIONS, "built"), [s.to_dict() for s in res.sections]
    assert res.report_bytes < 20_000_000
    return out


@pytest.mark.slow
def test_demo_real_data_matches_independent_computation(
    demo_out: Path, shared_data: Path, metadata_dir: Path
) -> None:
    from scipy.stats import kendalltau, spearmanr
    from sklearn.metrics import cohen_kappa_score, roc_auc_score

    from cxreval.datasets import google, nih

    # NIH: jrzech DenseNet-121, Pneumothorax, against Google's expert labels on the shared images
    auc = pd.read_csv(demo_out / "nih_models" / "auc.csv")
    g = google.load_labels(cache_dir=metadata_dir.parent).table
    g = g[g["finding"] == "Pneumothorax"].set_index("study_id")["state"]
    pr = pd.read_csv(shared_data / "nih_fold_predictions" / "jrzech_densenet121.csv").set_index("Image Index")
    common = pr.index.intersection(g.index)
    assert len(common) == 935
    want = roc_auc_score((g[common] == 2).astype(int), pr.loc[common, "prob_Pneumothorax"])
    got = auc.query(
        "model == 'jrzech_densenet121' and finding == 'Pneumothorax' and reference == 'google_expert'"
    )
    assert got["auc"].item() == pytest.approx(want, abs=1e-12)
    # ... and against NIH text-mined labels (Nodule or Mass = Nodule OR Mass; score = max)
    n = nih.load_labels(cache_dir=metadata_dir.parent).table
    n = n[n["study_id"].isin(common) & n["finding"].isin(["Nodule", "Mass"])]
    y = (n.pivot(index="study_id", columns="finding", values="state") == 2).any(axis=1).astype(int)[common]
    s = pr.loc[common, ["prob_Nodule", "prob_Mass"]].max(axis=1)
    got = auc.query(
        "model == 'jrzech_densenet121' and finding == 'Nodule or Mass' and reference == 'nih_textmined'"
    )
    assert got["auc"].item() == pytest.approx(roc_auc_score(y, s), abs=1e-12)

    # CheXpert: drnet, Cardiomegaly, against the consensus and against radiologist bc4
    auc = pd.read_csv(demo_out / "chexpert_models" / "auc.csv")
    preds = pd.read_csv(
        shared_data / "chexpert_test/example_models/predictions/standard/drnet_predictions.csv"
    )
    for ref, path in [
        ("consensus", "groundtruth.csv"),
        ("bc4", "radiologists/benchmark_radiologists/bc4.csv"),
    ]:
        lab = pd.read_csv(shared_data / "chexpert_test" / path).merge(
            preds, on="Study", suffixes=("_y", "_s")
        )
        want = roc_auc_score(lab["Cardiomegaly_y"], lab["Cardiomegaly_s"])
        got = auc.query(f"model == 'drnet' and finding == 'Cardiomegaly' and reference == '{ref}'")[
            "auc"
        ].item()
        assert got == pytest.approx(want, abs=1e-12)
    # rank correlation of the 10 models' Cardiomegaly AUCs, consensus vs bc4, equals scipy's
    a = auc[(auc["finding"] == "Cardiomegaly") & (auc["model"] != "Mean")].pivot(
        index="model", columns="reference", values="auc"
    )
    rc = pd.read_csv(demo_out / "chexpert_models" / "rank_correlation.csv")
    row = rc.query(
        "finding == 'Cardiomegaly' and group == 'All Models' and reference_a == 'consensus' "
        "and reference_b == 'bc4'"
    )
    assert row.query("method == 'SRCC'")["statistic"].item() == pytest.approx(
        spearmanr(a["consensus"], a["bc4"]).statistic, abs=1e-12
    )
    assert row.query("method == 'KRCC'")["statistic"].item() == pytest.approx(
        kendalltau(a["consensus"], a["bc4"]).statistic, abs=1e-12
    )

    # agreement: radiologist bc4 vs the consensus on Edema equals scikit-learn's quadratic kappa
    ag = pd.read_csv(demo_out / "chexpert_agreement" / "agreement.csv")
    gt = pd.read_csv(shared_data / "chexpert_test" / "groundtruth.csv").set_index("Study")
    bc4 = pd.read_csv(shared_data / "chexpert_test/radiologists/benchmark_radiologists/bc4.csv").set_index(
        "Study"
    )
    want = cohen_kappa_score(gt["Edema"] * 2, bc4.loc[gt.index, "Edema"] * 2, weights="quadratic")
    assert ag.query("pair == 'consensus:bc4' and finding == 'Edema'")["kappa_w"].item() == pytest.approx(
        want, abs=1e-12
    )
    assert (
        "0 only in consensus, 0 only in bc4" in (demo_out / "chexpert_agreement" / "summary.md").read_text()
    )

    # fusion: majority vote of the 5 ground-truth readers reproduces the published consensus exactly
    fa = pd.read_csv(demo_out / "chexpert_fusion" / "fusion_agreement.csv")
    assert np.allclose(fa.loc[fa["method"] == "mv", "kappa_w"], 1.0)
    fused = pd.read_csv(demo_out / "chexpert_fusion" / "fused_labels.csv")
    ds = fused[(fused["source"] == "fused_ds") & (fused["finding"] == "Edema")].set_index("study_id")["state"]
    ds = ds.map({"negative": 0, "uncertain": 1, "positive": 2})
    want = cohen_kappa_score(gt.loc[ds.index, "Edema"] * 2, ds, weights="quadratic")
    got = fa.query("method == 'ds' and finding == 'Edema'")["kappa_w"].item()
    assert got == pytest.approx(want, abs=1e-12)

    # XQA: point SRCC recomputed from the published AUCs, beside the paper's bootstrap mean
    xa = pd.read_csv(shared_data / "xqa_tables" / "xqa_auc_tables_16_25.csv")
    sub = xa[(xa["dataset"] == "XQA-RR") & (xa["finding"] == "Atelectasis") & (xa["model"] != "Mean")].pivot(
        index="model", columns="reference", values="auc"
    )
    rc = pd.read_csv(demo_out / "xqa_published" / "rank_correlation.csv")
    row = rc.query(
        "dataset == 'XQA-RR' and finding == 'Atelectasis' and group == 'All Models' and "
        "reference_a == 'CR' and reference_b == 'Rep1' and method == 'SRCC'"
    )
    # SRCC by the XQA-Chest paper's formula (the default variant): 1 - 6 sum d^2 / (n (n^2 - 1)) on average ranks
    d = sub["CR"].rank().to_numpy() - sub["Rep1"].rank().to_numpy()
    n = len(d)
    assert row["variant"].item() == "formula"
    assert row["statistic"].item() == pytest.approx(1 - 6 * (d**2).sum() / (n * (n**2 - 1)), abs=1e-12)
    assert abs(row["statistic"].item() - spearmanr(sub["CR"], sub["Rep1"]).statistic) < 0.01  # ties: close
    assert row["paper_mean"].item() == pytest.approx(0.80)

    # localization: the ChestX-ray14 article's synthetic study, its printed output kept verbatim
    from cxreval.localization import simulate_localization

    assert (demo_out / "localization_synthetic" / "synth_output.txt").read_text() == "\n".join(
        simulate_localization(0).lines
    ) + "\n"


@pytest.mark.slow
def test_demo_numbers_equal_the_analysis_commands(
    demo_out: Path, shared_data: Path, metadata_dir: Path, tmp_path: Path
) -> None:
    """``cxreval classify``, ``rank`` and ``agree`` on the same inputs (written to files) give the demo's values."""
    from cxreval.labels import read_wide_labels, write_labels

    cx = shared_data / "chexpert_test"
    preds = tmp_path / "preds"
    preds.mkdir()
    for m in CHEXPERT_MODELS:  # the wide files, named <model>.csv as `cxreval classify -p DIR` expects
        (preds / f"{m}.csv").write_bytes(
            (cx / f"example_models/predictions/standard/{m}_predictions.csv").read_bytes()
        )
    files = {
        "consensus": "groundtruth.csv",
        "bc4": "radiologists/benchmark_radiologists/bc4.csv",
        "chexpert_labeler": "labeler/chexpert_labels.csv",
    }
    parts = []
    for src, rel in files.items():
        t = read_wide_labels(cx / rel, source=src, id_column="Study").table
        t.attrs = {}
        parts.append(t)
    labels = write_labels(pd.concat(parts, ignore_index=True), tmp_path / "labels.csv")

    common = [
        "--n-resamples",
        "20",
        "--seed",
        "0",
        "-p",
        str(preds),
        "-l",
        str(labels),
        "-r",
        "consensus",
        "-r",
        "bc4",
        "-f",
        "Cardiomegaly",
        "-f",
        "Edema",
        "-f",
        "Atelectasis",
    ]
    assert main(["classify", "--out", str(tmp_path / "classify"), *common]) == 0
    assert main(["rank", "--out", str(tmp_path / "rank"), *common]) == 0
    assert (
        main(
            [
                "agree",
                "--labels",
                str(labels),
                "--pairs",
                "consensus:bc4,consensus:chexpert_labeler",
                "--findings",
                "Cardiomegaly,Edema,Atelectasis",
                "--intersect",
                "--out",
                str(tmp_path / "agree"),
            ]
        )
        == 0
    )

    key = ["model", "finding", "reference"]
    demo = pd.read_csv(demo_out / "chexpert_models" / "auc.csv").set_index(key)
    cli = pd.read_csv(tmp_path / "classify" / "auc.csv")
    cli = cli[~cli["finding"].isin(["macro", "micro"])].set_index(key)  # averages over other finding sets
    assert len(cli) == 10 * 3 * 2 + 3 * 2  # 10 models and their mean, 3 findings, 2 references
    np.testing.assert_allclose(cli["auc"], demo.loc[cli.index, "auc"], rtol=0, atol=1e-12)

    key = ["finding", "group", "reference_a", "reference_b", "method"]
    demo = pd.read_csv(demo_out / "chexpert_models" / "rank_correlation.csv").set_index(key)
    cli = pd.read_csv(tmp_path / "rank" / "rank_correlation.csv")
    cli = cli[cli["finding"].isin(["Cardiomegaly", "Edema", "Atelectasis"])].set_index(key)
    assert len(cli) >= 6
    np.testing.assert_allclose(cli["statistic"], demo.loc[cli.index, "statistic"], rtol=0, atol=1e-12)

    key = ["pair", "finding"]
    demo = pd.read_csv(demo_out / "chexpert_agreement" / "agreement.csv").set_index(key)
    cli = pd.read_csv(tmp_path / "agree" / "agreement.csv")
    cli = cli[~cli["finding"].isin(["macro", "micro"])].set_index(key)
    assert len(cli) == 2 * 3
    for col in ("kappa_w", "kappa_low", "kappa_high", "f1_w", "f1_low", "f1_high", "n"):
        np.testing.assert_allclose(cli[col], demo.loc[cli.index, col], rtol=0, atol=1e-12, err_msg=col)


@pytest.mark.slow
def test_demo_iqa_is_metric_vs_metric(demo_out: Path) -> None:
    from scipy.stats import kendalltau, spearmanr

    from cxreval.io.images import read_image
    from cxreval.iqa import get_metric

    d = demo_out / "iqa"
    scores = pd.read_csv(d / "scores" / "scores.csv")
    man = pd.read_csv(d / "manifest.csv")
    assert sorted(scores["metric"].unique()) == sorted(IQA_METRICS)
    assert len(scores) == len(man) * len(IQA_METRICS) == 2 * 6 * len(IQA_METRICS)
    # a score equals the metric on the written images (what `cxreval iqa score` reads)
    r = scores.iloc[0]
    assert not Path(
        r["reference"]
    ).is_absolute()  # relative to the folder, which moved into place after the run
    ref, tst = read_image(d / r["reference"]), read_image(d / r["test"])
    assert ref.image.shape == (512, 512)
    assert r["value"] == get_metric(r["metric"])(ref.image, tst.image, data_range=ref.data_range)
    # each metric's ranking of the degradations: mean over images, oriented (GMSD: lower is better)
    rk = pd.read_csv(d / "comparison" / "degradation_ranking.csv")
    for m, sign in (("psnr", -1), ("gmsd", 1)):
        mean = scores[scores["metric"] == m].groupby("degradation")["value"].mean()
        want = (sign * mean).rank(method="average")
        got = rk[rk["metric"] == m].set_index("degradation")["rank"]
        pd.testing.assert_series_equal(got.sort_index(), want.sort_index(), check_names=False)
    # metric-vs-metric correlations equal scipy's on the oriented per-degradation means
    mvm = pd.read_csv(d / "comparison" / "metric_vs_metric.csv")
    wide = scores.pivot_table(index="degradation", columns="metric", values="value", aggfunc="mean")
    row = mvm.query("metric_a == 'psnr' and metric_b == 'gmsd' and over == 'degradations'")
    assert row["srcc"].item() == pytest.approx(spearmanr(wide["psnr"], -wide["gmsd"]).statistic, abs=1e-12)
    assert row["krcc"].item() == pytest.approx(kendalltau(wide["psnr"], -wide["gmsd"]).statistic, abs=1e-12)
    # no expert ratings exist: nothing like a z-MOS is written, and the report says what would produce it
    assert not list(d.rglob("zmos*")) and not list(d.rglob("metric_agreement*"))
    page = (demo_out / "report.html").read_text()
    assert "IQA: metrics against expert quality ratings (z-MOS)" in page
    assert "cxreval iqa agree --scores S --ratings R --out OUT" in page
    assert "metric vs metric" in page


@pytest.mark.slow
def test_demo_box_overlays_on_real_radiographs(demo_out: Path, metadata_dir: Path) -> None:
    from scipy import ndimage

    from cxreval.localization._upsampling import upsample

    d = demo_out / "localization_real_boxes"
    ov = pd.read_csv(d / "overlays.csv")
    assert ov["study_id"].nunique() == 12
    # reference boxes are BBox_List_2017's x, y, x + w, y + h, read independently
    raw = pd.read_csv(metadata_dir / "BBox_List_2017.csv.gz").iloc[:, :6]
    raw.columns = ["image_id", "finding", "x", "y", "w", "h"]
    raw = raw[raw["image_id"].isin(set(ov["study_id"]))]
    ref = ov[ov["kind"] == "reference"]
    assert len(ref) == len(raw)
    np.testing.assert_allclose(np.sort(ref["x_max"].to_numpy()), np.sort((raw["x"] + raw["w"]).to_numpy()))
    # detected boxes: the components of the upsampled map (min-max scaled to 0..255) above 180
    with np.load(d / "overlay_heatmaps.npz") as z:
        maps = dict(zip(z["keys"].tolist(), z["maps"]))
    for key, sub in list(ov.groupby("heatmap_key"))[:3]:
        up = upsample(maps[key], (1024, 1024))
        up = 255 * (up - up.min()) / (up.max() - up.min())
        lab, _ = ndimage.label(up > 180, structure=np.ones((3, 3)))
        want = sorted((s[1].start, s[0].start, s[1].stop, s[0].stop) for s in ndimage.find_objects(lab))
        got = sorted(
            map(
                tuple,
                sub[sub["kind"] == "detected (T_h=180)"][["x_min", "y_min", "x_max", "y_max"]]
                .astype(int)
                .to_numpy()
                .tolist(),
            )
        )
        assert got == want, key
    # the overlays are embedded in the report (self-contained), downsampled
    png = (d / ov["image_file"].iloc[0]).read_bytes()
    assert int.from_bytes(png[16:20], "big") == 512
    page = (demo_out / "report.html").read_text()
    assert page.count("data:image\\u002fpng;base64,") >= 12  # Plotly's JSON escapes "/"
    loc = pd.read_csv(d / "localization.csv")
    assert set(loc["localizer"]) == {"heatmap", "tiny box", "whole image"}
    assert set(loc.loc[loc["localizer"] == "heatmap", "upsampling"]) == {"bilinear"}


def _browser():  # the committed browser helpers of tests/report
    spec = importlib.util.spec_from_file_location(
        "_cxreval_browser", ROOT / "tests/report/test_report_browser.py"
    )
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.slow
@pytest.mark.browser
def test_demo_report_renders_in_headless_chromium(demo_out: Path) -> None:
    browser = _browser()
    art = ROOT / "test-artifacts"
    out = browser.open_in_chromium(
        demo_out / "report.html", art / "report_demo.png", section_shots=art / "report_demo_sections"
    )
    page = (demo_out / "report.html").read_text()
    n_figures = page.count('class="plotly-graph-div"')
    assert n_figures >= 20
    browser.check_page(out, n_figures)
    analyses = [sid for sid in out["facts"]["sections"] if sid not in ("not-available", "methods")]
    assert (
        out["facts"]["key_lines"] == len(analyses) == len(REAL_SECTIONS) + 4
    )  # AUCs and rankings; IQA scores too
    assert len(out["shots"]) == len(out["facts"]["sections"])


@pytest.mark.slow
def test_demo_records_each_section_and_the_run(demo_out: Path) -> None:
    from cxreval.outputs._run_record import read_run, sha256_file

    top = read_run(demo_out)
    assert (
        top["status"] == "success"
        and "report.html" in top["files"]
        and "chexpert_models/auc.csv" in top["files"]
    )
    rec = read_run(demo_out / "chexpert_models")
    assert rec["n_resamples"] == 20 and rec["confidence_level"] == 0.95 and rec["ci_method"] == "percentile"
    assert "uncertain labels: exclude" in rec["label_policy"]
    assert [f for f in rec["findings"] if f not in ("macro", "micro")] == [
        "Atelectasis",
        "Cardiomegaly",
        "Consolidation",
        "Edema",
        "Effusion",
    ]
    assert set(rec["files"]) >= {"auc.csv", "rankings.csv", "rank_correlation.csv", "summary.md"}
    inp = {Path(i["path"]).name: i["sha256"] for i in rec["inputs"]}
    assert "groundtruth.csv" in inp and len(inp) == 11 + len(CHEXPERT_MODELS)
    gt = next(Path(i["path"]) for i in rec["inputs"] if i["path"].endswith("groundtruth.csv"))
    assert inp["groundtruth.csv"] == sha256_file(gt)
    methods = (demo_out / "report.html").read_text().split('id="methods"')[1]
    assert inp["groundtruth.csv"] in methods and "bootstrap resamples" in methods


def test_demo_without_split_lists_says_so(
    tmp_path: Path, metadata_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "mirror").mkdir()
    code = main(
        [
            "demo",
            "--out",
            str(tmp_path / "out"),
            "--section",
            "audit",
            "--data-mirror",
            str(tmp_path / "mirror"),
            "--cache-dir",
            str(metadata_dir.parent),
            "--offline",
            "--json",
        ]
    )
    assert code == 0
    (sec,) = json.loads(capsys.readouterr().out)["sections"]
    assert sec["status"] == "built"
    assert sec["reason"] == "built without: ChestX-ray14 audit: official split and patient leakage"
    audit = json.loads((tmp_path / "out" / "chestxray14_audit" / "audit.json").read_text())
    assert audit["split"] is None
    page = (tmp_path / "out" / "report.html").read_text()
    whole = page.split('id="key-findings"')[1].split("</section>")[0]
    missing = re.search(r'<div class="note missing">.*?</div>', whole, re.S)
    assert (
        missing and "ChestX-ray14 audit: official split and patient leakage" in missing[0]
    )  # on the first screen
    panel = whole.replace(missing[0], "")
    assert (
        "split and leakage not checked" in panel
        and "no patient" not in panel
        and "leak"
        not in panel.replace("leakage not checked", "").replace(
            "patient leakage between splits is unknown", ""
        )
    )
    assert "official split and patient leakage" in page.split('id="not-available"')[1]
    assert "cxreval demo --out cxreval-demo-audit --section audit" in page


@pytest.mark.slow
def test_suggested_commands_run_as_written(
    shared_data: Path, metadata_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each demo command the report suggests for a missing analysis runs exactly as written (data from the
    mirror named by $CXREVAL_DATA_MIRROR) and produces that analysis."""
    import shlex

    from cxreval.report._html import find_result_folders, render_report
    from cxreval.report._sections import KINDS, detect_kinds

    empty = tmp_path / "empty"
    empty.mkdir()
    page, _, _ = render_report([empty], allow_empty=True, list_missing_kinds=True)
    cmds = [
        html.unescape(c)
        for c in re.findall(r'<code class="command">([^<]+)</code>', page.split('id="not-available"')[1])
        if "cxreval demo" in c
    ]
    assert len(cmds) == len(KINDS)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("CXREVAL_DATA_MIRROR", str(shared_data))
    for kind, cmd in zip(KINDS, cmds):
        argv = shlex.split(cmd)
        assert main(argv[1:]) == 0, cmd
        out = tmp_path / argv[3]
        kinds = {k.name for f in find_result_folders([out]) for k in detect_kinds(f)}
        assert kind.name in kinds, (cmd, kinds)
    assert main(["data", "fetch"]) == 0  # the command suggested when metadata is missing


def _key_lines(page: str) -> list[tuple[str, str]]:
    """(kind, plain text) of each key-findings line of a report page (without its number)."""
    panel = page.split('<section id="key-findings"', 1)[1].split("</section>", 1)[0]
    return [
        (k, html.unescape(re.sub(r"<[^>]+>", "", re.sub(r'<span class="kf-number">[^<]*</span>\s*', "", t))))
        for k, t in re.findall(r'<li class="kf" data-kind="(\w+)">(.*?)</li>', panel, re.S)
    ]


def test_demo_report_answers_at_a_glance(demo_out: Path) -> None:
    page = (demo_out / "report.html").read_text()
    assert not re.search(
        r"\bseed(?:'s| (?:article|script|document|00\d))", page, re.I
    )  # the papers are named
    assert 'id="fig-headline"' in page.split('<section id="key-findings"', 1)[1].split("</section>", 1)[0]
    lines = _key_lines(page)
    assert lines[0][0] == "classification"  # the headline comparison first
    for kind, text in lines:
        if kind == "classification" and "best of" in text and "cannot be assessed" not in text:
            # a sentence of verdict (is the best model separable, under which reference) and one of numbers (each
            # ΔAUC with its interval; with many references, those in the section's table)
            verdict, numbers = text.split(". ", 1)
            assert re.search(r"\b(?:not )?separable (?:from the runner-up )?under ", verdict), text
            n_delta = len(re.findall(r"ΔAUC vs \S+ −?\d\.\d{3}, 95% CI −?\d\.\d{3} to −?\d\.\d{3}", numbers))
            assert n_delta >= 1 or "more references in the section" in numbers, text
    assert "Bonferroni" in page  # how ΔAUC intervals are made, stated once


def test_demo_kappa_headline_lies_in_its_low_high_range(demo_out: Path) -> None:
    page = (demo_out / "report.html").read_text()
    checked = 0
    for kind, text in _key_lines(page):
        if kind not in ("agreement", "fusion"):
            continue
        # each "κ X ... Low–High κ A to B" pair of one source pair or method
        for k, lo, hi in re.findall(
            r"κ (?:[a-z ]+ )?(−?\d\.\d\d)[,:;] [^.]*?Low–High κ (−?\d\.\d\d) to (−?\d\.\d\d)", text
        ):
            k, lo, hi = (float(v.replace("−", "-")) for v in (k, lo, hi))
            assert lo - 0.005 <= k <= hi + 0.005, text
            checked += 1
    assert checked >= 2
