"""cxreval: clinically grounded evaluation of chest X-ray machine learning.

Does a conclusion (which model, localizer or image-processing method is best) survive a change of
evaluation reference? cxreval loads every label source into one table and measures how rankings move.
"""

from __future__ import annotations

__version__ = "0.1.0"

from .exceptions import (
    CxrevalError,
    CxrevalWarning,
    DataUnavailableError,
    InvalidParameterError,
    SchemaError,
    UndefinedMetricWarning,
)
from .findings import ALIASES, CHESTXRAY8, CHESTXRAY14, CHEXPERT, canonical_finding
from .labels import (
    LabelState,
    binarize,
    read_labels,
    read_wide_labels,
    validate_label_table,
    validate_predictions,
)
from .results import ConfidenceInterval, ReadReport, ReadResult

__all__ = [
    "__version__",
    "CxrevalError",
    "CxrevalWarning",
    "DataUnavailableError",
    "InvalidParameterError",
    "SchemaError",
    "UndefinedMetricWarning",
    "ALIASES",
    "CHESTXRAY8",
    "CHESTXRAY14",
    "CHEXPERT",
    "canonical_finding",
    "LabelState",
    "binarize",
    "read_labels",
    "read_wide_labels",
    "validate_label_table",
    "validate_predictions",
    "ConfidenceInterval",
    "ReadReport",
    "ReadResult",
]
