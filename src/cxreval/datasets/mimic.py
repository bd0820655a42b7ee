"""MIMIC-CXR (MIMIC-CXR-JPG 2.0.0 / 2.1.0): two report labellers, the official split, views and the
radiologist-labelled test set, as cxreval's long label table.

Citation: Johnson AEW, Pollard TJ, Berkowitz SJ, et al. MIMIC-CXR, a de-identified publicly available
database of chest radiographs with free-text reports. Sci Data 6, 317 (2019),
doi:10.1038/s41597-019-0322-0; and Johnson AEW et al., MIMIC-CXR-JPG, a large publicly available database
of labeled chest radiographs, arXiv:1901.07042 (2019). Data (credentialed access, PhysioNet):
https://physionet.org/content/mimic-cxr-jpg/2.0.0/ (labels, split, metadata; 377,110 images of 227,827
studies), https://physionet.org/content/mimic-cxr-jpg/2.1.0/ (adds the test set's radiologist labels) and
https://physionet.org/content/mimic-cxr/2.0.0/ (the reports, :mod:`cxreval.datasets.mimic_reports`).

Files (in one folder, each as published, ``.csv.gz`` or unzipped ``.csv``):

=========================================  ==================================================================
``mimic-cxr-2.0.0-chexpert.csv.gz``        ``subject_id, study_id`` and the 14 CheXpert observations, one row
                                           per study, labelled by the CheXpert labeler -> source
                                           ``mimic_chexpert``
``mimic-cxr-2.0.0-negbio.csv.gz``          the same layout, labelled by NegBio -> source ``mimic_negbio``
``mimic-cxr-2.0.0-split.csv.gz``           ``dicom_id, study_id, subject_id, split`` (``train``, ``validate``,
                                           ``test``), one row per image: the official split
``mimic-cxr-2.0.0-metadata.csv.gz``        ``dicom_id, subject_id, study_id, PerformedProcedureStepDescription,
                                           ViewPosition, Rows, Columns, StudyDate, StudyTime, ...``, one row per
                                           image: the views (``PA``, ``AP``, ``LATERAL``, ``LL`` ...)
``mimic-cxr-2.1.0-test-set-labeled.csv``   ``study_id`` and the 14 observations (``Airspace Opacity`` for
                                           ``Lung Opacity``), labelled by radiologists -> source
                                           ``mimic_radiologist`` (read when present)
=========================================  ==================================================================

Where these layouts were read: the PhysioNet project pages above (file list, the counts, the label
values); the column lists of the metadata and split files and the ``train`` / ``validate`` / ``test``
values as read by published loaders of the files (torchxrayvision's ``MIMIC_Dataset`` joins the label and
metadata files on ``subject_id, study_id`` and filters on ``ViewPosition``); the test set's columns
(``study_id`` only, no ``subject_id``; ``Airspace Opacity``) as read by a published harmonizer of
``mimic-cxr-2.1.0-test-set-labeled.csv``.

Label encoding: ``1.0`` positive, ``0.0`` negative, ``-1.0`` uncertain, blank not mentioned
(:data:`LABEL_CODES`); any other value is refused, naming the file, row and column. ``study_id`` is
MIMIC's study number (``50414267``), ``patient_id`` its ``subject_id`` (``10000032``); the findings are
:data:`cxreval.findings.CHEXPERT` (``Pleural Effusion`` is canonically ``Effusion``, the test set's
``Airspace Opacity`` is renamed ``Lung Opacity`` and the rename noted). The radiologist file has no
``subject_id``: a study's patient is looked up in the labeller files and the split; a study found in none
is dropped with its reason.

Uncertainty policy: the states are kept as published (uncertain and not mentioned are their own states);
what an analysis does with them is its own ``LabelPolicy`` (the default of classification excludes
uncertain labels and counts not mentioned as negative, CheXpert practice). The two labellers label the same
studies from the same reports; their disagreement is the field's canonical reference disagreement
(``cxreval agree``).

Views: ``views=('PA', 'AP')`` keeps the studies with at least one image of those ``ViewPosition`` values
(needs the metadata file); split: ``split='test'`` keeps the studies of one part of the official split.
Every study left out is listed in the read report's ``dropped`` with its reason.

Examples
--------
>>> res = load_labels("mimic-cxr-jpg/2.0.0", views=("PA", "AP"))   # doctest: +SKIP
>>> sorted(res.table["source"].unique())                           # doctest: +SKIP
['mimic_chexpert', 'mimic_negbio']
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from types import MappingProxyType
from typing import NamedTuple

import numpy as np
import pandas as pd

from .._typing import PathLike
from .._validation import did_you_mean
from ..exceptions import DataUnavailableError, InvalidParameterError, SchemaError, UnknownNameError
from ..findings import CHEXPERT, canonical_finding
from ..io._read import read_csv_file
from ..labels import validate_label_table
from ..results import ReadReport, ReadResult
from ..schema._columns import check_columns, first_true

__all__ = [
    "load_labels",
]

CHEXPERT_FILE = "mimic-cxr-2.0.0-chexpert.csv.gz"
NEGBIO_FILE = "mimic-cxr-2.0.0-negbio.csv.gz"
SPLIT_FILE = "mimic-cxr-2.0.0-split.csv.gz"
METADATA_FILE = "mimic-cxr-2.0.0-metadata.csv.gz"
TEST_SET_FILE = "mimic-cxr-2.1.0-test-set-labeled.csv"
SOURCE_FILES: Mapping[str, str] = MappingProxyType(
    {"mimic_chexpert": CHEXPERT_FILE, "mimic_negbio": NEGBIO_FILE, "mimic_radiologist": TEST_SET_FILE}
)
"""Source name -> the file that holds it."""
SOURCES: tuple[str, ...] = tuple(SOURCE_FILES)
SPLITS: tuple[str, ...] = ("train", "validate", "test")
"""The parts of the official split, as spelled in ``mimic-cxr-2.0.0-split.csv.gz``."""
LABEL_CODES: Mapping[float, int] = MappingProxyType({1.0: 2, 0.0: 0, -1.0: 1})
"""A published label value -> cxreval's state (blank: not mentioned, -1)."""
SPLIT_COLUMNS: tuple[str, ...] = ("dicom_id", "study_id", "subject_id", "split")
METADATA_COLUMNS: tuple[str, ...] = ("dicom_id", "subject_id", "study_id", "ViewPosition")
"""The metadata columns read (the file has more: Rows, Columns, StudyDate, ...)."""

