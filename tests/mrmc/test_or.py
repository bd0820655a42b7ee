"""Obuchowski–Rockette analysis against the published outputs of the field's anchors on Van Dyke and Franken (a toy
computed by hand: test_or_toy.py; other designs and the input checks: test_or_designs.py).

Published values, each equal here to its printed digits:

- MRMCaov (brian-j-smith/MRMCaov@d79e49b), ``docs/jss/MRMCaov.tex``: the rendered JSS article (Smith, Hillis &
  Pesce), Van Dyke ``empirical_auc`` with ``cov = DeLong``, ``cov = unbiased``, ``fixed(reader)`` (jackknife) and
  ``fixed(case)``.
- OR-DBM MRMC 2.51 (Schartz, Hillis, Pesce & Berbaum, University of Iowa), its Van Dyke and Franken jackknife
  outputs as kept in RJafroc's tests (dpc10ster/RJafroc@44b0e39, ``tests/testthat/goodValues361/Iowa/
  VanDyke.txt`` and ``Franken1.txt``; RJafroc's ``test-StCompare2Iowa.R`` checks St() against them).
"""

from __future__ import annotations

from itertools import product

import numpy as np
import pytest

from cxreval.mrmc import or_analysis


def _row(table, **where):
    sel = table
    for k, v in where.items():
        sel = sel[sel[k] == v]
    assert len(sel) == 1, where
    return sel.iloc[0]


# --- Van Dyke ---------------------------------------------------------------------------------------------------


@pytest.mark.shared_data
def test_vandyke_aucs_equal_or_dbm_mrmc(vandyke, published):
    res = or_analysis(vandyke.ratings, vandyke.truth)
    printed = [
        ["0.91964573", "0.85877617", "0.90386473", "0.97310789", "0.82979066"],  # Iowa VanDyke.txt
        ["0.94782609", "0.90531401", "0.92173913", "0.99935588", "0.92995169"],
    ]
    published([(res.aucs[t, r], printed[t][r]) for t, r in product(range(2), range(5))])
    published(
        [
            (res.modality_aucs[0], "0.89703704"),
            (res.modality_aucs[1], "0.94083736"),
            (res.modality_aucs[0] - res.modality_aucs[1], "-0.04380032"),
        ]
    )
    published([(res.modality_aucs[0], "0.8970"), (res.modality_aucs[1], "0.9408")])


@pytest.mark.shared_data
def test_vandyke_delong_rrrc_equals_mrmcaov(vandyke, published):
    res = or_analysis(vandyke.ratings, vandyke.truth, covariance="delong")
    c, test = res.components, res.rrrc.test
    assert test is not None
    published(
        [
            (c.var_reader, "0.0015364254"),
            (c.var_treatment_reader, "0.0002045840"),
            (c.var_error, "0.0007921325"),
            (c.cov1, "0.0003420090"),
            (c.cov2, "0.0003395265"),
            (c.cov3, "0.0002358497"),
            (c.cov1 / c.var_error, "0.4317573"),
            (c.cov2 / c.var_error, "0.4286234"),
            (c.cov3 / c.var_error, "0.2977402"),
            (c.ms_treatment, "0.004796171"),
            (c.ms_treatment_reader, "0.0005510306"),
            (test.denominator, "0.001069415"),
            (test.statistic, "4.484854"),
            (test.df, "1"),
            (test.ddf, "15.06611"),
            (test.p_value, "0.05123303"),
        ]
    )
    # the brief's headline digits: F = 4.485, ddf = 15.07, p = 0.0512, CI (-0.0879, 0.0003)
    (d,) = res.rrrc.differences
    published(
        [
            (test.statistic, "4.485"),
            (test.ddf, "15.07"),
            (test.p_value, "0.0512"),
            (d.low, "-0.0879"),
            (d.high, "0.0003"),
        ]
    )
    published(
        [
            (d.estimate, "-0.04380032"),
            (d.standard_error, "0.0206825"),
            (d.df, "15.06611"),
            (d.low, "-0.0878671960"),
            (d.high, "0.0002665519"),
            (d.statistic, "-2.117747"),
            (d.p_value, "0.05123303"),
        ]
    )
    m1, m2 = res.rrrc.modalities
    published(
        [
            (m1.auc, "0.8970370"),
            (c.ms_reader_by_modality[0], "0.003082629"),
            (c.cov2_by_modality[0], "0.0004775239"),
            (m1.standard_error, "0.03307642"),
            (m1.df, "12.59597"),
            (m1.low, "0.8253461"),
            (m1.high, "0.9687280"),
            (m2.auc, "0.9408374"),
            (c.ms_reader_by_modality[1], "0.001304602"),
            (c.cov2_by_modality[1], "0.0002015292"),
            (m2.standard_error, "0.02150464"),
            (m2.df, "12.56530"),
            (m2.low, "0.8942155"),
            (m2.high, "0.9874592"),
        ]
    )


