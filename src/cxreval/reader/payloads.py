"""What a submission may hold, checked before it is stored (see :mod:`cxreval.reader.store` for the
payload of each task): complete labels in the task's states, boxes inside the image with finite pixel
coordinates, ratings on their scale (IQA criteria; an image's confidence per finding,
:mod:`cxreval.reader.mrmc`), adjudications of the current conflicts only, a comment, seconds spent and an
ISO 8601 client time. Every refusal is a :class:`SubmissionError` carrying its HTTP status.
"""

from __future__ import annotations

import datetime as _dt
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..exceptions import CxrevalError
from ..schema import LabelState
from ..schema._states import ORDINAL_STATES
from ..schema._states import REPORT_STATES as _REPORT_STATES

__all__: list[str] = []

IMAGE_STATES: tuple[str, ...] = ORDINAL_STATES
"""The states a reader gives on an image (:data:`cxreval.schema.ORDINAL_STATES`)."""
REPORT_STATES: tuple[str, ...] = _REPORT_STATES
"""The states a reader gives on a report (adds ``not_mentioned``; :data:`cxreval.schema.REPORT_STATES`)."""
MAX_BOXES = 64
MAX_COMMENT = 2000
MAX_SEQ = 2**31 - 1
"""The largest submission seq (an ``INTEGER`` column: PostgreSQL's is 32-bit); a ``seen`` beyond it is 422."""
_ISO_RE = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,6})?)?(Z|[+-]\d{2}:\d{2})?$")


class SubmissionError(CxrevalError):
    """A request the store refuses; ``status`` is the HTTP status the server answers with."""

    def __init__(self, message: str, status: int = 422) -> None:
        super().__init__(message)
        self.status = status


@dataclass(frozen=True)
class Reader:
    """An authenticated reader."""

    id: int
    name: str
    role: str


def check_client_time(value: str) -> str:
    """Return ``value`` if it is an ISO 8601 date-time (``2026-01-31T12:00:00.000Z``), else raise 422."""
    ok = isinstance(value, str) and len(value) <= 40 and _ISO_RE.match(value) is not None
    if ok and isinstance(value, str):
        try:
            _dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            ok = False
    if not ok:
        raise SubmissionError(
            f"'client_time' must be an ISO 8601 date-time such as 2026-01-31T12:00:00.000Z; got "
            f"{str(value)[:60]!r}."
        )
    return str(value)


