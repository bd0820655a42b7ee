"""The handlers of the reader study server's routes: one method a route of :func:`cxreval.reader.app.create_app`,
which registers them with FastAPI (imported by it, once the ``reader`` extra is known to be installed)."""

from __future__ import annotations

import datetime as _dt
import json
from importlib import resources
from pathlib import Path
from typing import Any

from fastapi import Request
from fastapi.responses import JSONResponse, Response

from ..schema._states import REPORT_STATES
from ._background import JOB_KINDS, Job, OrganiserJobs
from .derived import Adjudicated
from .images import DISPLAY_FIT, RenditionCache, rendition_scale
from .mrmc import HeatmapReader
from .payloads import IMAGE_STATES, Reader, SubmissionError
from .store import ReaderStore

__all__ = ["StudyRoutes"]

INTEGRITY_MAX_AGE_S = 600
"""Seconds after which the organiser's page, asking for the integrity check, starts a new one."""

_STATIC = {
    "index.html": "text/html; charset=utf-8",
    "app.js": "text/javascript; charset=utf-8",
    "app.css": "text/css; charset=utf-8",
    "viewer.js": "text/javascript; charset=utf-8",
    "tools.js": "text/javascript; charset=utf-8",
    "render.js": "text/javascript; charset=utf-8",
}