_PAGE = {
    CHEXPERT_FILE: "https://physionet.org/content/mimic-cxr-jpg/2.0.0/",
    NEGBIO_FILE: "https://physionet.org/content/mimic-cxr-jpg/2.0.0/",
    SPLIT_FILE: "https://physionet.org/content/mimic-cxr-jpg/2.0.0/",
    METADATA_FILE: "https://physionet.org/content/mimic-cxr-jpg/2.0.0/",
    TEST_SET_FILE: "https://physionet.org/content/mimic-cxr-jpg/2.1.0/",
}
_RENAMES = {"Airspace Opacity": "Lung Opacity"}


def _variants(name: str) -> tuple[str, ...]:
    """The published name and its other compression (``x.csv.gz`` and ``x.csv``)."""
    return (name, name[:-3]) if name.endswith(".gz") else (name, name + ".gz")


def _folder(root: PathLike) -> Path:
    d = Path(root)
    if not d.is_dir():
        raise DataUnavailableError(
            f"MIMIC-CXR folder {str(d)!r} does not exist or is not a folder; pass the folder "
            f"holding {CHEXPERT_FILE}, {NEGBIO_FILE}, ... (MIMIC-CXR-JPG)."
        )
    return d


def optional_file(root: PathLike, name: str) -> Path | None:
    """The file ``name`` (or its other compression) in the folder ``root``, or None when absent."""
    d = _folder(root)
    return next((d / v for v in _variants(name) if (d / v).is_file()), None)


