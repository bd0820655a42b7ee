"""Per-rater z-scores and z-MOS of expert quality ratings (the XQA-Chest paper's standardisation).

For rater ``a`` and image ``i``, ``z_ia = (r_ia - mu_a) / sigma_a`` with ``mu_a`` and ``sigma_a`` the mean
and standard deviation (``ddof``, default 0 as ``scipy.stats.zscore``; ``ddof=1`` gives the sample standard
deviation) of rater ``a``'s ratings over all images they rated; ``z-MOS_i`` is the mean of ``z_ia`` over the
raters of image ``i``.

Rated images that no metric scores are handled by ``unscored``: ``'keep'`` (default) keeps their ratings in
each rater's ``mu_a``/``sigma_a``; ``'exclude'`` (:func:`zscores_for_scores`) removes their ratings before
z-scoring; ``'error'`` refuses them (every rated image must be scored). The agreement with metrics is
:mod:`cxreval.iqa._expert`'s.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from .._validation import check_choice
from ..exceptions import InvalidParameterError, SchemaError
from ..results import TableResult
from ..schema._columns import check_columns

__all__ = [
    "zscores",
    "zmos",
    "zscores_for_scores",
    "ZMOSResult",
    "UNSCORED_CHOICES",
    "DDOF_CHOICES",
    "ZMOS_COLUMNS",
]


ZMOS_COLUMNS: tuple[str, ...] = ("image", "zmos", "n_raters")
"""Columns of the z-MOS table (one row per rated image)."""


UNSCORED_CHOICES: tuple[str, ...] = ("keep", "exclude", "error")
"""What to do with rated images that a metric did not score (see the module docstring)."""


DDOF_CHOICES: tuple[int, ...] = (0, 1)
"""Divisors of the raters' standard deviation: ``n - ddof`` (0: population, as ``scipy.stats.zscore``; 1: sample)."""


def _check_ddof(ddof: object, func: str) -> int:
    if isinstance(ddof, bool) or ddof not in DDOF_CHOICES:
        raise InvalidParameterError(
            f"The 'ddof' parameter of {func} must be one of {list(DDOF_CHOICES)}. Got {ddof!r} instead."
        )
    return int(ddof)


@dataclass(frozen=True)
class ZMOSResult(TableResult):
    """Standardised ratings.

    Attributes
    ----------
    zscores : pandas.DataFrame
        ``image, rater, rating, z``.
    zmos : pandas.DataFrame
        :data:`ZMOS_COLUMNS`: ``image, zmos, n_raters``, one row per image, sorted by image.
    rater_stats : pandas.DataFrame
        ``rater, mean, std, n``.
    """

    FILES: ClassVar[Mapping[str, str]] = MappingProxyType({"zscores": "zscores.csv", "zmos": "zmos.csv"})
    COLUMNS: ClassVar[tuple[str, ...]] = ZMOS_COLUMNS

    zscores: pd.DataFrame
    zmos: pd.DataFrame
    rater_stats: pd.DataFrame

    @property
    def table(self) -> pd.DataFrame:
        """The z-MOS table."""
        return self.zmos

    def tables(self) -> dict[str, pd.DataFrame]:
        return {"zscores": self.zscores, "zmos": self.zmos}

    def summary(self) -> str:
        return f"{len(self.zmos)} rated image(s), {len(self.rater_stats)} rater(s)."

    def to_dict(self) -> dict[str, object]:
        return {
            "n_images": int(len(self.zmos)),
            "n_raters": int(len(self.rater_stats)),
            "rater_stats": self.rater_stats.to_dict(orient="records"),
        }

    def _figure(self) -> Any:
        """The z-scored mean opinion score of every image."""
        from .._plots import bars

        return bars(
            self.zmos, x="image", y="zmos", title="Expert opinion per image (z-scored MOS)", y_title="zMOS"
        )


def _check_ratings(ratings: pd.DataFrame, scale: tuple[float, float] | None) -> pd.DataFrame:
    check_columns(ratings, ["image", "rater", "rating"], where="ratings")
    df = ratings[["image", "rater", "rating"]].copy()
    df["image"] = df["image"].astype(str)
    df["rater"] = df["rater"].astype(str)
    vals = pd.to_numeric(df["rating"], errors="coerce")
    bad = vals.isna()
    if bad.any():
        i = int(np.flatnonzero(bad.to_numpy())[0])
        raise SchemaError(
            f"ratings: column 'rating' must be numeric; row {i} has {ratings['rating'].iloc[i]!r} "
            f"({int(bad.sum())} such row(s))."
        )
    df["rating"] = vals.astype(float)
    if scale is not None:
        lo, hi = scale
        out = (df["rating"] < lo) | (df["rating"] > hi)
        if out.any():
            i = int(np.flatnonzero(out.to_numpy())[0])
            raise SchemaError(
                f"ratings: rating {df['rating'].iloc[i]!r} at row {i} (image {df['image'].iloc[i]!r}, "
                f"rater {df['rater'].iloc[i]!r}) is outside the scale [{lo:g}, {hi:g}] "
                f"({int(out.sum())} such row(s))."
            )
    dup = df.duplicated(["image", "rater"], keep=False)
    if dup.any():
        i = int(np.flatnonzero(dup.to_numpy())[0])
        raise SchemaError(
            f"ratings: rater {df['rater'].iloc[i]!r} rated image {df['image'].iloc[i]!r} more than once "
            f"(row {i}); each (image, rater) must appear once."
        )
    return df


