""":func:`evaluate_operating_points`: sensitivity, specificity, PPV and NPV at operating points with patient-bootstrap
intervals, and net benefit over a range of threshold probabilities (the decision curve).

Per model × finding × reference, on the studies the reference labels (the study design of
:func:`~cxreval.classification.evaluate_auc`), a study is called positive where ``score >= threshold``. The
threshold comes from a rule (:mod:`cxreval.stats._operating_points`): ``threshold=T`` fixed; ``specificity=S`` the
smallest threshold reaching specificity ``S``; ``sensitivity=S`` the largest reaching sensitivity ``S``;
``youden`` the one maximising ``sensitivity + specificity - 1``; ``from=FILE`` the thresholds of an
``operating_points.csv`` written on another set, applied fixed (a threshold chosen on one set, carried to
another).

The intervals are percentile intervals of the patient bootstrap :func:`~cxreval.classification.evaluate_auc`
uses (one plan for every model, finding and reference; with the same ``rng``, or ``plan=``, the same replicates as
the AUCs). A rule's threshold is chosen again inside each replicate, so the intervals include the uncertainty of
choosing it on the data (``threshold_ci_low``/``threshold_ci_high`` give its spread); a given threshold
(``threshold=``, ``from=``) is held fixed.

Net benefit at threshold probability ``pt`` (Vickers & Elkin 2006): ``NB = TP/n - FP/n · pt/(1 - pt)`` with
positives ``score >= pt``; the rows ``treat all`` (``prevalence - (1 - prevalence) · pt/(1 - pt)``) and ``treat
none`` (0) are the strategies a model must beat. The scores must be probabilities in [0, 1].
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any, ClassVar, cast

import numpy as np
import pandas as pd

from .._typing import RNGLike, Studies
from .._validation import check_confidence_level, check_positive_int
from ..bootstrap import ResamplingPlan, draw_plan, summarize_distribution
from ..exceptions import InvalidParameterError, SchemaError
from ..io import markdown_table, read_table
from ..results import TableResult, as_table
from ..stats import PreparedInputs, prepare_inputs
from ..stats._operating_points import (
    ConfusionCounts,
    OperatingPoint,
    ScoredSet,
    confusion_counts,
    confusion_counts_sets,
    parse_operating_point,
)

__all__ = [
    "OPERATING_POINT_COLUMNS",
    "DECISION_CURVE_COLUMNS",
    "OperatingPointResult",
    "evaluate_operating_points",
    "evaluate_operating_points_prepared",
    "decision_thresholds",
    "parse_operating_points",
    "check_operating_points",
    "operating_point_files",
]

_RATES = ("sensitivity", "specificity", "ppv", "npv")
OPERATING_POINT_COLUMNS: tuple[str, ...] = (
    "model",
    "group",
    "finding",
    "reference",
    "operating_point",
    "threshold",
    "threshold_ci_low",
    "threshold_ci_high",
    *(f"{r}{k}" for r in _RATES for k in ("", "_ci_low", "_ci_high")),
    "tp",
    "fp",
    "tn",
    "fn",
    "n_pos",
    "n_neg",
    "n_undefined",
)
"""The columns of ``operating_points.csv``: one row per model × finding × reference × operating point."""
DECISION_CURVE_COLUMNS: tuple[str, ...] = (
    "model",
    "group",
    "finding",
    "reference",
    "threshold",
    "net_benefit",
    "tp",
    "fp",
    "n",
    "prevalence",
)
"""The columns of ``decision_curve.csv``: one row per model (and ``treat all``, ``treat none``) × finding ×
reference × threshold probability."""
FROM_COLUMNS = ("model", "finding", "reference", "operating_point", "threshold")
"""The columns a ``from=FILE`` table needs (an ``operating_points.csv``)."""
TREAT_ALL, TREAT_NONE, STRATEGY = "treat all", "treat none", "strategy"
_FUNC = "evaluate_operating_points"
_KINDS = ("threshold", "specificity", "sensitivity", "youden", "from")


@dataclass(frozen=True)
class OperatingPointResult(TableResult):
    """Operating points with patient-bootstrap intervals, and the decision curve.

    Attributes
    ----------
    table : pandas.DataFrame
        :data:`OPERATING_POINT_COLUMNS`; ``ppv``/``npv`` NaN where nothing is called positive/negative,
        ``n_undefined`` the replicates where one of the four rates is undefined.
    decision_curve : pandas.DataFrame
        :data:`DECISION_CURVE_COLUMNS` (no rows without ``decision_curve=``).
    operating_points : tuple of str
        The operating points asked for, as written in the ``operating_point`` column (a ``from=`` file gives one
        per reference and operating point it holds).
    n_resamples : int
    confidence_level : float

    ``FILES``: ``operating_points`` (``table``) and ``decision_curve``.
    """

    FILES: ClassVar[Mapping[str, str]] = MappingProxyType(
        {"operating_points": "operating_points.csv", "decision_curve": "decision_curve.csv"}
    )
    COLUMNS: ClassVar[tuple[str, ...]] = OPERATING_POINT_COLUMNS

    table: pd.DataFrame
    decision_curve: pd.DataFrame
    operating_points: tuple[str, ...] = ()
    n_resamples: int = 0
    confidence_level: float = 0.95

    def tables(self) -> dict[str, pd.DataFrame]:
        return {"operating_points": self.table, "decision_curve": self.decision_curve}

    def summary(self) -> str:
        """The operating points (estimate and interval of each rate) and where each model's net benefit beats
        treating all and treating none (Markdown)."""
        lines = ["# Operating points and decision curves", ""]
        if len(self.table):
            lines += [
                f"A study is positive where score >= threshold. {self.n_resamples} patient-level bootstrap "
                f"replicates, {self.confidence_level:.0%} percentile intervals; the thresholds of specificity=, "
                "sensitivity= and youden are chosen again in every replicate, threshold= and from= are held fixed.",
                "",
                markdown_table(rate_cells(self.table), floatfmt="{:.3f}", nan=""),
                "",
            ]
        if len(self.decision_curve):
            lines += [
                "## Decision curve",
                "",
                "Net benefit = TP/n - FP/n · pt/(1 - pt); the lowest and highest threshold pt where a model "
                "beats both treating all and treating none (blank: nowhere):",
                "",
                markdown_table(_useful(self.decision_curve), nan=""),
            ]
        return "\n".join(lines)

    def to_dict(self) -> dict[str, object]:
        return {
            "operating_points": list(self.operating_points),
            "n_resamples": self.n_resamples,
            "confidence_level": self.confidence_level,
        }

    @classmethod
    def figure(cls, table: pd.DataFrame) -> Any:
        """The decision curve (``decision_curve.csv``: net benefit against the threshold probability, a line per
        model and strategy, of the first finding and reference), or the sensitivity at each operating point
        with its interval (``operating_points.csv``)."""
        from .._plots import dot_interval, first_panel, lines

        if "net_benefit" in table.columns:
            panel = first_panel(first_panel(table, "finding"), "reference")
            where = f"{panel['finding'].iloc[0]}, {panel['reference'].iloc[0]}" if len(panel) else ""
            return lines(
                panel,
                x="threshold",
                y="net_benefit",
                color="model",
                markers=False,
                title=f"Decision curve ({where})",
                y_title="net benefit",
            )
        return dot_interval(
            first_panel(table, "reference"),
            value="sensitivity",
            low="sensitivity_ci_low",
            high="sensitivity_ci_high",
            category=["model", "finding"],
            color="operating_point",
            title="Sensitivity at each operating point",
        )

    def _figure(self) -> Any:
        return type(self).figure(self.decision_curve if len(self.decision_curve) else self.table)


def rate_cells(table: pd.DataFrame) -> pd.DataFrame:
    """The operating points' keys and threshold, and each rate as 'estimate [low, high]' text."""
    out = table[["model", "finding", "reference", "operating_point", "threshold"]].copy()
    for r in _RATES:
        est, lo, hi = (table[f"{r}{k}"].to_numpy(float) for k in ("", "_ci_low", "_ci_high"))
        out[r] = [
            "" if not math.isfinite(e) else f"{e:.3f}" + (f" [{a:.3f}, {b:.3f}]" if math.isfinite(a) else "")
            for e, a, b in zip(est, lo, hi)
        ]
    return out


