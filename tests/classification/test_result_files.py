"""AUC and ranking results own their files: ``AUCResult``, ``AUCTableResult`` and
``RankingStabilityResult`` write exactly their ``FILES`` with their ``COLUMNS``, render the summaries the CLI
writes, and the report reads the files they declare."""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd
import pytest

from _factories import RecordedProgress
from cxreval.classification import evaluate_auc
from cxreval.classification._files import evaluate_auc_files, read_model_groups
from cxreval.exceptions import CxrevalError, SchemaError
from cxreval.finding_maps import FINDING_MAP_COLUMNS
from cxreval.labels import write_labels
from cxreval.labels._long import write_predictions
from cxreval.ranking import RankingStabilityResult, compare_rankings
from cxreval.ranking._published import XQA_AUC_TABLES, rank_auc_table, read_auc_table
from cxreval.ranking._stability_result import CORRELATION_COLUMNS, RANKING_COLUMNS, TOP_COLUMNS
from cxreval.report._sections import build_sections, detect_kinds
from cxreval.stats import AUCResult, AUCTableResult
from cxreval.stats._auc_result import COUNT_COLUMNS, COVERAGE_COLUMNS, DROPPED_COLUMNS


def _tables(n: int = 60, n_models: int = 4, seed: int = 0) -> tuple[pd.DataFrame, pd.DataFrame]:
    g = np.random.default_rng(seed)
    studies = [f"s{i:03d}" for i in range(n)]
    truth = g.random((2, n)) < 0.4
    labs, preds = [], []
    for r in ("CR", "Rep1"):
        for j, f in enumerate(("Effusion", "Atelectasis")):
            st = np.where(truth[j] ^ (g.random(n) < 0.1), "positive", "negative")
            labs.append(
                pd.DataFrame(
                    {
                        "study_id": studies,
                        "patient_id": [f"p{i // 2}" for i in range(n)],
                        "finding": f,
                        "source": r,
                        "state": st,
                    }
                )
            )
    for m in range(n_models):
        for j, f in enumerate(("Effusion", "Atelectasis")):
            preds.append(
                pd.DataFrame(
                    {
                        "study_id": studies + ["extra"],
                        "model": f"M{m}",
                        "finding": f,
                        "score": np.r_[truth[j] * g.random() + g.normal(size=n), 0.5],
                    }
                )
            )
    return pd.concat(preds, ignore_index=True), pd.concat(labs, ignore_index=True)


@pytest.fixture(scope="module")
def auc() -> AUCResult:
    p, lab = _tables()
    return evaluate_auc(p, lab, n_resamples=30, rng=5, unlabeled="drop")


def test_auc_result_saves_exactly_its_files(auc, tmp_path):
    written = auc.save(tmp_path)
    assert (
        {p.name for p in written.values()}
        == set(AUCResult.FILES.values())
        == {"auc.csv", "counts.csv", "coverage.csv", "finding_map.csv", "dropped.csv"}
    )
    cols = {
        "auc": AUCResult.COLUMNS,
        "counts": COUNT_COLUMNS,
        "dropped": DROPPED_COLUMNS,
        "coverage": COVERAGE_COLUMNS,
        "finding_map": FINDING_MAP_COLUMNS,
    }
    for name, file in AUCResult.FILES.items():
        for t in (pd.read_csv(tmp_path / file), pd.read_parquet(tmp_path / file.replace(".csv", ".parquet"))):
            assert tuple(t.columns) == cols[name] and not t.attrs
    dropped = pd.read_csv(tmp_path / "dropped.csv")
    assert dropped["study_id"].tolist() == ["extra"]
    assert (auc.seed, auc.notes) == (5, ()) and auc.plan is not None and auc.plan.seed == 5
    with pytest.raises(dataclasses.FrozenInstanceError):
        auc.table = None  # type: ignore[misc]


def test_auc_summary_is_the_classify_summary(auc):
    text = auc.summary("cxreval classify")
    assert text.startswith(
        "# cxreval classify\n\n4 models, findings ['Effusion', 'Atelectasis', 'macro', 'micro']"
    )
    assert "(seed 5), 95% percentile CIs." in text
    assert "Dropped 1 prediction studies (no label in the label table: 1; see dropped.csv)." in text
    assert "## AUC (macro)\n\n| model | CR | Rep1 |" in text and "| finding | reference | n_pos |" in text


