"""The column schemas, typed once: the long label and prediction tables, the summary rows and the annotation
table (``schema/_columns.py``), the box table and ``localization.csv`` (``schema/_boxes.py``), the label states,
their numeric encodings and the uncertain/not-mentioned policy (``schema/_states.py``). The one home of these
names: import them from ``cxreval.schema`` (no other package re-exports them)."""

from ._boxes import (
    BOX_COLUMNS,
    BOX_COORDS,
    LOCALIZATION_COLUMNS,
    NO_THRESHOLD,
    SOURCED_BOX_COLUMNS,
    box_columns,
    check_box_table,
    threshold_label,
)
from ._columns import (
    ANNOTATION_COLUMNS,
    FINDING,
    MACRO,
    MEAN,
    MICRO,
    MODEL,
    P_POSITIVE,
    PATIENT_ID,
    RENAMED_COLUMNS,
    SCORE,
    SOURCE,
    STATE,
    STUDY_ID,
    SUMMARY_ROWS,
    check_columns,
)
from ._states import (
    BLANK_STATES,
    MISSING_NAME,
    NOT_MENTIONED_POLICIES,
    NUMERIC_CODES,
    ORDINAL_STATES,
    POLICIES,
    REPORT_STATES,
    STATE_ENCODINGS,
    STATE_NAMES,
    LabelPolicy,
    LabelState,
    binarize,
    decode_states,
    parse_states,
    resolve_not_mentioned,
    state_names,
)

__all__ = ["STUDY_ID", "PATIENT_ID", "SOURCE", "FINDING", "STATE", "MODEL", "SCORE", "P_POSITIVE", "MACRO", "MICRO", "MEAN",
           "SUMMARY_ROWS", "ANNOTATION_COLUMNS", "RENAMED_COLUMNS", "check_columns",
           "BOX_COORDS", "BOX_COLUMNS", "SOURCED_BOX_COLUMNS", "LOCALIZATION_COLUMNS", "NO_THRESHOLD",
           "check_box_table", "box_columns", "threshold_label",
           "LabelState", "STATE_NAMES", "ORDINAL_STATES", "REPORT_STATES", "POLICIES", "NOT_MENTIONED_POLICIES",
           "STATE_ENCODINGS", "NUMERIC_CODES", "BLANK_STATES", "MISSING_NAME", "LabelPolicy", "parse_states", "decode_states",
           "state_names", "binarize", "resolve_not_mentioned"]
