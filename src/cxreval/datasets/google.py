"""Google's 2019 adjudicated expert labels for 4,376 ChestX-ray14 images.

Citation: Majkowska A, Mittal S, Steiner DF, et al. Chest radiograph interpretation with deep learning
models: assessment with radiologist-adjudicated reference standards and population-adjusted evaluation.
Radiology 2020;294(2):421-431. doi:10.1148/radiol.2019191293.

File: ``google2019_nih-chest-xray-labels.csv[.gz]`` (in the torchxrayvision wheel), one row per NIH image
with ``Fracture``, ``Pneumothorax``, ``Airspace opacity``, ``Nodule or mass`` as ``YES``/``NO`` and
``Set Id`` (``test`` / ``val``, Google's split, not NIH's).

Label encoding: each image was read by three radiologists and disagreements adjudicated, so every label
is ``positive`` (YES) or ``negative`` (NO); source ``google_expert``. Findings are canonical:
``Fracture``, ``Pneumothorax``, ``Airspace Opacity``, ``Nodule or Mass``.

Mapping to NIH findings (:data:`NIH_TO_GOOGLE`, explicit, recorded on results):
``Pneumothorax`` ← NIH ``Pneumothorax``; ``Nodule or Mass`` ← NIH ``Nodule`` OR ``Mass``;
``Airspace Opacity`` ← NIH ``Consolidation`` OR ``Pneumonia`` OR ``Infiltration`` (the airspace
findings; Edema is excluded since it is not one of Google's airspace-opacity criteria in the NIH label set's
sense — a stated choice); ``Fracture`` has no NIH counterpart and is left unmapped.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .._typing import PathLike
from ..exceptions import SchemaError
from ..finding_maps import NIH_TO_GOOGLE, map_label_table
from ..findings import VocabularyMapping, canonical_finding
from ..io._read import read_csv_file
from ..results import ReadReport, ReadResult
from ..schema._columns import check_columns
from ._fetch import metadata_path

__all__ = ["load_labels", "map_nih_to_google"]

SOURCE = "google_expert"
GOOGLE_FILE = "google2019_nih-chest-xray-labels.csv.gz"
_RAW = ("Fracture", "Pneumothorax", "Airspace opacity", "Nodule or mass")


def load_labels(path: PathLike | None = None, *, cache_dir: PathLike | None = None) -> ReadResult:
    """Google's expert labels as a long label table (source ``google_expert``).

    ``study_id`` is the NIH image name and ``patient_id`` the NIH patient id (as text, no leading zeros),
    so the table joins :func:`cxreval.datasets.nih.load_labels`. Google's split is the column ``split``
    (``test`` / ``val``).
    """
    p = metadata_path(GOOGLE_FILE, cache_dir=cache_dir, path=path)
    where = f"file {str(p)!r}"
    df = read_csv_file(p, dtype=str, keep_default_na=False, na_values=[""])
    check_columns(df, ("Image Index", "Patient ID", "Set Id", *_RAW), where=where)
    n = len(df)
    states = np.empty((n, len(_RAW)), dtype=np.int8)
    for j, c in enumerate(_RAW):
        v = df[c].str.strip().str.upper()
        bad = ~v.isin(["YES", "NO"])
        if bad.any():
            i = int(np.flatnonzero(bad.to_numpy())[0])
            raise SchemaError(
                f"Label {df[c].iloc[i]!r} outside the domain in {where}, row {i}, column {c!r}; "
                f"expected YES or NO."
            )
        states[:, j] = np.where(v.to_numpy() == "YES", 2, 0)
    findings = [canonical_finding(c) for c in _RAW]  # == GOOGLE_NIH
    table = pd.DataFrame(
        {
            "study_id": np.repeat(df["Image Index"].to_numpy(), len(_RAW)),
            "patient_id": np.repeat(df["Patient ID"].str.lstrip("0").replace("", "0").to_numpy(), len(_RAW)),
            "finding": np.tile(np.asarray(findings, dtype=object), n),
            "source": SOURCE,
            "state": pd.array(states.ravel(), dtype="Int8"),
        }
    )
    table["split"] = np.repeat(df["Set Id"].to_numpy(), len(_RAW))
    return ReadResult(table, ReadReport(str(p), n, n))


def map_nih_to_google(
    nih_labels: pd.DataFrame, *, mapping: VocabularyMapping = NIH_TO_GOOGLE, source: str | None = None
) -> pd.DataFrame:
    """Re-express NIH text-mined labels in Google's findings with an explicit mapping: the finding map
    ``mapping`` (default :data:`~cxreval.finding_maps.NIH_TO_GOOGLE`) applied by
    :func:`cxreval.finding_maps.map_label_table` (``cxreval classify --finding-map nih_to_google`` does the
    same to labels and scores).

    Each target finding is positive if any of its NIH sources is positive (``combine='any'``), else
    negative. Unmapped targets get no rows. The table carries no metadata: the mapping applied is the
    ``mapping`` argument (``mapping.to_dict()`` records it).
    """
    if mapping.combine != "any":
        raise SchemaError(f"Unsupported combine rule {mapping.combine!r}; only 'any' is implemented.")
    src = nih_labels if source is None else nih_labels[nih_labels["source"] == source]
    have = set(pd.unique(src["finding"]))
    for sources in mapping.targets.values():
        missing = [s for s in sources if s not in have]
        if missing:
            raise SchemaError(
                f"Mapping {mapping.name!r} needs NIH finding(s) {missing} absent from the label table."
            )
    return map_label_table(src, mapping)
