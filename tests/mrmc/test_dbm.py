"""Dorfman–Berbaum–Metz analysis against the published Van Dyke and Franken outputs, and against the OR analysis
with the jackknife covariance (Hillis et al. 2005: the RRRC analyses are one).

Published values:

- JAFROC 4.2.1 (Chakraborty), its DBM analysis of Van Dyke as kept in RJafroc (dpc10ster/RJafroc@44b0e39,
  ``inst/JAFROC/VanDykeROC.txt``): the treatment x reader x case ANOVA, the per-modality and per-reader ANOVAs,
  the three analyses. JAFROC computes in single precision (its AUCs differ from the double-precision ones of
  OR-DBM MRMC in the 8th digit, e.g. 0.85877615 vs 0.85877617), so its numbers are checked to a relative 5e-6
  and its rounded test columns to their printed digits.
- OR-DBM MRMC 2.51 (Iowa), the DBM variance components of Van Dyke and Franken (RJafroc's
  ``tests/testthat/goodValues361/Iowa/VanDyke.txt`` and ``Franken1.txt``), to the printed digits.
"""

from __future__ import annotations

import numpy as np
import pytest

from cxreval.exceptions import InvalidParameterError
from cxreval.mrmc import dbm_analysis, or_analysis

pytestmark = pytest.mark.shared_data

JAFROC_REL = 5e-6  # single precision in JAFROC 4.2.1 (its MS(C) is 2.5e-6 off the double-precision one)


def test_vandyke_anova_equals_jafroc(vandyke):
    res = dbm_analysis(vandyke.ratings, vandyke.truth)
    a = res.anova
    jafroc_ms = {
        "T": 0.54676316,
        "R": 0.43732679,
        "C": 0.39686891,
        "TR": 0.06281753,
        "TC": 0.09984813,
        "RC": 0.06450099,
        "TRC": 0.03997167,
    }
    jafroc_ss = {
        "T": 0.54676316,
        "R": 1.74930715,
        "C": 44.84618708,
        "TR": 0.25127013,
        "TC": 11.28283814,
        "RC": 29.15444801,
        "TRC": 18.06719311,
    }
    assert a.df == {"T": 1, "R": 4, "C": 113, "TR": 4, "TC": 113, "RC": 452, "TRC": 452}
    for s, v in jafroc_ms.items():
        assert a.ms[s] == pytest.approx(v, rel=JAFROC_REL), s
        assert a.ms[s] * a.df[s] == pytest.approx(jafroc_ss[s], rel=JAFROC_REL), s
    np.testing.assert_allclose(a.ms_reader_by_modality, [0.35141971, 0.14872460], rtol=JAFROC_REL)
    np.testing.assert_allclose(a.ms_case_by_modality, [0.33629383, 0.16042320], rtol=JAFROC_REL)
    np.testing.assert_allclose(a.ms_reader_case_by_modality, [0.06043604, 0.04403661], rtol=JAFROC_REL)
    np.testing.assert_allclose(
        a.ms_treatment_by_reader,
        [0.0452655, 0.1234490, 0.0182111, 0.0392705, 0.5718372],
        rtol=JAFROC_REL,
        atol=5e-8,
    )
    np.testing.assert_allclose(
        a.ms_treatment_case_by_reader,
        [0.0370996, 0.0394317, 0.0555205, 0.0170424, 0.1106406],
        rtol=JAFROC_REL,
        atol=5e-8,
    )


def test_vandyke_variance_components_equal_or_dbm_mrmc(vandyke, published):
    a = dbm_analysis(vandyke.ratings, vandyke.truth).anova
    published(
        [
            (a.var_reader, "0.00153500"),
            (a.var_case, "0.02724923"),
            (a.var_treatment_reader, "0.00020040"),
            (a.var_treatment_case, "0.01197530"),
            (a.var_reader_case, "0.01226473"),
            (a.var_error, "0.03997160"),
        ]
    )


