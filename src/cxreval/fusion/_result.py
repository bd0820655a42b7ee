"""The result of label fusion on a long label table, and the files it owns (``cxreval fuse``, the demo).

:class:`FusionResult` holds the fused labels of every method, the fitted estimators and, when a reference
source was given, each method's agreement with it. Its ``FILES`` are every file a fusion run may write;
``tables()`` gives those this run has (see :class:`FusionResult`), and ``save(folder)`` writes them
(CSV + Parquet), so the command and the demo write the same files with the same columns.

>>> sorted(FusionResult.FILES)  # doctest: +NORMALIZE_WHITESPACE
['ds_confusion', 'fused_labels', 'fusion_agreement', 'fusion_convergence', 'fusion_warnings',
 'mace_competence', 'method_agreement', 'reader_accuracy']
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from os import PathLike
from pathlib import Path
from types import MappingProxyType
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from ..exceptions import InvalidParameterError
from ..findings import XQA_SELECTED
from ..io import markdown_table, write_table
from ..labels._long import LABEL_COLUMNS
from ..results import TableResult
from ..schema import FINDING, MACRO, MICRO, SOURCE, STATE
from ..schema._columns import P_POSITIVE, SUMMARY_ROWS
from ..schema._result_columns import AGREEMENT_COLUMNS, READER_ACCURACY_COLUMNS
from ..schema._states import state_names
from ._dawid_skene import ERRORS_COLUMNS
from ._mace import COMPETENCE_COLUMNS

__all__ = [
    "FusionResult",
    "FUSION_AGREEMENT_COLUMNS",
    "CONVERGENCE_COLUMNS",
    "WARNING_COLUMNS",
    "LABELS_FORMATS",
    "METHOD",
    "convergence_table",
    "method_settings",
]

METHOD = "method"
"""Column naming the fusion method (``mv``, ``ds``, ...) in the agreement, convergence and warning tables."""
FUSION_AGREEMENT_COLUMNS: tuple[str, ...] = (METHOD, *AGREEMENT_COLUMNS[1:])
"""Columns of ``fusion_agreement.csv``: the agreement table's (:data:`cxreval.schema.AGREEMENT_COLUMNS`) with
``method`` in place of ``pair`` (the pair is always ``reference:fused_<method>``)."""
CONVERGENCE_COLUMNS: tuple[str, ...] = (
    METHOD,
    FINDING,
    "n_items",
    "n_patterns",
    "n_iter",
    "converged",
    "final_change",
)  # of the estimators' FIT_INFO_COLUMNS
"""Columns of ``fusion_convergence.csv``: the stopping rule's outcome of every iterative fit (``fit_info_``)."""
WARNING_COLUMNS: tuple[str, ...] = (FINDING, METHOD, "warning")
"""Columns of ``fusion_warnings.csv``: states fused far more often than any reader uses them."""
LABELS_FORMATS: tuple[str, ...] = ("csv", "parquet", "both")
"""Formats of ``fused_labels`` (:meth:`FusionResult.save`)."""


