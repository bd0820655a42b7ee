"""The column schemas, typed once: the long label and prediction tables, the summary rows and the annotation
table (:mod:`cxreval.schema.columns`), the box table and ``localization.csv`` (:mod:`cxreval.schema.boxes`)."""

from .boxes import (
    BOX_COLUMNS,
    BOX_COORDS,
    LOCALIZATION_COLUMNS,
    NO_THRESHOLD,
    SOURCED_BOX_COLUMNS,
    box_columns,
    check_box_table,
    threshold_label,
)
from .columns import (
    ANNOTATION_COLUMNS,
    FINDING,
    MACRO,
    MEAN,
    MICRO,
    MODEL,
    PATIENT_ID,
    RENAMED_COLUMNS,
    SCORE,
    SOURCE,
    STATE,
    STUDY_ID,
    SUMMARY_ROWS,
    check_columns,
)

__all__ = ["STUDY_ID", "PATIENT_ID", "SOURCE", "FINDING", "STATE", "MODEL", "SCORE", "MACRO", "MICRO", "MEAN",
           "SUMMARY_ROWS", "ANNOTATION_COLUMNS", "RENAMED_COLUMNS", "check_columns",
           "BOX_COORDS", "BOX_COLUMNS", "SOURCED_BOX_COLUMNS", "LOCALIZATION_COLUMNS", "NO_THRESHOLD",
           "check_box_table", "box_columns", "threshold_label"]
