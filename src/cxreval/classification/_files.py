"""AUC straight from files: what ``cxreval classify`` and ``cxreval rank --predictions`` both run.

:func:`evaluate_auc_files` reads the prediction and label files into arrays
(:func:`~cxreval.stats.prepare_from_files`), the model-group table (:func:`read_model_groups`), and
evaluates (:func:`~cxreval.classification.evaluate_auc`); the demo calls :func:`evaluate_auc` with the same
options on the same tables held in memory, so their files are equal.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from os import PathLike
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

from .._typing import RNGLike, Studies
from .._validation import check_path
from ..exceptions import InvalidParameterError, SchemaError
from ..io._read import read_csv_file
from ..labels._long import validate_model_groups
from ..progress import Progress, as_progress
from ..stats import AUCResult, PreparedInputs, prepare_from_files
from ._evaluate import evaluate_auc_prepared

if TYPE_CHECKING:
    from ..executor import ExecutorLike
    from ..findings import VocabularyMapping

__all__ = ["read_model_groups", "prepare_auc_files", "evaluate_auc_files"]

log = logging.getLogger(__name__)


def read_model_groups(path: str | PathLike[str]) -> pd.DataFrame:
    """Read a model-group CSV (``model, group``), validated by :func:`~cxreval.labels.validate_model_groups`.

    Raises
    ------
    SchemaError
        The file does not exist, or lacks a column / holds an empty or repeated model (named with the file).
    """
    p = check_path(path, name="path", func="read_model_groups", allow_none=False)
    assert p is not None
    if not p.exists():
        raise SchemaError(f"File {str(p)!r} does not exist.")
    return validate_model_groups(read_csv_file(p, dtype=str), where=f"file {str(p)!r}")


def prepare_auc_files(
    predictions: str | Path | Sequence[str | Path],
    labels: str | Path | Sequence[str | Path],
    *,
    model_groups: str | PathLike[str] | pd.DataFrame | dict[str, str] | None,
    state_encoding: str | None,
    references: Sequence[str] | None,
    findings: Sequence[str] | None,
    policy: str,
    not_mentioned: str,
    unlabeled: str,
    blank_state: str | None,
    studies: Studies,
    missing_scores: str,
    finding_map: str | VocabularyMapping | None,
    progress: Progress,
) -> PreparedInputs:
    """The reading of :func:`evaluate_auc_files`: the model groups, then the prediction and label files laid out as
    arrays (:func:`~cxreval.stats.prepare_from_files`), under a progress task of its own."""
    if isinstance(model_groups, (str, PathLike)):
        groups = read_model_groups(model_groups)
    elif model_groups is None or isinstance(model_groups, (pd.DataFrame, dict)):
        groups = model_groups
    else:
        raise InvalidParameterError(
            f"The 'model_groups' parameter of evaluate_auc_files must be a path, a DataFrame "
            f"(model, group), a dict or None. Got {model_groups!r} instead."
        )
    reading = progress.add("reading predictions and labels")
    prep = prepare_from_files(
        predictions,
        labels,
        state_encoding=state_encoding,
        references=references or None,
        findings=findings or None,
        policy=policy,
        not_mentioned=not_mentioned,
        model_groups=groups,
        unlabeled=unlabeled,
        blank_state=blank_state,
        studies=studies,
        missing_scores=missing_scores,
        finding_map=finding_map,
    )
    progress.done(reading)
    return prep


def evaluate_auc_files(
    predictions: str | Path | Sequence[str | Path],
    labels: str | Path | Sequence[str | Path],
    *,
    model_groups: str | PathLike[str] | pd.DataFrame | dict[str, str] | None = None,
    state_encoding: str | None = None,
    references: Sequence[str] | None = None,
    findings: Sequence[str] | None = None,
    policy: str = "exclude",
    not_mentioned: str = "negative",
    unlabeled: str = "error",
    n_resamples: int = 1000,
    confidence_level: float = 0.95,
    rng: RNGLike = None,
    executor: ExecutorLike = None,
    spill_dir: str | Path | None = None,
    progress: Progress | None = None,
    blank_state: str | None = None,
    studies: Studies = "common",
    missing_scores: str = "refuse",
    finding_map: str | VocabularyMapping | None = None,
) -> AUCResult:
    """ROC-AUC with patient-bootstrap CIs of prediction files against label files.

    Parameters
    ----------
    predictions, labels, state_encoding, blank_state
        As for :func:`~cxreval.stats.prepare_from_files`.
    model_groups : path, DataFrame or dict, optional
        A model-group CSV (:func:`read_model_groups`) or table.
    references, findings : sequence of str, optional
        Default (None or empty): every source / every predicted and labelled finding.
    policy, not_mentioned, unlabeled, n_resamples, confidence_level, rng, executor, spill_dir, studies,
    missing_scores, finding_map
        As for :func:`~cxreval.classification.evaluate_auc`. ``spill_dir``: e.g. the output's temporary folder
        (shared storage for a multi-machine cluster).
    progress : Progress, optional
        A task for the reading (done once the files are read and validated) and one advanced per block
        (:class:`cxreval.progress.Progress`; e.g. the CLI's progress bars).

    Returns
    -------
    res : AUCResult
        ``res.notes`` holds what the readers recorded.

    Raises
    ------
    SchemaError, InvalidParameterError
        As :func:`~cxreval.stats.prepare_from_files` and :func:`~cxreval.classification.evaluate_auc`,
        before the computation.
    """
    progress = as_progress(progress, func="evaluate_auc_files")
    prep = prepare_auc_files(
        predictions,
        labels,
        model_groups=model_groups,
        state_encoding=state_encoding,
        references=references,
        findings=findings,
        policy=policy,
        not_mentioned=not_mentioned,
        unlabeled=unlabeled,
        blank_state=blank_state,
        studies=studies,
        missing_scores=missing_scores,
        finding_map=finding_map,
        progress=progress,
    )
    t0 = time.perf_counter()
    res = evaluate_auc_prepared(
        prep,
        n_resamples=n_resamples,
        confidence_level=confidence_level,
        rng=rng,
        executor=executor,
        spill_dir=spill_dir,
        progress=progress,
    )
    log.info(
        "AUC of %d models x %d findings x %d references, %d replicates: %.2f s",
        len(res.models),
        len(res.findings),
        len(res.references),
        res.n_resamples,
        time.perf_counter() - t0,
    )
    return res