@dataclass(frozen=True)
class FusionResult(TableResult):
    """Fused labels of several methods on a long label table, with the fitted estimators and, given a
    reference source, each method's agreement with it (:func:`~cxreval.jobs.fuse_and_compare`).

    ``FILES`` lists every file a fusion run may write; :meth:`tables` gives those this run has:
    ``fused_labels`` always, ``fusion_agreement`` with a reference, ``method_agreement`` with two or more
    methods, ``ds_confusion`` / ``mace_competence`` when Dawid-Skene / MACE ran, ``fusion_convergence``
    when an iterative method ran and ``fusion_warnings`` when there are warnings. :attr:`table` is
    ``fusion_agreement`` (``COLUMNS``) with a reference and ``fused_labels`` without one; ``FILE_COLUMNS``
    gives every file's columns.

    Attributes
    ----------
    labels : pandas.DataFrame
        Long label table (``study_id, patient_id, finding, source, state, p_positive``) of the fused labels only,
        one source ``fused_<method>`` per method (states as ``Int8`` codes; ``p_positive`` the posterior
        probability of the positive state for Dawid-Skene, MACE and NN Fusion, NaN for the rules).
    estimators : dict of str to object
        The fitted estimator of each method (per-reader estimates live on them: ``errors_``,
        ``competence_``).
    readers : tuple of str
        The sources fused.
    n_items : int
        (study, finding) items fused.
    n_dropped : dict of str to int
        Reader labels left out, by reason (``missing``, ``not_mentioned``).
    n_items_partial : int
        Items labelled by fewer readers than the most-read item (fused from the readers present).
    readers_per_item : dict of int to int
        Number of items by number of readers who labelled them (e.g. ``{3: 225000}`` on VinDr-CXR,
        where each image has 3 of the 17 readers).
    warnings : tuple of str
        ``finding: method: ...`` for every state a method fused far more often than any reader uses it
        (:func:`cxreval.fusion.diagnostics.overfused_states`); empty when none.
    convergence : pandas.DataFrame or None
        The stopping rule's outcome of every iterative fit (:data:`CONVERGENCE_COLUMNS`, from the estimators'
        ``fit_info_``); None when no method iterates.
    agreement : pandas.DataFrame or None
        Agreement of each method's fused labels with ``adjudicated`` (:data:`FUSION_AGREEMENT_COLUMNS`): per
        finding, and macro/micro over the XQA selected findings present (``finding_set='selected'``) and over
        all (``'all'``); None without a reference.
    method_agreement : pandas.DataFrame or None
        Agreement between the methods, pair by pair (:data:`cxreval.schema.AGREEMENT_COLUMNS`); None with
        one method.
    adjudicated : str or None
        The reference source (a role, not another name for ``source``: the source every method is scored
        against, and the one the supervised methods are trained on).
    not_mentioned : {'negative', 'exclude'}
        What a reader's ``not_mentioned`` label became.
    seed : int or None
        The random seed of the randomised methods, when one was given as an int.
    inputs : pandas.DataFrame or None
        The input label table, written into ``fused_labels`` before the fused sources when set
        (``include_inputs=True``).
    applied : tuple of str
        The methods applied from an already fitted model (``fitted=`` / ``model=``), not trained here.
    notes : tuple of str
        Other facts for the summary (a fitted model applied, readers mapped onto a model's readers).
    params : dict of str to dict
        The constructor settings given to each trained method (``{method: {parameter: value}}``; recorded in
        ``run.json`` by ``cxreval fuse``).
    labels_format : {'csv', 'parquet', 'both'}
        How :meth:`save` writes ``fused_labels``.
    save_model : bool
        Whether :meth:`save` writes each trained ``nn`` / ``nn_ps`` model as ``<method>_model.npz``.
    title : str
        The heading of ``summary.md``.
    reader_accuracy : pandas.DataFrame or None
        With Dawid-Skene, from :func:`cxreval.jobs.fuse_and_compare` (None from :func:`fuse_labels`): each
        reader's sensitivity and specificity per finding under the binary readers-only latent-class model
        (uncertain = no label), with patient-bootstrap intervals (:func:`cxreval.latent.reader_accuracy_table`,
        :data:`cxreval.schema.READER_ACCURACY_COLUMNS`); a finding with fewer than three readers has no rows.
    """

    FILES: ClassVar[Mapping[str, str]] = MappingProxyType(
        {
            "fused_labels": "fused_labels.csv",
            "fusion_agreement": "fusion_agreement.csv",
            "method_agreement": "method_agreement.csv",
            "ds_confusion": "ds_confusion.csv",
            "mace_competence": "mace_competence.csv",
            "fusion_convergence": "fusion_convergence.csv",
            "fusion_warnings": "fusion_warnings.csv",
            "reader_accuracy": "reader_accuracy.csv",
        }
    )
    COLUMNS: ClassVar[tuple[str, ...]] = FUSION_AGREEMENT_COLUMNS
    FILE_COLUMNS: ClassVar[Mapping[str, tuple[str, ...]]] = MappingProxyType(
        {
            "fused_labels": (*LABEL_COLUMNS, P_POSITIVE),
            "fusion_agreement": FUSION_AGREEMENT_COLUMNS,
            "method_agreement": AGREEMENT_COLUMNS,
            "ds_confusion": ERRORS_COLUMNS,
            "mace_competence": COMPETENCE_COLUMNS,
            "fusion_convergence": CONVERGENCE_COLUMNS,
            "fusion_warnings": WARNING_COLUMNS,
            "reader_accuracy": READER_ACCURACY_COLUMNS,
        }
    )

    labels: pd.DataFrame
    estimators: dict[str, object]
    readers: tuple[str, ...]
    n_items: int
    n_dropped: dict[str, int]
    n_items_partial: int
    readers_per_item: dict[int, int]
    warnings: tuple[str, ...] = ()
    convergence: pd.DataFrame | None = None
    agreement: pd.DataFrame | None = None
    method_agreement: pd.DataFrame | None = None
    adjudicated: str | None = None
    not_mentioned: str = "negative"
    seed: int | None = None
    inputs: pd.DataFrame | None = None
    applied: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    reader_accuracy: pd.DataFrame | None = None
    params: dict[str, dict[str, object]] = field(default_factory=dict)
    labels_format: str = "both"
    save_model: bool = False
    title: str = "Label fusion"

    @property
    def methods(self) -> list[str]:
        """The methods, in the order they ran."""
        return list(self.estimators)

    @property
    def table(self) -> pd.DataFrame:
        """The main table: the agreement with the reference (``fusion_agreement``, :data:`COLUMNS`) when one was
        given, otherwise the fused labels (``fused_labels``, :data:`~cxreval.labels.LABEL_COLUMNS`)."""
        return self.agreement if self.agreement is not None else self.fused_labels()

    def fused_labels(self) -> pd.DataFrame:
        """The table written as ``fused_labels``: the inputs (when kept) then the fused sources, states as names."""
        out = (
            pd.concat([self.inputs, self.labels], ignore_index=True)
            if self.inputs is not None
            else self.labels.copy()
        )
        out[STATE] = state_names(out[STATE].astype("Int8"))
        return out

    def warning_table(self) -> pd.DataFrame:
        """The warnings as a table (:data:`WARNING_COLUMNS`)."""
        return pd.DataFrame([w.split(": ", 2) for w in self.warnings], columns=list(WARNING_COLUMNS))

    def tables(self) -> dict[str, pd.DataFrame]:
        """The tables this run has, by the names of ``FILES`` (see the class docstring)."""
        ests: dict[str, Any] = self.estimators
        tabs = {
            "fused_labels": self.fused_labels(),
            "fusion_agreement": self.agreement,
            "method_agreement": self.method_agreement,
            "ds_confusion": ests["ds"].errors_ if "ds" in ests else None,
            "mace_competence": ests["mace"].competence_ if "mace" in ests else None,
            "fusion_convergence": self.convergence,
            "fusion_warnings": self.warning_table() if self.warnings else None,
            "reader_accuracy": self.reader_accuracy,
        }
        return {k: v for k, v in tabs.items() if v is not None}

    def save(self, folder: str | PathLike[str], *, labels_format: str | None = None) -> dict[str, Path]:
        """Write every file ``cxreval fuse`` writes but ``run.json`` into ``folder``; return ``{name: path}``:
        the tables of :meth:`tables`, each trained ``nn`` / ``nn_ps`` model as ``<method>_model.npz`` when
        ``save_model``, and ``summary.md`` (:meth:`summary`).

        Every table is written as CSV + Parquet except ``fused_labels``, written as ``labels_format`` (default the
        result's): ``'csv'``, ``'parquet'`` or ``'both'`` (a fused table of millions of labels need not be
        written twice).
        """
        from ..io._write import write_summary

        labels_format = self.labels_format if labels_format is None else labels_format
        if labels_format not in LABELS_FORMATS:
            raise InvalidParameterError(
                f"The 'labels_format' parameter of FusionResult.save must be one of "
                f"{list(LABELS_FORMATS)}. Got {labels_format!r} instead."
            )
        folder = Path(folder)
        written: dict[str, Path] = {}
        for name, table in self.tables().items():
            stem = Path(self.FILES[name]).stem
            if name == "fused_labels" and labels_format == "parquet":
                table.to_parquet(folder / f"{stem}.parquet", index=False)
                written[name] = folder / f"{stem}.parquet"
            else:
                written[name] = write_table(
                    table, folder, stem, parquet=name != "fused_labels" or labels_format == "both"
                )
        if self.save_model:
            for m in ("nn", "nn_ps"):
                if m in self.estimators and m not in self.applied:
                    self.estimators[m].save(folder / f"{m}_model.npz")  # type: ignore[attr-defined]
                    written[f"{m}_model"] = folder / f"{m}_model.npz"
        written["summary"] = write_summary(folder, self.summary())
        return written

    def summary(self, title: str | None = None) -> str:
        """The run as Markdown (``# title``, default the result's ``title``): what was fused, fused label counts,
        stopping rules, warnings, agreements."""
        title = self.title if title is None else title
        counts = self.labels.groupby([SOURCE, STATE], observed=True).size().unstack(fill_value=0)
        counts.columns = list(state_names(pd.Series(list(counts.columns), dtype="Int8")))
        seed = "" if self.seed is None else f" (seed={self.seed})"
        lines = [
            f"# {title}",
            "",
            f"- readers fused: {', '.join(self.readers)}; methods: {', '.join(self.methods)}{seed}",
            *self.notes,
            f"- items (study, finding): {self.n_items}; readers per item: {self.readers_per_item}; fused from "
            f"fewer readers than the most-read item: {self.n_items_partial}",
            f"- reader labels left out: {self.n_dropped} (not_mentioned -> {self.not_mentioned})",
            "- MV ties -> uncertain; FUSE_OR = largest state; FUSE_AND = smallest state; "
            + _nn_labels_text(self.estimators, self.applied),
            *_settings_lines(self.estimators, self.applied),
            "",
            "## Fused label counts",
            "",
            markdown_table(counts.reset_index()),
            "",
        ]
        if self.convergence is not None:
            lines += _convergence_lines(self.convergence, self.estimators)
        if self.reader_accuracy is not None:
            ra = self.reader_accuracy
            lines += [
                "## Readers' sensitivity and specificity (reader_accuracy.csv)",
                "",
                "Binary readers-only latent-class model per finding (uncertain = no label; readers' errors "
                "assumed independent given the truth), 95% patient-bootstrap intervals; findings with fewer "
                "than three readers are not identified and have no rows.",
                "",
            ]
            if len(ra):
                lines += [markdown_table(ra, floatfmt="{:.3f}"), ""]
        if self.warnings:
            lines += [
                "## Warnings: states fused far more often than any reader uses them",
                "",
                *[f"- {w}" for w in self.warnings],
                "",
            ]
        if self.agreement is not None:
            agr = self.agreement
            show = agr[agr[FINDING].isin(SUMMARY_ROWS) | agr[FINDING].isin(XQA_SELECTED)]
            lines += [
                f"## Agreement with {self.adjudicated} (weighted κ with Low–High κ)",
                "",
                markdown_table(show),
                "",
            ]
        if self.method_agreement is not None:
            between = self.method_agreement
            lines += [
                "## Agreement between methods (macro/micro over all findings)",
                "",
                markdown_table(between[between[FINDING].isin((MACRO, MICRO))]),
                "",
            ]
        return "\n".join(lines)

    def to_dict(self) -> dict[str, object]:
        conv = (
            None
            if self.convergence is None
            else [
                {k: (None if isinstance(v, float) and not np.isfinite(v) else v) for k, v in r.items()}
                for r in self.convergence.to_dict(orient="records")
            ]
        )
        return {
            "methods": self.methods,
            "readers": list(self.readers),
            "n_items": self.n_items,
            "n_dropped": dict(self.n_dropped),
            "n_items_partial": self.n_items_partial,
            "readers_per_item": {str(k): v for k, v in self.readers_per_item.items()},
            "n_labels": int(len(self.labels)),
            "warnings": list(self.warnings),
            "convergence": conv,
            "settings": method_settings(self.estimators, self.applied),
        }

    @classmethod
    def figure(cls, table: pd.DataFrame) -> Any:
        """κ (and weighted F1, by a menu) of each method's fused labels against the reference per finding, with
        the Low-High interval, and the macro/micro over all findings (not over a subset): the report's figure of
        ``fusion_agreement.csv``."""
        from .._plots.analyses import KAPPA_METRICS, interval_plot

        if "finding_set" in table.columns:
            sets = table["finding_set"].fillna("").astype(str)
            table = table[sets.isin(("", "all"))]
        return interval_plot(
            table, series=METHOD, metrics=KAPPA_METRICS, kind="bar", title="Fusion methods vs reference"
        )

    def _figure(self) -> Any:
        """With a reference: :meth:`figure` of the agreement with it; without one: the positive fraction of
        each method's fused labels per finding."""
        from .._plots import bars

        if self.agreement is not None and len(self.agreement):
            return self.figure(self.agreement)
        lab = self.labels.assign(positive=self.labels[STATE].astype(float) == 2)
        frac = lab.groupby([SOURCE, FINDING], sort=False)["positive"].mean().mul(100).reset_index()
        return bars(
            frac,
            x=FINDING,
            y="positive",
            color=SOURCE,
            title="Positive fraction of the fused labels",
            y_title="positive (% of studies)",
        )


