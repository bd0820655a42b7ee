"""Dataset audit: what a dataset holds, and whether its split leaks patients.

:func:`audit_chestxray14` counts, from ChestX-ray14's ``Data_Entry_2017*.csv`` and ``BBox_List_2017.csv``:

- images and patients, overall and per finding (and for ``No Finding``, the all-negative images);
- views (``PA`` / ``AP``);
- radiologist boxes per finding and the images that carry them (and how many of those images carry the
  boxed finding in the text-mined labels);
- optionally a split (a folder of ``*list.txt`` files, or a ``study_id, split`` table): images and
  patients per part and patients shared between parts (see :func:`cxreval.datasets.audit_split`);
- beside these, ChestX-ray8's published counts (:data:`CHESTXRAY8_PUBLISHED`, the CVPR 2017 paper [1]_:
  108,948 images of 32,717 patients, 24,636 with one of the eight findings, 84,312 normal, and its Table 1
  images per finding), in ``published_counts``, beside the audited counts on the same eight findings: the
  dataset was released as ChestX-ray8 and extended to ChestX-ray14 (112,120 images of 30,805 patients), and
  the published numbers are not those of the files audited.

:meth:`DatasetAudit.save` writes its :data:`~DatasetAudit.FILES`: ``audit.json`` (read by the report
builder) and one CSV + Parquet table per section (the split tables only when a split was audited);
:meth:`DatasetAudit.summary` is ``summary.md``. ``cxreval data audit chestxray14 -o OUT`` and the demo's
audit section both call :func:`audit_chestxray14` and save with :meth:`DatasetAudit.save`.

References
----------
.. [1] X. Wang, Y. Peng, L. Lu, Z. Lu, M. Bagheri and R. M. Summers, "ChestX-ray8: Hospital-scale chest
   X-ray database and benchmarks on weakly-supervised classification and localization of common thorax
   diseases", Proc. IEEE CVPR 2017, 3462-3471. https://doi.org/10.1109/CVPR.2017.369

Examples
--------
>>> res = audit_chestxray14()                          # doctest: +SKIP
>>> res.n_images, res.n_patients, res.n_boxes, res.n_boxed_images   # doctest: +SKIP
(112120, 30805, 984, 880)
>>> CHESTXRAY8_PUBLISHED.n_images, CHESTXRAY8_PUBLISHED.n_patients, CHESTXRAY8_PUBLISHED.images["Effusion"]
(108948, 32717, 6331)
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from .._typing import PathLike
from .._validation import check_path
from ..exceptions import InvalidParameterError, SchemaError
from ..findings import CHESTXRAY14
from ..io import markdown_table, write_table
from ..io._write import write_summary
from ..results import TableResult
from . import nih
from ._bbox_list import _read_boxes
from ._fetch import metadata_path
from ._published import CHESTXRAY8_PUBLISHED, _published_table
from ._splits import LeakageAudit, audit_split, read_split_lists

__all__ = [
    "DatasetAudit",
    "audit_dataset",
    "audit_chestxray14",
]

AUDITABLE: tuple[str, ...] = ("chestxray14", "mimic_cxr")
"""The datasets :func:`audit_dataset` (``cxreval data audit``) knows."""
NO_FINDING = "No Finding"


_SPLIT_FILES = {
    "split_sizes": "split_sizes.csv",
    "split_pairs": "split_pairs.csv",
    "shared_patients": "shared_patients.csv",
}


@dataclass(frozen=True)
class DatasetAudit(TableResult):
    """Counts describing a dataset and (optionally) one split of it.

    Files (:data:`FILES`): ``audit.json`` (:meth:`to_dict`), ``findings``, ``views``, ``boxes`` and, when a split
    was audited (:data:`SPLIT_FILES`), ``split_sizes``, ``split_pairs`` and ``shared_patients`` (CSV + Parquet).

    Attributes
    ----------
    dataset : str
        Dataset name (``chestxray14``).
    n_images, n_patients : int
        Images and distinct patients.
    findings : pandas.DataFrame
        ``finding, n_images, n_patients, image_fraction``: one row per finding plus ``No Finding``.
    views : pandas.DataFrame
        ``view, n_images, n_patients``.
    boxes : pandas.DataFrame
        ``finding, n_boxes, n_images, n_images_labelled`` (``n_images_labelled``: boxed images whose
        text-mined labels include the boxed finding).
    n_boxes, n_boxed_images : int
        Radiologist boxes and the distinct images that carry them.
    split : LeakageAudit or None
        The split audit, when a split was given.
    sources : dict
        The files read.
    notes : tuple of str
        Anything worth recording (how boxes were read, studies outside the metadata).
    published : pandas.DataFrame or None
        :data:`PUBLISHED_COLUMNS`: the dataset's published counts beside the audited ones
        (ChestX-ray8's for ChestX-ray14, the audited counts on its eight findings), ``published_counts.csv``.
    """

    dataset: str
    n_images: int
    n_patients: int
    findings: pd.DataFrame
    views: pd.DataFrame
    boxes: pd.DataFrame
    n_boxes: int
    n_boxed_images: int
    split: LeakageAudit | None = None
    sources: dict[str, str] = field(default_factory=dict)
    notes: tuple[str, ...] = ()
    published: pd.DataFrame | None = None

    FILES: ClassVar[Mapping[str, str]] = MappingProxyType(
        {
            "audit": "audit.json",
            "findings": "findings.csv",
            "views": "views.csv",
            "boxes": "boxes.csv",
            **_SPLIT_FILES,
            "published_counts": "published_counts.csv",
        }
    )
    SPLIT_FILES: ClassVar[Mapping[str, str]] = MappingProxyType(_SPLIT_FILES)
    """The files written only when a split was audited."""
    COLUMNS: ClassVar[tuple[str, ...]] = ("finding", "n_images", "n_patients", "image_fraction")
    """Columns of ``table`` (``findings.csv``)."""
    VIEW_COLUMNS: ClassVar[tuple[str, ...]] = ("view", "n_images", "n_patients")
    BOX_COLUMNS: ClassVar[tuple[str, ...]] = ("finding", "n_boxes", "n_images", "n_images_labelled")

    @property
    def table(self) -> pd.DataFrame:
        """The per-finding counts (``findings.csv``)."""
        return self.findings

    def tables(self) -> dict[str, pd.DataFrame]:
        """The tidy tables of this audit, by name (``findings``, ``views``, ``boxes``, split tables)."""
        out = {"findings": self.findings, "views": self.views, "boxes": self.boxes}
        if self.split is not None:
            out.update(
                {
                    "split_sizes": self.split.sizes,
                    "split_pairs": self.split.pairs,
                    "shared_patients": self.split.shared_patients,
                }
            )
        if self.published is not None:
            out["published_counts"] = self.published
        return out

    def save(self, folder: PathLike) -> dict[str, Path]:
        """Write ``audit.json``, every table of :meth:`tables` (CSV + Parquet) and ``summary.md`` (:meth:`summary`)
        into ``folder``: what ``cxreval data audit -o`` writes beside ``run.json``. Return ``{name: path}`` (the
        split files only when a split was audited; ``summary.md`` under ``"summary"``)."""
        d = Path(folder)
        written = {
            name: write_table(df, d, Path(self.FILES[name]).stem) for name, df in self.tables().items()
        }
        written["audit"] = d / self.FILES["audit"]
        written["audit"].write_text(
            json.dumps(self.to_dict(), indent=2, sort_keys=True, default=_json) + "\n"
        )
        written["summary"] = write_summary(d, self.summary())
        return written

    def summary(self) -> str:
        """The audit as Markdown (``summary.md``): sizes, per-finding counts, the split check and notes."""
        return audit_summary(self)

    def to_dict(self) -> dict[str, object]:
        return {
            "dataset": self.dataset,
            "n_images": self.n_images,
            "n_patients": self.n_patients,
            "findings": self.findings.to_dict(orient="records"),
            "views": self.views.to_dict(orient="records"),
            "boxes": {
                "n_boxes": self.n_boxes,
                "n_boxed_images": self.n_boxed_images,
                "per_finding": self.boxes.to_dict(orient="records"),
            },
            "split": None if self.split is None else self.split.to_dict(),
            "sources": dict(self.sources),
            "notes": list(self.notes),
            "published": None if self.published is None else self.published.to_dict(orient="records"),
        }

    def _figure(self) -> Any:
        """Images per finding (the audited counts)."""
        from .._plots import bars

        return bars(
            self.findings,
            x="finding",
            y="n_images",
            title=f"{self.dataset}: images per finding",
            y_title="images",
        )


def _count(mask: np.ndarray, patients: np.ndarray) -> tuple[int, int]:
    return int(mask.sum()), int(pd.unique(patients[mask]).size)


def audit_chestxray14(
    *,
    path: PathLike | None = None,
    bbox_path: PathLike | None = None,
    split_dir: PathLike | None = None,
    splits: pd.DataFrame | None = None,
    cache_dir: PathLike | None = None,
) -> DatasetAudit:
    """Audit ChestX-ray14: images, patients, findings, views, boxes and (optionally) a split.

    Parameters
    ----------
    path : path, optional
        A ``Data_Entry_2017*.csv[.gz]``; default the fetched copy.
    bbox_path : path, optional
        A ``BBox_List_2017.csv[.gz]``; default the fetched copy.
    split_dir : path, optional
        A folder of ``*list.txt`` files, one split part per file (see
        :func:`cxreval.datasets.read_split_lists`).
    splits : pandas.DataFrame, optional
        A ``study_id, split`` table instead of ``split_dir`` (e.g. a generated split).
    cache_dir : path, optional
        Cache directory override.

    Returns
    -------
    res : DatasetAudit

    Raises
    ------
    SchemaError
        Malformed files; both ``split_dir`` and ``splits`` given.
    DataUnavailableError
        Metadata not fetched and no path given.
    """
    check_path(split_dir, name="split_dir", func="audit_chestxray14")
    check_path(bbox_path, name="bbox_path", func="audit_chestxray14")
    if split_dir is not None and splits is not None:
        raise SchemaError("audit_chestxray14 takes either split_dir or splits, not both.")
    meta = nih.load_metadata(path, cache_dir=cache_dir)
    data_path = str(metadata_path(nih.DATA_ENTRY, cache_dir=cache_dir, path=path))
    mat = nih.finding_matrix(meta["finding_labels"], where=f"file {data_path!r}, column 'Finding Labels'")
    patients = meta["patient_id"].to_numpy()
    n_images, n_patients = len(meta), int(pd.unique(patients).size)
    rows = []
    for f in CHESTXRAY14:
        rows.append((f, *_count(mat[f].to_numpy(), patients)))
    rows.append((NO_FINDING, *_count(~mat.to_numpy().any(axis=1), patients)))
    findings = pd.DataFrame(rows, columns=["finding", "n_images", "n_patients"])
    findings["image_fraction"] = findings["n_images"] / n_images
    views = (
        meta.groupby("view", sort=True)
        .agg(n_images=("study_id", "size"), n_patients=("patient_id", "nunique"))
        .reset_index()
    )
    box_table, box_src, box_note = _read_boxes(bbox_path, cache_dir)
    notes = [box_note]
    known = pd.Index(meta["study_id"]).get_indexer(box_table["study_id"]) >= 0
    if not known.all():
        notes.append(
            f"{int((~known).sum())} boxes lie on images absent from Data_Entry "
            f"(e.g. {box_table.loc[~known, 'study_id'].iloc[0]!r})"
        )
    labelled = mat.set_axis(meta["study_id"].to_numpy())
    brows = []
    for f, g in box_table.groupby("finding", sort=False):
        imgs = pd.unique(g["study_id"])
        inside = [s for s in imgs if s in labelled.index]
        brows.append((f, len(g), len(imgs), int(labelled.loc[inside, f].sum()) if inside else 0))
    boxes = pd.DataFrame(brows, columns=["finding", "n_boxes", "n_images", "n_images_labelled"])
    boxes = (
        boxes.set_index("finding")
        .reindex([f for f in CHESTXRAY14 if f in set(boxes["finding"])])
        .reset_index()
    )
    split_audit = None
    sources = {"data_entry": data_path, "bbox_list": box_src}
    if split_dir is not None:
        lists = read_split_lists(split_dir)
        sources["split_dir"] = str(split_dir)
        if lists.report.n_dropped:
            notes.append(
                f"split lists: {lists.report.n_dropped} repeated ids dropped ({lists.report.reasons()})"
            )
        splits = lists.table
    if splits is not None:
        split_audit = audit_split(splits, meta[["study_id", "patient_id"]])
        notes.extend(split_audit.notes)
    res = DatasetAudit(
        "chestxray14",
        n_images,
        n_patients,
        findings,
        views,
        boxes,
        int(len(box_table)),
        int(box_table["study_id"].nunique()),
        split_audit,
        sources,
        tuple(notes),
    )
    pub = CHESTXRAY8_PUBLISHED
    n_with = int(mat[list(pub.images)].to_numpy().any(axis=1).sum())
    return dataclasses.replace(res, published=_published_table(res, n_with, pub))


def audit_mimic_cxr(*, split_dir: PathLike, path: PathLike | None = None) -> DatasetAudit:
    """Audit MIMIC-CXR's official split (``mimic-cxr-2.0.0-split.csv.gz``) and what the folder holds.

    The split file lists every image (``dicom_id``) with its study, patient (``subject_id``) and part
    (``train``, ``validate``, ``test``). The audit counts images and patients, the images per view (with the
    metadata file) and per finding positive under the CheXpert labeler (an image carries its study's
    labels; with ``mimic-cxr-2.0.0-chexpert.csv.gz``), and audits the split at the study level with
    :func:`cxreval.datasets.audit_split`: a patient whose studies lie in two parts, or a study whose
    images lie in two parts, is leakage. The published split is patient-level (0 shared patients).

    Parameters
    ----------
    split_dir : path
        The folder holding ``mimic-cxr-2.0.0-split.csv.gz`` (the MIMIC-CXR-JPG folder).
    path : path, optional
        The folder holding the label and metadata files; default ``split_dir``.

    Returns
    -------
    res : DatasetAudit
        ``dataset='mimic_cxr'``; ``boxes`` is empty (MIMIC-CXR has no boxes).

    Raises
    ------
    DataUnavailableError
        No split file in ``split_dir`` (the message says where to download and place it).
    """
    from . import mimic

    check_path(split_dir, name="split_dir", func="audit_mimic_cxr")
    check_path(path, name="path", func="audit_mimic_cxr")
    root = path if path is not None else split_dir
    split_res = mimic.load_split(split_dir)
    sp = split_res.table
    patients = sp["patient_id"].to_numpy()
    sources = {"split": split_res.report.source}
    notes: list[str] = []
    meta_file = mimic.optional_file(root, mimic.METADATA_FILE)
    if meta_file is not None:
        meta = mimic.load_metadata(root).table
        sources["metadata"] = str(meta_file)
        views = (
            meta.assign(view=meta["view"].replace("", "(blank)"))
            .groupby("view", sort=True)
            .agg(n_images=("dicom_id", "size"), n_patients=("patient_id", "nunique"))
            .reset_index()
        )
    else:
        views = pd.DataFrame(columns=list(DatasetAudit.VIEW_COLUMNS))
        notes.append(f"no {mimic.METADATA_FILE} in {str(root)!r}: views not counted")
    rows = []
    chex = mimic.optional_file(root, mimic.CHEXPERT_FILE)
    if chex is not None:
        sources["mimic_chexpert"] = str(chex)
        ids, canon, states, _ = mimic.read_label_file(chex, patient=True)
        row_of = pd.Index(ids["study_id"]).get_indexer(sp["study_id"])
        has = row_of >= 0
        if not has.all():
            notes.append(
                f"{int((~has).sum())} images of the split have a study without CheXpert labeler labels"
            )
        for j, f in enumerate(canon):
            pos = np.zeros(len(sp), dtype=bool)
            pos[has] = states[row_of[has], j] == 2
            rows.append((f, *_count(pos, patients)))
    else:
        notes.append(f"no {mimic.CHEXPERT_FILE} in {str(root)!r}: findings not counted")
    findings = pd.DataFrame(rows, columns=["finding", "n_images", "n_patients"])
    findings["image_fraction"] = findings["n_images"] / max(len(sp), 1)
    studies = sp.drop_duplicates(["study_id", "split"])
    split_audit = audit_split(
        studies[["study_id", "split"]], sp.drop_duplicates("study_id")[["study_id", "patient_id"]]
    )
    notes.extend(split_audit.notes)
    notes.append(
        "split audited per study: images, studies and patients of each part in split_sizes "
        f"({len(sp):,} images, {sp['study_id'].nunique():,} studies); an image carries its study's labels"
    )
    boxes = pd.DataFrame(columns=list(DatasetAudit.BOX_COLUMNS))
    return DatasetAudit(
        "mimic_cxr",
        len(sp),
        int(pd.unique(patients).size),
        findings,
        views,
        boxes,
        0,
        0,
        split_audit,
        sources,
        tuple(notes),
    )


_FINDING_COLUMNS = ("finding", "images", "patients", "boxes", "boxed images")


def audit_dataset(
    name: str,
    path: PathLike | None = None,
    *,
    bbox_path: PathLike | None = None,
    split_dir: PathLike | None = None,
    cache_dir: PathLike | None = None,
) -> DatasetAudit:
    """Audit a dataset by name (one of :data:`AUDITABLE`): what ``cxreval data audit NAME`` computes.

    ``chestxray14``: :func:`audit_chestxray14` (``path`` a ``Data_Entry_2017*.csv[.gz]``, ``bbox_path``, a
    ``split_dir`` of ``*list.txt`` files, ``cache_dir``); ``mimic_cxr``: :func:`audit_mimic_cxr` (``split_dir``
    the folder of ``mimic-cxr-2.0.0-split.csv.gz``, required; ``path`` the folder of the label and metadata
    files). ``DatasetAudit.save(folder)`` writes the files of the command.

    Raises
    ------
    InvalidParameterError
        An unknown ``name``, ``mimic_cxr`` without ``split_dir`` or with ``bbox_path``.
    """
    if name not in AUDITABLE:
        raise InvalidParameterError(
            f"The 'name' parameter of audit_dataset must be one of {list(AUDITABLE)}. Got {name!r} instead."
        )
    if name == "mimic_cxr":
        if split_dir is None:
            raise InvalidParameterError(
                "The 'split_dir' parameter of audit_dataset is required for mimic_cxr: the "
                "folder holding mimic-cxr-2.0.0-split.csv.gz."
            )
        if bbox_path is not None:
            raise InvalidParameterError(
                "The 'bbox_path' parameter of audit_dataset is a ChestX-ray14 file: mimic_cxr has no boxes."
            )
        return audit_mimic_cxr(split_dir=split_dir, path=path)
    return audit_chestxray14(path=path, bbox_path=bbox_path, split_dir=split_dir, cache_dir=cache_dir)


def audit_summary(audit: DatasetAudit) -> str:
    """The audit as Markdown (``summary.md``): sizes, per-finding counts, the split check and notes."""
    lines = [
        f"# Audit of {audit.dataset}",
        "",
        f"- images: {audit.n_images:,}",
        f"- patients: {audit.n_patients:,}",
        f"- radiologist boxes: {audit.n_boxes:,} on {audit.n_boxed_images:,} images",
        "- views: " + ", ".join(f"{r.view} {r.n_images:,}" for r in audit.views.itertuples()),
        "",
    ]
    if audit.split is not None and audit.dataset == "mimic_cxr":
        lines[3:4] = [f"- studies: {int(audit.split.sizes['n_studies'].sum()):,}"]
    bx = audit.boxes.set_index("finding")
    rows = [
        {
            "finding": r.finding,
            "images": f"{r.n_images:,}",
            "patients": f"{r.n_patients:,}",
            "boxes": f"{(bx['n_boxes'].get(r.finding, 0) if len(bx) else 0):,}",
            "boxed images": f"{(bx['n_images'].get(r.finding, 0) if len(bx) else 0):,}",
        }
        for r in audit.findings.itertuples()
    ]
    lines.append(
        markdown_table(pd.DataFrame(rows, columns=list(_FINDING_COLUMNS)), right=_FINDING_COLUMNS[1:])
    )
    if audit.split is not None:
        s = audit.split
        lines += [
            "",
            "## Split",
            "",
            s.sizes_markdown(unit="studies" if audit.dataset == "mimic_cxr" else "images"),
        ]
        verdict = "**leaks**" if s.leaks else "does not leak"
        lines += [
            "",
            f"Patients on more than one side: {s.n_shared_patients:,}; studies in more than one part: "
            f"{s.n_shared_studies:,}. The split {verdict}.",
        ]
    if audit.published is not None:
        pub = audit.published.assign(
            published=audit.published["published"].map("{:,}".format),
            audited=audit.published["audited"].map("{:,}".format),
        )
        lines += [
            "",
            f"## As published: {CHESTXRAY8_PUBLISHED.citation}",
            "",
            f"The dataset was released as {CHESTXRAY8_PUBLISHED.dataset} (eight findings) and extended to "
            f"ChestX-ray14; the paper's counts are not those of the files audited.",
            "",
            markdown_table(
                pub[["quantity", "finding", "published", "audited"]], right=("published", "audited")
            ),
        ]
    if audit.notes:
        lines += ["", "## Notes", ""] + [f"- {n}" for n in audit.notes]
    return "\n".join(lines) + "\n"


def _json(o: object) -> object:
    if isinstance(o, np.integer):
        return int(o)
    if isinstance(o, np.floating):
        return float(o)
    if isinstance(o, np.bool_):
        return bool(o)
    return str(o)
