"""Power and number of cases of a two-modality reader study, from a pilot study's Obuchowski-Rockette components.

The method of Hillis, Obuchowski and Berbaum (2011), the one RJafroc's ``SsPowerGivenJK`` and
``SsSampleSizeKGivenJ`` and Hillis and Schartz's (2018) program implement. The pilot, read by ``N*`` cases, gives
the OR model's reader-by-modality variance ``var_TR`` (sigma^2_TR) and the error variance and covariances of a
reader's AUC estimate, ``Var``, ``Cov1`` (same reader, other modality), ``Cov2`` (other reader, same modality) and
``Cov3`` (other reader, other modality). These four describe the case sampling and scale as ``N* / N`` for a study
of ``N`` cases (with the pilot's proportion of diseased cases); ``var_TR`` does not depend on the cases. With
``J`` readers, ``s = N* / N``, ``v = max(var_TR, 0)`` and ``c = max(Cov2 - Cov3, 0)`` (Hillis's constraints), the
expected mean squares give, for an effect ``d`` (the difference of the two modalities' mean AUCs):

- random readers and cases (RRRC): the test's denominator ``D = v + s (Var - Cov1 + (J - 1) c)``, the noncentrality
  ``lambda = J d^2 / (2 D)`` and Hillis's denominator degrees of freedom
  ``ddf = (J - 1) D^2 / (v + s (Var - Cov1 - c))^2``; the power is ``P(F'(1, ddf, lambda) > F_{1 - alpha}(1, ddf))``;
- fixed readers (FRRC): ``D = s (Var - Cov1 + (J - 1) c)``, the chi-square test with 1 degree of freedom and
  noncentrality ``J d^2 / (2 D)``;
- fixed cases (RRFC): ``D = v + s (Var - Cov1 - c)`` and ``ddf = J - 1``.

References
----------
.. [1] Hillis SL, Obuchowski NA, Berbaum KS (2011). Power estimation for multireader ROC methods: an updated and
   unified approach. Acad Radiol 18(2):129-142. https://doi.org/10.1016/j.acra.2010.09.007
.. [2] Hillis SL, Schartz KM (2018). Multireader sample size program for diagnostic studies: demonstration and
   methodology. J Med Imaging 5(4):045503. https://doi.org/10.1117/1.JMI.5.4.045503
.. [3] Obuchowski NA, Rockette HE (1995). Hypothesis testing of diagnostic accuracy for multiple readers and
   multiple tests: an ANOVA approach with dependent observations. Commun Stat Simul Comput 24(2):285-308.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, fields
from typing import TYPE_CHECKING

import numpy as np

from .._validation import check_choice, check_positive_int, is_number
from ..exceptions import InvalidParameterError
from ._or import ORResult

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["ANALYSES", "PilotVarianceComponents", "MRMCSampleSizeResult", "mrmc_sample_size"]

_FUNC = "mrmc_sample_size"
ANALYSES = ("RRRC", "FRRC", "RRFC")
"""The analyses a study can be sized for: random readers and cases, fixed readers, fixed cases."""

POWER_COLUMNS = ("n_readers", "n_cases", "power", "noncentrality", "ddf", "critical_value")
MINIMUM_COLUMNS = ("n_readers", "n_cases", "power", "power_limit")


@dataclass(frozen=True, slots=True)
class PilotVarianceComponents:
    """The Obuchowski-Rockette components of a pilot study's AUCs that size the next study.

    Attributes
    ----------
    var_modality_reader : float
        sigma^2_TR, the reader-by-modality variance of the AUCs (may be a negative estimate; used as max(., 0)).
    error_variance : float
        Var, the variance of one reader's AUC estimate in one modality over case samples.
    cov1, cov2, cov3 : float
        The error covariances: same reader in the other modality, another reader in the same modality, another
        reader in the other modality.
    n_cases : int
        The pilot's number of cases N* (diseased and not), the case sample these components describe.
    effect : float or None, default=None
        The pilot's observed difference of the modalities' mean AUCs, the effect when none is given.
    """

    var_modality_reader: float
    error_variance: float
    cov1: float
    cov2: float
    cov3: float
    n_cases: int
    effect: float | None = None

    def __post_init__(self) -> None:
        for f in fields(self):
            v = getattr(self, f.name)
            if f.name == "effect" and v is None:
                continue
            if not is_number(v) or not math.isfinite(v):
                raise InvalidParameterError(
                    f"The '{f.name}' parameter of PilotVarianceComponents must be a finite number. Got {v!r} "
                    "instead."
                )
        if float(self.n_cases) != int(self.n_cases) or self.n_cases < 2:
            raise InvalidParameterError(
                f"The 'n_cases' parameter of PilotVarianceComponents must be a whole number >= 2 (the pilot's "
                f"cases). Got {self.n_cases!r} instead."
            )
        if self.error_variance <= 0:
            raise InvalidParameterError(
                "The 'error_variance' parameter of PilotVarianceComponents must be > 0 (the variance of a reader's "
                f"AUC over case samples). Got {self.error_variance!r} instead."
            )
        object.__setattr__(self, "n_cases", int(self.n_cases))

    @classmethod
    def from_or_result(cls, res: ORResult, *, n_cases: int) -> PilotVarianceComponents:
        """The components of an :func:`~cxreval.mrmc.or_analysis` of a pilot read by ``n_cases`` cases.

        ``var_modality_reader`` is Hillis et al.'s (2011, eq. 9) ``MS(T*R) - Var + Cov1 + max(Cov2 - Cov3, 0)``;
        ``effect`` the first modality's mean AUC minus the second's (None with more than two modalities).
        """
        if not isinstance(res, ORResult):
            raise InvalidParameterError(
                f"from_or_result needs an ORResult (of or_analysis). Got {type(res).__name__} instead."
            )
        c = res.components
        if len(res.modality_names) < 2:
            raise InvalidParameterError(
                "A pilot for a comparison of modalities needs at least two modalities; this "
                f"ORResult has {len(res.modality_names)}."
            )
        var_tr = c.ms_treatment_reader - c.var_error + c.cov1 + max(c.cov2 - c.cov3, 0.0)
        means = res.modality_aucs
        effect = float(means[0] - means[1]) if means.size == 2 else None
        return cls(
            var_modality_reader=float(var_tr),
            error_variance=c.var_error,
            cov1=c.cov1,
            cov2=c.cov2,
            cov3=c.cov3,
            n_cases=n_cases,
            effect=effect,
        )

    def to_dict(self) -> dict[str, float | int | None]:
        return asdict(self)


def _pilot(pilot: object, pilot_cases: object) -> PilotVarianceComponents:
    if isinstance(pilot, ORResult):
        if pilot_cases is None:
            raise InvalidParameterError(
                f"The 'pilot_cases' parameter of {_FUNC} is needed with an ORResult: the number of cases the pilot "
                "was read on (the error covariances scale with it)."
            )
        n = check_positive_int(pilot_cases, name="pilot_cases", func=_FUNC, minimum=2)
        return PilotVarianceComponents.from_or_result(pilot, n_cases=n)
    if pilot_cases is not None:
        raise InvalidParameterError(
            f"The 'pilot_cases' parameter of {_FUNC} goes with an ORResult only; components carry their n_cases."
        )
    if isinstance(pilot, PilotVarianceComponents):
        return pilot
    if isinstance(pilot, Mapping):
        names = [f.name for f in fields(PilotVarianceComponents)]
        missing = [n for n in names[:6] if n not in pilot]
        unknown = [k for k in pilot if k not in names]
        if missing or unknown:
            raise InvalidParameterError(
                f"The 'pilot' parameter of {_FUNC}: a mapping must hold {names[:6]} (and optionally 'effect'). "
                + (f"Missing {missing}. " if missing else "")
                + (f"Unknown {unknown}." if unknown else "")
            )
        return PilotVarianceComponents(**pilot)
    raise InvalidParameterError(
        f"The 'pilot' parameter of {_FUNC} must be an ORResult, a PilotVarianceComponents or a mapping of its "
        "fields. Got "
        f"{type(pilot).__name__} instead."
    )


def _counts(value: object, *, name: str, minimum: int) -> np.ndarray:
    """An int or a sequence of ints >= minimum as a 1-d array of distinct values, in the order given."""
    items = [value] if isinstance(value, (int, np.integer)) and not isinstance(value, bool) else value
    if (
        not isinstance(items, (Sequence, np.ndarray, range))
        or isinstance(items, (str, bytes))
        or len(items) == 0
    ):
        raise InvalidParameterError(
            f"The '{name}' parameter of {_FUNC} must be an int or a non-empty sequence of ints >= {minimum}. Got "
            f"{value!r} instead."
        )
    out = []
    for v in items:
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or int(v) < minimum:
            raise InvalidParameterError(
                f"The '{name}' parameter of {_FUNC} must hold ints >= {minimum}. Got {v!r} instead."
            )
        if int(v) not in out:
            out.append(int(v))
    return np.array(out, dtype=np.int64)


def _unit(value: object, *, name: str) -> float:
    if not is_number(value) or not 0 < float(value) < 1:
        raise InvalidParameterError(
            f"The '{name}' parameter of {_FUNC} must be a float in (0, 1). Got {value!r} instead."
        )
    return float(value)


def _power(
    p: PilotVarianceComponents,
    effect: float,
    readers: np.ndarray,
    cases: np.ndarray,
    alpha: float,
    analysis: str,
) -> dict[str, np.ndarray]:
    """Power, noncentrality, ddf and critical value for every (readers, cases) pair of the broadcast arrays."""
    from scipy import stats

    j = np.asarray(readers, dtype=np.float64)
    s = p.n_cases / np.asarray(cases, dtype=np.float64)
    v = max(p.var_modality_reader, 0.0)
    c = max(p.cov2 - p.cov3, 0.0)
    within = p.error_variance - p.cov1
    if analysis == "FRRC":
        den = s * (within + (j - 1) * c)
        ddf = np.full(np.broadcast(j, s).shape, np.inf)
    elif analysis == "RRFC":
        den = v + s * (within - c)
        ddf = np.broadcast_to(j - 1, den.shape).astype(np.float64)
    else:
        den = v + s * (within + (j - 1) * c)
        tr = v + s * (within - c)
        with np.errstate(divide="ignore"):
            ddf = np.where(tr != 0, (j - 1) * den**2 / np.where(tr != 0, tr, 1.0) ** 2, np.inf)
    if np.any(den <= 0):
        raise InvalidParameterError(
            f"The 'pilot' parameter of {_FUNC}: its components give a test denominator <= 0 for the {analysis} "
            f"analysis (var_modality_reader={p.var_modality_reader:.4g}, error_variance - cov1={within:.4g}); the "
            "pilot cannot size a study."
        )
    lam = j * effect**2 / (2 * den)
    finite = np.isfinite(ddf)
    dfd = np.where(finite, ddf, 1.0)
    crit = np.where(finite, stats.f.ppf(1 - alpha, 1, dfd), stats.chi2.ppf(1 - alpha, 1))
    # SciPy's noncentral F is wrong at noncentrality 0 (ncf.sf gives 1 - alpha - 1): the central one there
    pos = lam > 0
    nc = np.where(pos, lam, 1.0)
    power = np.where(
        finite,
        np.where(pos, stats.ncf.sf(crit, 1, dfd, nc), stats.f.sf(crit, 1, dfd)),
        np.where(pos, stats.ncx2.sf(crit, 1, nc), stats.chi2.sf(crit, 1)),
    )
    return {"power": power, "noncentrality": lam, "ddf": ddf, "critical_value": crit}


def _power_limit(p: PilotVarianceComponents, effect: float, j: int, alpha: float, analysis: str) -> float:
    """The power as the number of cases grows without bound (1 unless readers are random and var_TR > 0)."""
    from scipy import stats

    v = max(p.var_modality_reader, 0.0)
    if analysis == "FRRC" or v == 0 or j < 2:
        return 1.0
    lam = j * effect**2 / (2 * v)
    crit = stats.f.ppf(1 - alpha, 1, j - 1)
    return float(stats.ncf.sf(crit, 1, j - 1, lam)) if lam > 0 else float(stats.f.sf(crit, 1, j - 1))


def _minimum_cases(
    p: PilotVarianceComponents,
    effect: float,
    j: int,
    alpha: float,
    analysis: str,
    target: float,
    max_cases: int,
) -> tuple[int | None, float]:
    """The smallest N in [2, max_cases] whose power reaches ``target`` (scanned in growing blocks), and its power."""
    if _power_limit(p, effect, j, alpha, analysis) < target:
        return None, math.nan
    lo = 2
    size = 512
    while lo <= max_cases:
        ks = np.arange(lo, min(lo + size, max_cases + 1))
        pw = _power(p, effect, np.full(ks.shape, j), ks, alpha, analysis)["power"]
        hit = np.flatnonzero(pw >= target)
        if hit.size:
            return int(ks[hit[0]]), float(pw[hit[0]])
        lo = int(ks[-1]) + 1
        size *= 4
    return None, math.nan


@dataclass(frozen=True)
class MRMCSampleSizeResult:
    """The power of reader studies of several sizes and the fewest cases for a target power.

    Attributes
    ----------
    power : DataFrame
        One row per (n_readers, n_cases) of the grid: ``power``, ``noncentrality``, ``ddf`` (inf for FRRC, whose
        test is chi-square) and ``critical_value`` of the test at ``alpha``.
    minimum_cases : DataFrame
        One row per reader count: the smallest ``n_cases`` (<NA> when none up to ``max_cases`` suffices) whose power
        reaches ``target_power``, that ``power``, and ``power_limit``, the power with infinitely many cases (below 1
        when readers are random and var_TR > 0: more cases cannot make up for too few readers).
    pilot : PilotVarianceComponents
    effect, alpha, target_power : float
    analysis : str
    """

    power: pd.DataFrame
    minimum_cases: pd.DataFrame
    pilot: PilotVarianceComponents
    effect: float
    alpha: float
    target_power: float
    analysis: str

    def power_at(self, n_readers: int, n_cases: int) -> float:
        """The power of a study of ``n_readers`` readers and ``n_cases`` cases (on or off the grid)."""
        j = _counts(n_readers, name="n_readers", minimum=1 if self.analysis == "FRRC" else 2)
        k = _counts(n_cases, name="n_cases", minimum=2)
        return float(_power(self.pilot, self.effect, j[:1], k[:1], self.alpha, self.analysis)["power"][0])

    def summary(self) -> str:
        """Markdown: the settings and the fewest cases per reader count."""
        from ..io import markdown_table

        head = (
            f"{self.analysis} power for an AUC difference of {self.effect:.4g} at alpha = {self.alpha:g} "
            f"(pilot of {self.pilot.n_cases} cases, Hillis, Obuchowski and Berbaum 2011)."
        )
        t = self.minimum_cases.copy()
        t["power"] = t["power"].round(4)
        t["power_limit"] = t["power_limit"].round(4)
        return (
            head
            + f"\n\nFewest cases for power >= {self.target_power:g}:\n\n"
            + markdown_table(t, decimals=4)
            + "\n"
        )


def mrmc_sample_size(
    pilot: ORResult | PilotVarianceComponents | Mapping[str, float],
    *,
    effect: float | None = None,
    n_readers: int | Sequence[int],
    n_cases: int | Sequence[int],
    pilot_cases: int | None = None,
    alpha: float = 0.05,
    analysis: str = "RRRC",
    target_power: float = 0.8,
    max_cases: int = 100_000,
) -> MRMCSampleSizeResult:
    """Power of a two-modality reader study from a pilot's OR variance components, and the fewest cases needed.

    The formulas are in the module docstring (Hillis, Obuchowski and Berbaum 2011): the pilot's error variance and
    covariances are scaled by ``pilot.n_cases / n_cases``, its reader-by-modality variance is kept, and the power is
    that of the OR test (Hillis's ddf) under the noncentral F (chi-square for fixed readers).

    Parameters
    ----------
    pilot : ORResult, PilotVarianceComponents or mapping of its fields
        The pilot study: its :func:`~cxreval.mrmc.or_analysis` (jackknife, DeLong or unbiased covariances alike)
        or its components.
    effect : float, optional
        The difference of the two modalities' mean AUCs the study should detect (its sign does not matter);
        default: the pilot's observed difference (``pilot.effect``).
    n_readers : int or sequence of int
        Readers of the planned study (>= 2; >= 1 for ``analysis='FRRC'``).
    n_cases : int or sequence of int
        Cases of the planned study (>= 2), with the pilot's proportion of diseased cases.
    pilot_cases : int, optional
        The number of cases of the pilot, needed when ``pilot`` is an ORResult.
    alpha : float, default=0.05
        The two-sided significance level of the test.
    analysis : {'RRRC', 'FRRC', 'RRFC'}, default='RRRC'
        Readers and cases random; readers fixed; cases fixed.
    target_power : float, default=0.8
        The power :attr:`MRMCSampleSizeResult.minimum_cases` is the fewest cases for, at each reader count.
    max_cases : int, default=100000
        The largest number of cases searched.

    Returns
    -------
    res : MRMCSampleSizeResult
        ``power`` over the grid ``n_readers`` x ``n_cases``; ``minimum_cases`` per reader count.

    Raises
    ------
    InvalidParameterError
        A pilot without its components, no effect, counts or levels out of range.

    References
    ----------
    .. [1] Hillis SL, Obuchowski NA, Berbaum KS (2011). Power estimation for multireader ROC methods: an updated
       and unified approach. Acad Radiol 18(2):129-142. https://doi.org/10.1016/j.acra.2010.09.007

    Examples
    --------
    The Van Dyke et al. pilot (RJafroc's ``dataset02``; 5 readers, 114 cases, jackknife covariances):

    >>> from cxreval.mrmc import mrmc_sample_size
    >>> pilot = {"var_modality_reader": 0.00020040252, "error_variance": 0.00080228827, "cov1": 0.00034661371,
    ...          "cov2": 0.00034407483, "cov3": 0.00023902837, "n_cases": 114}
    >>> res = mrmc_sample_size(pilot, effect=0.0438, n_readers=[6, 10], n_cases=[111, 165])
    >>> res.power.round(3)[["n_readers", "n_cases", "power"]].values.tolist()
    [[6.0, 111.0, 0.553], [6.0, 165.0, 0.682], [10.0, 111.0, 0.666], [10.0, 165.0, 0.805]]
    >>> res.minimum_cases[["n_readers", "n_cases"]].values.tolist()
    [[6, 251], [10, 163]]
    """
    import pandas as pd

    p = _pilot(pilot, pilot_cases)
    analysis = check_choice(analysis, ANALYSES, name="analysis", func=_FUNC)
    if effect is None:
        effect = p.effect
        if effect is None:
            raise InvalidParameterError(
                f"The 'effect' parameter of {_FUNC} is needed: the pilot holds no observed effect. Pass the "
                "difference of mean AUCs the study should detect, e.g. effect=0.05."
            )
    if not is_number(effect) or not math.isfinite(effect):
        raise InvalidParameterError(
            f"The 'effect' parameter of {_FUNC} must be a finite number (a difference of "
            f"AUCs). Got {effect!r} instead."
        )
    effect = abs(float(effect))
    readers = _counts(n_readers, name="n_readers", minimum=1 if analysis == "FRRC" else 2)
    cases = _counts(n_cases, name="n_cases", minimum=2)
    alpha = _unit(alpha, name="alpha")
    target = _unit(target_power, name="target_power")
    if isinstance(max_cases, bool) or not isinstance(max_cases, (int, np.integer)) or max_cases < 2:
        raise InvalidParameterError(
            f"The 'max_cases' parameter of {_FUNC} must be an int >= 2. Got {max_cases!r} instead."
        )
    jj, kk = np.meshgrid(readers, cases, indexing="ij")
    grid = _power(p, effect, jj.ravel(), kk.ravel(), alpha, analysis)
    power = pd.DataFrame(
        {"n_readers": jj.ravel(), "n_cases": kk.ravel(), **grid}, columns=list(POWER_COLUMNS)
    )
    rows = []
    for j in readers:
        k, pw = _minimum_cases(p, effect, int(j), alpha, analysis, target, int(max_cases))
        rows.append((int(j), k, pw, _power_limit(p, effect, int(j), alpha, analysis)))
    minimum = pd.DataFrame(rows, columns=list(MINIMUM_COLUMNS))
    minimum["n_cases"] = minimum["n_cases"].astype("Int64")
    return MRMCSampleSizeResult(
        power=power,
        minimum_cases=minimum,
        pilot=p,
        effect=effect,
        alpha=alpha,
        target_power=target,
        analysis=analysis,
    )
