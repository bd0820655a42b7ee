"""Soft labels: a label table whose rows carry ``p_positive``, the probability that the finding is present.

A reference (``source``) is *soft* when any of its rows has a ``p_positive`` value (e.g. ``fused_ds`` of
``cxreval fuse --methods ds``; sources whose ``p_positive`` is blank throughout, such as ``fused_mv``, stay
hard). Each of its labelled rows must then carry a number in [0, 1]; a blank is allowed only where the state
says the label is missing. :func:`read_soft_labels` reads and checks the column, :func:`apply_soft_labels` puts
the probabilities into the label array ``Y`` of a :class:`~cxreval.stats.PreparedInputs` where the
label policy keeps the study.

Against a soft reference a model's AUC is the ratio of expectations over label draws ``T_i ~ Bernoulli(p_i)``:

.. math:: \\frac{\\sum_{i \\ne j} p_i (1 - p_j) ([s_i > s_j] + \\tfrac12 [s_i = s_j])}{\\sum_{i \\ne j} p_i (1 - p_j)}

(:func:`cxreval.latent.latent_auc_score`; with 0/1 probabilities it is the ordinary AUC). It is the expected
AUC over label draws, not an estimate of the AUC against the truth: probabilities that ignore the score dilute
it toward 0.5 (see :mod:`cxreval.latent`). Intervals come from the same patient bootstrap as for other
references.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from .._validation import cell_location
from ..exceptions import InvalidParameterError, SchemaError
from ..findings import canonical_finding
from ..io import read_table
from ..io._read import table_parts
from ..schema import FINDING, SOURCE, STUDY_ID
from ..schema._columns import P_POSITIVE, first_true, id_text

if TYPE_CHECKING:
    from ._auc_inputs import PreparedInputs

__all__ = [
    "SOFT_AUC_MEANING",
    "SoftLabels",
    "apply_soft_labels",
    "read_soft_labels",
    "soft_labels_from_frame",
]

SOFT_AUC_MEANING = "expected AUC over label draws (soft labels), not an estimate of the AUC against the truth"
"""What a model's AUC against a soft reference is, as ``summary.md`` states it."""


@dataclasses.dataclass(frozen=True)
class SoftLabels:
    """The ``p_positive`` rows of the soft references of one or more label tables.

    Attributes
    ----------
    table : pandas.DataFrame
        ``study_id, finding, source, p_positive`` (NaN: blank) and ``where`` (file and row, for errors): every
        row of every soft source.
    """

    table: pd.DataFrame

    @property
    def sources(self) -> tuple[str, ...]:
        """The soft references, sorted."""
        return tuple(sorted(pd.unique(self.table[SOURCE])))


def _ids(values: pd.Series) -> pd.Series:
    return id_text(values).str.strip()


def soft_labels_from_frame(df: pd.DataFrame, *, where: str = "label table") -> SoftLabels | None:
    """The soft rows of one long label table (``None`` without a ``p_positive`` column or without a value in it).

    Raises
    ------
    SchemaError
        A ``p_positive`` value that is not a number, or outside [0, 1], naming ``where``, the row and the value.
    """
    if P_POSITIVE not in df.columns:
        return None
    raw = df[P_POSITIVE].reset_index(drop=True)
    blank = raw.isna().to_numpy() | (raw.astype(str).str.strip() == "").to_numpy()
    p = pd.to_numeric(raw.where(~blank), errors="coerce").to_numpy(dtype=float, copy=True)
    bad = ~blank & ~(np.isfinite(p) & (p >= 0) & (p <= 1))
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise SchemaError(
            f"{cell_location(where, i, P_POSITIVE)}: {raw.iloc[i]!r} is not a probability; "
            f"expected a number in [0, 1] (or a blank where the label is missing)."
        )
    p[blank] = np.nan
    src = _ids(df[SOURCE])
    soft = set(src[~blank].unique())
    if not soft:
        return None
    rows = np.flatnonzero(src.isin(soft).to_numpy())
    fnames = df[FINDING].reset_index(drop=True).iloc[rows]
    canon = {f: canonical_finding(f, where=where) for f in pd.unique(fnames)}
    table = pd.DataFrame(
        {
            STUDY_ID: _ids(df[STUDY_ID]).iloc[rows].to_numpy(dtype=object),
            FINDING: fnames.map(canon).to_numpy(dtype=object),
            SOURCE: src.iloc[rows].to_numpy(dtype=object),
            P_POSITIVE: p[rows],
            "where": [cell_location(where, int(i), P_POSITIVE) for i in rows],
        }
    )
    return SoftLabels(table)