@pytest.mark.shared_data
def test_vandyke_unbiased_rrrc_equals_mrmcaov(vandyke, published):
    res = or_analysis(vandyke.ratings, vandyke.truth, covariance="unbiased")
    c, test = res.components, res.rrrc.test
    assert test is not None
    (d,) = res.rrrc.differences
    m1, m2 = res.rrrc.modalities
    published(
        [
            (c.var_reader, "0.0015365290"),
            (c.var_treatment_reader, "0.0002077588"),
            (c.var_error, "0.0007883925"),
            (c.cov1, "0.0003416706"),
            (c.cov2, "0.0003390650"),
            (c.cov3, "0.0002356148"),
            (test.denominator, "0.001068281"),
            (test.statistic, "4.489614"),
            (test.ddf, "15.03418"),
            (test.p_value, "0.0511618"),
            (d.standard_error, "0.02067154"),
            (d.low, "-0.0878519409"),
            (d.high, "0.0002512968"),
            (d.statistic, "-2.118871"),
            (c.cov2_by_modality[0], "0.0004771788"),
            (m1.standard_error, "0.0330712"),
            (m1.df, "12.58802"),
            (m1.low, "0.8253526"),
            (m1.high, "0.9687214"),
            (c.cov2_by_modality[1], "0.0002009512"),
            (m2.standard_error, "0.0214912"),
            (m2.df, "12.53391"),
            (m2.low, "0.8942323"),
            (m2.high, "0.9874424"),
        ]
    )


@pytest.mark.shared_data
def test_vandyke_jackknife_rrrc_equals_or_dbm_mrmc(vandyke, published):
    res = or_analysis(vandyke.ratings, vandyke.truth)  # jackknife, the default
    assert res.covariance_method == "jackknife"
    c, test = res.components, res.rrrc.test
    assert test is not None
    (d,) = res.rrrc.differences
    m1, m2 = res.rrrc.modalities
    ss_t, ss_r, ss_tr = c.ms_treatment, 4 * c.ms_reader, 4 * c.ms_treatment_reader
    published(
        [
            (ss_t, "0.00479617"),
            (ss_r, "0.01534480"),
            (ss_tr, "0.00220412"),
            (c.ms_reader, "0.00383620"),
            (c.ms_treatment_reader, "0.00055103"),
            (c.ms_reader_by_modality[0], "0.00308263"),
            (c.ms_reader_by_modality[1], "0.00130460"),
            (c.var_reader, "0.00153500"),
            (c.var_treatment_reader, "0.00020040"),
            (c.cov1, "0.00034661"),
            (c.cov2, "0.00034407"),
            (c.cov3, "0.00023903"),
            (c.var_error, "0.00080229"),
            (c.cov1 / c.var_error, "0.43203138"),
            (c.cov2 / c.var_error, "0.42886683"),
            (c.cov3 / c.var_error, "0.29793328"),
            (test.statistic, "4.46"),
            (test.p_value, "0.0517"),
            (test.ddf, "15.26"),
            (test.denominator, "0.00107626"),
            (d.estimate, "-0.04380"),
            (d.standard_error, "0.02075"),
            (d.df, "15.26"),
            (d.statistic, "-2.11"),
            (d.p_value, "0.0517"),
            (d.low, "-0.08796"),
            (d.high, "0.00036"),
            (m1.standard_error, "0.03317360"),
            (m1.df, "12.74"),
            (m1.low, "0.82522360"),
            (m1.high, "0.96885048"),
            (c.cov2_by_modality[0], "0.00048396"),
            (m2.standard_error, "0.02156637"),
            (m2.df, "12.71"),
            (m2.low, "0.89413783"),
            (m2.high, "0.98753689"),
            (c.cov2_by_modality[1], "0.00020419"),
        ]
    )
    # the brief's headline digits for DBM = OR with the jackknife: F = 4.456, ddf = 15.26, p = 0.0517
    published([(test.statistic, "4.456"), (test.ddf, "15.26"), (test.p_value, "0.0517")])


