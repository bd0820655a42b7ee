"""score_pairs equals the metrics called on the files read; metric_rank_agreement equals scipy's SRCC/KRCC."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.stats import kendalltau, spearmanr

from cxreval.exceptions import DataUnavailableError, InvalidParameterError, SchemaError
from cxreval.executor._local import SerialExecutor
from cxreval.io.images import read_image, write_image
from cxreval.iqa import get_metric, list_metrics, psnr, score_pairs, ssim
from cxreval.iqa._comparison import metric_rank_agreement, oriented_scores
from cxreval.iqa._feature_similarity import fsim
from cxreval.iqa._gradient import gmsd
from cxreval.iqa._no_reference import piqe
from cxreval.iqa._scoring import MetricSelection, select_metrics


@pytest.fixture
def images(tmp_path):
    """A 16-bit reference, a 16-bit and an 8-bit test image of it (64x64), in tmp_path/img."""
    rng = np.random.default_rng(0)
    x = np.cumsum(rng.random((64, 64)), axis=1)
    x = x / x.max() * 60000
    d = tmp_path / "img"
    ref = write_image(d / "ref.png", x, data_range=65535)
    t16 = write_image(d / "t16.png", np.clip(x + rng.normal(0, 500, x.shape), 0, 65535), data_range=65535)
    t8 = write_image(d / "t8.png", x * 0.9, data_range=65535, dtype="uint8")
    return ref, t16, t8


def test_scores_equal_the_metrics_on_the_images_read(images):
    ref, t16, t8 = images
    got = score_pairs([(ref, t16), (str(ref), str(t8))], "psnr,ssim,piqe").table
    assert list(got.columns) == ["reference", "test", "metric", "value"]
    assert got[["reference", "test", "metric"]].values.tolist() == [
        [str(ref), str(t16), m] for m in ("psnr", "ssim", "piqe")
    ] + [[str(ref), str(t8), m] for m in ("psnr", "ssim", "piqe")]
    r, a, b = read_image(ref).image, read_image(t16).image, read_image(t8).image
    b16 = b * (65535 / 255)  # the 8-bit test image in the reference's range, no rounding
    want = [
        psnr(r, a, data_range=65535),
        ssim(r, a, data_range=65535),
        piqe(a, data_range=65535),
        psnr(r, b16, data_range=65535),
        ssim(r, b16, data_range=65535),
        piqe(b16, data_range=65535),
    ]
    assert got["value"].tolist() == want


def test_table_input_relative_paths_and_options(images, tmp_path):
    ref, t16, _ = images
    table = pd.DataFrame({"reference": ["ref.png"], "test": ["t16.png"], "other": [1]})
    got = score_pairs(
        table, ["FSIM", "gmsd"], base_dir=tmp_path / "img", metric_options={"fsim": {"median": "lower"}}
    ).table
    r, a = read_image(ref).image, read_image(t16).image
    assert got["metric"].tolist() == ["fsim", "gmsd"]  # registry spelling
    assert got["reference"].tolist() == ["ref.png", "ref.png"]
    assert got["value"].tolist() == [
        fsim(r, a, data_range=65535, median="lower"),
        gmsd(r, a, data_range=65535),
    ]
    assert got["value"].iloc[0] != fsim(r, a, data_range=65535)


def test_explicit_data_range_uses_the_values_as_read(images):
    ref, t16, _ = images
    got = score_pairs([(ref, t16)], ["psnr"], data_range=4095 * 16).table
    r, a = read_image(ref).image, read_image(t16).image
    assert got["value"].item() == psnr(r, a, data_range=4095 * 16)
    with pytest.raises(InvalidParameterError, match="'data_range' parameter of score_pairs"):
        score_pairs([(ref, t16)], ["psnr"], data_range=0)


def test_executor_is_the_seam(images):
    ref, t16, t8 = images
    seen = []

    class Recording(SerialExecutor):
        def map(self, func, items):
            seen.extend(items)
            return [func(x) for x in reversed(items)][::-1]

    serial = score_pairs([(ref, t16), (ref, t8)], ["psnr", "gmsd"]).table
    pd.testing.assert_frame_equal(
        score_pairs([(ref, t16), (ref, t8)], ["psnr", "gmsd"], executor=Recording()).table, serial
    )
    assert [i for i, _, _ in seen] == [0, 1]


def test_select_metrics():
    every = list_metrics()
    sel = select_metrics("all")  # a MetricSelection, not a tuple
    names, skipped = list(sel.names), list(sel.skipped)
    assert names == [n for n in every if not get_metric(n).needs_weights]
    assert skipped == [n for n in every if get_metric(n).needs_weights] and "lpips" in skipped
    assert list(select_metrics("full").names) == [n for n in names if get_metric(n).reference == "full"]
    assert select_metrics(" psnr , SSIM,") == MetricSelection(("psnr", "ssim"), ())
    assert select_metrics(["lpips"]) == MetricSelection(("lpips",), ())  # named explicitly: used
    with pytest.raises(InvalidParameterError, match=r"Unknown IQA metric 'psnrr'.*Did you mean 'psnr'"):
        select_metrics("psnrr")
    with pytest.raises(InvalidParameterError, match=r"names \['psnr'\] more than once"):
        select_metrics(["psnr", "PSNR"])
    with pytest.raises(InvalidParameterError, match="names no metric"):
        select_metrics(" , ")
    with pytest.raises(InvalidParameterError, match="must hold metric names"):
        select_metrics(["psnr", 3])
    with pytest.raises(InvalidParameterError, match="must be 'all', 'full', 'no', a comma-separated"):
        select_metrics(5)


def test_errors_name_the_pair_and_file(images, tmp_path):
    ref, t16, _ = images
    with pytest.raises(
        DataUnavailableError, match=r"pair 1, test image: Image file .*missing.png does not exist"
    ):
        score_pairs([(ref, t16), (ref, tmp_path / "missing.png")], ["psnr"])
    bad = tmp_path / "bad.png"
    bad.write_text("not an image")
    with pytest.raises(SchemaError, match=r"pair 0, reference image: .*bad.png: cannot be read as an image"):
        score_pairs([(bad, t16)], ["psnr"])
    small = write_image(tmp_path / "small.png", np.zeros((32, 32)), data_range=1.0)
    with pytest.raises(
        SchemaError,
        match=r"pair 0: reference .*ref.png \(64, 64\) and test .*small.png \(32, 32\) "
        r"differ in shape",
    ):
        score_pairs([(ref, small)], ["psnr"])
    with pytest.raises(InvalidParameterError, match=r"pair 0 \(.*ref.png, .*t16.png\): iw_ssim: .*at least"):
        score_pairs([(ref, t16)], ["psnr", "iw_ssim"])
    with pytest.raises(SchemaError, match=r"pair 0 has no test image path \(got nan\)"):
        score_pairs(pd.DataFrame({"reference": [str(ref)], "test": [np.nan]}), ["psnr"])
    with pytest.raises(SchemaError, match=r"pairs is missing required column\(s\) \['test'\]"):
        score_pairs(pd.DataFrame({"reference": [str(ref)]}), ["psnr"])
    with pytest.raises(SchemaError, match="item 0 must be a \\(reference, test\\) pair"):
        score_pairs([str(ref)], ["psnr"])
    with pytest.raises(InvalidParameterError, match=r"options for \['ssim'\], which are not among"):
        score_pairs([(ref, t16)], ["psnr"], metric_options={"ssim": {"downsample": True}})
    with pytest.raises(InvalidParameterError, match="Unknown IQA metric 'ssimm'"):
        score_pairs([(ref, t16)], "psnr,ssimm")


@pytest.fixture
def scores():
    rng = np.random.default_rng(3)
    q = rng.normal(size=12)  # latent quality of 12 test images from 3 degradations x 4 images
    rows = []
    for i in range(12):
        deg = f"d{i % 3}"
        for m, v in (
            ("psnr", 30 + 5 * q[i] + rng.normal()),
            ("gmsd", 0.1 - 0.02 * q[i] + 0.01 * rng.normal()),
            ("ssim", 0.9 + 0.02 * rng.normal()),
        ):
            rows.append(
                {"reference": f"r{i % 4}", "test": f"t{i}", "degradation": deg, "metric": m, "value": v}
            )
    return pd.DataFrame(rows)


def test_rank_agreement_equals_scipy(scores):
    got = metric_rank_agreement(scores)
    assert got[["metric_a", "metric_b"]].values.tolist() == [
        ["psnr", "gmsd"],
        ["psnr", "ssim"],
        ["gmsd", "ssim"],
    ]
    assert set(got["over"]) == {"test"} and set(got["n"]) == {12}
    wide = scores.pivot(index="test", columns="metric", values="value")
    row = got.iloc[0]
    assert row["srcc"] == pytest.approx(spearmanr(wide["psnr"], -wide["gmsd"]).statistic, abs=1e-12)
    assert row["krcc"] == pytest.approx(kendalltau(wide["psnr"], -wide["gmsd"]).statistic, abs=1e-12)
    assert row["srcc"] > 0.5  # oriented: the metrics agree
    raw = metric_rank_agreement(scores, orient=False)
    assert raw["srcc"].iloc[0] == pytest.approx(-row["srcc"], abs=1e-12)
    # over degradations: mean oriented score per degradation
    by_deg = metric_rank_agreement(scores, over="degradation", metrics=["ssim", "psnr"])
    means = scores.assign(q=oriented_scores(scores)).groupby(["degradation", "metric"])["q"].mean().unstack()
    assert by_deg[["metric_a", "metric_b", "over", "n"]].values.tolist() == [
        ["ssim", "psnr", "degradation", 3]
    ]
    assert by_deg["srcc"].item() == pytest.approx(
        spearmanr(means["ssim"], means["psnr"]).statistic, abs=1e-12
    )
    assert by_deg["krcc"].item() == pytest.approx(
        kendalltau(means["ssim"], means["psnr"]).statistic, abs=1e-12
    )


def test_rank_agreement_missing_units_constant_metric_and_errors(scores):
    part = scores.drop(scores.index[(scores["metric"] == "gmsd") & scores["test"].isin(["t0", "t5"])])
    got = metric_rank_agreement(part, metrics=["psnr", "gmsd"])
    wide = part.pivot(index="test", columns="metric", values="value").dropna()
    assert got["n"].item() == 10
    assert got["srcc"].item() == pytest.approx(spearmanr(wide["psnr"], -wide["gmsd"]).statistic, abs=1e-12)
    flat = scores.assign(value=np.where(scores["metric"] == "ssim", 0.5, scores["value"]))
    assert np.isnan(metric_rank_agreement(flat, metrics=["psnr", "ssim"])["srcc"].item())
    with pytest.raises(SchemaError, match=r"no values for metric\(s\) \['vif'\]"):
        metric_rank_agreement(scores, metrics=["psnr", "vif"])
    with pytest.raises(SchemaError, match=r"missing required column\(s\) \['degradation'\]"):
        metric_rank_agreement(scores.drop(columns="degradation"), over="degradation")
    with pytest.raises(SchemaError, match="row 2 has 'high'"):
        metric_rank_agreement(
            scores.astype({"value": object}).assign(value=lambda d: d["value"].where(d.index != 2, "high"))
        )
    with pytest.raises(InvalidParameterError, match="direction of metric 'mine' is unknown"):
        metric_rank_agreement(scores.replace({"metric": {"ssim": "mine"}}))
    assert len(metric_rank_agreement(scores.replace({"metric": {"ssim": "mine"}}), orient=False)) == 3


class BadType:
    def __repr__(self) -> str:
        return "BadType()"


@pytest.mark.parametrize(
    "param", ["pairs", "metrics", "data_range", "base_dir", "metric_options", "executor"]
)
def test_score_pairs_rejects_bad_types(images, param):
    ref, t16, _ = images
    kwargs = {"pairs": [(ref, t16)], "metrics": ["psnr"], param: BadType()}
    with pytest.raises((InvalidParameterError, SchemaError), match=param):
        score_pairs(**kwargs)


@pytest.mark.parametrize("param", ["scores", "over", "metrics", "orient"])
def test_metric_rank_agreement_rejects_bad_types(scores, param):
    kwargs = {"scores": scores, param: BadType()}
    with pytest.raises(InvalidParameterError, match=f"'{param}' parameter of metric_rank_agreement"):
        metric_rank_agreement(**kwargs)
    with pytest.raises(InvalidParameterError, match="'scores' parameter of oriented_scores"):
        oriented_scores(BadType())
