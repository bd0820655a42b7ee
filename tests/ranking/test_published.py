"""Tests of cxreval.ranking._published: the packaged XQA tables and their comparison with recomputed correlations."""

from __future__ import annotations

import csv
import hashlib
import io
from importlib import resources

import numpy as np
import pytest
from scipy.stats import kendalltau, rankdata, spearmanr

from cxreval.ranking import compare_table_rankings, compare_with_published, load_xqa_auc_table
from cxreval.ranking._published import load_xqa_rank_correlations

SHA = {
    "xqa_auc_tables_16_25.csv": "cc046eb71fda81619f7f9cfabc4d538b2c4343d41c474a631a43ebe9502309cb",
    "xqa_rank_correlation_tables_26_29.csv": "985a2faa8c208d0c6864e8e418c362116be17d0a45b69e70acd05cbf9fca24ba",
}


def test_package_data_is_the_transcribed_tables_with_citation():
    d = resources.files("cxreval").joinpath("data", "xqa")
    for name, sha in SHA.items():
        assert hashlib.sha256(d.joinpath(name).read_bytes()).hexdigest() == sha
    assert "Rethinking Clinical Relevance" in d.joinpath("README.md").read_text()
    assert d.joinpath("CITATION.cff").is_file()


def test_shipped_tables_equal_shared_copy(shared_data):
    d = resources.files("cxreval").joinpath("data", "xqa")
    for name in SHA:
        assert d.joinpath(name).read_bytes() == (shared_data / "xqa_tables" / name).read_bytes()


def test_auc_table_shape_and_values_from_the_paper():
    t = load_xqa_auc_table()
    xqa = t[t.dataset == "XQA-RR"]
    assert xqa[xqa.group != "summary"].model.nunique() == 34
    assert t[(t.dataset == "MIMIC-CXR") & (t.group != "summary")].model.nunique() == 26
    # Table 17 (Consolidation): D-POOL 0.88 (0.85, 0.90) against CR; means 0.77 / 0.71 (Section 3.1.3)
    row = xqa[(xqa.finding == "Consolidation") & (xqa.model == "D-POOL") & (xqa.reference == "CR")].iloc[0]
    assert (row.auc, row.ci_low, row.ci_high) == (0.88, 0.85, 0.90)
    mean = xqa[(xqa.finding == "Consolidation") & (xqa.model == "Mean")].set_index("reference").auc
    assert mean["CR"] == 0.77 and mean["Rep1"] == 0.71
    assert "Macro Avg." not in set(t.model)  # Table 24's mean row is renamed Mean
    assert set(t.finding) == {"Atelectasis", "Consolidation", "Lung Opacity", "Effusion", "macro"}
    assert len(load_xqa_auc_table(include_mean=False)) == len(t) - 30


def test_rank_correlation_table_parsed():
    r = load_xqa_rank_correlations()
    vf = r[
        (r.dataset == "XQA-RR")
        & (r.method == "SRCC")
        & (r.finding == "Atelectasis")
        & (r.group == "VLM-FT")
        & (r.reference_b == "Rep1")
    ].iloc[0]
    assert (vf.paper_mean, vf.paper_sd) == (0.21, 0.22)  # "Atelectasis SRCC ≈ 0.21 ± 0.22" (Section 3.1.4)
    assert set(r.reference_b) == {"Rep1", "Rep2", "Findings", "Impression"}
    assert "micro" in set(r.finding)


def test_every_published_correlation_row_is_covered_with_its_csv_value():
    """All 168 rows of Tables 26-29 appear in the output with the CSV's mean and sd; the 8 Table 28 "Micro Avg."
    rows have no per-model micro AUC in the published tables, so no recomputed value, and say so."""
    raw = (
        resources.files("cxreval")
        .joinpath("data", "xqa", "xqa_rank_correlation_tables_26_29.csv")
        .read_text()
    )
    rows = list(csv.DictReader(io.StringIO(raw)))
    assert len(rows) == 168
    c = compare_with_published(compare_table_rankings(load_xqa_auc_table())).correlations
    pub = c[c.paper_mean.notna()]
    assert len(pub) == 168
    names = {
        "Pleural effusion": "Effusion",
        "Lung opacity": "Lung Opacity",
        "Macro Avg.": "macro",
        "Micro Avg.": "micro",
    }
    refs = {"Find.": "Findings", "Impr.": "Impression"}
    got = {
        (r.dataset, r.method, r.finding, r.group, r.reference_a, r.reference_b): (r.paper_mean, r.paper_sd)
        for r in pub.itertuples()
    }
    for r in rows:
        a, b = r["pair"].split(" vs ")
        key = (
            r["dataset"],
            r["method"],
            names.get(r["target"], r["target"]),
            r["group"],
            refs.get(a, a),
            refs.get(b, b),
        )
        assert got[key] == (float(r["mean"]), float(r["sd"])), key
    micro = c[c.finding == "micro"]
    assert len(micro) == 8 and {r["table"] for r in rows if r["target"] == "Micro Avg."} == {"28"}
    assert (
        set(micro.dataset) == {"MIMIC-CXR"} and set(micro.method) == {"SRCC"} and micro.statistic.isna().all()
    )
    assert micro.note.str.contains("no per-model micro-average AUC").all()
    assert sorted(micro.paper_mean) == [0.53, 0.62, 0.74, 0.89, 0.9, 0.93, 0.94, 0.96]
    assert (c.loc[c.finding != "micro", "note"] == "").all() and c.loc[
        c.finding != "micro", "statistic"
    ].notna().all()
    # without keep_unmatched, only the recomputed rows (160 with a published value)
    assert (
        compare_with_published(compare_table_rankings(load_xqa_auc_table()), keep_unmatched=False)
        .correlations.paper_mean.notna()
        .sum()
        == 160
    )


