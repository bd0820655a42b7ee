"""A reader study planned from a pilot: the power grid is mrmc_sample_size's, the design the fewest readings, the
cases a seeded sample at the pilot's prevalence (of the studies with an image when a folder is given), and the study
file one the reader app opens, its sessions in reading order."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from _factories import vandyke_pilot
from cxreval.exceptions import InvalidParameterError, SchemaError
from cxreval.jobs import CASE_GRID, plan_reader_study
from cxreval.mrmc import mrmc_sample_size, or_analysis


@pytest.fixture(scope="module")
def vandyke_path(shared_data: Path) -> Path:
    return shared_data / "mrmc" / "vandyke.csv"


def _write_images(folder: Path, study_ids) -> Path:
    from PIL import Image

    folder.mkdir()
    for sid in study_ids:
        Image.fromarray(np.full((8, 8), 128, np.uint8)).save(folder / f"{sid}.png")
    return folder


def test_power_grid_is_mrmc_sample_size_of_the_pilot(vandyke_path) -> None:
    ratings, labels = vandyke_pilot(vandyke_path, extra_cases=600)
    res = plan_reader_study(ratings, labels, reference="truth", rng=0)
    cube = ratings.pivot_table(index=["modality", "reader"], columns="study_id", values="rating")
    truth = (labels.set_index("study_id")["state"] == 2).astype(int).loc[cube.columns].to_numpy()
    direct = mrmc_sample_size(
        or_analysis(cube.to_numpy().reshape(2, 5, 114), truth),
        pilot_cases=114,
        n_readers=[4, 6, 8, 10, 12],
        n_cases=list(CASE_GRID),
    )
    pd.testing.assert_frame_equal(res.sample_size.reset_index(drop=True), direct.power.reset_index(drop=True))
    m = res.minimum_cases
    assert (m["total_readings"] == m["n_readers"] * m["n_cases"] * 2).all()
    reach = m.dropna(subset=["n_cases"])
    assert res.n_readers * res.n_cases == (reach["n_readers"] * reach["n_cases"]).min()
    assert (res.n_readers, res.n_cases) == (
        8,
        188,
    )  # RJafroc's dataset02 sizes: 10 readers need 163-165 cases
    assert "the fewest readings" in res.summary() and "Hillis, Obuchowski and Berbaum" in res.summary()


def test_cases_are_a_seeded_sample_at_the_pilots_prevalence(vandyke_path) -> None:
    ratings, labels = vandyke_pilot(vandyke_path, extra_cases=600)
    res = plan_reader_study(ratings, labels, reference="truth", rng=0)
    assert len(res.table) == res.n_cases == 188 and res.table["study_id"].is_unique
    truth = labels.set_index("study_id")["state"]
    assert (truth.loc[res.table["study_id"]] == 2).sum() == round(188 * 45 / 114)
    again = plan_reader_study(ratings, labels, reference="truth", rng=0)
    pd.testing.assert_frame_equal(res.table, again.table)
    assert res.study == again.study
    assert not plan_reader_study(ratings, labels, reference="truth", rng=1).table.equals(res.table)


def test_fewer_cases_than_needed_are_all_listed_and_said(vandyke_path) -> None:
    ratings, labels = vandyke_pilot(vandyke_path)
    res = plan_reader_study(ratings, labels, reference="truth", rng=0)
    assert len(res.table) == 114  # every labelled case, not a silent truncation to a smaller design
    assert any("fewer than the" in n for n in res.notes)
    assert "fewer than the" in res.summary()


def test_with_images_the_cases_are_drawn_from_the_studies_with_one(vandyke_path, tmp_path) -> None:
    ratings, labels = vandyke_pilot(vandyke_path, extra_cases=600)
    ids = sorted(labels["study_id"].unique())
    imgs = _write_images(tmp_path / "imgs", ids[::2])
    res = plan_reader_study(ratings, labels, reference="truth", images=imgs, rng=0)
    assert len(res.table) == 188 and set(res.table["study_id"]) <= set(ids[::2])
    assert not any("fewer than the" in n for n in res.notes)
    # the 114 pilot cases (45 diseased) and 70 more (24 diseased): 69 diseased of the 74 needed, 115 others of 114
    few = _write_images(tmp_path / "few", ids[:184])
    res = plan_reader_study(ratings, labels, reference="truth", images=few, rng=0)
    short = [n for n in res.notes if "fewer than the" in n]
    assert (
        len(short) == 1 and f"gives 69 diseased cases with an image in {few}, fewer than the 74" in short[0]
    )
    assert len(res.table) == 69 + 114 and set(res.table["study_id"]) <= set(ids[:184])
    res.save(tmp_path / "plan")
    assert {p.stem for p in (tmp_path / "plan" / "images").iterdir()} == set(res.table["study_id"])


def test_no_design_reaches_the_power(vandyke_path) -> None:
    ratings, labels = vandyke_pilot(vandyke_path)
    res = plan_reader_study(ratings, labels, reference="truth", n_readers=[2, 3], effect=0.01, rng=0)
    assert res.n_readers is None and res.study == "" and res.table.empty
    assert "no reader count of the grid reaches the power" in res.summary()


def test_unaided_then_aided_sessions_and_the_effect_in_that_direction(vandyke_path, tmp_path) -> None:
    from cxreval.reader.study import load_study  # what `cxreval reader init` reads the study file with

    ratings, labels = vandyke_pilot(vandyke_path, modalities=("unaided", "aided"), extra_cases=600)
    imgs = _write_images(tmp_path / "imgs", labels["study_id"].unique())
    res = plan_reader_study(
        ratings.iloc[::-1], labels, reference="truth", washout_days=14, images=imgs, rng=0
    )
    res.save(tmp_path / "plan")
    spec = load_study(tmp_path / "plan" / "study.yaml")
    assert [s.name for s in spec.sessions] == ["unaided", "aided"]
    assert spec.washout_days == 14 and spec.rating.scale == "five_point" and spec.findings == ("Effusion",)
    # Van Dyke's second treatment reads better: aided - unaided = +0.0438
    assert res.pilot["effect_direction"] == "aided - unaided"
    assert res.pilot["observed_effect"] == pytest.approx(0.0438, abs=5e-5)
    assert "(aided - unaided) +0.0438" in res.summary()


def test_rating_scale_and_session_names_follow_the_pilot(vandyke_path, tmp_path) -> None:
    from cxreval.reader.study import load_study

    ratings, labels = vandyke_pilot(vandyke_path, modalities=("image", "with model"), extra_cases=600)
    imgs = _write_images(tmp_path / "imgs", labels["study_id"].unique())
    percent = ratings.assign(rating=ratings["rating"] * 20 - 9.5)  # 10.5 ... 90.5: not whole numbers
    res = plan_reader_study(percent, labels, reference="truth", images=imgs, rng=0)
    res.save(tmp_path / "plan")
    spec = load_study(tmp_path / "plan" / "study.yaml")
    assert spec.rating.scale == "probability"
    assert [s.name for s in spec.sessions] == ["modality_1", "modality_2"]
    assert any("modality_1 (image), modality_2 (with model)" in n for n in res.notes)
    res = plan_reader_study(ratings.assign(rating=ratings["rating"] * 50.0), labels, reference="truth", rng=0)
    assert any("neither the five-point scale" in n for n in res.notes)


def test_latent_reference(vandyke_path) -> None:
    ratings, labels = vandyke_pilot(vandyke_path, extra_cases=300)
    flip = np.random.default_rng(0)
    noisy = [
        labels.assign(
            source=f"noisy{k}",
            state=np.where(flip.random(len(labels)) < 0.1, 2 - labels["state"], labels["state"]),
        )
        for k in range(2)
    ]
    three = pd.concat([labels, *noisy], ignore_index=True)
    res = plan_reader_study(
        ratings, three, reference="latent", latent_sources=["truth", "noisy0", "noisy1"], rng=0
    )
    assert res.reference == "latent" and res.n_readers is not None and len(res.table) == res.n_cases


def test_bad_pilots_and_parameters_are_refused(vandyke_path) -> None:
    ratings, labels = vandyke_pilot(vandyke_path)
    with pytest.raises(
        InvalidParameterError,
        match="'pilot' parameter of plan_reader_study must rate two "
        r"modalities.*rates 1: \['T1'\]",
    ):
        plan_reader_study(ratings[ratings["modality"] == "T1"], labels, reference="truth")
    with pytest.raises(
        SchemaError,
        match="'reference' parameter of plan_reader_study must be a source of the labels "
        "or 'latent'. Got 'truht' instead. Did you mean 'truth'",
    ):
        plan_reader_study(ratings, labels, reference="truht")
    two = pd.concat([ratings, ratings.assign(finding="Edema")])
    with pytest.raises(InvalidParameterError, match="name the one to plan for"):
        plan_reader_study(two, labels, reference="truth")
    with pytest.raises(InvalidParameterError, match=r"'effect' parameter .* 0 < \|effect\| < 1"):
        plan_reader_study(ratings, labels, reference="truth", effect=1.5)
    with pytest.raises(InvalidParameterError, match="used only with reference='latent'"):
        plan_reader_study(ratings, labels, reference="truth", latent_sources=["a", "b", "c"])
    with pytest.raises(InvalidParameterError, match="'washout_days' parameter"):
        plan_reader_study(ratings, labels, reference="truth", washout_days=-1)
