"""Each model's AUC against the latent truth of several readers, from label and prediction tables or files.

:func:`evaluate_latent_auc` (DataFrames), :func:`evaluate_latent_auc_files` (files: what ``cxreval classify
--latent-truth`` runs) and :func:`evaluate_latent_auc_prepared` (the arrays of
:func:`cxreval.stats.prepare_inputs`) all return a :class:`~cxreval.latent.LatentAUCResult`. Per finding,
the evaluated studies are those with a label from at least one reader (or the anchor); the readers' labels are
binarised by the label policy (default: an uncertain label is no label from that reader, ``not_mentioned``
negative, as ``classify``). Per model × finding, :func:`~cxreval.latent.bootstrap_latent_class` fits the model of
the readers and the model's score to the studies the model scores, on one patient-bootstrap plan shared by every
model and finding (paired replicates; the macro average is the mean of each replicate's per-finding AUCs).
"""

from __future__ import annotations

from collections.abc import Sequence
from os import PathLike
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .._typing import RNGLike
from .._validation import check_confidence_level, check_positive_int
from ..bootstrap import ResamplingPlan, draw_plan, percentile_ci
from ..exceptions import InvalidParameterError, SchemaError
from ..executor import ExecutorLike
from ..findings import canonical_finding
from ..io import read_table
from ..progress import Progress, as_progress
from ..schema import FINDING, MACRO
from ..schema._columns import check_columns
from ..schema._result_columns import READER_ACCURACY_COLUMNS
from ..stats import PreparedInputs, prepare_from_files, prepare_inputs
from ..stats._auc_result import AUC_COLUMNS, DEFAULT_GROUP
from ._diagnostics import (
    READER_AGREEMENT_COLUMNS,
    SCORE_ASSOCIATION_COLUMNS,
    reader_agreement_rows,
    score_association_rows,
)
from ._fitting import NOT_IDENTIFIED, SCORE_MODELS, NotIdentifiedError
from ._model import fit_latent_class
from ._per_model import fit_models
from ._resampling import bootstrap_latent_class
from ._result import LATENT_REFERENCE, LatentAUCResult

__all__ = [
    "evaluate_latent_auc",
    "evaluate_latent_auc_files",
    "evaluate_latent_auc_prepared",
    "read_reader_accuracy",
    "reader_accuracy_table",
]


def read_reader_accuracy(table: str | PathLike[str] | pd.DataFrame) -> pd.DataFrame:
    """A table of known reader accuracies: ``finding, source, sensitivity, specificity`` (e.g. the
    ``reader_accuracy.csv`` of ``cxreval fuse`` or ``classify --latent-truth``), findings canonical.

    Raises
    ------
    SchemaError
        The file is missing, lacks a column, repeats a (finding, source) or holds a value outside [0, 1].
    """
    where = "reader_accuracy table"
    if isinstance(table, pd.DataFrame):
        df = table.copy()
    else:
        p = Path(table)
        if not p.exists():
            raise SchemaError(f"File {str(p)!r} does not exist (reader_accuracy=).")
        where = f"file {str(p)!r}"
        df = read_table(p)
    check_columns(df, (FINDING, "source", "sensitivity", "specificity"), where=where)
    df = df[[FINDING, "source", "sensitivity", "specificity"]].copy()
    df[FINDING] = [canonical_finding(str(f)) for f in df[FINDING]]
    df["source"] = df["source"].astype(str)
    for col in ("sensitivity", "specificity"):
        v = pd.to_numeric(df[col], errors="coerce")
        bad = ~((v >= 0) & (v <= 1))
        if bad.any():
            i = int(np.flatnonzero(bad.to_numpy())[0])
            raise SchemaError(
                f"{where}, column {col!r}, row {i + 1}: {df[col].iloc[i]!r} is not a probability in [0, 1]."
            )
        df[col] = v.astype(float)
    dup = df.duplicated([FINDING, "source"])
    if dup.any():
        r = df[dup].iloc[0]
        raise SchemaError(f"{where} gives finding {r[FINDING]!r}, source {r['source']!r} more than once.")
    return df.reset_index(drop=True)


