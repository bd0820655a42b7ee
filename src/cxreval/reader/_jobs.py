"""The jobs of ``cxreval reader``: create a study (database, readers' links, display renditions made ahead),
check one (progress and integrity) and export one (every table, :class:`~cxreval.reader.export.StudyExport`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from ..executor import ExecutorLike
from ..progress import Progress
from .db import IntegrityResult
from .export import StudyExport, export_tables
from .images import DISPLAY_FIT, RenditionsMade, make_renditions
from .store import ReaderStore
from .study import StudySpec, load_study, study_items

__all__ = ["StudyCreated", "StudyStatus", "create_study", "check_study", "export_study"]


@dataclass(frozen=True)
class StudyCreated:
    """What :func:`create_study` made.

    Attributes
    ----------
    spec : StudySpec
        The study stored in the database.
    n_items : dict of str to int
        Items per task (tasks with items only).
    tokens : dict of str to str
        ``{name: token}`` of the study file's readers and resolvers (shown once: stored hashed).
    organiser_token : str or None
        The token of the organiser added because the study file names none (None when it names one).
    renditions : RenditionsMade
        The display renditions written into the study folder (or found there for the images as they are).
    """

    spec: StudySpec
    n_items: Mapping[str, int]
    tokens: Mapping[str, str]
    organiser_token: str | None
    renditions: RenditionsMade


def _image_files(spec: StudySpec) -> list[str]:
    """Every image of the study's image and IQA tasks, as paths inside the study folder."""
    out, seen = [], set()
    for it in study_items(spec):
        if (
            spec.kind(it.task) == "image" and it.payload["path"] not in seen
        ):  # each session shows the same images
            seen.add(it.payload["path"])
            out.append(str(it.payload["path"]))
        elif it.task == "iqa":
            out.extend((str(it.payload["reference"]), str(it.payload["test"])))
    return out


def create_study(
    study: str | Path,
    db: str,
    *,
    fit: int = DISPLAY_FIT,
    executor: ExecutorLike = None,
    progress: Progress | None = None,
) -> StudyCreated:
    """Create the database of the study file ``study`` at the SQLAlchemy URL ``db``, with every reader's
    token (and an organiser's, when the study file names none), after writing every image's display
    rendition into the study folder (:func:`cxreval.reader.images.make_renditions`), so that the server
    answers each study's first display from a file instead of decoding the image.

    Parameters
    ----------
    study : str or Path
        The study YAML file.
    db : str
        SQLAlchemy URL of a database that holds no study yet (``sqlite:///study.db``, ``postgresql://...``).
    fit : int, default=DISPLAY_FIT
        The longest side of the display renditions made ahead.
    executor : ExecutorLike, default=None
        Where the renditions are made (:func:`cxreval.executor.get_executor`).
    progress : Progress or None, default=None
        One task, advanced per image rendered.

    Raises
    ------
    SchemaError
        An invalid study file or image, or a database that already holds a study.
    """
    spec = load_study(study)
    made = make_renditions(spec.root, _image_files(spec), fit=fit, executor=executor, progress=progress)
    store, tokens = ReaderStore.create(db, spec)
    try:
        n = {t: len(v) for t, v in store.items.items() if v}
        organiser = None if "organiser" in tokens else store.add_reader("organiser", role="organiser")
    finally:
        store.close()
    return StudyCreated(spec, n, tokens, organiser, made)


def export_study(db: str) -> StudyExport:
    """Every table of the study at the SQLAlchemy URL ``db`` (:func:`cxreval.reader.export.export_tables`:
    labels, boxes, IQA ratings, notes, the audit log and events), from one consistent read."""
    store = ReaderStore.open(db)
    try:
        return export_tables(store)
    finally:
        store.close()


@dataclass(frozen=True)
class StudyStatus:
    """What :func:`check_study` read: the study's ``name``, its ``progress`` per reader and task (``reader, role,
    task, n_items, n_done, n_submissions, last``) and the database's ``integrity`` check."""

    name: str
    progress: pd.DataFrame
    integrity: IntegrityResult


def check_study(db: str) -> StudyStatus:
    """The progress per reader and task of the study at the SQLAlchemy URL ``db`` (from the derived tables)
    and its integrity check (:func:`cxreval.reader.db.check_integrity`: reads every row)."""
    store = ReaderStore.open(db)
    try:
        return StudyStatus(store.spec.name, store.status(), store.check_integrity())
    finally:
        store.close()
