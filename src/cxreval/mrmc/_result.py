"""The result of a reader study analysed under every reference: its tables, files, figure and verdicts."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, ClassVar

from .._typing import PathLike
from ..io import markdown_table
from ..io._write import write_summary
from ..results import TableResult
from ._results import TEST_COLUMNS

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["ReaderStudyResult", "READER_STUDY_COLUMNS"]

_KEYS = ("reference", "finding")
_MODEL_KEYS = ("reference", "finding", "model", "modality")

READER_STUDY_COLUMNS: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {
        "counts": (*_KEYS, "cases", "positives", "negatives", "readers", "modalities"),
        "reader_auc": (*_KEYS, "modality", "reader", "auc", "standard_error", "ci_low", "ci_high"),
        "tests": (*_KEYS, "method", *TEST_COLUMNS[: TEST_COLUMNS.index("p_value")], "pvalue"),
        "differences": (
            *_KEYS,
            "method",
            "analysis",
            "modality_a",
            "modality_b",
            "estimate",
            "standard_error",
            "df",
            "ci_low",
            "ci_high",
            "pvalue",
        ),
        "modalities": (
            *_KEYS,
            "method",
            "analysis",
            "modality",
            "auc",
            "standard_error",
            "df",
            "ci_low",
            "ci_high",
        ),
        "variance_components": (*_KEYS, "method", "name", "value"),
        "model_vs_readers": (
            *_MODEL_KEYS,
            "model_auc",
            "readers_auc",
            "difference",
            "standard_error",
            "df",
            "ci_low",
            "ci_high",
            "pvalue",
            "margin",
            "non_inferior",
        ),
        "operating_points": (
            *_MODEL_KEYS,
            "reader",
            "kind",
            "metric",
            "estimate",
            "ci_low",
            "ci_high",
            "n_cases",
            "n_undefined",
        ),
        "readers_vs_curve": (
            *_MODEL_KEYS,
            "reader",
            "kind",
            "fpr",
            "tpr",
            "below_curve",
            "curve_gap",
            "share_below",
        ),
        "comparisons": (
            *_MODEL_KEYS,
            "reader",
            "kind",
            "metric",
            "model_estimate",
            "reader_estimate",
            "difference",
            "ci_low",
            "ci_high",
            "standard_error",
            "margin",
            "pvalue",
            "pvalue_holm",
            "non_inferior",
            "n_undefined",
        ),
        "below_count": (*_MODEL_KEYS, "n_readers_below", "share", "observed"),
        "roc_curve": (*_MODEL_KEYS, "threshold", "fpr", "tpr"),
        "verdicts": (*_MODEL_KEYS, "measure", "difference", "ci_low", "ci_high", "margin", "non_inferior"),
    }
)
"""The columns of every table of :class:`ReaderStudyResult`, by its name in ``FILES``."""

_FIELDS: Mapping[str, str] = MappingProxyType(
    {name: name for name in READER_STUDY_COLUMNS}
    | {"reader_auc": "table", "modalities": "modalities_table", "verdicts": "verdict_table"}
)
"""The field of :class:`ReaderStudyResult` holding each table, by its name in ``FILES`` (in their order)."""


_MEASURES = {
    "auc": "ΔAUC (model − readers' mean)",
    "sensitivity_at_panel_specificity": "ΔSe at the panel's specificity (model − readers' mean)",
}


def _empty(name: str) -> pd.DataFrame:
    import pandas as pd

    return pd.DataFrame({c: pd.Series(dtype=object) for c in READER_STUDY_COLUMNS[name]})


def _ci(row: Any, est: str, low: str, high: str, digits: int = 3) -> str:
    v = [float(getattr(row, c)) for c in (est, low, high)]
    return f"{v[0]:+.{digits}f} ({v[1]:+.{digits}f} to {v[2]:+.{digits}f})"


@dataclass(frozen=True)
class ReaderStudyResult(TableResult):
    """A reader study analysed per finding under every reference (:func:`cxreval.jobs.evaluate_reader_study`).

    Attributes
    ----------
    table : DataFrame
        ``reader_auc.csv``: every reader's empirical AUC per reference, finding and modality, with its interval.
    counts : DataFrame
        The cases, positives and negatives of each reference and finding.
    tests, differences, modalities, variance_components : DataFrame
        The OR and DBM analyses (``method``), each as RRRC, FRRC and RRFC (``analysis``): the test of equal
        modality AUCs, the pairwise differences with their intervals, each modality's AUC with its interval, and
        the variance components. Empty when a single modality was read.
    model_vs_readers : DataFrame
        Each model against the panel of readers of a modality: the model's AUC minus the readers' mean AUC, the
        readers random and the model fixed; ``non_inferior`` when the interval's lower end exceeds ``-margin``.
    operating_points, readers_vs_curve, comparisons, below_count, roc_curve : DataFrame
        Binary readers on a model's ROC curve (:func:`reader_operating_points`): each reader's sensitivity and
        specificity with patient-bootstrap intervals; each reader's point and whether it lies below the curve; the
        model's sensitivity at the reader's specificity minus the reader's (and the converse), paired
        patient-bootstrap intervals and the non-inferiority verdict at ``margin``; the bootstrap distribution of
        the number of readers below the curve; the model's empirical ROC curve.
    verdict_table : DataFrame
        ``mrmc_verdicts.csv``: per reference, finding, model and modality, the measure the verdict rests on — for
        readers who give ratings, the model's AUC minus the readers' mean AUC; for binary readers, the model's
        sensitivity at the panel's mean specificity minus the panel's sensitivity (a binary reader's AUC is the
        area under one operating point and understates the reader) — its interval and ``non_inferior``.
    references, findings, modalities, readers : tuple of str
    studies, covariance : str
    margin, confidence_level : float
    notes : tuple of str
    """

    FILES: ClassVar[Mapping[str, str]] = MappingProxyType(
        {name: f"mrmc_{name}.csv" for name in READER_STUDY_COLUMNS}
    )
    COLUMNS: ClassVar[tuple[str, ...]] = READER_STUDY_COLUMNS["reader_auc"]

    table: pd.DataFrame
    counts: pd.DataFrame
    tests: pd.DataFrame
    differences: pd.DataFrame
    modalities_table: pd.DataFrame
    variance_components: pd.DataFrame
    model_vs_readers: pd.DataFrame
    operating_points: pd.DataFrame
    readers_vs_curve: pd.DataFrame
    comparisons: pd.DataFrame
    below_count: pd.DataFrame
    roc_curve: pd.DataFrame
    verdict_table: pd.DataFrame
    references: tuple[str, ...]
    findings: tuple[str, ...]
    modalities: tuple[str, ...]
    readers: tuple[str, ...]
    studies: str
    covariance: str
    margin: float
    confidence_level: float
    notes: tuple[str, ...] = ()

    @classmethod
    def from_tables(cls, tables: Mapping[str, pd.DataFrame], **fields: Any) -> ReaderStudyResult:
        """The result from tables named as in ``FILES`` (a missing one is empty), columns in their order."""
        t = {
            name: (tables[name].loc[:, list(cols)].reset_index(drop=True) if name in tables else _empty(name))
            for name, cols in READER_STUDY_COLUMNS.items()
        }
        tabs: dict[str, Any] = {field: t[name] for name, field in _FIELDS.items()}
        return cls(**tabs, **fields)

    def tables(self) -> dict[str, pd.DataFrame]:
        return {name: getattr(self, field) for name, field in _FIELDS.items()}

    def save(self, folder: PathLike) -> dict[str, Path]:
        """Write every table (CSV + Parquet) and ``summary.md``; return ``{name: csv path}`` and the summary's."""
        out = super().save(folder)
        out["summary"] = write_summary(Path(folder), self.summary())
        return out

    def verdicts(self) -> list[str]:
        """One sentence per model, finding and modality: under which references the model is non-inferior to the
        panel of readers (at ``margin``), and under which it is not."""
        lines = []
        for (finding, model, modality), g in self.verdict_table.groupby(
            ["finding", "model", "modality"], sort=False
        ):
            measure = str(g["measure"].iloc[0])
            yes = [
                f"`{r.reference}` ({_ci(r, 'difference', 'ci_low', 'ci_high')})"
                for r in g.itertuples()
                if bool(r.non_inferior)
            ]
            no = [
                f"`{r.reference}` ({_ci(r, 'difference', 'ci_low', 'ci_high')})"
                for r in g.itertuples()
                if not bool(r.non_inferior)
            ]
            head = f"**{finding}**, {model} vs the {modality} readers, {_MEASURES.get(measure, measure)}: "
            if yes and no:
                lines.append(
                    head + f"non-inferior under {', '.join(yes)}; not under {', '.join(no)} — the verdict "
                    "depends on the reference."
                )
            elif yes:
                lines.append(head + f"non-inferior under every reference: {', '.join(yes)}.")
            else:
                lines.append(head + f"not shown non-inferior under any reference: {', '.join(no)}.")
        return lines

    def summary(self) -> str:
        level = f"{self.confidence_level:.0%}"
        parts = [
            f"# Reader study, {len(self.readers)} readers\n",
            f"{len(self.readers)} readers, {len(self.modalities)} modalities, {len(self.findings)} findings, "
            f"{len(self.references)} references.\n",
            f"References: {', '.join(self.references)}; studies: {self.studies} "
            f"({'every reference on the studies all of them label' if self.studies == 'common' else 'every reference on its own studies'}); "
            f"OR covariance: {self.covariance}; {level} intervals; non-inferiority margin {self.margin:g}.\n",
        ]
        verdicts = self.verdicts()
        if verdicts:
            parts += [
                "## Is the model radiologist-level?\n",
                "Readers who give ratings: the model's AUC minus the readers' mean AUC (readers random, cases "
                "random, the model fixed). Binary readers: the model's sensitivity at the readers' mean "
                "specificity minus their mean sensitivity (paired patient bootstrap; a binary reader's AUC is "
                f"the area under one point and would understate the reader). Non-inferior when the {level} "
                f"interval's lower end exceeds −{self.margin:g}.\n",
                *(f"- {v}" for v in verdicts),
                "",
            ]
        if not self.readers_vs_curve.empty:
            op = self.readers_vs_curve[self.readers_vs_curve["kind"] == "reader"]
            below = (
                op.groupby(["reference", "finding", "model", "modality"], sort=False)["below_curve"]
                .agg(["sum", "size"])
                .reset_index()
            )
            parts += [
                "## Readers on the model's ROC curve\n",
                "How many readers' operating points lie below the model's ROC curve (the CheXpert paper's "
                "measure), per reference:\n",
                markdown_table(
                    below.rename(columns={"sum": "readers below", "size": "readers"}),
                    right=("readers below", "readers"),
                ),
                "",
            ]
        if not self.tests.empty:
            rrrc = self.differences[
                (self.differences["analysis"] == "RRRC") & (self.differences["method"] == "OR")
            ]
            if not rrrc.empty:
                parts += ["## Modalities compared (Obuchowski–Rockette, random readers and cases)\n"]
                for r in rrrc.itertuples():
                    parts.append(
                        f"- **{r.finding}** under `{r.reference}`: {r.modality_a} − {r.modality_b} "
                        f"ΔAUC {_ci(r, 'estimate', 'ci_low', 'ci_high', 4)}, p = {r.pvalue:.4f} "
                        f"(ddf {r.df:.2f})."
                    )
                parts.append("")
        if self.notes:
            parts += ["## Notes\n", *(f"- {n}" for n in dict.fromkeys(self.notes)), ""]
        parts += [
            "Assumptions: cases are independent unless a note above says they are clustered by patient (the "
            "patient is always the resampled unit for operating points); "
            "readers are a random sample of the readers of interest; the OR analysis treats the AUC "
            "estimates as normal with the covariance estimated from the cases. Several findings and "
            "references are tested side by side: no multiplicity correction is applied.\n"
        ]
        return "\n".join(parts)

    @classmethod
    def figure(cls, table: pd.DataFrame) -> Any:
        """Every reader's AUC per modality, with its interval: a forest plot per reference and finding."""
        from .._plots import dot_interval

        d = table.assign(reader_modality=table["reader"].astype(str) + " · " + table["modality"].astype(str))
        return dot_interval(
            d,
            value="auc",
            category=["finding", "reader_modality"],
            low="ci_low",
            high="ci_high",
            color="reference",
            title="Readers' AUC by modality and reference",
            value_title="AUC",
        )