_SETTINGS = {
    "nn": ("hidden", "epochs", "eval_every", "n_folds", "labels_from"),
    "nn_ps": ("hidden", "epochs", "eval_every", "n_folds", "labels_from"),
    "mace": ("method", "n_restarts", "n_iter", "alpha", "beta", "pooling"),
    "ds": ("n_iter", "tol", "pooling"),
}


def method_settings(
    estimators: Mapping[str, object], applied: tuple[str, ...] = ()
) -> dict[str, dict[str, Any]]:
    """The hyper-parameters of the trained NN Fusion, MACE and Dawid-Skene estimators that the summary and
    ``to_dict`` record (``{method: {parameter: value}}``; a model applied from a file is left out)."""
    out = {}
    for m, est in estimators.items():
        if m in _SETTINGS and m not in applied:
            out[m] = {k: getattr(est, k) for k in _SETTINGS[m] if hasattr(est, k)}
    return out


def _nn_labels_text(estimators: Mapping[str, Any], applied: tuple[str, ...]) -> str:
    trained = [m for m in ("nn", "nn_ps") if m in estimators and m not in applied]
    if not trained or all(estimators[m].labels_from == "out-of-fold" for m in trained):
        k = {int(estimators[m].n_folds) for m in trained} or {5}
        return (
            f"nn/nn_ps labels for studies with a reference are out-of-fold "
            f"({'/'.join(map(str, sorted(k)))}-fold CV) predictions"
        )
    kind = {
        "in-sample": "in-sample (the final network, trained on those studies: optimistic)",
        "out-of-fold": "out-of-fold",
    }
    return "nn/nn_ps labels for studies with a reference: " + "; ".join(
        f"{m} {kind[estimators[m].labels_from]}" for m in trained
    )


