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
from ..schema import FINDING, MACRO
from ..schema._result_columns import READER_ACCURACY_COLUMNS
from ..stats import AUCResult
from ..stats._auc_result import AUC_COLUMNS, markdown_auc_table
from ._diagnostics import FLAG_CORRELATION, FLAG_Z, pair_flagged

__all__ = [
    "LATENT_REFERENCE",
    "DATA_ANALYSES",
    "hard_label_verdict",
    "LatentAUCResult",
    "LATENT_AUC_COLUMNS",
    "SENSITIVITY_COLUMNS",
    "COMPARATOR_COLUMNS",
]

#: The end of ``pair_check`` where the readers-only model is saturated and only the score-aware check ran.
SCORE_AWARE_ONLY = "(score-aware check only)"


def _n_flagged_pairs(agreement: pd.DataFrame) -> int:
    return sum(pair_flagged(row) for row in agreement.to_dict("records"))


LATENT_REFERENCE = "latent"
"""The ``reference`` of the latent-truth AUCs in ``auc.csv``."""


LATENT_AUC_COLUMNS: tuple[str, ...] = (
    *AUC_COLUMNS,
    "score_model",
    "weight_dependent",
    "dependent",
    "pair_check",
    "n_flagged",
)
"""Columns of the latent ``auc.csv``: :data:`~cxreval.stats.AUC_COLUMNS`, then what the number assumes and how
its checks came out: ``score_model`` (``'spline'``, ``'dependent'`` or ``'average'`` of the two by BIC weights),
``weight_dependent`` (the ``'dependent'`` model's weight; NaN with a fixed score model), ``dependent`` (the
declared groups of dependent readers, ``a+b;c+d``; empty when none), ``pair_check`` (``'k of m pairs flagged'`` by
either check of ``latent_reader_agreement.csv``, followed by ``(score-aware check only)`` where the readers-only
model is saturated, e.g. three readers, and ``'saturated'`` where no pair can be checked at all; then, where
``dependent='flagged'`` grouped pairs, ``'; flagged on the first fit and grouped: a + b'``) and ``n_flagged`` (the
reader pairs, those grouped included, and the (model, reader) score associations flagged for this model and
finding)."""

SENSITIVITY_COLUMNS: tuple[str, ...] = ("model", FINDING, "analysis", "setting", "auc", "rank", "note")
"""Columns of ``latent_sensitivity.csv``: point estimates under other assumptions; ``analysis`` is
``'leave_one_reader_out'`` (``setting``: the reader left out), ``'score_model'`` (each candidate, ``note``: its
BIC weight) or ``'reader_correlation'`` (``setting``: the assumed within-class correlation of the readers' labels,
0 the headline), and with a prior on readers' accuracies ``'accuracy_range'`` (``setting``: ``low ends``, ``high
ends``: those readers fixed at their ranges' ends; ``no prior``); ``rank``: the model's rank in the finding under that setting (1 the highest AUC)."""

COMPARATOR_COLUMNS: tuple[str, ...] = ("model", FINDING, "reference", "auc", "source")
"""Columns of ``latent_comparators.csv``: each model's AUC against the latent truth and against the labels of
hard Dawid–Skene, soft Dawid–Skene, majority vote and the best single reader (``source``: which)."""

#: The sensitivity analyses that perturb the data or the fitted model (not a hypothetical assumption): the spread
#: of a model's AUC across them is the latent estimate's own uncertainty about its reference.
DATA_ANALYSES = ("leave_one_reader_out", "score_model")


def hard_label_verdict(sensitivity: pd.DataFrame, comparators: pd.DataFrame) -> pd.DataFrame:
    """Per finding, whether the latent truth can do better than hard Dawid–Skene labels: ``gap``, the median
    over the models of |latent AUC - AUC against hard Dawid–Skene labels|, beside ``spread``, the median over
    the models of the range of each model's AUC across the headline, leaving out each reader and each score
    model (:data:`DATA_ANALYSES`). ``distinguishable``: ``gap > spread`` (the latent reference departs from
    hard labels by more than it moves itself under these perturbations); otherwise the readers cannot support
    a better reference than hard labels there. Empty without both tables."""
    columns = [FINDING, "gap", "spread", "distinguishable"]
    if not len(comparators) or not len(sensitivity):
        return pd.DataFrame(columns=columns)
    wide = comparators.pivot_table(index=[FINDING, "model"], columns="reference", values="auc")
    if not {LATENT_REFERENCE, "dawid_skene_hard"} <= set(wide.columns):
        return pd.DataFrame(columns=columns)
    gap = (wide[LATENT_REFERENCE] - wide["dawid_skene_hard"]).abs()
    data = sensitivity[sensitivity["analysis"].isin(DATA_ANALYSES)][[FINDING, "model", "auc"]]
    head = wide[LATENT_REFERENCE].rename("auc").reset_index()
    aucs = pd.concat([data, head]).dropna(subset=["auc"]).groupby([FINDING, "model"])["auc"]
    both = pd.DataFrame({"gap": gap, "spread": aucs.max() - aucs.min()}).dropna()
    out = both.groupby(level=FINDING, sort=False).median().reset_index()
    return out.assign(distinguishable=out["gap"] > out["spread"])[columns]


