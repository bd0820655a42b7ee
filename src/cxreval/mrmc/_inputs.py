"""The boundary checks of the MRMC analyses: ratings (modalities, readers, cases), truth, clusters and names."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .._validation import float_array
from ..exceptions import InvalidParameterError

__all__ = ["MRMCInputs", "check_mrmc_inputs", "check_names"]


@dataclass(frozen=True)
class MRMCInputs:
    """Validated arrays: ``ratings`` float64 (T, R, N) with NaN = not read, ``truth`` bool (N,), ``clusters`` the
    cluster code of each case (N,) or None, ``read`` bool (T, R, N), ``complete`` whether every case was read,
    ``modalities`` and ``readers`` the labels of the first two axes (:func:`check_names`)."""

    ratings: np.ndarray
    truth: np.ndarray
    clusters: np.ndarray | None
    read: np.ndarray
    complete: bool
    modalities: tuple[str, ...]
    readers: tuple[str, ...]


def _as_float_array(value: object, *, name: str, func: str, ndim: int) -> np.ndarray:
    arr = float_array(
        value,
        InvalidParameterError(
            f"The '{name}' parameter of {func} must be a numeric array-like. Got {type(value).__name__} "
            "instead."
        ),
    )
    if arr.ndim != ndim:
        raise InvalidParameterError(
            f"The '{name}' parameter of {func} must have {ndim} dimension(s). Got shape {arr.shape} instead."
        )
    return arr


def check_truth(truth: object, *, n_cases: int, func: str) -> np.ndarray:
    """``truth`` as a bool array (N,): 1/True diseased, 0/False not; anything else is refused."""
    try:
        arr = np.asarray(truth)
    except (TypeError, ValueError) as exc:  # pragma: no cover - np.asarray accepts nearly anything
        raise InvalidParameterError(f"The 'truth' parameter of {func} must be a 0/1 array-like.") from exc
    if arr.ndim != 1:
        raise InvalidParameterError(
            f"The 'truth' parameter of {func} must be one-dimensional (one value per case). Got shape {arr.shape} "
            "instead."
        )
    if arr.dtype == bool:
        out = arr
    else:
        try:
            num = arr.astype(np.float64)
        except (TypeError, ValueError) as exc:
            raise InvalidParameterError(
                f"The 'truth' parameter of {func} must hold 0 (not diseased) and 1 (diseased). Got values of "
                f"type {arr.dtype} instead."
            ) from exc
        bad = ~np.isin(num, (0.0, 1.0))
        if bad.any():
            raise InvalidParameterError(
                f"The 'truth' parameter of {func} must be binary: 0 (not diseased) or 1 (diseased). Got "
                f"{sorted({float(v) for v in num[bad]})[:5]} instead."
            )
        out = num == 1.0
    if out.shape[0] != n_cases:
        raise InvalidParameterError(
            f"The 'truth' parameter of {func} has {out.shape[0]} cases but the ratings have {n_cases} (their last "
            "axis): one truth per case."
        )
    return out


def check_clusters(clusters: object, *, n_cases: int, func: str) -> np.ndarray | None:
    """The cluster code (0..I-1) of each case, or None."""
    if clusters is None:
        return None
    try:
        arr = np.asarray(clusters)
    except (TypeError, ValueError) as exc:  # pragma: no cover
        raise InvalidParameterError(
            f"The 'clusters' parameter of {func} must be an array-like of ids."
        ) from exc
    if arr.ndim != 1 or arr.shape[0] != n_cases:
        raise InvalidParameterError(
            f"The 'clusters' parameter of {func} must hold one patient id per case ({n_cases}). Got shape "
            f"{arr.shape} instead."
        )
    if arr.dtype == object and any(v is None or (isinstance(v, float) and np.isnan(v)) for v in arr):
        raise InvalidParameterError(f"The 'clusters' parameter of {func} has a missing id.")
    try:
        _, codes = np.unique(arr, return_inverse=True)
    except TypeError as exc:
        raise InvalidParameterError(
            f"The 'clusters' parameter of {func} must hold comparable ids (all strings or all numbers)."
        ) from exc
    return codes.reshape(-1).astype(np.intp)


def check_names(names: Sequence[object] | None, n: int, *, name: str, func: str) -> tuple[str, ...]:
    """Labels of the modalities or readers: ``'1'..'n'`` when None, else n distinct strings."""
    if names is None:
        return tuple(str(i + 1) for i in range(n))
    if isinstance(names, (str, bytes)) or not isinstance(names, Sequence | np.ndarray):
        raise InvalidParameterError(
            f"The '{name}' parameter of {func} must be a sequence of {n} labels. Got {type(names).__name__} "
            "instead."
        )
    out = tuple(str(v) for v in names)
    if len(out) != n or len(set(out)) != n:
        raise InvalidParameterError(
            f"The '{name}' parameter of {func} must hold {n} distinct labels. Got {list(out)!r} instead."
        )
    return out


def check_mrmc_inputs(
    ratings: object,
    truth: object,
    clusters: object = None,
    *,
    func: str,
    modality_names: Sequence[str] | None = None,
    reader_names: Sequence[str] | None = None,
    min_readers: int = 1,
    min_per_class: int = 2,
) -> MRMCInputs:
    """Validate the arrays of an MRMC analysis.

    Every (modality, reader) must have read at least ``min_per_class`` diseased and non-diseased cases (the
    jackknife and the DeLong variance divide by n - 1), and there must be at least ``min_readers`` readers.
    """
    arr = _as_float_array(ratings, name="ratings", func=func, ndim=3)
    n_mod, n_rdr, n_cases = arr.shape
    if n_mod < 1 or n_cases < 1:
        raise InvalidParameterError(
            f"The 'ratings' parameter of {func} must hold at least one modality and one case. Got shape "
            f"{arr.shape} instead."
        )
    if n_rdr < min_readers:
        raise InvalidParameterError(
            f"The 'ratings' parameter of {func} must hold at least {min_readers} readers (axis 1): the analysis "
            f"treats readers as a random sample and estimates their variance. Got {n_rdr}."
        )
    y = check_truth(truth, n_cases=n_cases, func=func)
    codes = check_clusters(clusters, n_cases=n_cases, func=func)
    read = ~np.isnan(arr)
    mods = check_names(modality_names, n_mod, name="modality_names", func=func)
    rdrs = check_names(reader_names, n_rdr, name="reader_names", func=func)
    readers_per_modality = read.any(axis=2).sum(axis=1)
    for few in np.flatnonzero(readers_per_modality < min_readers):
        raise InvalidParameterError(
            f"The 'ratings' parameter of {func}: modality {mods[few]!r} is read by {readers_per_modality[few]} "
            f"reader(s) only; the analysis needs at least {min_readers} readers in every modality (their variance "
            "is estimated)."
        )
    n_pos = (read & y).sum(axis=2)
    n_neg = (read & ~y).sum(axis=2)
    for t in range(n_mod):
        for r in range(n_rdr):
            if n_pos[t, r] < min_per_class or n_neg[t, r] < min_per_class:
                raise InvalidParameterError(
                    f"The 'ratings' parameter of {func}: modality {mods[t]!r}, reader {rdrs[r]!r} read "
                    f"{n_pos[t, r]} diseased and {n_neg[t, r]} non-diseased cases; each (modality, reader) must "
                    f"read at least {min_per_class} of each class (the AUC and its variance need both)."
                )
    return MRMCInputs(
        ratings=arr,
        truth=y,
        clusters=codes,
        read=read,
        complete=bool(read.all()),
        modalities=mods,
        readers=rdrs,
    )