def _settings_lines(estimators: Mapping[str, object], applied: tuple[str, ...]) -> list[str]:
    settings = method_settings(estimators, applied)
    if not any(m in settings for m in ("nn", "nn_ps", "mace")):
        return []
    return [
        "- method settings: "
        + "; ".join(
            f"{m}: " + ", ".join(f"{k}={v}" for k, v in kw.items())
            for m, kw in settings.items()
            if m in ("nn", "nn_ps", "mace")
        )
    ]


def convergence_table(estimators: Mapping[str, object]) -> pd.DataFrame | None:
    """The ``fit_info_`` of every iterative estimator (:data:`CONVERGENCE_COLUMNS`); None when none iterates."""
    infos = {m: getattr(e, "fit_info_", None) for m, e in estimators.items()}
    parts = [i.assign(**{METHOD: m})[list(CONVERGENCE_COLUMNS)] for m, i in infos.items() if i is not None]
    return pd.concat(parts, ignore_index=True) if parts else None


def _convergence_lines(conv: pd.DataFrame, ests: Mapping[str, Any]) -> list[str]:
    """The summary's section on the stopping rule of every iterative fit."""
    lines = ["## Stopping rule", ""]
    no_tol = [m for m in conv[METHOD].unique() if getattr(ests[m], "tol", 0) is None]
    for m, g in conv.groupby(METHOD, sort=False):
        est = ests[m]
        span = f"iterations {int(g['n_iter'].min())}-{int(g['n_iter'].max())}"
        if m in no_tol:
            lines.append(
                f"- {m}: runs n_iter={est.n_iter} iterations per restart (no tolerance: nothing to converge "
                f"on), keeps the best of {est.n_restarts} restarts; {span}"
            )
            continue
        what = "rises" if m == "ds" else "changes"
        lines.append(
            f"- {m}: stops when the log-likelihood per item {what} by less than tol={est.tol:g}, else after "
            f"n_iter={est.n_iter} iterations; {int(g['converged'].sum())}/{len(g)} fits converged, {span}"
        )
    done = conv["converged"].map({True: "yes", False: "no"})
    show = conv.assign(converged=done.where(~conv[METHOD].isin(no_tol), "no tol"))
    return [*lines, "", markdown_table(show, floatfmt="{:.3g}"), ""]
