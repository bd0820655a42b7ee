"""Demo == CLI: the demo's ranking sections write exactly the files of ``cxreval rank`` on the same
inputs: every file of :class:`~cxreval.ranking.RankingStabilityResult` (``rank_correlation``, ``rankings``,
``top_changes``) and of the AUC result it ranks (:class:`~cxreval.stats.AUCResult` from predictions,
:class:`~cxreval.stats.AUCTableResult` for ``--auc-table xqa``)."""

from __future__ import annotations

import pandas as pd

from cxreval.cli.main import main
from cxreval.ranking import RankingStabilityResult
from cxreval.stats import AUCResult, AUCTableResult

from .auc_inputs import chexpert_inputs, common
from .conftest import assert_same_tables


def test_chexpert_models_equal_rank_with_pairs(demo_section, shared_data, metadata_dir, tmp_path):
    demo = demo_section("chexpert_models")
    args, refs = chexpert_inputs(tmp_path, shared_data, metadata_dir)
    cli = tmp_path / "rank"
    pairs = ",".join(
        f"consensus:{r}" for r in refs[1:]
    )  # the section correlates the consensus with each other
    assert main(["rank", *args, *common(), "--pairs", pairs, "-o", str(cli)]) == 0
    assert_same_tables(demo, cli, [*RankingStabilityResult.FILES.values(), *AUCResult.FILES.values()])
    rc = pd.read_csv(cli / RankingStabilityResult.FILES["rank_correlation"])
    assert set(rc["reference_a"]) == {"consensus"} and set(rc["reference_b"]) == set(refs[1:])


def test_xqa_published_equals_rank_auc_table_xqa(demo_section, tmp_path):
    demo = demo_section("xqa_published")
    cli = tmp_path / "rank"
    assert main(["rank", "--auc-table", "xqa", "-o", str(cli)]) == 0
    assert_same_tables(demo, cli, [*RankingStabilityResult.FILES.values(), *AUCTableResult.FILES.values()])
    rc = pd.read_csv(cli / RankingStabilityResult.FILES["rank_correlation"])
    assert rc["paper_mean"].notna().sum() == 168
