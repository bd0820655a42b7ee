"""The power and sample size of a reader study against RJafroc's documented values for the Van Dyke (dataset02) and
Franken (dataset03) pilots, against the structure of the noncentral F, and against the rejection rate of the OR
test on Roe and Metz studies simulated at the planned size."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from cxreval.exceptions import InvalidParameterError
from cxreval.mrmc import (
    ROE_METZ_SETTINGS,
    MRMCSampleSizeResult,
    PilotVarianceComponents,
    mrmc_sample_size,
    or_analysis,
    simulate_roe_metz_studies,
)

# RJafroc's documented OR components of dataset02 (Van Dyke; jackknife, Wilcoxon AUC; SsPowerGivenJK example 4A)
VAN_DYKE = PilotVarianceComponents(
    var_modality_reader=0.00020040252,
    error_variance=0.00080228827,
    cov1=0.00034661371,
    cov2=0.00034407483,
    cov3=0.00023902837,
    n_cases=114,
    effect=-0.043800322,
)


@pytest.mark.parametrize(
    "readers, cases, analysis, expected",
    [
        # RJafroc tests/testthat/test-SsSampleSizeRoc.R: SsPowerGivenJK(dataset02, FOM = "Wilcoxon", method = "OR",
        # effectSize = -0.043800322, ...) and SsPowerGivenJK(dataset02, J = 6, K = 111, method = "OR")
        (10, 165, "RRRC", 0.80541995),
        (10, 131, "FRRC", 0.80091813),
        (10, 53, "RRFC", 0.80496663),
        (6, 111, "RRRC", 0.5526116),
    ],
)
def test_power_equals_rjafroc_for_van_dyke(readers, cases, analysis, expected):
    res = mrmc_sample_size(VAN_DYKE, n_readers=readers, n_cases=cases, analysis=analysis)
    assert res.effect == pytest.approx(0.043800322)
    assert res.power["power"].iloc[0] == pytest.approx(expected, abs=5e-8)


def test_fewest_cases_equal_rjafroc_for_van_dyke():
    # SsSampleSizeKGivenJ(dataset02, J = 6, FOM = "Wilcoxon", method = "OR")$KRRRC == 251 and SsPowerTable's
    # power 0.801 there; the K of the FRRC and RRFC powers above are the fewest for 0.8 at 10 readers
    res = mrmc_sample_size(VAN_DYKE, n_readers=[6, 10], n_cases=100)
    six = res.minimum_cases.set_index("n_readers").loc[6]
    assert six["n_cases"] == 251 and round(six["power"], 3) == 0.801
    assert res.power_at(6, 250) < 0.8 <= res.power_at(6, 251)
    for analysis, k in (("FRRC", 131), ("RRFC", 53)):
        r = mrmc_sample_size(VAN_DYKE, n_readers=10, n_cases=100, analysis=analysis)
        assert r.minimum_cases["n_cases"].iloc[0] == k


def test_the_formulas_of_hillis_obuchowski_berbaum():
    """Noncentrality, ddf and critical value of one design, by hand from the components (2011, eq. 10)."""
    j, k, d = 7, 150, 0.05
    s = VAN_DYKE.n_cases / k
    c = VAN_DYKE.cov2 - VAN_DYKE.cov3
    within = VAN_DYKE.error_variance - VAN_DYKE.cov1
    den = VAN_DYKE.var_modality_reader + s * (within + (j - 1) * c)
    ddf = (j - 1) * den**2 / (VAN_DYKE.var_modality_reader + s * (within - c)) ** 2
    row = mrmc_sample_size(VAN_DYKE, effect=d, n_readers=j, n_cases=k).power.iloc[0]
    assert row["noncentrality"] == pytest.approx(j * d**2 / (2 * den))
    assert row["ddf"] == pytest.approx(ddf)
    assert row["critical_value"] == pytest.approx(stats.f.ppf(0.95, 1, ddf))
    # the noncentral F by Monte Carlo (an independent route to the tail probability)
    gen = np.random.default_rng(0)
    lam = j * d**2 / (2 * den)
    f = (gen.noncentral_chisquare(1, lam, 400_000)) / (gen.chisquare(ddf, 400_000) / ddf)
    assert row["power"] == pytest.approx((f > row["critical_value"]).mean(), abs=4e-3)


def test_power_grows_with_readers_cases_and_effect():
    res = mrmc_sample_size(VAN_DYKE, effect=0.05, n_readers=[3, 5, 8, 12], n_cases=[50, 100, 200, 400])
    grid = res.power.pivot(index="n_readers", columns="n_cases", values="power").to_numpy()
    assert np.all(np.diff(grid, axis=0) > 0) and np.all(np.diff(grid, axis=1) > 0)
    assert res.power_at(5, 100) < mrmc_sample_size(VAN_DYKE, effect=0.07, n_readers=5, n_cases=100).power_at(
        5, 100
    )
    # fixed readers: no reader-by-modality variance in the error term, more power than random readers
    fr = mrmc_sample_size(
        VAN_DYKE, effect=0.05, n_readers=[3, 5, 8, 12], n_cases=[50, 100, 200, 400], analysis="FRRC"
    )
    assert np.all(fr.power["power"].to_numpy() > res.power["power"].to_numpy())
    assert np.all(np.isinf(fr.power["ddf"]))


def test_no_effect_has_the_power_alpha():
    res = mrmc_sample_size(VAN_DYKE, effect=0.0, n_readers=[4, 9], n_cases=[80, 300], alpha=0.1)
    np.testing.assert_allclose(res.power["power"], 0.1, atol=1e-9)
    assert res.minimum_cases["n_cases"].isna().all()


def test_too_few_readers_cannot_reach_the_target():
    """With random readers the power with infinitely many cases is that of var_TR alone, below 1."""
    res = mrmc_sample_size(VAN_DYKE, effect=0.02, n_readers=[3, 40], n_cases=100, target_power=0.8)
    few, many = res.minimum_cases.itertuples(index=False)
    lam = 3 * 0.02**2 / (2 * VAN_DYKE.var_modality_reader)
    assert few.power_limit == pytest.approx(stats.ncf.sf(stats.f.ppf(0.95, 1, 2), 1, 2, lam))
    assert few.power_limit < 0.8 and pd.isna(few.n_cases) and math.isnan(few.power)
    assert many.n_cases is not pd.NA and many.power >= 0.8
    assert res.power_at(40, int(many.n_cases) - 1) < 0.8
    assert "Fewest cases for power >= 0.8" in res.summary()


def test_a_negative_var_tr_estimate_counts_as_zero():
    neg = PilotVarianceComponents(-0.001, 0.0008, 0.0003, 0.0002, 0.0001, 100)
    zero = PilotVarianceComponents(0.0, 0.0008, 0.0003, 0.0002, 0.0001, 100)
    a = mrmc_sample_size(neg, effect=0.05, n_readers=5, n_cases=[50, 150])
    b = mrmc_sample_size(zero, effect=0.05, n_readers=5, n_cases=[50, 150])
    pd.testing.assert_frame_equal(a.power, b.power)
    assert a.minimum_cases["power_limit"].iloc[0] == 1.0


@pytest.mark.shared_data
def test_an_or_analysis_is_a_pilot(vandyke, franken):
    res = or_analysis(vandyke.ratings, vandyke.truth)
    pilot = PilotVarianceComponents.from_or_result(res, n_cases=114)
    for name in ("var_modality_reader", "error_variance", "cov1", "cov2", "cov3", "effect"):
        assert getattr(pilot, name) == pytest.approx(getattr(VAN_DYKE, name), rel=1e-7), name
    direct = mrmc_sample_size(res, pilot_cases=114, n_readers=[6, 10], n_cases=[111, 165])
    pd.testing.assert_frame_equal(
        direct.power, mrmc_sample_size(VAN_DYKE, n_readers=[6, 10], n_cases=[111, 165]).power
    )
    # RJafroc: SsSampleSizeKGivenJ(dataset03, FOM = "Wilcoxon", effectSize = 0.05, J = 6, method = "OR")
    # gives powerRRRC 0.8004469 at its fewest cases
    fr = mrmc_sample_size(
        or_analysis(franken.ratings, franken.truth), pilot_cases=100, effect=0.05, n_readers=6, n_cases=100
    )
    assert fr.minimum_cases["power"].iloc[0] == pytest.approx(0.8004469, abs=5e-8)


@pytest.mark.slow
def test_predicted_power_is_the_rejection_rate_of_simulated_studies():
    """Pilot components (the mean of 150 simulated pilots' jackknife estimates: 5 readers, 100 cases, an AUC
    difference of 0.075) predict the power of 6 readers x 300 cases; 400 Roe and Metz studies of that size are
    tested with the OR RRRC test. The method is an approximation (on 2,000 studies each, 6 readers and 120, 200
    or 300 cases, it predicts 0.54, 0.67, 0.75 where the test rejects 0.50, 0.63, 0.71: the OR test is a little
    conservative), hence the margin of 0.05 beside the Monte Carlo error."""
    setting = ROE_METZ_SETTINGS["LH-0.75"]
    effect = 0.075
    delta = setting.shift_for_auc(setting.auc() + effect)
    pilots = simulate_roe_metz_studies(
        150, n_readers=5, n_cases_negative=50, n_cases_positive=50, delta=delta, parameters=setting, rng=1
    )
    comps = [or_analysis(s.ratings, s.truth).components for s in pilots]
    mean = {
        k: float(np.mean([getattr(c, k) for c in comps]))
        for k in ("var_treatment_reader", "var_error", "cov1", "cov2", "cov3")
    }
    pilot = PilotVarianceComponents(
        mean["var_treatment_reader"], mean["var_error"], mean["cov1"], mean["cov2"], mean["cov3"], n_cases=100
    )
    predicted = mrmc_sample_size(pilot, effect=effect, n_readers=6, n_cases=300).power_at(6, 300)
    studies = simulate_roe_metz_studies(
        400, n_readers=6, n_cases_negative=150, n_cases_positive=150, delta=delta, parameters=setting, rng=2
    )
    rate = float(np.mean([or_analysis(s.ratings, s.truth).rrrc.test.p_value < 0.05 for s in studies]))
    se = math.sqrt(predicted * (1 - predicted) / len(studies))
    assert abs(rate - predicted) < 0.05 + 3 * se, (rate, predicted)
    # the pilot's covariances unscaled (as if the study had the pilot's 100 cases) would miss by far more
    unscaled = mrmc_sample_size(pilot, effect=effect, n_readers=6, n_cases=100).power_at(6, 100)
    assert rate - unscaled > 0.15, (rate, unscaled)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"pilot": {"error_variance": 1.0}}, "'pilot' .* must hold .* Missing"),
        ({"pilot": {**VAN_DYKE.to_dict(), "var_tr": 0.1}}, "Unknown \\['var_tr'\\]"),
        ({"pilot": "x"}, "'pilot' parameter of mrmc_sample_size must be an ORResult"),
        (
            {"pilot": PilotVarianceComponents(0.0, 0.001, 0.0, 0.0, 0.0, 100)},
            "'effect' parameter .* is needed",
        ),
        ({"effect": "big"}, "'effect' parameter of mrmc_sample_size must be a finite number"),
        ({"n_readers": 1}, "'n_readers' .* ints >= 2"),
        ({"n_readers": []}, "'n_readers' .* non-empty"),
        ({"n_cases": [100, 1]}, "'n_cases' .* ints >= 2"),
        ({"n_cases": 100.0}, "'n_cases'"),
        ({"alpha": 0}, "'alpha' .* in \\(0, 1\\)"),
        ({"target_power": 1.5}, "'target_power'"),
        ({"analysis": "RRR"}, "'analysis' .* one of \\['RRRC', 'FRRC', 'RRFC'\\]"),
        ({"max_cases": 1}, "'max_cases'"),
        ({"pilot_cases": 100}, "'pilot_cases' .* ORResult only"),
        ({"pilot": PilotVarianceComponents(0.0, 0.001, 0.002, 0.0, 0.0, 100, 0.05)}, "denominator <= 0"),
    ],
)
def test_bad_parameters_are_refused_by_name(kwargs, match):
    base = {"pilot": VAN_DYKE, "n_readers": 5, "n_cases": 100}
    with pytest.raises(InvalidParameterError, match=match):
        mrmc_sample_size(**{**base, **kwargs})


def test_pilot_components_are_checked():
    with pytest.raises(
        InvalidParameterError, match="'cov2' parameter of PilotVarianceComponents must be a finite"
    ):
        PilotVarianceComponents(0.0, 0.001, 0.0, float("nan"), 0.0, 100)
    with pytest.raises(InvalidParameterError, match="'n_cases' .* whole number >= 2"):
        PilotVarianceComponents(0.0, 0.001, 0.0, 0.0, 0.0, 1)
    with pytest.raises(InvalidParameterError, match="'error_variance' .* > 0"):
        PilotVarianceComponents(0.0, 0.0, 0.0, 0.0, 0.0, 100)
    with pytest.raises(InvalidParameterError, match="'pilot_cases' parameter of mrmc_sample_size is needed"):
        rng = np.random.default_rng(0)
        truth = np.repeat([0, 1], 10)
        mrmc_sample_size(or_analysis(truth + rng.normal(size=(2, 3, 20)), truth), n_readers=4, n_cases=50)
    with pytest.raises(
        InvalidParameterError, match="'pilot_cases' parameter of mrmc_sample_size must be an int >= 2"
    ):
        mrmc_sample_size(
            or_analysis(truth + rng.normal(size=(2, 3, 20)), truth), pilot_cases=1.5, n_readers=4, n_cases=50
        )
    with pytest.raises(InvalidParameterError, match="from_or_result needs an ORResult"):
        PilotVarianceComponents.from_or_result(VAN_DYKE, n_cases=100)  # type: ignore[arg-type]
    assert isinstance(
        mrmc_sample_size(VAN_DYKE, n_readers=range(2, 5), n_cases=(60, 90)), MRMCSampleSizeResult
    )