def _useful(curve: pd.DataFrame) -> pd.DataFrame:
    """Per model, finding and reference, the lowest and highest threshold where the model's net benefit exceeds
    both strategies' (blank: nowhere)."""
    keys = ["finding", "reference", "threshold"]
    best = curve[curve["model"].isin((TREAT_ALL, TREAT_NONE))].groupby(keys)["net_benefit"].max()
    models = curve[~curve["model"].isin((TREAT_ALL, TREAT_NONE))]
    beats = models["net_benefit"].to_numpy() > best.reindex(pd.MultiIndex.from_frame(models[keys])).to_numpy()
    rows = []
    for (m, f, r), g in models.assign(beats=beats).groupby(["model", "finding", "reference"], sort=False):
        t = g.loc[g["beats"], "threshold"]
        rows.append(
            {
                "model": m,
                "finding": f,
                "reference": r,
                "lowest": f"{t.min():g}" if len(t) else "",
                "highest": f"{t.max():g}" if len(t) else "",
            }
        )
    return pd.DataFrame(rows, columns=["model", "finding", "reference", "lowest", "highest"])


def decision_thresholds(value: str | Sequence[float] | None, *, func: str = _FUNC) -> np.ndarray:
    """The threshold probabilities of a decision curve: ``'START:STOP:STEP'`` (``STOP`` included, e.g.
    ``'0.01:0.99:0.01'``) or a sequence of numbers, each in [0, 1); None (or no numbers) gives none."""
    if value is None or (not isinstance(value, str) and len(value) == 0):
        return np.empty(0)
    wrong = (
        f"The 'decision_curve' parameter of {func} must be 'START:STOP:STEP' with 0 <= START <= STOP < 1 and "
        f"STEP > 0 (e.g. '0.01:0.99:0.01'), or a list of numbers in [0, 1). Got {value!r} instead."
    )
    if isinstance(value, str):
        try:
            start, stop, step = (float(v) for v in value.split(":"))
        except ValueError:
            raise InvalidParameterError(wrong) from None
        if not (math.isfinite(start + stop + step) and step > 0 and start <= stop):
            raise InvalidParameterError(wrong)
        out = np.round(start + step * np.arange(int(math.floor((stop - start) / step + 1e-9)) + 1), 12)
    else:
        try:
            out = np.asarray([float(v) for v in value], dtype=float)
        except (TypeError, ValueError):
            raise InvalidParameterError(wrong) from None
    if out.size == 0 or not np.all((out >= 0) & (out < 1)):
        raise InvalidParameterError(wrong)
    return out


