"""The study file of a reader study: what is read, by whom, for which findings and tasks.

A study is a YAML file; every path in it is relative to the file's folder (the study *root*) and must
stay inside it. Example::

    name: effusion-study
    seed: 0
    findings: [Effusion, Cardiomegaly]      # or a vocabulary name: chestxray8, chestxray14, ...
    images: images                          # a folder (PNG 8/16-bit, TIFF, DICOM), or a list of files
    patients: patients.csv                  # optional: study_id, patient_id (default patient = study)
    reports: reports.csv                    # optional: study_id, [patient_id,] one text column per section
    sections: [findings, impression]
    iqa:                                    # optional
      pairs: pairs.csv                      # reference, test paths (+ hidden columns, e.g. degradation)
      criteria: [overall]
      scale: [1, 4]
    adjudication:                           # optional: resolve two readers' conflicts
      task: image                           # image or report:<section>
      readers: [alice, bob]
    readers: [alice, bob]
    resolvers: [carol]
    assignment: {per_image: 2}              # optional: each image read by 2 of the readers (balanced, seeded)
    rating: {scale: five_point, with_label: true}   # optional: a confidence rating per finding (mrmc)
    sessions: [{name: unaided}, {name: aided, model_scores: predictions.csv}]   # optional (mrmc)
    washout_days: 28                        # optional, with sessions (mrmc)
    cache_images: false                     # optional: images sent with Cache-Control: private, no-store
                                            # (shared computers); default true: kept by the browser an hour
    order: priority                         # optional: images in the 'priority' column's order of 'patients'
                                            # (lowest first) for every reader; default random, seeded per reader
    pixel_spacing_mm: 0.139                 # optional: mm per pixel of images that do not say (the ruler's
                                            # unit; a DICOM file's PixelSpacing comes first)

Tasks (``image``, ``report``, ``iqa``, ``adjudication``) are those the file gives data for, or the list
``tasks:``. An image's ``study_id`` is its path below ``images`` without the suffix. With ``sessions`` the
image task is read once per session, each a task named by the session (:mod:`cxreval.reader.mrmc`).
"""

from __future__ import annotations

import re
import secrets
import unicodedata
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .._validation import read_yaml_file
from ..exceptions import SchemaError
from ..io._read import read_csv_file
from ..io.images import DISPLAY_SUFFIXES
from .mrmc import RatingScale, Session, session_payloads

__all__ = [
    "load_study",
]

TASKS: tuple[str, ...] = ("image", "report", "iqa", "adjudication")
NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")


