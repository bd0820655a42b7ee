"""Informative priors on the readers' accuracies: the Beta prior read from a plausible range, the posterior-mode
fit where three readers are not there (simulated truth), the sensitivity rows, and the refusals."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from sklearn.metrics import roc_auc_score

from cxreval.exceptions import InvalidParameterError, SchemaError
from cxreval.latent import NotIdentifiedError, evaluate_latent_auc
from cxreval.latent._fitting import beta_prior_counts
from cxreval.latent._reader_tables import read_reader_prior

SE = np.array([0.85, 0.8, 0.78])
SP = np.array([0.9, 0.85, 0.88])
RANGES = [(0.75, 0.95, 0.82, 0.97), (0.7, 0.9, 0.77, 0.93), (0.68, 0.88, 0.8, 0.95)]


def simulate(n: int, seed: int, n_readers: int):
    """``n_readers`` readers of accuracies SE, SP; three models of rising AUC; prevalence 0.3."""
    rng = np.random.default_rng(seed)
    t = rng.random(n) < 0.3
    se, sp = SE[:n_readers], SP[:n_readers]
    y = np.where(t[:, None], rng.random((n, n_readers)) < se, rng.random((n, n_readers)) > sp)
    s = t[:, None] * np.array([1.0, 1.5, 2.0]) + rng.normal(size=(n, 3))
    sid = [f"s{i}" for i in range(n)]
    labels = pd.concat(
        pd.DataFrame(
            {
                "study_id": sid,
                "patient_id": sid,
                "finding": "Edema",
                "source": f"r{k}",
                "state": np.where(y[:, k], "positive", "negative"),
            }
        )
        for k in range(n_readers)
    )
    preds = pd.concat(
        pd.DataFrame({"study_id": sid, "model": f"m{m}", "finding": "Edema", "score": s[:, m]})
        for m in range(3)
    )
    return np.array([roc_auc_score(t, s[:, m]) for m in range(3)]), preds, labels


def prior(n_readers: int) -> pd.DataFrame:
    cols = ["sensitivity_low", "sensitivity_high", "specificity_low", "specificity_high"]
    table = pd.DataFrame(RANGES[:n_readers], columns=cols)
    return table.assign(finding="Edema", source=[f"r{k}" for k in range(n_readers)])


def _auc(res) -> np.ndarray:
    return (
        res.table[res.table["finding"] == "Edema"]
        .set_index("model")
        .loc[["m0", "m1", "m2"], "auc"]
        .to_numpy()
    )


def test_the_range_is_the_beta_priors_mean_and_196_standard_deviations():
    for low, high in ((0.75, 0.95), (0.5, 0.7), (0.9, 0.99)):
        a1, b1 = beta_prior_counts(low, high)
        dist = stats.beta(a1 + 1, b1 + 1)
        assert dist.mean() == pytest.approx((low + high) / 2)
        assert dist.std() == pytest.approx((high - low) / (2 * 1.959963984540054))
    assert min(beta_prior_counts(0.001, 0.999)) > 0.4  # the widest range still has its mode inside (0, 1)
    with pytest.raises(ValueError, match="low < high"):
        beta_prior_counts(0.9, 0.8)


def test_two_readers_with_a_prior_recover_the_true_auc():
    """Two readers are refused without a prior; with ranges around their true accuracies the posterior-mode
    fit is close to the true-label AUC (mean error over four simulated sets), and the sensitivity table shows
    the AUCs with the readers at the ranges' ends."""
    errors = []
    for seed in range(4):
        truth, preds, labels = simulate(1500, seed, 2)
        with pytest.raises(NotIdentifiedError):
            evaluate_latent_auc(preds, labels, readers=["r0", "r1"], n_resamples=0)
        res = evaluate_latent_auc(preds, labels, readers=["r0", "r1"], reader_prior=prior(2), n_resamples=0)
        errors.append(_auc(res) - truth)
    assert np.abs(np.mean(errors, axis=0)).max() <= 0.015
    rows = res.sensitivity[res.sensitivity["analysis"] == "accuracy_range"]
    assert list(dict.fromkeys(rows["setting"])) == ["low ends", "high ends", "no prior"]
    assert rows.loc[rows["setting"] != "no prior", "auc"].notna().all()
    assert rows.loc[rows["setting"] == "no prior", "note"].eq("not identified without the prior").all()


def test_with_three_readers_the_data_outweigh_a_fair_prior():
    truth, preds, labels = simulate(2000, 7, 3)
    readers = ["r0", "r1", "r2"]
    plain = evaluate_latent_auc(preds, labels, readers=readers, n_resamples=0, sensitivity_analyses=False)
    informed = evaluate_latent_auc(preds, labels, readers=readers, reader_prior=prior(3), n_resamples=0)
    assert np.abs(_auc(informed) - _auc(plain)).max() < 0.005
    no_prior = informed.sensitivity.query("analysis == 'accuracy_range' and setting == 'no prior'")
    assert no_prior["auc"].to_numpy() == pytest.approx(_auc(plain), abs=1e-6)


def test_bad_priors_are_refused_by_name(tmp_path):
    table = prior(2)
    table.loc[1, "specificity_low"] = 1.2
    with pytest.raises(
        SchemaError, match=r"row 2 \('r1', 'Edema'\), columns specificity_low/specificity_high"
    ):
        read_reader_prior(table)
    with pytest.raises(SchemaError, match="sensitivity_high"):
        read_reader_prior(table.drop(columns="sensitivity_high"))
    with pytest.raises(SchemaError, match="does not exist"):
        read_reader_prior(tmp_path / "none.csv")
    _, preds, labels = simulate(300, 0, 3)
    with pytest.raises(
        InvalidParameterError, match="reader_prior= gives a prior of a reader declared dependent"
    ):
        evaluate_latent_auc(
            preds,
            labels,
            readers=["r0", "r1", "r2"],
            dependent=[("r0", "r1")],
            reader_prior=prior(2),
            n_resamples=0,
        )


def test_the_key_finding_says_a_prior_shapes_the_fit():
    _, preds, labels = simulate(600, 3, 2)
    res = evaluate_latent_auc(preds, labels, readers=["r0", "r1"], reader_prior=prior(2), n_resamples=0)
    assert "Informative priors on readers' accuracies" in res.assumptions()
    plain = evaluate_latent_auc(*simulate(600, 3, 3)[1:], readers=["r0", "r1", "r2"], n_resamples=0)
    assert "Informative priors" not in plain.assumptions()


def test_a_prior_on_no_reader_or_on_a_fixed_reader_is_refused():
    _, preds, labels = simulate(300, 0, 3)
    readers = ["r0", "r1", "r2"]
    with pytest.raises(InvalidParameterError, match=r"names 'r9', which is not one of the readers"):
        evaluate_latent_auc(preds, labels, readers=readers, reader_prior=prior(2).assign(source=["r0", "r9"]))
    fixed = pd.DataFrame({"finding": ["Edema"], "source": ["r1"], "sensitivity": [0.8], "specificity": [0.9]})
    with pytest.raises(InvalidParameterError, match="'r1' has a fixed accuracy .* and a prior"):
        evaluate_latent_auc(preds, labels, readers=readers, reader_accuracy=fixed, reader_prior=prior(2))
