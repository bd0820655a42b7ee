"""What a multi-reader multi-case (MRMC) ROC analysis needs from a reader study: a confidence rating per
finding, reading sessions (unaided, then aided by a model's scores and heat maps) and a washout between two
readings of one case by one reader.

The study file's keys (:mod:`cxreval.reader.study`)::

    rating:                                 # optional: a confidence rating per finding
      scale: five_point                     # five_point: 1 definitely absent ... 5 definitely present
                                            # probability: 0-100, the probability of presence in percent
      with_label: true                      # false: the rating replaces the 3-state label
    sessions:                               # optional: the image task read once per session, in this order
      - name: unaided
      - name: aided
        model_scores: predictions.csv       # long table study_id, model, finding, score
        model: densenet                     # which model, when the table holds several
        heatmaps: heatmaps                  # optional: DIR/<study_id>/<finding>.npy (or a .npz of such keys)
    washout_days: 28                        # a session's item opens this long after the reader's reading
                                            # of the case in the sessions before it

Each session is a task of its own, named by the session (its own queue, seeded order and progress); its items
are the study's images. A reader reads session *k*'s item of a case once they have read the case in every
session before *k* and ``washout_days`` have passed since the latest of those readings; once they have read it
in a later session, the earlier sessions' readings of it are closed (:func:`washout_refusal`). The server
checks both inside the transaction that would store the reading, with the time of its clock.
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, NamedTuple

from ..exceptions import SchemaError

__all__: list[str] = []

RATING_SCALES: dict[str, tuple[int, int]] = {"five_point": (1, 5), "probability": (0, 100)}
"""The rating scales and their inclusive ranges: ``five_point`` (integers; 1 definitely absent, 2 probably
absent, 3 unsure, 4 probably present, 5 definitely present) and ``probability`` (the probability of presence
in percent, any number from 0 to 100)."""
FIVE_POINT_NAMES: tuple[str, ...] = (
    "definitely absent",
    "probably absent",
    "unsure",
    "probably present",
    "definitely present",
)
MAX_SESSION_NAME = 16
"""A session's name is a task name in the database (16 characters)."""


@dataclass(frozen=True)
class RatingScale:
    """The confidence rating a reader gives each finding.

    Attributes
    ----------
    scale : {'five_point', 'probability'}
    with_label : bool
        Whether the 3-state label is asked for as well (else the rating replaces it).
    """

    scale: str
    with_label: bool = True

    @property
    def low(self) -> int:
        return RATING_SCALES[self.scale][0]

    @property
    def high(self) -> int:
        return RATING_SCALES[self.scale][1]

    @property
    def integer(self) -> bool:
        """Whether a rating must be a whole number (the five-point scale)."""
        return self.scale == "five_point"

    def describe(self) -> str:
        """The scale in words, for messages."""
        if self.integer:
            return (
                f"the five_point scale {self.low}..{self.high} (whole numbers: {self.low} {FIVE_POINT_NAMES[0]} ... "
                f"{self.high} {FIVE_POINT_NAMES[-1]})"
            )
        return f"the probability scale {self.low}..{self.high} (percent probability of presence)"

    def check(self, finding: str, value: object) -> int | float:
        """``value`` as stored (an int, or a float rounded to 2 decimals), or raise ``ValueError`` naming the
        finding, the value and the scale."""
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
        if ok and isinstance(value, float):
            ok = value == value and abs(value) != float("inf")
            if ok and self.integer:
                ok = value.is_integer()
        if not ok or not self.low <= value <= self.high:  # type: ignore[operator]
            raise ValueError(f"Finding {finding!r}: rating {str(value)[:40]} is outside {self.describe()}.")
        v = float(value)  # type: ignore[arg-type]
        return int(v) if v.is_integer() else round(v, 2)

    def to_dict(self) -> dict[str, object]:
        return {"scale": self.scale, "with_label": self.with_label, "low": self.low, "high": self.high}


