"""The result of :func:`~cxreval.subgroups.evaluate_subgroups`: the subgroup table, the verdicts across
references, calibration and reliability bins, with their files."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from os import PathLike
from pathlib import Path
from types import MappingProxyType
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from ..io._markdown import markdown_table
from ..io._write import write_summary
from ..results import TableResult

__all__ = [
    "SubgroupResult",
    "SUBGROUP_COLUMNS",
    "CALIBRATION_COLUMNS",
    "RELIABILITY_COLUMNS",
    "verdict_table",
]

SUBGROUP_COLUMNS: tuple[str, ...] = (
    "model",
    "finding",
    "reference",
    "attribute",
    "group",
    "comparator",
    "metric",
    "threshold",
    "n_studies",
    "n_pos",
    "n_neg",
    "value",
    "ci_low",
    "ci_high",
    "comparator_value",
    "gap",
    "gap_ci_low",
    "gap_ci_high",
    "pvalue",
    "pvalue_holm",
    "significant",
    "n_undefined",
    "estimable",
    "reason",
)
CALIBRATION_COLUMNS: tuple[str, ...] = (
    "model",
    "finding",
    "reference",
    "attribute",
    "group",
    "n",
    "n_pos",
    "brier",
    "brier_ci_low",
    "brier_ci_high",
    "reliability",
    "resolution",
    "uncertainty",
    "brier_within_bin",
    "ece",
    "ece_ci_low",
    "ece_ci_high",
    "ece_l2",
    "ece_l2_debiased",
    "ece_l2_debiased_ci_low",
    "ece_l2_debiased_ci_high",
    "intercept",
    "slope",
    "reason",
)
RELIABILITY_COLUMNS: tuple[str, ...] = (
    "model",
    "finding",
    "reference",
    "attribute",
    "group",
    "bin",
    "bin_low",
    "bin_high",
    "n",
    "mean_score",
    "fraction_positive",
)
_KEY = ["model", "finding", "attribute", "group", "metric"]


def _verdict(sig: list[bool], gaps: list[float]) -> str:
    """'sign changes': significant gaps of opposite signs; 'significance changes': significant under some
    references only; else the same under all (a sign flip of gaps none of which is significant is noise)."""
    if len(sig) < 2:
        return "one reference"
    if len({np.sign(g) for g, s in zip(gaps, sig) if s}) > 1:
        return "sign changes"
    if any(sig) and not all(sig):
        return "significance changes"
    return "gap under every reference" if all(sig) else "no gap under any reference"


def verdict_table(table: pd.DataFrame, references: tuple[str, ...]) -> pd.DataFrame:
    """Per model × finding × attribute × group × metric, each reference's gap (with its interval and Holm
    p-value) side by side, and the verdict over the references where it is estimable (``not_estimable_under``:
    the others): 'sign changes' (significant gaps of opposite signs), 'significance changes' (significant under
    some references only), 'gap under every reference', 'no gap under any reference' or 'one reference'."""
    values = ("gap", "gap_ci_low", "gap_ci_high", "pvalue_holm")
    cols = [*_KEY, "verdict", "not_estimable_under"] + [f"{c}_{r}" for r in references for c in values]
    if table.empty:
        return pd.DataFrame({c: pd.Series(dtype=object) for c in cols})
    code = table.groupby(_KEY, sort=False, dropna=False).ngroup().to_numpy()
    n = int(code.max()) + 1
    first = np.unique(code, return_index=True)[1]
    out: dict[str, object] = {k: table[k].to_numpy(dtype=object)[first].tolist() for k in _KEY}
    ref = table["reference"].astype(str).to_numpy()
    estimable = np.zeros((len(references), n), dtype=bool)
    significant = np.zeros((len(references), n), dtype=bool)
    cells: dict[str, np.ndarray] = {}
    for i, r in enumerate(references):
        rows = np.flatnonzero(ref == r)
        rows = rows[np.unique(code[rows], return_index=True)[1]]  # the reference's first row of each key
        estimable[i, code[rows]] = table["estimable"].to_numpy(dtype=bool)[rows]
        significant[i, code[rows]] = table["significant"].to_numpy(dtype=bool)[rows]
        for c in values:
            cells[f"{c}_{r}"] = np.full(n, np.nan)
            cells[f"{c}_{r}"][code[rows]] = table[c].to_numpy(dtype=float)[rows]
    gap = np.array([cells[f"gap_{r}"] for r in references]).reshape(len(references), n)
    out["verdict"] = [
        _verdict(significant[estimable[:, j], j].tolist(), gap[estimable[:, j], j].tolist()) for j in range(n)
    ]
    out["not_estimable_under"] = [
        "; ".join(r for r, e in zip(references, estimable[:, j]) if not e) for j in range(n)
    ]
    return pd.DataFrame({**out, **cells}, columns=cols)


@dataclass(frozen=True)
class SubgroupResult(TableResult):
    """Per model × finding × reference × subgroup: metrics, gaps and calibration.

    Attributes
    ----------
    table : pandas.DataFrame
        ``subgroups.csv``: one row per model, finding, reference, attribute, group and metric (``COLUMNS``):
        the metric in the group with its interval, the comparator's (``rest``, or the reference group), the gap
        (group - comparator) with its interval, its Wald p-value, Holm's adjustment over the groups of the
        attribute (per model, finding, reference and metric) and ``significant`` (``pvalue_holm < 1 -
        confidence_level``). A group where the metric or its comparator is undefined (no positives, no
        negatives, no studies labelled by the reference, no value in the metadata) is a row with ``estimable``
        False and its ``reason``.
    verdicts : pandas.DataFrame
        ``verdicts.csv``: :func:`verdict_table` of ``table``.
    calibration : pandas.DataFrame
        ``calibration.csv``: per model, finding, reference, attribute (``all``: every study) and group, the Brier
        score and its decomposition, ECE (plug-in and debiased), intercept and slope
        (:mod:`cxreval.subgroups._calibration`), and ``reason``: what the row cannot estimate (a group without
        positives or negatives has no intercept or slope), '' when it estimates every column; empty with
        ``calibration=False``.
    reliability : pandas.DataFrame
        ``reliability.csv``: the reliability diagram's non-empty bins of each of those.
    references, attributes : tuple of str
    operating_point : str
        ``threshold=T`` or ``specificity=S`` (the threshold of each model, finding and reference in ``threshold``).
    n_resamples : int
    confidence_level : float
    min_cases : int
        The fewest cases of each class a gap was estimated on (fewer: not estimable).
    """

    FILES: ClassVar[Mapping[str, str]] = MappingProxyType(
        {
            "subgroups": "subgroups.csv",
            "verdicts": "verdicts.csv",
            "calibration": "calibration.csv",
            "reliability": "reliability.csv",
        }
    )
    COLUMNS: ClassVar[tuple[str, ...]] = SUBGROUP_COLUMNS

    table: pd.DataFrame
    verdicts: pd.DataFrame
    calibration: pd.DataFrame
    reliability: pd.DataFrame
    references: tuple[str, ...]
    attributes: tuple[str, ...]
    operating_point: str
    n_resamples: int
    confidence_level: float = 0.95
    min_cases: int = 10

    def tables(self) -> dict[str, pd.DataFrame]:
        return {
            "subgroups": self.table,
            "verdicts": self.verdicts,
            "calibration": self.calibration,
            "reliability": self.reliability,
        }

    def save(self, folder: str | PathLike[str]) -> dict[str, Path]:
        """Write every table (CSV + Parquet) and ``summary.md`` into ``folder``; return ``{name: csv path}``."""
        paths = TableResult.save(self, folder)
        write_summary(Path(folder), self.summary())
        return paths

    def design(self) -> str:
        """The design in words (what the command prints)."""
        return (
            f"Subgroups by {', '.join(self.attributes)} under {', '.join(self.references)}; operating point "
            f"{self.operating_point}; {self.n_resamples} patient-bootstrap replicates; Holm across groups; a gap "
            f"needs at least {self.min_cases} cases of each class it counts in the group and its comparator."
        )

    def summary(self) -> str:
        """The design, the significant gaps, the verdicts that change with the reference and the rows not
        estimable (Markdown)."""
        t = self.table
        flagged = t[t["significant"].astype(bool)]
        changes = self.verdicts[self.verdicts["verdict"].isin(["sign changes", "significance changes"])]
        lines = [
            "# Subgroup gaps",
            "",
            self.design(),
            "",
            f"{len(flagged)} significant gaps (Holm-adjusted, level {1 - self.confidence_level:g}) of "
            f"{int(t['estimable'].sum())} estimable rows; {int((~t['estimable'].astype(bool)).sum())} rows not "
            "estimable (see `reason`).",
        ]
        if not flagged.empty:
            show = flagged.sort_values("pvalue_holm").head(20)
            cols = [
                "model",
                "finding",
                "reference",
                "attribute",
                "group",
                "metric",
                "value",
                "gap",
                "pvalue_holm",
            ]
            lines += ["", "## Significant gaps", "", markdown_table(show[cols], floatfmt="{:.4g}")]
        if not changes.empty:
            cols = ["model", "finding", "attribute", "group", "metric", "verdict"]
            lines += [
                "",
                "## Gaps that change with the reference",
                "",
                markdown_table(changes[cols].head(20)),
            ]
        return "\n".join(lines)

    def to_dict(self) -> dict[str, object]:
        return {
            "references": list(self.references),
            "attributes": list(self.attributes),
            "operating_point": self.operating_point,
            "n_resamples": self.n_resamples,
            "confidence_level": self.confidence_level,
            "min_cases": self.min_cases,
            "n_rows": len(self.table),
        }

    @classmethod
    def figure(cls, table: pd.DataFrame) -> Any:
        """The forest plot of the gaps in ``subgroups.csv`` (:func:`cxreval._plots.subgroups.subgroup_forest`): one
        panel per finding and attribute, one row per group and model, one colour per reference, significant gaps
        filled (the AUC's gaps when present, else the first metric's); an empty figure that says so without an
        estimable gap."""
        from .._plots import dot_interval
        from .._plots.subgroups import subgroup_forest

        metrics = table["metric"].astype(str).unique().tolist() if "metric" in table else []
        metric = "auc" if "auc" in metrics else (metrics[0] if metrics else "")
        fig = subgroup_forest(table, metric=metric) if metric else None
        if fig is not None:
            return fig
        return dot_interval(
            table.iloc[:0],
            value="gap",
            category="group",
            color="reference",
            title=f"Subgroup gaps of the {metric} (group - comparator): none estimable",
        )
