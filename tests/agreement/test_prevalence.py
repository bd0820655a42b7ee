"""cxreval.agreement (compute_prevalence): state counts per source and finding, Tables 5-8 layouts."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from cxreval.agreement import compute_prevalence
from cxreval.agreement._prevalence import PREVALENCE_COLUMNS, label_distribution, positive_prevalence
from cxreval.exceptions import SchemaError


def _table7_atelectasis():
    """650 studies with the XQA-Chest paper's Table 7 Atelectasis counts for CR (448/37/165) and Rep1 (2/0/58, rest
    not mentioned)."""
    ids = [f"s{i}" for i in range(650)]
    cr = ["negative"] * 448 + ["uncertain"] * 37 + ["positive"] * 165
    rep = ["negative"] * 2 + ["positive"] * 58 + ["not_mentioned"] * 590
    return pd.DataFrame(
        {
            "study_id": ids * 2,
            "finding": "Atelectasis",
            "source": ["CR"] * 650 + ["Rep1"] * 650,
            "state": cr + rep,
        }
    )


def test_counts_and_percentages_reproduce_seed_table7_format():
    prev = compute_prevalence(_table7_atelectasis()).table
    assert tuple(prev.columns) == PREVALENCE_COLUMNS
    cr = prev[prev.source == "CR"].set_index("state")
    assert cr.loc["negative", "count"] == 448 and cr.loc["positive", "percent"] == pytest.approx(
        100 * 165 / 650
    )
    assert prev.groupby("source")["percent"].sum().tolist() == pytest.approx([100.0, 100.0])
    dist = label_distribution(prev)
    assert dist.loc[("Atelectasis", "CR")].tolist()[:3] == ["448 (68.9%)", "37 (5.7%)", "165 (25.4%)"]
    assert dist.loc[("Atelectasis", "Rep1")].tolist()[:3] == ["2 (0.3%)", "0 (0.0%)", "58 (8.9%)"]
    assert "not_mentioned" in dist.columns and "missing" not in dist.columns
    pos = positive_prevalence(prev)
    assert pos.loc["Atelectasis"].tolist() == ["165 (25.4%)", "58 (8.9%)"]


def test_missing_counts_studies_without_a_label():
    t = pd.DataFrame(
        {
            "study_id": ["s1", "s2", "s3", "s1"],
            "finding": ["Edema", "Edema", "Edema", "Fracture"],
            "source": "A",
            "state": ["positive", None, "negative", "positive"],
        }
    )
    prev = compute_prevalence(t).table.set_index(["finding", "state"])
    assert prev.loc[("Edema", "missing"), "count"] == 1
    assert prev.loc[("Fracture", "missing"), "count"] == 2  # s2, s3 have no Fracture row
    assert prev.loc[("Fracture", "positive"), "percent"] == pytest.approx(100 / 3)


def test_sources_and_findings_selection_and_errors():
    t = _table7_atelectasis()
    prev = compute_prevalence(t, sources=["Rep1"], findings=["Atelectasis"]).table
    assert set(prev.source) == {"Rep1"} and len(prev) == 5
    with pytest.raises(
        SchemaError, match=r"Source 'Rep3' is not in the label table; sources present: \['CR', 'Rep1'\]"
    ):
        compute_prevalence(t, sources=["Rep3"])
    with pytest.raises(SchemaError, match=r"Source 'CR' has no labels for finding\(s\) \['Edema'\]"):
        compute_prevalence(t, findings=["Edema"])
    with pytest.raises(SchemaError, match="prevalence table is missing required column"):
        positive_prevalence(prev.drop(columns="percent"))


def test_against_value_counts_on_random_table():
    rng = np.random.default_rng(1)
    names = np.array(["not_mentioned", "negative", "uncertain", "positive"], dtype=object)
    t = pd.DataFrame(
        {
            "study_id": np.repeat([f"s{i}" for i in range(200)], 2),
            "finding": np.tile(["Edema", "Effusion"], 200),
            "source": "R",
            "state": names[rng.integers(0, 4, 400)],
        }
    )
    prev = compute_prevalence(t).table
    for f in ("Edema", "Effusion"):
        vc = t[t.finding == f]["state"].value_counts()
        got = prev[prev.finding == f].set_index("state")["count"]
        for s, c in vc.items():
            assert got[s] == c
