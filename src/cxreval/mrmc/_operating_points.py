"""Binary readers against a model's ROC curve: does the model perform as well as the radiologists?

The analysis of the CheXNet, CheXpert and CheXzero papers: each reader's operating point (sensitivity,
specificity), whether it lies below the model's ROC curve, how many readers do, and the paired differences of
sensitivity at the reader's specificity (and of specificity at the reader's sensitivity) with a non-inferiority test,
every interval from one patient-level bootstrap (:func:`cxreval.bootstrap.draw_plan`) vectorised over its replicates.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike

from .._typing import RNGLike
from .._validation import check_confidence_level, check_positive_int
from ..bootstrap import ResamplingPlan, draw_plan, iter_shards, summarize_distribution
from ..exceptions import InvalidParameterError, UndefinedMetricWarning
from ..results import readonly
from ._operating_points_inputs import PANEL, _Inputs, _validate
from ._roc_matching import MATCHINGS, curve_counts, match_points

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["OperatingPointsResult", "reader_operating_points", "PANEL", "MATCHINGS"]

_METRICS = ("sensitivity_at_reader_specificity", "specificity_at_reader_sensitivity")
_CELLS = 1 << 22  # cases x replicates per shard of the bootstrap (32 MiB of float64 per array)


@dataclass(frozen=True)
class OperatingPointsResult:
    """Binary readers' operating points against a model's ROC curve, with patient-bootstrap inference.

    Attributes
    ----------
    readers : tuple of str
        The readers, in the order of the rows of ``decisions``.
    roc_curve : pandas.DataFrame
        The model's empirical ROC curve on every case: ``threshold, fpr, tpr``, one row per distinct score
        (descending thresholds; the first row is ``(inf, 0, 0)``), as ``sklearn.metrics.roc_curve`` with
        ``drop_intermediate=False`` gives it.
    operating_points : pandas.DataFrame
        Long: ``reader, kind, metric, estimate, ci_low, ci_high, n_cases, n_undefined`` with ``kind`` in
        ``{'reader', 'panel'}``, ``metric`` in ``{'sensitivity', 'specificity'}`` and ``n_cases`` the positives
        (sensitivity) or negatives (specificity) read.
    readers_vs_curve : pandas.DataFrame
        ``reader, kind, fpr, tpr, below_curve, curve_gap, share_below``: each reader's point (and the panel's) for
        the plot; ``curve_gap`` is the model's sensitivity at the reader's specificity minus the reader's
        sensitivity (positive: below the curve) and ``share_below`` the share of bootstrap replicates where the
        point lies below the curve.
    comparisons : pandas.DataFrame
        Long: ``reader, kind, metric, model_estimate, reader_estimate, difference, ci_low, ci_high,
        standard_error, margin, pvalue, pvalue_holm, non_inferior, n_undefined``; ``metric`` is
        ``'sensitivity_at_reader_specificity'`` (ΔSe) or ``'specificity_at_reader_sensitivity'`` (ΔSp),
        ``difference`` is model minus reader, ``pvalue`` the one-sided bootstrap p-value of non-inferiority and
        ``pvalue_holm`` its Holm adjustment over the readers (NaN for the panel).
    below_count : pandas.DataFrame
        ``n_readers_below, share, observed``: for ``k = 0 .. R``, the share of the (defined) bootstrap replicates in
        which exactly ``k`` readers lie below the curve; ``observed`` marks the count on the data.
    n_below : int
        How many readers lie below the model's curve on the data.
    delta_sensitivity : ndarray of shape (n_resamples, n_readers + 1)
        Bootstrap distribution of ΔSe per reader, the panel last (NaN where undefined).
    delta_specificity : ndarray of shape (n_resamples, n_readers + 1)
        Bootstrap distribution of ΔSp, likewise.
    n_below_distribution : ndarray of shape (n_resamples,)
        Readers below the curve in each replicate (NaN where some reader's point is undefined).
    margin, confidence_level : float
    matching : str
    n_resamples, n_cases, n_patients : int
    seed : int or None
        The ``rng`` argument when an int (for the record).
    """

    readers: tuple[str, ...]
    roc_curve: pd.DataFrame = field(repr=False)
    operating_points: pd.DataFrame = field(repr=False)
    readers_vs_curve: pd.DataFrame = field(repr=False)
    comparisons: pd.DataFrame = field(repr=False)
    below_count: pd.DataFrame = field(repr=False)
    n_below: int
    delta_sensitivity: np.ndarray = field(repr=False)
    delta_specificity: np.ndarray = field(repr=False)
    n_below_distribution: np.ndarray = field(repr=False)
    margin: float
    confidence_level: float
    matching: str
    n_resamples: int
    n_cases: int
    n_patients: int
    seed: int | None = None

    def __post_init__(self) -> None:
        readonly(self.delta_sensitivity)
        readonly(self.delta_specificity)
        readonly(self.n_below_distribution)

    def tables(self) -> dict[str, pd.DataFrame]:
        """The tidy tables by name: ``roc_curve``, ``operating_points``, ``readers_vs_curve``, ``comparisons``,
        ``below_count``."""
        return {
            "roc_curve": self.roc_curve,
            "operating_points": self.operating_points,
            "readers_vs_curve": self.readers_vs_curve,
            "comparisons": self.comparisons,
            "below_count": self.below_count,
        }

    def to_dict(self) -> dict[str, object]:
        """The scalar fields."""
        return {
            "readers": list(self.readers),
            "n_below": self.n_below,
            "margin": self.margin,
            "confidence_level": self.confidence_level,
            "matching": self.matching,
            "n_resamples": self.n_resamples,
            "n_cases": self.n_cases,
            "n_patients": self.n_patients,
            "seed": self.seed,
        }


def reader_operating_points(
    decisions: ArrayLike,
    scores: ArrayLike,
    truth: ArrayLike,
    *,
    patients: ArrayLike | None = None,
    reader_names: Sequence[str] | None = None,
    margin: float = 0.05,
    matching: str = "step",
    n_resamples: int = 1000,
    confidence_level: float = 0.95,
    plan: ResamplingPlan | None = None,
    rng: RNGLike = None,
) -> OperatingPointsResult:
    """Binary readers' operating points against a model's ROC curve, with paired patient-bootstrap inference.

    For each reader ``r`` (on the cases it read) and the model (on the same cases):

    - the reader's sensitivity ``Se_r = TP_r / P_r`` and specificity ``Sp_r = TN_r / N_r``;
    - the model's sensitivity at the reader's specificity, ``Se_m(Sp_r)``, and its specificity at the reader's
      sensitivity, ``Sp_m(Se_r)``, read off its empirical ROC curve by ``matching``; the differences
      ``ΔSe_r = Se_m(Sp_r) - Se_r`` and ``ΔSp_r = Sp_m(Se_r) - Sp_r``;
    - whether the reader lies *below the curve*: ``ΔSe_r > 0`` strictly (Notes);
    - the *panel*: the readers' mean operating point ``(mean Se_r, mean Sp_r)`` against the model on every case.

    Every interval is a percentile interval of one patient-level bootstrap: in each replicate the patients are drawn
    with replacement, the readers' points and the model's curve are recomputed on the same drawn cases (paired) and
    the model's threshold is re-chosen at the replicate's reader point.

    Parameters
    ----------
    decisions : array-like of shape (n_readers, n_cases) or (n_cases,)
        The readers' binary calls: 1 positive, 0 negative, NaN not read (bool accepted). One row per reader; a 1-D
        array is one reader.
    scores : array-like of shape (n_cases,)
        The model's continuous scores (higher: more likely positive), finite.
    truth : array-like of shape (n_cases,)
        The reference standard, 0/1.
    patients : array-like of shape (n_cases,), optional
        The patient of each case: the bootstrap resamples patients, keeping their cases together. Default: every case
        its own patient.
    reader_names : sequence of str, optional
        One distinct name per reader (not ``'panel'``); default ``reader_1 .. reader_R``.
    margin : float in (0, 1), default=0.05
        The non-inferiority margin on the difference of sensitivity (and of specificity).
    matching : {'step', 'interpolated'}, default='step'
        How the model's curve is read at the reader's specificity. ``'step'``: the model's threshold is the lowest
        one whose specificity is at least the reader's (an operating point the model reaches with a fixed
        threshold; the conservative choice). ``'interpolated'``: the linear interpolation between that threshold
        and the next (the curve as drawn, the polyline through its points, as ``numpy.interp`` on ``roc_curve``'s
        output is often used). They differ only where tied scores make a diagonal segment. Likewise at the reader's
        sensitivity.
    n_resamples : int, default=1000
        Bootstrap replicates (ignored with ``plan``).
    confidence_level : float in (0, 1), default=0.95
        Of the two-sided percentile intervals.
    plan : ResamplingPlan, optional
        A resampling plan drawn beforehand over these cases (``plan.n_studies == n_cases``), to pair this analysis
        with others on the same replicates; then ``patients``, ``n_resamples`` and ``rng`` are not used and
        ``patients`` must not be given.
    rng : None, int or numpy.random.Generator
        Draws the plan (``np.random.default_rng(rng)``).

    Returns
    -------
    res : OperatingPointsResult

    Raises
    ------
    InvalidParameterError
        Shapes that disagree; a reader that read no positive or no negative case; ``margin`` outside (0, 1);
        duplicate reader names or ``'panel'``; bad ``n_resamples``, ``confidence_level``, ``matching`` or ``plan``.
    SchemaError
        ``decisions`` not 0/1/NaN, ``truth`` not 0/1, a score not finite (each names the first bad value).

    Warns
    -----
    UndefinedMetricWarning
        Replicates in which a reader drew no positive or no negative case (left out of its interval, counted in
        ``n_undefined``).

    Notes
    -----
    **The curve.** The model's empirical ROC curve has one vertex per distinct score ``t`` (call positive when
    ``score >= t``) plus ``(0, 0)``; tied scores give one vertex (a diagonal segment when the tie mixes positives and
    negatives), as ``sklearn.metrics.roc_curve``.

    **Below the curve.** A reader's point ``(1 - Sp_r, Se_r)`` lies below the model's curve when
    ``Se_m(Sp_r) > Se_r`` strictly: with ``'step'``, when some threshold of the model reaches a specificity at least
    the reader's *and* a sensitivity strictly greater. So a point on a vertical riser of the step curve (the model
    reaches a higher sensitivity at the same specificity) is below; a point on a vertex or on a horizontal tread
    (equal sensitivity, the model at a higher specificity) is not; a point above the curve is not. It is decided on
    exact case counts, so rounding never puts a point on the wrong side. "Below the curve" is thus ``ΔSe_r > 0``
    (the CheXpert paper's count of radiologists below the curve [1]_); ``below_count`` gives the bootstrap
    distribution of how many readers are.

    **Non-inferiority.** The model is non-inferior to reader ``r`` in sensitivity at matched specificity when the
    lower bound of ``ΔSe_r``'s two-sided interval exceeds ``-margin`` (so at a 95% level, a one-sided test at 2.5%);
    ``pvalue`` is the share of (defined) replicates with ``ΔSe*_r <= -margin``, the percentile bootstrap's one-sided
    p-value of ``H0: ΔSe_r <= -margin`` (0 means below ``1 / n_resamples``), and the verdict agrees with
    ``pvalue < (1 - confidence_level) / 2`` up to the interpolation of the percentile. Likewise ΔSp at matched
    sensitivity, and for the panel.

    **Multiplicity.** Each reader's test is at the one-sided level ``(1 - confidence_level) / 2`` with no
    adjustment. The claim "non-inferior to *every* reader" is an intersection-union test: requiring every reader's
    test to pass keeps the level without adjustment. Claims about *some* readers chosen from the results need an
    adjustment: ``pvalue_holm`` is Holm's step-down adjustment over the readers (per metric; the panel is a separate,
    single, pre-specified test). The two metrics are two more families.

    **Cases.** A reader is scored on the cases it read, and so is the model it is compared with (its curve is
    recomputed on those cases), so every comparison is paired case by case; the panel and ``roc_curve`` use every
    case.

    References
    ----------
    .. [1] Irvin J, Rajpurkar P, et al. CheXpert: a large chest radiograph dataset with uncertainty labels and expert
       comparison. AAAI 2019. doi:10.1609/aaai.v33i01.3301590
    .. [2] Rajpurkar P, Irvin J, et al. CheXNet: radiologist-level pneumonia detection on chest X-rays with deep
       learning. arXiv:1711.05225 (2017).
    .. [3] Tiu E, Talius E, et al. Expert-level detection of pathologies from unannotated chest X-ray images via
       self-supervised learning. Nat Biomed Eng 6, 1399-1406 (2022). doi:10.1038/s41551-022-00936-9
    .. [4] Holm S. A simple sequentially rejective multiple test procedure. Scand J Stat 6, 65-70 (1979).

    Examples
    --------
    >>> import numpy as np
    >>> truth = np.array([1, 1, 1, 0, 0, 0])
    >>> scores = np.array([0.9, 0.8, 0.3, 0.7, 0.2, 0.1])
    >>> decisions = np.array([[1, 0, 0, 0, 0, 0], [1, 1, 1, 1, 1, 0]])
    >>> res = reader_operating_points(decisions, scores, truth, reader_names=["A", "B"], n_resamples=200, rng=0)
    >>> print(res.readers_vs_curve[["reader", "fpr", "tpr", "below_curve"]].round(3).to_string(index=False))
    reader   fpr   tpr  below_curve
         A 0.000 0.333         True
         B 0.667 1.000        False
     panel 0.333 0.667         True
    >>> res.n_below
    1
    """
    func = "reader_operating_points"
    names, inputs, n_cases = _validate(decisions, scores, truth, reader_names, margin, matching, func)
    confidence_level = check_confidence_level(confidence_level, func=func)
    if plan is not None:
        if not isinstance(plan, ResamplingPlan):
            raise InvalidParameterError(
                f"The 'plan' parameter of {func} must be a ResamplingPlan or None. "
                f"Got {type(plan).__name__} instead."
            )
        if patients is not None:
            raise InvalidParameterError(
                f"{func}: give 'patients' or 'plan', not both (the plan fixes the patients)."
            )
        if plan.n_studies != n_cases:
            raise InvalidParameterError(
                f"{func}: the plan covers {plan.n_studies} cases but 'scores' has {n_cases}."
            )
    else:
        n_resamples = check_positive_int(n_resamples, name="n_resamples", func=func)
        pts = np.arange(n_cases) if patients is None else np.asarray(patients, dtype=object)
        if pts.ndim != 1 or len(pts) != n_cases:
            raise InvalidParameterError(
                f"{func}: 'patients' has shape {pts.shape} but 'scores' has {n_cases} cases."
            )
        plan = draw_plan(pts, n_resamples=n_resamples, rng=rng)
    observed = _statistics(np.ones((1, n_cases)), inputs)
    shard = max(1, _CELLS // max(n_cases, 1))
    parts = [
        _statistics(plan.study_weights(replicates=sl).astype(float), inputs)
        for sl in iter_shards(plan.n_resamples, shard)
    ]
    boot = {k: np.concatenate([p[k] for p in parts]) for k in parts[0]}
    return _result(names, inputs, observed, boot, plan, float(margin), confidence_level)


def _statistics(weights: np.ndarray, inp: _Inputs) -> dict[str, np.ndarray]:
    """Every statistic for each row of ``weights`` (b, n_cases): the readers' points, the matched model points and
    the differences, readers first and the panel last along axis 1."""
    pos, neg = weights * inp.truth, weights * (1.0 - inp.truth)
    n_pos, n_neg = pos @ inp.read.T, neg @ inp.read.T  # (b, R)
    tp, fp = pos @ inp.decisions.T, neg @ inp.decisions.T
    ok = (n_pos > 0) & (n_neg > 0)
    safe_p, safe_n = np.where(ok, n_pos, 1.0), np.where(ok, n_neg, 1.0)
    se, sp = tp / safe_p, 1.0 - fp / safe_n
    tp_at, fp_at, below = np.empty_like(tp), np.empty_like(fp), np.zeros(tp.shape, dtype=bool)
    order, ends = inp.sorted_scores.order, inp.sorted_scores.group_end
    sorted_w, sorted_y = weights[:, order], inp.truth[order]
    every_case = None
    for mask, idx in inp.groups:
        if mask.all():
            c_fp, c_tp = every_case = curve_counts(sorted_w, sorted_y, ends)
        else:
            c_fp, c_tp = curve_counts(sorted_w * mask[order], sorted_y, ends)
        tp_at[:, idx], fp_at[:, idx], below[:, idx] = match_points(
            c_fp,
            c_tp,
            np.where(ok[:, idx], fp[:, idx], 0.0),
            np.where(ok[:, idx], tp[:, idx], 0.0),
            matching=inp.matching,
        )
    model_se, model_sp = tp_at / safe_p, 1.0 - fp_at / safe_n
    # the panel: the readers' mean point against the model on every case
    c_fp, c_tp = every_case if every_case is not None else curve_counts(sorted_w, sorted_y, ends)
    all_p, all_n = c_tp[:, -1:], c_fp[:, -1:]
    ok_panel = ok.all(axis=1, keepdims=True) & (all_p > 0) & (all_n > 0)
    mean_se, mean_sp = se.mean(axis=1, keepdims=True), sp.mean(axis=1, keepdims=True)
    safe_ap, safe_an = np.where(ok_panel, all_p, 1.0), np.where(ok_panel, all_n, 1.0)
    px = np.where(ok_panel, (1.0 - mean_sp) * all_n, 0.0)
    py = np.where(ok_panel, mean_se * all_p, 0.0)
    p_tp, p_fp, p_below = match_points(c_fp, c_tp, px, py, matching=inp.matching)
    okk = np.hstack([ok, ok_panel])

    def undefined_nan(a: np.ndarray) -> np.ndarray:
        return np.where(okk, a, np.nan)

    return {
        "se": undefined_nan(np.hstack([se, mean_se])),
        "sp": undefined_nan(np.hstack([sp, mean_sp])),
        "model_se": undefined_nan(np.hstack([model_se, p_tp / safe_ap])),
        "model_sp": undefined_nan(np.hstack([model_sp, 1.0 - p_fp / safe_an])),
        "delta_se": undefined_nan(np.hstack([(tp_at - tp) / safe_p, (p_tp - py) / safe_ap])),
        "delta_sp": undefined_nan(np.hstack([(fp - fp_at) / safe_n, (px - p_fp) / safe_an])),
        "below": undefined_nan(np.hstack([below, p_below]).astype(float)),
        "n_pos": np.hstack([n_pos, all_p]),
        "n_neg": np.hstack([n_neg, all_n]),
    }


def _holm(p: np.ndarray) -> np.ndarray:
    """Holm's step-down adjusted p-values (NaN kept and not counted)."""
    out = np.full(p.shape, np.nan)
    ok = np.flatnonzero(np.isfinite(p))
    m = len(ok)
    if m:
        order = ok[np.argsort(p[ok], kind="stable")]
        adj = np.maximum.accumulate(np.minimum(1.0, (m - np.arange(m)) * p[order]))
        out[order] = adj
    return out