@dataclass(frozen=True)
class _Point:
    """One operating point as asked: a rule, or per (model, finding) a threshold read from a file."""

    label: str
    rule: OperatingPoint | None
    fixed: Mapping[tuple[str, str], float] = field(default_factory=dict)
    source: str = ""


def _from_file(point: OperatingPoint, func: str) -> list[_Point]:
    path = Path(point.source)
    if not path.is_file():
        raise SchemaError(f"Operating-point file {str(path)!r} ({point.label()}) does not exist.")
    table = read_table(path)
    missing = [c for c in FROM_COLUMNS if c not in table.columns]
    if missing:
        raise SchemaError(
            f"Operating-point file {str(path)!r} ({point.label()}) lacks the columns {missing} (it needs "
            f"{', '.join(FROM_COLUMNS)}: the operating_points.csv of an earlier run with operating points)."
        )
    if table.empty:
        raise SchemaError(f"Operating-point file {str(path)!r} ({point.label()}) has no rows.")
    out = []
    for (ref, op), g in table.groupby(["reference", "operating_point"], sort=False):
        keys = list(zip(g["model"].astype(str), g["finding"].astype(str)))
        thr = pd.to_numeric(g["threshold"], errors="coerce").to_numpy(float)
        if len(set(keys)) < len(keys) or not np.isfinite(thr).all():
            bad = (
                "repeats a model and finding"
                if len(set(keys)) < len(keys)
                else "has a threshold not a number"
            )
            raise SchemaError(
                f"Operating-point file {str(path)!r}: reference {ref!r}, operating point {op!r} {bad}."
            )
        out.append(
            _Point(
                f"from={path.name}: {op} under {ref}", None, MappingProxyType(dict(zip(keys, thr))), str(path)
            )
        )
    return out


def operating_point_files(values: Sequence[str] | None) -> list[Path]:
    """The files of the ``from=FILE`` operating points among ``values`` (the inputs a run records)."""
    pairs = [str(v).partition("=") for v in values or []]
    return [Path(arg.strip()) for name, _, arg in pairs if name.strip() == "from" and arg.strip()]


