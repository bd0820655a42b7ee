"""evaluate_latent_auc on long tables: the files it owns, exact readers, the refusal, known accuracies, anchors."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

from cxreval.classification import evaluate_auc
from cxreval.latent import NOT_IDENTIFIED, LatentAUCResult, NotIdentifiedError, evaluate_latent_auc
from cxreval.latent._evaluate import read_reader_accuracy
from cxreval.latent._result import LATENT_REFERENCE
from cxreval.schema._result_columns import READER_ACCURACY_COLUMNS

STATE = {1.0: "positive", 0.0: "negative"}


def tables(
    n=400, seed=0, exact=False, readers=("r1", "r2", "r3"), findings=("Edema", "Effusion"), p_uncertain=0.05
):
    rng = np.random.default_rng(seed)
    labs, preds = [], []
    sid = [f"s{i:04d}" for i in range(n)]
    pid = [f"p{i // 2:04d}" for i in range(n)]
    for f in findings:
        t = rng.random(n) < 0.3
        labs.append(
            pd.DataFrame(
                {
                    "study_id": sid,
                    "patient_id": pid,
                    "finding": f,
                    "source": "truth",
                    "state": np.where(t, "positive", "negative"),
                }
            )
        )
        for k, r in enumerate(readers):
            se, sp = (1.0, 1.0) if exact else (0.9 - 0.05 * k, 0.85 + 0.03 * k)
            y = np.where(t, rng.random(n) < se, rng.random(n) > sp)
            state = np.where(y, "positive", "negative").astype(object)
            state[rng.random(n) < p_uncertain] = "uncertain"  # excluded under the default policy
            labs.append(
                pd.DataFrame({"study_id": sid, "patient_id": pid, "finding": f, "source": r, "state": state})
            )
        for m, d in (("m1", 1.0), ("m2", 2.0)):
            preds.append(
                pd.DataFrame({"study_id": sid, "model": m, "finding": f, "score": rng.normal(size=n) + d * t})
            )
    return pd.concat(preds, ignore_index=True), pd.concat(labs, ignore_index=True)


def test_saves_its_files_and_estimates_the_truth(tmp_path):
    preds, labs = tables(n=1500)
    res = evaluate_latent_auc(preds, labs, readers=["r1", "r2", "r3"], n_resamples=50, rng=0)
    assert isinstance(res, LatentAUCResult)
    paths = res.save(tmp_path)
    assert {p.name for p in paths.values()} == set(res.FILES.values())
    auc = pd.read_csv(tmp_path / "auc.csv")
    assert list(auc.columns) == list(res.COLUMNS) and set(auc["reference"]) == {LATENT_REFERENCE}
    assert list(pd.read_csv(tmp_path / "reader_accuracy.csv").columns) == list(READER_ACCURACY_COLUMNS)
    truth = evaluate_auc(preds, labs, references=["truth"], n_resamples=0).table
    merged = auc.merge(truth[["model", "finding", "auc"]], on=["model", "finding"], suffixes=("", "_truth"))
    assert len(merged) == 6  # 2 models x (2 findings + macro)
    assert (merged["auc"] - merged["auc_truth"]).abs().max() < 0.03
    assert (
        (merged["ci_low"] < merged["auc_truth"]) & (merged["auc_truth"] < merged["ci_high"])
    ).mean() >= 0.8
    summary = res.summary()
    assert "readers' errors are independent" in summary and "latent_score_association.csv" in summary


def test_exact_readers_give_the_ordinary_auc():
    preds, labs = tables(exact=True, p_uncertain=0.0)
    res = evaluate_latent_auc(preds, labs, readers=["r1", "r2", "r3"], n_resamples=0)
    truth = evaluate_auc(preds, labs, references=["truth"], n_resamples=0).table
    m = res.table.merge(truth, on=["model", "finding"], suffixes=("", "_truth"))
    np.testing.assert_allclose(m["auc"], m["auc_truth"], atol=1e-12)


def test_two_readers_are_refused_before_any_fit():
    preds, labs = tables()
    with pytest.raises(
        NotIdentifiedError,
        match=r"^Finding 'Edema' has 2 conditionally independent reader\(s\) with labels \(r1, r2\)\. "
        + re.escape(NOT_IDENTIFIED),
    ):
        evaluate_latent_auc(preds, labs, readers=["r1", "r2"], n_resamples=0)


def test_two_readers_with_known_accuracy_or_an_anchor(tmp_path):
    preds, labs = tables(n=1200, seed=3)
    three = evaluate_latent_auc(preds, labs, readers=["r1", "r2", "r3"], n_resamples=20, rng=0)
    three.save(tmp_path)
    acc = read_reader_accuracy(tmp_path / "reader_accuracy.csv")
    fixed = evaluate_latent_auc(preds, labs, readers=["r1", "r2"], reader_accuracy=acc, n_resamples=0)
    assert fixed.reader_accuracy["fixed"].all()
    diff = (
        fixed.table.set_index(["model", "finding"])["auc"]
        - three.table.set_index(["model", "finding"])["auc"]
    )
    assert diff.abs().max() < 0.03
    # an anchor: the truth revealed on a random fifth of the studies
    rng = np.random.default_rng(0)
    keep = set(rng.choice(labs["study_id"].unique(), 240, replace=False))
    anchor = labs[(labs["source"] == "truth") & labs["study_id"].isin(keep)].assign(source="expert")
    two = evaluate_latent_auc(
        preds, pd.concat([labs, anchor]), readers=["r1", "r2"], anchor="expert", n_resamples=0
    )
    truth = evaluate_auc(preds, labs, references=["truth"], n_resamples=0).table
    m = two.table.merge(truth, on=["model", "finding"], suffixes=("", "_truth"))
    assert (m["auc"] - m["auc_truth"]).abs().max() < 0.04


def test_bad_reader_accuracy_file_is_refused(tmp_path):
    p = tmp_path / "acc.csv"
    pd.DataFrame({"finding": ["Edema"], "source": ["r1"], "sensitivity": [1.2], "specificity": [0.9]}).to_csv(
        p
    )
    with pytest.raises(Exception, match=r"column 'sensitivity', row 1: .*not a probability"):
        read_reader_accuracy(p)
    with pytest.raises(Exception, match="is missing required column"):
        read_reader_accuracy(pd.DataFrame({"finding": ["Edema"], "source": ["r1"]}))


def test_anchor_cannot_be_a_reader():
    preds, labs = tables(n=50)
    with pytest.raises(Exception, match="the anchor 'r1' is also a reader"):
        evaluate_latent_auc(preds, labs, readers=["r1", "r2", "r3"], anchor="r1")
