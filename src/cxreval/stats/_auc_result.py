"""The result of :func:`~cxreval.classification.evaluate_auc` and the point AUC table, each owning its files.

:class:`AUCResult` writes ``auc``, ``counts`` and ``dropped`` (CSV + Parquet, :meth:`AUCResult.save`) and renders
the Markdown of ``cxreval classify``'s ``summary.md`` (:meth:`AUCResult.summary`); :class:`AUCTableResult` is a
table of point AUCs without bootstrap (read from a file or published, see :func:`cxreval.ranking.read_auc_table`)
and writes ``auc``. The report reads these ``FILES`` and ``COLUMNS`` (:mod:`cxreval.report`).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from .._validation import check_choice
from ..bootstrap import BootstrapResult, ResamplingPlan, bca_ci, percentile_ci
from ..exceptions import InvalidParameterError
from ..finding_maps import finding_map_table
from ..findings import VocabularyMapping, canonical_finding
from ..io import markdown_table
from ..results import TableResult, readonly
from ..schema import FINDING, MACRO, MICRO, STUDY_ID
from ._auc_kernel import BlockInputs, block_indices, soft_auc_rows, soft_block_labels
from ._soft_labels import SOFT_AUC_MEANING

__all__ = [
    "AUC_COLUMNS",
    "COUNT_COLUMNS",
    "COVERAGE_COLUMNS",
    "LABELLED",
    "ONE_CLASS",
    "NOT_LABELLED",
    "NOT_SCORED",
    "DROPPED_COLUMNS",
    "POINT_AUC_COLUMNS",
    "MEAN_MODEL",
    "DEFAULT_GROUP",
    "NO_EFFECT",
    "AUC_SUMMARY_FILE",
    "AUCResult",
    "AUCTableResult",
    "markdown_auc_table",
]

AUC_COLUMNS: tuple[str, ...] = (
    "model",
    "group",
    FINDING,
    "reference",
    "auc",
    "ci_low",
    "ci_high",
    "n_pos",
    "n_neg",
    "n_dropped",
    "chance",
)
"""Columns of ``auc.csv``. ``reference`` names the label source that served as the reference of an AUC: a role,
not the ``source`` column of a label table (whose values it takes). ``chance``: the AUC is (or, for an average,
includes) the 0.5 of a model without any score for the finding (``missing_scores='chance'``). A finding a
reference does not label has no row (``coverage.csv``)."""
COUNT_COLUMNS: tuple[str, ...] = (
    FINDING,
    "reference",
    "n_pos",
    "n_neg",
    "n_dropped",
    "n_studies",
    "n_patients",
    "n_uncertain",
    "n_excluded",
)
"""Columns of ``counts.csv``: per finding and reference, on the evaluated studies under the study design:
``n_pos``/``n_neg`` the positives and negatives after the label policy, ``n_dropped`` the evaluated studies without
a usable label, ``n_studies``/``n_patients`` the studies (and their patients) the reference labels, ``n_uncertain``
its uncertain labels, ``n_excluded`` the labelled studies the policy leaves out (uncertain or not mentioned)."""
COVERAGE_COLUMNS: tuple[str, ...] = (FINDING, "reference", "status")
"""Columns of ``coverage.csv``: ``status`` is ``labelled``, ``one class`` (labelled, AUC undefined), ``not
labelled`` (the reference gives no label for the finding: no AUC row) or ``not scored`` (the reference labels
the finding but no model scores it, without a finding map: not evaluated; ``--finding-map`` re-expresses one
vocabulary in another's)."""
LABELLED, ONE_CLASS, NOT_LABELLED, NOT_SCORED = "labelled", "one class", "not labelled", "not scored"
"""The ``status`` values of ``coverage.csv``."""
DROPPED_COLUMNS: tuple[str, ...] = (STUDY_ID, "reason")
"""Columns of ``dropped.csv``: the studies dropped before evaluation."""
POINT_AUC_COLUMNS: tuple[str, ...] = ("model", FINDING, "reference", "auc")
"""The columns every AUC table has (``auc.csv`` of ``classify``, or a published table of point AUCs)."""
# MACRO / MICRO: the ``finding`` value of macro- and micro-average rows, owned by cxreval.labels
MEAN_MODEL = "Mean"
"""The ``model`` value of the mean-over-models rows (their ``group`` is ``'summary'``)."""
DEFAULT_GROUP = "default"
NO_EFFECT = "Missing scores `chance` had no effect"
"""How a result's notes and :meth:`AUCResult.design` say that ``missing_scores='chance'`` changed nothing."""
"""The ``group`` of every model when no model-group table is given."""
AUC_SUMMARY_FILE = "auc_summary.md"
"""The name of :meth:`AUCResult.summary` written beside another analysis' ``summary.md`` (``cxreval rank``)."""

markdown_auc_table = functools.partial(markdown_table, floatfmt="{:.3f}", nan="", missing=None)
"""The Markdown form of AUC and rank tables: 3 decimals, NaN as an empty cell."""


@dataclass(frozen=True)
class AUCResult(TableResult):
    """AUC of every model × finding × reference, with patient-bootstrap distributions.

    Attributes
    ----------
    table : pandas.DataFrame
        Columns :data:`AUC_COLUMNS`; ``finding == 'macro'`` rows hold the macro average over
        ``findings``, ``finding == 'micro'`` the micro average (pooled pairs; ``n_pos``/``n_neg`` count the
        pooled pairs); ``model == 'Mean'`` (group ``'summary'``) rows the mean over models.
    models, findings, references : tuple of str
        Axis labels of ``point`` and ``distribution`` (``findings`` then ``'macro'`` and ``'micro'`` when
        computed).
    groups : dict
        Model → group.
    point : ndarray of shape (n_models, n_findings[+1], n_references)
    distribution : ndarray of shape (n_models, n_findings[+1], n_references, n_resamples)
        NaN where undefined in a replicate.
    counts : pandas.DataFrame
        ``finding, reference, n_pos, n_neg, n_dropped`` per finding and reference.
    plan : ResamplingPlan
    policy : str
    confidence_level : float
    dropped : pandas.DataFrame
        Studies dropped before evaluation (``study_id, reason``).
    notes : tuple of str
        What the readers recorded (files not read, renamed columns; :func:`prepare_from_files`).
    seed : int or None
        The integer seed of the resampling plan (``rng`` of :func:`~cxreval.classification.evaluate_auc`), None when not an integer.
    coverage : pandas.DataFrame
        :data:`COVERAGE_COLUMNS`: whether each reference labels each finding.
    studies : {'each', 'common'}
        The study design (:func:`~cxreval.classification.evaluate_auc`'s ``studies``).
    chance : tuple of (model, finding)
        Models without any score for a finding, scored AUC 0.5 (``missing_scores='chance'``).
    finding_map : VocabularyMapping or None
        The finding map applied to labels and scores.
    soft_references : tuple of str
        References with soft labels (``p_positive``): their AUC is the expected AUC over label draws, not an
        estimate of the AUC against the truth (:mod:`cxreval.stats._soft_labels`).

    ``FILES``: ``auc`` (``table``, :data:`AUC_COLUMNS`), ``counts`` (:data:`COUNT_COLUMNS`), ``coverage``
    (:data:`COVERAGE_COLUMNS`), ``finding_map`` (:data:`cxreval.finding_maps.FINDING_MAP_COLUMNS`; no rows without
    a map) and ``dropped`` (:data:`DROPPED_COLUMNS`, as text).
    """

    FILES: ClassVar[Mapping[str, str]] = MappingProxyType(
        {
            "auc": "auc.csv",
            "counts": "counts.csv",
            "coverage": "coverage.csv",
            "finding_map": "finding_map.csv",
            "dropped": "dropped.csv",
        }
    )
    COLUMNS: ClassVar[tuple[str, ...]] = AUC_COLUMNS

    table: pd.DataFrame
    models: tuple[str, ...]
    findings: tuple[str, ...]
    references: tuple[str, ...]
    groups: dict[str, str]
    point: np.ndarray = field(repr=False)
    distribution: np.ndarray = field(repr=False)
    counts: pd.DataFrame = field(repr=False)
    plan: ResamplingPlan | None = field(repr=False)
    policy: str = "exclude"
    confidence_level: float = 0.95
    not_mentioned: str = "negative"
    dropped: pd.DataFrame = field(
        default_factory=lambda: pd.DataFrame(columns=list(DROPPED_COLUMNS)), repr=False
    )
    notes: tuple[str, ...] = ()
    seed: int | None = None
    _inputs: BlockInputs | None = field(default=None, repr=False, compare=False)
    coverage: pd.DataFrame = field(
        default_factory=lambda: pd.DataFrame(columns=list(COVERAGE_COLUMNS)), repr=False
    )
    studies: str = "each"
    chance: tuple[tuple[str, str], ...] = ()
    finding_map: VocabularyMapping | None = None
    soft_references: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        readonly(self.point)
        readonly(self.distribution)

    @property
    def n_resamples(self) -> int:
        return int(self.distribution.shape[-1])

    def _pos(self, model: str, finding: str, reference: str) -> tuple[int, int, int]:
        f = finding if finding in (MACRO, MICRO) else canonical_finding(finding)
        for name, val, seq in (
            ("model", model, self.models),
            ("finding", f, self.findings),
            ("reference", reference, self.references),
        ):
            if val not in seq:
                raise InvalidParameterError(f"Unknown {name} {val!r}; known: {list(seq)}.")
        return self.models.index(model), self.findings.index(f), self.references.index(reference)

    def bootstrap(
        self, model: str, finding: str, reference: str, *, ci_method: str = "percentile"
    ) -> BootstrapResult:
        """The :class:`~cxreval.bootstrap.BootstrapResult` of one AUC.

        ``ci_method='bca'`` gives the BCa interval, with the acceleration from a leave-one-patient-out
        jackknife (:meth:`jackknife`).
        """
        check_choice(ci_method, ("percentile", "bca"), name="ci_method", func="AUCResult.bootstrap")
        i, j, k = self._pos(model, finding, reference)
        if ci_method == "bca":
            return bca_ci(
                self.distribution[i, j, k],
                estimate=self.point[i, j, k],
                jackknife=self.jackknife(model, finding, reference),
                confidence_level=self.confidence_level,
            )
        return percentile_ci(
            self.distribution[i, j, k], estimate=self.point[i, j, k], confidence_level=self.confidence_level
        )

    def jackknife(self, model: str, finding: str, reference: str, *, block: int = 256) -> np.ndarray:
        """Leave-one-patient-out values of one AUC (the macro average: of the mean over findings; the micro
        average: of the pooled AUC)."""
        if self.plan is None or self._inputs is None:
            raise InvalidParameterError(
                "jackknife needs a result computed with a resampling plan (n_resamples > 0)."
            )
        i, j, k = self._pos(model, finding, reference)
        per = [q for q, f in enumerate(self.findings) if f not in (MACRO, MICRO)]
        js = per if self.findings[j] == MACRO else [j]
        n_pat = self.plan.n_patients
        # a pooled (micro) index holds the pairs of every finding, finding-major: their patients repeat
        sp = (
            np.tile(self.plan.study_patient, len(per))
            if self.findings[j] == MICRO
            else self.plan.study_patient
        )
        out = np.zeros(n_pat)
        for q in js:  # rebuilt on demand (one sort): the result keeps the arrays, not every index
            fq = len(per) if self.findings[q] == MICRO else q
            soft = soft_block_labels(self._inputs, i, fq, k)
            idx = block_indices(self._inputs, i, fq)[k][0]
            vals = np.empty(n_pat)
            for start in range(0, n_pat, block):
                cols = np.arange(start, min(n_pat, start + block))
                wt = (sp[:, None] != cols[None, :]).astype(np.int32)  # (n_studies, block)
                if soft is None:
                    vals[cols] = idx.auc_t(wt)
                else:  # probabilities: the pair-weighted AUC of the items kept
                    items, s, pr = soft
                    w = wt[items].T.astype(float)
                    vals[cols] = soft_auc_rows(s, np.broadcast_to(pr, w.shape), w)
            out += vals
        return out / len(js)

    def tables(self) -> dict[str, pd.DataFrame]:
        return {
            "auc": self.table,
            "counts": self.counts,
            "coverage": self.coverage,
            "finding_map": finding_map_table(self.finding_map),
            "dropped": self.dropped.astype(str),
        }

    def design(self) -> str:
        """The comparison design in words: study design, finding map, coverage, missing scores (Markdown)."""
        refs = list(self.references)
        if len(refs) > 1:
            st = (
                "studies `common`: for each finding, the studies that every reference labelling it labels "
                "(the AUCs of a finding are computed on the same studies)"
                if self.studies == "common"
                else "studies `each`: every reference on the studies it labels (the AUCs of a finding may be computed "
                "on different studies; see the counts)"
            )
        else:
            st = f"one reference ({refs[0]}): the studies it labels"
        fm = (
            "no finding map (findings as spelt in the files)"
            if self.finding_map is None
            else f"finding map `{self.finding_map.name}` (labels: any of the sources; scores: {self.finding_map.score} "
            f"of the sources; {self.FILES['finding_map']})"
        )
        lines = [f"Design: {st}; {fm}."]
        cov = self.coverage
        scored = cov[cov["status"] != NOT_SCORED] if len(cov) else cov
        if self.studies == "common" and len(refs) > 1 and len(scored):
            lab = (scored["status"] != NOT_LABELLED).to_numpy().reshape(-1, len(refs)).all(axis=1)
            fs = [f for f in self.findings if f not in (MACRO, MICRO)]
            shared = [f for f, c in zip(fs, lab) if c]
            one = " (one finding: the macro and micro averages are its AUC)" if len(shared) == 1 else ""
            lines.append(f"Macro/micro averages over the findings every reference labels: {shared}{one}.")
        nl = cov[cov["status"] == NOT_LABELLED] if len(cov) else cov
        if len(nl):
            avg = (
                ""
                if self.studies == "common" and len(refs) > 1
                else "; macro/micro of a reference are over the findings it labels"
            )
            hint = (
                ""
                if self.finding_map is not None
                else "; --finding-map re-expresses one vocabulary in another's"
            )
            lines.append(
                f"Not labelled (no AUC row, coverage.csv{avg}{hint}): "
                + "; ".join(
                    f"{r} does not label {list(g[FINDING])}" for r, g in nl.groupby("reference", sort=False)
                )
                + "."
            )
        ns = cov[cov["status"] == NOT_SCORED] if len(cov) else cov
        if len(ns):
            hint = (
                ""
                if self.finding_map is not None
                else "; --finding-map re-expresses one vocabulary in another's"
            )
            lines.append(
                f"Labelled but scored by no model (not evaluated; coverage.csv `not scored`{hint}): "
                + "; ".join(f"{r} labels {list(g[FINDING])}" for r, g in ns.groupby("reference", sort=False))
                + "."
            )
        oc = cov[cov["status"] == ONE_CLASS] if len(cov) else cov
        if len(oc):
            lines.append(
                "One class only (AUC undefined): "
                + "; ".join(f"{r}: {list(g[FINDING])}" for r, g in oc.groupby("reference", sort=False))
                + "."
            )
        if self.chance:
            lines.append(
                "Scored AUC 0.5 (no output for the finding; the XQA convention, column `chance`): "
                + ", ".join(f"{m} on {f}" for m, f in self.chance)
                + "."
            )
        lines += [f"{n}." for n in self.notes if n.startswith(NO_EFFECT)]
        if self.soft_references:
            lines.append(
                f"Soft labels (p_positive) in {list(self.soft_references)}: each model's AUC against them is "
                f"the {SOFT_AUC_MEANING}; sum over pairs i != j of p_i (1 - p_j) weighting each pair, with "
                f"the same patient bootstrap; n_pos / n_neg count p_positive >= 0.5 / < 0.5."
            )
        return " ".join(lines)

    def summary(self, title: str = "AUC per model, finding and reference") -> str:
        """``# title``, the choices (models, findings, references, label policy, bootstrap), the label counts,
        the AUC of the macro average (else of the first finding) per model and reference, and the readers'
        notes, as Markdown."""
        md = markdown_auc_table
        lines = [
            f"# {title}",
            "",
            f"{len(self.models)} models, findings {list(self.findings)}, references {list(self.references)}; "
            f"policy `{self.policy}` (not mentioned → {self.not_mentioned}); {self.n_resamples} patient-level "
            f"bootstrap replicates (seed {self.seed}), {int(self.confidence_level * 100)}% percentile CIs.",
            "",
        ]
        lines += [self.design(), ""]
        if self.plan is not None:
            lines.append(f"Studies: {self.plan.n_studies}; patients: {self.plan.n_patients}.")
        if len(self.dropped):
            why = "; ".join(f"{k}: {v}" for k, v in self.dropped["reason"].value_counts(sort=False).items())
            lines.append(
                f"Dropped {len(self.dropped)} prediction studies ({why}; see {self.FILES['dropped']})."
            )
        lines += [
            "",
            "## Counts per finding and reference",
            "",
            md(self._labelled_counts(), floatfmt="{:.0f}"),
            "",
        ]
        f = MACRO if MACRO in self.findings else self.findings[0]
        t = self.table
        wide = t[t[FINDING] == f].pivot(index="model", columns="reference", values="auc")
        lines += [f"## AUC ({f})", "", md(wide.reset_index()), ""]
        if self.notes:
            lines += ["## Notes", ""] + [f"- {n}" for n in self.notes]
        return "\n".join(lines)

    def _labelled_counts(self) -> pd.DataFrame:
        """The rows of ``counts`` whose finding the reference labels (``coverage`` ``labelled`` or ``one class``)."""
        cov = self.coverage
        if not len(cov) or not {FINDING, "reference"} <= set(self.counts.columns):
            return self.counts
        keep = cov.loc[cov["status"].isin((LABELLED, ONE_CLASS)), [FINDING, "reference"]]
        return self.counts.merge(keep, on=[FINDING, "reference"], how="inner")

    def to_frame(self) -> pd.DataFrame:
        return self.table.copy()

    def to_dict(self) -> dict[str, object]:
        return {
            "models": list(self.models),
            "findings": list(self.findings),
            "references": list(self.references),
            "groups": dict(self.groups),
            "policy": self.policy,
            "confidence_level": self.confidence_level,
            "n_resamples": self.n_resamples,
            "plan": None if self.plan is None else self.plan.to_dict(),
            "n_dropped_studies": int(len(self.dropped)),
            "studies": self.studies,
            "finding_map": None if self.finding_map is None else self.finding_map.to_dict(),
            "chance": [list(c) for c in self.chance],
            "soft_references": list(self.soft_references),
            "auc": self.table.to_dict(orient="records"),
        }

    @classmethod
    def figure(cls, table: pd.DataFrame) -> Any:
        """Forest plot of ``auc.csv``: each model's ROC-AUC (with its interval when there is one) under each
        reference (one colour each), a menu switching finding (the report's figure of ``auc.csv``)."""
        from .._plots.analyses import auc_forest, by_dataset

        return auc_forest(by_dataset(table))


@dataclass(frozen=True)
class AUCTableResult(TableResult):
    """A table of point AUCs (no bootstrap): ``model, finding, reference, auc`` and optionally ``group``,
    ``dataset``, ``ci_low``, ``ci_high``... (a published table, or a user's ``auc.csv``).

    Attributes
    ----------
    table : pandas.DataFrame
        At least :data:`POINT_AUC_COLUMNS`; findings canonical, ``macro``/``micro`` for the averages.
    name : str
        Where it came from, in words (a path, or ``XQA Tables 16-25 (packaged)``).
    published : bool
        The packaged published tables (:func:`cxreval.ranking.load_xqa_auc_table`).
    """

    FILES: ClassVar[Mapping[str, str]] = MappingProxyType({"auc": "auc.csv"})
    COLUMNS: ClassVar[tuple[str, ...]] = POINT_AUC_COLUMNS

    table: pd.DataFrame
    name: str
    published: bool = False

    def summary(self) -> str:
        """One line on the table (its origin, models, findings, references) as Markdown."""
        t = self.table
        return (
            f"AUC table {self.name}: {len(t)} rows, {t['model'].nunique()} models, findings "
            f"{list(pd.unique(t[FINDING]))}, references {list(pd.unique(t['reference']))}."
        )

    def to_dict(self) -> dict[str, object]:
        return {"name": self.name, "published": self.published, "auc": self.table.to_dict(orient="records")}

    @classmethod
    def figure(cls, table: pd.DataFrame) -> Any:
        """Forest plot of ``auc.csv``: each model's ROC-AUC (with its interval when there is one) under each
        reference (one colour each), a menu switching finding (:meth:`AUCResult.figure`)."""
        return AUCResult.figure(table)
