"""The latent-class model: recovery on simulated readers, exact readers, anchors, fixed accuracies, the
refusal of a two-reader finding, monotone EM, Dawid–Skene against crowd-kit."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import roc_auc_score

from cxreval.exceptions import InvalidParameterError
from cxreval.latent import NOT_IDENTIFIED, NotIdentifiedError, fit_latent_class, latent_auc_score

SE = np.array([0.9, 0.75, 0.7, 0.85])
SP = np.array([0.8, 0.95, 0.7, 0.9])


def simulate(n=4000, prevalence=0.3, se=SE, sp=SP, separation=1.5, seed=0, p_missing=0.0):
    rng = np.random.default_rng(seed)
    t = rng.random(n) < prevalence
    y = np.where(t[:, None], rng.random((n, se.size)) < se, rng.random((n, se.size)) > sp).astype(float)
    y[rng.random(y.shape) < p_missing] = np.nan
    s = rng.normal(size=n) + separation * t
    return t, y, s


def test_recovers_sensitivity_specificity_and_prevalence():
    t, y, s = simulate()
    fit = fit_latent_class(y, s)
    assert fit.converged
    # 4,000 studies, ~1,200 positives: the standard errors are ~0.01-0.015; stated tolerance 0.03
    np.testing.assert_allclose(fit.sensitivity, SE, atol=0.03)
    np.testing.assert_allclose(fit.specificity, SP, atol=0.03)
    assert fit.prevalence == pytest.approx(0.3, abs=0.02)
    readers_only = fit_latent_class(y)
    np.testing.assert_allclose(readers_only.sensitivity, SE, atol=0.04)
    np.testing.assert_allclose(readers_only.specificity, SP, atol=0.03)


def test_missing_reader_labels_drop_out():
    t, y, s = simulate(p_missing=0.3, seed=4)
    fit = fit_latent_class(y, s)
    np.testing.assert_allclose(fit.sensitivity, SE, atol=0.04)
    np.testing.assert_allclose(fit.specificity, SP, atol=0.04)


def test_exact_readers_give_the_ordinary_auc():
    rng = np.random.default_rng(5)
    t = rng.random(500) < 0.2
    y = np.repeat(t[:, None], 3, axis=1).astype(float)
    s = np.round(rng.normal(size=500) + t, 2)
    fit = fit_latent_class(y, s)
    np.testing.assert_allclose(fit.posterior, t.astype(float), atol=1e-20)
    assert latent_auc_score(s, fit.posterior) == pytest.approx(roc_auc_score(t, s), abs=1e-12)


def test_em_objective_never_decreases():
    t, y, s = simulate(n=800, seed=7, p_missing=0.2)
    for prior in (0.0, 0.5):
        fit = fit_latent_class(y, s, score_prior=prior, tol=1e-13)
        d = np.diff(fit.log_likelihood_trace)
        assert (d >= -1e-9 * abs(fit.log_likelihood)).all(), d.min()
        assert fit.log_likelihood == fit.log_likelihood_trace[-1]


def test_two_readers_are_refused_with_the_sentence():
    t, y, s = simulate(n=300)
    with pytest.raises(NotIdentifiedError, match=f"^{re.escape(NOT_IDENTIFIED)}$"):
        fit_latent_class(y[:, :2], s)
    y3 = y[:, :3].copy()
    y3[:, 2] = np.nan  # a reader without any label is not a reader of the finding
    with pytest.raises(NotIdentifiedError, match=re.escape(NOT_IDENTIFIED)):
        fit_latent_class(y3, s)


def test_two_readers_with_known_accuracy_or_an_anchor_subset():
    t, y, s = simulate(n=4000, seed=11)
    acc = np.column_stack([SE[:2], SP[:2]])
    fit = fit_latent_class(y[:, :2], s, reader_accuracy=acc)
    np.testing.assert_allclose(fit.sensitivity, SE[:2], atol=1e-8)  # held fixed (clipped only at 1e-9)
    assert fit.prevalence == pytest.approx(t.mean(), abs=0.03)
    anchor = np.full(t.size, np.nan)
    idx = np.random.default_rng(0).choice(t.size, 400, replace=False)
    anchor[idx] = t[idx]
    fit = fit_latent_class(y[:, :2], s, anchor=anchor)
    np.testing.assert_array_equal(fit.posterior[idx], t[idx].astype(float))
    np.testing.assert_allclose(fit.sensitivity, SE[:2], atol=0.06)
    np.testing.assert_allclose(fit.specificity, SP[:2], atol=0.04)


def test_integer_weights_equal_repeated_studies():
    t, y, s = simulate(n=300, seed=2)
    w = np.random.default_rng(1).integers(0, 3, size=300)
    idx = np.repeat(np.arange(300), w)
    # the reader-only model (score bins are cut on the studies given, so they differ between the two)
    a = fit_latent_class(y, sample_weight=w.astype(float))
    b = fit_latent_class(y[idx])
    np.testing.assert_allclose(a.sensitivity, b.sensitivity, atol=1e-7)
    assert a.prevalence == pytest.approx(b.prevalence, abs=1e-7)


def test_reader_only_posteriors_equal_crowdkit_dawid_skene():
    crowdkit = pytest.importorskip("crowdkit.aggregation")
    t, y, s = simulate(n=1500, seed=4, p_missing=0.25)
    ii, jj = np.nonzero(~np.isnan(y))
    long = pd.DataFrame({"task": ii, "worker": jj, "label": y[ii, jj].astype(int)})
    ds = crowdkit.DawidSkene(n_iter=10000, tol=1e-12).fit(long)
    fit = fit_latent_class(y, tol=1e-14, max_iter=20000)
    labelled = np.unique(ii)  # crowd-kit knows only the studies with a label
    theirs = ds.probas_.loc[labelled, 1].to_numpy()
    assert fit.converged
    np.testing.assert_allclose(fit.posterior[labelled], theirs, atol=1e-6)


@pytest.mark.parametrize(
    ("kwargs", "msg"),
    [
        (
            {"reader_labels": [[1, 0, 2]]},
            r"'reader_labels' must hold only 1.0 \(positive\), 0.0 \(negative\) and NaN "
            r"\(no label\); found 2.0 at \(0, 2\)",
        ),
        ({"reader_labels": [1, 0, 1]}, "'reader_labels' must have 2-D"),
        ({"reader_labels": [[1, 0, 1]], "score": [0.1, 0.2]}, r"'score' must have shape \(1,\)"),
        ({"reader_labels": [[1, 0, 1]], "score": [np.inf]}, "'score' must be finite"),
        ({"reader_labels": [[1, 0, 1]], "anchor": [0.5]}, "'anchor' must hold only"),
        (
            {"reader_labels": [[1, 0, 1]], "reader_accuracy": [[0.9, 0.9]]},
            r"'reader_accuracy' must have shape \(3, 2\)",
        ),
        ({"reader_labels": [[1, 0, 1]], "reader_accuracy": [[0.9, np.nan]] * 3}, "gives only one of"),
        (
            {"reader_labels": [[1, 0, 1]], "sample_weight": [-1.0]},
            "'sample_weight' must be finite, non-negative",
        ),
        (
            {"reader_labels": [[1, 0, 1]], "score": [0.3], "n_bins": 0},
            "'n_bins' parameter of fit_latent_class",
        ),
    ],
)
def test_bad_input_is_refused(kwargs, msg):
    with pytest.raises(InvalidParameterError, match=msg):
        fit_latent_class(**kwargs)
