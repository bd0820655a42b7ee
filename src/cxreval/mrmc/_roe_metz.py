"""Multi-reader multi-case ratings simulated by the Roe and Metz (1997) model, one study or thousands at once.

The decision variable of reader ``j`` for case ``k`` (truth ``t``) in modality ``i`` is

    X_ijk = mu_t + delta_i * t + R_j^t + (TR)_ij^t + C_k + (TC)_ik + (RC)_jk + E_ijk,

with ``mu_0 = 0`` (non-diseased) and ``mu_1 = mu`` (diseased), and independent zero-mean normal effects: the reader
``R`` (variance ``var_reader``), reader-by-modality ``TR`` (``var_modality_reader``), case ``C`` (``var_case``),
case-by-modality ``TC`` (``var_modality_case``), reader-by-case ``RC`` (``var_reader_case``) and the error ``E``
(``var_error``, which holds the modality-by-reader-by-case interaction). The reader effects are drawn separately
for the diseased and the non-diseased cases (Roe and Metz's superscript ``t``), the case effects belong to a case
and so to its truth. Each reader's ROC curve is then equal-variance binormal, and the expected AUC of modality
``i`` over readers and cases is the closed form

    AUC_i = Phi((mu + delta_i) / sqrt(2 V)),  V = var_reader + var_modality_reader + var_case
                                                  + var_modality_case + var_reader_case + var_error,

exact for the empirical (Mann-Whitney) AUC of any number of cases, since a diseased and a non-diseased case share
no effect but the reader's, which is drawn per truth.

Roe and Metz's variance structures (``ROE_METZ_SETTINGS``): the first letter is the correlation of the data
(``'H'``: ``var_case = var_modality_case = 0.3``, ``var_reader_case = 0.2``, ``var_error = 0.2``; ``'L'``: 0.1, 0.1,
0.2, 0.6), the second the reader variability (``'L'``: ``var_reader = var_modality_reader = 0.0055``; ``'H'``: 0.011,
0.03 and 0.056 for ``mu`` 0.75, 1.5 and 2.5), each with ``mu`` in {0.75, 1.5, 2.5} (AUC about 0.70, 0.86, 0.96): the
settings Roe and Metz, Hillis (2005, 2007, 2012) and Hillis, Obuchowski and Berbaum (2011) validate the DBM and OR
methods on, and the configurations the FDA's iMRMC distributes (``RMconfigurations``).

References
----------
.. [1] Roe CA, Metz CE (1997). Dorfman-Berbaum-Metz method for statistical analysis of multireader,
   multimodality receiver operating characteristic data: validation with computer simulation. Acad Radiol
   4(4):298-303.
.. [2] Hillis SL (2012). Simulation of unequal-variance binormal multireader ROC decision data: an extension of
   the Roe and Metz simulation model. Acad Radiol 19(12):1518-1528. https://doi.org/10.1016/j.acra.2012.09.011
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from dataclasses import asdict, dataclass, fields, replace
from types import MappingProxyType

import numpy as np

from .._typing import RNGLike
from .._validation import check_positive_int, did_you_mean, float_array, is_number, normalize_rng
from ..exceptions import InvalidParameterError, UnknownNameError

__all__ = [
    "ROE_METZ_SETTINGS",
    "RoeMetzParameters",
    "RoeMetzStudy",
    "RoeMetzStudies",
    "simulate_roe_metz",
    "simulate_roe_metz_studies",
]

_FUNC = "simulate_roe_metz"


@dataclass(frozen=True, slots=True)
class RoeMetzParameters:
    """The separation and the six variance components of the Roe and Metz model (module docstring).

    Attributes
    ----------
    mu : float
        Mean decision variable of the diseased cases (the non-diseased have 0) in a modality without shift.
    var_reader, var_modality_reader, var_case, var_modality_case, var_reader_case, var_error : float
        The variances of the reader, reader-by-modality, case, case-by-modality, reader-by-case and error effects
        (Roe and Metz's sigma^2_R, sigma^2_TR, sigma^2_C, sigma^2_TC, sigma^2_RC, sigma^2_epsilon), each >= 0.
    """

    mu: float
    var_reader: float
    var_modality_reader: float
    var_case: float
    var_modality_case: float
    var_reader_case: float
    var_error: float

    def __post_init__(self) -> None:
        for f in fields(self):
            v = getattr(self, f.name)
            if not is_number(v) or not math.isfinite(v):
                raise InvalidParameterError(
                    f"The '{f.name}' parameter of RoeMetzParameters must be a finite number. Got {v!r} instead."
                )
            if f.name != "mu" and v < 0:
                raise InvalidParameterError(
                    f"The '{f.name}' parameter of RoeMetzParameters is a variance and must be >= 0. Got {v!r} "
                    "instead."
                )
            object.__setattr__(self, f.name, float(v))
        if self.total_variance <= 0:
            raise InvalidParameterError("RoeMetzParameters need at least one positive variance component.")

    @property
    def total_variance(self) -> float:
        """V, the variance of one decision variable: the sum of the six components."""
        return (
            self.var_reader
            + self.var_modality_reader
            + self.var_case
            + self.var_modality_case
            + self.var_reader_case
            + self.var_error
        )

    def auc(self, shift: float = 0.0) -> float:
        """Expected empirical AUC of a modality whose diseased mean is ``mu + shift``: Phi((mu + shift) / sqrt(2V))."""
        from scipy.stats import norm

        return float(norm.cdf((self.mu + float(shift)) / math.sqrt(2.0 * self.total_variance)))

    def shift_for_auc(self, auc: float) -> float:
        """The shift ``delta`` of the diseased mean that gives a modality the expected AUC ``auc`` (0 < auc < 1)."""
        from scipy.stats import norm

        if isinstance(auc, bool) or not isinstance(auc, (int, float, np.floating)) or not 0 < float(auc) < 1:
            raise InvalidParameterError(
                f"The 'auc' parameter of shift_for_auc must be in (0, 1). Got {auc!r} instead."
            )
        return float(norm.ppf(float(auc)) * math.sqrt(2.0 * self.total_variance) - self.mu)

    def to_dict(self) -> dict[str, float]:
        return asdict(self)


# (var_case, var_modality_case, var_reader_case, var_error) by the correlation of the data
_CASE_VARIANCES = {"H": (0.3, 0.3, 0.2, 0.2), "L": (0.1, 0.1, 0.2, 0.6)}
# var_reader = var_modality_reader by the reader variability and mu
_READER_VARIANCES = {"L": {0.75: 0.0055, 1.5: 0.0055, 2.5: 0.0055}, "H": {0.75: 0.011, 1.5: 0.03, 2.5: 0.056}}


def _settings() -> Mapping[str, RoeMetzParameters]:
    out = {}
    for data in ("L", "H"):
        c, tc, rc, e = _CASE_VARIANCES[data]
        for readers in ("L", "H"):
            for mu, r in _READER_VARIANCES[readers].items():
                out[f"{data}{readers}-{mu:g}"] = RoeMetzParameters(
                    mu=mu,
                    var_reader=r,
                    var_modality_reader=r,
                    var_case=c,
                    var_modality_case=tc,
                    var_reader_case=rc,
                    var_error=e,
                )
    return MappingProxyType(out)


ROE_METZ_SETTINGS: Mapping[str, RoeMetzParameters] = _settings()
"""Roe and Metz's twelve settings by name, ``'<data correlation><reader variability>-<mu>'``: ``'LL-0.75'`` ...
``'HH-2.5'`` (module docstring)."""


@dataclass(frozen=True)
class RoeMetzStudy:
    """One simulated reader study.

    Attributes
    ----------
    ratings : ndarray of shape (n_modalities, n_readers, n_cases)
        The decision variables (float64, read-only); every reader reads every case in every modality.
    truth : ndarray of shape (n_cases,)
        True for a diseased case; the non-diseased cases come first.
    parameters : RoeMetzParameters
        The model simulated from.
    shifts : tuple of float
        The shift of the diseased mean in each modality (``delta_i``).
    """

    ratings: np.ndarray
    truth: np.ndarray
    parameters: RoeMetzParameters
    shifts: tuple[float, ...]

    def true_auc(self) -> np.ndarray:
        """The expected AUC of each modality over readers and cases (closed form), shape (n_modalities,)."""
        return np.array([self.parameters.auc(s) for s in self.shifts])


@dataclass(frozen=True)
class RoeMetzStudies:
    """Many simulated reader studies of one design (the same cases' truth), drawn at once.

    Attributes
    ----------
    ratings : ndarray of shape (n_studies, n_modalities, n_readers, n_cases)
        The decision variables (float64, read-only).
    truth : ndarray of shape (n_cases,)
        True for a diseased case (non-diseased first), the same in every study.
    parameters : RoeMetzParameters
    shifts : tuple of float

    Iterating gives each study as a :class:`RoeMetzStudy`; ``len()`` is the number of studies.
    """

    ratings: np.ndarray
    truth: np.ndarray
    parameters: RoeMetzParameters
    shifts: tuple[float, ...]

    def __len__(self) -> int:
        return int(self.ratings.shape[0])

    def __iter__(self) -> Iterator[RoeMetzStudy]:
        return (self.study(i) for i in range(len(self)))

    def study(self, index: int) -> RoeMetzStudy:
        """Study ``index`` (its ratings a view of :attr:`ratings`)."""
        return RoeMetzStudy(self.ratings[index], self.truth, self.parameters, self.shifts)

    def true_auc(self) -> np.ndarray:
        """The expected AUC of each modality over readers and cases (closed form), shape (n_modalities,)."""
        return np.array([self.parameters.auc(s) for s in self.shifts])


def _check_parameters(parameters: object, mu: object) -> RoeMetzParameters:
    if isinstance(parameters, str):
        if parameters not in ROE_METZ_SETTINGS:
            raise UnknownNameError(
                f"The 'parameters' parameter of {_FUNC}: unknown Roe-Metz setting {parameters!r}; the settings are "
                f"{list(ROE_METZ_SETTINGS)}.{did_you_mean(parameters, ROE_METZ_SETTINGS)}"
            )
        out = ROE_METZ_SETTINGS[parameters]
    elif isinstance(parameters, RoeMetzParameters):
        out = parameters
    else:
        raise InvalidParameterError(
            f"The 'parameters' parameter of {_FUNC} must be a setting name such as 'HL-1.5' or a RoeMetzParameters. "
            f"Got {parameters!r} instead."
        )
    if mu is not None:
        if not is_number(mu) or not math.isfinite(mu):
            raise InvalidParameterError(
                f"The 'mu' parameter of {_FUNC} must be a finite number or None. Got {mu!r} instead."
            )
        out = replace(out, mu=float(mu))
    return out


def _check_shifts(delta: object, n_modalities: int) -> tuple[float, ...]:
    """``delta`` as one shift per modality: a number shifts every modality but the first by it."""
    if isinstance(delta, bool):
        raise InvalidParameterError(
            f"The 'delta' parameter of {_FUNC} must be a number or one number per modality. "
            f"Got {delta!r} instead."
        )
    if isinstance(delta, (int, float, np.integer, np.floating)):
        shifts = np.array([0.0] + [float(delta)] * (n_modalities - 1))
    else:
        shifts = float_array(
            delta,
            InvalidParameterError(
                f"The 'delta' parameter of {_FUNC} must be a number or one number per modality. Got {delta!r} "
                "instead."
            ),
        )
        if shifts.shape != (n_modalities,):
            raise InvalidParameterError(
                f"The 'delta' parameter of {_FUNC} must be a number or hold one shift per modality "
                f"({n_modalities}). Got shape {shifts.shape} instead."
            )
    if not np.isfinite(shifts).all():
        raise InvalidParameterError(
            f"The 'delta' parameter of {_FUNC} must be finite. Got {delta!r} instead."
        )
    return tuple(float(s) for s in shifts)


def _draw(
    gen: np.random.Generator,
    p: RoeMetzParameters,
    shifts: tuple[float, ...],
    n_studies: int,
    n_readers: int,
    n_neg: int,
    n_pos: int,
) -> np.ndarray:
    """Ratings (n_studies, T, R, n_neg + n_pos): each effect drawn once with the shape it is shared over."""
    n_mod = len(shifts)
    out = np.empty((n_studies, n_mod, n_readers, n_neg + n_pos))
    sd = {f.name: math.sqrt(getattr(p, f.name)) for f in fields(p) if f.name != "mu"}
    for block, n, mean in (
        (slice(0, n_neg), n_neg, np.zeros(n_mod)),
        (slice(n_neg, n_neg + n_pos), n_pos, p.mu + np.asarray(shifts)),
    ):
        x = (
            gen.standard_normal((n_studies, n_mod, n_readers, n))
            if sd["var_error"]
            else np.zeros((n_studies, n_mod, n_readers, n))
        )
        x *= sd["var_error"]
        x += mean[None, :, None, None]
        for name, shape in (
            ("var_reader", (n_studies, 1, n_readers, 1)),
            ("var_modality_reader", (n_studies, n_mod, n_readers, 1)),
            ("var_case", (n_studies, 1, 1, n)),
            ("var_modality_case", (n_studies, n_mod, 1, n)),
            ("var_reader_case", (n_studies, 1, n_readers, n)),
        ):
            if sd[name]:
                x += sd[name] * gen.standard_normal(shape)
        out[..., block] = x
    return out


def _simulate(
    n_studies: int,
    n_readers: object,
    n_cases_negative: object,
    n_cases_positive: object,
    n_modalities: object,
    delta: object,
    parameters: object,
    mu: object,
    *,
    rng: RNGLike,
    func: str,
) -> tuple[np.ndarray, np.ndarray, RoeMetzParameters, tuple[float, ...]]:
    n_r = check_positive_int(n_readers, name="n_readers", func=func)
    n0 = check_positive_int(n_cases_negative, name="n_cases_negative", func=func)
    n1 = check_positive_int(n_cases_positive, name="n_cases_positive", func=func)
    n_t = check_positive_int(n_modalities, name="n_modalities", func=func)
    p = _check_parameters(parameters, mu)
    shifts = _check_shifts(delta, n_t)
    gen = normalize_rng(rng)
    ratings = _draw(gen, p, shifts, n_studies, n_r, n0, n1)
    ratings.setflags(write=False)
    truth = np.r_[np.zeros(n0, bool), np.ones(n1, bool)]
    truth.setflags(write=False)
    return ratings, truth, p, shifts


def simulate_roe_metz(
    *,
    n_readers: int,
    n_cases_negative: int,
    n_cases_positive: int,
    n_modalities: int = 2,
    delta: float | np.ndarray = 0.0,
    parameters: str | RoeMetzParameters = "HL-1.5",
    mu: float | None = None,
    rng: RNGLike = None,
) -> RoeMetzStudy:
    """Simulate one fully crossed reader study (every reader reads every case in every modality) by Roe and Metz.

    Parameters
    ----------
    n_readers, n_cases_negative, n_cases_positive : int
        Readers, non-diseased and diseased cases (each >= 1).
    n_modalities : int, default=2
    delta : float or array-like of shape (n_modalities,), default=0.0
        The shift of the diseased mean per modality; a number shifts every modality but the first by it (0: the
        null hypothesis of equal AUCs). :meth:`RoeMetzParameters.shift_for_auc` turns an AUC into a shift.
    parameters : str or RoeMetzParameters, default='HL-1.5'
        A name of :data:`ROE_METZ_SETTINGS` or the model's parameters.
    mu : float, optional
        The separation of the diseased mean, replacing that of ``parameters``.
    rng : RNGLike, default=None
        The random generator or seed.

    Returns
    -------
    res : RoeMetzStudy
        ``ratings`` (n_modalities, n_readers, n_cases) and ``truth`` (n_cases,), non-diseased cases first.

    Raises
    ------
    InvalidParameterError
        A count below 1, a negative variance, ``delta`` of the wrong length; an unknown setting name is an
        :class:`~cxreval.exceptions.UnknownNameError`.

    See Also
    --------
    simulate_roe_metz_studies : many studies of one design at once.

    Examples
    --------
    >>> from cxreval.mrmc import simulate_roe_metz
    >>> study = simulate_roe_metz(n_readers=5, n_cases_negative=50, n_cases_positive=50, rng=0)
    >>> study.ratings.shape, int(study.truth.sum())
    ((2, 5, 100), 50)
    >>> round(float(study.true_auc()[0]), 4)  # Phi(1.5 / sqrt(2 * 1.011))
    0.8543
    """
    design = (n_readers, n_cases_negative, n_cases_positive, n_modalities, delta, parameters, mu)
    ratings, truth, p, shifts = _simulate(1, *design, rng=rng, func=_FUNC)
    return RoeMetzStudy(ratings[0], truth, p, shifts)


def simulate_roe_metz_studies(
    n_studies: int,
    *,
    n_readers: int,
    n_cases_negative: int,
    n_cases_positive: int,
    n_modalities: int = 2,
    delta: float | np.ndarray = 0.0,
    parameters: str | RoeMetzParameters = "HL-1.5",
    mu: float | None = None,
    rng: RNGLike = None,
) -> RoeMetzStudies:
    """Simulate ``n_studies`` independent reader studies of one design by Roe and Metz, drawn as one array.

    The options are those of :func:`simulate_roe_metz`; ``ratings`` has shape (n_studies, n_modalities,
    n_readers, n_cases) and takes 8 bytes per rating (2,000 studies of 2 x 5 x 100: 16 MB).

    Returns
    -------
    res : RoeMetzStudies

    Examples
    --------
    >>> from cxreval.mrmc import simulate_roe_metz_studies
    >>> sims = simulate_roe_metz_studies(3, n_readers=4, n_cases_negative=20, n_cases_positive=10,
    ...                                  parameters="LL-0.75", rng=1)
    >>> len(sims), sims.ratings.shape, sims.study(2).ratings.shape
    (3, (3, 2, 4, 30), (2, 4, 30))
    """
    n = check_positive_int(n_studies, name="n_studies", func="simulate_roe_metz_studies")
    design = (n_readers, n_cases_negative, n_cases_positive, n_modalities, delta, parameters, mu)
    ratings, truth, p, shifts = _simulate(n, *design, rng=rng, func="simulate_roe_metz_studies")
    return RoeMetzStudies(ratings, truth, p, shifts)
