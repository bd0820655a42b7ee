"""cxreval.agreement: kappa / Low-High kappa / weighted F1 against scikit-learn and by hand."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sklearn.metrics import cohen_kappa_score, f1_score

from cxreval.agreement import agreement_scores, cohen_kappa, compute_agreement
from cxreval.agreement._pairs import pair_states
from cxreval.agreement._scores import (
    confusion_counts,
    scores_from_confusion,
    uncertainty_mapping,
    weighted_f1,
)
from cxreval.exceptions import UndefinedMetricWarning
from cxreval.findings import XQA, XQA_SELECTED
from cxreval.schema._result_columns import AGREEMENT_COLUMNS

STATES3 = st.lists(st.tuples(st.integers(0, 2), st.integers(0, 2)), min_size=1, max_size=60)
STATES4 = st.lists(st.tuples(st.integers(-1, 2), st.integers(-1, 2)), min_size=1, max_size=60)
SETTINGS = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _split(pairs):
    a, b = zip(*pairs)
    return np.array(a), np.array(b)


def _sk_kappa(a, b, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return cohen_kappa_score(a, b, **kw)


# --- kappa equals scikit-learn ------------------------------------------------------------------------


@pytest.mark.parametrize("weights", [None, "linear", "quadratic"])
def test_kappa_equals_sklearn_on_random_three_class_data(weights):
    rng = np.random.default_rng(0)
    for n in (5, 30, 500):
        for _ in range(20):
            a = rng.integers(0, 3, n)
            b = np.where(rng.random(n) < 0.6, a, rng.integers(0, 3, n))
            ref = _sk_kappa(a, b, weights=weights, labels=[0, 1, 2])
            got = cohen_kappa(a, b, weights=weights)
            assert got == pytest.approx(ref, abs=1e-12) or (np.isnan(ref) and np.isnan(got))


@SETTINGS
@given(STATES3, st.sampled_from([None, "linear", "quadratic"]))
def test_kappa_equals_sklearn_property(pairs, weights):
    a, b = _split(pairs)
    ref = _sk_kappa(a, b, weights=weights, labels=[0, 1, 2])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMetricWarning)
        got = cohen_kappa(a, b, weights=weights)
    if np.isnan(ref):
        assert np.isnan(got)
    else:
        assert got == pytest.approx(ref, abs=1e-10)


def test_kappa_with_string_labels_and_custom_order():
    a = ["lo", "mid", "hi", "hi", "lo"]
    b = ["lo", "hi", "hi", "mid", "mid"]
    ref = cohen_kappa_score(a, b, weights="linear", labels=["lo", "mid", "hi"])
    assert cohen_kappa(a, b, weights="linear", labels=("lo", "mid", "hi")) == pytest.approx(ref)


# --- properties: symmetry, identity, Low <= High --------------------------------------------------


@SETTINGS
@given(STATES4, st.sampled_from([None, "linear", "quadratic"]), st.sampled_from(["negative", "exclude"]))
def test_scores_symmetric_in_sources(pairs, weights, nm):
    a, b = _split(pairs)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMetricWarning)
        ab = agreement_scores(a, b, weights=weights, not_mentioned=nm)
        ba = agreement_scores(b, a, weights=weights, not_mentioned=nm)
    for k in ("kappa_w", "kappa_low", "kappa_high"):
        x, y = getattr(ab, k), getattr(ba, k)
        assert (np.isnan(x) and np.isnan(y)) or x == pytest.approx(y, abs=1e-12)
    assert ab.n == ba.n
    np.testing.assert_array_equal(ab.confusion, ba.confusion.T)


@SETTINGS
@given(st.lists(st.integers(0, 2), min_size=1, max_size=60), st.sampled_from([None, "linear", "quadratic"]))
def test_kappa_is_one_on_identical_labels(a, weights):
    a = np.array(a)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMetricWarning)
        k = cohen_kappa(a, a, weights=weights)
        res = agreement_scores(a, a, weights=weights)
    if len(np.unique(a)) > 1:
        assert k == pytest.approx(1.0)
        assert res.kappa_w == pytest.approx(1.0)
        assert res.f1_w == pytest.approx(1.0)
        assert res.f1_high == pytest.approx(1.0)
        # identical labels agree under both mappings (uncertain ones too: (UNC, UNC) agrees by default)
        assert res.kappa_low == pytest.approx(1.0) and res.kappa_high == pytest.approx(1.0)
        assert res.f1_low == pytest.approx(1.0)
    else:
        assert np.isnan(k)  # one class only: undefined, as sklearn


@settings(max_examples=200, deadline=None)
@given(STATES4, st.sampled_from(["negative", "exclude"]))
def test_low_kappa_never_exceeds_high_kappa(pairs, nm):
    a, b = _split(pairs)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMetricWarning)
        res = agreement_scores(a, b, not_mentioned=nm)
    if np.isfinite(res.kappa_low) and np.isfinite(res.kappa_high):
        assert res.kappa_low <= res.kappa_high + 1e-12
    if np.isfinite(res.f1_low) and np.isfinite(res.f1_high):
        assert res.f1_low <= res.f1_high + 1e-12


def test_low_le_high_exhaustively_on_small_tables():
    """Every 3x3 table with cells 0..2 (3^9 tables): Low-kappa <= High-kappa whenever both are defined."""
    grids = np.stack(np.meshgrid(*[np.arange(3)] * 9, indexing="ij"), -1).reshape(-1, 3, 3)
    s = scores_from_confusion(grids)
    ok = np.isfinite(s["kappa_low"]) & np.isfinite(s["kappa_high"])
    assert ok.sum() > 15000
    assert (s["kappa_low"][ok] <= s["kappa_high"][ok] + 1e-12).all()


# --- the hand-worked example of the docs --------------------------------------------------------------

A = ["positive"] * 3 + ["negative"] * 4 + ["uncertain"] * 3
B = [
    "positive",
    "positive",
    "uncertain",
    "negative",
    "negative",
    "negative",
    "positive",
    "negative",
    "positive",
    "uncertain",
]


def test_hand_worked_low_high_example():
    res = agreement_scores(A, B)
    # optimistic 2x2 (rows A, cols B, order POS, NEG) = [[4.5, 0], [1, 4.5]]
    assert res.kappa_high == pytest.approx(0.405 / 0.505)
    # pessimistic, (UNC, UNC) agreeing (default) = [[2.5, 2], [2, 3.5]]
    assert res.kappa_low == pytest.approx(0.095 / 0.495)
    # pessimistic, (UNC, UNC) disagreeing = [[2, 2.5], [2.5, 3]]
    old = agreement_scores(A, B, both_uncertain="disagree")
    assert old.kappa_low == pytest.approx(-0.005 / 0.495)
    assert old.kappa_high == res.kappa_high and old.kappa_w == res.kappa_w and old.f1_high == res.f1_high
    # F1_low (A = reference): class 1 2*2.5/(4.5+4.5), class 0 2*3.5/(5.5+5.5), weighted by A's support
    assert res.f1_low == pytest.approx((4.5 * 5 / 9 + 5.5 * 7 / 11) / 10)
    assert res.n == 10
    np.testing.assert_array_equal(res.confusion, [[3, 0, 1], [1, 1, 1], [0, 1, 2]])
    # kappa_w is quadratic kappa on the original three states
    codes = {"negative": 0, "uncertain": 1, "positive": 2}
    a = [codes[x] for x in A]
    b = [codes[x] for x in B]
    assert res.kappa_w == pytest.approx(cohen_kappa_score(a, b, weights="quadratic"))
    assert res.f1_w == pytest.approx(f1_score(a, b, average="weighted", zero_division=0))


def test_table30_identical_labels_with_uncertain_agree_under_both_mappings():
    """The XQA-Chest paper's Table 30 (agreement with the consensus): NN Fusion (PS) vs CR on Atelectasis prints kappa_w = kappa_low = kappa_high = F1_low =
    1.00 although CR holds 37 uncertain Atelectasis labels (448 NEG / 37 UNC / 165 POS of 650; 165 = Table 5's
    CR count). Identical label sets must agree under both mappings."""
    cr = np.repeat([0, 1, 2], [448, 37, 165])
    res = agreement_scores(cr, cr.copy())
    assert (res.kappa_w, res.kappa_low, res.kappa_high, res.f1_w, res.f1_low, res.f1_high) == (1.0,) * 6
    assert round(res.kappa_low, 2) == 1.00 and round(res.f1_low, 2) == 1.00  # Table 30's printed values
    # both_uncertain='disagree' (the pair as a disagreement) cannot reproduce the paper: 0.860 / 0.943
    dis = agreement_scores(cr, cr.copy(), both_uncertain="disagree")
    assert dis.kappa_high == 1.0 and dis.kappa_w == 1.0
    assert round(dis.kappa_low, 3) == 0.860 and round(dis.f1_low, 3) == 0.943
    # 2x2 pessimistic table [[165, 18.5], [18.5, 448]] by hand
    po, pe = 613 / 650, (183.5**2 + 466.5**2) / 650**2
    assert dis.kappa_low == pytest.approx((po - pe) / (1 - pe), abs=1e-12)
    # the same through the label-table path (compute_agreement, as `cxreval agree` and `fuse --adjudicated`)
    t = pd.DataFrame(
        {
            "study_id": np.tile(np.arange(650), 2),
            "finding": "Atelectasis",
            "source": np.repeat(["CR", "NN Fusion (PS)"], 650),
            "state": np.tile(cr, 2),
        }
    )
    row = compute_agreement(t, "CR:NN Fusion (PS)").table.iloc[0]
    assert (row.kappa_w, row.kappa_low, row.kappa_high, row.f1_low) == (1.0, 1.0, 1.0, 1.0)
    row = compute_agreement(t, "CR:NN Fusion (PS)", both_uncertain="disagree").table.iloc[0]
    assert round(row.kappa_low, 3) == 0.860


def test_hand_worked_mapping_rows():
    ya, yb, w = uncertainty_mapping(A, B, mapping="optimistic")
    # (POS, UNC) -> (1, 1); (UNC, NEG) -> (0, 0); (UNC, POS) -> (1, 1); (UNC, UNC) -> 1/2 (1,1) + 1/2 (0,0)
    assert list(zip(ya[:10], yb[:10])) == [
        (1, 1),
        (1, 1),
        (1, 1),
        (0, 0),
        (0, 0),
        (0, 0),
        (0, 1),
        (0, 0),
        (1, 1),
        (1, 1),
    ]
    assert (ya[10], yb[10], w[9], w[10]) == (0, 0, 0.5, 0.5)
    ya, yb, w = uncertainty_mapping(A, B, mapping="pessimistic")
    # (UNC, UNC) -> 1/2 (1, 1) + 1/2 (0, 0) by default: identical labels agree under both mappings
    assert list(zip(ya[:10], yb[:10])) == [
        (1, 1),
        (1, 1),
        (1, 0),
        (0, 0),
        (0, 0),
        (0, 0),
        (0, 1),
        (1, 0),
        (0, 1),
        (1, 1),
    ]
    assert (ya[10], yb[10]) == (0, 0)
    ya, yb, w = uncertainty_mapping(A, B, mapping="pessimistic", both_uncertain="disagree")
    assert list(zip(ya[:10], yb[:10])) == [
        (1, 1),
        (1, 1),
        (1, 0),
        (0, 0),
        (0, 0),
        (0, 0),
        (0, 1),
        (1, 0),
        (0, 1),
        (1, 0),
    ]
    assert (ya[10], yb[10]) == (0, 1)


@SETTINGS
@given(
    STATES4,
    st.sampled_from(["pessimistic", "optimistic"]),
    st.sampled_from(["negative", "exclude"]),
    st.sampled_from(["agree", "disagree"]),
)
def test_low_high_and_f1_equal_sklearn_on_mapped_labels(pairs, mapping, nm, both):
    a, b = _split(pairs)
    ya, yb, w = uncertainty_mapping(a, b, mapping=mapping, not_mentioned=nm, both_uncertain=both)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = agreement_scores(a, b, not_mentioned=nm, both_uncertain=both)
        if len(ya) == 0:
            assert res.n == 0
            return
        ref_k = cohen_kappa_score(ya, yb, sample_weight=w, labels=[0, 1])
        ref_f = f1_score(ya, yb, sample_weight=w, labels=[0, 1], average="weighted", zero_division=0)
    k = res.kappa_high if mapping == "optimistic" else res.kappa_low
    f = res.f1_high if mapping == "optimistic" else res.f1_low
    assert (np.isnan(ref_k) and np.isnan(k)) or k == pytest.approx(ref_k, abs=1e-10)
    assert f == pytest.approx(ref_f, abs=1e-10)


@SETTINGS
@given(STATES3)
def test_weighted_f1_equals_sklearn(pairs):
    a, b = _split(pairs)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = f1_score(a, b, average="weighted", labels=[0, 1, 2], zero_division=0)
        res = agreement_scores(a, b)
    assert weighted_f1(a, b) == pytest.approx(ref, abs=1e-12)
    assert res.f1_w == pytest.approx(ref, abs=1e-12)


# --- NOT_MENTIONED and missing ----------------------------------------------------------------------


def test_not_mentioned_negative_or_excluded():
    a = ["positive", "not_mentioned", "negative", None, "uncertain"]
    b = ["positive", "negative", "not_mentioned", "positive", "uncertain"]
    neg = agreement_scores(a, b, not_mentioned="negative")
    exc = agreement_scores(a, b, not_mentioned="exclude")
    assert (neg.n, neg.n_missing, neg.n_not_mentioned) == (4, 1, 0)
    assert (exc.n, exc.n_missing, exc.n_not_mentioned) == (2, 1, 2)
    np.testing.assert_array_equal(neg.confusion, [[2, 0, 0], [0, 1, 0], [0, 0, 1]])
    np.testing.assert_array_equal(exc.confusion, [[0, 0, 0], [0, 1, 0], [0, 0, 1]])
    np.testing.assert_array_equal(confusion_counts(a, b, not_mentioned="exclude"), exc.confusion)


def test_codes_names_and_int8_series_agree():
    codes_a = [2, -1, 0, 1, 2, 0]
    codes_b = [2, 0, 0, 2, 1, 0]
    names = {-1: "not_mentioned", 0: "negative", 1: "uncertain", 2: "positive"}
    r1 = agreement_scores(codes_a, codes_b)
    r2 = agreement_scores([names[c] for c in codes_a], [names[c] for c in codes_b])
    r3 = agreement_scores(pd.Series(codes_a, dtype="Int8"), pd.Series(codes_b, dtype="Int8"))
    assert r1.to_dict() == r2.to_dict() == r3.to_dict()


# --- label-table level: per finding, macro, micro ----------------------------------------------------


def _table(rng, n=80, findings=XQA, sources=("CR", "Rep1"), nm=False):
    rows = []
    base = rng.integers(0, 3, (n, len(findings)))
    for s in sources:
        noise = rng.integers(0 if not nm else -1, 3, base.shape)
        st_ = np.where(rng.random(base.shape) < 0.7, base, noise)
        for i in range(n):
            for j, f in enumerate(findings):
                rows.append(
                    {
                        "study_id": f"s{i}",
                        "patient_id": f"p{i // 2}",
                        "finding": f,
                        "source": s,
                        "state": int(st_[i, j]),
                    }
                )
    return pd.DataFrame(rows)


def test_agreement_table_macro_micro_against_direct_computation():
    rng = np.random.default_rng(3)
    t = _table(rng, nm=True)
    out = compute_agreement(
        t, "CR:Rep1", finding_sets={"selected": XQA_SELECTED, "all": XQA}, not_mentioned="exclude"
    ).table
    assert tuple(out.columns) == AGREEMENT_COLUMNS
    per = out[out["finding_set"].isna()].set_index("finding")
    assert list(per.index) == list(XQA)
    wide = {
        s: t[t.source == s].pivot(index="study_id", columns="finding", values="state") for s in ("CR", "Rep1")
    }
    for f in XQA:
        res = agreement_scores(wide["CR"][f].to_numpy(), wide["Rep1"][f].to_numpy(), not_mentioned="exclude")
        for k in ("kappa_w", "kappa_low", "kappa_high", "f1_w", "f1_low", "f1_high"):
            assert per.loc[f, k] == pytest.approx(getattr(res, k))
        assert per.loc[f, "n"] == res.n
    for name, fs in (("selected", XQA_SELECTED), ("all", XQA)):
        macro = out[(out.finding == "macro") & (out.finding_set == name)].iloc[0]
        micro = out[(out.finding == "micro") & (out.finding_set == name)].iloc[0]
        assert macro["kappa_w"] == pytest.approx(per.loc[list(fs), "kappa_w"].mean())
        assert macro["f1_high"] == pytest.approx(per.loc[list(fs), "f1_high"].mean())
        pooled = agreement_scores(
            wide["CR"][list(fs)].to_numpy().ravel(),
            wide["Rep1"][list(fs)].to_numpy().ravel(),
            not_mentioned="exclude",
        )
        assert micro["kappa_w"] == pytest.approx(pooled.kappa_w)
        assert micro["kappa_low"] == pytest.approx(pooled.kappa_low)
        assert micro["n"] == pooled.n == per.loc[list(fs), "n"].sum()


def test_agreement_table_several_pairs_and_records_choices():
    rng = np.random.default_rng(4)
    t = _table(rng, n=40, findings=XQA_SELECTED, sources=("Img1", "Img2", "CR"))
    res = compute_agreement(t, [("Img1", "Img2"), "CR:Img1"], weights="linear")
    out = res.table
    pd.testing.assert_frame_equal(
        out, compute_agreement(t, [("Img1", "Img2"), "CR:Img1"], weights="linear").table
    )
    assert list(pd.unique(out["pair"])) == ["Img1:Img2", "CR:Img1"]
    assert len(out) == 2 * (4 + 2)
    assert res.weights == "linear" and res.not_mentioned == "negative"
    assert [p.pair for p in res.pairs] == ["Img1:Img2", "CR:Img1"] and not out.attrs
    row = out[(out.pair == "CR:Img1") & (out.finding == "Atelectasis")].iloc[0]
    wide = {
        s: t[t.source == s].pivot(index="study_id", columns="finding", values="state") for s in ("CR", "Img1")
    }
    assert row["kappa_w"] == pytest.approx(
        cohen_kappa_score(wide["CR"]["Atelectasis"], wide["Img1"]["Atelectasis"], weights="linear")
    )


def test_pair_states_intersection_and_unmatched_findings():
    t = pd.DataFrame(
        {
            "study_id": ["s1", "s2", "s3", "s1", "s2", "s4", "s1"],
            "finding": ["Edema"] * 6 + ["Fracture"],
            "source": ["A", "A", "A", "B", "B", "B", "A"],
            "state": ["positive", "negative", "negative", "positive", "uncertain", "negative", "positive"],
        }
    )
    ps = pair_states(t, "A", "B", studies="each")
    assert ps.studies == ("s1", "s2") and ps.findings == ("Edema",)
    assert (ps.n_only_a, ps.n_only_b) == (1, 1)
    assert ps.findings_only_a == ("Fracture",)
    res = compute_agreement(t, "A:B", studies="each")
    out = res.table
    assert res.pairs[0].n_only_a == 1 and res.pairs[0].pair == "A:B"
    assert out.loc[0, "n"] == 2


def test_macro_leaves_out_undefined_findings_with_warning():
    t = pd.DataFrame(
        {
            "study_id": ["s1", "s2", "s1", "s2"] * 2,
            "finding": ["Edema"] * 4 + ["Fracture"] * 4,
            "source": ["A", "A", "B", "B"] * 2,
            "state": [
                "positive",
                "negative",
                "positive",
                "negative",
                "negative",
                "negative",
                "negative",
                "negative",
            ],
        }
    )
    with pytest.warns(UndefinedMetricWarning, match="left out of the macro"):
        out = compute_agreement(t, "A:B").table
    per = out.set_index("finding")
    assert np.isnan(per.loc["Fracture", "kappa_w"])  # both constant negative: undefined
    assert per.loc["macro", "kappa_w"] == pytest.approx(1.0)  # mean over the defined finding
    assert per.loc["micro", "kappa_w"] == pytest.approx(1.0)


@pytest.mark.slow
def test_nih_vs_google_real_data_equals_direct_sklearn(metadata_dir):
    """NIH text-mined vs Google expert labels: library table == sklearn on an independent parse of the CSVs."""
    from cxreval.datasets import google, nih

    g = google.load_labels().table
    n = nih.load_labels().table
    labels = pd.concat(
        [g.drop(columns="split"), google.map_nih_to_google(n[n.study_id.isin(set(g.study_id))])]
    )
    res = compute_agreement(labels, "google_expert:nih_textmined")
    out = res.table.set_index("finding")
    assert res.pairs[0].findings_only_a == ("Fracture",)
    raw_g = pd.read_csv(metadata_dir / "google2019_nih-chest-xray-labels.csv.gz").set_index("Image Index")
    raw_n = pd.read_csv(metadata_dir / "Data_Entry_2017_v2020.csv.gz").set_index("Image Index")
    fl = raw_n.loc[raw_g.index, "Finding Labels"].str.split("|")
    for finding, google_col, nih_names in (
        ("Pneumothorax", "Pneumothorax", {"Pneumothorax"}),
        ("Nodule or Mass", "Nodule or mass", {"Nodule", "Mass"}),
        ("Airspace Opacity", "Airspace opacity", {"Consolidation", "Pneumonia", "Infiltration"}),
    ):
        y_g = (raw_g[google_col] == "YES").astype(int).to_numpy()
        y_n = fl.map(lambda xs, s=nih_names: int(bool(s & set(xs)))).to_numpy()
        assert out.loc[finding, "n"] == len(raw_g) == 4376
        assert out.loc[finding, "kappa_w"] == pytest.approx(cohen_kappa_score(y_g, y_n))
        assert out.loc[finding, "f1_w"] == pytest.approx(f1_score(y_g, y_n, average="weighted"))
