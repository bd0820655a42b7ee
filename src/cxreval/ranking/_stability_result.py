"""The result of a ranking stability analysis: its tables' columns, :class:`RankingStabilityResult` and its
summary."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from ..results import TableResult
from ..stats._auc_result import markdown_auc_table
from ..stats._rank_correlation import VARIANT_TEXT
from ._correlation import DEFAULT_KENDALL, DEFAULT_SPEARMAN

__all__ = [
    "ALL_MODELS",
    "METHODS",
    "CORRELATION_COLUMNS",
    "RANKING_COLUMNS",
    "TOP_COLUMNS",
    "RankingStabilityResult",
]


ALL_MODELS = "All Models"
METHODS = ("SRCC", "KRCC")
CORRELATION_COLUMNS: tuple[str, ...] = (
    "dataset",
    "finding",
    "group",
    "reference_a",
    "reference_b",
    "method",
    "variant",
    "statistic",
    "boot_mean",
    "boot_sd",
    "ci_low",
    "ci_high",
    "n_undefined",
    "n_models",
    "n_tied_a",
    "n_tied_b",
    "n_excluded",
)
RANKING_COLUMNS: tuple[str, ...] = (
    "dataset",
    "finding",
    "group",
    "reference",
    "model",
    "auc",
    "rank",
    "tied",
    "rank_min",
    "rank_max",
)
TOP_COLUMNS: tuple[str, ...] = (
    "dataset",
    "finding",
    "group",
    "best_under",
    "model",
    "reference",
    "auc",
    "rank",
    "rank_min",
    "rank_max",
    "is_best",
    "prob_best",
)


@dataclass(frozen=True)
class RankingStabilityResult(TableResult):
    """Rank correlations between references, the rankings and the top-rank changes.

    ``FILES``: ``rank_correlation`` (``correlations``), ``rankings`` and ``top_changes``; ``COLUMNS`` are
    those of ``correlations`` (:data:`CORRELATION_COLUMNS`, the table of :attr:`table`).

    Attributes
    ----------
    correlations : pandas.DataFrame
        :data:`CORRELATION_COLUMNS` (plus ``paper_mean``, ``paper_sd`` when compared with published values):
        one row per dataset × finding × group × reference pair × method. ``variant`` names the formula
        (``formula``/``pearson`` for SRCC, ``tau-a``/``tau-b`` for KRCC); ``statistic`` is the point value
        from the AUC estimates; ``boot_*`` and ``ci_*`` summarise the bootstrap distribution (NaN without one).
    rankings : pandas.DataFrame
        :data:`RANKING_COLUMNS`: the rank of every model under every reference (a bump-chart table).
    top_changes : pandas.DataFrame
        :data:`TOP_COLUMNS`: the best model(s) under each reference (``best_under``) and their AUC and rank
        under every reference; ``prob_best`` is the bootstrap share of replicates where that model is best
        under ``reference`` (ties split; NaN without bootstrap).
    n_resamples : int
        0 for point estimates only.
    confidence_level : float
    kendall, spearman : str
        The KRCC and SRCC variants used.
    source : str
        What was ranked, in words (the AUCs' origin, bootstrap or point values): the first paragraph of
        :meth:`summary`.
    excluded : tuple of str
        What undefined AUCs left out, in words: references without any AUC for a finding (not labelled, or one
        class) are not ranked on it; models without an AUC under every ranked reference leave that finding's
        ranking (column ``n_excluded`` of the correlations).
    """

    FILES: ClassVar[Mapping[str, str]] = MappingProxyType(
        {
            "rank_correlation": "rank_correlation.csv",
            "rankings": "rankings.csv",
            "top_changes": "top_changes.csv",
        }
    )
    COLUMNS: ClassVar[tuple[str, ...]] = CORRELATION_COLUMNS

    correlations: pd.DataFrame
    rankings: pd.DataFrame
    top_changes: pd.DataFrame
    n_resamples: int = 0
    confidence_level: float = 0.95
    distributions: dict[tuple[str, str, str, str, str, str], np.ndarray] = field(
        default_factory=dict, repr=False
    )
    kendall: str = DEFAULT_KENDALL
    spearman: str = DEFAULT_SPEARMAN
    source: str = ""
    excluded: tuple[str, ...] = ()

    @property
    def table(self) -> pd.DataFrame:
        """The rank correlations (the other tables are ``rankings`` and ``top_changes``)."""
        return self.correlations

    def tables(self) -> dict[str, pd.DataFrame]:
        return {
            "rank_correlation": self.correlations,
            "rankings": self.rankings,
            "top_changes": self.top_changes,
        }

    def summary(self, title: str = "Ranking stability across references") -> str:
        """``# title``, :attr:`source`, the variants, the rank correlations of all models per dataset (with the
        bootstrap and the published values when present) and the top-rank changes, as Markdown."""
        return _summary(self, title)

    def to_dict(self) -> dict[str, object]:
        return {
            "n_resamples": self.n_resamples,
            "confidence_level": self.confidence_level,
            "kendall": self.kendall,
            "spearman": self.spearman,
            "correlations": self.correlations.to_dict(orient="records"),
            "top_changes": self.top_changes.to_dict(orient="records"),
        }

    @classmethod
    def figure(cls, table: pd.DataFrame) -> Any:
        """Bump chart of ``rankings.csv``: each model's rank under each reference, a menu switching finding (the
        report's figure of ``rankings.csv``)."""
        from .._plots.analyses import bump_chart, by_dataset

        return bump_chart(by_dataset(table))

    def _figure(self) -> Any:
        return self.figure(self.rankings)