def _result(
    names: tuple[str, ...],
    inp: _Inputs,
    obs: dict[str, np.ndarray],
    boot: dict[str, np.ndarray],
    plan: ResamplingPlan,
    margin: float,
    level: float,
) -> OperatingPointsResult:
    import pandas as pd

    n_readers = len(names)
    who = [*names, PANEL]
    kind = ["reader"] * n_readers + [PANEL]
    o = {k: v[0] for k, v in obs.items()}

    def whose(i: int, metric: str) -> dict[str, object]:
        return {"reader": who[i], "kind": kind[i], "metric": metric}

    n_undef = (np.isnan(boot["se"]) | np.isnan(boot["sp"])).sum(axis=0)
    if n_undef[:n_readers].any():
        warnings.warn(
            f"reader_operating_points: in {int(n_undef.max())} of {plan.n_resamples} bootstrap replicates "
            "a reader drew no positive or no negative case; they are left out of its intervals.",
            UndefinedMetricWarning,
            stacklevel=3,
        )
    rows = []
    for metric, key, n_key in (("sensitivity", "se", "n_pos"), ("specificity", "sp", "n_neg")):
        s = summarize_distribution(boot[key], confidence_level=level, axis=0)
        for i in range(n_readers + 1):
            rows.append(
                {
                    **whose(i, metric),
                    "estimate": o[key][i],
                    "ci_low": s["ci_low"][i],
                    "ci_high": s["ci_high"][i],
                    "n_cases": int(round(o[n_key][i])),
                    "n_undefined": int(s["n_undefined"][i]),
                }
            )
    operating = pd.DataFrame(rows)
    below = boot["below"]
    share_below = np.nanmean(below, axis=0) if len(below) else np.full(n_readers + 1, np.nan)
    vs_curve = pd.DataFrame(
        {
            "reader": who,
            "kind": kind,
            "fpr": 1.0 - o["sp"],
            "tpr": o["se"],
            "below_curve": o["below"].astype(bool),
            "curve_gap": o["delta_se"],
            "share_below": share_below,
        }
    )
    comp = []
    for metric, key, model_key, reader_key in (
        (_METRICS[0], "delta_se", "model_se", "se"),
        (_METRICS[1], "delta_sp", "model_sp", "sp"),
    ):
        dist = boot[key]
        s = summarize_distribution(dist, confidence_level=level, axis=0)
        defined = np.isfinite(dist).sum(axis=0)
        with np.errstate(invalid="ignore", divide="ignore"):
            p = np.where(defined > 0, (dist <= -margin).sum(axis=0) / np.maximum(defined, 1), np.nan)
        holm = np.r_[_holm(p[:n_readers]), np.nan]
        for i in range(n_readers + 1):
            comp.append(
                {
                    **whose(i, metric),
                    "model_estimate": o[model_key][i],
                    "reader_estimate": o[reader_key][i],
                    "difference": o[key][i],
                    "ci_low": s["ci_low"][i],
                    "ci_high": s["ci_high"][i],
                    "standard_error": s["sd"][i],
                    "margin": margin,
                    "pvalue": p[i],
                    "pvalue_holm": holm[i],
                    "non_inferior": bool(s["ci_low"][i] > -margin),
                    "n_undefined": int(s["n_undefined"][i]),
                }
            )
    comparisons = pd.DataFrame(comp)
    reader_below = below[:, :n_readers]
    n_below_dist = np.where(np.isnan(reader_below).any(axis=1), np.nan, np.nansum(reader_below, axis=1))
    n_defined = int(np.isfinite(n_below_dist).sum())
    n_below = int(o["below"][:n_readers].sum())
    ks = np.arange(n_readers + 1)
    share = [(n_below_dist == k).sum() / n_defined if n_defined else np.nan for k in ks]
    below_count = pd.DataFrame({"n_readers_below": ks, "share": share, "observed": ks == n_below})
    th = inp.sorted_scores.thresholds
    c_fp, c_tp = curve_counts(
        np.ones((1, len(inp.truth))), inp.truth[inp.sorted_scores.order], inp.sorted_scores.group_end
    )
    roc = pd.DataFrame(
        {"threshold": np.r_[np.inf, th], "fpr": c_fp[0] / c_fp[0, -1], "tpr": c_tp[0] / c_tp[0, -1]}
    )
    seed = plan.seed if isinstance(plan.seed, int) else None
    return OperatingPointsResult(
        readers=names,
        roc_curve=roc,
        operating_points=operating,
        readers_vs_curve=vs_curve,
        comparisons=comparisons,
        below_count=below_count,
        n_below=n_below,
        delta_sensitivity=boot["delta_se"],
        delta_specificity=boot["delta_sp"],
        n_below_distribution=n_below_dist,
        margin=margin,
        confidence_level=level,
        matching=inp.matching,
        n_resamples=plan.n_resamples,
        n_cases=len(inp.truth),
        n_patients=plan.n_patients,
        seed=seed,
    )
