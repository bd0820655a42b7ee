"""Scoring a report labeller against a reference label source: precision, recall, F1 with bootstrap CIs.

Both sources are binarised the same way: positive is positive; uncertain is negative (``uncertain=
'negative'``, the primary protocol when the reference codes definite findings, as OpenI's MeSH coders
do) or positive (``'positive'``, the sensitivity analysis); negative, not mentioned and missing are
negative. Per finding, and pooled over findings (micro) and averaged (macro): TP, FP, FN, precision,
recall, F1. The CIs resample *patients* (a report is its own patient in OpenI) with one
:func:`~cxreval.bootstrap.draw_plan` shared by every finding, so micro/macro CIs are paired with the
per-finding ones.

:data:`NIH_LABELLER_OPENI` holds the figures the NIH labeller's authors published for the same check
(Wang et al. 2017, ChestX-ray8, its Table 2): overall precision 0.90, recall 0.91, F1 0.90 on
the eight ChestX-ray8 findings; Mass F1 0.52 with recall 0.40; Pneumonia precision 0.66.

Examples
--------
>>> import pandas as pd
>>> ref = pd.DataFrame({"study_id": ["a", "b", "c"], "patient_id": ["a", "b", "c"], "finding": "Effusion",
...                     "source": "gold", "state": ["positive", "negative", "positive"]})
>>> pred = ref.assign(source="labeller", state=["positive", "positive", "uncertain"])
>>> t = compute_precision_recall(pd.concat([ref, pred]), reference="gold", predicted="labeller", n_resamples=20,
...                              rng=0).table
>>> t.loc[0, "finding"], int(t.loc[0, "TP"]), int(t.loc[0, "FP"]), int(t.loc[0, "FN"]), float(t.loc[0, "precision"])
('Effusion', 1, 1, 1, 0.5)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from .._typing import RNGLike
from .._validation import check_choice, check_positive_int
from ..bootstrap import draw_plan
from ..exceptions import InvalidParameterError, SchemaError
from ..io import markdown_table
from ..labels import validate_label_table
from ..labels._findings import expand_findings
from ..results import TableResult
from ..schema import MACRO, MICRO, SOURCE

__all__ = [
    "NIH_LABELLER_OPENI",
    "PRF_COLUMNS",
    "LabellerValidationResult",
    "compute_precision_recall",
    "prf_markdown",
    "resolve_reference",
]


NIH_LABELLER_OPENI: dict[tuple[str, str], float] = {
    (MICRO, "precision"): 0.90,
    (MICRO, "recall"): 0.91,
    (MICRO, "f1"): 0.90,
    ("Mass", "f1"): 0.52,
    ("Mass", "recall"): 0.40,
    ("Pneumonia", "precision"): 0.66,
}
"""The NIH (ChestX-ray8) labeller on OpenI, Wang et al. (2017) Table 2; ``micro`` is the
paper's overall figure over the eight findings. Only these cells are included."""

PRF_COLUMNS: tuple[str, ...] = (
    "finding",
    "n_pos",
    "TP",
    "FP",
    "FN",
    "precision",
    "precision_low",
    "precision_high",
    "recall",
    "recall_low",
    "recall_high",
    "f1",
    "f1_low",
    "f1_high",
    "nih_precision",
    "nih_recall",
    "nih_f1",
)


