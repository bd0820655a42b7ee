"""PadChest labels: one dataset, two kinds of reference (physician-labelled and RNN-labelled reports).

Citation: Bustos A, Pertusa A, Salinas JM, de la Iglesia-Vayá M. PadChest: A large chest x-ray image
dataset with multi-label annotated reports. Medical Image Analysis 66 (2020) 101797.
doi:10.1016/j.media.2020.101797. Data: https://bimcv.cipf.es/bimcv-projects/padchest/ (160,861 images of
67,625 patients, Hospital San Juan, Alicante, 2009-2017; research use under the BIMCV licence).

File: ``PADCHEST_chest_x_ray_images_labels_160K_01.02.19.csv[.gz]``, one row per image with ``ImageID``,
``StudyID``, ``PatientID``, ``Projection``, ``MethodLabel`` and ``Labels``, a Python-list literal of the
findings extracted from the (Spanish) report, such as ``"['cardiomegaly', ' pleural effusion']"``.

Two reference kinds: about 27% of the reports were labelled by trained physicians (``MethodLabel ==
'Physician'``), the rest by the authors' recurrent neural network with attention trained on them
(``'RNN_model'``; micro-F1 0.93 on an independent test set). The table keeps them apart as the sources
``padchest_physician`` and ``padchest_rnn``, so a model can be scored against either reference or the two
references compared on their own subsets.

Label encoding: ``study_id`` is the ``ImageID`` (labels belong to images), ``patient_id`` the
``PatientID``. PadChest spells findings as lowercase UMLS-style terms; :data:`PADCHEST_MAPPING` maps the
terms that mean a canonical finding (the finding itself or a subtype of it, e.g. ``laminar atelectasis``
→ ``Atelectasis``) by exact match after stripping spaces and case-folding. An image's mapped findings are
``positive`` and every other finding of the mapping is ``negative`` (as in ChestX-ray14); ``normal`` maps
to ``No Finding``. Terms outside the mapping (``COPD signs``, ``aortic elongation``, devices ...) are not
labels here; they are counted per image and listed in the read report's notes, never dropped silently.
Note that ``subcutaneous emphysema`` is not ``Emphysema`` and ``mediastinal mass`` is not a lung
``Mass``: a substring match (as in torchxrayvision) would conflate them.

Uncertainty policy: the ``Labels`` column marks no uncertainty and no negation (it lists what the report
asserts), so no ``uncertain`` or ``not_mentioned`` state is produced. The empty term ``''`` and
``exclude`` (a sentence the labellers set aside) carry no finding; an image whose list holds nothing else
has no evidence for or against any finding and is dropped (reason ``no informative label``) rather than
counted as all-negative.

Dropped rows (listed in ``res.report.dropped`` with their reason): missing ``ImageID`` or ``PatientID``,
a ``MethodLabel`` other than the two above, an unparseable ``Labels`` value (103 rows of the release
have the text ``nan``), and images without an informative label.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType
from typing import NamedTuple

import numpy as np
import pandas as pd

from .._typing import PathLike
from ..exceptions import InvalidParameterError, SchemaError
from ..findings import canonical_finding
from ..io._read import read_csv_file
from ..results import ReadReport, ReadResult
from ..schema._columns import check_columns
from ._fetch import metadata_path

__all__ = [
    "load_labels",
]

PADCHEST_FILE = "PADCHEST_chest_x_ray_images_labels_160K_01.02.19.csv.gz"
METHOD_SOURCES: Mapping[str, str] = MappingProxyType(
    {"Physician": "padchest_physician", "RNN_model": "padchest_rnn"}
)
"""``MethodLabel`` value → source name."""
SOURCES: tuple[str, ...] = tuple(METHOD_SOURCES.values())

PADCHEST_MAPPING: Mapping[str, str] = MappingProxyType(
    {
        # ChestX-ray14 findings, each with the PadChest terms for it and for its subtypes
        "atelectasis": "Atelectasis",
        "laminar atelectasis": "Atelectasis",
        "lobar atelectasis": "Atelectasis",
        "segmental atelectasis": "Atelectasis",
        "round atelectasis": "Atelectasis",
        "total atelectasis": "Atelectasis",
        "atelectasis basal": "Atelectasis",
        "cardiomegaly": "Cardiomegaly",
        "pleural effusion": "Effusion",
        "loculated pleural effusion": "Effusion",
        "loculated fissural effusion": "Effusion",
        "infiltrates": "Infiltration",
        "mass": "Mass",
        "pulmonary mass": "Mass",
        "nodule": "Nodule",
        "multiple nodules": "Nodule",
        "pneumonia": "Pneumonia",
        "atypical pneumonia": "Pneumonia",
        "pneumothorax": "Pneumothorax",
        "hydropneumothorax": "Pneumothorax",
        "consolidation": "Consolidation",
        "pulmonary edema": "Edema",
        "emphysema": "Emphysema",
        "pulmonary fibrosis": "Fibrosis",
        "pleural thickening": "Pleural Thickening",
        "apical pleural thickening": "Pleural Thickening",
        "calcified pleural thickening": "Pleural Thickening",
        "hernia": "Hernia",
        "hiatal hernia": "Hernia",
        # the all-clear report
        "normal": "No Finding",
    }
)
"""PadChest term (lower case, stripped) → canonical finding. Exact matches only; terms not listed are
counted and reported as unmapped. Deliberately left out: the radiological patterns (``alveolar pattern``,
``interstitial pattern``, ``ground glass pattern``, ``air bronchogram``), which torchxrayvision folds into
Infiltration/Consolidation; ``subcutaneous emphysema``; non-pulmonary masses (``mediastinal``,
``soft tissue``, ``pleural``, ``breast mass``); ``pseudonodule``; ``empyema``; ``fibrotic band``;
``pleural plaques``. Pass your own ``mapping=`` to :func:`load_labels` to change this."""

_NO_INFO = frozenset({"", "exclude"})
_LIST_RE = re.compile(r"\[\s*(?:'[^']*'\s*(?:,\s*'[^']*'\s*)*)?\]")
_TERM_RE = re.compile(r"'([^']*)'")


class LabelLists(NamedTuple):
    """What :func:`parse_label_lists` returns: each row's terms and whether the row is a parseable list literal."""

    terms: pd.Series
    ok: np.ndarray


