"""IQA results own their files: each writes exactly its FILES with its COLUMNS, renders a summary,
is frozen; the streamed score table is the saved one; compare_metrics equals the functions it runs."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from PIL import Image

from cxreval.exceptions import SchemaError
from cxreval.iqa import (
    DegradeResult,
    ExpertAgreementResult,
    MetricComparisonResult,
    ScoresResult,
    compare_metrics,
    compare_with_experts,
    degrade_folder,
    score_pairs,
)
from cxreval.iqa._comparison import degradation_ranking, metric_rank_agreement
from cxreval.iqa._scoring import score_pair_batches, select_metrics

PLAN = {
    "seed": 1,
    "degradations": [
        {"name": "blur", "transform": "gaussian_blur", "params": {"sigma": 1.0}},
        {"name": "noise", "transform": "gaussian_noise", "params": {"sigma": 0.05}},
        {"name": "gamma", "transform": "gamma", "params": {"gamma": 1.5}},
    ],
}


@pytest.fixture
def degraded(tmp_path: Path) -> tuple[Path, DegradeResult]:
    src = tmp_path / "src"
    src.mkdir()
    rng = np.random.default_rng(0)
    for i in range(3):
        x = np.cumsum(rng.random((48, 48)), axis=1)
        Image.fromarray((x / x.max() * 60000).astype(np.uint16)).save(src / f"im{i}.png")
    (src / "notes.txt").write_text("not an image")
    out = tmp_path / "deg"
    return out, degrade_folder(src, PLAN, out)


def _files(folder: Path) -> set[str]:
    return {p.name for p in folder.iterdir() if p.is_file()}


def _check_save(res, folder: Path, extra: set[str] = frozenset()) -> None:
    folder.mkdir(exist_ok=True)
    written = res.save(folder)
    assert set(written) == set(res.FILES) and {p.name for p in written.values()} == set(res.FILES.values())
    assert _files(folder) == (
        {*res.FILES.values()}
        | {f.replace(".csv", ".parquet") for f in res.FILES.values()}
        | set(extra)
        | {"summary.md"}
    )
    assert (folder / "summary.md").read_text().rstrip("\n") == res.summary().rstrip("\n")
    tables = res.tables()
    for name, file in res.FILES.items():
        assert list(pd.read_csv(folder / file).columns) == list(tables[name].columns), file
    assert set(res.COLUMNS) <= set(res.table.columns)
    assert res.summary().startswith("#") or "|" in res.summary()
    with pytest.raises(dataclasses.FrozenInstanceError):
        res.table = None


def test_degrade_folder_is_self_contained(degraded, tmp_path):
    out, res = degraded
    assert res.skipped == ("notes.txt",)
    assert list(res.manifest.columns) == list(res.COLUMNS)
    assert res.manifest["reference"].tolist()[:3] == ["references/im0.png"] * 3
    assert (res.manifest["source"] == res.manifest["reference"]).all()
    for p in res.manifest[["reference", "test"]].to_numpy().ravel():
        assert not Path(p).is_absolute() and (out / p).is_file()
    _check_save(res, tmp_path / "saved", {"manifest.json"})
    pairs = pd.read_csv(tmp_path / "saved" / "pairs.csv")
    assert (
        list(pairs.columns) == ["image", "reference", "test", "degradation"]
        and pairs["image"].iloc[0] == "im0"
    )
    assert "3 source image(s) x 3 degradation(s) = 9 image(s)" in res.summary()


def test_scores_carry_pairs_columns_and_stream_equals_save(degraded, tmp_path):
    out, deg = degraded
    sel = select_metrics("psnr,gmsd")
    res = score_pairs(deg.pairs(), sel.names, base_dir=out)
    assert isinstance(res, ScoresResult) and (res.selection, res.n_pairs) == (sel, len(deg.pairs()))
    table = res.table
    assert list(table.columns) == ["image", "reference", "test", "metric", "value", "degradation"]
    assert (table.groupby("test")["degradation"].nunique() == 1).all() and len(table) == 18
    assert table["degradation"].tolist()[:2] == ["blur", "blur"] and table["metric"].tolist()[:2] == [
        "psnr",
        "gmsd",
    ]
    _check_save(res, tmp_path / "whole")
    (tmp_path / "streamed").mkdir()
    n = ScoresResult.save_batches(
        tmp_path / "streamed", score_pair_batches(deg.pairs(), sel.names, base_dir=out, batch_size=2)
    )
    assert n == 18
    assert (tmp_path / "whole" / "scores.csv").read_bytes() == (
        tmp_path / "streamed" / "scores.csv"
    ).read_bytes()
    pd.testing.assert_frame_equal(
        pd.read_parquet(tmp_path / "whole" / "scores.parquet"),
        pd.read_parquet(tmp_path / "streamed" / "scores.parquet"),
    )
    assert res.summary() == ScoresResult.describe(9, sel)
    with pytest.raises(SchemaError, match="would be overwritten"):
        score_pairs(deg.pairs().assign(value=1), ["psnr"], base_dir=out)


def test_compare_metrics_is_ranking_and_rank_agreement(degraded, tmp_path):
    out, deg = degraded
    scores = score_pairs(deg.pairs(), ["psnr", "gmsd", "ssim"], base_dir=out).table
    res = compare_metrics(scores)
    assert isinstance(res, MetricComparisonResult)
    pd.testing.assert_frame_equal(res.ranking, degradation_ranking(scores))
    by_deg = metric_rank_agreement(scores, over="degradation")
    got = res.table[res.table["over"] == "degradations"].drop(columns="over").reset_index(drop=True)
    pd.testing.assert_frame_equal(got, by_deg.drop(columns="over"))
    assert list(res.table.columns) == list(res.COLUMNS) and list(res.ranking.columns) == list(
        res.RANKING_COLUMNS
    )
    # gamma 1.5 changes every pixel far more than a 1-pixel blur: PSNR ranks blur above gamma
    psnr = res.ranking[res.ranking["metric"] == "psnr"].set_index("degradation")["rank"]
    assert psnr["blur"] < psnr["gamma"]
    _check_save(res, tmp_path / "cmp")
    with pytest.raises(SchemaError, match="degradation"):
        compare_metrics(scores.drop(columns="degradation"))


def test_expert_agreement_owns_its_files(tmp_path):
    tests = [f"d/t{i}.png" for i in range(6)]
    scores = pd.DataFrame(
        {
            "reference": ["r0", "r0", "r1", "r1", "r2", "r2"],
            "test": tests,
            "metric": "psnr",
            "value": [30.0, 25.0, 28.0, 20.0, 35.0, 22.0],
        }
    )
    ratings = pd.DataFrame(
        [
            {"image": f"t{i}", "rater": r, "rating": v}
            for r, vals in (("A", [3, 2, 3, 1, 4, 2]), ("B", [4, 2, 3, 1, 4, 1]))
            for i, v in enumerate(vals)
        ]
    )
    res = compare_with_experts(ratings, scores, n_resamples=20, rng=0)
    assert isinstance(res, ExpertAgreementResult)
    assert set(res.FILES) == {"zscores", "zmos", "rater_agreement", "metric_agreement", "dropped"}
    assert res.table.loc[0, "metric"] == "psnr" and res.table.loc[0, "n"] == 6
    _check_save(res, tmp_path / "agree")
    assert (
        "## Metrics vs z-MOS (as the XQA-Chest paper's Table 4)" in res.summary()
        and "| psnr |" in res.summary()
    )