def read_soft_labels(paths: Sequence[str | Path]) -> SoftLabels | None:
    """The soft rows of label files (CSV/Parquet, or folders of parts) that have a ``p_positive`` column;
    ``None`` when no source of any of them is soft. Only files with the column are read (the rest of the label
    validation is the ordinary readers')."""
    parts: list[SoftLabels] = []
    for path in paths:
        for f in table_parts(path, (P_POSITIVE,)) or []:
            df = read_table(f, text=True)
            if P_POSITIVE not in df.columns:
                continue
            got = soft_labels_from_frame(df, where=f"file {str(f)!r}")
            if got is not None:
                parts.append(got)
    if not parts:
        return None
    return SoftLabels(pd.concat([s.table for s in parts], ignore_index=True))


def apply_soft_labels(prep: PreparedInputs, soft: SoftLabels | None) -> PreparedInputs:
    """``prep`` with each evaluated soft reference's ``p_positive`` in ``Y`` wherever the label policy keeps the
    study (``Y`` finite), and ``soft_references`` naming them.

    Raises
    ------
    SchemaError
        A blank ``p_positive`` on a row of a soft reference whose state is not missing (file and row named).
    """
    if soft is None:
        return prep
    refs = [r for r in prep.references if r in set(soft.sources)]
    if not refs:
        return prep
    if prep.finding_map is not None:
        raise InvalidParameterError(
            f"Soft labels (p_positive) of {refs} with a finding map: the probabilities of "
            f"source findings do not combine into those of a mapped finding; evaluate them "
            f"without finding_map=, or choose other references."
        )
    t = soft.table[soft.table[SOURCE].isin(refs)]
    s_of = pd.Index(prep.studies).get_indexer(t[STUDY_ID].to_numpy(dtype=object))
    f_of = pd.Index(prep.findings).get_indexer(t[FINDING].to_numpy(dtype=object))
    r_of = pd.Index(prep.references).get_indexer(t[SOURCE].to_numpy(dtype=object))
    ok = (s_of >= 0) & (f_of >= 0)
    s_of, f_of, r_of, p, where = (
        s_of[ok],
        f_of[ok],
        r_of[ok],
        t[P_POSITIVE].to_numpy()[ok],
        t["where"].to_numpy()[ok],
    )
    Y = prep.Y.copy()
    blank = np.isnan(p)
    if blank.any() and prep.states is not None:
        labelled = prep.states[f_of[blank], r_of[blank], s_of[blank]] != -128
        if (i := first_true(labelled)) is not None:
            raise SchemaError(
                f"{where[blank][i]}: blank, but the state labels the finding; every labelled row of "
                f"the soft reference {prep.references[r_of[blank][i]]!r} needs a probability in "
                f"[0, 1] (a blank only where the state is missing)."
            )
    covered = np.zeros(Y.shape, dtype=bool)
    covered[f_of, r_of, s_of] = True
    ks = [prep.references.index(r) for r in refs]
    loose = np.isfinite(Y[:, ks]) & ~covered[:, ks]
    if loose.any():
        j, q, i = (int(v[0]) for v in np.nonzero(loose))
        raise SchemaError(
            f"Reference {refs[q]!r} has p_positive values, but its label of study "
            f"{prep.studies[i]!r}, finding {prep.findings[j]!r} comes from a table without a "
            f"p_positive column; give every label of a soft reference a probability."
        )
    kept = ~blank & np.isfinite(Y[f_of, r_of, s_of])
    Y[f_of[kept], r_of[kept], s_of[kept]] = p[kept]
    return dataclasses.replace(prep, Y=Y, soft_references=tuple(refs))
