"""What a relabelling plan writes: :class:`RelabelPlanResult` (its tables, its study, its summary and its figure)
and the columns of its tables. The analysis is :func:`cxreval.planning.plan_relabelling`."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any, ClassVar

import pandas as pd

from .._typing import PathLike
from ..io import markdown_table
from ..io._write import write_summary
from ..results import TableResult
from ._design_estimate import DesignAUCResult
from ._estimate import TwoPhaseAUCResult
from ._study import copy_images
from ._verdict import POWER_CALIBRATION, curve_shape, headline

__all__ = ["RELABEL_COLUMNS", "POWER_COLUMNS", "BUDGET_COLUMNS", "POWER_METHOD", "RelabelPlanResult"]

RELABEL_COLUMNS: tuple[str, ...] = (
    "study_id",
    "patient_id",
    "priority",
    "inclusion_probability",
    "random_part",
    "sampling_score",
    "expected_change",
    "reason",
)
POWER_COLUMNS: tuple[str, ...] = (
    "finding",
    "best",
    "runner_up",
    "budget",
    "p_right",
    "mc_se",
    "p_separable",
    "p_wrong",
    "n_draws",
    "effective_draws",
    "method",
)
BUDGET_COLUMNS: tuple[str, ...] = (
    "finding",
    "best",
    "runner_up",
    "same_scores",
    "delta",
    "target_power",
    "budget_needed",
    "p_right",
    "mc_se",
    "n_studies",
    "p_all",
    "half_width_all",
    "resolvable_delta",
    "verdict",
)
POWER_METHOD = (
    "Monte Carlo over the posterior predictive of the latent model, its parameters' uncertainty included, and a "
    "Bayesian bootstrap of the studies: per draw, every study's truth and the population's best model; the "
    "plan's design drawn at the budget, the drawn truths revealed on its sample and the design-based estimate "
    "computed; right = its leading pair's interval of AUC(best) - AUC(runner_up) excludes 0 and its leader is "
    "the draw's best; the draws weighted by an exchangeable normal prior on the models' AUCs, its variance "
    "estimated from the draws (empirical Bayes against the winner's curse of the leading pair; bench: "
    "planning:power_calibration)"
)


@dataclass(frozen=True)
class RelabelPlanResult(TableResult):
    """A relabelling plan: the studies to send (``relabel.csv``), the power per budget (``power.csv``), the budget
    each finding needs (``budget.csv``), the current two-phase estimate (``auc.csv``, ``comparison.csv``) and a
    reader study (``study.yaml``, ``images.csv`` and, when the image folder was given, ``images/``).

    Attributes
    ----------
    table : DataFrame
        :data:`RELABEL_COLUMNS`: the design's sample of ``budget`` studies in a random reading order (``priority``
        1 = first: any first k read are themselves a sample of the design, each study's probability times k /
        budget); ``inclusion_probability`` the study's probability of being drawn; ``random_part`` whether it
        belongs to the equal-probability part; ``sampling_score`` the score the probabilities follow (how much the
        study's labels sharpen the AUCs: :func:`cxreval.planning.plan_relabelling`, Notes); ``expected_change``
        the sum over findings of the expected absolute change of AUC(best) - AUC(runner-up) when the study's truth
        is revealed; ``reason`` in words.
    power : DataFrame
        :data:`POWER_COLUMNS`: per finding and budget, ``p_right`` the probability of the right decision once that
        many studies drawn by the design are labelled (the design-based estimate separates its leading pair and
        the leader is the best model), ``mc_se`` its Monte Carlo standard error, ``p_separable`` the probability
        of separating the pair whichever leads, ``p_wrong`` of separating it with the wrong model on top;
        ``effective_draws`` the number of the ``n_draws`` draws in effect once weighted by the prior on the models'
        AUCs (Kish's ``(sum w)^2 / sum w^2``).
    estimate : TwoPhaseAUCResult
        Every distinct model's two-phase AUC (``auc.csv``: the latent model's estimate, a named alternative; models
        with identical scores of a finding are one model, named by the first in sorted order; ``budget.csv``'s
        ``same_scores`` lists the others).
    design : DesignAUCResult
        The design-based estimate (``design_auc.csv``, ``design_comparison.csv``) when ``anchor_studies`` is an
        earlier plan's ``relabel.csv`` (with its inclusion probabilities); empty tables otherwise.
    images : DataFrame
        ``images.csv``: study_id, patient_id, priority, image (its path in the study folder).
    needed : DataFrame
        :data:`BUDGET_COLUMNS`, one row per finding: the smallest budget whose P(right) reaches ``target_power``
        (``budget_needed``, empty when no budget up to every study does), the power there (or, with none, with
        every study relabelled: ``p_all``), the median half-width of the interval with every study relabelled
        (``half_width_all``) and the difference that would be needed to reach the target there
        (``resolvable_delta``), and the ``verdict`` in words.
    uniform_floor : float
        The share of the budget drawn with equal probabilities.
    reference, readers, anchor, budget, budgets, n_draws, confidence_level, target_power, findings, notes
    """

    FILES: ClassVar[Mapping[str, str]] = MappingProxyType(
        {
            "relabel": "relabel.csv",
            "power": "power.csv",
            "auc": "auc.csv",
            "comparison": "comparison.csv",
            "images": "images.csv",
            "budget": "budget.csv",
            "design_auc": "design_auc.csv",
            "design_comparison": "design_comparison.csv",
        }
    )
    COLUMNS: ClassVar[tuple[str, ...]] = RELABEL_COLUMNS
    STUDY_FILE: ClassVar[str] = "study.yaml"

    table: pd.DataFrame
    power: pd.DataFrame
    estimate: TwoPhaseAUCResult
    images: pd.DataFrame
    reference: str
    readers: tuple[str, ...]
    anchor: str | None
    budget: int
    budgets: tuple[int, ...]
    n_draws: int
    confidence_level: float
    findings: tuple[str, ...]
    study: str
    needed: pd.DataFrame
    target_power: float
    design: DesignAUCResult
    uniform_floor: float
    notes: tuple[str, ...] = ()
    image_sources: tuple[str, ...] = field(default=(), repr=False)

    def tables(self) -> dict[str, pd.DataFrame]:
        return {
            "relabel": self.table,
            "power": self.power,
            "auc": self.estimate.table,
            "comparison": self.estimate.comparison,
            "images": self.images,
            "budget": self.needed,
            "design_auc": self.design.table,
            "design_comparison": self.design.comparison,
        }

    def save(self, folder: PathLike) -> dict[str, Path]:
        """Write the tables, ``study.yaml``, ``summary.md`` and (with an image folder) each selected study's image
        into ``images/``: the folder is a reader study ``cxreval reader init --study FOLDER/study.yaml`` opens.
        Returns ``{name: path}`` of the tables and ``study.yaml``."""
        out = super().save(folder)
        p = Path(folder) / self.STUDY_FILE
        p.write_text(self.study, encoding="utf-8")
        out["study"] = p
        if self.image_sources:
            copy_images(Path(folder), self.images, [Path(s) for s in self.image_sources])
        write_summary(Path(folder), self.summary())
        return out

    def summary(self) -> str:
        top = self.table.head(10)
        known = (
            int(self.estimate.table["n_anchored"].max()) if self.anchor and len(self.estimate.table) else 0
        )
        merged = [n for n in self.notes if "identical scores" in n]
        lines = [
            f"# Relabelling plan: {self.budget} studies for an expert"
            + (f", with {self.anchor!r} known on {known} studies" if self.anchor else ""),
            "",
            f"Reference {self.reference!r}"
            + (f", readers {', '.join(self.readers)}" if self.readers else "")
            + (f", anchor {self.anchor!r} (already relabelled, treated as exact)" if self.anchor else "")
            + f"; findings {', '.join(self.findings)}.",
            "",
            f"## What relabelling can do (power {self.target_power:g})",
            "",
            *[f"- {v}" for v in self.needed["verdict"]],
            *[f"- {n}" for n in merged],
            "",
            "`budget.csv`: per finding the smallest budget whose predicted probability of the right decision "
            f"(the best model separated from the runner-up and on top) reaches {self.target_power:g} (searched up "
            "to every study: the budgets of the power table, then doubling, then bisection), or with none the "
            "probability with every study relabelled, the interval's half-width there and the AUC difference that "
            "would be needed.",
            "",
            "## Studies to relabel: a sample with known probabilities",
            "",
            f"`relabel.csv` is a sample of {self.budget} studies drawn at random (randomized systematic sampling), "
            "each with the probability in `inclusion_probability`: proportional to its `sampling_score` (how much "
            "its labels sharpen the models' AUCs; likely positives of a rare finding score high) for "
            f"{round(100 * (1 - self.uniform_floor))}% of the budget and "
            f"equal for all for the other {round(100 * self.uniform_floor)}% (the uniform floor), so that every "
            "study could be drawn. The studies marked `random_part` are an equal-probability sample. Relabel them "
            "in the listed order (`priority`, a random order): if the expert stops early, the studies read are "
            "still a sample of the design. Then plan again with the expert's labels as the anchor and this "
            "`relabel.csv` as the anchor studies: `design_auc.csv` gives every model's design-based AUC.",
            "",
            markdown_table(top, decimals=4),
            "",
            "## Power",
            "",
            POWER_METHOD + f"; {self.n_draws} draws, {round(100 * self.confidence_level)}% intervals. "
            "`p_separable` counts a separation whichever model leads; `p_wrong` a separation with the wrong "
            "model on top. " + POWER_CALIBRATION,
            "",
            curve_shape(self.power),
            "",
            markdown_table(self.power.drop(columns=["method"]), decimals=3),
            "",
            self.design.summary(),
            "",
            self.estimate.summary(),
            "",
            "## Assumptions",
            "",
            "The design-based estimate (`design_auc.csv`) assumes only that the expert is right and that the "
            "studies were drawn as listed (their inclusion probabilities known and above 0): it is unbiased for "
            "the AUC against the expert whatever the latent model; the latent posteriors serve as its predictions "
            "and only decide how wide its interval is. The priority, the power and the two-phase estimate "
            "(`auc.csv`, a named alternative) assume the latent model: the references' errors independent of each "
            "other and of the scores given the truth, each score binormal on the normal scale of its ranks. Where "
            "that fails, the power is off and the two-phase estimate is biased; the design-based estimate is not.",
            "",
            "## Reader study",
            "",
            f"`{self.STUDY_FILE}` and `images.csv` ({len(self.images)} images, in the listed order; the reader app "
            "shows them in that order). "
            + (
                "The images are in `images/`: `cxreval reader init --study study.yaml --db sqlite:///relabel.db`, "
                "then `cxreval reader add-reader NAME --db sqlite:///relabel.db`."
                if self.image_sources
                else "No image folder was given: `cxreval reader init --study study.yaml --images IMAGES --db "
                "sqlite:///relabel.db` copies each study's image from the folder IMAGES (`<study_id>.png`, "
                "`.jpg`, ... or a folder `<study_id>/`) into `images/` first."
            ),
        ]
        lines += [f"- {n}" for n in self.notes if n not in merged]
        return "\n".join(lines)

    def headline(self) -> str:
        """One line: the budget per finding for the target power, or the findings relabelling cannot settle."""
        return headline(self.needed)

    @classmethod
    def figure(cls, table: pd.DataFrame) -> Any:
        """Power curves (``power.csv``): P(right decision) against the budget, one line per finding, with bars of
        ±2 Monte Carlo standard errors (``mc_se``, when the table has it)."""
        from .._plots import lines

        fig = lines(
            table,
            x="budget",
            y="p_right" if "p_right" in table.columns else "p_separable",
            color="finding",
            title="Probability of the right decision: the best model separated from the runner-up and on top "
            "(bars: ±2 Monte Carlo SE)",
            y_title="P(right decision)",
        )
        if "mc_se" in table.columns and "finding" in table.columns:
            for trace in fig.data:
                se = pd.to_numeric(
                    table.loc[table["finding"].astype(str) == trace.name, "mc_se"], errors="coerce"
                )
                if len(se) == len(trace.x):
                    trace.error_y = {"type": "data", "array": (2 * se).tolist(), "visible": True}
        return fig

    def _figure(self) -> Any:
        return self.figure(self.power)
