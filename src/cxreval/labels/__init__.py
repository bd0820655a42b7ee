"""The label data model: label states, the long label and prediction tables, binarisation policies,
and readers/writers for long CSV/Parquet and wide CheXpert-style CSV.

Label states are ordinal, ``NEG = 0 < UNC = 1 < POS = 2``; report-derived sources add
``NOT_MENTIONED = -1`` (the finding is not mentioned in the report), and a missing label is ``<NA>``.
In files a state is written ``negative``, ``uncertain``, ``positive`` or ``not_mentioned``; in wide
CheXpert-style CSVs it is ``1`` / ``0`` / ``-1`` / blank (positive / negative / uncertain / not mentioned).

The **label table** is long, one row per ``(study_id, finding, source)``:

=============  ==========================================================
study_id       str, the unit a label belongs to (an image or a study)
patient_id     str, the unit the bootstrap resamples (required unless stated)
finding        str, a canonical name from :mod:`cxreval.findings`
source         str, the reference (``nih_textmined``, ``google_expert``, ``CR``, ``Rep1`` ...)
state          Int8, one of :class:`LabelState` (or <NA> for missing)
=============  ==========================================================

The **prediction table** is long, ``study_id, model, finding, score``, one row per
``(study_id, model, finding)``; a model → group table (``model, group``) is optional.

Modules: :mod:`~cxreval.schema.states` (states, encodings, binarisation; re-exported here), :mod:`~cxreval.labels.long`
(validation, long CSV/Parquet files), :mod:`~cxreval.labels.wide` (wide CheXpert-style files) and
:mod:`~cxreval.schema.columns` (column and summary-row names, typed once),
:mod:`~cxreval.labels.streaming` (large inputs read block by block into integer codes, validated once; a folder
of files with the same columns is one table).

Examples
--------
>>> import pandas as pd
>>> t = pd.DataFrame({"study_id": ["s1", "s2", "s3"], "patient_id": ["p1", "p1", "p2"],
...                   "finding": ["Pleural Effusion"] * 3, "source": ["CR"] * 3,
...                   "state": ["positive", "uncertain", "negative"]})
>>> t = validate_label_table(t)
>>> t["finding"].iloc[0]
'Effusion'
>>> binarize(t["state"], policy="exclude").tolist()
[1.0, nan, 0.0]
>>> binarize(t["state"], policy="ones").tolist()
[1.0, 1.0, 0.0]
"""

from __future__ import annotations

from ..schema.columns import (
    FINDING,
    MACRO,
    MEAN,
    MICRO,
    MODEL,
    PATIENT_ID,
    SCORE,
    SOURCE,
    STATE,
    STUDY_ID,
    SUMMARY_ROWS,
)
from ..schema.states import (
    BLANK_STATES,
    MISSING_NAME,
    NOT_MENTIONED_POLICIES,
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
from ._files import (
    TABLE_SUFFIXES,
    check_label_headers,
    check_prediction_headers,
    read_label_tables,
    read_prediction_tables,
    table_parts,
)
from .long import (
    LABEL_COLUMNS,
    PREDICTION_COLUMNS,
    label_matrix,
    read_labels,
    read_predictions,
    validate_label_table,
    validate_model_groups,
    validate_predictions,
    write_labels,
    write_predictions,
)
from .streaming import (
    LabelScan,
    PredictionScan,
    scan_label_frame,
    scan_labels,
    scan_prediction_frame,
    scan_predictions,
)
from .wide import WideLayout, read_wide_labels, read_wide_predictions, to_wide, write_wide_labels

__all__ = [
    "LabelState",
    "STATE_NAMES",
    "LABEL_COLUMNS",
    "PREDICTION_COLUMNS",
    "POLICIES",
    "NOT_MENTIONED_POLICIES",
    "ORDINAL_STATES",
    "REPORT_STATES",
    "LabelPolicy",
    "resolve_not_mentioned",
    "STATE_ENCODINGS",
    "BLANK_STATES",
    "MISSING_NAME",
    "parse_states",
    "decode_states",
    "state_names",
    "validate_label_table",
    "validate_predictions",
    "validate_model_groups",
    "binarize",
    "label_matrix",
    "read_labels",
    "write_labels",
    "WideLayout",
    "read_wide_labels",
    "to_wide",
    "write_wide_labels",
    "read_predictions",
    "read_wide_predictions",
    "write_predictions",
    "PredictionScan",
    "LabelScan",
    "scan_predictions",
    "scan_labels",
    "scan_prediction_frame",
    "scan_label_frame",
    "read_prediction_tables",
    "read_label_tables",
    "TABLE_SUFFIXES",
    "table_parts",
    "check_label_headers",
    "check_prediction_headers",
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
    "SUMMARY_ROWS",
]
