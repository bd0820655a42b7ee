"""A reader study planned from a pilot: the power grid is mrmc_sample_size's, the design the fewest readings, the
cases a seeded sample at the pilot's prevalence, and the study file one the reader app opens."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from cxreval.cli.main import main
from cxreval.exceptions import InvalidParameterError, SchemaError
from cxreval.labels import validate_label_table
from cxreval.mrmc import mrmc_sample_size, or_analysis
from cxreval.planning import CASE_GRID, plan_reader_study


def _pilot(path: Path, *, extra_cases: int = 0) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Van Dyke's ratings as a pilot, its truth as labels of source 'truth' (plus unread labelled cases)."""
    d = pd.read_csv(path)
    ratings = pd.DataFrame({"reader": "R" + d["reader"].astype(str), "modality": "T" + d["treatment"].astype(str),
                            "study_id": "c" + d["case"].astype(str).str.zfill(4), "finding": "Effusion",
                            "rating": d["rating"].astype(float)})
    cases = d.drop_duplicates("case")
    ids = list("c" + cases["case"].astype(str).str.zfill(4)) + [f"n{k:04d}" for k in range(extra_cases)]
    truth = list(cases["truth"]) + [k % 3 == 0 for k in range(extra_cases)]
    labels = pd.DataFrame({"study_id": ids, "patient_id": ["p" + i for i in ids], "finding": "Effusion",
                           "source": "truth", "state": np.where(truth, "positive", "negative")})
    return ratings, validate_label_table(labels)


@pytest.fixture(scope="module")
def vandyke_path(shared_data: Path) -> Path:
    return shared_data / "mrmc" / "vandyke.csv"


def test_power_grid_is_mrmc_sample_size_of_the_pilot(vandyke_path) -> None:
    ratings, labels = _pilot(vandyke_path, extra_cases=600)
    res = plan_reader_study(ratings, labels, reference="truth", rng=0)
    sys.path.insert(0, str(Path(__file__).parents[1] / "mrmc"))
    from conftest import read_study

    study = read_study(vandyke_path)
    direct = mrmc_sample_size(or_analysis(study.ratings, study.truth), pilot_cases=114, n_readers=[4, 6, 8, 10, 12],
                              n_cases=list(CASE_GRID))
    pd.testing.assert_frame_equal(res.sample_size.reset_index(drop=True), direct.power.reset_index(drop=True))
    m = res.minimum_cases
    assert (m["total_readings"] == m["n_readers"] * m["n_cases"] * 2).all()
    reach = m.dropna(subset=["n_cases"])
    assert res.n_readers * res.n_cases == (reach["n_readers"] * reach["n_cases"]).min()
    assert (res.n_readers, res.n_cases) == (8, 188)  # RJafroc's dataset02 sizes: 10 readers need 163-165 cases
    # the cases: a sample of the requested size at the pilot's prevalence (45 of 114), no study twice
    assert len(res.table) == res.n_cases and res.table["study_id"].is_unique
    truth = labels.set_index("study_id")["state"]
    assert (truth.loc[res.table["study_id"]] == 2).sum() == round(188 * 45 / 114)
    again = plan_reader_study(ratings, labels, reference="truth", rng=0)
    pd.testing.assert_frame_equal(res.table, again.table)
    assert not plan_reader_study(ratings, labels, reference="truth", rng=1).table.equals(res.table)


def test_fewer_cases_than_needed_are_all_listed_and_said(vandyke_path) -> None:
    ratings, labels = _pilot(vandyke_path)
    res = plan_reader_study(ratings, labels, reference="truth", rng=0)
    assert len(res.table) == 114  # every labelled case, not a silent truncation to a smaller design
    assert any("fewer than the" in n for n in res.notes)
    assert "fewer than the" in res.summary()


def test_no_design_reaches_the_power(vandyke_path) -> None:
    ratings, labels = _pilot(vandyke_path)
    res = plan_reader_study(ratings, labels, reference="truth", n_readers=[2, 3], effect=0.01, rng=0)
    assert res.n_readers is None and res.study == "" and res.table.empty
    assert "no reader count of the grid reaches the power" in res.summary()


def test_study_file_opens_in_the_reader_app(vandyke_path, tmp_path: Path) -> None:
    from PIL import Image

    from cxreval.reader.study import load_study

    ratings, labels = _pilot(vandyke_path)
    (tmp_path / "imgs").mkdir()
    for sid in labels["study_id"].unique():
        Image.fromarray(np.full((8, 8), 128, np.uint8)).save(tmp_path / "imgs" / f"{sid}.png")
    ratings.to_csv(tmp_path / "pilot.csv", index=False)
    labels.to_csv(tmp_path / "labels.csv", index=False)
    out = tmp_path / "plan"
    code = main(["plan", "--pilot", str(tmp_path / "pilot.csv"), "-l", str(tmp_path / "labels.csv"), "--reference",
                 "truth", "--images", str(tmp_path / "imgs"), "--seed", "4", "--washout-days", "14", "-o", str(out)])
    assert code == 0
    spec = load_study(out / "study.yaml")
    assert spec.rating.scale == "five_point" and [s.name for s in spec.sessions] == ["T1", "T2"]
    assert spec.washout_days == 14
    assert len(list((out / "images").iterdir())) == 114
    lib = plan_reader_study(ratings, labels, reference="truth", washout_days=14, images=tmp_path / "imgs", rng=4)
    lib.save(tmp_path / "lib")
    for name in ("images.csv", "sample_size.csv", "minimum_cases.csv", "study.yaml", "summary.md"):
        assert (out / name).read_bytes() == (tmp_path / "lib" / name).read_bytes(), name


def test_bad_pilots_are_refused(vandyke_path, tmp_path: Path, capsys) -> None:
    ratings, labels = _pilot(vandyke_path)
    with pytest.raises(InvalidParameterError, match="must rate two modalities.*rates 1"):
        plan_reader_study(ratings[ratings["modality"] == "T1"], labels, reference="truth")
    with pytest.raises(SchemaError, match="truht"):
        plan_reader_study(ratings, labels, reference="truht")
    two = pd.concat([ratings, ratings.assign(finding="Edema")])
    with pytest.raises(InvalidParameterError, match="name the one to plan for"):
        plan_reader_study(two, labels, reference="truth")
    ratings.to_csv(tmp_path / "pilot.csv", index=False)
    labels.to_csv(tmp_path / "labels.csv", index=False)
    args = ["plan", "--pilot", str(tmp_path / "pilot.csv"), "-l", str(tmp_path / "labels.csv"), "--reference",
            "truth"]
    assert main([*args, "--budget", "50", "-o", str(tmp_path / "a")]) == 2
    assert "--pilot plans a reader study; --budget belongs to a relabelling plan" in capsys.readouterr().err
    assert main([*args, "--n-readers", "4,x", "-o", str(tmp_path / "b")]) == 2
    assert "--n-readers must be whole numbers" in capsys.readouterr().err
    assert main(["plan", "-l", str(tmp_path / "labels.csv"), "--reference", "truth", "-o", str(tmp_path / "c")]) == 2
    assert "Missing option --predictions" in capsys.readouterr().err
    assert not any((tmp_path / x).exists() for x in "abc")
