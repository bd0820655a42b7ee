"""Obuchowski–Rockette analysis of a 2 x 2 x 6 toy, computed here by hand with exact fractions."""

from __future__ import annotations

from fractions import Fraction as Fr

import numpy as np
import pytest
from scipy import stats

from cxreval.mrmc import or_analysis

from .conftest import TOY, TOY_TRUTH


def _psi(x: float, y: float) -> Fr:
    return Fr(1) if x > y else Fr(1, 2) if x == y else Fr(0)


def _auc(row, pos, neg) -> Fr:
    return sum((_psi(row[i], row[j]) for i in pos for j in neg), Fr(0)) / (len(pos) * len(neg))


def test_toy_or_jackknife_by_hand():
    pos, neg = [3, 4, 5], [0, 1, 2]
    groups = [(t, r) for t in range(2) for r in range(2)]
    auc = {g: _auc(TOY[g], pos, neg) for g in groups}
    # the readers' AUCs by hand: pairs won (ties 1/2) out of 9
    assert [auc[g] for g in groups] == [Fr(15, 18), Fr(16, 18), Fr(17, 18), Fr(14, 18)]
    # leave-one-case-out AUCs by brute force (no placement values), the jackknife covariance in fractions
    loo = {
        g: [_auc(TOY[g], [i for i in pos if i != k], [j for j in neg if j != k]) for k in range(6)]
        for g in groups
    }
    mean = {g: sum(loo[g], Fr(0)) / 6 for g in groups}
    cov = {
        (a, b): Fr(5, 6) * sum(((loo[a][k] - mean[a]) * (loo[b][k] - mean[b]) for k in range(6)), Fr(0))
        for a in groups
        for b in groups
    }
    var = sum((cov[g, g] for g in groups), Fr(0)) / 4
    cov1 = sum((cov[a, b] for a in groups for b in groups if a[1] == b[1] and a[0] != b[0]), Fr(0)) / 4
    cov2 = sum((cov[a, b] for a in groups for b in groups if a[0] == b[0] and a[1] != b[1]), Fr(0)) / 4
    cov3 = sum((cov[a, b] for a in groups for b in groups if a[0] != b[0] and a[1] != b[1]), Fr(0)) / 4
    m1, m2 = (auc[0, 0] + auc[0, 1]) / 2, (auc[1, 0] + auc[1, 1]) / 2
    grand = (m1 + m2) / 2
    r1, r2 = (auc[0, 0] + auc[1, 0]) / 2, (auc[0, 1] + auc[1, 1]) / 2
    ms_t = 2 * ((m1 - grand) ** 2 + (m2 - grand) ** 2)
    ms_r = 2 * ((r1 - grand) ** 2 + (r2 - grand) ** 2)
    ms_tr = sum(((auc[t, r] - [m1, m2][t] - [r1, r2][r] + grand) ** 2 for t, r in groups), Fr(0))
    den = ms_tr + 2 * max(cov2 - cov3, Fr(0))
    f = ms_t / den
    ddf = den**2 / ms_tr**2
    res = or_analysis(TOY, TOY_TRUTH)
    c, test = res.components, res.rrrc.test
    assert test is not None
    np.testing.assert_allclose(res.aucs, [[float(auc[t, r]) for r in range(2)] for t in range(2)], rtol=1e-15)
    got = [
        c.var_error,
        c.cov1,
        c.cov2,
        c.cov3,
        c.ms_treatment,
        c.ms_reader,
        c.ms_treatment_reader,
        test.denominator,
        test.statistic,
        test.ddf,
        test.p_value,
        c.var_reader,
        c.var_treatment_reader,
    ]
    want = [
        var,
        cov1,
        cov2,
        cov3,
        ms_t,
        ms_r,
        ms_tr,
        den,
        f,
        ddf,
        stats.f.sf(float(f), 1, float(ddf)),
        (ms_r - ms_tr) / 2 - cov1 + cov3,
        ms_tr - var + cov1 + cov2 - cov3,
    ]
    np.testing.assert_allclose(got, [float(w) for w in want], rtol=1e-12)
    (d,) = res.rrrc.differences
    q = stats.t.ppf(0.975, float(ddf))
    se = float((2 * den / 2) ** 0.5 if den >= 0 else 0)
    np.testing.assert_allclose(
        [d.estimate, d.standard_error, d.low, d.high],
        [float(m1 - m2), se, float(m1 - m2) - q * se, float(m1 - m2) + q * se],
        rtol=1e-12,
    )
    # fixed readers and fixed cases from the same hand-computed pieces
    x2 = ms_t / (var - cov1 + max(cov2 - cov3, Fr(0)))
    assert res.frrc.test is not None and res.rrfc.test is not None
    assert res.frrc.test.statistic == pytest.approx(float(x2), rel=1e-12)
    assert res.rrfc.test.statistic == pytest.approx(float(ms_t / ms_tr), rel=1e-12)