def parse_operating_points(values: str | Sequence[str] | None, *, func: str = _FUNC) -> list[_Point]:
    """The operating points of ``values`` (each as :func:`~cxreval.stats._operating_points.parse_operating_point`
    reads it, or ``from=FILE``, whose file is read and checked here), before any computation."""
    items = [values] if isinstance(values, str) else list(values or [])
    out: list[_Point] = []
    for v in items:
        point = parse_operating_point(v, func=func, kinds=_KINDS)
        out += _from_file(point, func) if point.kind == "from" else [_Point(point.label(), point)]
    labels = [p.label for p in out]
    if len(set(labels)) < len(labels):
        raise InvalidParameterError(f"{func}: an operating point is given twice ({labels}).")
    return out


def check_operating_points(
    points: list[_Point], prep: PreparedInputs, thresholds: np.ndarray, *, func: str
) -> None:
    """Every ``from=`` table holds every evaluated model and finding; a decision curve needs probabilities."""
    for p in points:
        for m in prep.models:
            for f in prep.findings:
                if p.rule is None and (m, f) not in p.fixed:
                    raise SchemaError(
                        f"Operating-point file {p.source!r} ({p.label}) has no threshold for model {m!r}, "
                        f"finding {f!r} (it holds {sorted({k[0] for k in p.fixed})} x {sorted({k[1] for k in p.fixed})})."
                    )
    if prep.soft_references and (points or thresholds.size):
        raise SchemaError(
            f"{func}: references {', '.join(prep.soft_references)} carry p_positive (soft labels); operating points "
            "and decision curves need 0/1 labels."
        )
    if thresholds.size:
        s = prep.S
        bad = np.isfinite(s) & ((s < 0) | (s > 1))
        if bad.any():
            mi, fi, _ = (int(i[0]) for i in np.nonzero(bad))
            raise SchemaError(
                f"{func}: model {prep.models[mi]!r} scores {prep.findings[fi]!r} outside [0, 1] (e.g. "
                f"{s[bad][0]:g}); a decision curve's threshold is a probability: pass probabilities."
            )


def _rates(c: Any) -> dict[str, np.ndarray]:
    with np.errstate(invalid="ignore", divide="ignore"):
        return {
            "sensitivity": c.tp / (c.tp + c.fn),
            "specificity": c.tn / (c.tn + c.fp),
            "ppv": c.tp / (c.tp + c.fp),
            "npv": c.tn / (c.tn + c.fn),
        }


def _point_row(c: ConfusionCounts, y: np.ndarray, cl: float) -> dict[str, object]:
    rates = _rates(c)
    row: dict[str, object] = {}
    undefined = np.zeros(c.tp.size - 1, dtype=bool)
    for r, v in {"threshold": c.threshold, **rates}.items():
        d = summarize_distribution(v[1:], confidence_level=cl)
        row |= {r: float(v[0]), f"{r}_ci_low": float(d["ci_low"]), f"{r}_ci_high": float(d["ci_high"])}
        undefined |= ~np.isfinite(v[1:]) if r != "threshold" else undefined
    row |= {k: float(getattr(c, k)[0]) for k in ("tp", "fp", "tn", "fn")}
    row |= {"n_pos": int(y.sum()), "n_neg": int((~y).sum()), "n_undefined": int(undefined.sum())}
    return row


def _net_benefit(y: np.ndarray, s: np.ndarray, thresholds: np.ndarray) -> dict[str, np.ndarray]:
    """``TP/n - FP/n · pt/(1 - pt)`` at each ``pt`` of ``thresholds`` (positive: ``s >= pt``), with TP and FP."""
    order = np.sort(s[y]), np.sort(s[~y])
    tp, fp = (v.size - np.searchsorted(v, thresholds, side="left") for v in order)
    n = y.size
    with np.errstate(invalid="ignore", divide="ignore"):
        nb = tp / n - fp / n * (thresholds / (1 - thresholds))
    return {"net_benefit": nb, "tp": tp, "fp": fp}


def _curve_rows(
    y: np.ndarray, s_by_model: dict[str, np.ndarray], thresholds: np.ndarray, groups: Mapping[str, str]
) -> list[dict[str, object]]:
    n = y.size
    prev = float(y.mean()) if n else math.nan
    curves = {m: _net_benefit(y, s, thresholds) for m, s in s_by_model.items()}
    curves[TREAT_ALL] = _net_benefit(y, np.ones(n), thresholds)
    curves[TREAT_NONE] = {
        "net_benefit": np.zeros(thresholds.size),
        "tp": np.zeros(thresholds.size, int),
        "fp": np.zeros(thresholds.size, int),
    }
    return [
        {
            "model": m,
            "group": groups.get(m, STRATEGY),
            "threshold": thresholds,
            **c,
            "n": n,
            "prevalence": prev,
        }
        for m, c in curves.items()
    ]


