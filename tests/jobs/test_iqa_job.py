"""``cxreval iqa degrade|score|compare|agree`` are one job each: every command's output folder equals what its
job saves, byte for byte (``run.json`` aside): :func:`cxreval.jobs.degrade_image_folder`,
:func:`~cxreval.jobs.score_pairs_file`, :func:`~cxreval.jobs.compare_metrics_file`,
:func:`~cxreval.jobs.compare_with_experts_files`, and so do the analyses they run on the tables
(:func:`cxreval.iqa.degrade_folder`, :func:`~cxreval.iqa.score_pairs`, ...), which also take a ``ReadResult`` and
a list of tables. The jobs refuse a bad input with the command's message, before any work."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from PIL import Image

from _same_files import assert_same_files
from cxreval.cli.main import main
from cxreval.exceptions import InvalidParameterError, SchemaError
from cxreval.iqa import compare_metrics, compare_with_experts, degrade_folder, score_pairs
from cxreval.jobs import (
    compare_metrics_file,
    compare_with_experts_files,
    degrade_image_folder,
    list_iqa_metrics,
    score_pairs_file,
)
from cxreval.results import ReadReport, ReadResult


def _images(d: Path, n: int = 4) -> Path:
    """``n`` 16-bit 24 x 30 PNGs of distinct smooth content, and a note that is not an image."""
    d.mkdir(parents=True)
    g = np.random.default_rng(5)
    yy, xx = np.mgrid[0:24, 0:30]
    for i in range(n):
        a = 20000 + 8000 * np.sin(xx / (3 + i)) + 6000 * np.cos(yy / 4) + 1500 * g.standard_normal((24, 30))
        Image.fromarray(np.clip(a, 0, 65535).astype(np.uint16)).save(d / f"im{i}.png")
    (d / "notes.txt").write_text("not an image")
    return d


def _saved(res, folder: Path) -> Path:
    folder.mkdir(exist_ok=True)
    res.save(folder)
    return folder


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    """The four commands chained on the images (degrade with --sample and --max-size), by folder name."""
    d = tmp_path_factory.mktemp("iqa_job")
    imgs = _images(d / "imgs")
    deg, sc, cmp_, agr = d / "deg", d / "scores", d / "cmp", d / "agree"
    assert (
        main(
            [
                "iqa",
                "degrade",
                "--images",
                str(imgs),
                "--plan",
                "demo",
                "--sample",
                "3",
                "--max-size",
                "16",
                "-o",
                str(deg),
            ]
        )
        == 0
    )
    assert (
        main(
            ["iqa", "score", "--pairs", str(deg / "pairs.csv"), "--metrics", "psnr,ssim,gmsd", "-o", str(sc)]
        )
        == 0
    )
    assert main(["iqa", "compare", "--scores", str(sc / "scores.csv"), "-o", str(cmp_)]) == 0
    tests = pd.read_csv(sc / "scores.csv")["test"].drop_duplicates()
    g = np.random.default_rng(2)
    ratings = pd.DataFrame(
        [
            {"image": Path(t).stem, "rater": r, "rating": int(g.integers(1, 5))}
            for t in tests
            for r in ("A", "B", "C")
        ]
    )
    ratings.to_csv(d / "ratings.csv", index=False)
    assert (
        main(
            [
                "iqa",
                "agree",
                "--scores",
                str(sc / "scores.csv"),
                "--ratings",
                str(d / "ratings.csv"),
                "--n-resamples",
                "40",
                "--seed",
                "3",
                "-o",
                str(agr),
            ]
        )
        == 0
    )
    return {"root": d, "imgs": imgs, "deg": deg, "scores": sc, "cmp": cmp_, "agree": agr}


def test_degrade_folder_is_the_job_save(folders, tmp_path):
    job = tmp_path / "job"
    res = degrade_image_folder(folders["imgs"], "demo", job, sample=3, max_size=16)
    assert_same_files(folders["deg"], _saved(res, job))
    lib = tmp_path / "lib"
    assert_same_files(
        folders["deg"], _saved(degrade_folder(folders["imgs"], "demo", lib, sample=3, max_size=16), lib)
    )
    assert {"references", "images", "manifest.csv", "pairs.csv", "summary.md"} <= {
        p.name for p in job.iterdir()
    }
    # without --sample / --max-size the folder's other files are listed as skipped, on both paths
    cli, lib = tmp_path / "cli_all", tmp_path / "job_all"
    assert main(["iqa", "degrade", "--images", str(folders["imgs"]), "--plan", "demo", "-o", str(cli)]) == 0
    res = degrade_folder(folders["imgs"], "demo", lib)
    assert res.skipped == ("notes.txt",)
    assert_same_files(cli, _saved(res, lib))


def test_score_is_the_job_save(folders, tmp_path):
    pairs_file = folders["deg"] / "pairs.csv"
    pairs = pd.read_csv(pairs_file, dtype=str)
    assert_same_files(
        folders["scores"], _saved(score_pairs_file(pairs_file, "psnr,ssim,gmsd"), tmp_path / "job")
    )
    res = score_pairs(pairs, "psnr,ssim,gmsd", base_dir=pairs_file.parent)
    assert_same_files(folders["scores"], _saved(res, tmp_path / "lib"))
    # a ReadResult, and the pairs as a list of two tables, give the same scores
    read = ReadResult(pairs, ReadReport(str(pairs_file), len(pairs), len(pairs)))
    half = len(pairs) // 2
    for given in (read, [pairs.iloc[:half], pairs.iloc[half:]]):
        got = score_pairs(given, "psnr,ssim,gmsd", base_dir=pairs_file.parent)
        pd.testing.assert_frame_equal(got.table, res.table)


def test_compare_is_the_job_save(folders, tmp_path):
    scores = pd.read_csv(
        folders["scores"] / "scores.csv",
        dtype={"reference": str, "test": str, "metric": str, "degradation": str, "image": str},
    )
    job = compare_metrics_file(folders["scores"] / "scores.csv")
    assert_same_files(folders["cmp"], _saved(job, tmp_path / "job"))
    res = compare_metrics(scores)
    assert_same_files(folders["cmp"], _saved(res, tmp_path / "lib"))
    read = ReadResult(scores, ReadReport("scores.csv", len(scores), len(scores)))
    for given in (read, [scores.iloc[:10], scores.iloc[10:]]):
        pd.testing.assert_frame_equal(compare_metrics(given).table, res.table)


def test_agree_is_the_job_save(folders, tmp_path):
    scores = pd.read_csv(folders["scores"] / "scores.csv")
    ratings = pd.read_csv(folders["root"] / "ratings.csv")
    job = compare_with_experts_files(
        folders["scores"] / "scores.csv", folders["root"] / "ratings.csv", n_resamples=40, rng=3
    )
    assert_same_files(folders["agree"], _saved(job, tmp_path / "job"))
    res = compare_with_experts(ratings, scores, n_resamples=40, rng=3)
    assert_same_files(folders["agree"], _saved(res, tmp_path / "lib"))
    both = compare_with_experts(
        ReadResult(ratings, ReadReport("r", len(ratings), len(ratings))),
        [scores.iloc[:7], scores.iloc[7:]],
        n_resamples=40,
        rng=3,
    )
    pd.testing.assert_frame_equal(both.table, res.table)


def test_list_is_the_registry():
    from cxreval.iqa import list_metrics

    assert [s.name for s in list_iqa_metrics("full")] == list_metrics(reference="full")
    with pytest.raises(InvalidParameterError, match=r"reference= must be 'full' or 'no'. Got 'half'."):
        list_iqa_metrics("half")


def test_the_jobs_refuse_bad_inputs_before_any_work(folders, tmp_path):
    with pytest.raises(SchemaError, match="is not a folder"):
        degrade_image_folder(folders["imgs"] / "im0.png", "demo", tmp_path / "deg")
    assert not (tmp_path / "deg").exists()
    with pytest.raises(SchemaError, match=r"^--pairs .* does not exist\.$"):
        score_pairs_file(tmp_path / "nope.csv")
    empty = tmp_path / "empty.csv"
    empty.write_text("reference,test\n")
    with pytest.raises(SchemaError, match=r"^--pairs file .* has no rows\.$"):
        score_pairs_file(empty)
    with pytest.raises(SchemaError, match="has no column"):
        compare_metrics_file(empty)
    with pytest.raises(InvalidParameterError, match="scale_min= and scale_max= must be finite"):
        compare_with_experts_files(folders["scores"] / "scores.csv", empty, scale_min=4, scale_max=1)
    with pytest.raises(Exception, match="out="):  # an output folder that is a file: refused before scoring
        score_pairs_file(folders["deg"] / "pairs.csv", "psnr", out=folders["deg"] / "pairs.csv")
