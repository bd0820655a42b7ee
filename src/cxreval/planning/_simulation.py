"""Simulated study sets with a known truth, for checking the planner and the two-phase estimate.

Each study's truth ``T ~ Bernoulli(prevalence)``; each reference says positive with probability ``sensitivity``
when ``T = 1`` and ``1 - specificity`` when ``T = 0``, independently given ``T``; model ``m``'s score is
``mu_m T + e_m`` with ``e_m`` standard normal, correlated between models (``correlation``), and
``mu_m = sqrt(2) Phi^-1(auc_m)``, so that its true-label AUC is ``auc_m`` in the population.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .._typing import RNGLike
from .._validation import check_positive_int, normalize_rng
from ..exceptions import InvalidParameterError

__all__ = ["SimulatedStudySet", "simulate_study_set"]


@dataclass(frozen=True)
class SimulatedStudySet:
    """``predictions`` (long), ``labels`` (long: the references and the truth as source ``truth``), and ``truth``
    (study_id → 0/1) of one simulated finding."""

    predictions: pd.DataFrame
    labels: pd.DataFrame
    truth: pd.Series
    finding: str


def simulate_study_set(
    n_studies: int,
    *,
    auc: Sequence[float],
    sensitivity: Sequence[float],
    specificity: Sequence[float],
    prevalence: float,
    correlation: float = 0.5,
    finding: str = "Effusion",
    rng: RNGLike = None,
) -> SimulatedStudySet:
    """Simulate one finding on ``n_studies`` studies: the references ``ref0, ref1, ...`` (one per sensitivity),
    the models ``m0, m1, ...`` (one per AUC) and the truth (see the module docstring)."""
    n = check_positive_int(n_studies, name="n_studies", func="simulate_study_set", minimum=2)
    if len(sensitivity) != len(specificity) or not len(sensitivity):
        raise InvalidParameterError(
            "simulate_study_set needs as many sensitivities as specificities (at least one)."
        )
    if not 0 < prevalence < 1 or not 0 <= correlation < 1 or not all(0.5 < a < 1 for a in auc):
        raise InvalidParameterError(
            "simulate_study_set needs 0 < prevalence < 1, 0 <= correlation < 1 and every AUC in (0.5, 1)."
        )
    from scipy.special import ndtri

    gen = normalize_rng(rng)
    t = (gen.random(n) < prevalence).astype(int)
    ids = np.array([f"s{i:05d}" for i in range(n)], dtype=object)
    rows = []
    for r, (se, sp) in enumerate(zip(sensitivity, specificity)):
        pos = np.where(t == 1, gen.random(n) < se, gen.random(n) >= sp)
        rows.append(
            pd.DataFrame(
                {
                    "study_id": ids,
                    "patient_id": ids,
                    "finding": finding,
                    "source": f"ref{r}",
                    "state": np.where(pos, "positive", "negative"),
                }
            )
        )
    rows.append(
        pd.DataFrame(
            {
                "study_id": ids,
                "patient_id": ids,
                "finding": finding,
                "source": "truth",
                "state": np.where(t == 1, "positive", "negative"),
            }
        )
    )
    shared = gen.standard_normal(n)
    preds = []
    for m, a in enumerate(auc):
        e = np.sqrt(correlation) * shared + np.sqrt(1 - correlation) * gen.standard_normal(n)
        preds.append(
            pd.DataFrame(
                {
                    "study_id": ids,
                    "model": f"m{m}",
                    "finding": finding,
                    "score": np.sqrt(2) * ndtri(a) * t + e,
                }
            )
        )
    return SimulatedStudySet(
        pd.concat(preds, ignore_index=True),
        pd.concat(rows, ignore_index=True),
        pd.Series(t, index=ids, name="truth"),
        finding,
    )
