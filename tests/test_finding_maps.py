"""Finding maps (labels and scores), the study design, coverage and the chance convention, in the library and
through ``classify`` / ``rank`` (round trip of classify's auc.csv into ``rank --auc-table``)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import roc_auc_score

from cxreval.classification import evaluate_auc
from cxreval.cli.main import main
from cxreval.exceptions import SchemaError, UnknownNameError
from cxreval.finding_maps import (
    FINDING_MAPS,
    NIH_TO_GOOGLE,
    map_label_table,
    map_prediction_table,
    parse_finding_map,
    read_finding_map,
)
from cxreval.labels import write_labels
from cxreval.labels._long import write_predictions
from cxreval.stats import AUCResult


def _tables(seed: int = 0, n: int = 60, models: tuple[str, ...] = ("A", "B", "C", "D")):
    """NIH-style labels (Nodule, Mass, Pneumothorax) from source 'nih' on every study, Google-style labels
    (Nodule or Mass, Pneumothorax) from 'expert' on the first 40, and scores of the NIH findings."""
    g = np.random.default_rng(seed)
    studies = [f"s{i:03d}" for i in range(n)]
    truth = {f: g.random(n) < 0.4 for f in ("Nodule", "Mass", "Pneumothorax")}
    labs = []
    for f, t in truth.items():
        labs.append(
            pd.DataFrame(
                {
                    "study_id": studies,
                    "patient_id": [f"p{i // 2}" for i in range(n)],
                    "finding": f,
                    "source": "nih",
                    "state": np.where(t, "positive", "negative"),
                }
            )
        )
    nm = truth["Nodule"] | truth["Mass"]
    flip = g.random(n) < 0.1
    for f, t in (("Nodule or Mass", nm ^ flip), ("Pneumothorax", truth["Pneumothorax"] ^ flip)):
        labs.append(
            pd.DataFrame(
                {
                    "study_id": studies[:40],
                    "patient_id": [f"p{i // 2}" for i in range(40)],
                    "finding": f,
                    "source": "expert",
                    "state": np.where(t[:40], "positive", "negative"),
                }
            )
        )
    preds = []
    for k, m in enumerate(models):
        for f, t in truth.items():
            preds.append(
                pd.DataFrame(
                    {
                        "study_id": studies,
                        "model": m,
                        "finding": f,
                        "score": t * (0.5 + 0.3 * k) + g.normal(size=n),
                    }
                )
            )
    return pd.concat(preds, ignore_index=True), pd.concat(labs, ignore_index=True)


def test_map_label_table_is_any_and_map_prediction_table_is_max():
    preds, labels = _tables()
    mp = parse_finding_map(
        {"findings": {"Nodule or Mass": "any(Nodule, Mass)", "Pneumothorax": "Pneumothorax"}}
    )
    ml = map_label_table(labels, mp)
    nih = ml[ml.source == "nih"].set_index(["study_id", "finding"])["state"]
    wide = labels[labels.source == "nih"].pivot(index="study_id", columns="finding", values="state")
    expect = ((wide["Nodule"] == "positive") | (wide["Mass"] == "positive")).map({True: 2, False: 0})
    assert (nih.xs("Nodule or Mass", level="finding").astype(int) == expect).all()
    assert set(ml[ml.source == "expert"].finding) == {"Nodule or Mass", "Pneumothorax"}  # its own labels kept
    mpred = map_prediction_table(preds, mp)
    a = mpred[(mpred.model == "A") & (mpred.finding == "Nodule or Mass")].set_index("study_id")["score"]
    w = preds[preds.model == "A"].pivot(index="study_id", columns="finding", values="score")
    np.testing.assert_array_equal(a.to_numpy(), np.maximum(w["Nodule"], w["Mass"]).to_numpy())


def test_bad_maps_are_refused_in_one_line(tmp_path):
    with pytest.raises(SchemaError, match="cycle: 'Mass' is defined by the map and used to define 'Nodule'"):
        parse_finding_map({"findings": {"Nodule": "any(Mass)", "Mass": "any(Nodule)"}})
    with pytest.raises(SchemaError, match="chain"):
        parse_finding_map(
            {"findings": {"Nodule or Mass": "any(Nodule, Mass)", "Lung Lesion": "any(Nodule or Mass)"}}
        )
    with pytest.raises(SchemaError, match="Unknown finding name 'Nodul'"):
        parse_finding_map({"findings": {"Nodule or Mass": "any(Nodul, Mass)"}})
    with pytest.raises(SchemaError, match="score rule"):
        parse_finding_map({"score": "median", "findings": {"Nodule or Mass": "any(Nodule, Mass)"}})
    with pytest.raises(UnknownNameError, match="Did you mean 'nih_to_google'"):
        read_finding_map("nih_to_gogle")
    f = tmp_path / "m.yaml"
    f.write_text("findings:\n  Nodule or Mass: any(Nodule, Mass)\n  Fracture: Fracture\n")
    assert read_finding_map(f).targets["Nodule or Mass"] == ("Nodule", "Mass")
    preds, labels = _tables()
    with pytest.raises(SchemaError, match="finding 'Fracture' .* is neither predicted nor labelled"):
        evaluate_auc(preds, labels, finding_map=read_finding_map(f), n_resamples=0)


@pytest.mark.parametrize("cycle", ["Nodule: any(Mass)\n  Mass: any(Nodule)\n", "Nodule: any(Nodul)\n"])
def test_cli_bad_map_exit_2_before_computing(tmp_path, capsys, cycle):
    preds, labels = _tables()
    p, lab = write_predictions(preds, tmp_path / "p.csv"), write_labels(labels, tmp_path / "l.csv")
    f = tmp_path / "m.yaml"
    f.write_text("findings:\n  " + cycle)
    assert (
        main(["classify", "-p", str(p), "-l", str(lab), "--finding-map", str(f), "-o", str(tmp_path / "o")])
        == 2
    )
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and ("cycle" in err[0] or "Unknown finding name 'Nodul'" in err[0]), err
    assert not (tmp_path / "o").exists()


def test_builtin_map_nih_to_google_is_the_library_map():
    assert FINDING_MAPS["nih_to_google"] is NIH_TO_GOOGLE and NIH_TO_GOOGLE.score == "max"
    assert set(FINDING_MAPS) >= {"nih_to_google", "nih_to_chexpert", "nih_to_vindr", "nih_to_padchest"}


def test_studies_common_scores_each_finding_on_the_same_studies():
    preds, labels = _tables()
    mp = parse_finding_map(
        {"findings": {"Nodule or Mass": "any(Nodule, Mass)", "Pneumothorax": "Pneumothorax"}}
    )
    res = evaluate_auc(preds, labels, finding_map=mp, studies="common", n_resamples=0)
    each = evaluate_auc(preds, labels, finding_map=mp, studies="each", n_resamples=0)
    c = res.counts.set_index(["finding", "reference"])
    assert (c["n_studies"] == 40).all() and (c["n_patients"] == 20).all()
    assert each.counts.set_index(["finding", "reference"]).loc[("Pneumothorax", "nih"), "n_studies"] == 60
    # the AUC equals sklearn's on the first 40 studies (the expert's)
    ml = map_label_table(labels, mp)
    y = (
        ml[(ml.source == "nih") & (ml.finding == "Pneumothorax")].set_index("study_id")["state"].iloc[:40]
        == 2
    )
    s = (
        preds[(preds.model == "B") & (preds.finding == "Pneumothorax")]
        .set_index("study_id")["score"]
        .loc[y.index]
    )
    t = res.table.set_index(["model", "finding", "reference"])["auc"]
    assert t.loc[("B", "Pneumothorax", "nih")] == pytest.approx(roc_auc_score(y, s))
    assert len(res.dropped) == 20 and "studies='common'" in res.dropped["reason"].iloc[0]
    assert "studies `common`" in res.summary()


def test_studies_common_without_a_common_study_is_refused():
    preds, labels = _tables()
    labels = labels[~((labels.source == "nih") & labels.study_id.isin([f"s{i:03d}" for i in range(40)]))]
    with pytest.raises(
        SchemaError, match="no study is labelled by every reference labelling finding 'Pneumothorax'"
    ):
        evaluate_auc(preds, labels, studies="common", n_resamples=0, findings=["Pneumothorax"])


def test_not_labelled_is_coverage_not_nan_and_warns_nothing(recwarn):
    preds, labels = _tables()
    res = evaluate_auc(preds, labels, studies="each", n_resamples=5, rng=0)
    assert not [w for w in recwarn if "one class" in str(w.message)]
    cov = res.coverage.set_index(["finding", "reference"])["status"]
    assert (
        cov.loc[("Nodule", "expert")] == "not labelled" and cov.loc[("Pneumothorax", "expert")] == "labelled"
    )
    t = res.table
    assert not ((t.reference == "expert") & (t.finding == "Nodule")).any()
    assert t[(t.reference == "expert") & (t.finding == "macro")]["auc"].notna().all()


def test_missing_scores_chance_is_auc_one_half_ranked_and_averaged(tmp_path):
    """The XQA convention: a model without any output for a finding scores AUC 0.5 there, kept in the ranking
    and in the macro average (the mean of its per-finding AUCs with 0.5 for the missing one)."""
    preds, labels = _tables(models=("A", "B", "C", "D", "E"))
    labels = labels[labels.source == "nih"]
    preds = preds[~((preds.model == "E") & (preds.finding == "Mass"))]
    with pytest.raises(SchemaError, match="missing_scores='chance'"):
        evaluate_auc(preds, labels, n_resamples=0)
    res = evaluate_auc(preds, labels, missing_scores="chance", n_resamples=20, rng=0)
    t = res.table.set_index(["model", "finding", "reference"])
    assert t.loc[("E", "Mass", "nih"), "auc"] == 0.5 and t.loc[("E", "Mass", "nih"), "chance"]
    assert t.loc[("E", "macro", "nih"), "chance"] and not t.loc[("E", "Nodule", "nih"), "chance"]
    per = [t.loc[("E", f, "nih"), "auc"] for f in ("Nodule", "Mass", "Pneumothorax")]
    assert t.loc[("E", "macro", "nih"), "auc"] == pytest.approx(np.mean(per))
    assert res.chance == (("E", "Mass"),) and "Scored AUC 0.5" in res.summary()
    p, lab = write_predictions(preds, tmp_path / "p.csv"), write_labels(labels, tmp_path / "l.csv")
    out = tmp_path / "rank"
    assert (
        main(
            [
                "rank",
                "-p",
                str(p),
                "-l",
                str(lab),
                "--missing-scores",
                "chance",
                "--n-resamples",
                "0",
                "-o",
                str(out),
            ]
        )
        == 0
    )
    rk = pd.read_csv(out / "rankings.csv")
    mass = rk[rk.finding == "Mass"].set_index("model")
    assert mass.loc["E", "auc"] == 0.5 and mass.loc["E", "rank"] == 5.0


def test_rank_auc_table_round_trip_of_classify_auc_csv(tmp_path):
    """classify's own auc.csv (NaN AUCs, not-labelled rows absent, Mean rows) is read by rank --auc-table; its
    point correlations equal those of rank from predictions."""
    preds, labels = _tables()
    labels = labels.copy()
    labels.loc[(labels.source == "expert") & (labels.finding == "Pneumothorax"), "state"] = (
        "negative"  # one class
    )
    p, lab = write_predictions(preds, tmp_path / "p.csv"), write_labels(labels, tmp_path / "l.csv")
    cl, rk, rt = tmp_path / "cl", tmp_path / "rk", tmp_path / "rt"
    fm = tmp_path / "map.yaml"
    fm.write_text("findings:\n  Nodule or Mass: any(Nodule, Mass)\n  Pneumothorax: Pneumothorax\n")
    assert (
        main(
            [
                "classify",
                "-p",
                str(p),
                "-l",
                str(lab),
                "--finding-map",
                str(fm),
                "--n-resamples",
                "10",
                "-o",
                str(cl),
            ]
        )
        == 0
    )
    auc = pd.read_csv(cl / AUCResult.FILES["auc"])
    assert auc["auc"].isna().any()  # the expert's Pneumothorax: one class
    assert main(["rank", "--auc-table", str(cl / "auc.csv"), "-o", str(rt)]) == 0
    assert (
        main(
            [
                "rank",
                "-p",
                str(p),
                "-l",
                str(lab),
                "--finding-map",
                str(fm),
                "--n-resamples",
                "10",
                "-o",
                str(rk),
            ]
        )
        == 0
    )
    a = pd.read_csv(rt / "rank_correlation.csv")
    b = pd.read_csv(rk / "rank_correlation.csv")
    key = ["finding", "reference_a", "reference_b", "method"]
    m = a.merge(b, on=key, suffixes=("_t", "_p"))
    assert len(m) == len(b) > 0
    np.testing.assert_allclose(m["statistic_t"], m["statistic_p"])
    assert "Pneumothorax" not in set(b.finding)  # expert's one class: not ranked there
    assert "Pneumothorax: no AUC under ['expert']" in (rk / "summary.md").read_text()
    assert pd.read_csv(cl / "finding_map.csv")["finding"].tolist() == ["Nodule or Mass", "Pneumothorax"]


def test_resolve_finding_map_reads_the_map_and_replaces_its_score_rule():
    from cxreval.exceptions import InvalidParameterError
    from cxreval.finding_maps import get_finding_map, resolve_finding_map

    assert resolve_finding_map(None) is None
    assert resolve_finding_map("nih_to_google") == get_finding_map("nih_to_google")
    assert resolve_finding_map("nih_to_google", "mean").score == "mean"
    with pytest.raises(InvalidParameterError, match=r"^map_score= needs finding_map=\.$"):
        resolve_finding_map(None, "max")
    with pytest.raises(
        InvalidParameterError, match=r"'map_score' parameter .* one of max, mean\. Got 'median'"
    ):
        resolve_finding_map("nih_to_google", "median")