def test_point_correlations_from_published_aucs_track_the_paper():
    res = compare_table_rankings(load_xqa_auc_table(), kendall="tau-b", spearman="pearson")
    c = compare_with_published(res).correlations
    m = c[c.paper_mean.notna() & c.statistic.notna()]
    assert len(m) == 160
    row = c[
        (c.dataset == "XQA-RR")
        & (c.finding == "Effusion")
        & (c.group == "All Models")
        & (c.method == "SRCC")
        & (c.reference_b == "Rep1")
    ].iloc[0]
    t = load_xqa_auc_table()
    e = t[(t.dataset == "XQA-RR") & (t.finding == "Effusion") & (t.group != "summary")]
    a = e[e.reference == "CR"].set_index("model").auc
    b = e[e.reference == "Rep1"].set_index("model").auc.reindex(a.index)
    assert row.statistic == pytest.approx(spearmanr(a, b).statistic, abs=1e-12)
    # the XQA-Chest paper's formulas (default) on the same tied AUCs: 1 - 6 sum d^2 / (n (n^2 - 1))
    seed = compare_with_published(compare_table_rankings(load_xqa_auc_table())).correlations
    srow = seed[
        (seed.dataset == "XQA-RR")
        & (seed.finding == "Effusion")
        & (seed.group == "All Models")
        & (seed.method == "SRCC")
        & (seed.reference_b == "Rep1")
    ].iloc[0]
    d = rankdata(a) - rankdata(b)
    assert srow.statistic == pytest.approx(1 - 6 * (d**2).sum() / (len(a) * (len(a) ** 2 - 1)), abs=1e-12)
    assert srow.variant == "formula" and row.variant == "pearson"
    assert row.paper_mean == 0.96
    # point SRCCs agree with the paper's bootstrap means in direction and size
    assert np.corrcoef(m.statistic, m.paper_mean)[0, 1] > 0.7
    k = c[
        (c.dataset == "XQA-RR")
        & (c.finding == "macro")
        & (c.group == "XRV")
        & (c.method == "KRCC")
        & (c.reference_b == "Rep2")
    ].iloc[0]
    x = t[(t.dataset == "XQA-RR") & (t.finding == "macro") & (t.group == "XRV")]
    xa = x[x.reference == "CR"].set_index("model").auc
    xb = x[x.reference == "Rep2"].set_index("model").auc.reindex(xa.index)
    assert k.statistic == pytest.approx(kendalltau(xa, xb).statistic, abs=1e-12)


def test_top_rank_changes_match_the_papers_text():
    top = compare_table_rankings(load_xqa_auc_table()).top_changes
    a = top[(top.dataset == "XQA-RR") & (top.finding == "Atelectasis") & (top.group == "All Models")]
    # "GLORIA-G-CUH ranks first under both report-derived labels, yet falls to 9th ... against CR"
    g = a[(a.best_under == "Rep1") & (a.model == "GLORIA-G-CUH")].set_index("reference")
    assert g.loc["Rep2", "rank"] == 1 and g.loc["CR", "rank_min"] <= 9 <= g.loc["CR", "rank_max"]
    # "MRM-CUH ranks first under CR image-derived labels but falls to 4th" under the report labels
    m = a[(a.best_under == "CR") & (a.model == "MRM-CUH")].set_index("reference")
    assert m.loc["Rep2", "rank_min"] <= 4 <= m.loc["Rep2", "rank_max"]
    lo = top[
        (top.dataset == "XQA-RR")
        & (top.finding == "Lung Opacity")
        & (top.group == "All Models")
        & (top.best_under == "CR")
    ]
    assert set(lo.model) == {"MRM-CUH"}  # "MRM-CUH remains the top-ranked model" for Lung opacity


def test_auc_table_file_is_the_checked_file_or_none_for_the_packaged_tables(tmp_path):
    from cxreval.exceptions import SchemaError
    from cxreval.ranking._published import XQA_AUC_TABLES, auc_table_file

    assert auc_table_file(None) is None and auc_table_file(XQA_AUC_TABLES.upper()) is None
    (tmp_path / "auc.csv").write_text("model,finding,reference,auc\n")
    assert auc_table_file(tmp_path / "auc.csv") == tmp_path / "auc.csv"
    with pytest.raises(SchemaError, match=r"^--auc-table .*none\.csv does not exist\.$"):
        auc_table_file(tmp_path / "none.csv", option="--auc-table")
