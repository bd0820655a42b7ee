"""The typed model of a reader study's YAML file (:func:`cxreval.reader.study.load_study`), pydantic v2.

Each key is a field with its rule in a field validator or in its annotation (:func:`_rule`), in the order the
keys are checked; the rules that join keys (a task with its data, the adjudication's readers and task, the
assignment) are the model validator's.
Every refusal is the :class:`~cxreval.exceptions.SchemaError` the module docstring of
:mod:`cxreval.reader.study` describes, naming the file and the key (:func:`cxreval._config.validate_config`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict, ValidationInfo, field_validator, model_validator

from .._config import where
from ..exceptions import SchemaError
from ..findings import VOCABULARIES, canonical_finding
from .mrmc import RatingScale, Session, read_rating, read_sessions, read_washout
from .study import TASKS, check_name

__all__ = ["StudyFile", "IQAPart", "AdjudicationPart", "KEYS", "ORDERS", "list_of_str", "finding_names"]

KEYS = (
    "name",
    "seed",
    "findings",
    "images",
    "patients",
    "reports",
    "sections",
    "iqa",
    "adjudication",
    "assignment",
    "readers",
    "resolvers",
    "tasks",
    "rating",
    "sessions",
    "washout_days",
    "cache_images",
    "order",
    "pixel_spacing_mm",
)
"""The keys of a study file."""

ORDERS = ("random", "priority")
"""The item orders of the image task: each reader's own seeded permutation, or the ``priority`` column of the
``patients`` file (lowest first; a relabelling plan's ``images.csv``)."""


def list_of_str(value: object, *, where: str) -> tuple[str, ...]:
    """A list of non-empty strings, or one string of comma-separated items."""
    if isinstance(value, str):
        value = [v.strip() for v in value.split(",") if v.strip()]
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise SchemaError(f"{where}: expected a list of non-empty strings; got {value!r}.")
    return tuple(value)


def finding_names(value: object, *, where: str) -> tuple[str, ...]:
    """A vocabulary's name (its findings), or a list of finding names, canonical and each once."""
    if isinstance(value, str) and value.strip().lower() in VOCABULARIES:
        return tuple(VOCABULARIES[value.strip().lower()])
    names = list_of_str(value, where=where)
    out = tuple(canonical_finding(n, where=where) for n in names)
    if len(set(out)) != len(out):
        raise SchemaError(f"{where}: finding names repeat (after canonicalisation): {list(out)}.")
    return out


def _safe_names(value: object, *, where: str, what: str) -> tuple[str, ...]:
    """:func:`list_of_str`, each name passed by :func:`~cxreval.reader.study.check_name` (as ``what``)."""
    return tuple(check_name(n, what=what) for n in list_of_str(value, where=where))


def _rule(read: Callable[..., Any], key: str = "", **options: Any) -> BeforeValidator:
    """A key's rule, as its field's annotation: ``read(value, where=<the file><key>, **options)``."""

    def check(value: Any, info: ValidationInfo) -> Any:
        return read(value, where=f"{where(info)}{key}", **options)

    return BeforeValidator(check)


def _part(value: Any, key: str, keys: tuple[str, ...], info: ValidationInfo) -> dict[str, Any]:
    """The mapping of a nested key (``iqa``, ``adjudication``; missing: empty), refused with keys not in
    ``keys``."""
    value = value or {}
    if not isinstance(value, dict) or set(value) - set(keys):
        raise SchemaError(
            f"{where(info)}: {key!r} must be a mapping with keys {', '.join(keys)}; got {value!r}."
        )
    return value


_CONFIG = ConfigDict(frozen=True, arbitrary_types_allowed=True)


class IQAPart(BaseModel):
    """The ``iqa`` key: the pairs file, the Likert criteria, the inclusive scale."""

    model_config = _CONFIG

    pairs: Any = None
    criteria: Annotated[tuple[str, ...], _rule(_safe_names, ", 'iqa.criteria'", what="IQA criterion")] = (
        "overall",
    )
    scale: tuple[int, int] = (1, 4)

    @model_validator(mode="before")
    @classmethod
    def _mapping(cls, value: Any, info: ValidationInfo) -> Any:
        return _part(value, "iqa", ("pairs", "criteria", "scale"), info)

    @field_validator("scale", mode="before")
    @classmethod
    def _scale(cls, value: Any, info: ValidationInfo) -> tuple[int, int]:
        if (
            not isinstance(value, list)
            or len(value) != 2
            or not all(isinstance(v, int) and not isinstance(v, bool) for v in value)
            or value[0] >= value[1]
        ):
            raise SchemaError(
                f"{where(info)}: 'iqa.scale' must be two increasing integers [low, high]; got {value!r}."
            )
        return int(value[0]), int(value[1])


class AdjudicationPart(BaseModel):
    """The ``adjudication`` key: whose conflicts (``task``) between which two ``readers``."""

    model_config = _CONFIG

    task: str = "image"
    readers: Annotated[tuple[str, ...] | None, _rule(list_of_str, ", 'adjudication.readers'")] = None

    @model_validator(mode="before")
    @classmethod
    def _mapping(cls, value: Any, info: ValidationInfo) -> Any:
        return _part(value, "adjudication", ("task", "readers"), info)

    @field_validator("task", mode="before")
    @classmethod
    def _task(cls, value: Any) -> str:
        return str(value)


class StudyFile(BaseModel):
    """A study file's keys, typed and checked (the YAML format of :mod:`cxreval.reader.study`); ``images``,
    ``patients`` and ``reports`` are read with the files (:func:`~cxreval.reader.study.study_items`)."""

    model_config = _CONFIG

    findings: Annotated[tuple[str, ...], _rule(finding_names, ", key 'findings'")]
    seed: int = 0
    readers: tuple[str, ...] = ()
    resolvers: tuple[str, ...] = ()
    sections: Annotated[tuple[str, ...], _rule(_safe_names, ", 'sections'", what="section name")] = (
        "findings",
        "impression",
    )
    iqa: IQAPart = IQAPart()
    adjudication: AdjudicationPart = AdjudicationPart()
    tasks: Annotated[tuple[str, ...] | None, _rule(list_of_str, ", 'tasks'")] = None
    rating: Annotated[RatingScale | None, _rule(read_rating)] = None
    sessions: Annotated[tuple[Session, ...], _rule(read_sessions, reserved=TASKS)] = ()
    washout_days: float = 0.0
    cache_images: bool = True
    order: str = "random"
    pixel_spacing_mm: float | None = None
    assignment: Any = None
    name: Any = None
    images: Any = None
    patients: Any = None
    reports: Any = None

    @model_validator(mode="before")
    @classmethod
    def _keys(cls, value: Any, info: ValidationInfo) -> Any:
        path = (info.context or {}).get("path")
        if not isinstance(value, dict):
            raise SchemaError(f"Study file {path}: expected a mapping of keys; got {type(value).__name__}.")
        unknown = sorted(set(value) - set(KEYS))
        if unknown:
            raise SchemaError(
                f"Study file {path}: unknown key(s) {unknown}; expected some of {sorted(KEYS)}."
            )
        if "findings" not in value:
            raise SchemaError(f"{where(info)}: 'findings' is required (a list or a vocabulary name).")
        return {**value, "iqa": value.get("iqa") or {}, "adjudication": value.get("adjudication") or {}}

    @field_validator("seed", mode="before")
    @classmethod
    def _seed(cls, value: Any, info: ValidationInfo) -> int:
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise SchemaError(f"{where(info)}: 'seed' must be a non-negative integer; got {value!r}.")
        return value

    @field_validator("readers", "resolvers", mode="before")
    @classmethod
    def _names(cls, value: Any, info: ValidationInfo) -> tuple[str, ...]:
        at, key = where(info), str(info.field_name)
        names = tuple(check_name(r) for r in list_of_str(value or [], where=f"{at}, '{key}'"))
        twice = sorted(n for n, k in Counter(names).items() if k > 1)
        if twice:
            raise SchemaError(f"{at}: {key[:-1]} {twice[0]!r} is listed twice in '{key}'; each name once.")
        both = sorted(set(names) & set(info.data.get("readers", ()))) if key == "resolvers" else []
        if both:
            raise SchemaError(
                f"{at}: reader and resolver names must be distinct; {both} are in both 'readers' and 'resolvers'."
            )
        return names

    @field_validator("adjudication", mode="after")
    @classmethod
    def _adjudication_task(cls, value: AdjudicationPart, info: ValidationInfo) -> AdjudicationPart:
        sections = info.data.get("sections", ())
        if value.task != "image" and not (value.task.startswith("report:") and value.task[7:] in sections):
            raise SchemaError(
                f"{where(info)}: 'adjudication.task' must be 'image' or 'report:<section>' with a section of "
                f"{list(sections)}; got {value.task!r}."
            )
        return value

    @field_validator("order", mode="before")
    @classmethod
    def _order(cls, value: Any, info: ValidationInfo) -> str:
        if value not in ORDERS:
            raise SchemaError(f"{where(info)}: 'order' must be one of {list(ORDERS)}; got {value!r}.")
        return str(value)

    @field_validator("washout_days", mode="before")
    @classmethod
    def _washout(cls, value: Any, info: ValidationInfo) -> float:
        return read_washout(value, where=where(info), sessions=info.data.get("sessions", ()))

    @field_validator("cache_images", mode="before")
    @classmethod
    def _cache_images(cls, value: Any, info: ValidationInfo) -> bool:
        if not isinstance(value, bool):
            raise SchemaError(
                f"{where(info)}: 'cache_images' must be true (browsers keep the images they were sent, "
                f"for an hour) or false (shared computers: nothing kept); got {value!r}."
            )
        return value

    @field_validator("pixel_spacing_mm", mode="before")
    @classmethod
    def _spacing(cls, value: Any, info: ValidationInfo) -> float | None:
        ok = isinstance(value, (int, float)) and not isinstance(value, bool) and 0 < value < 10
        if value is not None and not ok:
            raise SchemaError(
                f"{where(info)}: 'pixel_spacing_mm' must be the millimetres per pixel of the images, a "
                f"number above 0 and below 10 (chest radiographs: about 0.1 to 0.2); got {value!r}."
            )
        return None if value is None else float(value)

    @model_validator(mode="after")
    def _joined(self, info: ValidationInfo) -> StudyFile:
        """The rules that join keys: each task has its data; rating and sessions need images; adjudication
        compares two readers of a task the study has; ``assignment`` names at most every reader."""
        at, tasks, adj = where(info), self.task_kinds, self.adjudication
        present = self._present
        for t in tasks:
            if t not in TASKS:
                raise SchemaError(f"{at}: unknown task {t!r}; expected some of {list(TASKS)}.")
            if t != "adjudication" and t not in present:
                raise SchemaError(f"{at}: task {t!r} is listed but the file gives no data for it.")
        if not tasks:
            raise SchemaError(f"{at}: no task: give 'images', 'reports' and/or 'iqa'.")
        if self.order == "priority" and not (self.patients and "image" in tasks):
            raise SchemaError(
                f"{at}: 'order: priority' orders the images by the 'priority' column of the 'patients' file; "
                "give both 'images' and 'patients'."
            )
        if (self.rating is not None or self.sessions) and "image" not in tasks:
            raise SchemaError(
                f"{at}: 'rating' and 'sessions' apply to the image task, which the study does not have "
                "(give 'images')."
            )
        if (
            self.rating is not None
            and not self.rating.with_label
            and "adjudication" in tasks
            and adj.task == "image"
        ):
            raise SchemaError(
                f"{at}: adjudication of 'image' compares the readers' labels, which 'rating.with_label: "
                "false' does not ask for; adjudicate 'report:<section>' or ask for labels."
            )
        readers, pair = self.readers, self.adjudication_readers
        if "adjudication" in tasks:
            if adj.readers is None and len(readers) > 2:
                raise SchemaError(
                    f"{at}: adjudication compares two readers; with readers {', '.join(readers)} say which "
                    "two in 'adjudication: {readers: [A, B]}'."
                )
            if len(pair) != 2 or len(set(pair)) != 2 or not set(pair) <= set(readers):
                raise SchemaError(
                    f"{at}: adjudication needs two distinct readers from 'readers'; got "
                    f"{list(pair)} (readers: {list(readers)})."
                )
            if (adj.task == "image" and "image" not in tasks) or (
                adj.task != "image" and "report" not in tasks
            ):
                raise SchemaError(f"{at}: adjudication of {adj.task!r} needs that task in the study.")
        assignment = self.assignment or {}
        k = assignment.get("per_image", 0) if isinstance(assignment, dict) else None
        if (
            not isinstance(assignment, dict)
            or set(assignment) - {"per_image"}
            or not isinstance(k, int)
            or isinstance(k, bool)
            or not 0 <= k <= len(readers)
            or (assignment and k < 1)
        ):
            raise SchemaError(
                f"{at}: 'assignment' must be {{per_image: k}} with k from 1 to the number of readers "
                f"({len(readers)}); got {assignment!r}."
            )
        return self

    @property
    def _present(self) -> tuple[str, ...]:
        """The tasks the file gives data for."""
        given = {"images": self.images, "reports": self.reports, "iqa": self.iqa.model_fields_set}
        present = [t for t, k in (("image", "images"), ("report", "reports"), ("iqa", "iqa")) if given[k]]
        if self.adjudication.model_fields_set or (self.resolvers and len(self.readers) >= 2):
            present.append("adjudication")
        return tuple(present)

    @property
    def task_kinds(self) -> tuple[str, ...]:
        """The tasks as listed (``tasks``), else those the file gives data for; ``image`` not yet one task per
        session."""
        return self.tasks if self.tasks is not None else self._present

    @property
    def adjudication_readers(self) -> tuple[str, ...]:
        """The two readers adjudicated: as given, else the first two of ``readers``."""
        given = self.adjudication.readers
        return given if given is not None else self.readers[:2]

    @property
    def per_image(self) -> int:
        """Readers per image (``assignment: {per_image: k}``); 0: every reader reads every image."""
        return int((self.assignment or {}).get("per_image", 0))
