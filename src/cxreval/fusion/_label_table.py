"""Fusion on a long label table: the readers' labels of every finding fused by several methods into new sources
``fused_<method>`` (:func:`fuse_labels`), returning a :class:`~cxreval.fusion.FusionResult`, which owns the
files written. Scoring the fused sources against a reference source is the job of ``cxreval fuse``,
:func:`cxreval.jobs.fuse_and_compare`.

Examples
--------
>>> import pandas as pd
>>> t = pd.DataFrame({"study_id": ["s1", "s2", "s3"] * 3, "finding": "Edema",
...                   "source": ["A"] * 3 + ["B"] * 3 + ["CR"] * 3,
...                   "state": ["positive", "negative", "uncertain", "positive", "negative", "negative",
...                             "positive", "negative", "negative"]})
>>> res = fuse_labels(t, ["A", "B"], ["mv", "and"])
>>> res.labels.query("source == 'fused_and'")["state"].tolist()
[2, 0, 0]
"""

from __future__ import annotations

import contextlib
import inspect
import os
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

import numpy as np
import pandas as pd

from .._typing import PathLike, RNGLike
from .._validation import did_you_mean, normalize_rng
from ..exceptions import InvalidParameterError, SchemaError, UnknownNameError
from ..labels import validate_label_table
from ..labels._findings import expand_findings
from ..schema import FINDING, PATIENT_ID, SOURCE, STATE, STUDY_ID, LabelState
from ..schema._columns import P_POSITIVE
from ..schema._states import LabelPolicy, resolve_not_mentioned
from ._base import _REGISTRY, GroupedFusion, encode_annotations, list_fusion
from ._result import FusionResult, convergence_table
from .diagnostics import overfused_states

if TYPE_CHECKING:
    from ..executor import ExecutorLike

__all__ = ["AnnotationTable", "annotations_from_labels", "fuse_labels"]


def _check_readers(table: pd.DataFrame, readers: Sequence[str], *, where: str) -> list[str]:
    readers = [str(r) for r in readers]
    if len(readers) < 2:
        raise InvalidParameterError(f"Fusion needs at least two readers; got {readers}.")
    if len(set(readers)) != len(readers):
        raise InvalidParameterError(f"Readers {readers} repeat a name; give each reader once.")
    present = set(table[SOURCE].astype(str).unique())
    absent = [r for r in readers if r not in present]
    if absent:
        raise SchemaError(
            f"Reader(s) {absent} are not sources of {where}; sources present: {sorted(present)}."
        )
    return readers


class AnnotationTable(NamedTuple):
    """What :func:`annotations_from_labels` returns: the annotation table and the number of labels dropped per
    reason."""

    table: pd.DataFrame
    dropped: dict[str, int]


def annotations_from_labels(
    labels: pd.DataFrame,
    readers: Sequence[str],
    *,
    findings: Sequence[str] | None = None,
    not_mentioned: str | LabelPolicy = "negative",
    where: str = "label table",
) -> AnnotationTable:
    """The annotation table (``study_id, finding, source, state``; states 0, 1, 2) of ``readers`` in a long
    label table.

    Missing states are dropped; ``NOT_MENTIONED`` becomes negative (``not_mentioned='negative'``, CheXpert
    practice) or is dropped (``'exclude'``). Returns the table and the number of labels dropped per reason.
    ``labels`` is checked as :func:`~cxreval.labels.validate_label_table` checks it (states as names or codes).
    """
    table, dropped = _annotations(
        validate_label_table(labels, where=where, require_patient=False),
        readers,
        findings=findings,
        not_mentioned=not_mentioned,
        where=where,
    )
    return AnnotationTable(table, dropped)