@dataclass(frozen=True)
class Session:
    """One reading of the study's images.

    Attributes
    ----------
    name : str
        The session's task name (the ``modality`` of ``ratings.csv``).
    model_scores : str or None
        Path (inside the study folder) of the long prediction table whose scores the session shows.
    model : str or None
        The model of that table shown (None: its only model).
    heatmaps : str or None
        Path (inside the study folder) of the heat maps the session overlays.
    """

    name: str
    model_scores: str | None = None
    model: str | None = None
    heatmaps: str | None = None

    @property
    def aided(self) -> bool:
        """Whether the session shows a model's output."""
        return self.model_scores is not None or self.heatmaps is not None

    def to_dict(self) -> dict[str, object]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Session:
        return cls(str(d["name"]), d.get("model_scores"), d.get("model"), d.get("heatmaps"))


def read_rating(value: object, *, where: str) -> RatingScale | None:
    """The ``rating`` key of a study file (a mapping ``{scale, with_label}``, or a scale name), or None."""
    if value is None:
        return None
    if isinstance(value, str):
        value = {"scale": value}
    if not isinstance(value, dict) or set(value) - {"scale", "with_label"}:
        raise SchemaError(
            f"{where}, key 'rating': expected a mapping with keys scale, with_label (e.g. "
            f"{{scale: five_point, with_label: true}}); got {value!r}."
        )
    scale = value.get("scale")
    if not isinstance(scale, str) or scale not in RATING_SCALES:
        raise SchemaError(
            f"{where}, key 'rating.scale': expected one of {list(RATING_SCALES)}; got {scale!r}."
        )
    with_label = value.get("with_label", True)
    if not isinstance(with_label, bool):
        raise SchemaError(f"{where}, key 'rating.with_label': expected true or false; got {with_label!r}.")
    return RatingScale(str(scale), with_label)


def read_sessions(value: object, *, where: str, reserved: tuple[str, ...]) -> tuple[Session, ...]:
    """The ``sessions`` key of a study file: a list of ``{name, [model_scores, model, heatmaps]}`` (names
    unique, at most :data:`MAX_SESSION_NAME` characters, none of the ``reserved`` task names); paths are
    checked later, when the study's files are read (:func:`session_payloads`)."""
    from .study import check_name

    if value is None:
        return ()
    if not isinstance(value, list) or not value:
        raise SchemaError(
            f"{where}, key 'sessions': expected a non-empty list of mappings such as "
            f"[{{name: unaided}}, {{name: aided, model_scores: predictions.csv}}]; got {value!r}."
        )
    out: list[Session] = []
    for k, s in enumerate(value):
        at = f"{where}, key 'sessions[{k}]'"
        if isinstance(s, str):
            s = {"name": s}
        if (
            not isinstance(s, dict)
            or "name" not in s
            or set(s) - {"name", "model_scores", "model", "heatmaps"}
        ):
            raise SchemaError(
                f"{at}: expected a mapping with keys name (required), model_scores, model, heatmaps; "
                f"got {s!r}."
            )
        name = check_name(s["name"], what="session name") if isinstance(s["name"], str) else None
        if name is None or len(name) > MAX_SESSION_NAME or name in reserved:
            raise SchemaError(
                f"{at}.name: expected a name of 1-{MAX_SESSION_NAME} letters, digits, '_', '.' or '-' "
                f"other than {list(reserved)}; got {s['name']!r}."
            )
        if any(x.name == name for x in out):
            raise SchemaError(f"{at}.name: session {name!r} is listed twice; each session once.")
        for key in ("model_scores", "model", "heatmaps"):
            if key in s and (not isinstance(s[key], str) or not s[key].strip()):
                raise SchemaError(f"{at}.{key}: expected a non-empty string; got {s[key]!r}.")
        if "model" in s and "model_scores" not in s:
            raise SchemaError(
                f"{at}.model: names a model of 'model_scores', which the session does not give."
            )
        out.append(Session(name, s.get("model_scores"), s.get("model"), s.get("heatmaps")))
    return tuple(out)


