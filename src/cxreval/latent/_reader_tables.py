"""The tables a user gives about the readers: known accuracies (held fixed) and plausible ranges of them, an
informative prior (Dendukuri & Joseph 2001; each range a Beta prior whose pseudo-counts the EM adds,
:func:`~cxreval.latent._fitting.beta_prior_counts`)."""

from __future__ import annotations

from collections.abc import Sequence
from os import PathLike
from pathlib import Path

import numpy as np
import pandas as pd

from ..exceptions import SchemaError
from ..findings import canonical_finding
from ..io import read_table
from ..schema import FINDING
from ..schema._columns import check_columns
from ._fitting import beta_prior_counts

__all__ = ["PRIOR_COLUMNS", "read_reader_accuracy", "read_reader_prior", "prior_arrays"]

PRIOR_COLUMNS = ("sensitivity_low", "sensitivity_high", "specificity_low", "specificity_high")


def _reader_table(
    table: str | PathLike[str] | pd.DataFrame, columns: Sequence[str], param: str
) -> tuple[pd.DataFrame, str]:
    """``finding, source`` and ``columns`` of a table or file (findings canonical, sources text) and the words
    naming it in errors; a missing file or column refused by name."""
    where = f"{param} table"
    if isinstance(table, pd.DataFrame):
        df = table.copy()
    else:
        p = Path(table)
        if not p.exists():
            raise SchemaError(f"File {str(p)!r} does not exist ({param}=).")
        where = f"file {str(p)!r}"
        df = read_table(p)
    check_columns(df, (FINDING, "source", *columns), where=where)
    df = df[[FINDING, "source", *columns]].copy()
    df[FINDING] = [canonical_finding(str(f)) for f in df[FINDING]]
    df["source"] = df["source"].astype(str)
    return df, where


def _unique(df: pd.DataFrame, where: str) -> pd.DataFrame:
    dup = df.duplicated([FINDING, "source"])
    if dup.any():
        r = df[dup].iloc[0]
        raise SchemaError(f"{where} gives finding {r[FINDING]!r}, source {r['source']!r} more than once.")
    return df.reset_index(drop=True)


def read_reader_accuracy(table: str | PathLike[str] | pd.DataFrame) -> pd.DataFrame:
    """A table of known reader accuracies: ``finding, source, sensitivity, specificity`` (e.g. the
    ``reader_accuracy.csv`` of ``cxreval fuse`` or ``classify --latent-truth``), findings canonical.

    Raises
    ------
    SchemaError
        The file is missing, lacks a column, repeats a (finding, source) or holds a value outside [0, 1].
    """
    df, where = _reader_table(table, ("sensitivity", "specificity"), "reader_accuracy")
    for col in ("sensitivity", "specificity"):
        v = pd.to_numeric(df[col], errors="coerce")
        bad = ~((v >= 0) & (v <= 1))
        if bad.any():
            i = int(np.flatnonzero(bad.to_numpy())[0])
            raise SchemaError(
                f"{where}, column {col!r}, row {i + 1}: {df[col].iloc[i]!r} is not a probability in [0, 1]."
            )
        df[col] = v.astype(float)
    return _unique(df, where)


def read_reader_prior(table: str | PathLike[str] | pd.DataFrame) -> pd.DataFrame:
    """A table of plausible ranges of reader accuracies: ``finding, source`` and :data:`PRIOR_COLUMNS`
    (findings canonical), each range checked to lie within (0, 1).

    Raises
    ------
    SchemaError
        The file is missing, lacks a column, repeats a (finding, source), or holds a range that is not within
        (0, 1) with low < high (the message names the row and the columns).
    """
    df, where = _reader_table(table, PRIOR_COLUMNS, "reader_prior")
    for col in PRIOR_COLUMNS:
        df[col] = pd.to_numeric(df[col], errors="coerce")
    for i, row in enumerate(df.itertuples(index=False)):
        for what, lo, hi in (("sensitivity", row[2], row[3]), ("specificity", row[4], row[5])):
            try:
                beta_prior_counts(float(lo), float(hi))
            except ValueError as e:
                raise SchemaError(
                    f"{where}, row {i + 1} ({row[1]!r}, {row[0]!r}), columns {what}_low/{what}_high: {e}."
                ) from None
    return _unique(df, where)


def prior_arrays(
    priors: pd.DataFrame | None, finding: str, readers: Sequence[str]
) -> tuple[np.ndarray | None, np.ndarray | None]:
    """The Beta pseudo-counts (R, 4) of a finding's readers and the ranges they come from (R, 4; NaN rows for a
    reader without a prior); ``(None, None)`` when no reader of the finding has one."""
    if priors is None:
        return None, None
    sub = priors[priors[FINDING] == finding].set_index("source")
    counts, ranges = np.zeros((len(readers), 4)), np.full((len(readers), 4), np.nan)
    for i, r in enumerate(readers):
        if r in sub.index:
            ranges[i] = sub.loc[r, list(PRIOR_COLUMNS)].to_numpy(dtype=float)
            counts[i, :2] = beta_prior_counts(ranges[i, 0], ranges[i, 1])
            counts[i, 2:] = beta_prior_counts(ranges[i, 2], ranges[i, 3])
    return (counts, ranges) if np.isfinite(ranges).any() else (None, None)