def find_file(root: PathLike, name: str) -> Path:
    """The file ``name`` (or its gzipped / unzipped variant) in the MIMIC-CXR folder ``root``.

    Raises
    ------
    DataUnavailableError
        ``root`` is not a folder, or the file is missing: the message names the expected file, where to
        download it and where to place it.
    """
    found = optional_file(root, name)
    if found is not None:
        return found
    d = Path(root)
    near = sorted(p.name for p in d.iterdir() if p.name.startswith("mimic-cxr"))
    hint = f" Found {near}." if near else ""
    raise DataUnavailableError(
        f"MIMIC-CXR folder {str(d)!r} has no {name!r} (nor {_variants(name)[1]!r}): download it "
        f"from {_PAGE.get(name, _PAGE[CHEXPERT_FILE])} (credentialed access) and place it in "
        f"{str(d)!r} under that name.{hint}"
    )


def _read_csv(p: Path, dtype: Mapping[str, object]) -> pd.DataFrame:
    return read_csv_file(
        p,
        error=lambda f, exc: f"Could not read file {str(f)!r} as CSV: {exc}",
        dtype=dtype,
        keep_default_na=False,
        na_values=[""],
    )


def _missing_ids(df: pd.DataFrame, cols: Sequence[str], where: str) -> None:
    for c in cols:
        miss = df[c].isna().to_numpy()
        if miss.any():
            raise SchemaError(f"Missing {c} in {where}, row {int(np.flatnonzero(miss)[0])}, column {c!r}.")


def _wide_states(df: pd.DataFrame, where: str) -> tuple[list[str], np.ndarray, list[str]]:
    """The finding columns of a wide label file (canonical names), their states ``(n, k)`` and the renames."""
    cols = [c for c in df.columns if c not in ("subject_id", "study_id")]
    canon, renames = [], []
    for c in cols:
        name = _RENAMES.get(c, c)
        f = canonical_finding(name, where=f"{where}, column {c!r}")
        if f not in CHEXPERT:
            raise SchemaError(
                f"Column {c!r} of {where} is not one of the 14 MIMIC-CXR observations {list(CHEXPERT)}."
            )
        canon.append(f)
        if c in _RENAMES:
            renames.append(f"{c} -> {f}")
    missing = [f for f in CHEXPERT if f not in canon]
    if missing:
        raise SchemaError(
            f"{where} lacks the observation columns {missing}; expected subject_id, study_id and "
            f"the 14 observations {list(CHEXPERT)} (as published, e.g. 'Pleural Effusion')."
        )
    states = np.empty((len(df), len(cols)), dtype=np.int8)
    for j, c in enumerate(cols):
        states[:, j] = decode_label_codes(df[c], where=where, column=c)
    return canon, states, renames


def decode_label_codes(values: pd.Series, *, where: str, column: str) -> np.ndarray:
    """One column of a CheXpert-labeller release (MIMIC-CXR's, CheXpert's) as states (:data:`LABEL_CODES`, a
    blank cell not mentioned, -1), ``int8``; any other value is refused naming ``where``, the row and
    ``column``."""
    num = pd.to_numeric(values, errors="coerce").to_numpy(dtype=float)
    blank = values.isna().to_numpy()
    bad = ~blank & ~np.isin(num, list(LABEL_CODES))
    if (i := first_true(bad)) is not None:
        v = values.iloc[i]
        raise SchemaError(
            f"Label {(v.item() if isinstance(v, np.generic) else v)!r} outside the domain in {where}, "
            f"row {i}, column {column!r}; expected 1.0, 0.0, -1.0 or blank."
        )
    codes = np.full(len(values), -1, dtype=np.int8)
    for v_, s in LABEL_CODES.items():
        codes[num == v_] = s
    return codes


class MimicLabelFile(NamedTuple):
    """What :func:`read_label_file` returns: the id columns, the canonical findings, the states
    ``(n_studies, n_findings)`` (cxreval codes) and the column renames."""

    ids: pd.DataFrame
    findings: list[str]
    states: np.ndarray
    renames: list[str]