@pytest.mark.shared_data
def test_vandyke_fixed_readers_equals_mrmcaov_and_or_dbm_mrmc(vandyke, published):
    res = or_analysis(vandyke.ratings, vandyke.truth)
    c, test = res.components, res.frrc.test
    assert test is not None and test.statistic_name == "chi2"
    (d,) = res.frrc.differences
    m1, m2 = res.frrc.modalities
    published(
        [
            (c.var_reader, "0.0015349993"),
            (c.var_treatment_reader, "0.0002004025"),  # MRMCaov fixed(reader)
            (c.var_error, "0.0008022883"),
            (c.cov1, "0.0003466137"),
            (c.cov2, "0.0003440748"),
            (c.cov3, "0.0002390284"),
            (test.denominator, "0.0008758604"),
            (test.statistic, "5.475953"),
            (test.df, "1"),
            (test.p_value, "0.01927984"),
            (d.estimate, "-0.04380032"),
            (d.standard_error, "0.01871748"),
            (d.low, "-0.08048591"),
            (d.high, "-0.00711473"),
            (d.statistic, "-2.340075"),
            (d.p_value, "0.01927984"),
            (m1.auc, "0.8970370"),
            (c.var_error_by_modality[0], "0.0010141028"),
            (c.cov2_by_modality[0], "0.0004839618"),
            (m1.standard_error, "0.02428971"),
            (m1.low, "0.8494301"),
            (m1.high, "0.9446440"),
            (m2.auc, "0.9408374"),
            (c.var_error_by_modality[1], "0.0005904738"),
            (c.cov2_by_modality[1], "0.0002041879"),
            (m2.standard_error, "0.01677632"),
            (m2.low, "0.9079564"),
            (m2.high, "0.9737183"),
            (test.statistic, "5.47595"),
            (test.p_value, "0.0193"),
        ]
    )  # Iowa
    assert np.isinf(d.df)
    printed = [  # MRMCaov: reader, estimate, SE, CI, z, p
        ("1", "-0.02818035", "0.02551213", "-0.078183215", "0.021822507", "-1.1045864", "0.26933885"),
        ("2", "-0.04653784", "0.02630183", "-0.098088476", "0.005012792", "-1.7693768", "0.07683102"),
        ("3", "-0.01787440", "0.03120965", "-0.079044180", "0.043295388", "-0.5727202", "0.56683414"),
        ("4", "-0.02624799", "0.01729129", "-0.060138290", "0.007642316", "-1.5179891", "0.12901715"),
        ("5", "-0.10016103", "0.04405746", "-0.186512066", "-0.013809995", "-2.2734182", "0.02300099"),
    ]
    rd = res.tables()["reader_differences"]
    for reader, est, se, low, high, z, p in printed:
        row = _row(rd, reader=reader)
        published(
            [
                (row.estimate, est),
                (row.standard_error, se),
                (row.low, low),
                (row.high, high),
                (row.statistic, z),
                (row.p_value, p),
            ]
        )
    iowa = {
        "1": ("0.00069890", "0.00037347"),
        "2": ("0.00110605", "0.00076016"),
        "3": ("0.00084234", "0.00035532"),
        "4": ("0.00015058", "0.00000108"),
        "5": ("0.00121357", "0.00024304"),
    }
    published(
        [(c.var_error_by_reader[int(r) - 1], v) for r, (v, _) in iowa.items()]
        + [(c.cov1_by_reader[int(r) - 1], v) for r, (_, v) in iowa.items()]
    )
    readers = [  # MRMCaov "Single reader 95% CIs": AUC, SE, CI (clipped to [0, 1])
        ("1", "1", "0.9196457", "0.0301255164", "0.8606008", "0.9786907"),
        ("1", "2", "0.8587762", "0.0363753335", "0.7874818", "0.9300705"),
        ("1", "3", "0.9038647", "0.0282594118", "0.8484773", "0.9592522"),
        ("1", "4", "0.9731079", "0.0173388332", "0.9391244", "1.0000000"),
        ("1", "5", "0.8297907", "0.0417201720", "0.7480206", "0.9115607"),
        ("2", "1", "0.9478261", "0.0221416887", "0.9044292", "0.9912230"),
        ("2", "2", "0.9053140", "0.0298151099", "0.8468775", "0.9637506"),
        ("2", "3", "0.9217391", "0.0297673065", "0.8633963", "0.9800820"),
        ("2", "4", "0.9993559", "0.0007213348", "0.9979421", "1.0000000"),
        ("2", "5", "0.9299517", "0.0262023046", "0.8785961", "0.9813073"),
    ]
    rt = res.tables()["readers"]
    for mod, reader, auc, se, low, high in readers:
        row = _row(rt, modality=mod, reader=reader)
        published([(row.auc, auc), (row.standard_error, se), (row.low, low), (row.high, high)])