def read_washout(value: object, *, where: str, sessions: tuple[Session, ...]) -> float:
    """The ``washout_days`` key: a number of days >= 0, given only with two or more sessions."""
    if value is None:
        return 0.0
    if (
        not isinstance(value, (int, float))
        or isinstance(value, bool)
        or not value == value
        or value < 0
        or value == float("inf")
    ):
        raise SchemaError(
            f"{where}, key 'washout_days': expected a number of days >= 0 (the minimum time between "
            f"two readings of one case by one reader); got {value!r}."
        )
    if len(sessions) < 2:
        raise SchemaError(
            f"{where}, key 'washout_days': a washout separates the readings of two sessions; give "
            "two or more 'sessions' (e.g. [{name: unaided}, {name: aided, model_scores: ...}])."
        )
    return float(value)


def _model_scores(
    root: Path, session: Session, study_ids: list[str], findings: tuple[str, ...], *, where: str
) -> tuple[str, dict[str, dict[str, float]]]:
    """The session's model and its ``{study_id: {finding: score}}``, for every study and finding."""
    from ..labels import read_predictions
    from .study import inside_root

    at = f"{where}, 'sessions' {session.name!r}, 'model_scores'"
    path = inside_root(root, str(session.model_scores), where=at)
    if not path.is_file():
        raise SchemaError(f"{at}: file {path} does not exist.")
    table = read_predictions(path).table
    models = sorted(table["model"].unique())
    if session.model is None and len(models) > 1:
        raise SchemaError(
            f"{at}: file {path} holds the scores of {len(models)} models {models[:8]}; say which one "
            "the session shows with 'model: NAME'."
        )
    model = session.model if session.model is not None else models[0]
    if model not in models:
        raise SchemaError(f"{at}: file {path} has no model {model!r}; its models are {models[:8]}.")
    table = table[table["model"] == model]
    scores: dict[str, dict[str, float]] = {}
    for sid, f, v in zip(table["study_id"], table["finding"], table["score"]):
        scores.setdefault(str(sid), {})[str(f)] = float(v)
    missing = [s for s in study_ids if s not in scores]
    if missing:
        raise SchemaError(
            f"{at}: file {path} (model {model!r}) has no score for {len(missing)} of the study's "
            f"{len(study_ids)} images, e.g. study_id {missing[:5]}; an aided session shows a score "
            "for every image and finding."
        )
    for s in study_ids:
        lack = [f for f in findings if f not in scores[s]]
        if lack:
            raise SchemaError(
                f"{at}: file {path} (model {model!r}) has no score of study_id {s!r} for finding(s) "
                f"{lack}; an aided session shows a score for every image and finding."
            )
    return str(model), {s: {f: scores[s][f] for f in findings} for s in study_ids}


def _heatmap_findings(
    root: Path, session: Session, study_ids: list[str], findings: tuple[str, ...], *, where: str
) -> dict[str, list[str]]:
    """``{study_id: [findings with a map]}`` of the session's heat maps (keys ``<study_id>/<finding>``)."""
    from ..findings import canonical_finding
    from ..localization._heatmap_files import scan_heatmaps
    from .study import inside_root

    at = f"{where}, 'sessions' {session.name!r}, 'heatmaps'"
    path = inside_root(root, str(session.heatmaps), where=at)
    if not path.exists():
        raise SchemaError(f"{at}: {path} does not exist.")
    index = scan_heatmaps([path])
    known, wanted = set(study_ids), set(findings)
    out: dict[str, list[str]] = {}
    for key in index.keys:
        sid, _, name = key.rpartition("/")
        try:
            f = canonical_finding(name, where=at)
        except SchemaError:
            continue
        if sid in known and f in wanted:
            out.setdefault(sid, []).append(f)
    if not out:
        raise SchemaError(
            f"{at}: none of the {len(index)} maps in {path} is keyed '<study_id>/<finding>' with a "
            f"study and finding of this study (keys such as {list(index.keys[:3])}; study ids such as "
            f"{study_ids[:3]})."
        )
    order = {f: k for k, f in enumerate(findings)}
    return {s: sorted(set(fs), key=order.__getitem__) for s, fs in out.items()}


