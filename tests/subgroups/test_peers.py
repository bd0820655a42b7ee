"""Per-group metrics against Fairlearn's ``MetricFrame`` and scikit-learn, calibration against scikit-learn's
``calibration_curve`` and ``brier_score_loss``, to 1e-9; every bootstrap replicate against a loop over the
plan's explicit study indices.

Fairlearn's own intervals (``MetricFrame(..., n_boot=...)``) resample studies, not patients: with several
studies per patient they are narrower than the patient-clustered intervals here, so only the estimates are
compared.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.calibration import calibration_curve
from sklearn.metrics import brier_score_loss, recall_score, roc_auc_score

from cxreval.bootstrap import draw_plan
from cxreval.options import Resampling
from cxreval.subgroups import evaluate_subgroups
from cxreval.subgroups._calibration import calibration_rows, reliability_rows
from cxreval.subgroups._metrics import group_metrics

fairlearn_metrics = pytest.importorskip(
    "fairlearn.metrics", reason="fairlearn not installed (the test extra)"
)


def _tables(n: int = 300, seed: int = 0) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    rng = np.random.default_rng(seed)
    ids = [f"s{i}" for i in range(n)]
    truth = rng.random(n) < 0.35
    score = np.clip(rng.normal(0.35 + 0.3 * truth, 0.2), 0, 1)
    noisy = truth & (rng.random(n) > 0.2)
    preds = pd.DataFrame({"study_id": ids, "model": "m", "finding": "Edema", "score": score})
    labels = pd.concat(
        [
            pd.DataFrame(
                {
                    "study_id": ids,
                    "patient_id": [f"p{i // 3}" for i in range(n)],
                    "finding": "Edema",
                    "source": src,
                    "state": np.where(y, "positive", "negative"),
                }
            )
            for src, y in (("truth", truth), ("noisy", noisy))
        ],
        ignore_index=True,
    )
    meta = pd.DataFrame(
        {"study_id": ids, "sex": rng.choice(["F", "M"], n), "view": rng.choice(["AP", "PA", "LL"], n)}
    )
    return preds, labels, meta


def test_group_metrics_equal_fairlearn_metricframe() -> None:
    preds, labels, meta = _tables()
    res = evaluate_subgroups(
        preds,
        labels,
        meta,
        by=["view"],
        operating_point="threshold=0.5",
        resampling=Resampling(n_resamples=20, rng=0),
    )
    t = res.table
    for ref in ("truth", "noisy"):
        lab = labels[labels["source"] == ref].set_index("study_id").loc[preds["study_id"]]
        y = (lab["state"] == "positive").to_numpy().astype(int)
        s = preds["score"].to_numpy()
        mf = fairlearn_metrics.MetricFrame(
            metrics={
                "auc": lambda yt, yp: roc_auc_score(yt, yp),
                "sensitivity": lambda yt, yp: recall_score(yt, yp >= 0.5),
                "selection_rate": lambda yt, yp: fairlearn_metrics.selection_rate(yt, yp >= 0.5),
                "specificity": lambda yt, yp: fairlearn_metrics.true_negative_rate(yt, yp >= 0.5),
                "fnr": lambda yt, yp: fairlearn_metrics.false_negative_rate(yt, yp >= 0.5),
            },
            y_true=y,
            y_pred=s,
            sensitive_features=meta.set_index("study_id").loc[preds["study_id"], "view"].to_numpy(),
        )
        for metric in ("auc", "sensitivity", "selection_rate", "specificity", "fnr"):
            ours = t[(t["reference"] == ref) & (t["metric"] == metric)].set_index("group")["value"]
            theirs = mf.by_group[metric]
            np.testing.assert_allclose(
                ours.loc[theirs.index].to_numpy(float), theirs.to_numpy(float), atol=1e-9
            )
            # the rest of the studies: the same metric on every other group pooled
            for g in theirs.index:
                rest = meta.set_index("study_id").loc[preds["study_id"], "view"].to_numpy() != g
                row = t[(t["reference"] == ref) & (t["metric"] == metric) & (t["group"] == g)].iloc[0]
                if metric == "auc":
                    expected = roc_auc_score(y[rest], s[rest])
                    assert row["comparator_value"] == pytest.approx(expected, abs=1e-9)
                    assert row["gap"] == pytest.approx(row["value"] - expected, abs=1e-9)


def test_every_replicate_equals_a_loop_over_the_plan() -> None:
    rng = np.random.default_rng(3)
    n = 120
    y = rng.random(n) < 0.4
    s = np.round(rng.random(n), 2)  # ties
    code = rng.integers(-1, 3, n)  # some studies without a group
    plan = draw_plan([f"p{i // 2}" for i in range(n)], n_resamples=15, rng=5)
    ct = np.ascontiguousarray(np.hstack([np.ones((plan.n_patients, 1), np.int32), plan.counts.T]))
    gm = group_metrics(y, s, plan.study_patient, code, ct, n_groups=3, threshold=0.5, reference_group=None)
    for b in range(plan.n_resamples):
        idx = plan.study_indices(b)
        for g in range(3):
            sub, rest = idx[code[idx] == g], idx[(code[idx] >= 0) & (code[idx] != g)]
            assert gm.value["auc"][g, b + 1] == pytest.approx(roc_auc_score(y[sub], s[sub]), abs=1e-12)
            assert gm.comparator["auc"][g, b + 1] == pytest.approx(roc_auc_score(y[rest], s[rest]), abs=1e-12)
            assert gm.value["sensitivity"][g, b + 1] == pytest.approx(
                recall_score(y[sub], s[sub] >= 0.5), abs=1e-12
            )
            assert gm.value["selection_rate"][g, b + 1] == pytest.approx(np.mean(s[sub] >= 0.5), abs=1e-12)


@pytest.mark.parametrize("n_bins", [5, 10, 15])
def test_reliability_bins_and_brier_equal_scikit_learn(n_bins: int) -> None:
    rng = np.random.default_rng(n_bins)
    n = 500
    p = rng.random(n)
    p[:20] = np.linspace(0, 1, 21)[:20]  # scores on the bin edges
    y = rng.random(n) < p
    code = np.zeros(n, np.intp)
    rel = reliability_rows(y, p, code, groups=("all",), n_bins=n_bins)
    prob_true, prob_pred = calibration_curve(y, p, n_bins=n_bins, strategy="uniform")
    np.testing.assert_allclose(rel["fraction_positive"], prob_true, atol=1e-9)
    np.testing.assert_allclose(rel["mean_score"], prob_pred, atol=1e-9)
    ct = np.ones((n, 1), np.int32)
    rows = calibration_rows(
        y, p, np.arange(n), code, ct, groups=("all",), n_bins=n_bins, confidence_level=0.95
    )
    assert rows["brier"][0] == pytest.approx(brier_score_loss(y, p), abs=1e-9)
    # the decomposition adds up, and the reliability is the squared L2 ECE of the bins
    assert rows["reliability"][0] - rows["resolution"][0] + rows["uncertainty"][0] + rows["brier_within_bin"][
        0
    ] == pytest.approx(rows["brier"][0], abs=1e-12)
    w = np.asarray(rel["n"]) / n
    assert rows["ece"][0] == pytest.approx(float(np.sum(w * np.abs(prob_true - prob_pred))), abs=1e-12)
    assert rows["ece_l2"][0] ** 2 == pytest.approx(float(np.sum(w * (prob_true - prob_pred) ** 2)), abs=1e-12)