def test_ranking_result_saves_exactly_its_files(auc, tmp_path):
    rs = compare_rankings(auc)
    assert rs.table is rs.correlations
    rs.save(tmp_path)
    assert {p.name for p in tmp_path.iterdir()} == {
        f for v in RankingStabilityResult.FILES.values() for f in (v, v.replace(".csv", ".parquet"))
    }
    for name, cols in (
        ("rank_correlation", CORRELATION_COLUMNS),
        ("rankings", RANKING_COLUMNS),
        ("top_changes", TOP_COLUMNS),
    ):
        assert tuple(pd.read_csv(tmp_path / RankingStabilityResult.FILES[name]).columns) == cols
    assert RankingStabilityResult.COLUMNS == CORRELATION_COLUMNS
    text = rs.summary("cxreval rank")
    assert text.startswith(
        "# cxreval rank\n\nFrom predictions + labels: 4 models, references ['CR', 'Rep1'], 30 "
        "patient-bootstrap replicates (seed 5)"
    )
    assert "the XQA-Chest paper's formula" in text and "## Rank correlations, all models" in text


def test_read_and_rank_auc_tables(tmp_path):
    xqa = read_auc_table(XQA_AUC_TABLES)
    assert xqa.published and set(AUCTableResult.COLUMNS) <= set(xqa.table.columns)
    rs = rank_auc_table(xqa)
    assert rs.correlations["paper_mean"].notna().sum() == 168 and rs.source.startswith(
        "From the AUC table XQA"
    )
    user = xqa.table[(xqa.table.dataset == "XQA-RR") & (xqa.table.group != "summary")]
    user = user.assign(finding=user.finding.replace({"macro": "Macro average"}))[
        ["model", "finding", "reference", "auc"]
    ]
    user.to_csv(tmp_path / "t.csv", index=False)
    mine = read_auc_table(tmp_path / "t.csv")
    assert not mine.published and "macro" in set(mine.table.finding) and str(tmp_path) in mine.name
    (tmp_path / "out").mkdir()
    assert mine.save(tmp_path / "out")["auc"].name == AUCTableResult.FILES["auc"] == "auc.csv"
    with pytest.raises(SchemaError, match="does not exist"):
        read_auc_table(tmp_path / "none.csv")


def test_files_equal_frames_and_groups_file(tmp_path):
    p, lab = _tables(seed=1)
    pp, lp = write_predictions(p, tmp_path / "p.parquet"), write_labels(lab, tmp_path / "l.csv")
    gp = tmp_path / "g.csv"
    pd.DataFrame({"model": [f"M{m}" for m in range(4)], "group": ["A", "A", "B", "B"]}).to_csv(
        gp, index=False
    )
    seen = RecordedProgress()
    a = evaluate_auc_files(pp, lp, model_groups=gp, unlabeled="drop", n_resamples=10, rng=1, progress=seen)
    b = evaluate_auc(p, lab, model_groups=read_model_groups(gp), unlabeled="drop", n_resamples=10, rng=1)
    n_blocks = 4 * (2 + 1)  # the 4 models x (the 2 findings and their micro average)
    assert seen.tasks == [
        ("reading predictions and labels", None),
        ("AUC blocks (model x finding, every replicate)", n_blocks),
    ]
    assert seen.events == [(0, "done")] + [(1, 1)] * n_blocks
    for name, t in a.tables().items():
        pd.testing.assert_frame_equal(t, b.tables()[name], check_exact=True)
    with pytest.raises(SchemaError, match="does not exist"):
        read_model_groups(tmp_path / "none.csv")


def test_report_reads_what_the_results_save(auc, tmp_path):
    auc.save(tmp_path)
    compare_rankings(auc).save(tmp_path)
    assert [k.name for k in detect_kinds(tmp_path)] == ["classification", "ranking"]
    secs = build_sections(tmp_path)
    assert [s.kind for s in secs] == ["classification", "ranking"]
    assert all(b.missing == "" for s in secs for b in s.blocks) and sum(len(s.blocks) for s in secs) >= 4


class _BadType:
    def __repr__(self) -> str:
        return "BadType()"


@pytest.mark.parametrize(
    ("func", "kw", "name"),
    [
        (read_auc_table, {"spec": _BadType()}, "spec"),
        (rank_auc_table, {"auc": _BadType()}, "auc"),
        (read_model_groups, {"path": _BadType()}, "path"),
        (
            evaluate_auc_files,
            {"predictions": "p.csv", "labels": "l.csv", "model_groups": _BadType()},
            "model_groups",
        ),
    ],
)
def test_new_public_functions_reject_bad_types(func, kw, name):
    with pytest.raises(CxrevalError, match=f"'{name}' parameter of {func.__name__}"):
        func(**kw)