_SCORE_MODEL_WORDS = {
    "auto": "'auto': the average, by Bayesian-information-criterion weights, of readers independent of the "
    "scores given the truth and of each reader's sensitivity and specificity a logistic function of the "
    "models' mean normal score within the class",
    "spline": "'spline': readers independent of the scores given the truth",
    "dependent": "'dependent': each reader's sensitivity and specificity a logistic function of the models' "
    "mean normal score within the class",
}


@dataclass(frozen=True)
class LatentAUCResult(TableResult):
    """Each model's AUC against the latent truth of several readers, per finding, with patient-bootstrap intervals.

    Attributes
    ----------
    table : pandas.DataFrame
        :data:`LATENT_AUC_COLUMNS`, ``reference == 'latent'``; ``n_pos``/``n_neg`` the expected
        numbers of positives and negatives (the posteriors' sum, rounded), ``n_dropped`` the studies with a score
        but no reader label (not evaluated); ``finding == 'macro'``: the mean over the findings; the score
        model, the declared dependence and the checks' flags beside each number.
    reader_accuracy : pandas.DataFrame
        :data:`READER_ACCURACY_COLUMNS`.
    reader_agreement : pandas.DataFrame
        :data:`~cxreval.latent.READER_AGREEMENT_COLUMNS`.
    score_association : pandas.DataFrame
        :data:`~cxreval.latent.SCORE_ASSOCIATION_COLUMNS`.
    sensitivity : pandas.DataFrame
        :data:`SENSITIVITY_COLUMNS`: leave one reader out, each score model, an assumed within-class
        correlation of the readers from 0 to 0.5 (point estimates; empty with ``sensitivity_analyses=False``).
    comparators : pandas.DataFrame
        :data:`COMPARATOR_COLUMNS`: the AUCs against hard and soft Dawid–Skene, majority vote and the best
        single reader beside the latent one.
    readers : tuple of str
    anchor : str or None
    dependent : tuple of tuple of str
        The declared groups of dependent readers.
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
    flagged_pairs : tuple of (finding, reader, reader, modelled), or None
        With ``dependent='flagged'``: each pair the checks flagged on the first point fits and whether it was
        grouped (``modelled``) or left independent (grouping it would leave fewer than three independent
        readers, or a reader's accuracy is given); None without.
    """

    FILES: ClassVar[Mapping[str, str]] = MappingProxyType(
        {
            "auc": "auc.csv",
            "reader_accuracy": "reader_accuracy.csv",
            "reader_agreement": "latent_reader_agreement.csv",
            "score_association": "latent_score_association.csv",
            "sensitivity": "latent_sensitivity.csv",
            "comparators": "latent_comparators.csv",
        }
    )
    COLUMNS: ClassVar[tuple[str, ...]] = LATENT_AUC_COLUMNS

    table: pd.DataFrame
    reader_accuracy: pd.DataFrame
    reader_agreement: pd.DataFrame
    score_association: pd.DataFrame
    sensitivity: pd.DataFrame
    comparators: pd.DataFrame
    readers: tuple[str, ...]
    anchor: str | None
    dependent: tuple[tuple[str, ...], ...]
    models: tuple[str, ...]
    findings: tuple[str, ...]
    distribution: np.ndarray = field(repr=False)
    n_resamples: int
    confidence_level: float
    seed: int | None
    policy: str
    not_mentioned: str
    score_model: str
    flagged_pairs: tuple[tuple[str, str, str, bool], ...] | None = None

    def __post_init__(self) -> None:
        readonly(self.distribution)

    def tables(self) -> dict[str, pd.DataFrame]:
        return {
            "auc": self.table,
            "reader_accuracy": self.reader_accuracy,
            "reader_agreement": self.reader_agreement,
            "score_association": self.score_association,
            "sensitivity": self.sensitivity,
            "comparators": self.comparators,
        }

    def design(self) -> str:
        """The estimate in words (what ``classify --latent-truth`` prints and summary.md opens with)."""
        anchor = (
            f"; studies labelled by {self.anchor!r} have their truth fixed at that label (two-phase design)"
            if self.anchor
            else ""
        )
        return (
            f"AUC against the latent truth of the readers {', '.join(self.readers)}{anchor}: one latent-class "
            f"model per finding of the readers and every model's score, so that all models are scored against "
            f"one truth ({_SCORE_MODEL_WORDS.get(self.score_model, self.score_model)}); "
            f"{self._dependence_words()}; "
            f"uncertain reader labels: {self.policy}, not mentioned: {self.not_mentioned}; "
            + (
                f"{self.n_resamples} patient-bootstrap replicates, each refitting the model."
                if self.n_resamples
                else "point estimates only."
            )
        )

    def _flagged_words(self, modelled: bool) -> str:
        return ", ".join(f"{a} + {b} ({f})" for f, a, b, m in self.flagged_pairs or () if m is modelled)

    def _dependence_words(self) -> str:
        words = (
            "declared dependent (each group one reader with a free joint label pattern): "
            + "; ".join(" + ".join(g) for g in self.dependent)
            if self.dependent
            else "no readers declared dependent"
        )
        if self.flagged_pairs is None:
            return words
        modelled = self._flagged_words(True)
        return words + (
            f"; grouped where the pair checks flagged them (dependent='flagged'): {modelled}"
            if modelled
            else "; no flagged pair grouped (dependent='flagged')"
        )

    def assumptions(self) -> str:
        """The key sentence: what the numbers assume and how many checks flagged (summary.md's first finding)."""
        t = self.table[self.table[FINDING] != MACRO]
        ag = self.reader_agreement
        n_pairs = _n_flagged_pairs(ag)
        sa = self.score_association
        n_assoc = int(sa["flagged"].sum()) if len(sa) else 0
        sat = sorted(set(t.loc[t["pair_check"].astype(str).str.startswith("saturated"), FINDING]))
        groups = (
            "except the declared groups " + "; ".join(" + ".join(g) for g in self.dependent)
            if self.dependent
            else "none declared dependent"
        )
        if self.flagged_pairs is not None:
            modelled, left = self._flagged_words(True), self._flagged_words(False)
            groups += (
                f"; grouped per finding because the pair checks flagged them on the first fit: {modelled}"
                if modelled
                else "; no flagged pair to group"
            ) + (f"; flagged but left independent (too few readers would remain): {left}" if left else "")
        words = (
            f"**Assumed:** the readers' errors are independent of each other given the truth ({groups}); score "
            f"model {self.score_model!r}. **Checks:** {n_pairs} of {len(ag)} reader pairs and {n_assoc} of "
            f"{len(sa)} (model, finding, reader) score associations flagged."
        )
        if n_pairs and self.flagged_pairs is None:
            pairs = ag[[pair_flagged(row) for row in ag.to_dict("records")]]
            named = ", ".join(f"{r.source_a} + {r.source_b} ({r.finding})" for r in pairs.itertuples())
            words += (
                f" Flagged pairs: {named}. If they share errors (readers of one report, a labeller trained on a "
                f"reader), declare them (e.g. --dependent {pairs['source_a'].iloc[0]},{pairs['source_b'].iloc[0]}) "
                "or refit with --dependent flagged (dependent='flagged', the default), which groups each "
                "flagged pair of a finding as one reader where three independent readers remain."
            )
        if len(self.sensitivity) and self.sensitivity["analysis"].eq("accuracy_range").any():
            words += (
                " Informative priors on readers' accuracies (reader_prior) shape the fit: latent_sensitivity.csv "
                "gives the AUCs with those readers at their ranges' ends and without the prior (accuracy_range)."
            )
        words += self._hard_label_words()
        if sat:
            words += (
                f" With three conditionally independent readers the pair check is impossible (the model is "
                f"saturated) for {', '.join(sat)}: the data cannot show shared errors there; see the sensitivity "
                "table (latent_sensitivity.csv)."
            )
        weak = sorted(
            set(t.loc[t["pair_check"].astype(str).str.contains(SCORE_AWARE_ONLY, regex=False), FINDING])
        )
        if weak:
            words += (
                f" With three or fewer conditionally independent readers only the score-aware pair check is possible for "
                f"{', '.join(weak)}, and it is weak (on simulated sets where one reader copies another's label "
                "with probability 0.3-0.6 it flagged the pair in 7% of three-reader sets): no flag there does not mean independent errors; see latent_sensitivity.csv."
            )
        return words

    def against_hard_labels(self) -> pd.DataFrame:
        """Per finding, whether the latent truth can do better than hard Dawid–Skene labels (``finding, gap,
        spread, distinguishable``, as the module function ``hard_label_verdict``): what summary.md's key finding says."""
        return hard_label_verdict(self.sensitivity, self.comparators)

    def _hard_label_words(self) -> str:
        v = self.against_hard_labels()
        if not len(v):
            return ""
        same = v.loc[~v["distinguishable"], FINDING].tolist()
        apart = v.loc[v["distinguishable"], FINDING].tolist()
        words = " **Against hard labels:** "
        if same:
            words += (
                f"for {', '.join(same)} ({len(same)} of {len(v)} findings) the latent AUCs differ from those "
                "against hard Dawid–Skene labels by less than they move when a reader is left out or the score "
                "model changes: there the readers cannot support a better reference than hard labels (read "
                "latent_comparators.csv beside the headline)"
            )
        if apart:
            words += ("; for " if same else "for ") + (
                f"{', '.join(apart)} the latent AUCs depart from the hard-label AUCs by more than that spread"
            )
        return words + "."

    def _beside_the_headline(self) -> list[str]:
        """The best model of each finding under the headline, each comparator and each sensitivity setting, and
        the spread of each model's AUC across the sensitivity settings."""
        if not len(self.comparators):
            return []
        comp = self.comparators.dropna(subset=["auc"])
        best = comp.loc[comp.groupby([FINDING, "reference"], sort=False)["auc"].idxmax()]
        lines = [
            "## The best model against each reference (latent_comparators.csv)",
            "",
            markdown_table(best.pivot(index=FINDING, columns="reference", values="model").reset_index()),
            "",
        ]
        v = self.against_hard_labels()
        if len(v):
            lines += [
                "## Against hard labels",
                "",
                "Per finding: the median over the models of |latent AUC - AUC against hard Dawid–Skene labels| "
                "(gap) and of the range of each model's AUC across the headline, leaving out each reader and "
                "each score model (spread). Where the gap is not larger than the spread, the readers cannot "
                "support a better reference than hard labels.",
                "",
                markdown_table(v, floatfmt="{:.4f}"),
                "",
            ]
        sens = self.sensitivity.dropna(subset=["auc"])
        if len(sens):
            top = sens[sens["rank"] == 1].assign(setting=lambda d: d["analysis"] + " " + d["setting"])
            share = top.groupby(FINDING)["model"].agg(lambda m: f"{m.value_counts().iloc[0]} of {len(m)}")
            spread = sens.groupby([FINDING, "model"])["auc"].agg(["min", "max"]).reset_index()
            spread = spread.assign(range=spread["max"] - spread["min"]).groupby(FINDING)["range"].max()
            lines += [
                "## Sensitivity (latent_sensitivity.csv)",
                "",
                "Leave one reader out, each score model, and an assumed within-class correlation of the "
                "readers' errors from 0 to 0.5: how often the most frequent top model is on top, and the "
                "largest spread of one model's AUC across these settings.",
                "",
                markdown_table(
                    pd.DataFrame(
                        {
                            FINDING: share.index,
                            "same top model": share.to_numpy(),
                            "largest AUC spread": spread.reindex(share.index).to_numpy(),
                        }
                    ),
                    floatfmt="{:.3f}",
                ),
                "",
            ]
        return lines

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
            self.assumptions(),
            "",
            "**Assumption.** The readers' errors are independent of each other (a declared group of dependent "
            "readers is one reader with a free joint label pattern) and, under 'spline', of the models' scores, "
            "given the truth; each reader has one sensitivity and specificity per finding. The diagnostics "
            "below show where the data contradict it; latent_sensitivity.csv how the AUCs move without each "
            "reader, under each score model and as the readers' within-class error correlation goes from 0 to "
            "0.5; latent_comparators.csv the AUCs against hard and soft Dawid–Skene, majority vote and the best "
            "single reader.",
            "",
            "**Limits.** With fewer than three conditionally independent readers of a finding (a declared group "
            "counts once) the model is not identified (refused) unless reader accuracies or an anchor subset "
            "are given.",
            "",
            "## AUC (reference 'latent')",
            "",
            markdown_auc_table(wide),
            "",
            *self._beside_the_headline(),
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
            z = ag[["z_both_positive", "z_agreement_joint"]].abs().max(axis=1)
            worst = ag.loc[z.sort_values(ascending=False).index].head(10)
            n_bad = _n_flagged_pairs(ag)
            lines += [
                f"{n_bad} of {len(ag)} reader pairs call studies positive together (readers-only model) or agree "
                f"(joint model of the readers and the scores) more or less often than the fitted model implies "
                f"(|z| >= {FLAG_Z:g}): their errors are likely correlated. Largest deviations:",
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
                            "observed_agreement",
                            "fitted_agreement_joint",
                            "z_agreement_joint",
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
            "dependent": [list(g) for g in self.dependent],
            **(
                {}
                if self.flagged_pairs is None
                else {
                    "flagged_pairs": [
                        {"finding": f, "source_a": a, "source_b": b, "modelled": m}
                        for f, a, b, m in self.flagged_pairs
                    ]
                }
            ),
            "auc": self.table.to_dict(orient="records"),
        }

    @classmethod
    def figure(cls, table: pd.DataFrame) -> Any:
        """Forest plot of the latent-truth AUCs (the same figure as ``classify``'s ``auc.csv``)."""
        return AUCResult.figure(table)