def _scores(tp: np.ndarray, fp: np.ndarray, fn: np.ndarray) -> dict[str, np.ndarray]:
    """Per-finding, micro and macro scores along the last axis (findings)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        p, r, f = tp / (tp + fp), tp / (tp + fn), 2 * tp / (2 * tp + fp + fn)
        T, FP_, FN_ = tp.sum(-1), fp.sum(-1), fn.sum(-1)
        micro = {"precision": T / (T + FP_), "recall": T / (T + FN_), "f1": 2 * T / (2 * T + FP_ + FN_)}
        out = {}
        for k, v in (("precision", p), ("recall", r), ("f1", f)):
            macro = np.nanmean(v, -1) if v.shape[-1] else np.full(v.shape[:-1], np.nan)
            out[k] = np.concatenate([v, micro[k][..., None], np.asarray(macro)[..., None]], -1)
    return out


@dataclass(frozen=True)
class LabellerValidationResult(TableResult):
    """A report labeller scored against a reference label source (``labeller_validation.csv``).

    Attributes
    ----------
    table : pandas.DataFrame
        :data:`PRF_COLUMNS` (see :func:`compute_precision_recall`).
    reference, predicted : str
        The reference source and the scored (labeller's) source.
    findings : tuple of str
        The findings scored, in table order.
    uncertain : str
        What an uncertain label counted as (``negative`` or ``positive``), on both sides.
    n_resamples : int
    confidence_level : float
    """

    FILES: ClassVar[Mapping[str, str]] = MappingProxyType({"labeller_validation": "labeller_validation.csv"})
    COLUMNS: ClassVar[tuple[str, ...]] = PRF_COLUMNS

    table: pd.DataFrame
    reference: str
    predicted: str
    findings: tuple[str, ...]
    uncertain: str
    n_resamples: int
    confidence_level: float

    def summary(self, *, decimals: int = 3) -> str:
        """The table as Markdown (:func:`prf_markdown`): estimates with CIs beside the published figures."""
        return prf_markdown(self.table, decimals=decimals)

    def to_dict(self) -> dict[str, object]:
        return {
            "reference": self.reference,
            "predicted": self.predicted,
            "findings": list(self.findings),
            "uncertain": self.uncertain,
            "n_resamples": self.n_resamples,
            "confidence_level": self.confidence_level,
            "table": self.table.to_dict(orient="records"),
        }

    @classmethod
    def figure(cls, table: pd.DataFrame) -> Any:
        """F1 (precision, recall by a menu) per finding with its bootstrap interval, beside the published
        labeller's figures where the table gives them (the report's figure of ``labeller_validation.csv``)."""
        from .._plots.analyses import PRF_METRICS, interval_plot, labeller_long

        return interval_plot(
            labeller_long(table),
            series="labeller",
            metrics=PRF_METRICS,
            kind="bar",
            title="Report labeller vs human codes",
        )


def resolve_reference(
    reference_labels: pd.DataFrame | None, reference: str | None = None, *, func: str = "resolve_reference"
) -> str:
    """The reference source: ``reference`` (checked to be in ``reference_labels`` when that is given), or the one
    source of ``reference_labels``. The CLI calls it before labelling, so a wrong reference fails first.

    Raises
    ------
    InvalidParameterError
        Neither a reference name nor a reference table.
    SchemaError
        ``reference`` is not in ``reference_labels``, or ``reference_labels`` holds several sources and no
        ``reference`` names one.
    """
    if reference_labels is not None and SOURCE not in getattr(reference_labels, "columns", ()):
        raise SchemaError(
            f"The reference label table has no {SOURCE!r} column; columns: "
            f"{list(getattr(reference_labels, 'columns', []))}."
        )
    names = None if reference_labels is None else list(dict.fromkeys(reference_labels[SOURCE].astype(str)))
    if reference is not None:
        if names is not None and reference not in names:
            raise SchemaError(
                f"Source {reference!r} is not in the reference label table; sources: {names[:10]}."
            )
        return reference
    if names is None:
        raise InvalidParameterError(
            f"The 'reference' parameter of {func} names the reference source; it may be "
            "left out only when 'reference_labels' is a label table of one source."
        )
    if len(names) != 1:
        raise SchemaError(
            f"The reference label table holds {len(names)} sources {names[:10]}; name the reference "
            "source (reference=)."
        )
    return names[0]


def compute_precision_recall(
    labels: pd.DataFrame,
    *,
    reference: str | None = None,
    predicted: str,
    reference_labels: pd.DataFrame | None = None,
    findings: Sequence[str] | None = None,
    uncertain: str = "negative",
    n_resamples: int = 1000,
    confidence_level: float = 0.95,
    rng: RNGLike = None,
) -> LabellerValidationResult:
    """Precision, recall and F1 of ``predicted`` against ``reference`` per finding, micro and macro, with CIs.

    Parameters
    ----------
    labels : pandas.DataFrame
        A long label table (``study_id, patient_id, finding, source, state``) holding ``predicted`` (and
        ``reference``, unless ``reference_labels`` holds it).
    reference : str, optional
        The reference source; the studies compared are its studies (each must be in ``predicted``). Default:
        the one source of ``reference_labels``.
    predicted : str
        The scored source (the labeller's: ``report``, ``report_findings``...).
    reference_labels : pandas.DataFrame, optional
        A second long label table (the reference's), appended to ``labels``.
    findings : sequence of str or str, optional
        Findings (or vocabulary names: ``chestxray8``...); default the findings ``reference`` labels, in order of
        appearance.
    uncertain : {'negative', 'positive'}, default='negative'
        What an uncertain label counts as, on both sides.
    n_resamples : int, default=1000
        Patient-bootstrap replicates for the percentile CIs.
    confidence_level : float, default=0.95
    rng : int or Generator, optional

    Returns
    -------
    res : LabellerValidationResult
        ``res.table``: :data:`PRF_COLUMNS`, one row per finding then ``micro`` and ``macro`` (``n_pos``, ``TP``,
        ``FP``, ``FN`` summed); ``nih_*`` the published NIH-labeller figure where :data:`NIH_LABELLER_OPENI` has
        one.

    Raises
    ------
    SchemaError
        An absent source or finding, or reference studies missing from ``predicted``.
    """
    func = "compute_precision_recall"
    reference = resolve_reference(reference_labels, reference, func=func)
    if reference_labels is not None:
        if not isinstance(reference_labels, pd.DataFrame) or not isinstance(labels, pd.DataFrame):
            raise InvalidParameterError(
                f"The 'labels' and 'reference_labels' parameters of {func} must be pandas "
                f"DataFrames (long label tables). Got {type(labels).__name__} and "
                f"{type(reference_labels).__name__}."
            )
        labels = pd.concat([reference_labels, labels], ignore_index=True)
    check_choice(uncertain, ("negative", "positive"), name="uncertain", func=func)
    n_resamples = check_positive_int(n_resamples, name="n_resamples", func=func)
    if findings is not None and not isinstance(findings, Sequence):
        raise InvalidParameterError(
            f"The 'findings' parameter of {func} must be a sequence of finding names, a "
            f"vocabulary name or None. Got {findings!r} instead."
        )
    if not isinstance(confidence_level, float) or not 0 < confidence_level < 1:
        raise InvalidParameterError(
            f"The 'confidence_level' parameter of {func} must be in (0, 1). Got {confidence_level!r} instead."
        )
    lab = validate_label_table(labels, require_patient=False)
    for s in (reference, predicted):
        if not isinstance(s, str):
            raise InvalidParameterError(f"The source names of {func} must be str. Got {s!r} instead.")
        if s not in set(lab["source"]):
            raise SchemaError(
                f"Source {s!r} is not in the label table; sources: {sorted(set(lab['source']))}."
            )
    ref = lab[lab["source"] == reference]
    fs = list(dict.fromkeys(ref["finding"])) if findings is None else expand_findings(findings)
    studies = list(dict.fromkeys(ref["study_id"]))

    def grid(src: str) -> np.ndarray:
        t = lab[(lab["source"] == src) & lab["finding"].isin(fs)]
        missing_f = [f for f in fs if f not in set(t["finding"])]
        if missing_f:
            raise SchemaError(f"Source {src!r} does not label {missing_f}.")
        w = t.pivot(index="study_id", columns="finding", values="state")
        absent = [s for s in studies if s not in w.index]
        if absent:
            raise SchemaError(
                f"Source {src!r} lacks {len(absent)} studies of {reference!r}, e.g. {absent[:3]}."
            )
        st = w.reindex(index=studies, columns=fs).to_numpy(dtype=float, na_value=np.nan)
        return (st == 2) | ((st == 1) if uncertain == "positive" else False)

    gold, pred = grid(reference), grid(predicted)
    tp, fp, fn = (
        (gold & pred).astype(np.int64),
        (~gold & pred).astype(np.int64),
        (gold & ~pred).astype(np.int64),
    )
    pid = ref.drop_duplicates("study_id").set_index("study_id").reindex(studies)["patient_id"]
    pid = pid.fillna(pd.Series(studies, index=studies))
    plan = draw_plan(pid.astype(str).to_numpy(), n_resamples=n_resamples, rng=rng)
    w = plan.study_weights().astype(np.float64)
    est = _scores(tp.sum(0).astype(float), fp.sum(0).astype(float), fn.sum(0).astype(float))
    dist = _scores(w @ tp, w @ fp, w @ fn)
    alpha = (1 - confidence_level) / 2 * 100
    rows = []
    for j, name in enumerate([*fs, MICRO, MACRO]):
        sl = slice(j, j + 1) if j < len(fs) else slice(None)
        row: dict[str, object] = {
            "finding": name,
            "n_pos": int(gold[:, sl].sum()),
            "TP": int(tp[:, sl].sum()),
            "FP": int(fp[:, sl].sum()),
            "FN": int(fn[:, sl].sum()),
        }
        for m in ("precision", "recall", "f1"):
            d = dist[m][:, j]
            d = d[np.isfinite(d)]
            lo, hi = np.percentile(d, [alpha, 100 - alpha]) if len(d) else (np.nan, np.nan)
            row.update({m: float(est[m][j]), f"{m}_low": float(lo), f"{m}_high": float(hi)})
        for m in ("precision", "recall", "f1"):
            row[f"nih_{m}"] = NIH_LABELLER_OPENI.get((name, m), np.nan)
        rows.append(row)
    return LabellerValidationResult(
        pd.DataFrame(rows, columns=list(PRF_COLUMNS)),
        reference,
        predicted,
        tuple(fs),
        uncertain,
        n_resamples,
        confidence_level,
    )


_PRF_MARKDOWN_COLUMNS = (
    "finding",
    "n_pos",
    "TP",
    "FP",
    "FN",
    "precision [95% CI]",
    "recall [95% CI]",
    "F1 [95% CI]",
    "NIH P / R / F1",
)


def prf_markdown(table: pd.DataFrame, *, decimals: int = 3) -> str:
    """A markdown table of :func:`compute_precision_recall`'s table: estimates with CIs beside the NIH figures."""
    missing = [c for c in PRF_COLUMNS if c not in getattr(table, "columns", ())]
    if not isinstance(table, pd.DataFrame) or missing:
        raise InvalidParameterError(
            f"The 'table' parameter of prf_markdown must be the table of compute_precision_recall; "
            f"missing columns {missing}."
        )

    def ci(r: pd.Series, m: str) -> str:
        return f"{r[m]:.{decimals}f} [{r[m + '_low']:.{decimals}f}, {r[m + '_high']:.{decimals}f}]"

    def nih(r: pd.Series) -> str:
        return " / ".join(
            "–" if np.isnan(r[f"nih_{m}"]) else f"{r[f'nih_{m}']:.2f}" for m in ("precision", "recall", "f1")
        )

    cells = [
        {
            "finding": f"{r['finding']}",
            "n_pos": f"{r['n_pos']}",
            "TP": f"{r['TP']}",
            "FP": f"{r['FP']}",
            "FN": f"{r['FN']}",
            "precision [95% CI]": ci(r, "precision"),
            "recall [95% CI]": ci(r, "recall"),
            "F1 [95% CI]": ci(r, "f1"),
            "NIH P / R / F1": nih(r),
        }
        for _, r in table.iterrows()
    ]
    return markdown_table(pd.DataFrame(cells, columns=list(_PRF_MARKDOWN_COLUMNS)))
