"""The job of ``cxreval mrmc``: long tables in, the same numbers as the array-level analyses out, per reference;
a reader is never judged against itself; the command's folder equals the job's ``save()``."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from _same_files import assert_same_files
from cxreval.cli.main import main
from cxreval.exceptions import CxrevalError, InvalidParameterError, SchemaError
from cxreval.jobs import evaluate_reader_study
from cxreval.labels import validate_label_table
from cxreval.mrmc import dbm_analysis, or_analysis
from cxreval.mrmc._operating_points import reader_operating_points


def _vandyke_tables(path: Path) -> tuple[pd.DataFrame, pd.DataFrame]:
    d = pd.read_csv(path)
    ratings = pd.DataFrame(
        {
            "reader": "R" + d["reader"].astype(str),
            "modality": "T" + d["treatment"].astype(str),
            "study_id": "c" + d["case"].astype(str).str.zfill(3),
            "finding": "Effusion",
            "rating": d["rating"].astype(float),
        }
    )
    cases = d.drop_duplicates("case")
    labels = pd.DataFrame(
        {
            "study_id": "c" + cases["case"].astype(str).str.zfill(3),
            "patient_id": "p" + cases["case"].astype(str),
            "finding": "Effusion",
            "source": "truth",
            "state": np.where(cases["truth"] == 1, "positive", "negative"),
        }
    )
    return ratings, validate_label_table(labels)


@pytest.fixture(scope="module")
def vandyke_tables(shared_data: Path) -> tuple[pd.DataFrame, pd.DataFrame]:
    return _vandyke_tables(shared_data / "mrmc" / "vandyke.csv")


def test_job_equals_the_array_analyses_on_vandyke(vandyke_tables, vandyke) -> None:
    ratings, labels = vandyke_tables
    res = evaluate_reader_study(ratings, labels, references=["truth"], covariance="delong")
    tests = res.tests.set_index(["method", "analysis"])
    direct = (
        or_analysis(vandyke.ratings, vandyke.truth, covariance="delong")
        .tables()["tests"]
        .set_index("analysis")
    )
    for a in ("RRRC", "FRRC", "RRFC"):
        assert tests.loc[("OR", a), "statistic"] == pytest.approx(direct.loc[a, "statistic"], abs=1e-12)
        assert tests.loc[("OR", a), "pvalue"] == pytest.approx(direct.loc[a, "p_value"], abs=1e-12)
    rrrc = tests.loc[("OR", "RRRC")]
    assert (round(rrrc["statistic"], 3), round(rrrc["ddf"], 2), round(rrrc["pvalue"], 4)) == (
        4.485,
        15.07,
        0.0512,
    )
    dbm = dbm_analysis(vandyke.ratings, vandyke.truth).tables()["tests"].set_index("analysis")
    assert tests.loc[("DBM", "RRRC"), "statistic"] == pytest.approx(dbm.loc["RRRC", "statistic"], abs=1e-12)
    aucs = res.table.groupby("modality")["auc"].mean()
    assert (round(aucs["T1"], 4), round(aucs["T2"], 4)) == (0.8970, 0.9408)
    assert res.counts[["cases", "positives", "readers", "modalities"]].iloc[0].tolist() == [114, 45, 5, 2]


def _binary_study(rng: np.random.Generator, n: int = 120):
    truth = rng.integers(0, 2, n)
    score = truth + rng.normal(size=n)
    readers = {r: (truth + rng.normal(scale=1.2, size=n) > 0.5).astype(int) for r in ("bc4", "bc6", "gt")}
    ids = [f"s{i:03d}" for i in range(n)]
    state = {1: "positive", 0: "negative"}
    rows = [
        {"study_id": s, "patient_id": f"p{i // 2}", "finding": "Edema", "source": src, "state": state[int(v)]}
        for src, vals in (("consensus", truth), *readers.items())
        for i, (s, v) in enumerate(zip(ids, vals))
    ]
    labels = validate_label_table(pd.DataFrame(rows))
    preds = pd.DataFrame({"study_id": ids, "model": "m1", "finding": "Edema", "score": score})
    return labels, preds, truth, score, readers


def test_binary_readers_operating_points_and_leave_one_reader_out() -> None:
    from cxreval.mrmc import labels_to_ratings

    labels, preds, truth, score, readers = _binary_study(np.random.default_rng(0))
    ratings = labels_to_ratings(labels, sources=["bc4", "bc6", "gt"])
    res = evaluate_reader_study(
        ratings, labels, references=["consensus", "gt"], predictions=preds, n_resamples=200, rng=0
    )
    # under 'gt' the reader gt is left out, and said so
    assert set(res.readers_vs_curve.loc[res.readers_vs_curve["reference"] == "gt", "reader"]) == {
        "bc4",
        "bc6",
        "panel",
    }
    assert any("reader gt left out" in n for n in res.notes)
    # under 'consensus' the operating points equal the array-level function's (same data, same seed order)
    v = res.verdict_table.set_index("reference")
    assert v.loc["consensus", "measure"] == "sensitivity_at_panel_specificity"
    direct = reader_operating_points(
        np.stack([readers[r] for r in ("bc4", "bc6", "gt")]).astype(float),
        score,
        truth,
        patients=np.array([f"p{i // 2}" for i in range(len(truth))]),
        reader_names=("bc4", "bc6", "gt"),
        n_resamples=200,
        rng=np.random.default_rng(0),
    )
    pts = res.operating_points[res.operating_points["reference"] == "consensus"].reset_index(drop=True)
    ref = direct.tables()["operating_points"]
    np.testing.assert_allclose(pts["estimate"], ref["estimate"])
    # and the AUC table has the model against the panel
    assert set(res.model_vs_readers["reference"]) == {"consensus", "gt"}


def test_bad_inputs_name_what_is_wrong() -> None:
    labels, preds, *_ = _binary_study(np.random.default_rng(1))
    from cxreval.mrmc import labels_to_ratings

    ratings = labels_to_ratings(labels, sources=["bc4", "bc6"])
    with pytest.raises(SchemaError, match=r"reference 'consensu' is not a source of the labels"):
        evaluate_reader_study(ratings, labels, references=["consensu"])
    with pytest.raises(InvalidParameterError, match=r"latent_sources.*at least three"):
        evaluate_reader_study(ratings, labels, references=["latent"], latent_sources=["gt"])
    with pytest.raises(InvalidParameterError, match=r"latent source 'bc4' is a reader"):
        evaluate_reader_study(
            ratings, labels, references=["latent"], latent_sources=["bc4", "gt", "consensus"]
        )
    with pytest.raises(InvalidParameterError, match=r"'margin'"):
        evaluate_reader_study(ratings, labels, references=["consensus"], margin=1.5)
    aided = pd.concat([ratings, ratings[ratings["reader"] == "bc4"].assign(modality="aided")])
    with pytest.raises(
        SchemaError,
        match=r"Edema under reference 'consensus': modality 'aided' was read by 1 "
        r"reader\(s\) \(bc4\)",
    ):
        evaluate_reader_study(aided, labels, references=["consensus"])
    truth = labels[labels["source"] == "consensus"].set_index("study_id")["state"]
    positives = set(truth[truth == 2].index)
    only_pos = ratings[(ratings["reader"] != "bc4") | ratings["study_id"].isin(positives)]
    with pytest.raises(
        CxrevalError,
        match=r"Edema under reference 'consensus': .*reader 'bc4' read \d+ diseased "
        r"and 0 non-diseased cases",
    ):
        evaluate_reader_study(only_pos, labels, references=["consensus"])
    with pytest.raises(SchemaError, match=r"reader 'bc4' gave the rating 1, outside the scale 2 to 5"):
        evaluate_reader_study(ratings, labels, references=["consensus"], scale=(2, 5))


def test_cli_folder_equals_the_jobs_save(tmp_path: Path) -> None:
    labels, preds, *_ = _binary_study(np.random.default_rng(2))
    labels.to_csv(tmp_path / "labels.csv", index=False)
    preds.to_csv(tmp_path / "preds.csv", index=False)
    out = tmp_path / "cli"
    code = main(
        [
            "mrmc",
            "-l",
            str(tmp_path / "labels.csv"),
            "--readers",
            "bc4,bc6",
            "-p",
            str(tmp_path / "preds.csv"),
            "-r",
            "consensus,gt",
            "--n-resamples",
            "100",
            "--seed",
            "3",
            "-o",
            str(out),
        ]
    )
    assert code == 0
    from cxreval.jobs import evaluate_reader_study_files

    res = evaluate_reader_study_files(
        [tmp_path / "labels.csv"],
        references=["consensus", "gt"],
        readers=["bc4", "bc6"],
        predictions=[tmp_path / "preds.csv"],
        n_resamples=100,
        rng=3,
    )
    res.save(tmp_path / "lib")
    assert_same_files(out, tmp_path / "lib")


def test_reader_weights_through_the_job_and_the_command(
    vandyke_tables, vandyke, tmp_path: Path, capsys
) -> None:
    ratings, labels = vandyke_tables
    # split plot: readers R1, R2 read every third case, the others the rest
    first = ratings["study_id"].str[1:].astype(int) % 3 == 0
    split = ratings[
        (ratings["reader"].isin(["R1", "R2"]) & first) | (~ratings["reader"].isin(["R1", "R2"]) & ~first)
    ]
    res = evaluate_reader_study(split, labels, references=["truth"], reader_weights="case_pairs")
    arr = np.where(np.isnan(vandyke.ratings), np.nan, vandyke.ratings)
    cases = np.arange(1, arr.shape[2] + 1) % 3 == 0  # case numbers 1..114, in order
    arr[:, :2, ~cases] = np.nan
    arr[:, 2:, cases] = np.nan
    direct = (
        or_analysis(arr, vandyke.truth, reader_weights="case_pairs").tables()["tests"].set_index("analysis")
    )
    ours = res.tests[res.tests["method"] == "OR"].set_index("analysis")
    np.testing.assert_allclose(
        ours.loc[["RRRC", "FRRC", "RRFC"], "statistic"],
        direct.loc[["RRRC", "FRRC", "RRFC"], "statistic"],
        rtol=1e-12,
    )
    assert any("case pairs" in n for n in res.notes)
    split.to_csv(tmp_path / "ratings.csv", index=False)
    labels.to_csv(tmp_path / "labels.csv", index=False)
    args = [
        "mrmc",
        "--ratings",
        str(tmp_path / "ratings.csv"),
        "-l",
        str(tmp_path / "labels.csv"),
        "-r",
        "truth",
    ]
    assert main([*args, "--reader-weights", "case_pairs", "-o", str(tmp_path / "w")]) == 0
    capsys.readouterr()
    assert main([*args, "--reader-weights", "cases", "-o", str(tmp_path / "bad")]) == 2
    err = capsys.readouterr().err
    assert "--reader-weights" in err and "case_pairs" in err and "Traceback" not in err
    assert not (tmp_path / "bad").exists()