def read_label_file(p: Path, *, patient: bool = True) -> MimicLabelFile:
    """One wide label file: its id columns (``subject_id`` when ``patient``, ``study_id``), the canonical
    findings, the states ``(n_studies, n_findings)`` (cxreval codes) and the column renames."""
    where = f"file {str(p)!r}"
    ids = ["subject_id", "study_id"] if patient else ["study_id"]
    df = _read_csv(p, {c: str for c in ("subject_id", "study_id")})
    check_columns(df, ids, where=where)
    if not len(df):
        raise SchemaError(f"{where} has no rows.")
    _missing_ids(df, ids, where)
    dup = df["study_id"].duplicated()
    if dup.any():
        i = int(np.flatnonzero(dup.to_numpy())[0])
        raise SchemaError(
            f"Duplicate study_id {df['study_id'].iloc[i]!r} in {where}, row {i}; one row per study."
        )
    label_df = df.drop(columns=[c for c in ("subject_id", "study_id") if c in df.columns])
    canon, states, renames = _wide_states(label_df, where)
    return MimicLabelFile(df[ids], canon, states, renames)


def _text(values: object, take: np.ndarray) -> pd.Series:
    """``values[take]`` as a text column, built by taking from the (few) values rather than converting every
    cell: a MIMIC-size table has 6 million cells per column."""
    return (
        pd.Series(pd.array(np.asarray(values, dtype=object), dtype="str")).take(take).reset_index(drop=True)
    )


def _long(
    studies: np.ndarray, patients: np.ndarray, canon: list[str], states: np.ndarray, source: str
) -> pd.DataFrame:
    k, n = len(canon), len(studies)
    rows = np.repeat(np.arange(n), k)
    return pd.DataFrame(
        {
            "study_id": _text(studies, rows),
            "patient_id": _text(patients, rows),
            "finding": _text(canon, np.tile(np.arange(k), n)),
            "source": _text([source], np.zeros(n * k, int)),
            "state": pd.array(states.ravel(), dtype="Int8"),
        }
    )


def load_split(root: PathLike) -> ReadResult:
    """The official split (``mimic-cxr-2.0.0-split.csv.gz``): ``dicom_id, study_id, patient_id, split``.

    Raises
    ------
    DataUnavailableError
        The file is missing (the message says where to put it).
    SchemaError
        A missing column or id, or a split outside :data:`SPLITS`.
    """
    p = find_file(root, SPLIT_FILE)
    where = f"file {str(p)!r}"
    df = _read_csv(p, {c: str for c in SPLIT_COLUMNS})
    check_columns(df, SPLIT_COLUMNS, where=where)
    _missing_ids(df, SPLIT_COLUMNS, where)
    bad = ~df["split"].isin(SPLITS).to_numpy()
    if (i := first_true(bad)) is not None:
        raise SchemaError(
            f"Split {df['split'].iloc[i]!r} in {where}, row {i}, column 'split' is not one of {list(SPLITS)}."
        )
    table = pd.DataFrame(
        {
            "dicom_id": df["dicom_id"].to_numpy(),
            "study_id": df["study_id"].to_numpy(),
            "patient_id": df["subject_id"].to_numpy(),
            "split": df["split"].to_numpy(),
        }
    )
    return ReadResult(table, ReadReport(str(p), len(df), len(df)))


def load_metadata(root: PathLike) -> ReadResult:
    """The per-image metadata (``mimic-cxr-2.0.0-metadata.csv.gz``): ``dicom_id, study_id, patient_id, view``
    (``view`` is ``ViewPosition``; a blank one is ``''``, kept)."""
    p = find_file(root, METADATA_FILE)
    where = f"file {str(p)!r}"
    df = _read_csv(p, {c: str for c in METADATA_COLUMNS})
    check_columns(df, METADATA_COLUMNS, where=where)
    _missing_ids(df, METADATA_COLUMNS[:3], where)
    table = pd.DataFrame(
        {
            "dicom_id": df["dicom_id"].to_numpy(),
            "study_id": df["study_id"].to_numpy(),
            "patient_id": df["subject_id"].to_numpy(),
            "view": df["ViewPosition"].fillna("").astype(str).str.strip().to_numpy(),
        }
    )
    notes: tuple[str, ...] = ()
    n_blank = int((table["view"] == "").sum())
    if n_blank:
        notes = (f"{n_blank} images have a blank ViewPosition",)
    return ReadResult(table, ReadReport(str(p), len(df), len(df), notes=notes))