def _check_readers(readers: object, anchor: str | None, func: str) -> tuple[list[str], str | None]:
    if isinstance(readers, str):
        readers = [r.strip() for r in readers.split(",") if r.strip()]
    if not isinstance(readers, Sequence) or not readers or not all(isinstance(r, str) for r in readers):
        raise InvalidParameterError(
            f"The 'readers' parameter of {func} must name the label sources to treat as "
            f"readers (e.g. readers=['bc4', 'bc6', 'bc8']). Got {readers!r} instead."
        )
    rs = list(readers)
    if len(set(rs)) != len(rs):
        raise InvalidParameterError(f"{func}: 'readers' names a source twice: {rs}.")
    if anchor is not None and anchor in rs:
        raise InvalidParameterError(
            f"{func}: the anchor {anchor!r} is also a reader; an anchor is a reference "
            "treated as exact, not one of the readers."
        )
    return rs, anchor


def _accuracy_matrix(acc: pd.DataFrame | None, finding: str, readers: Sequence[str]) -> np.ndarray | None:
    if acc is None:
        return None
    sub = acc[acc[FINDING] == finding].set_index("source")
    out = np.full((len(readers), 2), np.nan)
    for i, r in enumerate(readers):
        if r in sub.index:
            out[i] = sub.loc[r, ["sensitivity", "specificity"]].to_numpy(dtype=float)
    return out if np.isfinite(out).any() else None


def _advance(progress: Progress, task: int, reps: int | None, n_resamples: int) -> None:
    """One (model or readers-only, finding) fit done, with its ``n_resamples`` replicates."""
    progress.advance(task)
    if reps is not None:
        progress.advance(reps, n_resamples)