def _annotations(
    labels: pd.DataFrame,
    readers: Sequence[str],
    *,
    findings: Sequence[str] | None,
    not_mentioned: str | LabelPolicy,
    where: str = "label table",
) -> tuple[pd.DataFrame, dict[str, int]]:
    """:func:`annotations_from_labels` of a validated label table."""
    not_mentioned = LabelPolicy.of(not_mentioned=not_mentioned, func="fuse_labels").not_mentioned
    readers = _check_readers(labels, readers, where=where)
    sub = labels[labels[SOURCE].isin(readers)]
    if findings is not None:
        absent = [f for f in findings if f not in set(sub[FINDING])]
        if absent:
            raise SchemaError(f"Finding(s) {absent} are not labelled by the readers {readers} in {where}.")
        sub = sub[sub[FINDING].isin(list(findings))]
    codes = sub[STATE].astype("Int8").to_numpy(dtype=float, na_value=np.nan)
    missing = np.isnan(codes)
    codes, nm = resolve_not_mentioned(codes, not_mentioned=not_mentioned, func="fuse_labels")
    dropped = {"missing": int(missing.sum())}
    if not_mentioned == "exclude":
        dropped["not_mentioned"] = int(nm.sum())
        keep = ~missing & ~nm
    else:
        keep = ~missing
    ann = pd.DataFrame(
        {
            STUDY_ID: sub[STUDY_ID].to_numpy()[keep],
            FINDING: sub[FINDING].to_numpy()[keep],
            SOURCE: sub[SOURCE].to_numpy()[keep],
            STATE: codes[keep].astype(np.int64),
        }
    )
    return ann, dropped


def fuse_labels(
    labels: pd.DataFrame,
    readers: Sequence[str],
    methods: Sequence[str],
    *,
    adjudicated: str | None = None,
    findings: Sequence[str] | None = None,
    not_mentioned: str | LabelPolicy = "negative",
    rng: RNGLike = None,
    params: dict[str, dict[str, object]] | None = None,
    fitted: dict[str, object] | None = None,
    executor: ExecutorLike = None,
    spill_dir: PathLike | None = None,
) -> FusionResult:
    """Fuse the labels of ``readers`` in a long label table with each of ``methods``.

    Parameters
    ----------
    labels : pandas.DataFrame
        Long label table (``study_id, [patient_id,] finding, source, state``; states as names or codes),
        checked as :func:`~cxreval.labels.validate_label_table` checks it.
    readers : sequence of str
        The sources to fuse (at least two).
    methods : sequence of str
        Registered method names (:func:`list_fusion`), e.g. ``['mv', 'or', 'and', 'ds', 'mace']``.
    adjudicated : str, optional
        A reference source; required by the supervised methods (``nn``, ``nn_ps``), which are trained on it.
    findings : sequence of str, optional
        Findings to fuse (default: every finding the readers label): canonical names, aliases
        (``Pleural effusion``) or vocabulary names (``xqa_selected``), as for
        :func:`~cxreval.agreement.compute_agreement`.
    not_mentioned : {'negative', 'exclude'} or LabelPolicy, default='negative'
        What a reader's ``NOT_MENTIONED`` becomes (a :class:`~cxreval.schema.LabelPolicy` gives its
        ``not_mentioned``).
    rng : None, int or Generator, default=None
        Seed of the randomised methods (one generator, used in method order). ``None`` (the default) draws
        fresh entropy, a different result on each call; an int reproduces one (``cxreval fuse --seed`` passes
        0 by default).
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
        run here, and so does everything with an executor in this process (``in_process``). Results are
        identical to the serial fit byte for byte.
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
        ``labels`` not a valid long label table (a missing column, an unknown state or finding, a duplicate
        row: the message names the row, column and value); a reader or the adjudicated source absent from the
        table; a finding not labelled.
    InvalidParameterError
        Fewer than two readers; an unknown method; a supervised method without ``adjudicated``.
    """
    return _fuse(
        validate_label_table(labels, require_patient=False),
        readers,
        methods,
        adjudicated=adjudicated,
        findings=findings,
        not_mentioned=not_mentioned,
        rng=rng,
        params=params,
        fitted=fitted,
        executor=executor,
        spill_dir=spill_dir,
    )