def parse_label_lists(labels: pd.Series) -> LabelLists:
    """Parse ``Labels`` strings into lists of stripped, case-folded terms.

    Each distinct string is parsed once (a regular expression for the ``['a', ' b']`` literal), so the
    160k-row release parses in well under a second.

    Parameters
    ----------
    labels : pandas.Series of str
        ``Labels`` values; missing values are allowed.

    Returns
    -------
    terms : pandas.Series of list of str
        The terms of each row (an empty list for an unparseable row), aligned with ``labels``.
    ok : numpy.ndarray of bool
        Whether each row is a parseable list literal.
    """
    codes, uniq = pd.factorize(labels, use_na_sentinel=True)
    parsed: list[list[str]] = []
    good = np.zeros(len(uniq) + 1, dtype=bool)  # last slot: missing
    for k, s in enumerate(uniq):
        text = str(s).strip()
        if _LIST_RE.fullmatch(text):
            good[k] = True
            parsed.append([t.strip().casefold() for t in _TERM_RE.findall(text)])
        else:
            parsed.append([])
    parsed.append([])
    lists = np.empty(len(parsed), dtype=object)
    lists[:] = parsed
    return LabelLists(pd.Series(lists[codes], index=labels.index, dtype=object), good[codes])


def _check_mapping(mapping: object) -> dict[str, str]:
    if not isinstance(mapping, Mapping) or not mapping:
        raise InvalidParameterError(
            f"The 'mapping' parameter of load_labels must be a non-empty mapping of "
            f"PadChest term -> canonical finding. Got {mapping!r} instead."
        )
    out: dict[str, str] = {}
    for term, finding in mapping.items():
        if not isinstance(term, str) or not isinstance(finding, str):
            raise InvalidParameterError(
                f"The 'mapping' parameter of load_labels must map str to str. "
                f"Got {term!r}: {finding!r} instead."
            )
        key = term.strip().casefold()
        if key in _NO_INFO:
            raise InvalidParameterError(
                f"The 'mapping' parameter of load_labels cannot map {term!r}: the empty "
                f"term and 'exclude' carry no finding."
            )
        canon = canonical_finding(finding, where=f"mapping of PadChest term {term!r}")
        if out.get(key, canon) != canon:
            raise InvalidParameterError(
                f"The 'mapping' parameter of load_labels maps {key!r} to both {out[key]!r} and {canon!r}."
            )
        out[key] = canon
    return out


def _read(p: Path) -> pd.DataFrame:
    cols = ("ImageID", "PatientID", "MethodLabel", "Labels")
    df = read_csv_file(
        p,
        error=lambda f, exc: f"Could not read {str(f)!r} as a PadChest labels CSV: {exc}",
        usecols=lambda c: c in cols,
        dtype=str,
        keep_default_na=False,
        na_values=[""],
    )
    check_columns(df, cols, where=f"file {str(p)!r}")
    return df