def _check_views(views: object) -> tuple[str, ...] | None:
    if views is None:
        return None
    if isinstance(views, str):
        views = [v for v in views.split(",")]
    if not isinstance(views, Sequence) or not all(isinstance(v, str) for v in views):
        raise InvalidParameterError(
            f"The 'views' parameter of load_labels must be a sequence of ViewPosition values "
            f"such as ('PA', 'AP'), or None. Got {views!r} instead."
        )
    out = tuple(v.strip().upper() for v in views if v.strip())
    if not out:
        raise InvalidParameterError(
            "The 'views' parameter of load_labels names no view; pass e.g. ('PA', 'AP')."
        )
    return out


def check_views_present(views: Sequence[str], present: Sequence[str], *, func: str, where: str) -> None:
    """Refuse views of which no image of the data has any (a typo, or another data set's spelling): the
    filter would keep no study, an empty table written as a success. (A list some of whose views the data has,
    such as ``PA,AP`` on a subset without PA images, keeps the studies of the others.)

    Raises
    ------
    InvalidParameterError
        Naming the views, ``func``'s ``views`` parameter, and the views the data has.
    """
    have = sorted({str(v) for v in present if str(v)})
    if not set(views) & set(have):
        hint = did_you_mean(views[0], have)
        raise InvalidParameterError(
            f"The 'views' parameter of {func} names {list(views)} but no image of {where} "
            f"has such a view, so no study would be kept; its views are {have}.{hint}"
        )


def _check_sources(sources: object, present: Sequence[str]) -> list[str]:
    if sources is None:
        return list(present)
    if isinstance(sources, str):
        sources = [s.strip() for s in sources.split(",") if s.strip()]
    if not isinstance(sources, Sequence) or not sources:
        raise InvalidParameterError(
            f"The 'sources' parameter of load_labels must be a non-empty sequence of "
            f"{list(SOURCES)}. Got {sources!r} instead."
        )
    for s in sources:
        if s not in SOURCES:
            raise UnknownNameError(
                f"Unknown MIMIC-CXR source {s!r}; expected one of {list(SOURCES)}."
                f"{did_you_mean(str(s), SOURCES)}"
            )
    return list(sources)