def evaluate_operating_points_prepared(
    inputs: PreparedInputs,
    *,
    operating_points: str | Sequence[str] | Sequence[_Point] | None = None,
    decision_curve: str | Sequence[float] | None = None,
    n_resamples: int = 1000,
    confidence_level: float = 0.95,
    rng: RNGLike = None,
    plan: ResamplingPlan | None = None,
    func: str = _FUNC,
) -> OperatingPointResult:
    """:func:`evaluate_operating_points` on inputs laid out beforehand (:func:`~cxreval.stats.prepare_inputs`);
    ``plan``: a plan drawn over exactly ``inputs.studies`` (e.g. :attr:`AUCResult.plan`, to share the AUCs'
    replicates). ``operating_points`` may be what :func:`parse_operating_points` returned."""
    points: list[_Point]
    if isinstance(operating_points, list) and all(isinstance(p, _Point) for p in operating_points):
        points = cast("list[_Point]", operating_points)
    else:
        points = parse_operating_points(cast("str | Sequence[str] | None", operating_points), func=func)
    thresholds = decision_thresholds(decision_curve, func=func)
    if not points and not thresholds.size:
        raise InvalidParameterError(
            f"{func} needs operating_points= or decision_curve= (e.g. 'specificity=0.9')."
        )
    cl = check_confidence_level(confidence_level, func=func)
    check_operating_points(points, inputs, thresholds, func=func)
    if plan is None:
        n_resamples = check_positive_int(n_resamples, name="n_resamples", func=func, minimum=0)
        if n_resamples:
            plan = draw_plan(
                inputs.patient_of.to_numpy(), n_resamples=n_resamples, rng=rng, study_ids=list(inputs.studies)
            )
    elif plan.n_studies != len(inputs.studies):
        raise InvalidParameterError(
            f"{func}: the plan covers {plan.n_studies} studies, the inputs {len(inputs.studies)}."
        )
    n_boot = 0 if plan is None else plan.n_resamples
    pat_all = np.arange(len(inputs.studies)) if plan is None else plan.study_patient
    n_pat = len(inputs.studies) if plan is None else plan.n_patients
    ct = np.vstack(
        [np.ones((1, n_pat), np.int32), np.zeros((0, n_pat), np.int32) if plan is None else plan.counts]
    ).astype(np.float64)  # whole counts; float64 once for the kernel's products
    rows: list[tuple[tuple[int, int, int, int], dict[str, object]]] = []  # (model, finding, reference, point)
    curve: list[dict[str, object]] = []
    keys: list[tuple[int, int, int]] = []
    sets: list[ScoredSet] = []
    for f, finding in enumerate(inputs.findings):
        for r, reference in enumerate(inputs.references):
            labelled = np.isfinite(inputs.Y[f, r])
            if not labelled.any():
                continue
            for i in range(len(inputs.models)):
                ok = labelled & np.isfinite(inputs.S[i, f])
                keys.append((i, f, r))
                sets.append(ScoredSet(inputs.Y[f, r, ok] == 1.0, inputs.S[i, f, ok], pat_all[ok]))
            if thresholds.size:
                y = inputs.Y[f, r, labelled] == 1.0
                scores = {m: inputs.S[i, f, labelled] for i, m in enumerate(inputs.models)}
                for c in _curve_rows(y, scores, thresholds, inputs.groups):
                    curve.append({**c, "finding": finding, "reference": reference})
    rules = list(dict.fromkeys(p.rule for p in points if p.rule is not None))
    by_rule = confusion_counts_sets(rules, sets, ct)  # every rule on every set at once
    for (i, f, r), x, counts in zip(keys, sets, by_rule):
        model, finding = inputs.models[i], inputs.findings[f]
        head = {"model": model, "group": inputs.groups.get(model, ""), "finding": finding}
        for k, p in enumerate(points):
            if p.rule is None:  # a threshold read from a file, per model and finding
                cc = confusion_counts(
                    OperatingPoint("threshold", float(p.fixed[(model, finding)])), x.y, x.s, x.pat, ct
                )
            else:
                cc = counts[rules.index(p.rule)]
            row = {
                **head,
                "reference": inputs.references[r],
                "operating_point": p.label,
                **_point_row(cc, x.y, cl),
            }
            rows.append(((i, f, r, k), row))
    table = pd.DataFrame(
        [row for _, row in sorted(rows, key=lambda kv: kv[0])], columns=list(OPERATING_POINT_COLUMNS)
    )
    dc = pd.DataFrame(columns=list(DECISION_CURVE_COLUMNS))
    if curve:
        dc = pd.concat([pd.DataFrame(c) for c in curve], ignore_index=True)[list(DECISION_CURVE_COLUMNS)]
    return OperatingPointResult(table, dc, tuple(p.label for p in points), n_boot, cl)