def session_payloads(
    root: str | Path,
    sessions: tuple[Session, ...],
    images: list[tuple[str, dict[str, Any]]],
    findings: tuple[str, ...],
    *,
    where: str,
) -> list[tuple[str, str, dict[str, Any]]]:
    """``(session, study_id, payload)`` of every session's items: the image's payload, plus ``session`` and,
    in an aided session, ``model`` and ``scores`` (``{finding: score}``) and ``heatmaps`` (the findings with a
    map).

    Raises
    ------
    SchemaError
        A model-scores file or heat-map folder missing or outside the study folder, a table of several models
        without ``model:``, a study or finding without a score, heat maps of none of the study's images.
    """
    base = Path(root)
    ids = [sid for sid, _ in images]
    out: list[tuple[str, str, dict[str, Any]]] = []
    for s in sessions:
        model, scores = _model_scores(base, s, ids, findings, where=where) if s.model_scores else ("", None)
        maps = _heatmap_findings(base, s, ids, findings, where=where) if s.heatmaps else None
        for sid, payload in images:
            p = {**payload, "session": s.name}
            if scores is not None:
                p.update(model=model, scores=scores[sid])
            if maps is not None:
                p["heatmaps"] = maps.get(sid, [])
            out.append((s.name, sid, p))
    return out


def parse_time(stamp: str) -> _dt.datetime:
    """A stored server time (ISO 8601, UTC) as an aware datetime."""
    t = _dt.datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    return t if t.tzinfo is not None else t.replace(tzinfo=_dt.timezone.utc)


class WashoutRefusal(NamedTuple):
    """What :func:`washout_refusal` returns: ``(None, None)`` when the reader may read the case now, else the ISO
    time the item opens (None when no time opens it) and why, in words."""

    opens: str | None
    why: str | None


def washout_refusal(
    sessions: tuple[str, ...], session: str, readings: Mapping[str, str], now: str, *, washout_days: float
) -> WashoutRefusal:
    """Whether a reader may read a case in ``session`` now: ``(None, None)`` when they may, else ``(opens,
    why)``: ``opens`` the ISO time the item opens (None when no time opens it) and ``why`` in words.

    Parameters
    ----------
    sessions : tuple of str
        The study's sessions in reading order.
    session : str
        The session of the reading.
    readings : mapping of str to str
        ``{session: server time}`` of the reader's latest reading of the case in each session read.
    now : str
        The server time of the reading (ISO 8601).
    washout_days : float
    """
    k = sessions.index(session)
    later = [s for s in sessions[k + 1 :] if s in readings]
    if later:
        return WashoutRefusal(
            None,
            f"closed: this case was read in the later session {later[0]!r} "
            f"({readings[later[0]][:16].replace('T', ' ')} UTC); a reading of session {session!r} "
            "after it would not be independent of it",
        )
    unread = [s for s in sessions[:k] if s not in readings]
    if unread:
        return WashoutRefusal(None, f"read this case in session {unread[0]!r} first")
    if k == 0 or washout_days <= 0:
        return WashoutRefusal(None, None)
    last_session = max(sessions[:k], key=lambda s: parse_time(readings[s]))
    opens = parse_time(readings[last_session]) + _dt.timedelta(days=washout_days)
    if parse_time(now) >= opens:
        return WashoutRefusal(None, None)
    when = opens.isoformat(timespec="seconds")
    return WashoutRefusal(
        when,
        f"opens at {when[:16].replace('T', ' ')} UTC, {washout_days:g} days (washout_days) after "
        f"your reading of this case in session {last_session!r}",
    )