def test_vandyke_analyses_equal_jafroc(vandyke, published):
    res = dbm_analysis(vandyke.ratings, vandyke.truth)
    t1, t2, t3 = res.rrrc.test, res.frrc.test, res.rrfc.test
    assert t1 is not None and t2 is not None and t3 is not None
    (d1,), (d2,), (d3,) = res.rrrc.differences, res.frrc.differences, res.rrfc.differences
    assert t1.denominator == pytest.approx(0.12269399, rel=JAFROC_REL)
    assert t2.denominator == pytest.approx(0.09984813, rel=JAFROC_REL)
    assert t3.denominator == pytest.approx(0.06281753, rel=JAFROC_REL)
    published(
        [
            (t1.statistic, "4.46"),
            (t1.ddf, "15.26"),
            (t1.p_value, "0.0517"),
            (d1.estimate, "-0.04380"),
            (d1.standard_error, "0.02075"),
            (d1.statistic, "-2.11"),
            (d1.low, "-0.08796"),
            (d1.high, "0.00036"),
            (t2.statistic, "5.48"),
            (t2.ddf, "113"),
            (t2.p_value, "0.0210"),
            (d2.standard_error, "0.01872"),
            (d2.df, "113"),
            (d2.statistic, "-2.34"),
            (d2.low, "-0.08088"),
            (d2.high, "-0.00672"),
            (t3.statistic, "8.70"),
            (t3.ddf, "4.00"),
            (t3.p_value, "0.0420"),
            (d3.standard_error, "0.01485"),
            (d3.low, "-0.08502"),
            (d3.high, "-0.00258"),
        ]
    )
    (r1, r2), (f1, f2), (c1, c2) = res.rrrc.modalities, res.frrc.modalities, res.rrfc.modalities
    published([(r1.df, "12.74"), (r2.df, "12.71"), (f1.df, "113"), (c1.df, "4")])
    jafroc = [
        (r1.standard_error, 0.03317359),
        (r1.low, 0.82522361),
        (r1.high, 0.96885046),
        (r2.standard_error, 0.02156635),
        (r2.low, 0.89413784),
        (r2.high, 0.98753684),
        (f1.standard_error, 0.02428969),
        (f1.low, 0.84891477),
        (f1.high, 0.94515930),
        (f2.standard_error, 0.01677630),
        (f2.low, 0.90760047),
        (f2.high, 0.97407422),
        (c1.standard_error, 0.02482994),
        (c1.low, 0.82809807),
        (c1.high, 0.96597599),
        (c2.standard_error, 0.01615303),
        (c2.low, 0.89598934),
        (c2.high, 0.98568534),
    ]
    for ours, theirs in jafroc:
        assert ours == pytest.approx(theirs, rel=JAFROC_REL)
    # each reader's treatment x case analysis (JAFROC part 2d)
    printed = [
        ("-0.02818", "0.02551", "-1.10", "0.2717", "-0.07872", "0.02236"),
        ("-0.04654", "0.02630", "-1.77", "0.0795", "-0.09865", "0.00557"),
        ("-0.01787", "0.03121", "-0.57", "0.5680", "-0.07971", "0.04396"),
        ("-0.02625", "0.01729", "-1.52", "0.1318", "-0.06051", "0.00801"),
        ("-0.10016", "0.04406", "-2.27", "0.0249", "-0.18745", "-0.01288"),
    ]
    for d, (est, se, t, p, low, high) in zip(res.reader_differences, printed):
        published(
            [
                (d.estimate, est),
                (d.standard_error, se),
                (d.statistic, t),
                (d.p_value, p),
                (d.low, low),
                (d.high, high),
                (d.df, "113"),
            ]
        )
    assert [t.p_value for t in res.reader_tests] == pytest.approx([d.p_value for d in res.reader_differences])


def test_franken_variance_components_equal_or_dbm_mrmc(franken, published):
    a = dbm_analysis(franken.ratings, franken.truth).anova
    published(
        [
            (a.var_reader, "0.00003776"),
            (a.var_case, "0.05125091"),
            (a.var_treatment_reader, "-0.00071276"),
            (a.var_treatment_case, "-0.00288715"),
            (a.var_reader_case, "0.02791730"),
            (a.var_error, "0.07629656"),
        ]
    )


@pytest.mark.parametrize("study", ["vandyke", "franken"])
def test_dbm_rrrc_is_or_rrrc_with_the_jackknife(study, request):
    s = request.getfixturevalue(study)
    dbm = dbm_analysis(s.ratings, s.truth)
    orj = or_analysis(s.ratings, s.truth, covariance="jackknife")
    assert dbm.rrrc.test.statistic == pytest.approx(orj.rrrc.test.statistic, rel=1e-10)  # type: ignore[union-attr]
    assert dbm.rrrc.test.ddf == pytest.approx(orj.rrrc.test.ddf, rel=1e-10)  # type: ignore[union-attr]
    for a, b in zip(dbm.rrrc.differences + dbm.rrrc.modalities, orj.rrrc.differences + orj.rrrc.modalities):
        np.testing.assert_allclose(
            [a.standard_error, a.df, a.low, a.high], [b.standard_error, b.df, b.low, b.high], rtol=1e-10
        )
    # the OR components from the DBM ones (Hillis et al. 2005, table I): Var(R), Var(T*R) shared
    assert dbm.anova.var_reader == pytest.approx(orj.components.var_reader, rel=1e-10, abs=1e-15)
    assert dbm.anova.var_treatment_reader == pytest.approx(orj.components.var_treatment_reader, rel=1e-10)
    # the pseudovalues average to the AUCs (normalised pseudovalues)
    np.testing.assert_allclose(dbm.pseudovalues.mean(axis=2), dbm.aucs, rtol=1e-12)


def test_clustered_pseudovalues_leave_out_whole_patients(vandyke):
    clusters = np.arange(114) // 2  # pairs of cases as one patient
    res = dbm_analysis(vandyke.ratings, vandyke.truth, clusters=clusters)
    assert res.pseudovalues.shape == (2, 5, 57)
    orj = or_analysis(vandyke.ratings, vandyke.truth, clusters=clusters)
    assert res.rrrc.test.statistic == pytest.approx(orj.rrrc.test.statistic, rel=1e-10)  # type: ignore[union-attr]


def test_tables(vandyke):
    t = dbm_analysis(vandyke.ratings, vandyke.truth, modality_names=["cine", "SE"]).tables()
    assert {
        "tests",
        "differences",
        "modalities",
        "readers",
        "reader_tests",
        "reader_differences",
        "anova",
        "variance_components",
    } <= set(t)
    assert list(t["anova"]["source"]) == ["T", "R", "C", "TR", "TC", "RC", "TRC"]
    assert set(t["differences"]["modality_a"]) == {"cine"}
    assert len(t["reader_tests"]) == 5


def test_missing_readings_are_refused_with_the_way_out(vandyke):
    x = vandyke.ratings.copy()
    x[0, 0, 0] = np.nan
    with pytest.raises(InvalidParameterError, match="or_analysis"):
        dbm_analysis(x, vandyke.truth)