class PayloadChecks:
    """The checks of :meth:`validate`, mixed into :class:`~cxreval.reader.store.ReaderStore` (which gives
    ``spec``, ``items``, ``tasks_of`` and ``conflicts``)."""

    spec: Any
    items: Any
    tasks_of: Any
    keys_of: Any
    read: Any
    conflict_rows: Any

    def _labels(self, value: object, *, states: tuple[str, ...], complete: bool) -> dict[str, str]:
        findings = self.spec.findings
        if not isinstance(value, dict) or not value:
            raise SubmissionError("'labels' must be a non-empty object {finding: state}.")
        for f, s in value.items():
            if f not in findings:
                raise SubmissionError(f"Unknown finding {f!r}; this study's findings are {list(findings)}.")
            if s not in states:
                raise SubmissionError(f"Finding {f!r}: state {s!r} is not one of {list(states)}.")
        if complete and set(value) != set(findings):
            missing = [f for f in findings if f not in value]
            raise SubmissionError(f"Every finding needs a state; missing {missing}.")
        return {f: value[f] for f in findings if f in value}

    def _boxes(self, value: object, payload: Mapping[str, Any]) -> list[dict[str, Any]]:
        if value is None:
            return []
        if not isinstance(value, list) or len(value) > MAX_BOXES:
            raise SubmissionError(f"'boxes' must be a list of at most {MAX_BOXES} boxes.")
        w, h = payload["width"], payload["height"]
        out = []
        for k, b in enumerate(value):
            if not isinstance(b, dict) or set(b) != {"finding", "x_min", "y_min", "x_max", "y_max"}:
                raise SubmissionError(f"Box {k} must have exactly finding, x_min, y_min, x_max, y_max.")
            if b["finding"] not in self.spec.findings:
                raise SubmissionError(
                    f"Box {k}: unknown finding {b['finding']!r}; this study's findings are "
                    f"{list(self.spec.findings)}."
                )
            c = [b[n] for n in ("x_min", "y_min", "x_max", "y_max")]
            if not all(
                isinstance(v, (int, float))
                and not isinstance(v, bool)
                and (isinstance(v, float) or abs(v) < 10**9)
                and math.isfinite(v)
                for v in c
            ):
                shown = [str(v)[:20] for v in c]
                raise SubmissionError(f"Box {k}: coordinates must be finite numbers of pixels; got {shown}.")
            if not (0 <= c[0] < c[2] <= w and 0 <= c[1] < c[3] <= h):
                raise SubmissionError(f"Box {k}: {c} is empty or outside the {w} x {h} image.")
            out.append(
                {
                    "finding": b["finding"],
                    "x_min": round(float(c[0]), 2),
                    "y_min": round(float(c[1]), 2),
                    "x_max": round(float(c[2]), 2),
                    "y_max": round(float(c[3]), 2),
                }
            )
        return out

    def item_of(self, reader: Reader, task: str, key: str) -> dict[str, Any]:
        """The stored item ``key`` of ``task``, when ``reader`` reads it; otherwise 404, the answer to an
        unknown item (so that no reader learns which items the others read)."""
        stored = self.items.get(task, {}).get(key)
        if stored is None or key not in self.keys_of(reader, task):
            raise SubmissionError(f"Unknown {task} item {key!r}.", 404)
        return dict(stored)

    def validate(self, reader: Reader, task: str, item: str, body: Mapping[str, Any]) -> dict[str, Any]:
        """Check a submission of ``reader`` and return the payload to store.

        Raises
        ------
        SubmissionError
            403 for a task the reader does not do, 404 for an unknown item (or one the reader does not read),
            422 for a bad payload.
        """
        if task not in self.tasks_of(reader):
            raise SubmissionError(f"Reader {reader.name!r} ({reader.role}) does not do task {task!r}.", 403)
        if task == "adjudication":
            payload: dict[str, Any] = self._adjudication(reader, item, body)
            extra = set(body) - {"labels", "conflicts", "seen"}
        else:
            stored = self.item_of(reader, task, item)
            if self.spec.kind(task) == "image":
                payload, extra = self._image(body, stored)
            elif task == "report":
                extra = set(body) - {"labels"}
                payload = {"labels": self._labels(body.get("labels"), states=REPORT_STATES, complete=True)}
            else:
                extra = set(body) - {"ratings"}
                payload = {"ratings": self._ratings(body.get("ratings"))}
        extra -= {"comment", "seconds"}
        if extra:
            raise SubmissionError(f"Unexpected field(s) {sorted(extra)} for task {task!r}.")
        comment, seconds = body.get("comment"), body.get("seconds")
        if comment is not None and comment != "":
            if not isinstance(comment, str) or len(comment) > MAX_COMMENT:
                raise SubmissionError(f"'comment' must be text of at most {MAX_COMMENT} characters.")
            payload["comment"] = comment
        if seconds is not None:
            if (
                not isinstance(seconds, (int, float))
                or isinstance(seconds, bool)
                or not 0 <= seconds <= 86400
            ):
                raise SubmissionError(
                    f"'seconds' (time spent on the item) must be a number in 0..86400; got "
                    f"{str(seconds)[:40]}."
                )
            payload["seconds"] = round(float(seconds), 1)
        return payload

    def _image(self, body: Mapping[str, Any], stored: Mapping[str, Any]) -> tuple[dict[str, Any], set[str]]:
        """The payload of an image reading (labels and/or ratings, boxes, or unreadable) and the body's fields
        an image reading does not take."""
        rating = self.spec.rating
        extra = set(body) - {"labels", "boxes", "unreadable", *(("ratings",) if rating is not None else ())}
        unreadable = body.get("unreadable", False)
        if not isinstance(unreadable, bool):
            raise SubmissionError(f"'unreadable' must be true or false; got {unreadable!r}.")
        if unreadable:
            if body.get("labels") or body.get("boxes") or body.get("ratings"):
                raise SubmissionError("An image marked unreadable takes no labels, no ratings and no boxes.")
            return {"labels": {}, "boxes": [], "unreadable": True}, extra
        if rating is not None and not rating.with_label:
            if body.get("labels"):
                raise SubmissionError(
                    "This study asks for a rating per finding instead of labels "
                    "(rating.with_label: false); send 'ratings' only."
                )
            labels: dict[str, str] = {}
        else:
            labels = self._labels(body.get("labels"), states=IMAGE_STATES, complete=True)
        payload: dict[str, Any] = {"labels": labels, "boxes": self._boxes(body.get("boxes"), stored)}
        if rating is not None:
            payload["ratings"] = self._confidence(body.get("ratings"))
        neg = ORDINAL_STATES[LabelState.NEG]
        contradicted = sorted({b["finding"] for b in payload["boxes"] if labels.get(b["finding"]) == neg})
        if contradicted:
            raise SubmissionError(
                f"Box(es) for {contradicted}, labelled negative: a box marks a positive "
                "or uncertain finding; remove the box or change the label."
            )
        if rating is not None:
            absent = sorted(
                {b["finding"] for b in payload["boxes"] if payload["ratings"][b["finding"]] == rating.low}
            )
            if absent:
                raise SubmissionError(
                    f"Box(es) for {absent}, rated {rating.low} (absent): a box marks a finding that "
                    "may be present; remove the box or change the rating."
                )
        return payload, extra

    def _confidence(self, value: object) -> dict[str, int | float]:
        """The confidence rating of every finding (``{finding: rating}`` on the study's scale)."""
        rating, findings = self.spec.rating, self.spec.findings
        if not isinstance(value, dict) or not value:
            raise SubmissionError(
                f"'ratings' must be a non-empty object {{finding: rating}} on {rating.describe()}."
            )
        for f in value:
            if f not in findings:
                raise SubmissionError(
                    f"Unknown finding {f!r} in 'ratings'; this study's findings are {list(findings)}."
                )
        missing = [f for f in findings if f not in value]
        if missing:
            raise SubmissionError(f"Every finding needs a rating; missing {missing}.")
        try:
            return {f: rating.check(f, value[f]) for f in findings}
        except ValueError as exc:
            raise SubmissionError(str(exc)) from None

    def _adjudication(self, reader: Reader, study_id: str, body: Mapping[str, Any]) -> dict[str, Any]:
        current, decided = self.read(lambda conn: self.conflict_rows(conn, study_id))
        if not current:
            raise SubmissionError(f"No conflict to adjudicate for study {study_id!r}.", 404)
        states = IMAGE_STATES if self.spec.adjudication_task == "image" else REPORT_STATES
        labels = self._labels(body.get("labels"), states=states, complete=False)
        other = [f for f in labels if f not in current]
        if other:
            raise SubmissionError(
                f"Study {study_id!r}: {other} not in conflict (conflicts: {list(current)})."
            )
        seen, saw = body.get("conflicts"), body.get("seen", {})
        if not isinstance(seen, dict) or any(not isinstance(seen.get(f), dict) for f in labels):
            raise SubmissionError(
                f"Study {study_id!r}: 'conflicts' (the pair of states of each finding decided, "
                "as the study's item showed them) is required.",
                422,
            )
        if not isinstance(saw, dict) or any(
            v is not None and (not isinstance(v, int) or isinstance(v, bool) or not 1 <= v <= MAX_SEQ)
            for v in saw.values()
        ):
            raise SubmissionError(
                "'seen' must map findings to the seq of the decision the page showed (an integer "
                f"1..{MAX_SEQ}), or null."
            )
        if any(seen[f] != current[f] for f in labels):
            raise SubmissionError(
                f"Study {study_id!r}: the readers' labels changed since it was opened (now "
                f"{ {f: current[f] for f in labels} }); reload it (press L) and adjudicate "
                "again.",
                409,
            )
        for f in labels:
            d = decided.get(f)
            if d is not None and d["by_id"] != reader.id and saw.get(f) != d["seq"]:
                raise SubmissionError(
                    f"Study {study_id!r}, {f}: {d['by']} decided {d['label']!r} since this page "
                    "was opened; nothing was saved. Reload the study (press L) to see it.",
                    409,
                )
        return {
            "labels": labels,
            "conflicts": {f: current[f] for f in labels},
            "seen": {f: saw.get(f) for f in labels},
        }

    def _ratings(self, value: object) -> dict[str, int]:
        lo, hi = self.spec.scale
        crit = self.spec.criteria
        if not isinstance(value, dict) or set(value) != set(crit):
            raise SubmissionError(f"'ratings' must rate exactly the criteria {list(crit)}; got {value!r}.")
        for c, v in value.items():
            if not isinstance(v, int) or isinstance(v, bool) or not lo <= v <= hi:
                raise SubmissionError(f"Rating {v!r} for {c!r} is outside the scale {lo}..{hi} (integers).")
        return {c: int(value[c]) for c in crit}
