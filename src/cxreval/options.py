"""The option groups the jobs share, each a frozen dataclass whose fields hold the one default of each option.

- :class:`Design`: which studies and labels an evaluation uses (``studies``, the label policy, a finding map,
  models without scores);
- :class:`Resampling`: the patient bootstrap (``n_resamples``, ``confidence_level``, ``rng``);
- :class:`Compute`: where and how the work runs (``executor``, ``progress``, ``spill_dir``), which never changes
  a result.

A job takes the groups it uses as keywords (``evaluate_classifiers(predictions, labels, design=Design(
studies='each'), resampling=Resampling(n_resamples=200, rng=0))``), and the command line builds each group once
from its options, whose defaults are the fields' (``--n-resamples`` defaults to ``Resampling().n_resamples``).
The analyses below the jobs take the same options one by one (:func:`cxreval.classification.evaluate_auc`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ._typing import RNGLike, Studies
from .progress import Progress

if TYPE_CHECKING:
    from .findings import VocabularyMapping

__all__ = ["Design", "Resampling", "Compute"]


@dataclass(frozen=True)
class Design:
    """Which studies and labels an evaluation against several references uses.

    Attributes
    ----------
    studies : {'common', 'each'}, default='common'
        ``common``: each finding on the studies every reference labelling it labels (one design); ``each``: every
        reference on the studies it labels.
    policy : {'exclude', 'zeros', 'ones'}, default='exclude'
        What an uncertain label becomes: dropped, negative or positive.
    not_mentioned : {'negative', 'exclude'}, default='negative'
        What a not-mentioned label becomes: negative or dropped.
    unlabeled : {'error', 'drop'}, default='error'
        Prediction studies absent from the labels: refused, or dropped (counted in ``dropped.csv``).
    finding_map : str, path or VocabularyMapping, optional
        A finding map applied to labels and scores before scoring (a built-in name or a YAML file).
    map_score : {'max', 'mean'}, optional
        The score of a merged finding of ``finding_map`` from its sources' scores (default: the map's).
    missing_scores : {'refuse', 'chance'}, default='refuse'
        A model with no score at all for a finding: refused, or scored at chance (AUC 0.5).
    """

    studies: Studies = "common"
    policy: str = "exclude"
    not_mentioned: str = "negative"
    unlabeled: str = "error"
    finding_map: str | Path | VocabularyMapping | None = None
    map_score: str | None = None
    missing_scores: str = "refuse"


@dataclass(frozen=True)
class Resampling:
    """The patient bootstrap of an estimate's confidence interval.

    Attributes
    ----------
    n_resamples : int, default=1000
        Bootstrap replicates (0: point estimates only).
    confidence_level : float, default=0.95
        The level of the percentile intervals, in (0, 1).
    rng : int, Generator or None, default=None
        Every random choice (:data:`cxreval.RNGLike`; None: fresh entropy, an int reproduces).
    """

    n_resamples: int = 1000
    confidence_level: float = 0.95
    rng: RNGLike = None


@dataclass(frozen=True)
class Compute:
    """Where and how the work runs; the results are the same whatever these are.

    Attributes
    ----------
    executor : Executor, spec str or None, default=None
        Where the blocks run (:func:`cxreval.get_executor`: ``'process:4'``, ``'dask:local:2'``, ...); None runs
        them in this process.
    progress : Progress, optional
        Told of each task (:class:`cxreval.progress.Progress`).
    spill_dir : path, optional
        Where off-process executors memory-map the arrays (e.g. the output's temporary folder).
    """

    executor: Any = None
    progress: Progress | None = None
    spill_dir: str | Path | None = None
