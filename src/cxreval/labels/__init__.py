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

The label states, encodings, binarisation and the column names are :mod:`cxreval.schema`'s (import them from
there); this package validates, reads and writes the long tables (``labels/_long.py``), the wide CheXpert-style
files (``labels/_wide.py``) and reads large inputs block by block into integer codes, validated once
(``labels/_streaming.py``; a folder of files with the same columns is one table). Import every name from
``cxreval.labels``.

Examples
--------
>>> import pandas as pd
>>> from cxreval.schema import binarize
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

from ._long import read_labels, read_predictions, validate_label_table, validate_predictions, write_labels
from ._wide import read_wide_labels

__all__ = [
    "validate_label_table",
    "validate_predictions",
    "read_labels",
    "write_labels",
    "read_wide_labels",
    "read_predictions",
]