@dataclass(frozen=True)
class StudySpec:
    """A parsed study file.

    Attributes
    ----------
    name : str
    root : str
        Absolute folder every study path is relative to.
    seed : int
        Seed of every reader's item order.
    findings : tuple of str
        Canonical finding names.
    tasks : tuple of str
    sections : tuple of str
        Report sections labelled one at a time.
    criteria : tuple of str
        IQA Likert criteria.
    scale : (int, int)
        Inclusive IQA rating scale.
    adjudication_task : str
        ``'image'`` or ``'report:<section>'``: whose conflicts the resolvers see.
    adjudication_readers : tuple of str
        The two readers whose labels are compared.
    readers, resolvers : tuple of str
    per_image : int
        Readers per image (``assignment: {per_image: k}``); 0 means every reader reads every image.
    rating : RatingScale or None
        The confidence rating asked per finding of an image (None: none).
    sessions : tuple of Session
        The sessions reading the images, in order (empty: one image task, ``'image'``); each is a task.
    washout_days : float
        Days between a reader's readings of one case in two sessions.
    cache_images : bool
        Whether browsers may keep the images (and heat maps) they were sent (``Cache-Control: private,
        max-age=3600``); False (shared computers): ``private, no-store``, nothing kept on disk.
    order : {'random', 'priority'}
        The image task's item order: each reader's own seeded permutation, or the ``priority`` column of the
        ``patients`` file, lowest first (the same for every reader).
    pixel_spacing_mm : float or None
        Millimetres per pixel (square pixels) of the study's images, for the page's ruler where an image
        file does not say (DICOM ``PixelSpacing`` comes first); None: the ruler measures pixels.
    """

    name: str
    root: str
    seed: int = 0
    findings: tuple[str, ...] = ()
    tasks: tuple[str, ...] = ()
    sections: tuple[str, ...] = ("findings", "impression")
    criteria: tuple[str, ...] = ("overall",)
    scale: tuple[int, int] = (1, 4)
    adjudication_task: str = "image"
    adjudication_readers: tuple[str, ...] = ()
    readers: tuple[str, ...] = ()
    resolvers: tuple[str, ...] = ()
    per_image: int = 0
    rating: RatingScale | None = None
    sessions: tuple[Session, ...] = ()
    washout_days: float = 0.0
    cache_images: bool = True
    order: str = "random"
    pixel_spacing_mm: float | None = None
    raw: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)

    def to_dict(self) -> dict[str, object]:
        return {
            "name": self.name,
            "root": self.root,
            "seed": self.seed,
            "findings": list(self.findings),
            "tasks": list(self.tasks),
            "sections": list(self.sections),
            "criteria": list(self.criteria),
            "scale": list(self.scale),
            "adjudication_task": self.adjudication_task,
            "adjudication_readers": list(self.adjudication_readers),
            "readers": list(self.readers),
            "resolvers": list(self.resolvers),
            "per_image": self.per_image,
            "rating": None
            if self.rating is None
            else {"scale": self.rating.scale, "with_label": self.rating.with_label},
            "sessions": [s.to_dict() for s in self.sessions],
            "washout_days": self.washout_days,
            "cache_images": self.cache_images,
            "order": self.order,
            "pixel_spacing_mm": self.pixel_spacing_mm,
        }

    @property
    def image_tasks(self) -> tuple[str, ...]:
        """The tasks that read the images: the sessions, or ``('image',)`` (none without images)."""
        return tuple(t for t in self.tasks if t == "image" or t in self.session_names)

    @property
    def session_names(self) -> tuple[str, ...]:
        return tuple(s.name for s in self.sessions)

    def kind(self, task: str) -> str:
        """What a task is: ``'image'`` for a session, else the task itself."""
        return "image" if task in self.session_names else task

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> StudySpec:
        return cls(
            name=str(d["name"]),
            root=str(d["root"]),
            seed=int(d["seed"]),
            findings=tuple(d["findings"]),
            tasks=tuple(d["tasks"]),
            sections=tuple(d["sections"]),
            criteria=tuple(d["criteria"]),
            scale=(int(d["scale"][0]), int(d["scale"][1])),
            adjudication_task=str(d["adjudication_task"]),
            adjudication_readers=tuple(d["adjudication_readers"]),
            readers=tuple(d["readers"]),
            resolvers=tuple(d["resolvers"]),
            per_image=int(d.get("per_image", 0)),
            rating=RatingScale(**d["rating"]) if d.get("rating") else None,
            sessions=tuple(Session.from_dict(s) for s in d.get("sessions", ())),
            washout_days=float(d.get("washout_days", 0.0)),
            cache_images=bool(d.get("cache_images", True)),
            order=str(d.get("order", "random")),
            pixel_spacing_mm=None if d.get("pixel_spacing_mm") is None else float(d["pixel_spacing_mm"]),
        )


@dataclass(frozen=True)
class Item:
    """One unit of work of a task: ``key`` is what the browser and the database name it by."""

    task: str
    key: str
    payload: Mapping[str, Any]


