"""Readers weighted by the case pairs they read (split-plot designs) beside the equal weighting: equal in a fully
crossed design, the pooled U-statistic as the modality AUC, the error terms reducing to Hillis's."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import roc_auc_score

from cxreval.exceptions import InvalidParameterError
from cxreval.mrmc import or_analysis, simulate_roe_metz_studies

ANALYSES = ("rrrc", "frrc", "rrfc")


def _numbers(res) -> dict[str, np.ndarray]:
    return {k: v.select_dtypes("number").to_numpy() for k, v in res.tables().items()}


@pytest.mark.parametrize("covariance", ["jackknife", "unbiased", "delong"])
def test_fully_crossed_case_pairs_equal_the_equal_weights(vandyke, covariance):
    a = or_analysis(vandyke.ratings, vandyke.truth, covariance=covariance)
    b = or_analysis(vandyke.ratings, vandyke.truth, covariance=covariance, reader_weights="case_pairs")
    assert a.reader_weights == "equal" and b.reader_weights == "case_pairs"
    np.testing.assert_allclose(b.weights, np.full(5, 0.2), rtol=0, atol=1e-15)
    for name, x in _numbers(a).items():
        np.testing.assert_allclose(_numbers(b)[name], x, rtol=0, atol=1e-12, err_msg=name)
    np.testing.assert_allclose(b.modality_aucs, [0.89703704, 0.94083736], atol=5e-9)


def _split_plot(seed: int = 3):
    sims = simulate_roe_metz_studies(1, n_readers=4, n_cases_negative=90, n_cases_positive=60, rng=seed)
    ratings, truth = sims.study(0).ratings.copy(), sims.study(0).truth
    neg, pos = np.flatnonzero(truth == 0), np.flatnonzero(truth == 1)
    first = np.zeros(truth.size, bool)
    first[neg[:30]] = first[pos[:20]] = (
        True  # readers 0, 1 read 30 + 20 cases; readers 2, 3 the other 60 + 40
    )
    ratings[:, :2, ~first] = np.nan
    ratings[:, 2:, first] = np.nan
    return ratings, truth


def test_case_pairs_modality_auc_is_the_pooled_u_statistic():
    ratings, truth = _split_plot()
    res = or_analysis(ratings, truth, reader_weights="case_pairs")
    for t in range(2):
        # the pooled U-statistic: every reader's (diseased, non-diseased) pairs in one sum, by sklearn per reader
        concordant = pairs = 0.0
        for r in range(4):
            read = ~np.isnan(ratings[t, r])
            n_pairs = truth[read].sum() * (~truth[read].astype(bool)).sum()
            concordant += roc_auc_score(truth[read], ratings[t, r, read]) * n_pairs
            pairs += n_pairs
        assert res.modality_aucs[t] == pytest.approx(concordant / pairs, abs=1e-12)
    np.testing.assert_allclose(res.weights, np.array([600, 600, 2400, 2400]) / 6000, atol=1e-15)


def test_split_plot_equal_weights_unchanged_and_weighting_differs():
    ratings, truth = _split_plot()
    default, equal = or_analysis(ratings, truth), or_analysis(ratings, truth, reader_weights="equal")
    weighted = or_analysis(ratings, truth, reader_weights="case_pairs")
    for name, table in default.tables().items():
        pd.testing.assert_frame_equal(table, equal.tables()[name])
    np.testing.assert_array_equal(default.modality_aucs, default.aucs.mean(axis=1))
    assert not np.allclose(weighted.modality_aucs, default.modality_aucs)
    # the error term never falls below MS(T*R) (Hillis's bound), so the ddf never below (T-1)(R-1)
    assert weighted.rrrc.test.ddf >= 3 - 1e-9
    assert np.isfinite(weighted.rrrc.test.p_value)


def test_equal_weights_reduce_to_hillis_by_the_weighted_formulas():
    """The weighted code path with explicit equal weights gives Hillis's numbers (independent of the 'equal' path)."""
    from cxreval.mrmc._fom import covariance_matrix, placements
    from cxreval.mrmc._inputs import check_mrmc_inputs
    from cxreval.mrmc._or import or_from_covariance

    ratings, truth = _split_plot(5)
    inputs = check_mrmc_inputs(
        ratings, truth, None, func="t", modality_names=None, reader_names=None, min_readers=2
    )
    pl = placements(inputs)
    cov = covariance_matrix(inputs, pl, "jackknife").reshape(2, 4, 2, 4)
    kw = dict(
        covariance_method="jackknife",
        modality_names=("1", "2"),
        reader_names=("a", "b", "c", "d"),
        confidence_level=0.95,
        fixed_readers_clamp=True,
    )
    plain = or_from_covariance(pl.auc.reshape(2, 4), cov, **kw)
    weighted = or_from_covariance(pl.auc.reshape(2, 4), cov, weights=np.full(4, 0.25), **kw)
    for a in ANALYSES:
        p, w = getattr(plain, a), getattr(weighted, a)
        assert w.test.statistic == pytest.approx(p.test.statistic, rel=1e-10)
        if np.isfinite(p.test.ddf):
            assert w.test.ddf == pytest.approx(p.test.ddf, rel=1e-10)
        assert w.differences[0].standard_error == pytest.approx(p.differences[0].standard_error, rel=1e-10)
        for x, y in zip(w.modalities, p.modalities):
            assert x.standard_error == pytest.approx(y.standard_error, rel=1e-10)


def test_unknown_reader_weights_is_refused(vandyke):
    with pytest.raises(
        InvalidParameterError, match="'reader_weights' parameter of or_analysis must be one of"
    ):
        or_analysis(vandyke.ratings, vandyke.truth, reader_weights="cases")