def _pm(m: float, s: float) -> str:
    return "" if np.isnan(m) else f"{m:.2f} ± {s:.2f}"


def _summary(res: RankingStabilityResult, title: str) -> str:
    md = markdown_auc_table
    corr = res.correlations
    lines = [
        f"# {title}",
        "",
        res.source,
        "",
        f"Rank correlations: {VARIANT_TEXT[res.spearman]}; {VARIANT_TEXT[res.kendall]}. Tied AUCs share "
        f"the average rank (column `variant` of {res.FILES['rank_correlation']}).",
        "",
    ]
    if res.excluded:
        lines += [
            "Undefined AUCs (NaN) are left out of the rankings, never ranked:",
            "",
            *[f"- {e}" for e in res.excluded],
            "",
        ]
    if "note" in corr.columns and (corr["note"].fillna("") != "").any():
        notes = corr.loc[corr["note"].fillna("") != "", "note"]
        lines += [
            f"{len(notes)} published rows have no recomputed value: "
            + "; ".join(f"{k} ({v} rows)" for k, v in notes.value_counts().items()),
            "",
        ]
    boot = res.n_resamples > 0
    c = corr[corr.group == ALL_MODELS] if (corr.group == ALL_MODELS).any() else corr
    for ds in pd.unique(c.dataset):
        sub = c[c.dataset == ds]
        rows = []
        for (f, ra, rb), g in sub.groupby(["finding", "reference_a", "reference_b"], sort=False):
            row = {"finding": f, "pair": f"{ra} vs {rb}"}
            for m in METHODS:
                r = g[g.method == m]
                if r.empty:
                    continue
                r = r.iloc[0]
                row[m] = r.statistic
                if boot:
                    row[f"{m} boot"] = _pm(r.boot_mean, r.boot_sd)
                    row[f"{m} CI"] = "" if np.isnan(r.ci_low) else f"[{r.ci_low:.2f}, {r.ci_high:.2f}]"
                if "paper_mean" in g.columns and not np.isnan(r.paper_mean):
                    row[f"{m} paper"] = _pm(r.paper_mean, r.paper_sd)
            row["tied a/b"] = (
                f"{int(g.n_tied_a.iloc[0])}/{int(g.n_tied_b.iloc[0])} of {int(g.n_models.iloc[0])}"
            )
            rows.append(row)
        lines += [
            f"## Rank correlations, all models{f' ({ds})' if ds else ''}",
            "",
            md(pd.DataFrame(rows)),
            "",
        ]
    t = res.top_changes
    t = t[t.group == ALL_MODELS] if (t.group == ALL_MODELS).any() else t
    if len(t):
        rows = []
        for (ds, f, bu, m), g in t.groupby(["dataset", "finding", "best_under", "model"], sort=False):
            ranks = ", ".join(
                f"{r}: {rk:g}" + (f" ({lo}-{hi})" if lo != hi else "")
                for r, rk, lo, hi in zip(g.reference, g["rank"], g.rank_min, g.rank_max)
            )
            rows.append(
                {
                    "dataset": ds,
                    "finding": f,
                    "best under": bu,
                    "model": m,
                    "rank under each reference": ranks,
                }
            )
        lines += [
            "## Top-rank changes (best model under each reference, its rank under all; tie range in brackets)",
            "",
            md(pd.DataFrame(rows)),
            "",
        ]
    return "\n".join(lines)