def check_name(name: str, *, what: str = "reader name") -> str:
    """Return ``name`` if it is a safe identifier (letters, digits, ``_.-``, at most 64), else raise."""
    if not isinstance(name, str) or not NAME_RE.match(name):
        raise SchemaError(
            f"Invalid {what} {name!r}: use 1-64 letters, digits, '_', '.' or '-', starting with "
            "a letter or digit."
        )
    return name


def check_text_id(value: str, *, where: str) -> str:
    """Return ``value`` unless it holds a control character (Unicode category Cc: CR, LF, tab, NUL, ...) or
    a lone surrogate (a file name that is not UTF-8); such an id would break the rows of every exported CSV
    and cannot be stored. Raises :class:`SchemaError` showing the id with its characters escaped."""
    bad = sorted({c for c in value if unicodedata.category(c) in ("Cc", "Cs")})
    if bad:
        shown = value.encode("unicode_escape", "backslashreplace").decode("ascii")
        raise SchemaError(
            f"{where}: '{shown}' holds control character(s) {[f'U+{ord(c):04X}' for c in bad]}; "
            "rename it (ids are written into CSV files) and run `cxreval reader init` again."
        )
    return value


def inside_root(root: Path, rel: str, *, where: str) -> Path:
    """Resolve ``rel`` below ``root``; raise when it escapes the root (``..``, absolute path, symlink)."""
    root = root.resolve()
    p = (root / rel).resolve()
    if not p.is_relative_to(root):
        raise SchemaError(
            f"{where}: path {rel!r} leaves the study folder {root}; every path must lie inside it."
        )
    return p


def _read_csv(root: Path, rel: object, *, where: str, required: tuple[str, ...]) -> pd.DataFrame:
    if not isinstance(rel, str):
        raise SchemaError(f"{where}: expected a CSV path relative to the study file; got {rel!r}.")
    p = inside_root(root, rel, where=where)
    if not p.is_file():
        raise SchemaError(f"{where}: file {p} does not exist.")
    df = read_csv_file(
        p,
        error=lambda f, exc: f"{where}: file {f} cannot be read as CSV ({exc}).",
        dtype=str,
        keep_default_na=False,
    )
    missing = [c for c in required if c not in df.columns]
    if missing:
        raise SchemaError(f"{where}: file {p} lacks column(s) {missing}; it has {list(df.columns)}.")
    return df


def load_study(path: str | Path) -> StudySpec:
    """Read and validate a study YAML file (see the module docstring; its typed model is
    ``reader/_study_file.py``).

    Raises
    ------
    SchemaError
        Unknown keys, unknown findings or vocabularies, paths outside the study folder, missing files,
        bad reader names, a task without data, an invalid scale.
    """
    from .._config import validate_config
    from ._study_file import StudyFile

    p = Path(path)
    raw = read_yaml_file(p, what="Study file")
    f = validate_config(StudyFile, raw, where=f"study file {p}", context={"path": p})
    tasks = f.task_kinds
    if f.sessions:  # the image task is read once per session, each session a task
        tasks = tuple(x for t in tasks for x in ((s.name for s in f.sessions) if t == "image" else (t,)))
    return StudySpec(
        name=str(f.name) if "name" in f.model_fields_set else p.stem,
        root=str(p.parent.resolve()),
        seed=f.seed,
        findings=f.findings,
        tasks=tasks,
        sections=f.sections,
        criteria=f.iqa.criteria,
        scale=f.iqa.scale,
        adjudication_task=f.adjudication.task,
        adjudication_readers=f.adjudication_readers,
        readers=f.readers,
        resolvers=f.resolvers,
        per_image=f.per_image,
        rating=f.rating,
        sessions=f.sessions,
        washout_days=f.washout_days,
        cache_images=f.cache_images,
        order=f.order,
        pixel_spacing_mm=f.pixel_spacing_mm,
        raw=raw,
    )


