"""How full-reference metrics rank controlled degradations, and how far they agree with each other.

Without expert ratings there is no z-MOS to compare a metric with; what can be measured is how each metric
*ranks the degradations* of a plan (:func:`degradation_ranking`) and how far the metrics agree with each
other (:func:`metric_vs_metric`: SRCC/KRCC between metrics by :func:`cxreval.iqa.metric_rank_agreement`,
clearly metric-vs-metric). :func:`compare_metrics` runs both on a score table whose pairs carry their
``degradation`` (``pairs.csv`` of ``cxreval iqa degrade``, scored by ``cxreval iqa score``) and returns
a :class:`MetricComparisonResult` that owns ``degradation_ranking.csv`` and ``metric_vs_metric.csv``
(``cxreval iqa compare`` and the demo's IQA section write them).

Examples
--------
>>> import pandas as pd
>>> scores = pd.DataFrame({"test": ["a", "b", "c", "d"] * 2, "degradation": ["blur", "noise"] * 4,
...                        "metric": ["psnr"] * 4 + ["gmsd"] * 4,
...                        "value": [30.0, 25.0, 32.0, 26.0, 0.05, 0.09, 0.04, 0.08]})
>>> res = compare_metrics(scores)
>>> res.ranking[["metric", "degradation", "rank"]]
  metric degradation  rank
0   gmsd        blur   1.0
1   gmsd       noise   2.0
2   psnr        blur   1.0
3   psnr       noise   2.0
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from .._typing import PathLike
from ..exceptions import InvalidParameterError, SchemaError
from ..io import markdown_table
from ..io._write import write_summary
from ..results import ReadResult, TableResult, as_table
from ..schema._columns import check_columns
from ._expert import srcc_krcc
from ._metric_selection import check_metric_names
from ._registry import metric_sign

__all__ = [
    "RANKING_COLUMNS",
    "METRIC_VS_METRIC_COLUMNS",
    "MetricComparisonResult",
    "compare_metrics",
    "oriented_scores",
    "metric_rank_agreement",
    "degradation_ranking",
    "metric_vs_metric",
]

RANKING_COLUMNS: tuple[str, ...] = ("metric", "degradation", "mean_value", "n_images", "rank")
"""Columns of :func:`degradation_ranking`."""

METRIC_VS_METRIC_COLUMNS: tuple[str, ...] = ("metric_a", "metric_b", "over", "srcc", "krcc", "n")
"""Columns of :func:`metric_vs_metric`."""

_LEVELS = (("degradation", "degradations"), ("test", "test images"))
"""The units ranked by :func:`metric_vs_metric`: (column, label written in ``over``)."""


def degradation_ranking(scores: pd.DataFrame) -> pd.DataFrame:
    """How each metric ranks the degradations: mean score over images, rank 1 = judged least harmful.

    Parameters
    ----------
    scores : DataFrame
        ``metric, degradation, value`` (one row per scored test image).

    Returns
    -------
    table : DataFrame
        :data:`RANKING_COLUMNS`: ``metric, degradation, mean_value, n_images, rank`` (average ranks for ties),
        ordered by metric and rank. Ranks use the metric's orientation (a lower GMSD is better).
    """
    d = scores.assign(_q=oriented_scores(scores))
    g = d.groupby(["metric", "degradation"], sort=False)
    t = g["value"].mean().rename("mean_value").to_frame()
    t["n_images"] = g["value"].size()
    t["_q"] = g["_q"].mean()
    t = t.reset_index()
    t["rank"] = t.groupby("metric", sort=False)["_q"].rank(ascending=False, method="average")
    return t.drop(columns="_q").sort_values(["metric", "rank"], kind="stable").reset_index(drop=True)


def metric_vs_metric(scores: pd.DataFrame) -> pd.DataFrame:
    """SRCC and KRCC between every two metrics (metric-vs-metric, not metric-vs-expert).

    Two levels (:func:`cxreval.iqa.metric_rank_agreement`): ``over='degradations'`` correlates the metrics'
    mean scores per degradation (their rankings of the degradations); ``over='test images'`` correlates their
    scores of each test image. Scores are oriented (higher = better) so a positive correlation means the
    metrics agree.

    Returns
    -------
    table : DataFrame
        :data:`METRIC_VS_METRIC_COLUMNS`: ``metric_a, metric_b, over, srcc, krcc, n``.
    """
    return pd.concat(
        [metric_rank_agreement(scores, over=col).assign(over=label) for col, label in _LEVELS],
        ignore_index=True,
    )


@dataclass(frozen=True)
class MetricComparisonResult(TableResult):
    """The metrics' rankings of the degradations and their agreement with each other.

    Attributes
    ----------
    table : pandas.DataFrame
        Metric vs metric (:data:`METRIC_VS_METRIC_COLUMNS`).
    ranking : pandas.DataFrame
        Each metric's ranking of the degradations (:data:`RANKING_COLUMNS`).
    """

    FILES: ClassVar[Mapping[str, str]] = MappingProxyType(
        {"degradation_ranking": "degradation_ranking.csv", "metric_vs_metric": "metric_vs_metric.csv"}
    )
    COLUMNS: ClassVar[tuple[str, ...]] = METRIC_VS_METRIC_COLUMNS
    RANKING_COLUMNS: ClassVar[tuple[str, ...]] = RANKING_COLUMNS

    table: pd.DataFrame
    ranking: pd.DataFrame

    def tables(self) -> dict[str, pd.DataFrame]:
        return {"degradation_ranking": self.ranking, "metric_vs_metric": self.table}

    def save(self, folder: PathLike) -> dict[str, Path]:
        """Write every table (CSV + Parquet) and ``summary.md``: what ``cxreval iqa compare`` writes."""
        paths = super().save(folder)
        write_summary(Path(folder), self.summary())
        return paths

    def summary(self, title: str = "cxreval iqa compare") -> str:
        """The rank-1 degradation of each metric and the metric-vs-metric table, as Markdown."""
        first = self.ranking[self.ranking["rank"] == self.ranking.groupby("metric")["rank"].transform("min")]
        return "\n".join(
            [
                f"# {title}",
                "",
                "Metric vs metric, not metric vs experts (no ratings are used).",
                "",
                "## Degradation each metric judges least harmful",
                "",
                markdown_table(first[["metric", "degradation", "mean_value", "rank"]]),
                "",
                "## Agreement between metrics (SRCC / KRCC)",
                "",
                markdown_table(self.table),
                "",
            ]
        )

    def to_dict(self) -> dict[str, object]:
        return {
            "degradation_ranking": self.ranking.to_dict(orient="records"),
            "metric_vs_metric": self.table.to_dict(orient="records"),
        }

    @classmethod
    def figure(cls, table: pd.DataFrame) -> Any:
        """Rank correlation between every two metrics, a menu switching statistic and what is ranked (the report's
        figure of ``metric_vs_metric.csv``)."""
        from .._plots.analyses import metric_correlation_matrix

        return metric_correlation_matrix(table)


def compare_metrics(
    scores: pd.DataFrame | ReadResult | Sequence[pd.DataFrame | ReadResult],
) -> MetricComparisonResult:
    """:func:`degradation_ranking` and :func:`metric_vs_metric` of a score table.

    Parameters
    ----------
    scores : pandas.DataFrame, ReadResult or list of them
        ``test, metric, value, degradation``: the :func:`cxreval.iqa.score_pairs` table of pairs that carry
        their degradation (``pairs.csv`` of ``cxreval iqa degrade``).

    Returns
    -------
    res : MetricComparisonResult

    Raises
    ------
    SchemaError
        A missing column or a non-numeric value.
    InvalidParameterError
        A metric that is not registered (its direction is unknown).
    """
    scores = as_table(scores, name="scores", func="compare_metrics")
    check_columns(
        scores,
        ["test", "metric", "value", "degradation"],
        where="scores (pairs.csv of `cxreval iqa degrade` carries the degradation)",
    )
    _numeric_values(scores)
    return MetricComparisonResult(metric_vs_metric(scores), degradation_ranking(scores))


def _numeric_values(scores: pd.DataFrame) -> pd.Series:
    """The ``value`` column as numbers; a cell that is not a number (a blank is NaN) is refused, naming its row."""
    values = pd.to_numeric(scores["value"], errors="coerce")
    bad = values.isna() & scores["value"].notna()
    if bad.any():
        i = int(np.flatnonzero(bad.to_numpy())[0])
        raise SchemaError(f"scores: column 'value' must be numeric; row {i} has {scores['value'].iloc[i]!r}.")
    return values


def _check_scores(scores: object, func: str) -> pd.DataFrame:
    """``scores`` where it is a DataFrame (the :func:`score_pairs` table)."""
    if not isinstance(scores, pd.DataFrame):
        raise InvalidParameterError(
            f"The 'scores' parameter of {func} must be a pandas DataFrame (the score_pairs "
            f"table). Got {type(scores).__name__} instead."
        )
    return scores


def oriented_scores(scores: pd.DataFrame) -> pd.Series:
    """``value`` signed so that higher means better quality (metrics registered as lower-is-better negated).

    Raises
    ------
    InvalidParameterError
        A metric that is not registered (its direction is unknown).
    """
    _check_scores(scores, "oriented_scores")
    check_columns(scores, ["metric", "value"], where="scores")
    sign = {m: metric_sign(m, where="scores") for m in scores["metric"].unique()}
    return scores["value"].astype(float) * scores["metric"].map(sign)


def metric_rank_agreement(
    scores: pd.DataFrame, *, over: str = "test", metrics: Sequence[str] | None = None, orient: bool = True
) -> pd.DataFrame:
    """SRCC and KRCC between every two metrics' rankings (metric vs metric, not metric vs expert).

    The scores of each metric are oriented (:func:`oriented_scores`, with ``orient``) and averaged per value of
    the ``over`` column (the unit ranked: ``'test'`` ranks the test images; ``'degradation'`` ranks the
    degradations by their mean over images). For each two metrics, Spearman's rho (average ranks for ties)
    and Kendall's tau-b are computed over the units both scored, as ``scipy.stats.spearmanr`` and
    ``kendalltau``; fewer than two units, or a metric constant over them, gives NaN.

    Parameters
    ----------
    scores : pandas.DataFrame
        ``metric, value`` and the ``over`` column, e.g. the :func:`score_pairs` table.
    over : str, default='test'
        The column whose values are ranked.
    metrics : sequence of str, optional
        These metrics, in this order; by default every metric in ``scores``, in order of appearance.
    orient : bool, default=True
        Negate lower-is-better metrics first, so that agreement is positive.

    Returns
    -------
    table : pandas.DataFrame
        ``metric_a, metric_b, over, srcc, krcc, n`` for every two metrics (``a`` before ``b``); ``n`` is the
        number of units both metrics scored (units either lacks are left out of that pair).

    Raises
    ------
    SchemaError
        Missing columns, non-numeric values, or a requested metric without scores.
    InvalidParameterError
        An unregistered metric with ``orient=True``.
    """
    func = "metric_rank_agreement"
    _check_scores(scores, func)
    if not isinstance(over, str):
        raise InvalidParameterError(
            f"The 'over' parameter of {func} must be a column name (str). Got {over!r} instead."
        )
    check_metric_names(metrics, name="metrics", func=func, allow_none=True)
    if not isinstance(orient, (bool, np.bool_)):
        raise InvalidParameterError(
            f"The 'orient' parameter of {func} must be a bool. Got {orient!r} instead."
        )
    check_columns(scores, ["metric", "value", over], where="scores")
    values = _numeric_values(scores)
    d = pd.DataFrame(
        {
            "unit": scores[over].to_numpy(),
            "metric": scores["metric"].astype(str).to_numpy(),
            "value": values.to_numpy(float),
        }
    )
    present = list(dict.fromkeys(d["metric"]))
    chosen = present if metrics is None else [str(m) for m in metrics]
    missing = [m for m in chosen if m not in present]
    if missing:
        raise SchemaError(f"scores: no values for metric(s) {missing}; have {present}.")
    d = d[d["metric"].isin(chosen)]
    if orient:
        d = d.assign(value=oriented_scores(d))
    wide = d.groupby(["unit", "metric"], sort=False)["value"].mean().unstack("metric")
    rows = []
    for a, b in itertools.combinations(chosen, 2):
        both = wide[[a, b]].dropna()
        s, k = srcc_krcc(both[a].to_numpy(), both[b].to_numpy())
        rows.append({"metric_a": a, "metric_b": b, "over": over, "srcc": s, "krcc": k, "n": int(len(both))})
    return pd.DataFrame(rows, columns=["metric_a", "metric_b", "over", "srcc", "krcc", "n"])
