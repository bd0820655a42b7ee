"""The latent-class fits of every (model, finding), mapped over an executor (private to
:mod:`cxreval.latent._evaluate`): one item per (model, finding), models with identical scores on the same studies
sharing one; the progress counts each fit and its replicates as its item finishes."""

from __future__ import annotations

from functools import partial
from typing import Any

import numpy as np

from ..bootstrap import ResamplingPlan
from ..executor import ExecutorLike, open_executor
from ..progress import Progress
from ..stats import PreparedInputs
from ._auc import latent_auc_score
from ._model import fit_latent_class
from ._resampling import bootstrap_latent_class

__all__ = ["fit_models"]


def _fit_one(
    i: int,
    *,
    jobs: list[tuple[np.ndarray, np.ndarray, np.ndarray | None, np.ndarray | None, np.ndarray]],
    plan: ResamplingPlan | None,
    confidence_level: float,
    score_model: str,
) -> tuple[Any, float, np.ndarray | None]:
    """One model and finding: the fit, its latent AUC and the replicates' AUCs (module level: it is pickled
    to the workers of an off-process executor)."""
    yy, s, aa, accf, scored = jobs[i]
    if plan is None:
        fit = fit_latent_class(yy, s, anchor=aa, reader_accuracy=accf, score_model=score_model)
        return fit, latent_auc_score(s, fit.posterior), None
    res = bootstrap_latent_class(
        yy,
        s,
        plan.subset(scored),
        anchor=aa,
        reader_accuracy=accf,
        confidence_level=confidence_level,
        score_model=score_model,
    )
    assert res.auc_bootstrap is not None
    return res.fit, res.auc, res.auc_bootstrap.bootstrap_distribution


def fit_models(
    inputs: PreparedInputs,
    per_finding: list[tuple[str, np.ndarray, np.ndarray, np.ndarray, np.ndarray | None]],
    plan: ResamplingPlan | None,
    confidence_level: float,
    score_model: str,
    executor: ExecutorLike,
    progress: Progress,
    task: int,
    reps: int | None,
) -> list[dict[tuple[bytes, bytes], tuple[Any, float, np.ndarray | float]]]:
    """Every (model, finding)'s fit and replicates, mapped over ``executor`` (one item each; models with
    identical scores on the same studies share one), keyed per finding by the studies and the scores."""
    keys, jobs = [], []
    n_models = len(inputs.models)
    for f, (_, y, a, labelled, accf) in enumerate(per_finding):
        idx = np.flatnonzero(labelled)
        for m in range(n_models):
            s_all = inputs.S[m, f, :]
            scored = idx[np.isfinite(s_all[idx])]
            key = (scored.tobytes(), s_all[scored].tobytes())
            if scored.size < 2 or (f, key) in keys:
                continue
            aa = a[scored]
            keys.append((f, key))
            jobs.append((y[scored], s_all[scored], None if np.isnan(aa).all() else aa, accf, scored))
    n_rep = 0 if plan is None else plan.n_resamples
    n_sharing = {(f, k): 0 for f, k in keys}
    for f in range(len(per_finding)):  # the models that share an item are counted with it
        idx = np.flatnonzero(per_finding[f][3])
        for m in range(n_models):
            s_all = inputs.S[m, f, :]
            scored = idx[np.isfinite(s_all[idx])]
            key = (f, (scored.tobytes(), s_all[scored].tobytes()))
            if key in n_sharing:
                n_sharing[key] += 1
            else:  # fewer than two scored studies: nothing to fit
                progress.advance(task)
                if reps is not None:
                    progress.advance(reps, n_rep)
    shared = [n_sharing[k] for k in keys]

    def on_item(i: int) -> None:
        progress.advance(task, shared[i])
        if reps is not None:
            progress.advance(reps, shared[i] * n_rep)

    func = partial(_fit_one, jobs=jobs, plan=plan, confidence_level=confidence_level, score_model=score_model)
    with open_executor(executor) as ex:
        results = ex.map(func, list(range(len(jobs))), on_item=on_item)
    out: list[dict[tuple[bytes, bytes], tuple[Any, float, np.ndarray | float]]] = [{} for _ in per_finding]
    for (f, key), (fit, auc, d) in zip(keys, results):
        out[f][key] = (fit, auc, np.nan if d is None else d)
    return out