def _image_files(root: Path, value: object, *, where: str) -> list[tuple[str, Path]]:
    """(study_id, path) for every image; ids are paths below the image folder without the suffix."""
    if isinstance(value, str):
        folder = inside_root(root, value, where=where)
        if not folder.is_dir():
            raise SchemaError(
                f"{where}: image folder {folder} does not exist. Put the images there, or pass images= the "
                "folder that holds them (<study_id>.png, .jpg, ... or <study_id>/) to copy the studies of "
                "'patients' in."
            )
        files = sorted(f for f in folder.rglob("*") if f.is_file() and f.suffix.lower() in DISPLAY_SUFFIXES)
        pairs = [(f.relative_to(folder).with_suffix("").as_posix(), f) for f in files]
        if not pairs:
            raise SchemaError(f"{where}: no image ({', '.join(DISPLAY_SUFFIXES)}) in {folder}.")
    else:
        from ._study_file import list_of_str

        rels = list_of_str(value, where=where)
        pairs = []
        for rel in rels:
            f = inside_root(root, rel, where=where)
            if not f.is_file():
                raise SchemaError(f"{where}: image file {f} does not exist.")
            pairs.append((Path(rel).with_suffix("").as_posix(), f))
    for sid, _ in pairs:
        check_text_id(sid, where=f"{where}, image name")
    counts = Counter(i for i, _ in pairs)
    dup = sorted(i for i, n in counts.items() if n > 1)
    if dup:
        raise SchemaError(f"{where}: image ids repeat (same path, different suffix): {dup[:5]}.")
    for _, f in pairs:
        if not f.resolve().is_relative_to(root):
            raise SchemaError(f"{where}: image {f} links outside the study folder {root}.")
    return pairs


def _image_size(path: Path) -> tuple[int, int]:
    """(width, height) of an image file, read from its header when possible."""
    if path.suffix.lower() in (".dcm", ".dicom"):
        from ..io.images import read_image

        h, w = read_image(path).image.shape
        return int(w), int(h)
    try:
        from PIL import Image

        with Image.open(path) as im:
            return int(im.size[0]), int(im.size[1])
    except Exception as exc:
        raise SchemaError(f"Cannot read image file {path}: {exc}") from exc


def _opaque() -> str:
    """A random IQA item key (stored with the item at ``init``): nothing about the pair can be read or guessed
    from it, unlike a hash of its path, which hashing candidate names would recover."""
    return "q" + secrets.token_hex(8)


def patient_study_ids(spec: StudySpec) -> list[str]:
    """The study ids of the study file's ``patients`` file, in its order (none without one)."""
    rel = spec.raw.get("patients")
    if not rel:
        return []
    where = f"study {spec.name!r}, 'patients'"
    return [str(s) for s in _read_csv(Path(spec.root), rel, where=where, required=("study_id",))["study_id"]]


def _priorities(df: pd.DataFrame, *, where: str) -> dict[str, int]:
    """``{study_id: priority}`` of a patients table's ``priority`` column (whole numbers), for ``order:
    priority``."""
    if "priority" not in df.columns:
        raise SchemaError(
            f"{where}: 'order: priority' needs a 'priority' column (whole numbers, lowest first); the file has "
            f"{list(df.columns)}."
        )
    bad = [v for v in df["priority"] if not (v.strip().isascii() and v.strip().isdigit())]
    if bad:
        raise SchemaError(f"{where}: column 'priority' must hold whole numbers; got {bad[0]!r}.")
    return {str(s): int(v) for s, v in zip(df["study_id"], df["priority"])}


