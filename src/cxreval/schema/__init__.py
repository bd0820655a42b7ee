"""The column schemas, typed once: the long label and prediction tables, the summary rows and the annotation
table (``schema/_columns.py``), the box table and ``localization.csv`` (``schema/_boxes.py``), the label states,
their numeric encodings and the uncertain/not-mentioned policy (``schema/_states.py``). The one home of these
names: import them from ``cxreval.schema`` (no other package re-exports them)."""

from ._columns import FINDING, MACRO, MEAN, MICRO, MODEL, PATIENT_ID, SCORE, SOURCE, STATE, STUDY_ID
from ._states import NOT_MENTIONED_POLICIES, POLICIES, STATE_ENCODINGS, LabelState, binarize

__all__ = [
    "STUDY_ID",
    "PATIENT_ID",
    "SOURCE",
    "FINDING",
    "STATE",
    "MODEL",
    "SCORE",
    "MACRO",
    "MICRO",
    "MEAN",
    "LabelState",
    "POLICIES",
    "NOT_MENTIONED_POLICIES",
    "STATE_ENCODINGS",
    "binarize",
]