@pytest.mark.shared_data
def test_vandyke_fixed_cases_equals_mrmcaov(vandyke, published):
    res = or_analysis(vandyke.ratings, vandyke.truth)
    test = res.rrfc.test
    assert test is not None
    (d,) = res.rrfc.differences
    m1, m2 = res.rrfc.modalities
    published(
        [
            (test.statistic, "8.704"),
            (test.df, "1"),
            (test.ddf, "4"),
            (test.p_value, "0.04195875"),
            (d.df, "4"),
            (d.standard_error, "0.01484629"),
            (d.low, "-0.08502022"),
            (d.high, "-0.00258042"),
            (d.statistic, "-2.950254"),
            (d.p_value, "0.04195875"),
            (m1.standard_error, "0.02482994"),
            (m1.df, "4"),
            (m1.low, "0.8280981"),
            (m1.high, "0.9659760"),
            (m2.standard_error, "0.01615303"),
            (m2.df, "4"),
            (m2.low, "0.8959894"),
            (m2.high, "0.9856854"),
        ]
    )


# --- Franken: Cov2 < Cov3, where the clamp matters ---------------------------------------------------------------


@pytest.mark.shared_data
def test_franken_equals_or_dbm_mrmc(franken, published):
    res = or_analysis(franken.ratings, franken.truth)
    c = res.components
    printed = [
        ["0.85345997", "0.86499322", "0.85730439", "0.81524197"],  # Iowa Franken1.txt
        ["0.84961556", "0.84350972", "0.84011759", "0.81433740"],
    ]
    published([(res.aucs[t, r], printed[t][r]) for t, r in product(range(2), range(4))])
    published(
        [
            (res.modality_aucs[0], "0.84774989"),
            (res.modality_aucs[1], "0.83689507"),
            (c.ms_treatment, "0.00023565"),
            (3 * c.ms_reader, "0.00205218"),
            (c.ms_reader, "0.00068406"),
            (3 * c.ms_treatment_reader, "0.00015061"),
            (c.ms_treatment_reader, "0.00005020"),
            (c.ms_reader_by_modality[0], "0.00049266"),
            (c.ms_reader_by_modality[1], "0.00024160"),
            (c.var_reader, "0.00003776"),
            (c.var_treatment_reader, "-0.00071276"),
            (c.cov1, "0.00079168"),
            (c.cov2, "0.00048364"),
            (c.cov3, "0.00051251"),
            (c.var_error, "0.00152578"),
            (c.cov1 / c.var_error, "0.51887172"),
            (c.cov2 / c.var_error, "0.31697811"),
            (c.cov3 / c.var_error, "0.33590059"),
        ]
    )
    t1, t2, t3 = res.rrrc.test, res.frrc.test, res.rrfc.test
    assert t1 is not None and t2 is not None and t3 is not None
    (d1,), (d2,), (d3,) = res.rrrc.differences, res.frrc.differences, res.rrfc.differences
    r1, r2 = res.rrrc.modalities
    f1, f2 = res.frrc.modalities
    c1, c2 = res.rrfc.modalities
    published(
        [
            (t1.statistic, "4.69"),
            (t1.p_value, "0.1188"),
            (t1.ddf, "3.00"),
            (t1.denominator, "0.00005020"),
            (d1.estimate, "0.01085"),
            (d1.standard_error, "0.00501"),
            (d1.low, "-0.00509"),
            (d1.high, "0.02680"),
            (r1.standard_error, "0.02440215"),
            (r1.df, "70.12"),
            (r1.low, "0.79908282"),
            (r1.high, "0.89641696"),
            (r2.standard_error, "0.02356642"),
            (r2.df, "253.64"),
            (r2.low, "0.79048429"),
            (r2.high, "0.88330585"),
            (c.cov2_by_modality[0], "0.00047230"),
            (c.cov2_by_modality[1], "0.00049498"),
            (t2.statistic, "0.32101"),
            (t2.p_value, "0.5710"),
            (d2.standard_error, "0.01916"),
            (d2.low, "-0.02670"),
            (d2.high, "0.04840"),
            (f1.standard_error, "0.02710939"),
            (f1.low, "0.79461647"),
            (f1.high, "0.90088331"),
            (f2.standard_error, "0.02744860"),
            (f2.low, "0.78309680"),
            (f2.high, "0.89069334"),
            (c.var_error_by_modality[0], "0.00152278"),
            (c.var_error_by_modality[1], "0.00152877"),
            (t3.statistic, "4.69"),
            (t3.p_value, "0.1188"),
            (d3.standard_error, "0.00501"),
            (c1.standard_error, "0.01109801"),
            (c1.low, "0.81243106"),
            (c1.high, "0.88306871"),
            (c2.standard_error, "0.00777173"),
            (c2.low, "0.81216196"),
            (c2.high, "0.86162818"),
        ]
    )
    iowa = [
        ("1", "0.00384", "0.04279", "0.9284", "0.00147717", "0.00056158"),
        ("2", "0.02148", "0.04007", "0.5919", "0.00151861", "0.00071581"),
        ("3", "0.01719", "0.03499", "0.6233", "0.00137738", "0.00076509"),
        ("4", "0.00090", "0.03481", "0.9793", "0.00172995", "0.00112425"),
    ]
    rd = res.tables()["reader_differences"]
    for reader, est, se, p, var, cov1 in iowa:
        j = int(reader) - 1
        row = _row(rd, reader=reader)  # default labels 1..4, the sorted READER_1..4
        published(
            [
                (row.estimate, est),
                (row.standard_error, se),
                (row.p_value, p),
                (c.var_error_by_reader[j], var),
                (c.cov1_by_reader[j], cov1),
            ]
        )


@pytest.mark.shared_data
def test_franken_fixed_readers_without_the_clamp_is_mrmcaov_convention(franken):
    clamped = or_analysis(franken.ratings, franken.truth)
    plain = or_analysis(franken.ratings, franken.truth, fixed_readers_clamp=False)
    c = plain.components
    assert c.cov2 < c.cov3
    assert plain.frrc.test is not None and clamped.frrc.test is not None
    assert plain.frrc.test.denominator == pytest.approx(
        c.var_error - c.cov1 + 3 * (c.cov2 - c.cov3), rel=1e-12
    )
    assert plain.frrc.test.statistic > clamped.frrc.test.statistic
    assert plain.rrrc == clamped.rrrc  # the random-readers test always clamps (Hillis)
