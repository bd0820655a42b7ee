"""The Roe and Metz simulator against its closed forms: the expected empirical AUC Phi((mu + delta) / sqrt(2V)) and
the six variance components, recovered from the simulated ratings' covariances by the method of moments."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from scipy.stats import binom, f, norm, rankdata

from cxreval.exceptions import InvalidParameterError, UnknownNameError
from cxreval.mrmc import (
    ROE_METZ_SETTINGS,
    RoeMetzStudies,
    or_analysis,
    simulate_roe_metz,
    simulate_roe_metz_studies,
)
from cxreval.mrmc._roe_metz import RoeMetzParameters, RoeMetzStudy

COMPONENTS = (
    "var_reader",
    "var_modality_reader",
    "var_case",
    "var_modality_case",
    "var_reader_case",
    "var_error",
)


def empirical_auc(ratings: np.ndarray, truth: np.ndarray) -> np.ndarray:
    """Mann-Whitney AUC over the last axis (ties count one half), from mid-ranks."""
    ranks = rankdata(ratings, axis=-1)
    n1 = int(truth.sum())
    n0 = truth.size - n1
    return (ranks[..., truth].sum(axis=-1) - n1 * (n1 + 1) / 2) / (n0 * n1)


def test_one_study_has_the_documented_layout():
    s = simulate_roe_metz(n_readers=4, n_cases_negative=30, n_cases_positive=20, n_modalities=3, rng=0)
    assert isinstance(s, RoeMetzStudy)
    assert s.ratings.shape == (3, 4, 50) and s.ratings.dtype == np.float64
    assert s.truth.tolist() == [False] * 30 + [True] * 20
    assert not s.ratings.flags.writeable and not s.truth.flags.writeable
    assert s.shifts == (0.0, 0.0, 0.0)
    assert s.parameters == ROE_METZ_SETTINGS["HL-1.5"]


def test_an_int_reproduces_and_none_draws_fresh_entropy():
    kw = dict(n_readers=3, n_cases_negative=5, n_cases_positive=5)
    np.testing.assert_array_equal(
        simulate_roe_metz(**kw, rng=7).ratings, simulate_roe_metz(**kw, rng=7).ratings
    )
    assert not np.array_equal(simulate_roe_metz(**kw).ratings, simulate_roe_metz(**kw).ratings)
    gen = np.random.default_rng(3)
    sims = simulate_roe_metz_studies(2, **kw, rng=gen)
    assert isinstance(sims, RoeMetzStudies) and len(sims) == 2
    assert [s.ratings.shape for s in sims] == [(2, 3, 10)] * 2
    np.testing.assert_array_equal(sims.study(1).ratings, sims.ratings[1])


def test_the_settings_are_roe_and_metz():
    assert len(ROE_METZ_SETTINGS) == 12
    hh = ROE_METZ_SETTINGS["HH-2.5"]
    assert (
        hh.mu,
        hh.var_reader,
        hh.var_modality_reader,
        hh.var_case,
        hh.var_modality_case,
        hh.var_reader_case,
        hh.var_error,
    ) == (2.5, 0.056, 0.056, 0.3, 0.3, 0.2, 0.2)
    ll = ROE_METZ_SETTINGS["LL-0.75"]
    assert (ll.var_reader, ll.var_case, ll.var_modality_case, ll.var_reader_case, ll.var_error) == (
        0.0055,
        0.1,
        0.1,
        0.2,
        0.6,
    )
    assert [ROE_METZ_SETTINGS[f"LH-{m}"].var_reader for m in ("0.75", "1.5", "2.5")] == [0.011, 0.03, 0.056]
    for p in ROE_METZ_SETTINGS.values():  # the case-related components sum to 1 in every setting
        assert p.var_case + p.var_modality_case + p.var_reader_case + p.var_error == pytest.approx(1.0)
    # the AUCs Roe and Metz chose: about 0.70, 0.86 and 0.96
    assert [round(ROE_METZ_SETTINGS[f"LL-{m}"].auc(), 2) for m in ("0.75", "1.5", "2.5")] == [
        0.70,
        0.85,
        0.96,
    ]


def test_shift_for_auc_inverts_the_closed_form():
    p = ROE_METZ_SETTINGS["LH-1.5"]
    d = p.shift_for_auc(p.auc() + 0.05)
    assert p.auc(d) == pytest.approx(p.auc() + 0.05, abs=1e-12)
    assert p.auc(0.3) == pytest.approx(norm.cdf(1.8 / math.sqrt(2 * (1 + 2 * 0.03))))


@pytest.mark.parametrize("setting, delta", [("HH-2.5", 0.0), ("LL-0.75", 0.4), ("LH-1.5", -0.3)])
def test_mean_empirical_auc_matches_the_closed_form(setting, delta):
    n = 3000
    sims = simulate_roe_metz_studies(
        n, n_readers=5, n_cases_negative=40, n_cases_positive=30, delta=delta, parameters=setting, rng=11
    )
    auc = empirical_auc(sims.ratings, sims.truth)  # (studies, modalities, readers)
    per_study = auc.mean(axis=2)  # the studies are independent; readers within one are not
    mean = per_study.mean(axis=0)
    se = per_study.std(axis=0, ddof=1) / math.sqrt(n)
    expected = sims.true_auc()
    p = ROE_METZ_SETTINGS[setting]
    np.testing.assert_allclose(expected, [p.auc(0.0), p.auc(delta)])
    assert np.all(np.abs(mean - expected) < 4 * se), (mean, expected, se)
    assert np.all(
        se < 0.002
    )  # precise enough to tell a reader effect shared across truth states (~0.008 at HH-2.5)


def _moment_estimates(x: np.ndarray) -> dict[str, np.ndarray]:
    """Per study, the six components from products of centred ratings (studies, 2 modalities, R, n)."""
    s, t, r, n = x.shape
    assert t == 2
    total = (x**2).mean(axis=(1, 2, 3))
    by_case = x.sum(axis=2)  # (s, t, n): sum over readers
    by_reader = x.sum(axis=3)  # (s, t, r): sum over cases
    # same reader and case, other modality: R + C + RC
    rc_pair = (x[:, 0] * x[:, 1]).mean(axis=(1, 2))
    # same modality and case, other reader: C + TC
    c_tc = ((by_case**2).sum(axis=(1, 2)) - (x**2).sum(axis=(1, 2, 3))) / (t * n * r * (r - 1))
    # same modality and reader, other case: R + TR
    r_tr = ((by_reader**2).sum(axis=(1, 2)) - (x**2).sum(axis=(1, 2, 3))) / (t * r * n * (n - 1))
    # same reader, other modality and case: R
    rr = ((by_reader[:, 0] * by_reader[:, 1]).sum(axis=1) - (x[:, 0] * x[:, 1]).sum(axis=(1, 2))) / (
        r * n * (n - 1)
    )
    # same case, other modality and reader: C
    cc = ((by_case[:, 0] * by_case[:, 1]).sum(axis=1) - (x[:, 0] * x[:, 1]).sum(axis=(1, 2))) / (
        n * r * (r - 1)
    )
    return {
        "var_reader": rr,
        "var_case": cc,
        "var_modality_reader": r_tr - rr,
        "var_modality_case": c_tc - cc,
        "var_reader_case": rc_pair - rr - cc,
        "var_error": total - rc_pair - (c_tc - cc) - (r_tr - rr),
    }


@pytest.mark.parametrize("setting", ["HH-1.5", "LL-2.5"])
def test_variance_components_are_as_configured(setting):
    n = 2000
    p = dataclasses.replace(ROE_METZ_SETTINGS[setting], var_reader=0.15, var_modality_reader=0.1)
    sims = simulate_roe_metz_studies(
        n, n_readers=6, n_cases_negative=25, n_cases_positive=25, delta=0.5, parameters=p, rng=5
    )
    means = np.zeros(sims.ratings.shape[1:])
    means[..., sims.truth] = (p.mu + np.array(sims.shifts))[:, None, None]
    for block in (
        ~sims.truth,
        sims.truth,
    ):  # the model holds in each truth state, with its own reader effects
        est = _moment_estimates((sims.ratings - means)[..., block])
        for name in COMPONENTS:
            mean = est[name].mean()
            se = est[name].std(ddof=1) / math.sqrt(n)
            assert abs(mean - getattr(p, name)) < 4.5 * se + 1e-3, (name, mean, getattr(p, name), se)
            assert se < 0.01


def test_zero_components_are_not_drawn():
    p = RoeMetzParameters(
        mu=1.0,
        var_reader=0,
        var_modality_reader=0,
        var_case=0,
        var_modality_case=0,
        var_reader_case=0,
        var_error=1.0,
    )
    s = simulate_roe_metz(
        n_readers=2, n_cases_negative=3000, n_cases_positive=3000, parameters=p, mu=2.0, rng=1
    )
    assert s.parameters.mu == 2.0
    assert s.ratings[..., ~s.truth].std() == pytest.approx(1.0, abs=0.03)
    assert s.ratings[..., s.truth].mean() == pytest.approx(2.0, abs=0.03)


def test_delta_per_modality():
    s = simulate_roe_metz(
        n_readers=2, n_cases_negative=2, n_cases_positive=2, n_modalities=3, delta=[0, 0.1, -0.2], rng=0
    )
    assert s.shifts == (0.0, 0.1, -0.2)
    assert simulate_roe_metz(
        n_readers=2, n_cases_negative=2, n_cases_positive=2, n_modalities=3, delta=0.5, rng=0
    ).shifts == (0.0, 0.5, 0.5)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"n_readers": 0}, "'n_readers' parameter of simulate_roe_metz must be an int >= 1"),
        ({"n_cases_positive": 2.5}, "'n_cases_positive'"),
        ({"n_modalities": True}, "'n_modalities'"),
        ({"delta": [0.1, 0.2, 0.3]}, "'delta' .* one shift per modality \\(2\\)"),
        ({"delta": "x"}, "'delta'"),
        ({"delta": float("nan")}, "'delta' .* finite"),
        ({"mu": float("inf")}, "'mu'"),
        ({"parameters": 3}, "'parameters' .* setting name"),
        ({"rng": "seed"}, "'rng'"),
    ],
)
def test_bad_parameters_are_refused_by_name(kwargs, match):
    base = dict(n_readers=2, n_cases_negative=2, n_cases_positive=2)
    with pytest.raises(InvalidParameterError, match=match):
        simulate_roe_metz(**{**base, **kwargs})


def test_an_unknown_setting_suggests_the_close_ones():
    with pytest.raises(UnknownNameError, match="Did you mean 'HL-1.5'"):
        simulate_roe_metz(n_readers=2, n_cases_negative=2, n_cases_positive=2, parameters="HL-1.50")
    with pytest.raises(InvalidParameterError, match="'n_studies'"):
        simulate_roe_metz_studies(0, n_readers=2, n_cases_negative=2, n_cases_positive=2)


def test_parameters_are_checked():
    with pytest.raises(InvalidParameterError, match="'var_case' .* variance and must be >= 0"):
        dataclasses.replace(ROE_METZ_SETTINGS["LL-1.5"], var_case=-0.1)
    with pytest.raises(InvalidParameterError, match="at least one positive variance"):
        RoeMetzParameters(1.0, 0, 0, 0, 0, 0, 0)
    with pytest.raises(InvalidParameterError, match="'auc' parameter of shift_for_auc"):
        ROE_METZ_SETTINGS["LL-1.5"].shift_for_auc(1.0)


@pytest.mark.slow
@pytest.mark.parametrize("covariance", ["jackknife", "delong"])
def test_the_or_test_keeps_its_size_on_null_studies(covariance):
    """400 null studies (HL-1.5, 5 readers, 50 + 50 cases, as Hillis 2007): the OR RRRC test with Hillis's ddf
    rejects at alpha = 0.05 within the 99.9% binomial range of 400 draws at 0.05 (about 0.022-0.083). Obuchowski
    and Rockette's original ddf, (T - 1)(R - 1) = 4, rejects about 1% of them and fails this bound."""
    sims = simulate_roe_metz_studies(
        400, n_readers=5, n_cases_negative=50, n_cases_positive=50, parameters="HL-1.5", rng=20
    )
    tests = [or_analysis(s.ratings, s.truth, covariance=covariance).rrrc.test for s in sims]
    rate = np.mean([t.p_value < 0.05 for t in tests])
    low, high = binom.ppf([0.0005, 0.9995], 400, 0.05) / 400
    assert low <= rate <= high, (rate, low, high)
    original = np.mean([f.sf(t.statistic, 1, 4) < 0.05 for t in tests])
    assert original < low, original