def evaluate_latent_auc_prepared(
    inputs: PreparedInputs,
    *,
    readers: Sequence[str],
    anchor: str | None = None,
    reader_accuracy: str | PathLike[str] | pd.DataFrame | None = None,
    n_resamples: int = 1000,
    confidence_level: float = 0.95,
    rng: RNGLike = None,
    score_model: str = "auto",
    progress: Progress | None = None,
    executor: ExecutorLike = None,
) -> LatentAUCResult:
    """:func:`evaluate_latent_auc` on prepared arrays (``inputs.references`` must hold the readers and anchor)."""
    func = "evaluate_latent_auc"
    rs, anchor = _check_readers(readers, anchor, func)
    n_resamples = check_positive_int(n_resamples, name="n_resamples", func=func, minimum=0)
    confidence_level = check_confidence_level(confidence_level, func=func)
    if score_model not in SCORE_MODELS:
        raise InvalidParameterError(
            f"The 'score_model' parameter of {func} must be one of {list(SCORE_MODELS)}. "
            f"Got {score_model!r} instead."
        )
    acc = None if reader_accuracy is None else read_reader_accuracy(reader_accuracy)
    soft = [r for r in (*rs, *([anchor] if anchor else [])) if r in inputs.soft_references]
    if soft:
        raise InvalidParameterError(
            f"{func}: reader(s) {soft} have soft labels (p_positive); the latent-class model "
            f"reads each reader's 0/1 labels: give their states without p_positive."
        )
    ref_idx = [inputs.references.index(r) for r in rs]
    a_idx = None if anchor is None else inputs.references.index(anchor)
    # identification, for every finding, before any fit
    per_finding = []
    for f, finding in enumerate(inputs.findings):
        y = inputs.Y[f, ref_idx, :].T
        a = inputs.Y[f, a_idx, :] if a_idx is not None else np.full(y.shape[0], np.nan)
        labelled = (~np.isnan(y)).any(axis=1) | ~np.isnan(a)
        n_readers = int((~np.isnan(y[labelled])).any(axis=0).sum())
        accf = _accuracy_matrix(acc, finding, rs)
        if n_readers < 3 and accf is None and np.isnan(a).all():
            labelled_by = [r for r, k in zip(rs, (~np.isnan(y)).any(axis=0)) if k]
            raise NotIdentifiedError(
                f"Finding {finding!r} has {n_readers} reader(s) with labels "
                f"({', '.join(labelled_by) or 'none'}). {NOT_IDENTIFIED}"
            )
        per_finding.append((finding, y, a, labelled, accf))
    plan: ResamplingPlan | None = None
    if n_resamples:
        plan = draw_plan(
            inputs.patient_of.to_numpy(), n_resamples=n_resamples, rng=rng, study_ids=list(inputs.studies)
        )
    progress = as_progress(progress, func=func)
    n_fits = len(inputs.findings) * (len(inputs.models) + 1)
    task = progress.add("latent-class fits (model x finding)", total=n_fits)
    reps = progress.add("bootstrap replicates refitted", total=n_fits * n_resamples) if n_resamples else None
    model_fits = fit_models(
        inputs, per_finding, plan, confidence_level, score_model, executor, progress, task, reps
    )
    n_f = len(inputs.findings)
    dist = np.full((len(inputs.models), n_f + 1, max(n_resamples, 1)), np.nan)
    point = np.full((len(inputs.models), n_f + 1), np.nan)
    auc_rows: list[dict[str, object]] = []
    acc_rows: list[dict[str, object]] = []
    agree_rows: list[dict[str, object]] = []
    assoc_rows: list[dict[str, object]] = []
    counts: dict[tuple[int, int], tuple[int, int, int]] = {}
    for f, (finding, y, a, labelled, accf) in enumerate(per_finding):
        idx = np.flatnonzero(labelled)
        y_f, a_f = y[idx], a[idx]
        a_arg = None if np.isnan(a_f).all() else a_f
        if plan is not None:
            ro = bootstrap_latent_class(
                y_f,
                None,
                plan.subset(idx),
                anchor=a_arg,
                reader_accuracy=accf,
                confidence_level=confidence_level,
                score_model=score_model,
            )
            ro_fit, iv = ro.fit, ro.reader_interval(confidence_level=confidence_level)
        else:
            ro_fit = fit_latent_class(y_f, anchor=a_arg, reader_accuracy=accf)
            iv = {
                k: np.full(len(rs), np.nan)
                for k in ("sensitivity_low", "sensitivity_high", "specificity_low", "specificity_high")
            }
        _advance(progress, task, reps, n_resamples)
        for r, src in enumerate(rs):
            n_lab = int((~np.isnan(y_f[:, r])).sum())
            if n_lab == 0:
                continue
            acc_rows.append(
                {
                    FINDING: finding,
                    "source": src,
                    "sensitivity": float(ro_fit.sensitivity[r]),
                    "sensitivity_low": float(iv["sensitivity_low"][r]),
                    "sensitivity_high": float(iv["sensitivity_high"][r]),
                    "specificity": float(ro_fit.specificity[r]),
                    "specificity_low": float(iv["specificity_low"][r]),
                    "specificity_high": float(iv["specificity_high"][r]),
                    "n_labelled": n_lab,
                    "fixed": bool(ro_fit.fixed_readers[r]),
                }
            )
        agree_rows += reader_agreement_rows(finding, rs, y_f, ro_fit)
        fitted = model_fits[f]
        for m, model in enumerate(inputs.models):
            s_all = inputs.S[m, f, :]
            scored = idx[np.isfinite(s_all[idx])]
            n_dropped = int(np.isfinite(s_all).sum() - scored.size)
            if scored.size < 2:
                continue
            yy = y[scored]
            fit, auc, dist[m, f] = fitted[(scored.tobytes(), s_all[scored].tobytes())]
            point[m, f] = auc
            n_pos = int(round(float(fit.posterior.sum())))
            counts[(m, f)] = (n_pos, int(scored.size) - n_pos, n_dropped)
            assoc_rows += score_association_rows(model, finding, rs, yy, s_all[scored], fit)
    progress.done(task)
    if reps is not None:
        progress.done(reps)
    # macro: the mean over the findings, per replicate
    with np.errstate(invalid="ignore"):
        point[:, n_f] = point[:, :n_f].mean(axis=1)
        dist[:, n_f] = dist[:, :n_f].mean(axis=1)
    for m, model in enumerate(inputs.models):
        group = inputs.groups.get(model, DEFAULT_GROUP)
        for f, finding in enumerate([*inputs.findings, MACRO]):
            if not np.isfinite(point[m, f]):
                continue
            if plan is not None:
                ci = percentile_ci(
                    dist[m, f], estimate=float(point[m, f]), confidence_level=confidence_level
                ).confidence_interval
                lo, hi = ci.low, ci.high
            else:
                lo = hi = float("nan")
            if f < n_f:
                n_pos, n_neg, n_dropped = counts[(m, f)]
            else:
                parts = [counts[(m, k)] for k in range(n_f) if (m, k) in counts]
                n_pos, n_neg, n_dropped = (sum(p[i] for p in parts) for i in range(3))
            auc_rows.append(
                {
                    "model": model,
                    "group": group,
                    FINDING: finding,
                    "reference": LATENT_REFERENCE,
                    "auc": float(point[m, f]),
                    "ci_low": lo,
                    "ci_high": hi,
                    "n_pos": n_pos,
                    "n_neg": n_neg,
                    "n_dropped": n_dropped,
                    "chance": False,
                }
            )
    seed = int(rng) if isinstance(rng, (int, np.integer)) and not isinstance(rng, bool) else None
    return LatentAUCResult(
        table=pd.DataFrame(auc_rows, columns=list(AUC_COLUMNS)),
        reader_accuracy=pd.DataFrame(acc_rows, columns=list(READER_ACCURACY_COLUMNS)),
        reader_agreement=pd.DataFrame(agree_rows, columns=list(READER_AGREEMENT_COLUMNS)),
        score_association=pd.DataFrame(assoc_rows, columns=list(SCORE_ASSOCIATION_COLUMNS)),
        readers=tuple(rs),
        anchor=anchor,
        models=tuple(inputs.models),
        findings=tuple(inputs.findings),
        distribution=dist if n_resamples else np.empty((len(inputs.models), n_f + 1, 0)),
        n_resamples=n_resamples,
        confidence_level=confidence_level,
        seed=seed,
        policy=inputs.policy,
        not_mentioned=inputs.not_mentioned,
        score_model=score_model,
    )


