"""Subgroups from a metadata table, and the operating point: checked before any computation.

:func:`group_codes` turns one attribute (a metadata column, or an intersection ``"sex*view"`` of two) into a
group code per evaluated study (``-1``: no value in the metadata) and the group names. The operating point (``"threshold=0.5"`` / ``"specificity=0.9"``: :func:`parse_operating_point`,
:func:`operating_threshold`) is the kernel :mod:`cxreval.stats._operating_points` shares with ``classify``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .._validation import did_you_mean
from ..exceptions import InvalidParameterError, SchemaError
from ..schema import STUDY_ID
from ..stats._operating_points import OperatingPoint, operating_threshold, parse_operating_point

__all__ = [
    "MAX_GROUPS",
    "NO_VALUE",
    "Attribute",
    "OperatingPoint",
    "group_codes",
    "metadata_values",
    "operating_threshold",
    "parse_operating_point",
]

MAX_GROUPS = 50
"""The most values an attribute may take on the evaluated studies (more: a continuous column, to be banded)."""
NO_VALUE = "(no value)"
"""The group of the studies without a value of the attribute in the metadata (reported, never dropped)."""
_JOIN = " & "


@dataclass(frozen=True)
class Attribute:
    """One attribute on the evaluated studies: ``codes[i]`` is the group of study ``i`` (-1: no value)."""

    name: str
    groups: tuple[str, ...]
    codes: np.ndarray
    reference_group: int | None = None


def metadata_values(metadata: pd.DataFrame, studies: np.ndarray, *, where: str) -> pd.DataFrame:
    """The metadata rows of ``studies`` (in their order; all blank where a study has none), every value as text
    (blank: missing). A metadata table without ``study_id`` or with two rows of one study is refused."""
    if STUDY_ID not in metadata.columns:
        raise SchemaError(
            f"{where} has no {STUDY_ID!r} column (columns: {', '.join(map(str, metadata.columns))}): the "
            "metadata is keyed by the study id of the prediction and label tables."
            + did_you_mean(STUDY_ID, map(str, metadata.columns))
        )
    if metadata.empty:
        raise SchemaError(f"{where} has no rows: the metadata needs one row per study.")
    ids = metadata[STUDY_ID].astype(str)
    dup = ids.duplicated(keep=False)
    if dup.any():
        raise SchemaError(
            f"{where}: study {ids[dup].iloc[0]!r} has {int((ids == ids[dup].iloc[0]).sum())} rows; the metadata "
            "needs one row per study."
        )
    text = metadata.drop(columns=[STUDY_ID]).astype(object)
    text = text.where(text.notna(), None).map(lambda v: None if v is None or str(v).strip() == "" else str(v))
    text.index = ids.to_numpy()
    return text.reindex(pd.Index(studies.astype(str)))


def group_codes(
    values: pd.DataFrame,
    attribute: str,
    *,
    reference_group: str | None,
    where: str,
    evaluated: np.ndarray,
) -> Attribute:
    """The groups of ``attribute`` (a column of ``values``, or ``"a*b"``: the intersection of two columns) on the
    studies where ``evaluated`` holds; a missing column, one value only, or more than :data:`MAX_GROUPS` values
    is refused, naming ``where`` and the column."""
    columns = [c.strip() for c in attribute.split("*")]
    if len(columns) > 2 or any(not c for c in columns):
        raise InvalidParameterError(
            f"Subgroup attribute {attribute!r}: give a metadata column or the intersection of two ('sex*view')."
        )
    for c in columns:
        if c not in values.columns:
            raise SchemaError(
                f"{where} has no column {c!r} (columns: {', '.join(map(str, values.columns))})."
                + did_you_mean(c, map(str, values.columns))
            )
    parts = values[columns]
    missing = parts.isna().any(axis=1).to_numpy()
    label = parts.iloc[:, 0].astype(str)
    for c in columns[1:]:
        label = label + _JOIN + parts[c].astype(str)
    label_arr = np.where(missing, None, label.to_numpy(dtype=object))
    seen = label_arr[evaluated & ~missing]
    groups = tuple(sorted(set(seen.tolist())))
    if len(groups) < 2:
        one = f"one value ({groups[0]!r})" if groups else "no value"
        raise SchemaError(
            f"{where}: column {attribute!r} has {one} on the {int(evaluated.sum())} evaluated studies; a "
            "subgroup gap needs at least two groups."
        )
    if len(groups) > MAX_GROUPS:
        raise SchemaError(
            f"{where}: column {attribute!r} has {len(groups)} values on the evaluated studies (at most "
            f"{MAX_GROUPS}): band it first (e.g. an age band column)."
        )
    index = {g: k for k, g in enumerate(groups)}
    codes = np.array([-1 if v is None else index[v] for v in label_arr], dtype=np.intp)
    ref = None
    if reference_group is not None:
        if reference_group not in index:
            raise InvalidParameterError(
                f"Reference group {reference_group!r} is not a value of {attribute!r} (values: "
                f"{', '.join(groups)})." + did_you_mean(reference_group, groups)
            )
        ref = index[reference_group]
    return Attribute(attribute, groups, codes, ref)


def reference_groups(
    value: Mapping[str, str] | Sequence[str] | None, attributes: Sequence[str]
) -> dict[str, str]:
    """``{"sex": "M"}`` from a mapping or from ``["sex=M", ...]``; each key one of ``attributes``."""
    if value is None:
        return {}
    pairs: dict[str, str] = {}
    items = value.items() if isinstance(value, Mapping) else (str(v).partition("=")[::2] for v in value)
    for key, group in items:
        if not key or not group:
            raise InvalidParameterError(
                f"A reference group is 'attribute=value' (e.g. 'sex=M'). Got {key!r}={group!r}."
            )
        if key not in attributes:
            raise InvalidParameterError(
                f"Reference group {key}={group}: {key!r} is not one of the subgroup attributes "
                f"({', '.join(attributes)})." + did_you_mean(key, attributes)
            )
        pairs[key] = group
    return pairs


__all__ += ["reference_groups"]
