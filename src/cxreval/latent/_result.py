"""The result of :func:`~cxreval.latent.evaluate_latent_auc`: the latent-truth AUCs, the readers' accuracies
and the diagnostics of the model's assumption, each a file."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from ..io import markdown_table
from ..results import TableResult, readonly
from ..schema import FINDING
from ..schema._result_columns import READER_ACCURACY_COLUMNS
from ..stats import AUCResult
from ..stats._auc_result import AUC_COLUMNS, markdown_auc_table
from ._diagnostics import FLAG_CORRELATION, FLAG_Z

__all__ = ["LATENT_REFERENCE", "LatentAUCResult"]

LATENT_REFERENCE = "latent"
"""The ``reference`` of the latent-truth AUCs in ``auc.csv``."""


_SCORE_MODEL_WORDS = {
    "auto": "'auto': each reader's sensitivity and specificity a logistic function of the score within the class "
    "where the Bayesian information criterion prefers it, else readers independent of the score given "
    "the truth",
    "spline": "'spline': readers independent of each other and of the score given the truth",
    "dependent": "'dependent': each reader's sensitivity and specificity a logistic function of the score within "
    "the class",
    "bins": "'bins': Zhou et al.'s score bins, readers independent of the score given the truth",
}


@dataclass(frozen=True)
class LatentAUCResult(TableResult):
    """Each model's AUC against the latent truth of several readers, per finding, with patient-bootstrap intervals.

    Attributes
    ----------
    table : pandas.DataFrame
        :data:`~cxreval.stats.AUC_COLUMNS`, ``reference == 'latent'``; ``n_pos``/``n_neg`` the expected
        numbers of positives and negatives (the posteriors' sum, rounded), ``n_dropped`` the studies with a score
        but no reader label (not evaluated); ``finding == 'macro'``: the mean over the findings.
    reader_accuracy : pandas.DataFrame
        :data:`READER_ACCURACY_COLUMNS`.
    reader_agreement : pandas.DataFrame
        :data:`~cxreval.latent.READER_AGREEMENT_COLUMNS`.
    score_association : pandas.DataFrame
        :data:`~cxreval.latent.SCORE_ASSOCIATION_COLUMNS`.
    readers : tuple of str
    anchor : str or None
    models, findings : tuple of str
    distribution : ndarray of shape (n_models, n_findings + 1, n_resamples)
        The replicates' AUCs (the last finding: the macro average); NaN where undefined.
    n_resamples : int
    confidence_level : float
    seed : int or None
    policy : str
        The uncertain-label policy applied to the readers (and anchor).
    not_mentioned : str
    score_model : str
    """

    FILES: ClassVar[Mapping[str, str]] = MappingProxyType(
        {
            "auc": "auc.csv",
            "reader_accuracy": "reader_accuracy.csv",
            "reader_agreement": "latent_reader_agreement.csv",
            "score_association": "latent_score_association.csv",
        }
    )
    COLUMNS: ClassVar[tuple[str, ...]] = AUC_COLUMNS

    table: pd.DataFrame
    reader_accuracy: pd.DataFrame
    reader_agreement: pd.DataFrame
    score_association: pd.DataFrame
    readers: tuple[str, ...]
    anchor: str | None
    models: tuple[str, ...]
    findings: tuple[str, ...]
    distribution: np.ndarray = field(repr=False)
    n_resamples: int
    confidence_level: float
    seed: int | None
    policy: str
    not_mentioned: str
    score_model: str

    def __post_init__(self) -> None:
        readonly(self.distribution)

    def tables(self) -> dict[str, pd.DataFrame]:
        return {
            "auc": self.table,
            "reader_accuracy": self.reader_accuracy,
            "reader_agreement": self.reader_agreement,
            "score_association": self.score_association,
        }

    def design(self) -> str:
        """The estimate in words (what ``classify --latent-truth`` prints and summary.md opens with)."""
        anchor = (
            f"; studies labelled by {self.anchor!r} have their truth fixed at that label (two-phase design)"
            if self.anchor
            else ""
        )
        return (
            f"AUC against the latent truth of the readers {', '.join(self.readers)}{anchor}: a latent-class "
            f"model of the readers and each model's score ({_SCORE_MODEL_WORDS.get(self.score_model, self.score_model)}), "
            f"fitted per model and finding; "
            f"uncertain reader labels: {self.policy}, not mentioned: {self.not_mentioned}; "
            + (
                f"{self.n_resamples} patient-bootstrap replicates, each refitting the model."
                if self.n_resamples
                else "point estimates only."
            )
        )

    def summary(self, title: str = "cxreval classify --latent-truth") -> str:
        """Markdown: what is estimated and under which assumption, the AUC table, the readers' accuracies and
        the diagnostics (pairs of readers agreeing more than the model allows; score-reader associations)."""
        t = self.table
        wide = t.pivot_table(index="model", columns=FINDING, values="auc", sort=False).reset_index()
        lines = [
            f"# {title}",
            "",
            self.design(),
            "",
            "**What it estimates.** Each model's ROC-AUC against the truth the readers approximate, not "
            "against any one reader: the Mann-Whitney statistic with each pair of studies weighted by the "
            "fitted probability that the first is positive and the second negative, from a model that "
            "includes the model's score (posteriors of the readers alone would dilute the AUC toward 0.5).",
            "",
            "**Assumption.** The readers' errors are independent of each other and of the model's score, "
            "given the truth; each reader has one sensitivity and specificity per finding. The diagnostics "
            "below show where the data contradict it.",
            "",
            "**Limits.** With fewer than three readers of a finding the model is not identified (refused) "
            "unless reader accuracies or an anchor subset are given.",
            "",
            "## AUC (reference 'latent')",
            "",
            markdown_auc_table(wide),
            "",
        ]
        if len(self.reader_accuracy):
            ra = self.reader_accuracy
            lines += [
                "## Readers' sensitivity and specificity (readers-only model)",
                "",
                markdown_table(
                    ra[[c for c in READER_ACCURACY_COLUMNS if c != "n_labelled"]], floatfmt="{:.3f}"
                ),
                "",
            ]
        ag = self.reader_agreement
        lines += ["## Diagnostic: pairs of readers", ""]
        if len(ag):
            worst = ag.loc[ag["z_both_positive"].abs().sort_values(ascending=False).index].head(10)
            n_bad = int((ag["z_both_positive"].abs() >= FLAG_Z).sum())
            lines += [
                f"{n_bad} of {len(ag)} reader pairs call studies positive together more (or less) often "
                f"than the fitted model implies (|z| >= {FLAG_Z:g}): their errors are likely correlated. "
                "Largest deviations:",
                "",
                markdown_table(
                    worst[
                        [
                            "finding",
                            "source_a",
                            "source_b",
                            "n_both",
                            "observed_both_positive",
                            "fitted_both_positive",
                            "z_both_positive",
                        ]
                    ],
                    floatfmt="{:.3f}",
                ),
                "",
            ]
        else:
            lines += ["No pair of readers labels a common study.", ""]
        sa = self.score_association
        n_flag = int(sa["flagged"].sum()) if len(sa) else 0
        lines += [
            "## Diagnostic: score and readers within the fitted classes",
            "",
            f"{n_flag} of {len(sa)} (model, finding, reader) combinations show a within-class correlation "
            f"between the model's score and the reader's label (|r| >= {FLAG_CORRELATION:g} with "
            f"|r| sqrt(n) >= {FLAG_Z:g}; zero under the assumption): see latent_score_association.csv.",
            "",
        ]
        if n_flag:
            lines += [markdown_table(sa[sa["flagged"]].head(10), floatfmt="{:.3f}"), ""]
        return "\n".join(lines)

    def to_dict(self) -> dict[str, object]:
        return {
            "readers": list(self.readers),
            "anchor": self.anchor,
            "n_resamples": self.n_resamples,
            "seed": self.seed,
            "policy": self.policy,
            "score_model": self.score_model,
            "auc": self.table.to_dict(orient="records"),
        }

    @classmethod
    def figure(cls, table: pd.DataFrame) -> Any:
        """Forest plot of the latent-truth AUCs (the same figure as ``classify``'s ``auc.csv``)."""
        return AUCResult.figure(table)
