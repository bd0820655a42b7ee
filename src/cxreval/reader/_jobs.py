"""The jobs of ``cxreval reader``: create a study (database, readers' links, display renditions made ahead),
add a reader, check one (progress and integrity), export one (every table,
:class:`~cxreval.reader.export.StudyExport`) and open its server (:class:`StudyServer`)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

from .._typing import PathLike
from .._validation import check_path
from ..executor import ExecutorLike
from ..progress import Progress
from .db import DEFAULT_URL, IntegrityResult
from .export import StudyExport, export_tables
from .images import DISPLAY_FIT, RenditionsMade, make_renditions
from .store import ReaderStore
from .study import StudySpec, load_study, study_items

if TYPE_CHECKING:
    import socket

__all__ = [
    "READER_DB_ENV",
    "StudyCreated",
    "StudyStatus",
    "StudyServer",
    "study_url",
    "database_files",
    "create_study",
    "fill_study_images",
    "add_study_reader",
    "check_study",
    "export_study",
    "open_study_server",
]

READER_DB_ENV = "CXREVAL_READER_DB"
"""The environment variable naming the study database when none is given (:func:`study_url`)."""


def study_url(db: str | None = None) -> str:
    """The SQLAlchemy URL of the study database: ``db``, else ``$CXREVAL_READER_DB``, else
    :data:`cxreval.reader.db.DEFAULT_URL`."""
    return db or os.environ.get(READER_DB_ENV) or DEFAULT_URL


def database_files(db: str) -> list[Path]:
    """The file of a SQLite database URL (what an output folder must never replace), or none."""
    prefix = "sqlite:///"
    return [Path(db[len(prefix) :])] if db.startswith(prefix) and len(db) > len(prefix) else []


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


def fill_study_images(spec: StudySpec, images: PathLike) -> int:
    """Copy into the study's image folder, from the folder ``images``, the image of each study of its ``patients``
    file that has none there yet (``<study_id>.<suffix>``, else the first image below ``<study_id>/``, as a
    relabelling plan finds them); returns how many were copied. Every study is checked before anything is copied;
    an image already in the study folder is never replaced.

    Raises
    ------
    InvalidParameterError
        ``images`` is not a folder.
    SchemaError
        The study file's ``images`` is not a folder or it has no ``patients`` file (nothing says which studies
        to copy), or a study has no image in ``images``.
    """
    import shutil

    from ..exceptions import InvalidParameterError, SchemaError
    from ..planning._study import find_image, find_images
    from .study import inside_root, patient_study_ids

    src = Path(images)
    if not src.is_dir():
        raise InvalidParameterError(
            f"The 'images' parameter of create_study must be a folder of images. Got {str(src)!r} instead."
        )
    raw, root, where = spec.raw, Path(spec.root), f"study {spec.name!r}"
    if not isinstance(raw.get("images"), str) or not raw.get("patients"):
        raise SchemaError(
            f"{where}: images= copies the studies of the study file's 'patients' file into its 'images' folder; "
            "the study file needs both ('images' a folder)."
        )
    dest = inside_root(root, raw["images"], where=f"{where}, 'images'")
    todo = [s for s in patient_study_ids(spec) if not (dest.is_dir() and find_image(dest, s))]
    found = find_images(src, todo, func="create_study")
    for sid, f in zip(todo, found):
        target = inside_root(root, f"{raw['images']}/{sid}{f.suffix.lower()}", where=f"{where}, 'images'")
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(f, target)
    return len(todo)


def create_study(
    study: str | Path,
    db: str,
    *,
    images: PathLike | None = None,
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
    images : path, optional
        A folder to copy the studies' images from first (:func:`fill_study_images`: the studies of the study
        file's ``patients`` file without an image in its ``images`` folder, e.g. a relabelling plan made without
        its image folder).
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
    if images is not None:
        fill_study_images(spec, images)
    made = make_renditions(spec.root, _image_files(spec), fit=fit, executor=executor, progress=progress)
    store, tokens = ReaderStore.create(db, spec)
    try:
        n = {t: len(v) for t, v in store.items.items() if v}
        organiser = None if "organiser" in tokens else store.add_reader("organiser", role="organiser")
    finally:
        store.close()
    return StudyCreated(spec, n, tokens, organiser, made)


def add_study_reader(name: str, db: str, *, role: str = "reader", new_token: bool = False) -> str:
    """Add the reader ``name`` to the study at the SQLAlchemy URL ``db`` (:meth:`ReaderStore.add_reader
    <cxreval.reader.store.ReaderStore.add_reader>`); their private token, stored hashed and returned only now."""
    store = ReaderStore.open(db)
    try:
        return store.add_reader(name, role=role, new_token=new_token)
    finally:
        store.close()


def export_study(db: str, *, out: PathLike | None = None, overwrite: bool = False) -> StudyExport:
    """Every table of the study at the SQLAlchemy URL ``db`` (:func:`cxreval.reader.export.export_tables`:
    labels, boxes, IQA ratings, notes, the audit log and events), from one consistent read.

    ``out`` (with ``overwrite``) is the folder the export will be saved to: checked first
    (:func:`cxreval.outputs.check_output_path`, never the database file itself), so that a bad folder is
    refused before the database is read."""
    if check_path(out, name="out", func="export_study") is not None:
        from ..outputs._folder import check_output_path

        check_output_path(out, overwrite=overwrite, inputs=database_files(db))  # type: ignore[arg-type]
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


@dataclass(frozen=True)
class StudyServer:
    """A study's server, ready to run: the opened (and writable) ``store`` and the ``sock`` bound to
    ``host:port`` (:func:`open_study_server`); :meth:`serve` runs it until interrupted."""

    store: ReaderStore
    sock: socket.socket
    host: str
    port: int

    @property
    def url(self) -> str:
        """``http://HOST:PORT/``."""
        return f"http://{self.host}:{self.port}/"

    def serve(self) -> None:
        """Serve the study until Ctrl-C (:func:`cxreval.reader.app.serve`; closes the store and the socket)."""
        from .app import serve

        serve(self.store, sock=self.sock)


def open_study_server(db: str, *, host: str = "127.0.0.1", port: int = 8000) -> StudyServer:
    """Open the study at the SQLAlchemy URL ``db`` and bind ``host:port``: a missing, unreachable or read-only
    database (which would refuse every submission) and a busy port are reported before anything listens."""
    from .app import bind

    store = ReaderStore.open(db)
    try:
        store.check_writable()
        sock = bind(host, port)
    except BaseException:
        store.close()
        raise
    return StudyServer(store, sock, host, port)
