"""Rankings of models under several references: how stable they are (:mod:`cxreval.ranking._stability`), the rank
correlations' default variants (:mod:`cxreval.ranking._correlation`; the correlations are :mod:`cxreval.stats`'),
and the published XQA tables to set them beside (:mod:`cxreval.ranking._published`)."""

from ._published import compare_with_published, load_xqa_auc_table
from ._stability import ALL_MODELS, RankingStabilityResult, compare_rankings, compare_table_rankings

__all__ = [
    "RankingStabilityResult",
    "compare_rankings",
    "compare_table_rankings",
    "ALL_MODELS",
    "load_xqa_auc_table",
    "compare_with_published",
]