def load_labels(
    root: PathLike,
    *,
    sources: Sequence[str] | None = None,
    views: Sequence[str] | str | None = None,
    split: str | None = None,
) -> ReadResult:
    """The MIMIC-CXR label sources of a MIMIC-CXR-JPG folder as one long label table.

    Parameters
    ----------
    root : path
        The folder holding the files of the module docstring.
    sources : sequence of {'mimic_chexpert', 'mimic_negbio', 'mimic_radiologist'}, optional
        Default: the two labellers, and ``mimic_radiologist`` when its file is present. A named source
        whose file is missing raises.
    views : sequence of str, optional
        ``ViewPosition`` values (``('PA', 'AP')``, case-insensitive): keep the studies with at least one such
        image (needs ``mimic-cxr-2.0.0-metadata.csv.gz``).
    split : {'train', 'validate', 'test'}, optional
        Keep the studies of one part of the official split (needs ``mimic-cxr-2.0.0-split.csv.gz``).

    Returns
    -------
    res : ReadResult
        ``res.table``: ``study_id, patient_id, finding, source, state``, per source in file order;
        ``res.report``: rows read (studies, over every file), kept, the studies dropped by ``views`` /
        ``split`` / an unknown patient (``row`` is the row in its file, ``value`` ``source:study_id``), notes.

    Raises
    ------
    DataUnavailableError
        A required file is missing (named, with where to download and place it).
    SchemaError
        A malformed file (named, with row and column).
    InvalidParameterError
        Bad ``sources``, ``views`` or ``split``.
    """
    vw = _check_views(views)
    if split is not None and split not in SPLITS:
        raise InvalidParameterError(
            f"The 'split' parameter of load_labels must be one of {list(SPLITS)} or None. "
            f"Got {split!r} instead.{did_you_mean(str(split), SPLITS)}"
        )
    present = [s for s in SOURCES if s != "mimic_radiologist" or optional_file(root, TEST_SET_FILE)]
    want = _check_sources(sources, present)
    files = {s: find_file(root, SOURCE_FILES[s]) for s in want}
    keep_studies: dict[str, set[str] | pd.Index] = {}
    # the split: to keep one part, and to look up the patients of the radiologists' studies (when present)
    use_split = split is not None or (
        "mimic_radiologist" in want and optional_file(root, SPLIT_FILE) is not None
    )
    split_table = load_split(root).table if use_split else None
    if vw is not None:
        meta = load_metadata(root).table
        check_views_present(
            vw, pd.unique(meta["view"]), func="load_labels", where=f"{METADATA_FILE} in {str(root)!r}"
        )
        keep_studies["views"] = pd.Index(meta.loc[meta["view"].isin(vw), "study_id"]).unique()
    if split is not None and split_table is not None:
        keep_studies["split"] = pd.Index(split_table.loc[split_table["split"] == split, "study_id"]).unique()
    read = {s: read_label_file(files[s], patient=s != "mimic_radiologist") for s in want}
    lookups = [ids.set_index("study_id")["subject_id"] for ids, *_ in read.values() if "subject_id" in ids]
    if split_table is not None:
        lookups.append(split_table.drop_duplicates("study_id").set_index("study_id")["patient_id"])
    chex = optional_file(root, CHEXPERT_FILE)
    if not lookups and chex is not None:  # the radiologists alone: their patients from the labeller file
        lookups.append(read_label_file(chex)[0].set_index("study_id")["subject_id"])
    patient_of = pd.concat(lookups) if lookups else pd.Series(dtype=object)
    patient_of = patient_of[~patient_of.index.duplicated()]
    tables, dropped, notes, n_read = [], [], [], 0
    for s, (ids, canon, states, renames) in read.items():
        n_read += len(ids)
        studies = ids["study_id"].to_numpy(dtype=object)
        if "subject_id" in ids:
            patients = ids["subject_id"].to_numpy(dtype=object)
        else:
            patients = patient_of.reindex(studies).to_numpy(dtype=object)
        reasons = np.full(len(studies), "", dtype=object)
        reasons[pd.isna(patients)] = "study in no labeller file nor the split (no subject_id)"
        for what, members in keep_studies.items():
            out = (pd.Index(members).get_indexer(studies) < 0) & (reasons == "")
            reasons[out] = (
                f"no image with ViewPosition in {list(vw or ())}"
                if what == "views"
                else f"not in the official split's {split!r} part"
            )
        keep = reasons == ""
        drop = np.flatnonzero(~keep)
        if len(drop):
            dropped.append(
                pd.DataFrame(
                    {"row": drop, "reason": reasons[drop], "value": [f"{s}:{v}" for v in studies[drop]]}
                )
            )
        tables.append(_long(studies[keep], patients[keep], canon, states[keep], s))
        notes += [f"{s}: renamed {r}" for r in renames]
    absent = [s for s in SOURCES if s not in present]
    if absent and sources is None:
        notes.append(f"sources without a file: {absent} ({TEST_SET_FILE} not in the folder)")
    table = validate_label_table(
        pd.concat(tables, ignore_index=True), where=f"MIMIC-CXR folder {str(root)!r}"
    )
    if table.empty and keep_studies:
        chosen = " and ".join(
            f"{k}={v!r}" for k, v in (("views", list(vw or ())), ("split", split)) if k in keep_studies
        )
        raise SchemaError(
            f"MIMIC-CXR folder {str(root)!r}: {chosen} keep(s) no labelled study; nothing to load."
        )
    drop_df = (
        pd.concat(dropped, ignore_index=True) if dropped else pd.DataFrame(columns=["row", "reason", "value"])
    )
    n_kept = n_read - len(drop_df)
    return ReadResult(table, ReadReport(str(root), n_read, n_kept, dropped=drop_df, notes=tuple(notes)))
