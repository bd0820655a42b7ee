"""Metric-vs-expert analysis: per-rater z-scores, z-MOS, inter-rater agreement (the XQA-Chest paper's Table 3)
and metric-vs-z-MOS rank correlation with bootstrap CIs over reference images (its Table 4).

For rater ``a`` and image ``i``, ``z_ia = (r_ia - mu_a) / sigma_a`` with ``mu_a`` and ``sigma_a`` the mean
and standard deviation (``ddof``, default 0 as ``scipy.stats.zscore``; the paper says "the mean and standard
deviation of annotator a's ratings across all images" without naming the divisor, ``ddof=1`` gives the sample
standard deviation) of rater ``a``'s ratings over all images they rated; ``z-MOS_i`` is the mean of ``z_ia``
over the raters of image ``i``. By default SRCC is Spearman's rho as the Pearson correlation of average ranks
and KRCC Kendall's tau-b, as ``scipy.stats.spearmanr``/``kendalltau`` (``spearman='pearson'``,
``kendall='tau-b'``); the paper's section 2.3 formulas, ``1 - 6 sum d² / (n (n² - 1))`` and
``(C - D) / (n (n - 1) / 2)``, are ``spearman='formula'`` and ``kendall='tau-a'``. The four functions and their
names are :mod:`cxreval.stats`' (:func:`~cxreval.stats.correlation_function`), as for
``cxreval rank``; they differ only with ties, which a 4-point Likert scale has many of.

Rated images that no metric scores (e.g. the undegraded reference images, rated by the experts but not
comparable with a full-reference metric) are handled by ``unscored``: ``'keep'`` (default) keeps their
ratings in each rater's ``mu_a``/``sigma_a`` -- the paper defines them over "all images" a rater rated --
and correlates only the scored images, listing the others in the ``dropped`` table; ``'exclude'``
(:func:`zscores_for_scores`) removes their ratings before z-scoring; ``'error'`` refuses them (every rated
image must be scored).

Names: the unit is an image file (``image``; there is no study), and ``rater`` is the person who gave a
quality rating on a Likert scale (a rating table's own column, as in the paper's Table 3), not a label
``source`` of the label vocabulary (:mod:`cxreval.schema`).

Metric correlations are *oriented*: a metric registered as lower-is-better (RMSE, GMSD, ...) has its sign
flipped so that agreement with the experts is positive, as the paper's Table 4 reports. Bootstrap CIs
resample reference images (with all their degraded versions) with replacement: the cluster bootstrap of
:func:`cxreval.bootstrap.draw_plan` with the reference images as clusters, percentile intervals of
:func:`cxreval.bootstrap.summarize_distribution`; SRCC/KRCC are :mod:`cxreval.ranking`'s.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any, ClassVar, NamedTuple

import numpy as np
import pandas as pd

from .._typing import PathLike, RNGLike
from .._validation import (
    check_choice,
    check_confidence_level,
    check_positive_int,
    normalize_rng,
)
from ..bootstrap import draw_plan, summarize_distribution
from ..exceptions import SchemaError
from ..io._write import write_summary
from ..results import ReadResult, TableResult, as_table
from ..schema._columns import check_columns
from ..stats._rank_correlation import KENDALL_VARIANTS, SPEARMAN_VARIANTS, correlation_function
from ._zscores import (
    DDOF_CHOICES,
    UNSCORED_CHOICES,
    ZMOS_COLUMNS,
    ZMOSResult,
    _check_ddof,
    _match_tests,
    zmos,
    zscores,
    zscores_for_scores,
)

__all__ = [
    "zscores",
    "zmos",
    "zscores_for_scores",
    "rater_agreement",
    "metric_agreement",
    "ZMOSResult",
    "UNSCORED_CHOICES",
    "RankCorrelations",
    "srcc_krcc",
    "IQA_SPEARMAN",
    "IQA_KENDALL",
    "DDOF_CHOICES",
    "MetricAgreementResult",
    "ExpertAgreementResult",
    "compare_with_experts",
    "ZMOS_COLUMNS",
    "RATER_AGREEMENT_COLUMNS",
    "METRIC_AGREEMENT_COLUMNS",
    "DROPPED_COLUMNS",
]


RATER_AGREEMENT_COLUMNS: tuple[str, ...] = ("rater_a", "rater_b", "srcc", "krcc", "n")
"""Columns of :func:`rater_agreement` (Table 3)."""

METRIC_AGREEMENT_COLUMNS: tuple[str, ...] = (
    "metric",
    "srcc",
    "krcc",
    "srcc_ci_low",
    "srcc_ci_high",
    "krcc_ci_low",
    "krcc_ci_high",
    "n",
    "n_references",
    "orientation",
)
"""Columns of :func:`metric_agreement` (Table 4)."""

DROPPED_COLUMNS: tuple[str, ...] = ("metric", "test", "reason")
"""Columns of the table of (metric, image) pairs :func:`metric_agreement` reports rather than uses."""

_NO_RATINGS = "no ratings for this image"


IQA_SPEARMAN = "pearson"
"""Default SRCC variant of the IQA tables: the Pearson correlation of average ranks (``scipy.stats.spearmanr``);
one of :data:`cxreval.stats.SPEARMAN_VARIANTS`."""
IQA_KENDALL = "tau-b"
"""Default KRCC variant of the IQA tables: tau-b (``scipy.stats.kendalltau``); one of
:data:`cxreval.stats.KENDALL_VARIANTS`."""


def _check_variants(spearman: object, kendall: object, func: str) -> None:
    check_choice(spearman, SPEARMAN_VARIANTS, name="spearman", func=func)
    check_choice(kendall, KENDALL_VARIANTS, name="kendall", func=func)


class RankCorrelations(NamedTuple):
    """What :func:`srcc_krcc` returns: the Spearman and the Kendall rank correlation."""

    srcc: float
    krcc: float


def srcc_krcc(
    a: np.ndarray, b: np.ndarray, *, spearman: str = IQA_SPEARMAN, kendall: str = IQA_KENDALL
) -> RankCorrelations:
    """SRCC and KRCC of ``a`` and ``b`` by :mod:`cxreval.ranking` (NaN for fewer than 2 items or a
    constant input).

    ``spearman='pearson'`` (default) is the Pearson correlation of average ranks (``scipy.stats.spearmanr``),
    ``'formula'`` the XQA-Chest paper's ``1 - 6 sum d² / (n (n² - 1))``; ``kendall='tau-b'`` (default) is
    ``scipy.stats.kendalltau``, ``'tau-a'`` the paper's ``(C - D) / (n (n - 1) / 2)``
    (:func:`~cxreval.stats.correlation_function`). The caller checks the variant names."""
    if len(a) < 2 or np.ptp(a) == 0 or np.ptp(b) == 0:
        return RankCorrelations(float("nan"), float("nan"))
    return RankCorrelations(
        float(correlation_function("SRCC", spearman)(a, b)),
        float(correlation_function("KRCC", kendall)(a, b)),
    )


def rater_agreement(
    res: ZMOSResult, *, spearman: str = IQA_SPEARMAN, kendall: str = IQA_KENDALL
) -> pd.DataFrame:
    """Table 3: SRCC/KRCC of every pair of raters (on the images both rated) and of each rater with z-MOS.

    Parameters
    ----------
    res : ZMOSResult
    spearman : {'pearson', 'formula'}, default='pearson'
    kendall : {'tau-b', 'tau-a'}, default='tau-b'
        The SRCC / KRCC variants (:func:`srcc_krcc`).

    Returns
    -------
    table : pandas.DataFrame
        ``rater_a, rater_b, srcc, krcc, n`` for ``a < b`` and for ``(a, 'z-MOS')``.
    """
    _check_variants(spearman, kendall, "rater_agreement")
    wide = res.zscores.pivot(index="image", columns="rater", values="rating")
    zm = res.zmos.set_index("image")["zmos"]
    raters = list(wide.columns)
    rows = []
    for i, a in enumerate(raters):
        for b in raters[i + 1 :]:
            both = wide[[a, b]].dropna()
            s, k = srcc_krcc(both[a].to_numpy(), both[b].to_numpy(), spearman=spearman, kendall=kendall)
            rows.append({"rater_a": a, "rater_b": b, "srcc": s, "krcc": k, "n": int(len(both))})
        col = wide[a].dropna()
        s, k = srcc_krcc(col.to_numpy(), zm.loc[col.index].to_numpy(), spearman=spearman, kendall=kendall)
        rows.append({"rater_a": a, "rater_b": "z-MOS", "srcc": s, "krcc": k, "n": int(len(col))})
    return pd.DataFrame(rows, columns=list(RATER_AGREEMENT_COLUMNS))


@dataclass(frozen=True)
class MetricAgreementResult(TableResult):
    """Table 4: each metric's SRCC/KRCC with z-MOS (:func:`metric_agreement`).

    Attributes
    ----------
    table : pandas.DataFrame
        :data:`METRIC_AGREEMENT_COLUMNS`.
    dropped : pandas.DataFrame
        :data:`DROPPED_COLUMNS`: scored test images without ratings, and rated images a metric did not score;
        reported rather than used (``dropped.csv`` of :class:`ExpertAgreementResult`).
    spearman, kendall : str
        The SRCC / KRCC variants (:func:`srcc_krcc`).
    """

    FILES: ClassVar[Mapping[str, str]] = MappingProxyType({"metric_agreement": "metric_agreement.csv"})
    COLUMNS: ClassVar[tuple[str, ...]] = METRIC_AGREEMENT_COLUMNS

    table: pd.DataFrame
    dropped: pd.DataFrame
    spearman: str = IQA_SPEARMAN
    kendall: str = IQA_KENDALL

    def summary(self) -> str:
        """The metrics by SRCC with their intervals (the XQA-Chest paper's Table 4), as Markdown."""
        lines = [
            "## Metrics vs z-MOS (as the XQA-Chest paper's Table 4)",
            "",
            "| metric | SRCC [CI] | KRCC [CI] | n |",
            "|---|---|---|---|",
        ]
        for _, r in self.table.sort_values("srcc", ascending=False).iterrows():
            lines.append(
                f"| {r.metric} | {r.srcc:.2f} [{r.srcc_ci_low:.2f}, {r.srcc_ci_high:.2f}] | "
                f"{r.krcc:.2f} [{r.krcc_ci_low:.2f}, {r.krcc_ci_high:.2f}] | {r.n} |"
            )
        return "\n".join(lines)

    def to_dict(self) -> dict[str, object]:
        return {
            "metric_agreement": self.table.to_dict(orient="records"),
            "n_dropped": int(len(self.dropped)),
            "spearman": self.spearman,
            "kendall": self.kendall,
        }

    @classmethod
    def figure(cls, table: pd.DataFrame) -> Any:
        """Each metric's rank correlation with the experts' z-MOS (SRCC / KRCC, with intervals) (the report's
        figure of ``metric_agreement.csv``)."""
        from .._plots.analyses import iqa_correlation_bars

        return iqa_correlation_bars(table)


def metric_agreement(
    scores: pd.DataFrame,
    zmos_table: pd.DataFrame,
    *,
    n_resamples: int = 1000,
    confidence_level: float = 0.95,
    rng: RNGLike = None,
    orient: bool = True,
    metrics: Sequence[str] | None = None,
    unscored: str = "keep",
    spearman: str = IQA_SPEARMAN,
    kendall: str = IQA_KENDALL,
) -> MetricAgreementResult:
    """Table 4: SRCC/KRCC between each metric and z-MOS, with bootstrap CIs over reference images.

    Parameters
    ----------
    scores : pandas.DataFrame
        ``reference, test, metric, value`` (``cxreval iqa score`` output). ``test`` ids are matched to the
        rating image ids exactly, else by file stem (``dir/x.png`` -> ``x``).
    zmos_table : pandas.DataFrame
        ``image, zmos`` (:attr:`ZMOSResult.zmos`).
    n_resamples : int, default=1000
    confidence_level : float, default=0.95
    rng : None, int or numpy.random.Generator
    orient : bool, default=True
        Flip the sign for metrics registered as lower-is-better. A metric that is not registered has no
        known direction and is refused (:class:`~cxreval.exceptions.UnknownNameError`) unless ``orient=False``.
    metrics : sequence of str, optional
        Restrict to these metrics.
    unscored : {'keep', 'error'}, default='keep'
        Images in ``zmos_table`` that a metric did not score: ``'keep'``: correlate the scored images only and
        list the others in ``dropped`` (their ratings stay in the raters' mean/SD, as the z-MOS table was made);
        ``'error'``: raise (every rated image must be scored). To take them out of the mean/SD too, make the
        z-MOS table with :func:`zscores_for_scores` (``unscored='exclude'``).
    spearman : {'pearson', 'formula'}, default='pearson'
    kendall : {'tau-b', 'tau-a'}, default='tau-b'
        The SRCC / KRCC variants (:func:`srcc_krcc`), for the point values and every bootstrap replicate.

    Returns
    -------
    res : MetricAgreementResult
        ``res.table``: ``metric, srcc, krcc, srcc_ci_low, srcc_ci_high, krcc_ci_low, krcc_ci_high, n,
        n_references, orientation``; ``res.dropped``: ``metric, test, reason``: scored test images without
        ratings, and (``unscored='keep'``) rated images the metric did not score; reported rather than used.

    Raises
    ------
    SchemaError
        Missing columns, non-numeric values, a metric that scores none of the rated images, or
        (``unscored='error'``) rated images that a metric did not score (unknown ids).
    UnknownNameError
        ``orient=True`` and a metric that is not registered (its direction is unknown).
    """
    check_columns(scores, ["reference", "test", "metric", "value"], where="scores")
    check_columns(zmos_table, ["image", "zmos"], where="z-MOS table")
    n_resamples = check_positive_int(n_resamples, name="n_resamples", func="metric_agreement")
    cl = check_confidence_level(confidence_level, func="metric_agreement")
    check_choice(unscored, ("keep", "error"), name="unscored", func="metric_agreement")
    _check_variants(spearman, kendall, "metric_agreement")
    gen = normalize_rng(rng)
    sc = scores[["reference", "test", "metric", "value"]].copy()
    for c in ("reference", "test", "metric"):
        sc[c] = sc[c].astype(str)
    vals = pd.to_numeric(sc["value"], errors="coerce")
    if vals.isna().any():
        i = int(np.flatnonzero(vals.isna().to_numpy())[0])
        raise SchemaError(
            f"scores: column 'value' must be numeric and finite; row {i} has {scores['value'].iloc[i]!r}."
        )
    sc["value"] = vals.astype(float)
    zm = zmos_table.assign(image=zmos_table["image"].astype(str)).set_index("image")["zmos"]
    rated = set(zm.index)
    sc["test"] = _match_tests(sc["test"], rated)
    wanted = list(metrics) if metrics is not None else sorted(sc["metric"].unique())
    unknown_metrics = sorted(set(wanted) - set(sc["metric"]))
    if unknown_metrics:
        raise SchemaError(
            f"scores: no values for metric(s) {unknown_metrics}; have {sorted(sc['metric'].unique())}."
        )
    from ._registry import metric_sign

    signs = {m: metric_sign(m, where="scores") if orient else 1.0 for m in wanted}  # before any bootstrap
    rows, dropped = [], []
    for m in wanted:
        d = sc[sc["metric"] == m]
        missing = sorted(rated - set(d["test"]))
        if missing and (unscored == "error" or len(missing) == len(rated)):
            raise SchemaError(
                f"scores: metric {m!r} has no value for {len(missing)} rated image(s), e.g. "
                f"{missing[:3]}; image ids in ratings must match the 'test' column of scores"
                + (" (none matches)." if len(missing) == len(rated) else ".")
            )
        dropped += [
            {"metric": m, "test": t, "reason": "rated, not scored: in the raters' mean/SD, not correlated"}
            for t in missing
        ]
        extra = d[~d["test"].isin(rated)]
        dropped += [{"metric": m, "test": t, "reason": _NO_RATINGS} for t in extra["test"]]
        d = d[d["test"].isin(rated)]
        if d["test"].duplicated().any():
            t = d.loc[d["test"].duplicated(), "test"].iloc[0]
            raise SchemaError(f"scores: metric {m!r} has more than one value for test image {t!r}.")
        sign = signs[m]
        v = sign * d["value"].to_numpy()
        if not np.all(np.isfinite(v)):
            raise SchemaError(
                f"scores: metric {m!r} has non-finite values (e.g. PSNR of identical images); "
                "remove those pairs or that metric."
            )
        z = zm.loc[d["test"]].to_numpy()
        s, k = srcc_krcc(v, z, spearman=spearman, kendall=kendall)
        plan = draw_plan(
            d["reference"].to_numpy(), n_resamples=n_resamples, rng=gen
        )  # references are clusters
        dist = np.array(
            [
                srcc_krcc(v[idx], z[idx], spearman=spearman, kendall=kendall)
                for idx in map(plan.study_indices, range(n_resamples))
            ]
        )
        cs, ck = (summarize_distribution(dist[:, j], confidence_level=cl) for j in (0, 1))
        sl, sh, kl, kh = (float(c[k]) for c in (cs, ck) for k in ("ci_low", "ci_high"))
        rows.append(
            {
                "metric": m,
                "srcc": s,
                "krcc": k,
                "srcc_ci_low": sl,
                "srcc_ci_high": sh,
                "krcc_ci_low": kl,
                "krcc_ci_high": kh,
                "n": int(len(d)),
                "n_references": plan.n_patients,
                "orientation": int(sign),
            }
        )
    return MetricAgreementResult(
        pd.DataFrame(rows), pd.DataFrame(dropped, columns=list(DROPPED_COLUMNS)), spearman, kendall
    )


@dataclass(frozen=True)
class ExpertAgreementResult(TableResult):
    """Everything ``cxreval iqa agree`` computes: z-scores and z-MOS, Table 3 and Table 4.

    Attributes
    ----------
    zmos : ZMOSResult
    raters : pandas.DataFrame
        :func:`rater_agreement` (:data:`RATER_AGREEMENT_COLUMNS`).
    metrics : MetricAgreementResult
    unscored : str
        How rated images no metric scored were handled (``'keep'``, ``'exclude'`` or ``'error'``).
    spearman, kendall : str
        The SRCC / KRCC variants of Tables 3 and 4 (:func:`srcc_krcc`).
    ddof : int
        Delta degrees of freedom of the raters' standard deviations (:func:`zscores`).
    """

    FILES: ClassVar[Mapping[str, str]] = MappingProxyType(
        {
            **ZMOSResult.FILES,
            "rater_agreement": "rater_agreement.csv",
            **MetricAgreementResult.FILES,
            "dropped": "dropped.csv",
        }
    )
    COLUMNS: ClassVar[tuple[str, ...]] = METRIC_AGREEMENT_COLUMNS

    zmos: ZMOSResult
    raters: pd.DataFrame
    metrics: MetricAgreementResult
    unscored: str = "keep"
    spearman: str = IQA_SPEARMAN
    kendall: str = IQA_KENDALL
    ddof: int = 0

    @property
    def table(self) -> pd.DataFrame:
        """Table 4 (metric vs z-MOS)."""
        return self.metrics.table

    def tables(self) -> dict[str, pd.DataFrame]:
        return {
            **self.zmos.tables(),
            "rater_agreement": self.raters,
            **self.metrics.tables(),
            "dropped": self.metrics.dropped,
        }

    def save(self, folder: PathLike) -> dict[str, Path]:
        """Write every table (CSV + Parquet) and ``summary.md``: what ``cxreval iqa agree`` writes."""
        paths = super().save(folder)
        write_summary(Path(folder), self.summary())
        return paths

    def summary(self, title: str = "cxreval iqa agree") -> str:
        """Tables 3 and 4 and what was left out, as Markdown (``summary.md`` of ``cxreval iqa agree``)."""
        from ..stats._rank_correlation import VARIANT_TEXT

        lines = [
            f"# {title}",
            "",
            self.zmos.summary(),
            f"z-scores: each rater's mean and standard deviation with ddof={self.ddof} "
            f"({'population' if self.ddof == 0 else 'sample'} SD, divisor n - {self.ddof}). Rank correlations: "
            f"{VARIANT_TEXT[self.spearman]}; {VARIANT_TEXT[self.kendall]}.",
            "",
            "## Raters vs z-MOS (as the XQA-Chest paper's Table 3)",
            "",
            "| rater | SRCC | KRCC | n |",
            "|---|---|---|---|",
        ]
        for _, r in self.raters[self.raters["rater_b"] == "z-MOS"].iterrows():
            lines.append(f"| {r.rater_a} | {r.srcc:.2f} | {r.krcc:.2f} | {r.n} |")
        dropped = self.metrics.dropped
        n_unscored = int((dropped["reason"] != _NO_RATINGS).sum()) if len(dropped) else 0
        lines += [
            "",
            self.metrics.summary(),
            "",
            f"Scored images without ratings (not used): {len(dropped) - n_unscored}.",
            f"Rated images no metric scored: --unscored {self.unscored} "
            + (
                "(their ratings are in the raters' mean/SD)."
                if self.unscored == "keep"
                else "(removed before z-scoring)."
            ),
            f"(image, metric) pairs rated but not scored by that metric, kept in the mean/SD and not "
            f"correlated: {n_unscored}.",
        ]
        return "\n".join(lines)

    def to_dict(self) -> dict[str, object]:
        return {
            "rater_agreement": self.raters.to_dict(orient="records"),
            **self.metrics.to_dict(),
            "ddof": self.ddof,
            "unscored": self.unscored,
        }

    @classmethod
    def figure(cls, table: pd.DataFrame) -> Any:
        """The figure of ``metric_agreement.csv``, :meth:`MetricAgreementResult.figure`."""
        return MetricAgreementResult.figure(table)


def compare_with_experts(
    ratings: pd.DataFrame | ReadResult | Sequence[pd.DataFrame | ReadResult],
    scores: pd.DataFrame | ReadResult | Sequence[pd.DataFrame | ReadResult],
    *,
    unscored: str = "keep",
    scale: tuple[float, float] | None = (1, 4),
    n_resamples: int = 1000,
    confidence_level: float = 0.95,
    rng: RNGLike = None,
    ddof: int = 0,
    spearman: str = IQA_SPEARMAN,
    kendall: str = IQA_KENDALL,
) -> ExpertAgreementResult:
    """z-MOS of ``ratings`` (:func:`zscores_for_scores`), Table 3 (:func:`rater_agreement`) and Table 4
    (:func:`metric_agreement`) of ``scores``, with one choice of ``unscored`` for both.

    Parameters
    ----------
    ratings : pandas.DataFrame, ReadResult or list of them
        ``image, rater, rating``.
    scores : pandas.DataFrame, ReadResult or list of them
        ``reference, test, metric, value`` (``scores.csv`` of ``cxreval iqa score``).
    unscored : {'keep', 'exclude', 'error'}, default='keep'
        See :func:`zscores_for_scores`; ``'exclude'`` removes the ratings before z-scoring, so Table 4 then
        keeps (lists in ``dropped``) nothing more.
    scale : tuple of float or None, default=(1, 4)
    n_resamples, confidence_level, rng
        As :func:`metric_agreement`.
    ddof : {0, 1}, default=0
        As :func:`zscores` (0: population SD, as ``scipy.stats.zscore``; 1: sample SD).
    spearman : {'pearson', 'formula'}, default='pearson'
    kendall : {'tau-b', 'tau-a'}, default='tau-b'
        The SRCC / KRCC variants of Tables 3 and 4 (:func:`srcc_krcc`; ``'formula'`` / ``'tau-a'`` are the
        XQA-Chest paper's section 2.3 formulas).

    Returns
    -------
    res : ExpertAgreementResult
    """
    _check_variants(spearman, kendall, "compare_with_experts")
    ddof = _check_ddof(ddof, "compare_with_experts")
    ratings = as_table(ratings, name="ratings", func="compare_with_experts")
    scores = as_table(scores, name="scores", func="compare_with_experts")
    z = zscores_for_scores(ratings, scores, unscored=unscored, scale=scale, ddof=ddof)
    raters = rater_agreement(z, spearman=spearman, kendall=kendall)
    metrics = metric_agreement(
        scores,
        z.zmos,
        n_resamples=n_resamples,
        confidence_level=confidence_level,
        rng=rng,
        unscored="error" if unscored == "error" else "keep",
        spearman=spearman,
        kendall=kendall,
    )
    return ExpertAgreementResult(z, raters, metrics, unscored, spearman, kendall, ddof)
