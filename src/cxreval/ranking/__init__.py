"""Rankings of models under several references: how stable they are (:mod:`cxreval.ranking._stability`), the rank
correlations' default variants (:mod:`cxreval.ranking._correlation`; the correlations are :mod:`cxreval.stats`'),
and the published XQA tables to set them beside (:mod:`cxreval.ranking._published`)."""

from ._correlation import DEFAULT_KENDALL, DEFAULT_SPEARMAN
from ._published import (
    PAIR_REFERENCES,
    XQA_AUC_TABLES,
    XQA_CITATION,
    auc_table_file,
    compare_with_published,
    load_xqa_auc_table,
    load_xqa_rank_correlations,
    rank_auc_table,
    read_auc_table,
    table_finding,
)
from ._stability import (
    ALL_MODELS,
    CORRELATION_COLUMNS,
    RANKING_COLUMNS,
    TOP_COLUMNS,
    RankingStabilityResult,
    check_ranking_options,
    compare_rankings,
    compare_table_rankings,
    rank_desc,
)

__all__ = [
    "rank_desc",
    "RankingStabilityResult",
    "compare_rankings",
    "compare_table_rankings",
    "check_ranking_options",
    "ALL_MODELS",
    "CORRELATION_COLUMNS",
    "RANKING_COLUMNS",
    "TOP_COLUMNS",
    "DEFAULT_KENDALL",
    "DEFAULT_SPEARMAN",
    "XQA_CITATION",
    "table_finding",
    "load_xqa_auc_table",
    "load_xqa_rank_correlations",
    "compare_with_published",
    "read_auc_table",
    "auc_table_file",
    "rank_auc_table",
    "PAIR_REFERENCES",
    "XQA_AUC_TABLES",
]
