"""A simulated subgroup study with a known truth: a model without a gap, a labeller with one.

Study ``i`` (one per patient) is in group ``A`` (even ``i``) or ``B`` (odd ``i``); its truth is ``T ~
Bernoulli(prevalence)``; the model's score is ``expit(Z)`` with ``Z ~ N(+separation, 1)`` when ``T = 1`` and ``N(-
separation, 1)`` when ``T = 0`` in both groups (no gap: the model's AUC is ``Phi(separation / sqrt(1/2))`` in each);
the labeller says positive with probability ``sensitivity[g]`` in group ``g`` when ``T = 1`` and ``1 -
specificity`` when ``T = 0``, independently of the score given ``T``. The random numbers are drawn in this order:
truth, scores, the labeller on positives, the labeller on negatives.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .._typing import RNGLike
from .._validation import check_positive_int, normalize_rng
from ..exceptions import InvalidParameterError

__all__ = ["SimulatedSubgroupSet", "simulate_subgroup_set"]

_FUNC = "simulate_subgroup_set"


@dataclass(frozen=True)
class SimulatedSubgroupSet:
    """One simulated set: the inputs of :func:`~cxreval.subgroups.evaluate_subgroups`.

    Attributes
    ----------
    predictions : pandas.DataFrame
        ``study_id, model, finding, score``: the model ``m``'s probabilities.
    labels : pandas.DataFrame
        ``study_id, patient_id, finding, source, state``: the sources ``truth`` and ``labeller``.
    metadata : pandas.DataFrame
        ``study_id, group``: ``A`` or ``B``.
    """

    predictions: pd.DataFrame
    labels: pd.DataFrame
    metadata: pd.DataFrame


def simulate_subgroup_set(
    n_studies: int,
    *,
    sensitivity: Sequence[float] = (0.9, 0.75),
    specificity: float = 0.98,
    prevalence: float = 0.3,
    separation: float = 1.5,
    finding: str = "Edema",
    rng: RNGLike = None,
) -> SimulatedSubgroupSet:
    """Simulate a model without a subgroup gap and a labeller whose sensitivity differs between groups A and B.

    Parameters
    ----------
    n_studies : int
        Studies (one per patient), alternately in groups A and B; at least 4.
    sensitivity : pair of float, default=(0.9, 0.75)
        The labeller's sensitivity in groups A and B, each in [0, 1].
    specificity : float, default=0.98
        The labeller's specificity in both groups, in [0, 1].
    prevalence : float, default=0.3
        The share of studies whose truth is positive, in (0, 1).
    separation : float, default=1.5
        The model's latent score is ``N(+separation, 1)`` on positives, ``N(-separation, 1)`` on negatives.
    finding : str, default='Edema'
        The finding's name.
    rng : int, Generator or None
        The random numbers (a Generator is drawn from, so successive calls give successive sets).

    Returns
    -------
    res : SimulatedSubgroupSet

    Examples
    --------
    >>> from cxreval.subgroups import simulate_subgroup_set
    >>> sim = simulate_subgroup_set(1000, rng=0)
    >>> sorted(sim.labels["source"].unique()), sorted(sim.metadata["group"].unique())
    (['labeller', 'truth'], ['A', 'B'])
    """
    n = check_positive_int(n_studies, name="n_studies", func=_FUNC, minimum=4)
    sens = [float(s) for s in sensitivity]
    if len(sens) != 2 or not all(0.0 <= s <= 1.0 for s in sens) or not 0.0 <= specificity <= 1.0:
        raise InvalidParameterError(
            f"{_FUNC} needs two sensitivities (groups A and B) and a specificity, each in [0, 1]. Got "
            f"sensitivity={tuple(sensitivity)!r}, specificity={specificity!r}."
        )
    if not 0.0 < prevalence < 1.0:
        raise InvalidParameterError(
            f"The 'prevalence' parameter of {_FUNC} must be in (0, 1). Got {prevalence!r}."
        )
    gen = normalize_rng(rng)
    ids = [f"s{i}" for i in range(n)]
    group = np.where(np.arange(n) % 2 == 0, "A", "B")
    truth = gen.random(n) < prevalence
    score = 1 / (1 + np.exp(-gen.normal(np.where(truth, separation, -separation), 1.0)))
    caught = gen.random(n) < np.where(group == "B", sens[1], sens[0])
    labeller = np.where(truth, caught, gen.random(n) < 1.0 - specificity)
    predictions = pd.DataFrame({"study_id": ids, "model": "m", "finding": finding, "score": score})
    labels = pd.concat(
        [
            pd.DataFrame(
                {
                    "study_id": ids,
                    "patient_id": ids,
                    "finding": finding,
                    "source": source,
                    "state": np.where(y, "positive", "negative"),
                }
            )
            for source, y in (("truth", truth), ("labeller", labeller))
        ],
        ignore_index=True,
    )
    return SimulatedSubgroupSet(predictions, labels, pd.DataFrame({"study_id": ids, "group": group}))
