"""Shared machinery of the label-fusion estimators: input validation and encoding, the estimator base
classes and the method registry. Fusion on a long label table is :func:`cxreval.fusion.fuse_labels`.

The fusion input (the *annotation table*) is long, one row per ``(study_id, source)`` and, optionally,
``finding``, in the label vocabulary (:mod:`cxreval.schema`):

=========  ===============================================================
study_id   str, the item a consensus label is derived for
source     str, who gave the label (a reader: a radiologist id, a labeller)
finding    str, optional; when present, items are ``(study_id, finding)``
state      a :class:`~cxreval.schema.LabelState` (code or name): ``NEG=0``, ``UNC=1``, ``POS=2``
=========  ===============================================================

crowd-kit's ``reader`` / ``label`` columns are refused with a "did you mean"
(:data:`cxreval.schema.RENAMED_COLUMNS`). Inside the estimators the label sources being fused are
called *readers* (``readers_``, ``--readers``): a role, the sources fused, not another name for ``source``.

Every estimator encodes studies, findings and readers by their *sorted* unique values and sorts the
annotations by ``(item, reader)`` before computing anything, so the output does not depend on the
order of the input rows (crowd-kit 1.4.2's MACE does: its reader parameters follow row order).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import pandas as pd

from .._validation import did_you_mean
from ..exceptions import InvalidParameterError, SchemaError, UnknownNameError
from ..schema import FINDING, SOURCE, STATE, STUDY_ID, LabelState
from ..schema._columns import ANNOTATION_COLUMNS, check_columns, first_true
from ..schema._states import parse_states

__all__ = [
    "pooling_groups",
    "STATES",
    "N_STATES",
    "Annotations",
    "GroupArrays",
    "BaseFusion",
    "GroupedFusion",
    "FIT_INFO_COLUMNS",
    "register_fusion",
    "get_fusion",
    "list_fusion",
    "encode_annotations",
    "parse_fused_states",
    "check_float",
    "label_series",
    "proba_frame",
]

STATES: tuple[int, ...] = (int(LabelState.NEG), int(LabelState.UNC), int(LabelState.POS))
"""The label states fused: ``NEG=0``, ``UNC=1``, ``POS=2`` (:class:`cxreval.schema.LabelState`)."""
N_STATES = 3


class GroupArrays(NamedTuple):
    """One pooling group's annotations as ``_fit_group`` takes them: item, reader and label codes of each
    annotation (sorted by item, then reader), the group's items and the whole table's readers."""

    item: np.ndarray
    reader: np.ndarray
    label: np.ndarray
    n_items: int
    n_readers: int


@dataclass(frozen=True)
class Annotations:
    """An encoded annotation table (sorted by item, then reader).

    Attributes
    ----------
    items : pandas.Index or pandas.MultiIndex
        The items, sorted: study ids, or ``(study_id, finding)`` pairs when the table has a ``finding``.
    readers : tuple of str
        The readers, sorted.
    item : ndarray of int, shape (n_annotations,)
        Item code of each annotation.
    reader : ndarray of int, shape (n_annotations,)
        Reader code of each annotation.
    label : ndarray of int, shape (n_annotations,)
        The state (0, 1, 2) of each annotation.
    finding : ndarray of int or None
        Finding code of each *item* (into ``findings``), when the table has a ``finding`` column.
    findings : tuple of str
        The findings, sorted (empty without a ``finding`` column).
    """

    items: pd.Index
    readers: tuple[str, ...]
    item: np.ndarray
    reader: np.ndarray
    label: np.ndarray
    finding: np.ndarray | None
    findings: tuple[str, ...]

    @property
    def n_items(self) -> int:
        return len(self.items)

    @property
    def n_readers(self) -> int:
        return len(self.readers)

    def subset(self, items: np.ndarray) -> Annotations:
        """The annotations of the items ``items`` (sorted item codes), re-coded ``0 .. len(items)-1``."""
        pos = np.full(self.n_items, -1)
        pos[items] = np.arange(len(items))
        keep = pos[self.item] >= 0
        return Annotations(
            self.items[items],
            self.readers,
            pos[self.item[keep]],
            self.reader[keep],
            self.label[keep],
            None if self.finding is None else self.finding[items],
            self.findings,
        )


def encode_annotations(data: object, *, func: str, allow_finding: bool = True) -> Annotations:
    """Validate an annotation table (columns :data:`ANNOTATION_COLUMNS`, optionally ``finding``) and encode it.

    Raises
    ------
    SchemaError
        Not a DataFrame; a missing column (``reader`` / ``label`` are refused with a "did you mean"); a
        missing id or state; a state other than negative, uncertain, positive (names or the codes 0, 1, 2);
        one source labelling one item twice.
    """
    where = f"the annotation table passed to {func}"
    if not isinstance(data, pd.DataFrame):
        raise SchemaError(
            f"{where} must be a pandas DataFrame with columns {list(ANNOTATION_COLUMNS)} "
            f"(and optionally {FINDING!r}). Got {type(data).__name__} instead."
        )
    check_columns(data, ANNOTATION_COLUMNS, where=where)
    if len(data) == 0:
        raise SchemaError(f"{where} is empty; at least one annotation is needed.")
    has_finding = allow_finding and FINDING in data.columns
    for c in [STUDY_ID, SOURCE] + ([FINDING] if has_finding else []):
        na = data[c].isna().to_numpy()
        if na.any():
            i = int(np.flatnonzero(na)[0])
            raise SchemaError(f"Missing {c!r} in {where}, row {i}.")
    label = parse_fused_states(data[STATE], where=where)
    # factorize the string columns as they are (Arrow-backed strings stay in Arrow): ~2x faster at 5M rows
    reader, readers = pd.factorize(data[SOURCE].astype(str), sort=True)
    study_code, studies = pd.factorize(data[STUDY_ID].astype(str), sort=True)
    if has_finding:
        fcode, findings = pd.factorize(data[FINDING].astype(str), sort=True)
        pair = study_code.astype(np.int64) * len(findings) + fcode
        pairs, item = np.unique(pair, return_inverse=True)
        items = pd.MultiIndex.from_arrays(
            [
                np.asarray(studies, dtype=object)[pairs // len(findings)],
                np.asarray(findings, dtype=object)[pairs % len(findings)],
            ],
            names=[STUDY_ID, FINDING],
        )
        item_finding = pairs % len(findings)
    else:
        item = study_code
        items = pd.Index(np.asarray(studies, dtype=object), name=STUDY_ID)
        findings, item_finding = np.array([], dtype=str), None
    order = np.argsort(
        item.astype(np.int64) * len(readers) + reader, kind="stable"
    )  # == lexsort((reader, item))
    item, reader, label = item[order], reader[order], label[order]
    dup = (np.diff(item) == 0) & (np.diff(reader) == 0)
    if dup.any():
        k = int(np.flatnonzero(dup)[0])
        rows = np.sort(order[k : k + 2]).tolist()
        raise SchemaError(
            f"Source {str(readers[reader[k]])!r} labels item {items[item[k]]!r} more than once in "
            f"{where} (rows {rows}); each source gives at most one label per item."
        )
    return Annotations(
        items,
        tuple(str(r) for r in readers),
        item.astype(np.int64),
        reader.astype(np.int64),
        label,
        item_finding,
        tuple(str(f) for f in findings),
    )


def parse_fused_states(values: pd.Series, *, where: str) -> np.ndarray:
    """The states of ``values`` as codes ``0, 1, 2`` (names or codes, parsed by :func:`cxreval.schema.parse_states`).

    Raises
    ------
    SchemaError
        A value outside the states, a missing state or ``not_mentioned`` (naming the row): fusion needs one of
        negative / uncertain / positive per annotation (:func:`~cxreval.fusion.annotations_from_labels` drops
        or maps the others by the label policy).
    """
    codes = parse_states(values, where=where, column=STATE).to_numpy(dtype=np.int64, na_value=-2)
    if (i := first_true(codes < 0)) is not None:  # missing (-2) or not mentioned (-1)
        raise SchemaError(
            f"State {values.iloc[i]!r} outside the fused states in {where}, row {i}, column "
            f"{STATE!r}; expected 0 (negative), 1 (uncertain) or 2 (positive). Drop missing or "
            f"not-mentioned labels before fusing."
        )
    return codes


def label_series(items: pd.Index, labels: np.ndarray) -> pd.Series:
    """The fused state of every item (an estimator's ``labels_``), named ``state``."""
    return pd.Series(labels.astype(np.int64), index=items.copy(), name=STATE)


def proba_frame(items: pd.Index, proba: np.ndarray) -> pd.DataFrame:
    """The probability of every state for every item (an estimator's ``probas_``), columns ``[0, 1, 2]``."""
    return pd.DataFrame(proba, index=items.copy(), columns=pd.Index(list(STATES), name=STATE))


def check_float(
    value: object,
    *,
    name: str,
    func: str,
    minimum: float = 0.0,
    strict: bool = False,
    allow_none: bool = False,
) -> float | None:
    """A float hyper-parameter ``>= minimum`` (``> minimum`` when ``strict``; ``None`` allowed with
    ``allow_none``), else :class:`~cxreval.exceptions.InvalidParameterError` naming it and ``func``."""
    if value is None and allow_none:
        return None
    ok = not isinstance(value, bool) and isinstance(value, (int, float, np.integer, np.floating))
    if not ok or not (float(value) > minimum if strict else float(value) >= minimum):  # type: ignore[arg-type]
        what = f"a float {'>' if strict else '>='} {minimum:g}"
        raise InvalidParameterError(
            f"The {name!r} parameter of {func} must be {'None or ' if allow_none else ''}"
            f"{what}. Got {value!r} instead."
        )
    return float(value)  # type: ignore[arg-type]


class BaseFusion:
    """Base class of the unsupervised fusion estimators (crowd-kit's API).

    Subclasses implement ``_fit(ann)`` setting ``labels_`` (a Series of states indexed like the items)
    and ``probas_`` (a DataFrame items × ``[0, 1, 2]``).
    """

    name: str = ""

    def fit(self, data: pd.DataFrame) -> BaseFusion:
        """Fit to an annotation table (columns ``study_id, source, state`` [, ``finding``]); return self."""
        ann = encode_annotations(data, func=f"{type(self).__name__}.fit")
        self._fit(ann)
        return self

    def fit_predict(self, data: pd.DataFrame) -> pd.Series:
        """Fit and return the fused state of every item (``labels_``)."""
        return self.fit(data).labels_  # type: ignore[attr-defined]

    def fit_predict_proba(self, data: pd.DataFrame) -> pd.DataFrame:
        """Fit and return the probability of each state for every item (``probas_``)."""
        return self.fit(data).probas_  # type: ignore[attr-defined]

    def _fit(self, ann: Annotations) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def __repr__(self) -> str:
        params = {k: v for k, v in vars(self).items() if not k.endswith("_") and not k.startswith("_")}
        return f"{type(self).__name__}({', '.join(f'{k}={v!r}' for k, v in params.items())})"


FIT_INFO_COLUMNS: tuple[str, ...] = (
    "finding",
    "n_items",
    "n_annotations",
    "n_patterns",
    "n_iter",
    "log_likelihood",
    "converged",
    "final_change",
)
"""Columns of ``fit_info_`` of a :class:`GroupedFusion` (one row per fitted group)."""
_FIT_INFO_TYPES = (
    ("n_annotations", int),
    ("n_patterns", int),
    ("n_iter", int),
    ("log_likelihood", float),
    ("converged", bool),
    ("final_change", float),
)

GroupMap = Callable[
    ["GroupedFusion", Annotations, list[tuple[str, np.ndarray]], list[object]], list[dict[str, np.ndarray]]
]
"""``(estimator, ann, groups, extras) -> parts``: fits every group, e.g. on an executor (:func:`fuse_labels`)."""


class GroupedFusion(BaseFusion):
    """Base class of the estimators fitted independently per group of items (Dawid–Skene, MACE).

    ``_fit`` splits the items into groups (:func:`pooling_groups`: one per finding, or all), draws each
    group's random numbers in group order (``_draws``; the same stream whatever runs the groups), fits every
    group with ``_fit_group`` (a pure function of the parameters, the group's encoded arrays and its draws,
    so a worker process gives the same bytes) and combines the parts with ``_assemble``.
    """

    pooling: str = "finding"

    def _check_params(self) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def _draws(self, groups: list[tuple[str, np.ndarray]], subs: list[Annotations]) -> list[object]:
        """Random numbers each group needs, drawn in group order (default: none)."""
        return [None] * len(groups)

    def _fit_group(
        self, g: GroupArrays, extra: object = None
    ) -> dict[str, np.ndarray]:  # pragma: no cover - abstract
        raise NotImplementedError

    def _group_tables(
        self, ann: Annotations, groups: list[tuple[str, np.ndarray]], parts: list[dict[str, np.ndarray]]
    ) -> None:  # pragma: no cover - abstract
        """Set the method's own fitted tables (confusion matrices, competences) from the parts."""
        raise NotImplementedError

    def _assemble(
        self, ann: Annotations, groups: list[tuple[str, np.ndarray]], parts: list[dict[str, np.ndarray]]
    ) -> None:
        """Combine the groups' parts: ``labels_``, ``probas_``, ``fit_info_`` and the method's tables.

        Every part holds ``classes`` (the states used), ``proba`` (items × classes), ``n_annotations``,
        ``n_patterns``, ``n_iter``, ``log_likelihood``, ``converged`` and ``final_change``.
        """
        proba = np.zeros((ann.n_items, N_STATES))
        info = []
        for (name, items), part in zip(groups, parts):
            proba[np.ix_(items, part["classes"])] = part["proba"]
            info.append((name, len(items), *(t(part[k]) for k, t in _FIT_INFO_TYPES)))
        self._set_labels(ann, proba)
        self._group_tables(ann, groups, parts)
        self.fit_info_ = pd.DataFrame(info, columns=list(FIT_INFO_COLUMNS))

    def _set_labels(self, ann: Annotations, proba: np.ndarray) -> None:
        self.labels_ = label_series(ann.items, proba.argmax(axis=1))
        self.probas_ = proba_frame(ann.items, proba)

    def _fit(self, ann: Annotations, *, group_map: GroupMap | None = None) -> None:
        self._check_params()
        groups = pooling_groups(ann, self.pooling)
        subs = [ann.subset(items) for _, items in groups]
        extras = self._draws(groups, subs)
        if group_map is None:
            parts = [
                self._fit_group(GroupArrays(s.item, s.reader, s.label, s.n_items, s.n_readers), x)
                for s, x in zip(subs, extras)
            ]
        else:
            del subs
            parts = group_map(self, ann, groups, extras)
        self._assemble(ann, groups, parts)


_REGISTRY: dict[str, Callable[..., object]] = {}


def register_fusion(name: str) -> Callable[[type], type]:
    """Class decorator registering a fusion estimator under ``name`` (e.g. ``'ds'``)."""

    def deco(cls: type) -> type:
        old = _REGISTRY.get(name)
        if old is not None and getattr(old, "__qualname__", None) != cls.__qualname__:
            raise ValueError(f"fusion method {name!r} is already registered to {old!r}")
        _REGISTRY[name] = cls
        cls.name = name  # type: ignore[attr-defined]
        return cls

    return deco


def get_fusion(name: str) -> Callable[..., object]:
    """The estimator class registered under ``name``.

    Raises
    ------
    UnknownNameError
        For an unknown name (also a ``KeyError``), with a did-you-mean hint.
    """
    if name not in _REGISTRY:
        hint = did_you_mean(str(name), _REGISTRY, n=2)
        raise UnknownNameError(f"Unknown fusion method {name!r}; available: {sorted(_REGISTRY)}.{hint}")
    return _REGISTRY[name]


def list_fusion() -> list[str]:
    """Names of the registered fusion methods, sorted."""
    return sorted(_REGISTRY)


def pooling_groups(ann: Annotations, pooling: str) -> list[tuple[str, np.ndarray]]:
    """``(name, sorted item codes)`` of each group fitted separately: one per finding, or ``("*", all items)``
    with ``pooling="joint"`` (Dawid-Skene and MACE)."""
    if ann.finding is None or pooling == "joint":
        return [("*", np.arange(ann.n_items))]
    return [
        (f, np.flatnonzero(ann.finding == c)) for c, f in enumerate(ann.findings) if (ann.finding == c).any()
    ]