def _fuse(
    labels: pd.DataFrame,
    readers: Sequence[str],
    methods: Sequence[str],
    *,
    adjudicated: str | None,
    findings: Sequence[str] | str | None,
    not_mentioned: str | LabelPolicy,
    rng: RNGLike,
    params: dict[str, dict[str, object]] | None,
    fitted: dict[str, object] | None,
    executor: ExecutorLike,
    spill_dir: str | os.PathLike[str] | None,
) -> FusionResult:
    """:func:`fuse_labels` on a validated label table."""
    not_mentioned = LabelPolicy.of(not_mentioned=not_mentioned, func="fuse_labels").not_mentioned
    methods = list(dict.fromkeys(methods))
    unknown = [m for m in methods if m not in _REGISTRY]
    if unknown:
        hint = "".join(did_you_mean(str(m), _REGISTRY, n=2) for m in unknown)
        raise UnknownNameError(f"Unknown fusion method(s) {unknown}; available: {list_fusion()}.{hint}")
    fitted = dict(fitted or {})
    both = [m for m in fitted if m in methods]
    if both:
        raise InvalidParameterError(
            f"Fusion method(s) {both} are given both as fitted models and as methods to "
            f"train; the fused sources would collide (fused_{both[0]})."
        )
    for m, est in fitted.items():
        if not callable(getattr(est, "predict", None)) or not hasattr(est, "readers_"):
            raise InvalidParameterError(
                f"The fitted model given for {m!r} is not a fitted estimator with predict "
                f"(got {type(est).__name__})."
            )
    if not methods and not fitted:
        raise InvalidParameterError(f"No fusion method given; available: {list_fusion()}.")
    ann, dropped = _annotations(
        labels, readers, findings=expand_findings(findings), not_mentioned=not_mentioned
    )
    if ann.empty:
        raise SchemaError(
            f"The readers {list(readers)} have no label in the states negative/uncertain/positive."
        )
    y = None
    if adjudicated is not None:
        if adjudicated not in set(labels[SOURCE].astype(str)):
            raise SchemaError(
                f"Adjudicated source {adjudicated!r} is not in the label table; sources present: "
                f"{sorted(labels[SOURCE].astype(str).unique())}."
            )
        ref = labels[(labels[SOURCE] == adjudicated)]
        st = ref[STATE].astype("Int8")
        ok = st.notna().to_numpy() & (st != LabelState.NOT_MENTIONED).fillna(False).to_numpy()
        y = pd.DataFrame(
            {
                STUDY_ID: ref[STUDY_ID].to_numpy()[ok],
                FINDING: ref[FINDING].to_numpy()[ok],
                STATE: st.to_numpy(dtype=np.int64, na_value=0)[ok],
            }
        )

    for m in methods:
        if getattr(_REGISTRY[m], "supervised", False) and y is None:
            raise InvalidParameterError(
                f"Fusion method {m!r} is supervised: pass the adjudicated source "
                f"(adjudicated=) it is trained on."
            )
    params = _check_method_params(params, methods)  # every estimator's parameters, before any fit
    gen = normalize_rng(rng)
    estimators: dict[str, object] = {}
    fused: list[pd.DataFrame] = []
    warnings: list[str] = []
    by_finding = {f: g for f, g in ann.groupby(FINDING, sort=True)}
    enc = encode_annotations(ann, func="fuse_labels")  # once for every unsupervised method
    with contextlib.ExitStack() as stack:
        group_map = None
        if executor is not None:
            from ..executor import get_executor, open_executor

            # a spec is opened here and closed at the end; an executor in this process fits the groups as serially
            ex = (
                stack.enter_context(open_executor(executor))
                if isinstance(executor, str)
                else get_executor(executor)
            )
            executor = None if ex.in_process else ex
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
                    lab = est.labels_
                else:
                    est._fit(enc)  # type: ignore[attr-defined]
                    lab = est.labels_  # type: ignore[attr-defined]
            estimators[m] = est
            _collect(m, est, lab, by_finding, fused, warnings)
    del enc
    out = pd.concat(fused, ignore_index=True)
    if PATIENT_ID in labels.columns:
        pmap = labels.drop_duplicates(STUDY_ID).set_index(STUDY_ID)[PATIENT_ID]
        out.insert(1, PATIENT_ID, pmap.reindex(out[STUDY_ID]).to_numpy())
    else:
        out.insert(1, PATIENT_ID, pd.NA)
    out[STATE] = pd.array(out[STATE].to_numpy(), dtype="Int8")
    per_item = ann.groupby([STUDY_ID, FINDING]).size()
    n_partial = int((per_item < per_item.max()).sum())
    hist = {int(k): int(v) for k, v in per_item.value_counts().sort_index().items()}
    return FusionResult(
        out,
        estimators,
        tuple(str(r) for r in readers),
        int(len(per_item)),
        dropped,
        n_partial,
        hist,
        tuple(warnings),
        convergence_table(estimators),
        adjudicated=adjudicated,
        not_mentioned=not_mentioned,
        seed=rng if isinstance(rng, int) else None,
        applied=tuple(fitted),
    )


