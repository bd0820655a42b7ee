"""Tests of cxreval.classification against scikit-learn's roc_auc_score (1e-12)."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import roc_auc_score as sk_auc

from _factories import AUC_FINDINGS, auc_inputs
from cxreval.bootstrap import draw_plan, summarize_distribution
from cxreval.classification import compare_auc, delong_test, evaluate_auc, roc_auc_score
from cxreval.classification._auc_score import weighted_auc
from cxreval.exceptions import InvalidParameterError, SchemaError, UndefinedMetricWarning
from cxreval.stats._auc_result import AUC_COLUMNS


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 1), st.integers(0, 6)), min_size=2, max_size=40))
def test_roc_auc_equals_sklearn_with_ties(pairs):
    y = np.array([p[0] for p in pairs])
    s = np.array([p[1] for p in pairs]) / 3.0
    if y.min() == y.max():
        with pytest.warns(UndefinedMetricWarning, match="Only one class"):
            assert np.isnan(roc_auc_score(y, s))
        return
    assert abs(roc_auc_score(y, s) - sk_auc(y, s)) < 1e-12


def test_weighted_auc_equals_sklearn_on_repeated_indices_and_weights():
    g = np.random.default_rng(1)
    for _ in range(30):
        n = int(g.integers(5, 80))
        y = g.integers(0, 2, n)
        y[:2] = [0, 1]
        s = g.integers(0, 6, n).astype(float)
        w = g.integers(0, 4, (6, n))
        a = weighted_auc(y, s, w)
        af = weighted_auc(y, s, w.astype(float))
        for b in range(6):
            idx = np.repeat(np.arange(n), w[b])
            if len(set(y[idx])) < 2:
                assert np.isnan(a[b])
                continue
            assert abs(a[b] - sk_auc(y[idx], s[idx])) < 1e-12
            assert abs(af[b] - sk_auc(y, s, sample_weight=w[b])) < 1e-12
            assert abs(roc_auc_score(y, s, sample_weight=w[b]) - a[b]) < 1e-12


def test_auc_input_errors():
    with pytest.raises(InvalidParameterError, match="only 0 and 1; found 2 at position 1"):
        roc_auc_score([0, 2, 1], [0.1, 0.2, 0.3])
    with pytest.raises(SchemaError, match="must be finite; found nan at position 2"):
        roc_auc_score([0, 1, 1], [0.1, 0.2, np.nan])
    with pytest.raises(InvalidParameterError, match=r"'weights' must have shape \(n_resamples, 3\)"):
        weighted_auc([0, 1, 1], [0.1, 0.2, 0.3], np.ones((2, 4), dtype=int))


def test_evaluate_auc_point_and_ci_equal_sklearn_loop_on_the_same_plan():
    preds, labels = auc_inputs()
    res = evaluate_auc(preds, labels, n_resamples=60, rng=0)
    assert list(res.table.columns) == list(AUC_COLUMNS)
    plan = res.plan
    studies = np.array(plan.study_ids)
    for m, f, r in [("M0", "Atelectasis", "R0"), ("M3", "Effusion", "R1"), ("M2", "Consolidation", "R1")]:
        lab = labels[(labels.source == r) & (labels.finding == f)].set_index("study_id").reindex(studies)
        y = lab.state.map({"positive": 1.0, "negative": 0.0}).to_numpy()
        s = (
            preds[(preds.model == m) & (preds.finding == f)]
            .set_index("study_id")
            .reindex(studies)
            .score.to_numpy()
        )
        ok = np.isfinite(y)
        row = res.table[(res.table.model == m) & (res.table.finding == f) & (res.table.reference == r)].iloc[
            0
        ]
        assert abs(row.auc - sk_auc(y[ok], s[ok])) < 1e-12
        assert (row.n_pos, row.n_neg, row.n_dropped) == (
            int((y == 1).sum()),
            int((y == 0).sum()),
            int((~ok).sum()),
        )
        loop = []
        for b in range(plan.n_resamples):
            idx = plan.study_indices(b)
            idx = idx[ok[idx]]
            loop.append(sk_auc(y[idx], s[idx]))
        loop = np.array(loop)
        i, j, k = res.models.index(m), res.findings.index(f), res.references.index(r)
        assert np.max(np.abs(res.distribution[i, j, k] - loop)) < 1e-12
        summ = summarize_distribution(loop)
        assert abs(row.ci_low - summ["ci_low"]) < 1e-12 and abs(row.ci_high - summ["ci_high"]) < 1e-12


def _pooled(preds, labels, studies, model, reference):
    """Pooled (finding, study) labels, scores and the study of each pair, finding-major (as sklearn sees them)."""
    ys, ss, st = [], [], []
    for f in AUC_FINDINGS:
        lab = (
            labels[(labels.source == reference) & (labels.finding == f)]
            .set_index("study_id")
            .reindex(studies)
        )
        ys.append(lab.state.map({"positive": 1.0, "negative": 0.0}).to_numpy())
        ss.append(
            preds[(preds.model == model) & (preds.finding == f)]
            .set_index("study_id")
            .reindex(studies)
            .score.to_numpy()
        )
        st.append(np.arange(len(studies)))
    return np.concatenate(ys), np.concatenate(ss), np.concatenate(st)


def test_micro_auc_equals_sklearn_on_pooled_scores_with_the_same_patient_bootstrap():
    preds, labels = auc_inputs()
    res = evaluate_auc(preds, labels, n_resamples=60, rng=0)
    assert res.findings == (*AUC_FINDINGS, "macro", "micro")
    plan = res.plan
    studies = np.array(plan.study_ids)
    for m, r in [("M0", "R0"), ("M3", "R1")]:
        y, s, st = _pooled(preds, labels, studies, m, r)
        ok = np.isfinite(y)
        row = res.table[
            (res.table.model == m) & (res.table.finding == "micro") & (res.table.reference == r)
        ].iloc[0]
        assert abs(row.auc - sk_auc(y[ok], s[ok])) < 1e-12
        assert (row.n_pos, row.n_neg, row.n_dropped) == (
            int((y == 1).sum()),
            int((y == 0).sum()),
            int((~ok).sum()),
        )
        # replicate b: a study drawn c times (through its patient) weighs c in every one of its pooled pairs
        i, k = res.models.index(m), res.references.index(r)
        loop = []
        for b in range(plan.n_resamples):
            w = np.bincount(plan.study_indices(b), minlength=len(studies))[st]
            keep = ok & (w > 0)
            loop.append(sk_auc(y[keep], s[keep], sample_weight=w[keep]))
        assert np.max(np.abs(res.distribution[i, -1, k] - np.array(loop))) < 1e-12
        summ = summarize_distribution(np.array(loop))
        assert abs(row.ci_low - summ["ci_low"]) < 1e-12 and abs(row.ci_high - summ["ci_high"]) < 1e-12
    # the micro AUC is not the macro average
    t = res.table
    assert not np.allclose(t[t.finding == "micro"].auc.to_numpy(), t[t.finding == "macro"].auc.to_numpy())
    # leave-one-patient-out of the pooled AUC
    jk = res.jackknife("M1", "micro", "R0")
    y, s, st = _pooled(preds, labels, studies, "M1", "R0")
    for p in (0, 7):
        keep = np.isfinite(y) & (plan.study_patient[st] != p)
        assert abs(jk[p] - sk_auc(y[keep], s[keep])) < 1e-12
    # opt out, and one finding only: no micro row
    assert "micro" not in evaluate_auc(preds, labels, n_resamples=0, micro=False).findings
    one = evaluate_auc(preds, labels, findings=["Effusion"], n_resamples=0)
    assert one.findings == ("Effusion",)
    without_macro = evaluate_auc(preds, labels, n_resamples=5, rng=0, macro=False)
    assert without_macro.findings == (*AUC_FINDINGS, "micro")
    np.testing.assert_allclose(
        without_macro.point[:, -1], evaluate_auc(preds, labels, n_resamples=0).point[:, -1]
    )
    with pytest.raises(InvalidParameterError, match="not the macro or micro average"):
        compare_auc(
            res,
            ("M0", "micro", "R0"),
            ("M1", "micro", "R0"),
            method="delong",
            predictions=preds,
            labels=labels,
        )


def test_macro_and_mean_rows_and_policy():
    preds, labels = auc_inputs(n_models=3)
    res = evaluate_auc(preds, labels, n_resamples=20, rng=1, policy="zeros")
    t = res.table
    macro = t[(t.finding == "macro") & (t.model == "M1") & (t.reference == "R0")].auc.iloc[0]
    per = t[(t.finding.isin(AUC_FINDINGS)) & (t.model == "M1") & (t.reference == "R0")].auc
    assert macro == pytest.approx(per.mean(), abs=1e-15)
    mean = t[(t.model == "Mean") & (t.finding == "Effusion") & (t.reference == "R1")]
    assert mean.group.iloc[0] == "summary"
    assert mean.auc.iloc[0] == pytest.approx(
        t[(t.group != "summary") & (t.finding == "Effusion") & (t.reference == "R1")].auc.mean()
    )
    assert (t[t.model != "Mean"].n_dropped == 0).all()  # zeros policy keeps uncertain labels


def test_deterministic_and_sharding_and_executor_invariant():
    preds, labels = auc_inputs(n_models=2)
    a = evaluate_auc(preds, labels, n_resamples=30, rng=7)
    b = evaluate_auc(preds, labels, n_resamples=30, rng=7, shard_size=7)

    class ReversedExecutor:
        def map(self, func, items):
            return [func(x) for x in reversed(list(items))]

    c = evaluate_auc(preds, labels, n_resamples=30, rng=7, shard_size=4, executor=ReversedExecutor())
    pd.testing.assert_frame_equal(a.table, b.table)
    assert np.array_equal(a.distribution, c.distribution, equal_nan=True)


def test_one_class_reference_is_nan_with_warning():
    preds, labels = auc_inputs(n_models=2)
    labels = labels.copy()
    labels.loc[(labels.source == "R1") & (labels.finding == "Effusion"), "state"] = "negative"
    with pytest.warns(
        UndefinedMetricWarning, match=r"Reference 'R1' has only one class for finding\(s\) 'Effusion'"
    ):
        res = evaluate_auc(preds, labels, n_resamples=10, rng=0)
    t = res.table
    assert t[(t.reference == "R1") & (t.finding == "Effusion")].auc.isna().all()
    assert t[(t.reference == "R1") & (t.finding == "macro")].auc.isna().all()
    assert t[(t.reference == "R0") & (t.finding == "Effusion")].auc.notna().all()


def test_bad_inputs_raise_clear_errors():
    preds, labels = auc_inputs(n_models=2, n_studies=30)
    extra = pd.DataFrame({"study_id": ["zzz"], "model": ["M0"], "finding": ["Effusion"], "score": [0.3]})
    with pytest.raises(
        SchemaError, match=r"1 prediction study id\(s\) are absent from the label table, e.g. \['zzz'\]"
    ):
        evaluate_auc(pd.concat([preds, extra]), labels, n_resamples=5)
    res = evaluate_auc(pd.concat([preds, extra]), labels, n_resamples=5, unlabeled="drop")
    assert res.dropped.study_id.tolist() == ["zzz"]
    with pytest.raises(SchemaError, match="Duplicate"):
        evaluate_auc(pd.concat([preds, preds.iloc[:1]]), labels)
    bad = preds.copy()
    bad.loc[3, "score"] = np.inf
    with pytest.raises(SchemaError, match=r"Non-finite or non-numeric score .*inf.* row 3"):
        evaluate_auc(bad, labels)
    with pytest.raises(InvalidParameterError, match="Unknown reference 'R9'"):
        evaluate_auc(preds, labels, references=["R9"])
    with pytest.raises(
        InvalidParameterError, match="Unknown finding 'Cardiomegaly': no model has predictions"
    ):
        evaluate_auc(preds, labels, findings=["Cardiomegaly"])
    nopat = labels.copy()
    nopat.loc[nopat.study_id == "s0003", "patient_id"] = None
    with pytest.raises(SchemaError, match="study 's0003' has no patient id"):
        evaluate_auc(preds, nopat, n_resamples=5)
    missing = preds[~((preds.model == "M1") & (preds.study_id == "s0004") & (preds.finding == "Effusion"))]
    with pytest.raises(SchemaError, match="Model 'M1' has no score for study 's0004', finding 'Effusion'"):
        evaluate_auc(missing, labels, n_resamples=5)
    with pytest.raises(InvalidParameterError, match="'policy' parameter of evaluate_auc"):
        evaluate_auc(preds, labels, policy="maybe")


def _delong_bruteforce(y, a, b):
    def comps(s):
        pos, neg = s[y == 1], s[y == 0]
        k = (pos[:, None] > neg[None, :]) + 0.5 * (pos[:, None] == neg[None, :])
        return k.mean(axis=1), k.mean(axis=0), k.mean()

    v10a, v01a, aa = comps(a)
    v10b, v01b, ab = comps(b)
    m, n = len(v10a), len(v01a)
    s10 = np.cov(np.vstack([v10a, v10b]))
    s01 = np.cov(np.vstack([v01a, v01b]))
    var = (s10[0, 0] + s10[1, 1] - 2 * s10[0, 1]) / m + (s01[0, 0] + s01[1, 1] - 2 * s01[0, 1]) / n
    return aa - ab, np.sqrt(var)


def test_delong_equals_bruteforce_and_compare_auc():
    g = np.random.default_rng(3)
    y = g.integers(0, 2, 150)
    a = np.round(y + g.normal(size=150), 1)
    b = np.round(0.5 * y + g.normal(size=150), 1)
    res = delong_test(y, a, b)
    d, se = _delong_bruteforce(y, a, b)
    assert res.difference == pytest.approx(d, abs=1e-12) and res.standard_error == pytest.approx(
        se, rel=1e-10
    )
    assert res.auc_a == pytest.approx(sk_auc(y, a), abs=1e-12)
    assert 0 <= res.pvalue <= 1
    preds, labels = auc_inputs(n_models=3)
    r = evaluate_auc(preds, labels, n_resamples=50, rng=0)
    c = compare_auc(r, ("M0", "Effusion", "R0"), ("M1", "Effusion", "R0"))
    i0, i1 = r.models.index("M0"), r.models.index("M1")
    j, k = r.findings.index("Effusion"), r.references.index("R0")
    assert np.array_equal(
        c.difference.bootstrap_distribution, r.distribution[i0, j, k] - r.distribution[i1, j, k]
    )
    cr = compare_auc(r, ("M0", "Effusion", "R0"), ("M0", "Effusion", "R1"))
    assert cr.difference.estimate == pytest.approx(r.point[i0, j, 0] - r.point[i0, j, 1])
    cd = compare_auc(
        r,
        ("M0", "Effusion", "R0"),
        ("M1", "Effusion", "R0"),
        method="delong",
        predictions=preds,
        labels=labels,
    )
    assert cd.delong is not None and cd.delong.difference == pytest.approx(c.difference.estimate, abs=1e-12)
    with pytest.raises(
        InvalidParameterError, match="method='delong' compares two models on the same finding"
    ):
        compare_auc(
            r,
            ("M0", "Effusion", "R0"),
            ("M0", "Effusion", "R1"),
            method="delong",
            predictions=preds,
            labels=labels,
        )


def test_plan_reuse_pairs_results():
    preds, labels = auc_inputs(n_models=2)
    r1 = evaluate_auc(preds, labels, n_resamples=25, rng=2)
    plan = r1.plan
    r2 = evaluate_auc(preds, labels, references=["R1"], plan=plan)
    assert np.array_equal(r1.distribution[:, :, 1], r2.distribution[:, :, 0], equal_nan=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        small = draw_plan(["a"], n_resamples=3)
    with pytest.raises(InvalidParameterError, match="the given plan covers 1 studies"):
        evaluate_auc(preds, labels, plan=small)


def test_jackknife_and_bca():
    preds, labels = auc_inputs(n_models=2, n_studies=60)
    r = evaluate_auc(preds, labels, n_resamples=200, rng=0)
    jk = r.jackknife("M1", "Effusion", "R0")
    studies = np.array(r.plan.study_ids)
    lab = (
        labels[(labels.source == "R0") & (labels.finding == "Effusion")]
        .set_index("study_id")
        .reindex(studies)
    )
    y = lab.state.map({"positive": 1.0, "negative": 0.0}).to_numpy()
    s = (
        preds[(preds.model == "M1") & (preds.finding == "Effusion")]
        .set_index("study_id")
        .reindex(studies)
        .score
    )
    for p in (0, 5, len(r.plan.patients) - 1):
        keep = np.isfinite(y) & (r.plan.study_patient != p)
        assert abs(jk[p] - sk_auc(y[keep], s.to_numpy()[keep])) < 1e-12
    res = r.bootstrap("M1", "Effusion", "R0", ci_method="bca")
    pct = r.bootstrap("M1", "Effusion", "R0")
    assert res.method == "BCa" and pct.method == "percentile"
    assert res.confidence_interval.low < res.estimate < res.confidence_interval.high
    jm = r.jackknife("M1", "macro", "R0")
    assert jm[3] == pytest.approx(np.mean([r.jackknife("M1", f, "R0")[3] for f in AUC_FINDINGS]))


@pytest.mark.parametrize("r", [0, 1, 2, 3, 4, 5, 8, 9, 10, 15, 16, 17, 63, 64, 65, 101])
def test_blocked_row_cumsum_equals_numpy(r):
    from cxreval.stats._auc_kernel import cumsum_rows_inplace

    g = np.random.default_rng(r)
    for dt in (np.int32, np.int64):
        x = g.integers(0, 50, size=(r, 7)).astype(dt)
        ref = np.cumsum(x, axis=0)
        cumsum_rows_inplace(x)
        assert np.array_equal(x, ref) and x.dtype == dt


@pytest.mark.parametrize("scale", [1, 10**6, 10**9, 10**12])
def test_weighted_auc_exact_for_large_integer_weights(scale):
    """int32 kernel, int64 dot product, int64 kernel and the Python-integer dot product, against sklearn."""
    g = np.random.default_rng(scale % 97)
    n = 40
    y = g.integers(0, 2, n)
    y[:2] = [0, 1]
    s = g.integers(0, 5, n).astype(float)
    w = g.integers(0, 3, (4, n)) * scale + g.integers(0, 2, (4, n))
    w[:, :2] = 1
    a = weighted_auc(y, s, w)
    for b in range(4):
        assert abs(a[b] - sk_auc(y, s, sample_weight=w[b].astype(float))) < 1e-12


def test_weighted_auc_rejects_bad_weights():
    with pytest.raises(InvalidParameterError, match="'weights' must be finite and non-negative; found -1.0"):
        weighted_auc([0, 1, 1], [0.1, 0.2, 0.3], np.array([[1, -1, 2]]))
    with pytest.raises(
        InvalidParameterError, match="'weights' must be finite and non-negative; found a non-finite"
    ):
        weighted_auc([0, 1, 1], [0.1, 0.2, 0.3], np.array([[1.0, np.nan, 2.0]]))
    with pytest.raises(
        InvalidParameterError, match="'weights' must be integer or float counts; got dtype bool"
    ):
        weighted_auc([0, 1, 1], [0.1, 0.2, 0.3], np.ones((1, 3), dtype=bool))


def test_grouped_kernel_equals_per_study_weights():
    """Patient-count weights through the (segments x patients) matrix equal the expanded per-study weights."""
    from cxreval.stats._auc_kernel import AUCIndex

    g = np.random.default_rng(5)
    n, n_pat = 300, 90
    group = g.integers(0, n_pat, n)
    y = g.random(n) < 0.2
    s = np.round(g.normal(size=n) + y, 1)
    ct = np.ascontiguousarray(g.multinomial(n_pat, np.full(n_pat, 1 / n_pat), size=50).T.astype(np.int32))
    idx = AUCIndex(y, s)
    a = idx.auc_grouped(ct, group)
    b = idx.auc_t(np.ascontiguousarray(ct[group]))
    assert np.array_equal(a, b, equal_nan=True)
    for j in range(50):
        wj = ct[group, j]
        if wj[y].sum() and wj[~y].sum():
            assert abs(a[j] - sk_auc(y, s, sample_weight=wj.astype(float))) < 1e-12