def evaluate_latent_auc(
    predictions: pd.DataFrame,
    labels: pd.DataFrame,
    *,
    readers: Sequence[str],
    anchor: str | None = None,
    reader_accuracy: str | PathLike[str] | pd.DataFrame | None = None,
    findings: Sequence[str] | None = None,
    policy: str = "exclude",
    not_mentioned: str = "negative",
    model_groups: pd.DataFrame | dict[str, str] | None = None,
    unlabeled: str = "error",
    n_resamples: int = 1000,
    confidence_level: float = 0.95,
    rng: RNGLike = None,
    score_model: str = "auto",
    progress: Progress | None = None,
    executor: ExecutorLike = None,
) -> LatentAUCResult:
    """Each model's ROC-AUC against the latent truth of several readers, per finding, with patient-bootstrap
    intervals that refit the latent-class model in every replicate.

    Parameters
    ----------
    predictions : pandas.DataFrame
        ``study_id, model, finding, score``.
    labels : pandas.DataFrame
        ``study_id, patient_id, finding, source, state``; holds the readers (and the anchor).
    readers : sequence of str
        The label sources treated as readers (any kind: radiologists, report labellers, text-mined labels).
    anchor : str, optional
        A label source treated as exact for the studies it labels (their truth fixed at its label).
    reader_accuracy : path or DataFrame, optional
        Known sensitivity and specificity per (finding, source) (:func:`read_reader_accuracy`), held fixed.
    findings : sequence of str, optional
        Default: every predicted and labelled finding.
    policy : {'exclude', 'zeros', 'ones'}, default='exclude'
        Uncertain reader labels: no label from that reader (default), negative, or positive.
    not_mentioned : {'negative', 'exclude'}, default='negative'
    model_groups, unlabeled
        As :func:`cxreval.classification.evaluate_auc`.
    n_resamples : int, default=1000
        Patient-bootstrap replicates (0: point estimates only).
    confidence_level : float, default=0.95
    rng : None, int or Generator
        Seed of the resampling plan.
    score_model : {'auto', 'spline', 'dependent', 'bins'}, default='auto'
        See :func:`~cxreval.latent.fit_latent_class`. ``'auto'``: per model and finding, each reader's accuracy a
        function of the score (``'dependent'``) where the Bayesian information criterion prefers it to readers
        independent of the score given the truth (``'spline'``); chosen on the data, refitted in every replicate.
    progress : Progress, optional
        Told of each (model, finding) fit and of its replicates.
    executor : None, str or Executor, optional
        Where the (model, finding) fits run, one item each (:func:`cxreval.executor.get_executor`: ``None`` in
        this process, ``'process:2'``, ...); the plan is drawn before, so the result is the same on every one.

    Returns
    -------
    res : LatentAUCResult

    Raises
    ------
    NotIdentifiedError
        A finding with fewer than three readers with labels, without known accuracies or anchor labels (the
        message names the finding and ends with :data:`~cxreval.latent.NOT_IDENTIFIED`), before any fit.
    SchemaError, InvalidParameterError
        As :func:`cxreval.stats.prepare_inputs`; an unknown reader or anchor.
    """
    rs, anchor = _check_readers(readers, anchor, "evaluate_latent_auc")
    options = _prepare_options(rs, anchor, findings, policy, not_mentioned, model_groups, unlabeled)
    prep = prepare_inputs(predictions, labels, **options)
    fit = (reader_accuracy, n_resamples, confidence_level, rng, score_model, progress, executor)
    return _evaluate(prep, rs, anchor, *fit)


