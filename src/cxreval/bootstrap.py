"""Patient-level (cluster) bootstrap: one resampling plan shared by every statistic.

A :class:`ResamplingPlan` is drawn once with ``rng``: ``n_resamples`` replicates, each drawing the
``n`` patients with replacement. It is stored as a ``(B, n_patients)`` matrix of counts, so that the
weight of a study in replicate ``b`` is the count of its patient. Every statistic (the AUC of every
model × finding × reference, their macro averages, rank correlations between the references) is
computed from the same plan, vectorised over the replicates: the statistics are *paired*.

The plan also expands to explicit study indices (:meth:`ResamplingPlan.study_indices`), the form a
loop over ``sklearn.metrics.roc_auc_score`` uses; both give the same numbers.

Examples
--------
>>> import numpy as np
>>> plan = draw_plan(["p1", "p1", "p2", "p3"], n_resamples=3, rng=0)
>>> plan.counts.shape, plan.patients
((3, 3), ('p1', 'p2', 'p3'))
>>> bool((plan.counts.sum(axis=1) == 3).all())
True
>>> plan.study_weights().shape
(3, 4)
>>> res = percentile_ci(np.array([0.1, 0.2, np.nan, 0.4]), estimate=0.25, confidence_level=0.5)
>>> res.n_undefined, round(res.confidence_interval.low, 3)
(1, 0.15)
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ._typing import RNGLike
from ._validation import check_choice, check_confidence_level, check_memory, check_positive_int, normalize_rng
from .exceptions import InvalidParameterError, SchemaError
from .results import ConfidenceInterval, readonly

__all__ = [
    "ResamplingPlan",
    "BootstrapResult",
    "draw_plan",
    "percentile_ci",
    "bca_ci",
    "summarize_distribution",
]

_SHARD_BYTES = 24 << 20
_DRAW_CHUNK = 1 << 18  # draws per chunk of draw_plan (2 MiB of int64, the same memory for every chunk)


@dataclass(frozen=True)
class ResamplingPlan:
    """A cluster-bootstrap resampling plan over patients.

    Attributes
    ----------
    patients : tuple of str
        The distinct patients, in the order of the columns of ``counts``.
    counts : ndarray of int32, shape (n_resamples, n_patients)
        ``counts[b, p]``: how many times patient ``p`` is drawn in replicate ``b``; each row sums to
        ``n_patients``.
    study_patient : ndarray of int, shape (n_studies,)
        For each study (in the order given to :func:`draw_plan`), the column of its patient.
    study_ids : tuple of str or None
        The study ids, when given.
    seed : object
        The ``rng`` argument the plan was drawn with (for the record; ``None`` if a Generator).
    """

    patients: tuple[str, ...]
    counts: np.ndarray
    study_patient: np.ndarray
    study_ids: tuple[str, ...] | None = None
    seed: object = None

    def __post_init__(self) -> None:
        readonly(self.counts)
        readonly(self.study_patient)

    @property
    def n_resamples(self) -> int:
        return int(self.counts.shape[0])

    @property
    def n_patients(self) -> int:
        return int(self.counts.shape[1])

    @property
    def n_studies(self) -> int:
        return int(self.study_patient.shape[0])

    def study_weights(
        self,
        positions: np.ndarray | Sequence[int] | None = None,
        replicates: slice | np.ndarray | None = None,
    ) -> np.ndarray:
        """Per-study integer weights ``(B, n_studies)``: the count of each study's patient.

        Parameters
        ----------
        positions : array of int, optional
            Study positions (default all, in plan order).
        replicates : slice or array of int, optional
            Rows of the plan (default all).
        """
        cols = self.study_patient if positions is None else self.study_patient[np.asarray(positions)]
        rows = self.counts if replicates is None else self.counts[replicates]
        return rows[:, cols]

    def study_indices(self, b: int) -> np.ndarray:
        """Explicit study indices of replicate ``b`` (each study repeated by its patient's count).

        This is the form a loop over an unweighted metric (``roc_auc_score(y[idx], s[idx])``) uses;
        the order of the indices is irrelevant to order-free statistics.
        """
        w = self.counts[b][self.study_patient]
        return np.repeat(np.arange(self.n_studies), w)

    def subset(self, positions: np.ndarray | Sequence[int]) -> ResamplingPlan:
        """The same draws restricted to the studies at ``positions`` (their patients keep their counts)."""
        idx = np.asarray(positions, dtype=np.intp)
        ids = None if self.study_ids is None else tuple(self.study_ids[i] for i in idx)
        return ResamplingPlan(self.patients, self.counts, self.study_patient[idx].copy(), ids, self.seed)

    def count_shards(self, shard_size: int) -> np.ndarray:
        """The counts cut into shards of replicates, each transposed for the AUC kernel.

        Returns
        -------
        shards : ndarray of shape (n_shards, n_patients, shard_size)
            ``shards[t, p, r] = counts[t * shard_size + r, p]``, zero past the last replicate; int16 when every
            count fits (always in practice: a count exceeds 32,767 only with more patients than that drawn
            that often), else int32. Each ``shards[t]`` is C-contiguous.
        """
        shard_size = max(1, min(int(shard_size), max(self.n_resamples, 1)))
        n_sh = -(-self.n_resamples // shard_size)
        dt = np.int16 if int(self.counts.max(initial=0)) <= np.iinfo(np.int16).max else np.int32
        out = np.zeros((n_sh, self.n_patients, shard_size), dtype=dt)
        for t, sl in enumerate(iter_shards(self.n_resamples, shard_size)):
            out[t, :, : sl.stop - sl.start] = self.counts[sl].T
        return out

    def to_dict(self) -> dict[str, object]:
        return {
            "n_resamples": self.n_resamples,
            "n_patients": self.n_patients,
            "n_studies": self.n_studies,
            "seed": self.seed if isinstance(self.seed, (int, type(None))) else repr(self.seed),
        }


def draw_plan(
    patient_ids: Sequence[object] | pd.Series | np.ndarray,
    *,
    n_resamples: int = 1000,
    rng: RNGLike = None,
    study_ids: Sequence[object] | None = None,
) -> ResamplingPlan:
    """Draw a patient-level bootstrap plan.

    Each replicate draws ``n_patients`` patients uniformly with replacement
    (``rng.integers(0, n_patients, size=(B, n_patients))``) and records how often each was drawn.

    Parameters
    ----------
    patient_ids : array-like of shape (n_studies,)
        The patient of each study. Studies of one patient are resampled together.
    n_resamples : int, default=1000
    rng : None, int or numpy.random.Generator
        Normalised with ``np.random.default_rng(rng)``.
    study_ids : array-like of shape (n_studies,), optional
        Recorded on the plan (and used in error messages).

    Returns
    -------
    plan : ResamplingPlan

    Raises
    ------
    SchemaError
        A study without a patient id (names the study).
    InvalidParameterError
        ``n_resamples`` not a positive int; no studies.
    """
    n_resamples = check_positive_int(n_resamples, name="n_resamples", func="draw_plan")
    pid = pd.Series(np.asarray(patient_ids, dtype=object))
    if len(pid) == 0:
        raise InvalidParameterError("draw_plan needs at least one study; got an empty 'patient_ids'.")
    if study_ids is not None and len(study_ids) != len(pid):
        raise InvalidParameterError(
            f"draw_plan: 'study_ids' has {len(study_ids)} entries but 'patient_ids' has {len(pid)}."
        )
    missing = pid.isna().to_numpy() | (pid.astype(str).str.strip() == "").to_numpy()
    if missing.any():
        i = int(np.flatnonzero(missing)[0])
        who = f"study {study_ids[i]!r}" if study_ids is not None else f"study at position {i}"
        raise SchemaError(
            f"{who} has no patient id ({int(missing.sum())} such studies); the patient-level "
            "bootstrap needs a patient id for every study."
        )
    codes, uniques = pd.factorize(pid.astype(str), sort=True)
    gen = normalize_rng(rng)
    n = len(uniques)
    check_memory(
        4.0 * n_resamples * n,
        what=f"{n_resamples:,} replicates of {n:,} patients (the resampling plan)",
        name="n_resamples",
        func="draw_plan",
    )
    # drawn in chunks of replicates (the same stream as one (n_resamples, n) draw), so that memory stays at the
    # int32 counts rather than 2-3 int64 copies of every draw
    counts = np.empty((n_resamples, n), dtype=np.int32)
    rows = max(1, _DRAW_CHUNK // n)
    for start in range(0, n_resamples, rows):
        stop = min(n_resamples, start + rows)
        draws = gen.integers(0, n, size=(stop - start, n))
        draws += n * np.arange(stop - start)[:, None]
        counts[start:stop] = np.bincount(draws.ravel(), minlength=(stop - start) * n).reshape(stop - start, n)
    seed = rng if isinstance(rng, (int, np.integer, type(None))) else None
    ids = None if study_ids is None else tuple(str(s) for s in study_ids)
    return ResamplingPlan(
        tuple(str(u) for u in uniques),
        counts,
        codes.astype(np.intp),
        ids,
        None if seed is None else int(seed),
    )


@dataclass(frozen=True, slots=True)
class BootstrapResult:
    """A statistic, its bootstrap distribution and confidence interval.

    Attributes
    ----------
    estimate : float
        The statistic on the original data.
    confidence_interval : ConfidenceInterval
    standard_error : float
        Standard deviation (``ddof=1``) of the defined replicates.
    mean : float
        Mean of the defined replicates.
    bootstrap_distribution : ndarray of shape (n_resamples,)
        NaN where the statistic is undefined in a replicate.
    n_resamples : int
    confidence_level : float
    method : str
        ``'percentile'`` or ``'BCa'``.
    n_undefined : int
        Replicates where the statistic is undefined (excluded from the CI, mean and sd).
    """

    estimate: float
    confidence_interval: ConfidenceInterval
    standard_error: float
    mean: float
    bootstrap_distribution: np.ndarray = field(repr=False)
    n_resamples: int
    confidence_level: float
    method: str
    n_undefined: int

    def __post_init__(self) -> None:
        readonly(self.bootstrap_distribution)

    def to_dict(self) -> dict[str, object]:
        return {
            "estimate": float(self.estimate),
            "ci_low": float(self.confidence_interval.low),
            "ci_high": float(self.confidence_interval.high),
            "standard_error": float(self.standard_error),
            "mean": float(self.mean),
            "n_resamples": self.n_resamples,
            "confidence_level": self.confidence_level,
            "method": self.method,
            "n_undefined": self.n_undefined,
        }


def summarize_distribution(
    dist: np.ndarray, *, confidence_level: float = 0.95, axis: int = -1
) -> dict[str, np.ndarray]:
    """Vectorised percentile summary of bootstrap distributions along ``axis``.

    Returns a dict of arrays ``mean``, ``sd`` (ddof=1), ``ci_low``, ``ci_high`` and ``n_undefined``;
    NaN replicates are excluded; all-NaN gives NaN.
    """
    confidence_level = check_confidence_level(confidence_level, func="summarize_distribution")
    d = np.moveaxis(np.asarray(dist, dtype=float), axis, -1)
    if d.shape[-1] == 0:
        nan = np.full(d.shape[:-1], np.nan)
        return {
            "mean": nan,
            "sd": nan.copy(),
            "ci_low": nan.copy(),
            "ci_high": nan.copy(),
            "n_undefined": np.zeros(d.shape[:-1], dtype=int),
        }
    ok = np.isfinite(d)
    n_ok = ok.sum(axis=-1)
    alpha = (1 - confidence_level) / 2
    with np.errstate(invalid="ignore", divide="ignore"):
        if ok.all():
            lo, hi = np.percentile(d, [100 * alpha, 100 * (1 - alpha)], axis=-1)
            mean = d.mean(axis=-1)
            sd = d.std(axis=-1, ddof=1) if d.shape[-1] > 1 else np.full(d.shape[:-1], np.nan)
        else:
            dd = np.where(ok, d, np.nan)
            lo = np.full(d.shape[:-1], np.nan)
            hi = lo.copy()
            mean = lo.copy()
            sd = lo.copy()
            has = n_ok > 0
            if has.any():
                sub = dd[has]
                lo[has], hi[has] = np.nanpercentile(sub, [100 * alpha, 100 * (1 - alpha)], axis=-1)
                mean[has] = np.nanmean(sub, axis=-1)
                many = n_ok[has] > 1
                sdv = np.full(sub.shape[0], np.nan)
                if many.any():
                    sdv[many] = np.nanstd(sub[many], axis=-1, ddof=1)
                sd[has] = sdv
    return {
        "mean": mean,
        "sd": sd,
        "ci_low": lo,
        "ci_high": hi,
        "n_undefined": (d.shape[-1] - n_ok).astype(int),
    }


def percentile_ci(
    distribution: np.ndarray, *, estimate: float, confidence_level: float = 0.95
) -> BootstrapResult:
    """Percentile confidence interval of one bootstrap distribution.

    The interval is ``(q_{α/2}, q_{1-α/2})`` of the defined replicates (``numpy.percentile``, linear
    interpolation), ``α = 1 - confidence_level``. Undefined (NaN) replicates are counted in
    ``n_undefined`` and excluded.
    """
    dist = np.asarray(distribution, dtype=float).ravel()
    s = summarize_distribution(dist, confidence_level=confidence_level)
    return BootstrapResult(
        float(estimate),
        ConfidenceInterval(float(s["ci_low"]), float(s["ci_high"])),
        float(s["sd"]),
        float(s["mean"]),
        dist.copy(),
        int(dist.size),
        float(confidence_level),
        "percentile",
        int(s["n_undefined"]),
    )


def bca_ci(
    distribution: np.ndarray, *, estimate: float, jackknife: np.ndarray, confidence_level: float = 0.95
) -> BootstrapResult:
    """Bias-corrected and accelerated (BCa) interval (Efron 1987), as ``scipy.stats.bootstrap`` computes it.

    Parameters
    ----------
    distribution : ndarray of shape (n_resamples,)
    estimate : float
    jackknife : ndarray of shape (n_clusters,)
        Leave-one-cluster-out values of the statistic (for the patient bootstrap: leave one patient out).

    Notes
    -----
    ``z0 = Φ⁻¹(#{θ*_b < θ̂} / B)``; ``a = Σ(θ̄ - θ_(i))³ / (6 [Σ(θ̄ - θ_(i))²]^{3/2})``; the interval
    takes the percentiles ``Φ(z0 + (z0 + z_α) / (1 - a (z0 + z_α)))``.
    """
    from scipy import special

    confidence_level = check_confidence_level(confidence_level, func="bca_ci")
    dist = np.asarray(distribution, dtype=float).ravel()
    ok = dist[np.isfinite(dist)]
    jk = np.asarray(jackknife, dtype=float)
    jk = jk[np.isfinite(jk)]
    n_undef = int(dist.size - ok.size)
    if ok.size == 0 or jk.size < 2 or not np.isfinite(estimate):
        lo = hi = float("nan")
    else:
        alpha = (1 - confidence_level) / 2
        z0 = special.ndtri(np.mean(ok < estimate))
        d = jk.mean() - jk
        den = 6.0 * (d**2).sum() ** 1.5
        a = (d**3).sum() / den if den > 0 else 0.0
        qs = []
        for za in (special.ndtri(alpha), special.ndtri(1 - alpha)):
            qs.append(special.ndtr(z0 + (z0 + za) / (1 - a * (z0 + za))))
        if not np.all(np.isfinite(qs)):
            lo = hi = float("nan")
        else:
            lo, hi = (float(v) for v in np.percentile(ok, [100 * qs[0], 100 * qs[1]]))
    sd = float(ok.std(ddof=1)) if ok.size > 1 else float("nan")
    mean = float(ok.mean()) if ok.size else float("nan")
    return BootstrapResult(
        float(estimate),
        ConfidenceInterval(lo, hi),
        sd,
        mean,
        dist.copy(),
        int(dist.size),
        float(confidence_level),
        "BCa",
        n_undef,
    )


def iter_shards(n: int, shard_size: int) -> Iterator[slice]:
    """Consecutive slices of ``range(n)`` of at most ``shard_size`` items."""
    shard_size = max(1, int(shard_size))
    for start in range(0, n, shard_size):
        yield slice(start, min(n, start + shard_size))


def shard_size_for(n_patients: int, n_items: int, n_resamples: int) -> int:
    """Replicates per shard of the AUC kernel, chosen from the problem.

    A shard's counts (``n_patients`` x shard, 2 bytes each) and the kernel's product (about ``n_items`` rows x
    shard) stay near ``24 MiB`` together, so that per-replicate cost stays flat as studies grow (the kernel
    streams them from cache, not memory), while each sparse matrix is read ``n_resamples / shard`` times; a
    power of two between 8 and 512, at most ``n_resamples``. Results do not depend on it.

    Examples
    --------
    >>> shard_size_for(65_000, 228_000, 1000), shard_size_for(2_830, 10_000, 1000)
    (32, 512)
    """
    per_rep = 2 * (max(int(n_patients), 1) + max(int(n_items), 1))
    raw = max(1, _SHARD_BYTES // per_rep)
    size = 1 << int(round(np.log2(raw)))
    return int(max(1, min(max(int(n_resamples), 1), min(512, max(8, size)))))


def _check_method(method: str, func: str) -> str:
    return check_choice(method, ("percentile", "bca"), name="ci_method", func=func)