class SessionLocks:
    """Which items of a session are open to a reader now, mixed into :class:`~cxreval.reader.store.ReaderStore`
    (which gives ``sa``, ``t``, ``spec``, ``read``, ``keys_of`` and ``stamp``, its clock's time)."""

    sa: Any
    t: Any
    spec: Any
    read: Any
    keys_of: Any
    stamp: Any

    def locks(self, reader: Any, task: str, keys: Iterable[str] | None = None) -> dict[str, dict[str, Any]]:
        """``{key: {"opens": ISO time or None, "why": text}}`` of the reader's items of a session that are not
        open to them now (the washout, an earlier session not yet read, a later one read:
        :func:`cxreval.reader.mrmc.washout_refusal`); of ``keys`` only when given. Empty for other tasks."""
        sessions = self.spec.session_names
        if task not in sessions or len(sessions) < 2:
            return {}
        sa, lt = self.sa, self.t["latest"]
        wanted = None if keys is None else list(keys)
        q = sa.select(lt.c.task, lt.c.item, lt.c.server_time).where(
            lt.c.reader_id == reader.id, lt.c.task.in_([s for s in sessions if s != task])
        )
        if wanted is not None:
            q = q.where(lt.c.item.in_(wanted))
        per: dict[str, dict[str, str]] = {}
        for t, item, when in self.read(lambda conn: conn.execute(q).all()):
            per.setdefault(str(item), {})[str(t)] = str(when)
        stamp, out = self.stamp(), {}
        for key in wanted if wanted is not None else self.keys_of(reader, task):
            opens, why = washout_refusal(
                sessions, task, per.get(key, {}), stamp, washout_days=self.spec.washout_days
            )
            if why is not None:
                out[key] = {"opens": opens, "why": why}
        return out


class HeatmapPixels(NamedTuple):
    """What :meth:`HeatmapReader.read` returns: the gzip of the map's uint8 pixels row by row, its width and height."""

    data: bytes
    width: int
    height: int


class HeatmapReader:
    """The heat maps of a study's aided sessions, for the page's overlay: one map at a time, scaled to 0-255.

    Parameters
    ----------
    root : str or Path
        The study folder.
    sessions : tuple of Session
    """

    def __init__(self, root: str | Path, sessions: tuple[Session, ...]) -> None:
        self.root = Path(root)
        self.paths = {s.name: s.heatmaps for s in sessions if s.heatmaps}
        self._index: dict[str, tuple[Any, dict[str, int]]] = {}

    def _of(self, session: str) -> tuple[Any, dict[str, int]]:
        hit = self._index.get(session)
        if hit is None:
            from ..findings import canonical_finding
            from ..localization._heatmap_files import scan_heatmaps
            from .study import inside_root

            index = scan_heatmaps(
                [inside_root(self.root, str(self.paths[session]), where=f"session {session!r}")]
            )
            keys: dict[str, int] = {}
            for i, key in enumerate(index.keys):
                sid, _, name = key.rpartition("/")
                try:
                    keys[f"{sid}/{canonical_finding(name, where='heat map')}"] = i
                except SchemaError:
                    continue
            hit = self._index[session] = (index, keys)
        return hit

    def read(self, session: str, study_id: str, finding: str) -> HeatmapPixels | None:
        """``(gzip of uint8 pixels row by row, width, height)`` of the map of ``study_id`` and ``finding`` in
        ``session``, its minimum 0 and maximum 255 (a constant map is 0); None when there is none."""
        import gzip

        import numpy as np

        from ..localization._heatmap_files import read_maps

        if session not in self.paths:
            return None
        index, keys = self._of(session)
        i = keys.get(f"{study_id}/{finding}")
        if i is None:
            return None
        a = read_maps(index.take([i]))[0]
        lo, hi = float(a.min()), float(a.max())
        u8 = (
            np.zeros(a.shape, np.uint8)
            if hi <= lo
            else np.round((a - lo) * (255.0 / (hi - lo))).astype(np.uint8)
        )
        return HeatmapPixels(
            gzip.compress(u8.tobytes(), compresslevel=1, mtime=0), int(a.shape[1]), int(a.shape[0])
        )