def zscores(
    ratings: pd.DataFrame, *, scale: tuple[float, float] | None = (1, 4), ddof: int = 0
) -> ZMOSResult:
    """Per-rater z-scores and z-MOS.

    Parameters
    ----------
    ratings : pandas.DataFrame
        Long table with columns ``image, rater, rating``.
    scale : tuple of float or None, default=(1, 4)
        Inclusive rating scale (the XQA-Chest paper's 4-point Likert); ratings outside it raise.
    ddof : {0, 1}, default=0
        Delta degrees of freedom of each rater's standard deviation (divisor ``n - ddof``): 0 the population
        SD (``scipy.stats.zscore``), 1 the sample SD. The XQA-Chest paper does not name the divisor.

    Returns
    -------
    res : ZMOSResult

    Raises
    ------
    SchemaError
        Missing columns, non-numeric or out-of-scale ratings, repeated (image, rater), or a rater whose
        ratings have zero variance (their z-scores are undefined).
    """
    ddof = _check_ddof(ddof, "zscores")
    df = _check_ratings(ratings, scale)
    g = df.groupby("rater", sort=True)["rating"]
    st = pd.DataFrame({"mean": g.mean(), "std": g.std(ddof=ddof), "n": g.size()}).reset_index()
    zero = st[~(st["std"] > 0)]
    if len(zero):
        raise SchemaError(
            f"ratings: rater(s) {zero['rater'].tolist()} gave the same rating to every image (or rated "
            "fewer than two); z-scores need a non-zero standard deviation. Remove them."
        )
    df = df.merge(st[["rater", "mean", "std"]], on="rater")
    df["z"] = (df["rating"] - df["mean"]) / df["std"]
    z = df[["image", "rater", "rating", "z"]].sort_values(["image", "rater"]).reset_index(drop=True)
    m = z.groupby("image", sort=True)["z"].agg(["mean", "size"]).reset_index()
    m.columns = ["image", "zmos", "n_raters"]
    return ZMOSResult(z, m, st)


def zmos(ratings: pd.DataFrame, *, scale: tuple[float, float] | None = (1, 4), ddof: int = 0) -> pd.Series:
    """z-MOS per image (index: image id); see :func:`zscores`."""
    return zscores(ratings, scale=scale, ddof=ddof).zmos.set_index("image")["zmos"]


def _stem(t: str) -> str:
    return t.replace("\\", "/").rsplit("/", 1)[-1].rsplit(".", 1)[0]


def _match_tests(tests: pd.Series, rated: set[str]) -> pd.Series:
    """``test`` ids as rating image ids: unchanged if any matches exactly, else their file stems."""
    tests = tests.astype(str)
    if any(t in rated for t in tests.unique()):
        return tests
    return tests.map(_stem)


def zscores_for_scores(
    ratings: pd.DataFrame,
    scores: pd.DataFrame,
    *,
    unscored: str = "keep",
    scale: tuple[float, float] | None = (1, 4),
    ddof: int = 0,
) -> ZMOSResult:
    """z-scores of ``ratings`` for a metric-vs-expert analysis of ``scores``.

    Parameters
    ----------
    ratings : pandas.DataFrame
        ``image, rater, rating``.
    scores : pandas.DataFrame
        ``reference, test, metric, value``; ``test`` ids are matched to rating ids as in :func:`metric_agreement`.
    unscored : {'keep', 'exclude', 'error'}, default='keep'
        Rated images that no metric scored: ``'keep'`` their ratings in the raters' mean/SD (the XQA-Chest
        paper's "across all images"); ``'exclude'`` them before z-scoring; ``'error'``: raise.
    scale, ddof
        As :func:`zscores`.

    Returns
    -------
    res : ZMOSResult
    """
    check_choice(unscored, UNSCORED_CHOICES, name="unscored", func="zscores_for_scores")
    ddof = _check_ddof(ddof, "zscores_for_scores")
    for name, table in (("ratings", ratings), ("scores", scores)):
        if not isinstance(table, pd.DataFrame):
            raise SchemaError(
                f"zscores_for_scores: '{name}' must be a DataFrame. Got {type(table).__name__}."
            )
    check_columns(scores, ["test"], where="scores")
    df = _check_ratings(ratings, scale)
    rated = set(df["image"])
    scored = set(_match_tests(scores["test"], rated))
    missing = sorted(rated - scored)
    if missing and unscored == "error":
        raise SchemaError(
            f"ratings: {len(missing)} rated image(s) have no metric score, e.g. {missing[:3]}; image "
            f"ids in ratings must match the 'test' column of scores (or pass unscored='keep'/'exclude')."
        )
    if missing and unscored == "exclude":
        df = df[~df["image"].isin(missing)]
    return zscores(df, scale=scale, ddof=ddof)
