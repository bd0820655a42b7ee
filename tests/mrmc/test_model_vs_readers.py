"""The model against a panel of readers (RJafroc's single-modality 1T-RRRC / 1T-RRFC convention), checked against
the two-modality OR analysis with the model replicated as a modality (RJafroc's 2T-RRRC, documented to give the
same F, ddf and p), against the jackknife of the differences written out as RJafroc's DiffFomVarCov2 does, and
against scipy's one-sample t-test (1T-RRFC)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from cxreval.exceptions import InvalidParameterError
from cxreval.mrmc import model_vs_readers, or_analysis
from cxreval.mrmc._fom import jackknife_auc


def _panel(vandyke):
    """Van Dyke's spin-echo readers as the panel, cine reader 1 as the 'model'."""
    return vandyke.ratings[1], vandyke.ratings[0, 0], vandyke.truth


@pytest.mark.shared_data
@pytest.mark.parametrize("covariance", ["jackknife", "delong", "unbiased"])
def test_one_modality_rrrc_equals_or_with_the_model_replicated(vandyke, covariance):
    readers, model, truth = _panel(vandyke)
    res = model_vs_readers(readers, model, truth, covariance=covariance)
    stacked = np.stack([np.repeat(model[None], 5, axis=0), readers])
    two = or_analysis(stacked, truth, covariance=covariance)
    assert res.rrrc.test is not None and two.rrrc.test is not None
    assert res.rrrc.test.statistic == pytest.approx(two.rrrc.test.statistic, rel=1e-10)
    assert res.rrrc.test.ddf == pytest.approx(two.rrrc.test.ddf, rel=1e-10)
    assert res.rrrc.test.p_value == pytest.approx(two.rrrc.test.p_value, rel=1e-10)
    (d,), (d2,) = res.rrrc.differences, two.rrrc.differences
    assert (d.estimate, d.low, d.high) == pytest.approx(
        (-d2.estimate, -d2.high, -d2.low), rel=1e-10
    )  # readers-model


@pytest.mark.shared_data
def test_jackknife_of_the_differences_as_rjafroc(vandyke):
    readers, model, truth = _panel(vandyke)
    res = model_vs_readers(readers, model, truth)
    loo = jackknife_auc(np.concatenate([model[None], readers])[None], truth)[0]  # (6, K)
    diff_loo = loo[1:] - loo[0]
    k = diff_loo.shape[1]
    cov = np.cov(diff_loo) * (k - 1) ** 2 / k
    var_error = np.diag(cov).mean()
    cov2 = cov[~np.eye(5, dtype=bool)].mean()
    aucs = np.array(
        [
            [
                stats.mannwhitneyu(r[truth == 1], r[truth == 0]).statistic / (45 * 69)
                for r in np.concatenate([model[None], readers])
            ]
        ]
    )[0]
    psi = aucs[1:] - aucs[0]
    msr = psi.var(ddof=1)
    den = msr + max(5 * cov2, 0)
    ddf = den**2 / (msr**2 / 4)
    t = psi.mean() / np.sqrt(den / 5)
    assert (res.var_error, res.cov2, res.ms_reader) == pytest.approx((var_error, cov2, msr), rel=1e-10)
    (d,) = res.rrrc.differences
    assert (d.estimate, d.statistic, d.df) == pytest.approx((psi.mean(), t, ddf), rel=1e-10)
    assert d.p_value == pytest.approx(2 * stats.t.sf(abs(t), ddf), rel=1e-10)
    half = stats.t.ppf(0.975, ddf) * np.sqrt(den / 5)
    assert (d.low, d.high) == pytest.approx((psi.mean() - half, psi.mean() + half), rel=1e-10)
    (m,) = res.rrrc.modalities
    assert (m.auc, m.low, m.high) == pytest.approx(
        (aucs[1:].mean(), aucs[0] + d.low, aucs[0] + d.high), rel=1e-10
    )


@pytest.mark.shared_data
def test_fixed_cases_is_a_one_sample_t_test(vandyke):
    readers, model, truth = _panel(vandyke)
    res = model_vs_readers(readers, model, truth, reader_names=list("abcde"), model_name="cine-1")
    diffs = res.reader_aucs - res.model_auc
    ref = stats.ttest_1samp(diffs, 0.0)
    (d,) = res.rrfc.differences
    assert (d.statistic, d.p_value, d.df) == pytest.approx((ref.statistic, ref.pvalue, 4), rel=1e-10)
    assert (d.modality_a, d.modality_b) == ("readers", "cine-1")
    tables = res.tables()
    assert list(tables["readers"]["reader"]) == ["cine-1", *"abcde"]
    assert set(tables["tests"]["analysis"]) == {"RRRC", "FRRC", "RRFC"}


@pytest.mark.parametrize(
    ("readers", "model", "match"),
    [
        (np.zeros((1, 6)), np.arange(6.0), "at least 2 readers"),
        (np.zeros((2, 6)), np.arange(5.0), "'model_score'.*one score per case"),
        (np.zeros((2, 6)), np.array([0, 1, 2, 3, 4, np.nan]), "'model_score'.*missing"),
        (np.zeros(6), np.arange(6.0), "'reader_ratings'.*shape"),
    ],
)
def test_bad_input(readers, model, match):
    with pytest.raises(InvalidParameterError, match=match):
        model_vs_readers(readers, model, [0, 0, 0, 1, 1, 1])
