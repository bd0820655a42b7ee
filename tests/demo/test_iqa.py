"""The demo's IQA section writes what `cxreval iqa degrade`, `iqa score` and `iqa compare` write.

The section block-averages real radiographs into ``references/`` and writes its plan as ``plan.yaml``; a user
with those two inputs runs the three commands below. Every table of the three results' ``FILES`` (manifest,
pairs, scores, degradation_ranking, metric_vs_metric; CSV and Parquet) must be equal, exactly, and so must
the degraded images.
"""

from __future__ import annotations

from pathlib import Path

from cxreval.cli.main import main
from cxreval.iqa import DegradeResult, MetricComparisonResult, ScoresResult

from .conftest import assert_same_tables

METRICS = ("psnr", "gmsd")


def test_iqa_section_equals_degrade_score_compare(demo_section, tmp_path: Path) -> None:
    demo = demo_section("iqa", iqa_metrics=list(METRICS), iqa_images=2)
    refs = demo / "references"
    assert len(list(refs.glob("*.png"))) == 2
    deg, sc, cmp = tmp_path / "deg", tmp_path / "scores", tmp_path / "cmp"
    assert main(["iqa", "degrade", "--images", str(refs), "--plan", "demo", "-o", str(deg)]) == 0
    assert (
        main(
            ["iqa", "score", "--pairs", str(deg / "pairs.csv"), "--metrics", ",".join(METRICS), "-o", str(sc)]
        )
        == 0
    )
    assert main(["iqa", "compare", "--scores", str(sc / "scores.csv"), "-o", str(cmp)]) == 0

    assert_same_tables(demo, deg, DegradeResult.FILES.values())
    assert_same_tables(demo / "scores", sc, ScoresResult.FILES.values())
    assert_same_tables(demo / "comparison", cmp, MetricComparisonResult.FILES.values())
    images = sorted(p.relative_to(demo).as_posix() for p in (demo / "images").iterdir())
    assert images and images == sorted(p.relative_to(deg).as_posix() for p in (deg / "images").iterdir())
    assert all((demo / f).read_bytes() == (deg / f).read_bytes() for f in images)
