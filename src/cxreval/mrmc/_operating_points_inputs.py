"""The checked inputs of :func:`reader_operating_points`: the scores, the readers' calls and names."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._validation import check_choice, float_array, is_number, is_str_sequence
from ..exceptions import InvalidParameterError, SchemaError
from ._roc_matching import MATCHINGS, SortedScores, sort_scores

__all__ = ["PANEL"]

PANEL = "panel"
"""The name of the readers' mean operating point in the result's tables (a reader may not be called so)."""


@dataclass(frozen=True)
class _Inputs:
    decisions: np.ndarray  # (R, N) 1.0 where the reader called positive, 0.0 otherwise (not read included)
    read: np.ndarray  # (R, N) 1.0 where read
    truth: np.ndarray  # (N,) float 0/1
    sorted_scores: SortedScores
    groups: tuple[tuple[np.ndarray, np.ndarray], ...]  # (read mask (N,), reader indices) per distinct mask
    matching: str


def _validate(
    decisions: object,
    scores: object,
    truth: object,
    reader_names: object,
    margin: object,
    matching: object,
    func: str,
) -> tuple[tuple[str, ...], _Inputs, int]:
    d = _float_array(decisions, "decisions", func)
    if d.ndim == 1:
        d = d[None, :]
    if d.ndim != 2 or d.shape[0] == 0:
        raise InvalidParameterError(
            f"The 'decisions' parameter of {func} must be a 2-D array of shape "
            f"(n_readers, n_cases). Got shape {d.shape} instead."
        )
    s = _float_array(scores, "scores", func)
    y = _float_array(truth, "truth", func)
    if s.ndim != 1 or y.ndim != 1:
        raise InvalidParameterError(
            f"{func}: 'scores' and 'truth' must be 1-D. Got shapes {s.shape} and {y.shape}."
        )
    if not (len(s) == len(y) == d.shape[1]):
        raise InvalidParameterError(
            f"{func}: inconsistent numbers of cases: decisions has {d.shape[1]} columns, "
            f"scores {len(s)}, truth {len(y)}."
        )
    if len(s) == 0:
        raise InvalidParameterError(f"{func} needs at least one case; got none.")
    if not np.isfinite(s).all():
        i = int(np.flatnonzero(~np.isfinite(s))[0])
        raise SchemaError(f"{func}: 'scores' must be finite; case {i} has {float(s[i])}.")
    bad = ~np.isin(y, (0.0, 1.0))
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise SchemaError(
            f"{func}: 'truth' must be 0 or 1; case {i} has {float(y[i])} ({int(bad.sum())} such cases)."
        )
    n_readers = d.shape[0]
    names = _reader_names(reader_names, n_readers, func)
    read = ~np.isnan(d)
    bad = read & ~np.isin(d, (0.0, 1.0))
    if bad.any():
        r, i = (int(v[0]) for v in np.nonzero(bad))
        raise SchemaError(
            f"{func}: 'decisions' must be 0, 1 or NaN (not read); reader {names[r]!r} has {float(d[r, i])} "
            f"at case {i} ({int(bad.sum())} such calls)."
        )
    for r in range(n_readers):
        n_pos, n_neg = int((read[r] & (y == 1)).sum()), int((read[r] & (y == 0)).sum())
        if n_pos == 0 or n_neg == 0:
            raise InvalidParameterError(
                f"{func}: reader {names[r]!r} read {n_pos} positive and {n_neg} negative cases; its sensitivity and "
                "specificity need at least one of each."
            )
    if not is_number(margin) or not 0 < float(margin) < 1:
        raise InvalidParameterError(
            f"The 'margin' parameter of {func} must be a float in (0, 1). Got {margin!r} instead."
        )
    matching = check_choice(matching, MATCHINGS, name="matching", func=func)
    masks, inverse = np.unique(read, axis=0, return_inverse=True)
    groups = tuple(
        (masks[g].astype(float), np.flatnonzero(np.ravel(inverse) == g)) for g in range(len(masks))
    )
    inputs = _Inputs(np.where(read, d, 0.0), read.astype(float), y, sort_scores(s), groups, str(matching))
    return names, inputs, len(s)


def _float_array(value: object, name: str, func: str) -> np.ndarray:
    return float_array(
        value,
        SchemaError(
            f"The '{name}' parameter of {func} must be numeric (array-like of numbers). "
            f"Got {type(value).__name__} with non-numeric values instead."
        ),
    )


def _reader_names(reader_names: object, n_readers: int, func: str) -> tuple[str, ...]:
    if reader_names is None:
        return tuple(f"reader_{i + 1}" for i in range(n_readers))
    if not is_str_sequence(reader_names):
        raise InvalidParameterError(
            f"The 'reader_names' parameter of {func} must be a sequence of str or None. "
            f"Got {reader_names!r} instead."
        )
    names = tuple(str(n) for n in reader_names)
    if len(names) != n_readers:
        raise InvalidParameterError(
            f"{func}: 'reader_names' has {len(names)} names but 'decisions' has {n_readers} readers (rows)."
        )
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup or PANEL in names:
        what = (
            f"duplicate names {dup}"
            if dup
            else f"the name {PANEL!r}, which the tables give the readers' mean"
        )
        raise InvalidParameterError(f"{func}: 'reader_names' holds {what}; give each reader a distinct name.")
    return names
