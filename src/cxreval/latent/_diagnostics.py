"""Diagnostics of the latent-class model's assumption: readers' errors independent of each other and of the
score, given the truth.

Two checks, each a table of :class:`~cxreval.latent.LatentAUCResult`:

- *reader agreement* (:func:`reader_agreement_rows`): for every pair of readers, on the studies both label, the
  observed share of studies both call positive and the share agreeing, beside the shares the fitted
  readers-only model implies (``π Se_a Se_b + (1 - π)(1 - Sp_a)(1 - Sp_b)`` and the like). Readers whose errors
  are correlated (two labellers reading the same report, a radiologist and a labeller trained on their reads)
  agree more than the model allows; ``z_both_positive`` is the observed minus fitted share over its binomial
  standard error.
- *score association* (:func:`score_association_rows`): within each fitted class, the posterior-weighted
  correlation between the model's score (its normal score) and each reader's label. Under the assumption it is
  zero (a ratio of expectations, consistent with the fitted posteriors); a reader who is swayed by what the
  model also sees (a score-reader dependence) shows a correlation. ``flagged`` marks
  ``|correlation| >= 0.1`` with ``|correlation| sqrt(n_class) >= 3`` in either class.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..stats._normal_scores import normal_scores
from ._model import LatentClassFit

__all__ = [
    "READER_AGREEMENT_COLUMNS",
    "SCORE_ASSOCIATION_COLUMNS",
    "reader_agreement_rows",
    "score_association_rows",
    "FLAG_CORRELATION",
    "FLAG_Z",
]

READER_AGREEMENT_COLUMNS: tuple[str, ...] = (
    "finding",
    "source_a",
    "source_b",
    "n_both",
    "observed_agreement",
    "fitted_agreement",
    "observed_both_positive",
    "fitted_both_positive",
    "z_both_positive",
)
"""Columns of ``latent_reader_agreement.csv``."""
SCORE_ASSOCIATION_COLUMNS: tuple[str, ...] = (
    "model",
    "finding",
    "source",
    "correlation_positive",
    "correlation_negative",
    "n_positive",
    "n_negative",
    "flagged",
)
"""Columns of ``latent_score_association.csv`` (``n_positive``/``n_negative``: the posterior-weighted class sizes
among the studies the reader labels)."""
FLAG_CORRELATION = 0.1
FLAG_Z = 3.0


def reader_agreement_rows(
    finding: str, sources: Sequence[str], labels: np.ndarray, fit: LatentClassFit
) -> list[dict[str, object]]:
    """One row per pair of readers (``labels``: (n, R) 1/0/NaN; ``fit``: the readers-only fit)."""
    rows: list[dict[str, object]] = []
    pi = fit.prevalence
    se, sp = fit.sensitivity, fit.specificity
    for a in range(len(sources)):
        for b in range(a + 1, len(sources)):
            both = ~np.isnan(labels[:, a]) & ~np.isnan(labels[:, b])
            n = int(both.sum())
            if n == 0:
                continue
            ya, yb = labels[both, a], labels[both, b]
            pp = pi * se[a] * se[b] + (1 - pi) * (1 - sp[a]) * (1 - sp[b])
            nn = pi * (1 - se[a]) * (1 - se[b]) + (1 - pi) * sp[a] * sp[b]
            obs_pp = float(np.mean((ya == 1) & (yb == 1)))
            sd = np.sqrt(pp * (1 - pp) / n)
            rows.append(
                {
                    "finding": finding,
                    "source_a": sources[a],
                    "source_b": sources[b],
                    "n_both": n,
                    "observed_agreement": float(np.mean(ya == yb)),
                    "fitted_agreement": float(pp + nn),
                    "observed_both_positive": obs_pp,
                    "fitted_both_positive": float(pp),
                    "z_both_positive": float((obs_pp - pp) / sd) if sd > 0 else float("nan"),
                }
            )
    return rows


def _weighted_corr(x: np.ndarray, y: np.ndarray, w: np.ndarray) -> float:
    tot = w.sum()
    if tot <= 0:
        return float("nan")
    mx, my = (w * x).sum() / tot, (w * y).sum() / tot
    cov = (w * (x - mx) * (y - my)).sum()
    vx, vy = (w * (x - mx) ** 2).sum(), (w * (y - my) ** 2).sum()
    return float(cov / np.sqrt(vx * vy)) if vx > 0 and vy > 0 else float("nan")


def score_association_rows(
    model: str,
    finding: str,
    sources: Sequence[str],
    labels: np.ndarray,
    score: np.ndarray,
    posterior: np.ndarray,
) -> list[dict[str, object]]:
    """One row per reader: the within-class correlation of its label with the score (``posterior``: the
    score-aware posteriors of the studies)."""
    z = normal_scores(np.asarray(score, dtype=float))
    p = np.asarray(posterior, dtype=float)
    rows: list[dict[str, object]] = []
    for r, src in enumerate(sources):
        lab = ~np.isnan(labels[:, r])
        if not lab.any():
            continue
        y = labels[lab, r]
        c1 = _weighted_corr(z[lab], y, p[lab])
        c0 = _weighted_corr(z[lab], y, 1 - p[lab])
        n1, n0 = float(p[lab].sum()), float((1 - p[lab]).sum())
        flag = any(
            np.isfinite(c) and abs(c) >= FLAG_CORRELATION and abs(c) * np.sqrt(m) >= FLAG_Z
            for c, m in ((c1, n1), (c0, n0))
        )
        rows.append(
            {
                "model": model,
                "finding": finding,
                "source": src,
                "correlation_positive": c1,
                "correlation_negative": c0,
                "n_positive": n1,
                "n_negative": n0,
                "flagged": bool(flag),
            }
        )
    return rows