#: The methods whose ``probas_`` are a posterior of a probabilistic model: their fused labels carry ``p_positive``
#: (the majority-vote shares and the rules' one-hot states are not posteriors).
POSTERIOR_METHODS = frozenset({"ds", "mace", "nn", "nn_ps"})


def _collect(
    m: str,
    est: object,
    lab: pd.Series,
    by_finding: dict[str, pd.DataFrame],
    fused: list[pd.DataFrame],
    warnings: list[str],
) -> None:
    """Append method ``m``'s fused labels (long) to ``fused`` and its over-fusion warnings to ``warnings``;
    ``p_positive`` is the posterior probability of the positive state for the methods of :data:`POSTERIOR_METHODS`
    (NaN for the others)."""
    fin = lab.index.get_level_values(FINDING)
    for f, g in by_finding.items():
        warnings += [f"{f}: {w}" for w in overfused_states(g, lab[fin == f], method=m)]
    probas = getattr(est, "probas_", None)
    if m in POSTERIOR_METHODS and probas is not None:
        p_pos = probas[int(LabelState.POS)].reindex(lab.index).to_numpy(dtype=float)
    else:
        p_pos = np.full(len(lab), np.nan)
    fused.append(
        pd.DataFrame(
            {
                STUDY_ID: lab.index.get_level_values(STUDY_ID),
                FINDING: fin,
                SOURCE: f"fused_{m}",
                STATE: lab.to_numpy(),
                P_POSITIVE: p_pos,
            }
        )
    )


def _init_params(cls: object) -> set[str]:
    return set(inspect.signature(cls.__init__).parameters)  # type: ignore[misc]


def _check_method_params(params: object, methods: Sequence[str]) -> dict[str, dict[str, object]]:
    """``params`` checked: a mapping of methods being trained to their constructor's keyword arguments, each
    estimator built and its values checked (``_check_params``) now, so a bad value fails before any fit."""
    func = "fuse_labels"
    if params is None:
        return {}
    if not isinstance(params, Mapping) or not all(isinstance(v, Mapping) for v in params.values()):
        raise InvalidParameterError(
            f"The 'params' parameter of {func} must map method names to keyword mappings, "
            f"e.g. {{'nn': {{'hidden': 64}}}}. Got {params!r} instead."
        )
    extra = [m for m in params if m not in methods]
    if extra:
        raise InvalidParameterError(
            f"The 'params' parameter of {func} has parameters for method(s) {extra}, which "
            f"are not among the methods trained {list(methods)}."
        )
    out = {}
    for m, kw in params.items():
        allowed = sorted(_init_params(_REGISTRY[m]) - {"self", "rng"})
        for k in kw:
            if k not in allowed:
                raise InvalidParameterError(
                    f"The 'params' parameter of {func}: method {m!r} has no parameter {k!r}; "
                    f"its parameters are {allowed}.{did_you_mean(str(k), allowed, n=1)}"
                )
        check = getattr(_REGISTRY[m](**kw), "_check_params", None)
        if callable(check):
            check()
        out[str(m)] = dict(kw)
    return out
