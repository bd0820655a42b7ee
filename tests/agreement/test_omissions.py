"""cxreval.agreement (compute_flows, compute_omissions): 3x3 transitions (Sankey data) and the two omission rates."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from cxreval.agreement import compute_agreement, compute_flows, compute_omissions
from cxreval.agreement._omissions import FLOW_COLUMNS, OMISSION_COLUMNS, omission_rates
from cxreval.exceptions import SchemaError

NAMES = np.array(["not_mentioned", "negative", "uncertain", "positive"], dtype=object)


def _random(rng, n=150, findings=("Atelectasis", "Consolidation", "Edema")):
    base = rng.integers(1, 4, (n, len(findings)))
    rows = []
    for s, lo in (("CR", 1), ("Rep1", 0)):
        st = np.where(rng.random(base.shape) < 0.6, base, rng.integers(lo, 4, base.shape))
        for i in range(n):
            for j, f in enumerate(findings):
                rows.append({"study_id": f"s{i}", "finding": f, "source": s, "state": NAMES[st[i, j]]})
    return pd.DataFrame(rows)


@pytest.mark.parametrize("nm", ["negative", "exclude"])
def test_flows_equal_crosstab(nm):
    t = _random(np.random.default_rng(0))
    flows = compute_flows(t, "CR:Rep1", not_mentioned=nm).table
    assert tuple(flows.columns) == FLOW_COLUMNS
    assert len(flows) == 9 * 4  # three findings + overall
    w = t.pivot(index=["study_id", "finding"], columns="source", values="state").reset_index()
    if nm == "negative":
        w = w.replace("not_mentioned", "negative")
    else:
        w = w[(w.CR != "not_mentioned") & (w.Rep1 != "not_mentioned")]
    for f in ("Atelectasis", "Edema"):
        ct = pd.crosstab(w[w.finding == f]["CR"], w[w.finding == f]["Rep1"])
        got = flows[flows.finding == f].set_index(["state_a", "state_b"])["count"]
        for a in ct.index:
            for b in ct.columns:
                assert got[(a, b)] == ct.loc[a, b]
    overall = flows[flows.finding == "overall"]["count"].sum()
    assert overall == len(w)
    # n of the agreement table equals the flows total
    agr = compute_agreement(t, "CR:Rep1", not_mentioned=nm).table
    assert agr.set_index("finding").loc["micro", "n"] == overall


def test_omission_rates_match_definitions():
    t = _random(np.random.default_rng(1))
    om = compute_omissions(compute_flows(t, "CR:Rep1").table).table
    assert tuple(om.columns) == OMISSION_COLUMNS
    w = t.pivot(index=["study_id", "finding"], columns="source", values="state").reset_index()
    w = w.replace("not_mentioned", "negative")
    row = om.set_index("finding").loc["Consolidation"]
    c = w[w.finding == "Consolidation"]
    pos_a = (c.CR == "positive").sum()
    pa_nb = ((c.CR == "positive") & (c.Rep1 == "negative")).sum()
    pb_na = ((c.Rep1 == "positive") & (c.CR == "negative")).sum()
    assert row["pos_a_neg_b"] == pa_nb and row["rate_a_not_b"] == pytest.approx(pa_nb / pos_a)
    assert row["pos_b_neg_a"] == pb_na and row["rate_b_not_a"] == pytest.approx(
        pb_na / (c.Rep1 == "positive").sum()
    )
    ov = om.set_index("finding").loc["overall"]
    per = om[om.finding != "overall"]
    assert ov["pos_a_neg_b"] == per["pos_a_neg_b"].sum() and ov["n"] == per["n"].sum()


def test_seed_atelectasis_figures():
    """Seed Fig. 4(b): 123 of 165 positive CR Atelectasis labels are not positive in Rep1 (75%)."""
    # 165 CR positives: 42 positive in Rep1, 100 negative, 23 uncertain
    a = ["positive"] * 165 + ["negative"] * 20
    b = ["positive"] * 42 + ["negative"] * 100 + ["uncertain"] * 23 + ["positive"] * 5 + ["negative"] * 15
    r = omission_rates(a, b)
    assert (r.pos_a, r.pos_a_neg_b, r.pos_a_unc_b) == (165, 100, 23)
    assert (r.pos_a_neg_b + r.pos_a_unc_b) / r.pos_a == pytest.approx(123 / 165)
    assert r.rate_a_not_b == pytest.approx(100 / 165)
    assert (r.pos_b, r.pos_b_neg_a, r.rate_b_not_a) == (47, 5, pytest.approx(5 / 47))
    np.testing.assert_array_equal(r.transitions, [[15, 0, 5], [0, 0, 0], [100, 23, 42]])


def test_rates_nan_without_positives():
    r = omission_rates(["negative", "uncertain"], ["negative", "negative"])
    assert np.isnan(r.rate_a_not_b) and np.isnan(r.rate_b_not_a)
    assert r.to_dict()["n"] == 2


def test_bad_flows_tables():
    flows = compute_flows(_random(np.random.default_rng(2), n=10), "CR:Rep1").table
    with pytest.raises(SchemaError, match="flows table is missing required column"):
        compute_omissions(flows.drop(columns="count"))
    bad = flows.copy()
    bad.loc[3, "state_a"] = "maybe"
    with pytest.raises(SchemaError, match=r"Flows table row 3: state \('maybe'"):
        compute_omissions(bad)
    with pytest.raises(SchemaError, match="must list the 9 state pairs once each; got 8 rows"):
        compute_omissions(flows.drop(index=0))
