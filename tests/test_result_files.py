"""Results own their files: every table-level result writes exactly its ``FILES`` with its
``COLUMNS``, renders a summary, carries its metadata as typed fields (never in ``DataFrame.attrs``), and the
report reads the file names the results declare."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pandas as pd
import pytest

from _factories import STATES, label_table
from cxreval.agreement import (
    AgreementTableResult,
    FlowsResult,
    OmissionsResult,
    PrevalenceResult,
    SourceComparisonResult,
    compare_sources,
    compute_agreement,
    compute_flows,
    compute_omissions,
    compute_prevalence,
)
from cxreval.agreement._omissions import FLOW_COLUMNS, OMISSION_COLUMNS
from cxreval.agreement._pairs import PairCoverage
from cxreval.agreement._prevalence import PREVALENCE_COLUMNS
from cxreval.report._blocks import result_files
from cxreval.report._sections import KINDS, build_sections, detect_kinds
from cxreval.results import TableResult
from cxreval.schema._result_columns import AGREEMENT_COLUMNS

SRC = Path(__file__).resolve().parents[1] / "src" / "cxreval"


def _labels(seed: int = 0) -> pd.DataFrame:
    """CR, Rep1 on 30 studies and Rep2 on 26, no patient column; the readers may leave a finding not mentioned."""
    return label_table(
        {"CR": 30, "Rep1": 30, "Rep2": 26},
        ("Atelectasis", "Edema", "Cardiomegaly"),
        states=STATES,
        reference_states=STATES[:3],
        studies_per_patient=None,
        seed=seed,
    )


def _results() -> dict[str, TableResult]:
    t = _labels()
    flows = compute_flows(t, "CR:Rep1,CR:Rep2", studies="each")
    return {
        "agreement": compute_agreement(
            t, "CR:Rep1,CR:Rep2", studies="each", finding_sets={"sel": ["Atelectasis", "Edema"]}
        ),
        "prevalence": compute_prevalence(t),
        "flows": flows,
        "omissions": flows.omissions(),
        "comparison": compare_sources(t, "CR:Rep1,CR:Rep2", studies="each", not_mentioned="exclude"),
    }


def _parts(res: TableResult) -> list[TableResult]:
    if isinstance(res, SourceComparisonResult):
        return [res.agreement, res.prevalence, res.flows, res.omissions]
    return [res]


@pytest.mark.parametrize("name", ["agreement", "prevalence", "flows", "omissions", "comparison"])
def test_save_writes_exactly_files_with_columns(name, tmp_path):
    res = _results()[name]
    written = res.save(tmp_path)
    summary = {"summary.md"} if name == "comparison" else set()  # the job of cxreval agree writes it too
    assert {p.name for p in written.values()} == set(res.FILES.values()) | summary
    assert {p.name for p in tmp_path.iterdir()} == (
        {f for f in res.FILES.values()}
        | summary
        | {f.replace(".csv", ".parquet") for f in res.FILES.values()}
    )
    for part in _parts(res):
        for key, file in part.FILES.items():
            csv = pd.read_csv(tmp_path / file)
            assert tuple(csv.columns) == part.COLUMNS, (name, file)
            pq = pd.read_parquet(tmp_path / file.replace(".csv", ".parquet"))
            assert tuple(pq.columns) == part.COLUMNS and not pq.attrs
            assert len(csv) == len(part.tables()[key]) > 0


@pytest.mark.parametrize("name", ["agreement", "prevalence", "flows", "omissions", "comparison"])
def test_summary_renders_markdown_and_result_is_frozen(name):
    res = _results()[name]
    text = res.summary()
    header = {"prevalence": "| finding | CR | Rep1 | Rep2 |"}.get(name, f"| {' | '.join(res.COLUMNS)} |")
    assert header in text and "|---|" in text
    if name == "comparison":
        assert text.startswith("# Agreement between label sources\n\n- pairs: CR:Rep1, CR:Rep2")
        assert all(h in text for h in ("\n## Agreement\n", "\n## Omissions\n", "\n## Positive prevalence\n"))
    assert not res.table.attrs
    with pytest.raises(dataclasses.FrozenInstanceError):
        res.table = None  # type: ignore[misc]
    assert isinstance(res.to_dict(), dict)


def test_file_constants():
    assert (
        AgreementTableResult.FILES == {"agreement": "agreement.csv"}
        and AgreementTableResult.COLUMNS == AGREEMENT_COLUMNS
    )
    assert (
        PrevalenceResult.FILES == {"prevalence": "prevalence.csv"}
        and PrevalenceResult.COLUMNS == PREVALENCE_COLUMNS
    )
    assert FlowsResult.FILES == {"flows": "flows.csv"} and FlowsResult.COLUMNS == FLOW_COLUMNS
    assert (
        OmissionsResult.FILES == {"omissions": "omissions.csv"}
        and OmissionsResult.COLUMNS == OMISSION_COLUMNS
    )
    assert dict(SourceComparisonResult.FILES) == {
        k: v for p in SourceComparisonResult.PARTS for k, v in p.FILES.items()
    }
    with pytest.raises(TypeError):
        AgreementTableResult.FILES["x"] = "x.csv"  # type: ignore[index]


def test_typed_metadata_replaces_attrs():
    t = _labels()
    res = compute_agreement(t, "CR:Rep2", studies="each", weights="linear", not_mentioned="exclude")
    (cov,) = res.pairs
    assert isinstance(cov, PairCoverage) and cov.pair == "CR:Rep2"
    assert (cov.n_studies, cov.n_only_a, cov.n_only_b) == (26, 4, 0)
    assert (res.weights, res.not_mentioned, res.studies, res.both_uncertain) == (
        "linear",
        "exclude",
        "each",
        "agree",
    )
    nm = t[(t.source == "Rep2") & (t.state == "not_mentioned")].groupby("finding").size().to_dict()
    assert cov.n_not_mentioned_excluded == {f: nm.get(f, 0) for f in ("Atelectasis", "Edema", "Cardiomegaly")}
    assert "- CR:Rep2: 26 common studies; only in A: 4, only in B: 0" in res.summary()
    flows = compute_flows(t, "CR:Rep1", not_mentioned="exclude")
    assert (flows.pairs, flows.not_mentioned, flows.studies) == (("CR:Rep1",), "exclude", "common")
    prev = compute_prevalence(t, sources=["Rep1"], findings=["Edema"])
    assert prev.sources == ("Rep1",) and prev.findings == ("Edema",)


def test_omissions_of_a_flows_table_are_the_flows_results_omissions():
    t = _labels()
    kw = {"studies": "each"}
    flows = compute_flows(t, "CR:Rep2", **kw)
    pd.testing.assert_frame_equal(compute_omissions(flows.table).table, flows.omissions().table)
    pd.testing.assert_frame_equal(compute_omissions(flows).table, flows.omissions().table)
    both = compare_sources(t, "CR:Rep2", **kw)
    pd.testing.assert_frame_equal(both.agreement.table, compute_agreement(t, "CR:Rep2", **kw).table)
    pd.testing.assert_frame_equal(both.prevalence.table, compute_prevalence(t, sources=["CR", "Rep2"]).table)


def test_report_files_are_the_results_files():
    with_results = [k for k in KINDS if k.results]
    assert "agreement" in {k.name for k in with_results}
    for kind in with_results:
        assert set(kind.files) == set(result_files(*kind.results))
        assert set(kind.files) == {f for r in kind.results for f in r.FILES.values()}
    union = {f for k in with_results for r in k.results for f in r.FILES.values()}
    assert union == {f for k in with_results for f in k.files}


def test_report_reads_what_the_results_save(tmp_path):
    compare_sources(_labels(), "CR:Rep1,CR:Rep2", studies="each").save(tmp_path)
    assert [k.name for k in detect_kinds(tmp_path)] == ["agreement"]
    (sec,) = build_sections(tmp_path)
    assert [b.missing for b in sec.blocks] == ["", "", ""] and sec.n_figures == 3
    assert sec.key is not None and "κ" in sec.key.text


def test_no_dataframe_attrs_in_src():
    """Metadata lives on result fields, never in ``DataFrame.attrs`` (lost or compared by pandas operations,
    stored as PANDAS_ATTRS in Parquet files)."""
    pat = re.compile(r"\.attrs\b")
    hits = [
        f"{p.relative_to(SRC)}:{i}"
        for p in sorted(SRC.rglob("*.py"))
        for i, line in enumerate(p.read_text().splitlines(), 1)
        if pat.search(line)
    ]
    assert hits == []
