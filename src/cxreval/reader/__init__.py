"""A small reader-study app: readers label images (3-state per finding + boxes) and report sections,
rate image quality against a reference, and a resolver adjudicates conflicts; everything exports into
the tables cxreval analyses (:mod:`cxreval.reader.export`).

The server (:func:`cxreval.reader.app.create_app`) needs the optional ``reader`` extra (FastAPI, uvicorn,
SQLAlchemy 2; psycopg for PostgreSQL); ``cxreval reader`` is its command line. Submodules:

* :mod:`~cxreval.reader.study`: the study file (:func:`~cxreval.reader.study.load_study` →
  :class:`~cxreval.reader.study.StudySpec`) and each reader's seeded item order;
* :mod:`~cxreval.reader.db`: schema, engines (SQLite WAL + full sync, PostgreSQL), integrity check;
* :mod:`~cxreval.reader.payloads`: what a submission may hold (checked before it is stored);
* :mod:`~cxreval.reader.store`: readers, tokens, append-only idempotent submissions, queues and progress;
* :mod:`~cxreval.reader.derived`: the latest state per reader and item, the items done per reader and task,
  and the conflicts, updated in each submission's transaction (the log stays the source of truth);
* :mod:`~cxreval.reader.app`: the web server and its page (plain HTML/JS in ``static/``);
* :mod:`~cxreval.reader.mrmc`: what an MRMC ROC analysis needs: a confidence rating per finding, aided and
  unaided sessions (model scores, heat maps) and the washout between them;
* :mod:`~cxreval.reader.export`: labels, boxes, IQA ratings, finding ratings (``ratings.csv``) and the audit log;
* :mod:`~cxreval.reader.images`: display renditions (made ahead at ``init``, kept in the study folder) and
  full resolution.

The jobs of ``cxreval reader``: :func:`create_study` (``init``: the database, the readers' links, the display
renditions), :func:`add_study_reader` (``add-reader``), :func:`check_study` (``status`` → :class:`StudyStatus`),
:func:`export_study` (``export`` → :class:`~cxreval.reader.export.StudyExport`, whose ``save`` writes the export
folder) and :func:`open_study_server` (``serve`` → :class:`StudyServer`); :func:`study_url` is the database of a
command given none (``$CXREVAL_READER_DB``, else :data:`~cxreval.reader.db.DEFAULT_URL`).
"""

from __future__ import annotations

from ._jobs import StudyCreated, StudyStatus, check_study, create_study, export_study

__all__ = [
    "StudyCreated",
    "StudyStatus",
    "create_study",
    "check_study",
    "export_study",
]