def evaluate_latent_auc_files(
    predictions: str | Path | Sequence[str | Path],
    labels: str | Path | Sequence[str | Path],
    *,
    readers: Sequence[str],
    anchor: str | None = None,
    reader_accuracy: str | PathLike[str] | pd.DataFrame | None = None,
    findings: Sequence[str] | None = None,
    policy: str = "exclude",
    not_mentioned: str = "negative",
    model_groups: pd.DataFrame | dict[str, str] | None = None,
    unlabeled: str = "error",
    state_encoding: str | None = None,
    blank_state: str | None = None,
    n_resamples: int = 1000,
    confidence_level: float = 0.95,
    rng: RNGLike = None,
    score_model: str = "auto",
    progress: Progress | None = None,
    executor: ExecutorLike = None,
) -> LatentAUCResult:
    """:func:`evaluate_latent_auc` on prediction and label files (what ``cxreval classify --latent-truth`` runs;
    the files are read as :func:`cxreval.stats.prepare_from_files` reads them)."""
    rs, anchor = _check_readers(readers, anchor, "evaluate_latent_auc")
    if reader_accuracy is not None and not isinstance(reader_accuracy, pd.DataFrame):
        reader_accuracy = read_reader_accuracy(reader_accuracy)  # a bad file is refused before the reading
    progress = as_progress(progress, func="evaluate_latent_auc_files")
    reading = progress.add("reading predictions and labels")
    options = _prepare_options(rs, anchor, findings or None, policy, not_mentioned, model_groups, unlabeled)
    prep = prepare_from_files(
        predictions, labels, state_encoding=state_encoding, blank_state=blank_state, **options
    )
    progress.done(reading)
    fit = (reader_accuracy, n_resamples, confidence_level, rng, score_model, progress, executor)
    return _evaluate(prep, rs, anchor, *fit)


def _prepare_options(
    readers: list[str],
    anchor: str | None,
    findings: Sequence[str] | None,
    policy: str,
    not_mentioned: str,
    model_groups: pd.DataFrame | dict[str, str] | None,
    unlabeled: str,
) -> dict[str, Any]:
    """The options of :func:`~cxreval.stats.prepare_inputs` (and ``prepare_from_files``) for a latent evaluation:
    the readers and the anchor as references, each finding on the studies it has."""
    return {
        "references": [*readers, *([anchor] if anchor else [])],
        "findings": findings,
        "policy": policy,
        "not_mentioned": not_mentioned,
        "model_groups": model_groups,
        "unlabeled": unlabeled,
        "studies": "each",
    }