def evaluate_operating_points(
    predictions: pd.DataFrame,
    labels: pd.DataFrame,
    *,
    operating_points: str | Sequence[str] | None = None,
    decision_curve: str | Sequence[float] | None = None,
    references: Sequence[str] | None = None,
    findings: Sequence[str] | None = None,
    policy: str = "exclude",
    not_mentioned: str = "negative",
    unlabeled: str = "error",
    studies: Studies = "common",
    n_resamples: int = 1000,
    confidence_level: float = 0.95,
    rng: RNGLike = None,
) -> OperatingPointResult:
    """Sensitivity, specificity, PPV and NPV at operating points, with patient-bootstrap intervals, and the decision
    curve, per model × finding × reference: what ``cxreval classify --operating-point/--decision-curve`` adds.

    Parameters
    ----------
    predictions, labels : DataFrame
        Long prediction and label tables, as for :func:`~cxreval.classification.evaluate_auc`.
    operating_points : str or sequence of str, optional
        Each ``'threshold=T'`` (positive where ``score >= T``), ``'specificity=S'``/``'spec=S'`` (the smallest
        threshold with specificity at least ``S``), ``'sensitivity=S'``/``'sens=S'`` (the largest threshold with
        sensitivity at least ``S``), ``'youden'`` (the threshold maximising sensitivity + specificity - 1, the
        highest among ties) or ``'from=FILE'`` (the thresholds of an ``operating_points.csv`` written on another
        set, per model and finding, one operating point per reference and operating point the file holds).
    decision_curve : str or sequence of float, optional
        Threshold probabilities of the decision curve: ``'START:STOP:STEP'`` (``STOP`` included) or numbers in
        [0, 1). The scores must then be probabilities.
    references, findings, policy, not_mentioned, unlabeled, studies
        As for :func:`~cxreval.classification.evaluate_auc`.
    n_resamples, confidence_level, rng
        The patient bootstrap, as for :func:`~cxreval.classification.evaluate_auc` (the same ``rng`` draws the
        same plan, so the replicates are the AUCs'); ``n_resamples=0``: estimates only.

    Returns
    -------
    res : OperatingPointResult

    Raises
    ------
    InvalidParameterError
        A rate outside (0, 1), an unknown form, neither ``operating_points`` nor ``decision_curve``.
    SchemaError
        A ``from=`` file that is missing, lacks a column or an evaluated model or finding; scores outside [0, 1]
        with a decision curve; soft labels. All before computing.

    Notes
    -----
    A rule's threshold (``specificity=``, ``sensitivity=``, ``youden``) is chosen again inside each bootstrap
    replicate: the interval of a rate is that of the rule, including the uncertainty of choosing the threshold on
    the data (the specificity at ``specificity=0.9`` then varies little by construction). A given threshold
    (``threshold=``, ``from=``) is held fixed. Patients are the independent units. Net benefit is a point
    estimate: ``TP/n - FP/n · pt/(1 - pt)``, weighing a false positive ``pt/(1 - pt)`` true positives.
    """
    points = parse_operating_points(operating_points, func=_FUNC)  # before any table is read
    if not points and not decision_thresholds(decision_curve, func=_FUNC).size:
        raise InvalidParameterError(
            f"{_FUNC} needs operating_points= or decision_curve= (e.g. 'specificity=0.9')."
        )
    prep = prepare_inputs(
        as_table(predictions, name="predictions", func=_FUNC),
        as_table(labels, name="labels", func=_FUNC),
        references=references,
        findings=findings,
        policy=policy,
        not_mentioned=not_mentioned,
        unlabeled=unlabeled,
        studies=studies,
    )
    return evaluate_operating_points_prepared(
        prep,
        operating_points=points,
        decision_curve=decision_curve,
        n_resamples=n_resamples,
        confidence_level=confidence_level,
        rng=rng,
    )
