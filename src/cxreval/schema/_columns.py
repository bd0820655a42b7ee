"""Names typed once: the columns of the long tables and the summary rows of result tables.

The long **label table** has the columns ``study_id, patient_id, finding, source, state``; the long
**prediction table** ``study_id, model, finding, score``. A per-finding result table ends with summary rows
whose ``finding`` is :data:`MACRO` (the mean over findings) or :data:`MICRO` (all findings pooled); a per-model
table may add a :data:`MEAN` row (the mean over models).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

import numpy as np

from ..exceptions import SchemaError

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "ANNOTATION_COLUMNS",
    "FINDING",
    "MACRO",
    "MEAN",
    "MICRO",
    "MODEL",
    "PATIENT_ID",
    "P_POSITIVE",
    "RENAMED_COLUMNS",
    "SCORE",
    "SOURCE",
    "STATE",
    "STUDY_ID",
    "SUMMARY_ROWS",
    "check_columns",
    "first_true",
    "id_text",
]


def first_true(mask: object) -> int | None:
    """The position of the first True of a 1-D row mask (the first bad row, which an error names), None when
    every row is fine.

    Examples
    --------
    >>> first_true([False, True, True]), first_true([False])
    (1, None)
    """
    rows = np.flatnonzero(np.asarray(mask))
    return int(rows[0]) if rows.size else None


def id_text(values: object) -> pd.Series:
    """Ids as text, a ``str`` series on a fresh index (NaN stays missing); a float column of whole numbers (an int
    column with NaN) is written without ``.0``."""
    import pandas as pd

    s = pd.Series(values).reset_index(drop=True)
    if s.dtype.kind == "f":
        whole = s.dropna()
        if (whole == np.floor(whole)).all():
            s = s.astype("Int64")
    return s.astype("str")


STUDY_ID = "study_id"
"""The unit a label or score belongs to (an image or a study)."""
PATIENT_ID = "patient_id"
"""The unit the bootstrap resamples."""
SOURCE = "source"
"""Who gave a label (a reference standard, a reader, a report labeller)."""
FINDING = "finding"
"""A canonical finding name (:mod:`cxreval.findings`)."""
STATE = "state"
"""A label state (:class:`cxreval.schema.LabelState`)."""
MODEL = "model"
"""The model that gave a score."""
SCORE = "score"
"""A model's score for a finding."""
P_POSITIVE = "p_positive"
"""Optional column of a label table: the probability that the study is positive for the finding (a soft label:
a fusion method's posterior, ``fused_labels.csv``); blank where a source gives a state only."""

MACRO = "macro"
"""Summary row: the unweighted mean over findings."""
MICRO = "micro"
"""Summary row: all findings pooled."""
MEAN = "mean"
"""Summary row: the mean over models."""
SUMMARY_ROWS: tuple[str, ...] = (MACRO, MICRO)
"""The per-finding summary rows, in the order they are written."""

ANNOTATION_COLUMNS: tuple[str, ...] = (STUDY_ID, SOURCE, STATE)
"""Required columns of the annotation table that the fusion methods read (``finding`` optional;
:mod:`cxreval.fusion`)."""

RENAMED_COLUMNS: dict[str, str] = {
    "reader": SOURCE,
    "rater": SOURCE,
    "reference": SOURCE,
    "label": STATE,
    "image_id": STUDY_ID,
    "image": STUDY_ID,
    "study": STUDY_ID,
}
"""Other tools' spellings of the vocabulary's column names (crowd-kit's annotations, box lists, label tables):
a table that lacks a required column but has one of these is refused with a "did you mean"
(:func:`check_columns`), never renamed silently."""


def check_columns(df: pd.DataFrame | Sequence[str], required: Iterable[str], *, where: str) -> None:
    """Every ``required`` column is in ``df`` (a DataFrame, or a file's header as a list of names); the
    message names the missing columns, the columns present and a did-you-mean for a renamed one. A required
    column that appears twice (a header ``score,score``) is refused: reading either one would be a silent choice."""
    import pandas as pd

    have = [str(c) for c in (df.columns if isinstance(df, pd.DataFrame) else df)]
    missing = [c for c in required if c not in have]
    if missing:
        hints = [
            f"Column {old!r}: did you mean {new!r}?"
            for old, new in RENAMED_COLUMNS.items()
            if new in missing and old in have
        ]
        raise SchemaError(
            f"{where} is missing required column(s) {missing}; it has {have}."
            + (" " + " ".join(hints) if hints else "")
        )
    twice = [c for c in dict.fromkeys(required) if have.count(c) > 1]
    if twice:
        raise SchemaError(
            f"{where} has {have.count(twice[0])} columns named {twice[0]!r}; which one to read is "
            f"ambiguous. Rename or remove the others."
        )