def study_items(spec: StudySpec) -> list[Item]:
    """Every item of the study's image, report and IQA tasks (adjudication items follow the labels). IQA
    items get random keys (a new draw on every call; the database keeps the ones drawn at ``init``).

    Raises
    ------
    SchemaError
        Missing or unreadable files, duplicated ids, empty report sections, patients of unknown studies.
    """
    root = Path(spec.root)
    raw = spec.raw
    where = f"study {spec.name!r}"
    patients: dict[str, str] = {}
    priority: dict[str, int] = {}
    if raw.get("patients"):
        df = _read_csv(
            root, raw["patients"], where=f"{where}, 'patients'", required=("study_id", "patient_id")
        )
        if df["study_id"].duplicated().any():
            i = int(np.flatnonzero(df["study_id"].duplicated().to_numpy())[0])
            raise SchemaError(f"{where}, 'patients': study_id {df['study_id'].iloc[i]!r} repeats (row {i}).")
        for col in ("study_id", "patient_id"):
            for v in df[col]:
                check_text_id(v, where=f"{where}, 'patients' column {col!r}")
        patients = dict(zip(df["study_id"], df["patient_id"]))
        if spec.order == "priority":
            priority = _priorities(df, where=f"{where}, 'patients'")
    items: list[Item] = []
    if spec.image_tasks:
        images = []
        for sid, f in _image_files(root, raw["images"], where=f"{where}, 'images'"):
            w, h = _image_size(f)
            images.append(
                (
                    sid,
                    {
                        "study_id": sid,
                        "patient_id": patients.get(sid, sid),
                        "path": f.resolve().relative_to(root).as_posix(),
                        "width": w,
                        "height": h,
                        **({"priority": priority[sid]} if sid in priority else {}),
                    },
                )
            )
        if spec.sessions:
            items += [
                Item(*x) for x in session_payloads(root, spec.sessions, images, spec.findings, where=where)
            ]
        else:
            items += [Item("image", sid, payload) for sid, payload in images]
    if "report" in spec.tasks:
        df = _read_csv(
            root, raw["reports"], where=f"{where}, 'reports'", required=("study_id", *spec.sections)
        )
        if df["study_id"].duplicated().any():
            i = int(np.flatnonzero(df["study_id"].duplicated().to_numpy())[0])
            raise SchemaError(f"{where}, 'reports': study_id {df['study_id'].iloc[i]!r} repeats (row {i}).")
        for col in ("study_id", "patient_id"):
            for v in df[col] if col in df.columns else ():
                check_text_id(v, where=f"{where}, 'reports' column {col!r}")
        for _, row in df.iterrows():
            sid = str(row["study_id"])
            pid = (
                str(row["patient_id"])
                if "patient_id" in df.columns and row["patient_id"]
                else patients.get(sid, sid)
            )
            for sec in spec.sections:
                text = str(row[sec]).strip()
                if text:  # an absent section is not an item (recorded by status as fewer items)
                    items.append(
                        Item(
                            "report",
                            f"{sec}:{sid}",
                            {"study_id": sid, "patient_id": pid, "section": sec, "text": text},
                        )
                    )
    if "iqa" in spec.tasks:
        df = _read_csv(
            root, raw["iqa"]["pairs"], where=f"{where}, 'iqa.pairs'", required=("reference", "test")
        )
        if df["test"].duplicated().any():
            i = int(np.flatnonzero(df["test"].duplicated().to_numpy())[0])
            raise SchemaError(f"{where}, 'iqa.pairs': test image {df['test'].iloc[i]!r} repeats (row {i}).")
        for _, row in df.iterrows():
            for col in ("reference", "test"):
                check_text_id(str(row[col]), where=f"{where}, 'iqa.pairs' column {col!r}")
                f = inside_root(root, row[col], where=f"{where}, 'iqa.pairs' column {col!r}")
                if not f.is_file():
                    raise SchemaError(f"{where}, 'iqa.pairs': image file {f} does not exist.")
            w, h = _image_size(inside_root(root, row["test"], where=where))
            hidden = {k: str(v) for k, v in row.items() if k not in ("reference", "test")}
            items.append(
                Item(
                    "iqa",
                    _opaque(),
                    {
                        "reference": row["reference"],
                        "test": row["test"],
                        "hidden": hidden,
                        "width": w,
                        "height": h,
                    },
                )
            )
    return items