def load_labels(
    path: PathLike | None = None,
    *,
    cache_dir: PathLike | None = None,
    mapping: Mapping[str, str] | None = None,
) -> ReadResult:
    """PadChest labels as a long label table, with physician- and RNN-labelled reports as two sources.

    Parameters
    ----------
    path : path, optional
        A user's own ``PADCHEST_chest_x_ray_images_labels_160K*.csv[.gz]``; default the fetched copy
        (``cxreval data fetch``).
    cache_dir : path, optional
        Cache directory override.
    mapping : mapping of str to str, optional
        PadChest term → canonical finding (default :data:`PADCHEST_MAPPING`). Terms are matched after
        stripping and case-folding; findings are canonicalised (:func:`cxreval.findings.canonical_finding`).

    Returns
    -------
    res : ReadResult
        ``res.table``: ``study_id, patient_id, finding, source, state``, one row per kept image and mapped
        finding (``positive`` / ``negative``), source ``padchest_physician`` or ``padchest_rnn``.
        ``res.report`` lists dropped rows with reasons; its notes give the images per source, the images
        where ``normal`` co-occurs with a mapped abnormal finding, and every unmapped term with its count.

    Raises
    ------
    DataUnavailableError
        The file is neither given nor fetched.
    SchemaError
        Unreadable file, missing column or duplicate ``ImageID`` (named with its rows).
    InvalidParameterError
        A bad ``mapping``.
    """
    lut = _check_mapping(PADCHEST_MAPPING if mapping is None else mapping)
    p = metadata_path(PADCHEST_FILE, cache_dir=cache_dir, path=path)
    df = _read(p)
    n = len(df)
    image = df["ImageID"].str.strip()
    image = image.where(image != "")
    patient = df["PatientID"].str.strip()
    patient = patient.where(patient != "")
    method = df["MethodLabel"].str.strip()
    terms, parsed = parse_label_lists(df["Labels"])

    dup = image.duplicated(keep=False).to_numpy() & image.notna().to_numpy()
    if dup.any():
        first = image[dup].iloc[0]
        rows = np.flatnonzero((image == first).to_numpy())[:4].tolist()
        raise SchemaError(
            f"Duplicate image {first!r} in file {str(p)!r}, column 'ImageID' (rows {rows}); "
            "PadChest has one row per image."
        )

    findings = list(dict.fromkeys(lut.values()))
    col = {f: j for j, f in enumerate(findings)}
    flat = terms.explode()  # one row per (image, term); empty lists give NaN
    flat = flat[flat.notna()]
    row_of = flat.index.to_numpy()
    tcodes, tuniq = pd.factorize(flat)
    tcol = np.array([col[lut[t]] if t in lut else -1 for t in tuniq], dtype=np.int64)
    tinfo = np.array([t not in _NO_INFO for t in tuniq], dtype=bool)
    hit = tcol[tcodes]
    mat = np.zeros((n, len(findings)), dtype=bool)
    mat[row_of[hit >= 0], hit[hit >= 0]] = True
    informative = np.zeros(n, dtype=bool)
    informative[row_of[tinfo[tcodes]]] = True

    reasons = [
        ("missing ImageID", image.isna().to_numpy(), df["ImageID"]),
        ("missing PatientID", patient.isna().to_numpy(), df["PatientID"]),
        (
            "unknown MethodLabel (expected 'Physician' or 'RNN_model')",
            ~method.isin(list(METHOD_SOURCES)).to_numpy(),
            df["MethodLabel"],
        ),
        ("unparseable Labels (expected a list literal such as \"['normal']\")", ~parsed, df["Labels"]),
        ("no informative label (only '' or 'exclude')", ~informative, df["Labels"]),
    ]
    drop = np.zeros(n, dtype=bool)
    parts = []
    for reason, bad, values in reasons:
        new = bad & ~drop  # one reason per row: the first that applies
        drop |= new
        idx = np.flatnonzero(new)
        parts.append(pd.DataFrame({"row": idx, "reason": reason, "value": values.to_numpy()[idx]}))
    dropped = pd.concat(parts, ignore_index=True).sort_values("row", kind="stable").reset_index(drop=True)

    keep = np.flatnonzero(~drop)
    k = len(findings)
    source = method.map(dict(METHOD_SOURCES)).to_numpy()[keep]
    table = pd.DataFrame(
        {
            "study_id": np.repeat(image.to_numpy()[keep], k),
            "patient_id": np.repeat(patient.to_numpy()[keep], k),
            "finding": np.tile(np.asarray(findings, dtype=object), len(keep)),
            "source": np.repeat(source, k),
            "state": pd.array(np.where(mat[keep].ravel(), 2, 0).astype(np.int8), dtype="Int8"),
        }
    )

    kept_flat = ~drop[row_of]
    sel = kept_flat & (tcol[tcodes] < 0) & tinfo[tcodes]
    pairs = pd.DataFrame({"row": row_of[sel], "term": tcodes[sel]}).drop_duplicates()
    unmapped = pd.Series(tuniq[pairs["term"].to_numpy()]).value_counts()  # images per unmapped term
    notes = [
        "images per source: " + ", ".join(f"{s} {int((source == s).sum())}" for s in SOURCES),
        f"{len(lut)} PadChest terms mapped onto {k} findings: {findings}; absent mapped findings are negative",
    ]
    if "No Finding" in col:
        abnormal = np.delete(mat[keep], col["No Finding"], axis=1).any(axis=1)
        both = int((mat[keep, col["No Finding"]] & abnormal).sum())
        if both:
            notes.append(
                f"'normal' listed together with a mapped abnormal finding in {both} images (both kept "
                "positive, as reported)"
            )
    if len(unmapped):
        listed = ", ".join(f"{t!r} {int(c)}" for t, c in unmapped.items())
        notes.append(f"{len(unmapped)} unmapped PadChest terms (term: images; not labels here): {listed}")
    return ReadResult(table, ReadReport(str(p), n, len(keep), dropped=dropped, notes=tuple(notes)))