def _evaluate(
    prep: PreparedInputs,
    readers: list[str],
    anchor: str | None,
    reader_accuracy: str | PathLike[str] | pd.DataFrame | None,
    n_resamples: int,
    confidence_level: float,
    rng: RNGLike,
    score_model: str,
    progress: Progress | None,
    executor: ExecutorLike,
) -> LatentAUCResult:
    return evaluate_latent_auc_prepared(
        prep,
        readers=readers,
        anchor=anchor,
        reader_accuracy=reader_accuracy,
        n_resamples=n_resamples,
        confidence_level=confidence_level,
        rng=rng,
        score_model=score_model,
        progress=progress,
        executor=executor,
    )


def reader_accuracy_table(
    labels: pd.DataFrame,
    readers: Sequence[str],
    *,
    not_mentioned: str = "negative",
    n_resamples: int = 1000,
    confidence_level: float = 0.95,
    rng: RNGLike = None,
) -> pd.DataFrame:
    """Each reader's sensitivity and specificity per finding under the readers-only latent-class model, with
    patient-bootstrap percentile intervals (:data:`~cxreval.schema.READER_ACCURACY_COLUMNS`).

    The readers' states are binarised: positive 1, negative 0, uncertain no label, ``not_mentioned`` negative
    (or no label with ``not_mentioned='exclude'``). Patients are resampled (each study its own patient when the
    table has no ``patient_id``). A finding with fewer than three readers with labels is not identified and has
    no rows (:data:`~cxreval.latent.NOT_IDENTIFIED`). What ``cxreval fuse`` writes as ``reader_accuracy.csv``,
    and ``classify --latent-truth --reader-accuracy`` reads.
    """
    from ..labels import validate_label_table
    from ..schema import PATIENT_ID, SOURCE, STATE, STUDY_ID

    n_resamples = check_positive_int(n_resamples, name="n_resamples", func="reader_accuracy_table")
    lab = validate_label_table(labels, require_patient=False)
    lab = lab[lab[SOURCE].isin(list(readers))]
    state = lab[STATE].astype("Int8").astype("float")
    y = np.where(state == 2, 1.0, np.where(state == 0, 0.0, np.nan))
    if not_mentioned == "negative":
        y = np.where(state == -1, 0.0, y)
    lab = lab.assign(_y=y)
    rows: list[dict[str, object]] = []
    gen = np.random.default_rng(rng)
    for finding, g in lab.groupby(FINDING, sort=True, observed=True):
        wide = g.pivot_table(index=STUDY_ID, columns=SOURCE, values="_y", aggfunc="first", observed=True)
        srcs = [r for r in readers if r in wide.columns and wide[r].notna().any()]
        if len(srcs) < 3:
            continue
        y_f = wide[srcs].to_numpy(dtype=float)
        keep = ~np.isnan(y_f).all(axis=1)
        y_f, studies = y_f[keep], wide.index[keep]
        if PATIENT_ID in g.columns and g[PATIENT_ID].notna().all():
            pid = g.drop_duplicates(STUDY_ID).set_index(STUDY_ID)[PATIENT_ID].reindex(studies).to_numpy()
        else:
            pid = np.asarray(studies)
        res = bootstrap_latent_class(
            y_f, None, draw_plan(pid, n_resamples=n_resamples, rng=gen), confidence_level=confidence_level
        )
        iv = res.reader_interval(confidence_level=confidence_level)
        for r, src in enumerate(srcs):
            rows.append(
                {
                    FINDING: str(finding),
                    "source": src,
                    "sensitivity": float(res.fit.sensitivity[r]),
                    "sensitivity_low": float(iv["sensitivity_low"][r]),
                    "sensitivity_high": float(iv["sensitivity_high"][r]),
                    "specificity": float(res.fit.specificity[r]),
                    "specificity_low": float(iv["specificity_low"][r]),
                    "specificity_high": float(iv["specificity_high"][r]),
                    "n_labelled": int((~np.isnan(y_f[:, r])).sum()),
                    "fixed": False,
                }
            )
    return pd.DataFrame(rows, columns=list(READER_ACCURACY_COLUMNS))
