"""Shared machinery of the label-fusion estimators: input validation and encoding, the estimator base
class, the method registry and :func:`fuse_label_table` (fusion on the long label table).

The fusion input (the *annotation table*) is long, one row per ``(study_id, reader)`` and, optionally,
``finding``:

=========  ===============================================================
study_id   str, the item a consensus label is derived for
reader     str, who gave the label (a label source, a radiologist id)
finding    str, optional; when present, items are ``(study_id, finding)``
label      int, a :class:`~cxreval.labels.LabelState`: ``NEG=0``, ``UNC=1``, ``POS=2``
=========  ===============================================================

Every estimator encodes studies, findings and readers by their *sorted* unique values and sorts the
annotations by ``(item, reader)`` before computing anything, so the output does not depend on the
order of the input rows (crowd-kit 1.4.2's MACE does: its reader parameters follow row order).
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from .._validation import did_you_mean
from ..exceptions import InvalidParameterError, SchemaError, UnknownNameError

__all__ = [
    "pooling_groups",
    "ANNOTATION_COLUMNS",
    "STATES",
    "N_STATES",
    "Annotations",
    "BaseFusion",
    "GroupedFusion",
    "register_fusion",
    "get_fusion",
    "list_fusion",
    "encode_annotations",
    "FusionResult",
    "annotations_from_labels",
    "fuse_label_table",
]

ANNOTATION_COLUMNS: tuple[str, ...] = ("study_id", "reader", "label")
STATES: tuple[int, ...] = (0, 1, 2)
"""The label states fused: ``NEG=0``, ``UNC=1``, ``POS=2`` (:class:`cxreval.labels.LabelState`)."""
N_STATES = 3


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
        return Annotations(self.items[items], self.readers, pos[self.item[keep]], self.reader[keep],
                           self.label[keep], None if self.finding is None else self.finding[items], self.findings)


def encode_annotations(data: object, *, func: str, allow_finding: bool = True) -> Annotations:
    """Validate an annotation table and encode it (see the module docstring).

    Raises
    ------
    SchemaError
        Not a DataFrame; a missing column; a missing id or label; a label outside ``{0, 1, 2}``
        (names ``negative``/``uncertain``/``positive`` are accepted); one reader labelling one item twice.
    """
    where = f"the annotation table passed to {func}"
    if not isinstance(data, pd.DataFrame):
        raise SchemaError(f"{where} must be a pandas DataFrame with columns {list(ANNOTATION_COLUMNS)} "
                          f"(and optionally 'finding'). Got {type(data).__name__} instead.")
    missing = [c for c in ANNOTATION_COLUMNS if c not in data.columns]
    if missing:
        raise SchemaError(f"{where} is missing required column(s) {missing}; it has {list(data.columns)}.")
    if len(data) == 0:
        raise SchemaError(f"{where} is empty; at least one annotation is needed.")
    has_finding = allow_finding and "finding" in data.columns
    id_cols = ["study_id", "reader"] + (["finding"] if has_finding else [])
    for c in id_cols:
        na = data[c].isna().to_numpy()
        if na.any():
            i = int(np.flatnonzero(na)[0])
            raise SchemaError(f"Missing {c!r} in {where}, row {i}.")
    label = _parse_labels(data["label"], where=where)
    # factorize the string columns as they are (Arrow-backed strings stay in Arrow): ~2x faster at 5M rows
    reader, readers = pd.factorize(data["reader"].astype(str), sort=True)
    study_code, studies = pd.factorize(data["study_id"].astype(str), sort=True)
    if has_finding:
        fcode, findings = pd.factorize(data["finding"].astype(str), sort=True)
        pair = study_code.astype(np.int64) * len(findings) + fcode
        pairs, item = np.unique(pair, return_inverse=True)
        items = pd.MultiIndex.from_arrays([np.asarray(studies, dtype=object)[pairs // len(findings)],
                                           np.asarray(findings, dtype=object)[pairs % len(findings)]],
                                          names=["study_id", "finding"])
        item_finding = pairs % len(findings)
    else:
        item = study_code
        items = pd.Index(np.asarray(studies, dtype=object), name="study_id")
        findings, item_finding = np.array([], dtype=str), None
    order = np.argsort(item.astype(np.int64) * len(readers) + reader, kind="stable")  # == lexsort((reader, item))
    item, reader, label = item[order], reader[order], label[order]
    dup = (np.diff(item) == 0) & (np.diff(reader) == 0)
    if dup.any():
        k = int(np.flatnonzero(dup)[0])
        rows = np.sort(order[k:k + 2]).tolist()
        raise SchemaError(f"Reader {str(readers[reader[k]])!r} labels item {items[item[k]]!r} more than once in "
                          f"{where} (rows {rows}); each reader gives at most one label per item.")
    return Annotations(items, tuple(str(r) for r in readers), item.astype(np.int64), reader.astype(np.int64),
                       label, item_finding, tuple(str(f) for f in findings))


_NAMES = {"negative": 0, "uncertain": 1, "positive": 2}


def _parse_labels(values: pd.Series, *, where: str) -> np.ndarray:
    v = values.reset_index(drop=True)
    if v.dtype == object or pd.api.types.is_string_dtype(v):
        v = v.map(lambda x: _NAMES.get(x.strip().lower(), x) if isinstance(x, str) else x)
    num = pd.to_numeric(v, errors="coerce").to_numpy(dtype=float, na_value=np.nan)
    ok = np.isin(num, STATES)
    if not ok.all():
        i = int(np.flatnonzero(~ok)[0])
        raise SchemaError(f"Label {values.iloc[i]!r} outside the states in {where}, row {i}, column 'label'; "
                          f"expected 0 (negative), 1 (uncertain) or 2 (positive). Drop missing or "
                          f"not-mentioned labels before fusing.")
    return num.astype(np.int64)


def _label_series(items: pd.Index, labels: np.ndarray) -> pd.Series:
    return pd.Series(labels.astype(np.int64), index=items.copy(), name="label")


def _proba_frame(items: pd.Index, proba: np.ndarray) -> pd.DataFrame:
    return pd.DataFrame(proba, index=items.copy(), columns=pd.Index(list(STATES), name="label"))


class BaseFusion:
    """Base class of the unsupervised fusion estimators (crowd-kit's API).

    Subclasses implement ``_fit(ann)`` setting ``labels_`` (a Series of states indexed like the items)
    and ``probas_`` (a DataFrame items × ``[0, 1, 2]``).
    """

    name: str = ""

    def fit(self, data: pd.DataFrame) -> BaseFusion:
        """Fit to an annotation table (columns ``study_id, reader, label`` [, ``finding``]); return self."""
        ann = encode_annotations(data, func=f"{type(self).__name__}.fit")
        self._fit(ann)
        return self

    def fit_predict(self, data: pd.DataFrame) -> pd.Series:
        """Fit and return the fused state of every item (``labels_``)."""
        return self.fit(data).labels_  # type: ignore[attr-defined,no-any-return]

    def fit_predict_proba(self, data: pd.DataFrame) -> pd.DataFrame:
        """Fit and return the probability of each state for every item (``probas_``)."""
        return self.fit(data).probas_  # type: ignore[attr-defined,no-any-return]

    def _fit(self, ann: Annotations) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def __repr__(self) -> str:
        params = {k: v for k, v in vars(self).items() if not k.endswith("_") and not k.startswith("_")}
        return f"{type(self).__name__}({', '.join(f'{k}={v!r}' for k, v in params.items())})"


GroupMap = Callable[["GroupedFusion", Annotations, list[tuple[str, np.ndarray]], list[object]],
                    list[dict[str, np.ndarray]]]
"""``(estimator, ann, groups, extras) -> parts``: fits every group, e.g. on an executor (:func:`fuse_label_table`)."""


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

    def _fit_group(self, item: np.ndarray, reader: np.ndarray, label: np.ndarray, n_items: int, n_readers: int,
                   extra: object = None) -> dict[str, np.ndarray]:  # pragma: no cover - abstract
        raise NotImplementedError

    def _assemble(self, ann: Annotations, groups: list[tuple[str, np.ndarray]],
                  parts: list[dict[str, np.ndarray]]) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def _set_labels(self, ann: Annotations, proba: np.ndarray) -> None:
        self.labels_ = _label_series(ann.items, proba.argmax(axis=1))
        self.probas_ = _proba_frame(ann.items, proba)

    def _fit(self, ann: Annotations, *, group_map: GroupMap | None = None) -> None:
        self._check_params()
        groups = pooling_groups(ann, self.pooling)
        subs = [ann.subset(items) for _, items in groups]
        extras = self._draws(groups, subs)
        if group_map is None:
            parts = [self._fit_group(s.item, s.reader, s.label, s.n_items, s.n_readers, x)
                     for s, x in zip(subs, extras)]
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


def _check_readers(table: pd.DataFrame, readers: Sequence[str], *, where: str) -> list[str]:
    readers = [str(r) for r in readers]
    if len(readers) < 2:
        raise InvalidParameterError(f"Fusion needs at least two readers; got {readers}.")
    if len(set(readers)) != len(readers):
        raise InvalidParameterError(f"Readers {readers} repeat a name; give each reader once.")
    present = set(table["source"].astype(str).unique())
    absent = [r for r in readers if r not in present]
    if absent:
        raise SchemaError(f"Reader(s) {absent} are not sources of {where}; sources present: {sorted(present)}.")
    return readers


@dataclass(frozen=True)
class FusionResult:
    """Fused labels of several methods on a long label table, with the fitted estimators.

    Attributes
    ----------
    labels : pandas.DataFrame
        Long label table (``study_id, patient_id, finding, source, state``) of the fused labels only,
        one source ``fused_<method>`` per method.
    estimators : dict of str to object
        The fitted estimator of each method (per-reader estimates live on them: ``errors_``,
        ``competence_``).
    readers : tuple of str
        The sources fused.
    n_items : int
        (study, finding) items fused.
    n_dropped : dict of str to int
        Reader labels left out, by reason (``missing``, ``not_mentioned``).
    n_items_partial : int
        Items labelled by fewer readers than the most-read item (fused from the readers present).
    readers_per_item : dict of int to int
        Number of items by number of readers who labelled them (e.g. ``{3: 225000}`` on VinDr-CXR,
        where each image has 3 of the 17 readers).
    warnings : tuple of str
        ``finding: method: ...`` for every state a method fused far more often than any reader uses it
        (:func:`cxreval.fusion.diagnostics.overfused_states`); empty when none.
    convergence : pandas.DataFrame or None
        The stopping rule's outcome of every iterative fit: ``method, finding, n_items, n_patterns, n_iter,
        converged, final_change`` (the estimators' ``fit_info_``); None when no method iterates.
    """

    labels: pd.DataFrame
    estimators: dict[str, object]
    readers: tuple[str, ...]
    n_items: int
    n_dropped: dict[str, int]
    n_items_partial: int
    readers_per_item: dict[int, int]
    warnings: tuple[str, ...] = ()
    convergence: pd.DataFrame | None = None

    def to_dict(self) -> dict[str, object]:
        conv = None if self.convergence is None else [
            {k: (None if isinstance(v, float) and not np.isfinite(v) else v) for k, v in r.items()}
            for r in self.convergence.to_dict(orient="records")]
        return {"methods": list(self.estimators), "readers": list(self.readers), "n_items": self.n_items,
                "n_dropped": dict(self.n_dropped), "n_items_partial": self.n_items_partial,
                "readers_per_item": {str(k): v for k, v in self.readers_per_item.items()},
                "n_labels": int(len(self.labels)), "warnings": list(self.warnings), "convergence": conv}


def annotations_from_labels(labels: pd.DataFrame, readers: Sequence[str], *, findings: Sequence[str] | None = None,
                            not_mentioned: str = "negative", where: str = "label table"
                            ) -> tuple[pd.DataFrame, dict[str, int]]:
    """The annotation table (``study_id, finding, reader, label``) of ``readers`` in a long label table.

    Missing states are dropped; ``NOT_MENTIONED`` becomes negative (``not_mentioned='negative'``, CheXpert
    practice) or is dropped (``'exclude'``). Returns the table and the number of labels dropped per reason.
    """
    from .._validation import check_choice

    check_choice(not_mentioned, ("negative", "exclude"), name="not_mentioned", func="fuse_label_table")
    readers = _check_readers(labels, readers, where=where)
    sub = labels[labels["source"].isin(readers)]
    if findings is not None:
        absent = [f for f in findings if f not in set(sub["finding"])]
        if absent:
            raise SchemaError(f"Finding(s) {absent} are not labelled by the readers {readers} in {where}.")
        sub = sub[sub["finding"].isin(list(findings))]
    state = sub["state"].astype("Int8")
    missing = state.isna().to_numpy()
    nm = (state == -1).fillna(False).to_numpy()
    dropped = {"missing": int(missing.sum())}
    if not_mentioned == "exclude":
        dropped["not_mentioned"] = int(nm.sum())
        keep = ~missing & ~nm
    else:
        keep = ~missing
    lab = state.to_numpy(dtype=float, na_value=np.nan)[keep]
    lab[lab == -1] = 0
    ann = pd.DataFrame({"study_id": sub["study_id"].to_numpy()[keep], "finding": sub["finding"].to_numpy()[keep],
                        "reader": sub["source"].to_numpy()[keep], "label": lab.astype(np.int64)})
    return ann, dropped


def fuse_label_table(labels: pd.DataFrame, readers: Sequence[str], methods: Sequence[str], *,
                     adjudicated: str | None = None, findings: Sequence[str] | None = None,
                     not_mentioned: str = "negative", rng: object = 0,
                     params: dict[str, dict[str, object]] | None = None,
                     fitted: dict[str, object] | None = None, executor: object = None,
                     spill_dir: str | os.PathLike[str] | None = None) -> FusionResult:
    """Fuse the labels of ``readers`` in a long label table with each of ``methods``.

    Parameters
    ----------
    labels : pandas.DataFrame
        Long label table (``study_id, [patient_id,] finding, source, state``).
    readers : sequence of str
        The sources to fuse (at least two).
    methods : sequence of str
        Registered method names (:func:`list_fusion`), e.g. ``['mv', 'or', 'and', 'ds', 'mace']``.
    adjudicated : str, optional
        A reference source; required by the supervised methods (``nn``, ``nn_ps``), which are trained on it.
    findings : sequence of str, optional
        Findings to fuse (default: every finding the readers label): canonical names, aliases
        (``Pleural effusion``) or vocabulary names (``xqa_selected``), as for :func:`~cxreval.agreement.agreement_table`.
    not_mentioned : {'negative', 'exclude'}, default='negative'
        What a reader's ``NOT_MENTIONED`` becomes.
    rng : None, int or Generator, default=0
        Seed of the randomised methods (one generator, used in method order).
    params : dict, optional
        ``{method: {parameter: value}}`` passed to the estimators' constructors.
    fitted : dict, optional
        ``{method: estimator}`` of already fitted supervised models (e.g. :func:`load_neural_fusion`) applied
        with ``predict`` instead of being trained (a model trained on one dataset applied to another); their
        methods must not also be in ``methods``.
    executor : str or object, optional
        An executor spec (``'process:2'``, ``'dask://HOST:PORT'``; opened and closed here) or an open executor
        (``cxreval.executor.open_executor(spec)``, anything with ``map(func, items)`` returning results in
        order) that fits the groups of Dawid-Skene and MACE (one per finding) in parallel; the other methods
        run here. Results are identical to the serial fit byte for byte.
    spill_dir : path, optional
        Folder for the per-group arrays the executor's workers read (:mod:`cxreval.fusion._spill`; default a
        temporary folder, removed at the end). On a multi-machine cluster it must be on storage every worker
        sees under the same path.

    Returns
    -------
    res : FusionResult

    Raises
    ------
    SchemaError
        A reader or the adjudicated source absent from the table; a finding not labelled.
    InvalidParameterError
        Fewer than two readers; an unknown method; a supervised method without ``adjudicated``.
    """
    from .._validation import normalize_rng
    from ..agreement.pairs import expand_findings

    methods = list(dict.fromkeys(methods))
    unknown = [m for m in methods if m not in _REGISTRY]
    if unknown:
        hint = "".join(did_you_mean(str(m), _REGISTRY, n=2) for m in unknown)
        raise UnknownNameError(f"Unknown fusion method(s) {unknown}; available: {list_fusion()}.{hint}")
    fitted = dict(fitted or {})
    both = [m for m in fitted if m in methods]
    if both:
        raise InvalidParameterError(f"Fusion method(s) {both} are given both as fitted models and as methods to "
                                    f"train; the fused sources would collide (fused_{both[0]}).")
    for m, est in fitted.items():
        if not callable(getattr(est, "predict", None)) or not hasattr(est, "readers_"):
            raise InvalidParameterError(f"The fitted model given for {m!r} is not a fitted estimator with predict "
                                        f"(got {type(est).__name__}).")
    if not methods and not fitted:
        raise InvalidParameterError(f"No fusion method given; available: {list_fusion()}.")
    ann, dropped = annotations_from_labels(labels, readers, findings=expand_findings(findings),
                                           not_mentioned=not_mentioned)
    if ann.empty:
        raise SchemaError(f"The readers {list(readers)} have no label in the states negative/uncertain/positive.")
    y = None
    if adjudicated is not None:
        if adjudicated not in set(labels["source"].astype(str)):
            raise SchemaError(f"Adjudicated source {adjudicated!r} is not in the label table; sources present: "
                              f"{sorted(labels['source'].astype(str).unique())}.")
        ref = labels[(labels["source"] == adjudicated)]
        st = ref["state"].astype("Int8")
        ok = st.notna().to_numpy() & (st != -1).fillna(False).to_numpy()
        y = pd.DataFrame({"study_id": ref["study_id"].to_numpy()[ok], "finding": ref["finding"].to_numpy()[ok],
                          "label": st.to_numpy(dtype=np.int64, na_value=0)[ok]})

    for m in methods:
        if getattr(_REGISTRY[m], "supervised", False) and y is None:
            raise InvalidParameterError(f"Fusion method {m!r} is supervised: pass the adjudicated source "
                                        f"(--adjudicated) it is trained on.")
    gen = normalize_rng(rng)
    params = params or {}
    estimators: dict[str, object] = {}
    fused: list[pd.DataFrame] = []
    warnings: list[str] = []
    by_finding = {f: g for f, g in ann.groupby("finding", sort=True)}
    enc = encode_annotations(ann, func="fuse_label_table")  # once for every unsupervised method
    with contextlib.ExitStack() as stack:
        group_map = None
        if isinstance(executor, str):  # a spec: opened here, closed at the end
            from ..executor import open_executor

            executor = None if executor == "serial" else stack.enter_context(open_executor(executor))
        if executor is not None:
            from ._spill import executor_group_map

            if spill_dir is None:
                spill_dir = stack.enter_context(tempfile.TemporaryDirectory(prefix="cxreval-fuse-spill-"))
            group_map = executor_group_map(executor, Path(spill_dir))
        for m in methods + list(fitted):
            if m in fitted:
                est = fitted[m]
                lab = est.predict(ann)  # type: ignore[attr-defined]
            else:
                cls = _REGISTRY[m]
                kw = dict(params.get(m, {}))
                if "rng" in _init_params(cls):
                    kw.setdefault("rng", gen)
                est = cls(**kw)
                if getattr(cls, "supervised", False):
                    lab = est.fit_predict(ann, y)  # type: ignore[attr-defined]
                elif isinstance(est, GroupedFusion):
                    est._fit(enc, group_map=group_map)
                    lab = est.labels_  # type: ignore[attr-defined]
                else:
                    est._fit(enc)  # type: ignore[attr-defined]
                    lab = est.labels_  # type: ignore[attr-defined]
            estimators[m] = est
            _collect(m, est, lab, by_finding, fused, warnings)
    del enc
    out = pd.concat(fused, ignore_index=True)
    if "patient_id" in labels.columns:
        pmap = labels.drop_duplicates("study_id").set_index("study_id")["patient_id"]
        out.insert(1, "patient_id", pmap.reindex(out["study_id"]).to_numpy())
    else:
        out.insert(1, "patient_id", pd.NA)
    out["state"] = pd.array(out["state"].to_numpy(), dtype="Int8")
    per_item = ann.groupby(["study_id", "finding"]).size()
    n_partial = int((per_item < per_item.max()).sum())
    hist = {int(k): int(v) for k, v in per_item.value_counts().sort_index().items()}  # type: ignore[call-overload]
    infos = [getattr(e, "fit_info_", None) for e in estimators.values()]
    conv = None
    if any(i is not None for i in infos):
        cols = ["method", "finding", "n_items", "n_patterns", "n_iter", "converged", "final_change"]
        conv = pd.concat([i.assign(method=m)[cols] for m, i in zip(estimators, infos) if i is not None],
                         ignore_index=True)
    return FusionResult(out, estimators, tuple(str(r) for r in readers), int(len(per_item)), dropped, n_partial,
                        hist, tuple(warnings), conv)


def _collect(m: str, est: object, lab: pd.Series, by_finding: dict[str, pd.DataFrame], fused: list[pd.DataFrame],
             warnings: list[str]) -> None:
    """Append method ``m``'s fused labels (long) to ``fused`` and its over-fusion warnings to ``warnings``."""
    from .diagnostics import overfused_states

    fin = lab.index.get_level_values("finding")
    for f, g in by_finding.items():
        warnings += [f"{f}: {w}" for w in overfused_states(g, lab[fin == f], method=m)]
    fused.append(pd.DataFrame({"study_id": lab.index.get_level_values("study_id"), "finding": fin,
                               "source": f"fused_{m}", "state": lab.to_numpy()}))


def _init_params(cls: object) -> set[str]:
    import inspect

    return set(inspect.signature(cls.__init__).parameters)  # type: ignore[misc]


def pooling_groups(ann: Annotations, pooling: str) -> list[tuple[str, np.ndarray]]:
    """``(name, sorted item codes)`` of each group fitted separately: one per finding, or ``("*", all items)``
    with ``pooling="joint"`` (Dawid-Skene and MACE)."""
    if ann.finding is None or pooling == "joint":
        return [("*", np.arange(ann.n_items))]
    return [(f, np.flatnonzero(ann.finding == c)) for c, f in enumerate(ann.findings)
            if (ann.finding == c).any()]