class StudyRoutes:
    """The routes of a study served from its store ``st``: the reader (``auth``, ``organiser``), the study's
    items, images and heat maps, read ahead ``read_ahead`` studies of the reader's queue."""

    def __init__(self, st: ReaderStore, *, read_ahead: int) -> None:
        self.st = st
        self.read_ahead = read_ahead
        self.spec = spec = st.spec
        adj = Adjudicated.of(spec)
        self.adj_images = adj.task if adj is not None and spec.adjudication_task == "image" else "image"
        self.heatmaps = HeatmapReader(spec.root, spec.sessions)
        self.root = Path(spec.root).resolve()
        # renditions made ahead (`reader init`) are read from the study folder
        self.cache = RenditionCache(root=self.root)
        self.encoded: dict[int, tuple[list[str], bytes]] = {}
        self.image_cache = "private, max-age=3600" if spec.cache_images else "private, no-store"
        """The ``Cache-Control`` of images and heat maps (the study's ``cache_images``)."""
        url = st.engine.url.render_as_string(hide_password=False)
        self.jobs = OrganiserJobs(url, self.root, spec.name)
        """The organiser's exports and integrity checks, run in the background."""

    def auth(self, request: Any) -> Reader:
        header = request.headers.get("authorization", "")
        scheme, _, token = header.partition(" ")
        reader = self.st.authenticate(token.strip()) if scheme.lower() == "bearer" else None
        if reader is None:
            raise SubmissionError("A valid reader token is required (Authorization: Bearer <token>).", 401)
        return reader

    def static(self, name: str) -> Any:
        body = (resources.files("cxreval.reader") / "static" / name).read_bytes()
        return Response(body, media_type=_STATIC[name], headers={"Cache-Control": "no-cache"})

    def static_file(self, name: str) -> Any:
        if name not in _STATIC:
            raise SubmissionError(f"No static file {name!r}.", 404)
        return self.static(name)

    def me(self, request: Request) -> Any:
        r = self.auth(request)
        tasks = self.st.progress(r)
        return {
            "reader": r.name,
            "role": r.role,
            "study": self.spec.name,
            "study_uid": self.st.study_uid,
            "findings": list(self.spec.findings),
            "image_states": list(IMAGE_STATES),
            "report_states": list(REPORT_STATES),
            "criteria": list(self.spec.criteria),
            "scale": list(self.spec.scale),
            "tasks": tasks,
            "adjudication_task": self.spec.adjudication_task,
            "image_tasks": list(self.spec.image_tasks),
            "rating": None if self.spec.rating is None else self.spec.rating.to_dict(),
            "sessions": [{"name": s.name, "aided": s.aided} for s in self.spec.sessions],
            "washout_days": self.spec.washout_days,
        }

    def queue(self, request: Request, task: str) -> Any:
        """``{task, keys, done}``: the keys in the reader's order and one '0'/'1' per key (compact: a study of
        thousands of images answers in a few kilobytes of work, the keys encoded once)."""
        keys, flags = self.st.queue_flags(self.auth(request), task)
        hit = self.encoded.get(
            id(keys)
        )  # the order of a fixed task is one list per reader, kept by the store
        if hit is None or hit[0] is not keys:
            hit = (keys, json.dumps(keys).encode())
            if task != "adjudication":  # the studies in conflict change: encoded afresh
                self.encoded[id(keys)] = hit
        body = (
            b'{"task": '
            + json.dumps(task).encode()
            + b', "keys": '
            + hit[1]
            + b', "done": "'
            + flags.encode()
            + b'"'
        )
        if (
            task in self.spec.session_names
        ):  # the items not open to the reader now (washout), and when they open
            body += b', "locked": ' + json.dumps(self.st.locks(self.auth(request), task)).encode()
        body += b"}"
        return Response(body, media_type="application/json")

    def _item(self, task: str, key: str) -> dict[str, Any]:
        found = self.st.items.get(task, {}).get(key)
        if found is None:
            raise SubmissionError(f"Unknown {task} item {key!r}.", 404)
        return found

    def item(self, request: Request, task: str, key: str) -> Any:
        r = self.auth(request)
        if task not in self.st.tasks_of(r):
            raise SubmissionError(f"Reader {r.name!r} ({r.role}) does not do task {task!r}.", 403)
        if task == "adjudication":
            mine, conflicts, theirs, decided = self.st.adjudication_view(r, key)
            if not conflicts:
                raise SubmissionError(f"No conflict to adjudicate for study {key!r}.", 404)
            out: dict[str, Any] = {
                "task": task,
                "key": key,
                "conflicts": conflicts,
                "readers": list(self.spec.adjudication_readers),
                "mine": mine,
                "decided": {f: {k: v for k, v in d.items() if k != "by_id"} for f, d in decided.items()},
                "reader_comments": {n: p["comment"] for n, p in theirs.items() if p.get("comment")},
            }
            if self.spec.adjudication_task == "image":
                meta = self._item(self.adj_images, key)
                out.update(
                    width=meta["width"],
                    height=meta["height"],
                    image=True,
                    reader_boxes={n: p.get("boxes", []) for n, p in theirs.items()},
                )
            else:
                sec = self.spec.adjudication_task[7:]
                out.update(text=self._item("report", f"{sec}:{key}")["text"], section=sec, image=False)
            return out
        meta = self.st.item_of(r, task, key)
        mine = self.st.mine(r, task, key)
        if self.spec.kind(task) == "image":
            lock = self.st.locks(r, task, [key]).get(key)
            if lock is not None:  # nothing of the case is shown before it opens
                return {"task": task, "key": key, "locked": True, **lock, "mine": mine}
            return {
                "task": task,
                "key": key,
                "width": meta["width"],
                "height": meta["height"],
                "mine": mine,
                **{k: meta[k] for k in ("model", "scores", "heatmaps") if k in meta},
            }
        if task == "report":
            return {"task": task, "key": key, "section": meta["section"], "text": meta["text"], "mine": mine}
        return {"task": task, "key": key, "width": meta["width"], "height": meta["height"], "mine": mine}

    def organiser(self, request: Any) -> Reader:
        r = self.auth(request)
        if r.role != "organiser":
            raise SubmissionError(f"Reader {r.name!r} ({r.role}) is not an organiser of this study.", 403)
        return r

    def organiser_status(self, request: Request) -> Any:
        """Progress per reader and task, open and resolved conflicts, the database's integrity check."""
        self.organiser(request)
        rows, n_conflicts, n_resolved = self.st.status(rows=True)
        return JSONResponse(
            {
                "study": self.spec.name,
                "progress": [x for x in rows if x["role"] != "organiser"],
                "n_conflicts": n_conflicts,
                "n_resolved": n_resolved,
            }
        )

    def organiser_integrity(self, request: Request) -> Any:
        """The last integrity check (:func:`cxreval.reader.db.check_integrity`, a background job: it reads
        every row) with the time it ended, and the check queued or running; a new check is started in the
        background when there is none yet or the last one is over :data:`INTEGRITY_MAX_AGE_S` old."""
        self.organiser(request)
        last, now = self.jobs.latest("integrity"), _dt.datetime.now(_dt.timezone.utc)
        stale = last is None or now - _dt.datetime.fromisoformat(last.finished or "") > _dt.timedelta(
            seconds=INTEGRITY_MAX_AGE_S
        )
        pending = self.jobs.pending("integrity") or (self.jobs.start("integrity") if stale else None)
        return JSONResponse(
            {
                "checked": None if last is None else last.finished,
                "result": None if last is None else last.result,
                "error": None if last is None else last.error,
                "job": None if pending is None else pending.to_dict(),
            }
        )

    def organiser_start_job(self, request: Request, kind: str) -> Any:
        """Start an export or an integrity check in the background (:class:`OrganiserJobs`; the one of that
        kind already queued or running when there is one): 202 and the job, to poll."""
        self.organiser(request)
        if kind not in JOB_KINDS:
            raise SubmissionError(f"'kind' must be one of {list(JOB_KINDS)}; got {kind[:40]!r}.", 422)
        return JSONResponse(self.jobs.start(kind).to_dict(), status_code=202)

    def organiser_jobs(self, request: Request) -> Any:
        """Every background job the server remembers, the latest first."""
        self.organiser(request)
        return JSONResponse({"jobs": [j.to_dict() for j in reversed(list(self.jobs.jobs.values()))]})

    def _job(self, request: Request, job_id: str) -> Job:
        self.organiser(request)
        job = self.jobs.get(job_id)
        if job is None:
            raise SubmissionError(f"No background job {job_id[:40]!r}.", 404)
        return job

    def organiser_job(self, request: Request, job_id: str) -> Any:
        """One background job: its state, progress, file or error."""
        return JSONResponse(self._job(request, job_id).to_dict())

    def organiser_job_file(self, request: Request, job_id: str) -> Any:
        """The zip file of a done export job (:func:`cxreval.reader._background.export_zip`)."""
        from fastapi.responses import FileResponse

        job = self._job(request, job_id)
        if job.kind != "export" or job.state != "done":
            raise SubmissionError(f"Job {job_id!r} is no finished export (it is {job.state}).", 409)
        path = self.jobs.path(job)
        if path is None:
            raise SubmissionError(
                f"The file of export {job_id!r} is no longer in the study's exports folder.", 404
            )
        return FileResponse(path, media_type="application/zip", filename=path.name)

    def image_pixels(
        self,
        request: Request,
        task: str,
        key: str,
        which: str = "image",
        level: str = "full",
        fit: int = DISPLAY_FIT,
    ) -> Any:
        """An image as gzip-compressed little-endian uint16 (:mod:`cxreval.reader.images`): ``level=display``
        the standard rendition for a screen showing the image's longer side on ``fit`` device pixels
        (:func:`~cxreval.reader.images.rendition_scale`), ``level=full`` at full resolution; the headers
        give its size, scale, bit depth and data range, the DICOM window, and the pixel spacing (the
        file's, else the study's ``pixel_spacing_mm``; ``X-Pixel-Spacing-Source`` says which). Cached by
        the browser as the study says (``cache_images``: private with an ETag, or no-store)."""
        r = self.auth(request)
        if task not in self.st.tasks_of(r):
            raise SubmissionError(f"Reader {r.name!r} ({r.role}) does not do task {task!r}.", 403)
        if level not in ("display", "full"):
            raise SubmissionError(f"'level' must be 'display' or 'full'; got {level[:40]!r}.", 422)
        if not 64 <= fit <= 16384:
            raise SubmissionError(
                f"'fit' (the longest side of the display rendition) must be 64..16384; got {fit}.", 422
            )
        if task == "iqa":
            if which not in ("reference", "test"):
                raise SubmissionError("'which' must be 'reference' or 'test'.", 422)
            meta = self.st.item_of(r, "iqa", key)
            rel = meta[which]
        elif self.spec.kind(task) == "image" or task == "adjudication":
            if task == "adjudication" and key not in self.st.conflicts(key):
                raise SubmissionError(f"No conflict to adjudicate for study {key!r}.", 404)
            meta = self._item(self.adj_images if task == "adjudication" else task, key)
            rel = meta["path"]
            if task != "adjudication":
                self._readable(r, task, key)
        else:
            raise SubmissionError(f"Task {task!r} has no image.", 404)
        path = self._inside(rel, key)
        scale = 1 if level == "full" else rendition_scale(int(meta["width"]), int(meta["height"]), fit)
        got = self.cache.get(path, scale, display=level == "display")
        if (
            level == "display"
            and task != "adjudication"
            and self.spec.kind(task) == "image"
            and self.read_ahead
        ):
            self._read_ahead(r, task, key, scale)
        headers = {**got.headers(), "Cache-Control": self.image_cache}
        if got.spacing is not None:
            headers["X-Pixel-Spacing-Source"] = "dicom"
        elif self.spec.pixel_spacing_mm is not None:
            headers["X-Pixel-Spacing"] = f"{self.spec.pixel_spacing_mm:.6g},{self.spec.pixel_spacing_mm:.6g}"
            headers["X-Pixel-Spacing-Source"] = "study"
        if request.headers.get("if-none-match") == got.etag:
            return Response(
                status_code=304, headers={k: v for k, v in headers.items() if k != "Content-Encoding"}
            )
        return Response(got.body, media_type="application/octet-stream", headers=headers)

    def _readable(self, r: Reader, task: str, key: str) -> None:
        """Refuse an image item not assigned to the reader (404, as an unknown one), or not open to them now
        (a session's washout: 403)."""
        self.st.item_of(r, task, key)
        lock = self.st.locks(r, task, [key]).get(key)
        if lock is not None:
            raise SubmissionError(
                f"Item {key!r} of session {task!r} is not open to reader {r.name!r}: {lock['why']}.", 403
            )

    def heatmap(self, request: Request, task: str, key: str, finding: str) -> Any:
        """The model's heat map of one finding of an aided session's item, as gzip-compressed uint8 (its
        minimum 0, its maximum 255), ``X-Width`` x ``X-Height``; the page overlays it on the image."""
        r = self.auth(request)
        if task not in self.st.tasks_of(r) or task not in self.spec.session_names:
            raise SubmissionError(f"Task {task!r} has no heat maps for reader {r.name!r}.", 404)
        meta = self._item(task, key)
        self._readable(r, task, key)
        if finding not in meta.get("heatmaps", ()):
            raise SubmissionError(
                f"Item {key!r} of session {task!r} has no heat map of {finding[:64]!r}.", 404
            )
        got = self.heatmaps.read(task, key, finding)
        if got is None:
            raise SubmissionError(
                f"The heat map of {key!r}, {finding!r} is missing from the study folder (moved "
                "or deleted since `cxreval reader init`); tell the study organiser.",
                404,
            )
        body, w, h = got
        return Response(
            body,
            media_type="application/octet-stream",
            headers={
                "X-Width": str(w),
                "X-Height": str(h),
                "Content-Encoding": "gzip",
                "Cache-Control": self.image_cache,
            },
        )

    def _inside(self, rel: str, key: str) -> Path:
        path = (self.root / rel).resolve()
        if not path.is_relative_to(
            self.root
        ):  # the stored path must still lie inside (a symlink made since init)
            raise SubmissionError(f"Image of item {key!r} is not inside the study folder.", 404)
        if not path.is_file():
            raise SubmissionError(
                f"The image file of item {key!r} is missing from the study folder (moved or "
                "deleted since `cxreval reader init`); tell the study organiser.",
                404,
            )
        return path

    def _read_ahead(self, r: Reader, task: str, key: str, scale: int) -> None:
        """Render the reader's next studies (their order, kept in memory: no database read)."""
        order = self.st._order(r, task)
        done = self.st._done.get((r.id, task), set())
        i = order.index(key)
        for nxt in [k for k in order[i + 1 : i + 1 + 4 * self.read_ahead] if k not in done][
            : self.read_ahead
        ]:
            try:
                self.cache.warm(self._inside(self._item(task, nxt)["path"], nxt), scale, display=True)
            except SubmissionError:
                continue
