"""Diagnostics of the latent-class model's assumption: readers' errors independent of each other and of the
score, given the truth.

Two checks, each a table of :class:`~cxreval.latent.LatentAUCResult`:

- *reader agreement* (:func:`reader_agreement_rows`): for every pair of readers, on the studies both label, the
  observed share of studies both call positive and the share agreeing, beside the shares the fitted
  readers-only model implies (``π Se_a Se_b + (1 - π)(1 - Sp_a)(1 - Sp_b)`` and the like). Readers whose errors
  are correlated (two labellers reading the same report, a radiologist and a labeller trained on their reads)
  agree more than the model allows; ``z_both_positive`` is the observed minus fitted share over its binomial
  standard error. With three readers that model is saturated (it fits every pattern) and shows nothing; the
  *score-aware* check (:func:`joint_agreement`) compares each pair's agreement with what the joint model of the
  readers and the models' scores implies given the scores and the other readers, which the models' scores keep
  testable with three readers (``z_agreement_joint``).
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
    "joint_agreement",
    "pair_flagged",
    "pair_rows",
    "saturated",
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
    "fitted_agreement_joint",
    "z_agreement_joint",
)
"""Columns of ``latent_reader_agreement.csv``: the readers-only check (``fitted_*``, ``z_both_positive``; NaN
where that model is saturated) and the score-aware one (``fitted_agreement_joint``, ``z_agreement_joint``; NaN for a
reader of a declared group or without the independent score model)."""
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
                    "fitted_agreement_joint": float("nan"),
                    "z_agreement_joint": float("nan"),
                }
            )
    return rows


def _log_ratio(y: np.ndarray, se: float, sp: float) -> np.ndarray:
    """Each study's ``log P(label | T = 1) / P(label | T = 0)`` of one reader (0 where it gives no label)."""
    se, sp = float(np.clip(se, 1e-6, 1 - 1e-6)), float(np.clip(sp, 1e-6, 1 - 1e-6))
    out = np.where(y == 1, np.log(se / (1 - sp)), np.log((1 - se) / sp))
    return np.where(np.isnan(y), 0.0, out)


def joint_agreement(
    labels: np.ndarray, fit: LatentClassFit
) -> dict[tuple[int, int], tuple[int, float, float]]:
    """The score-aware pair check: per pair of readers ``(a, b)``, on the studies both label, ``(n_both, fitted
    share agreeing, z)``. ``fit`` is the joint fit of the readers and the models' scores under conditional
    independence (``'spline'``): its posterior of study ``i`` with readers ``a`` and ``b`` taken out,
    ``q_i = P(T = 1 | scores, other readers)``, gives the agreement the model implies,
    ``e_i = q_i (Se_a Se_b + (1 - Se_a)(1 - Se_b)) + (1 - q_i)(Sp_a Sp_b + (1 - Sp_a)(1 - Sp_b))``; ``z`` is the
    observed count agreeing minus ``sum e_i`` over ``sqrt(sum e_i (1 - e_i))``. The fitted accuracies take in part
    of a shared error, so the check is conservative (under independence ``|z|`` stays mostly below 2)."""
    from scipy.special import expit, logit

    se, sp = fit.sensitivity, fit.specificity
    post = np.clip(np.asarray(fit.posterior, dtype=float), 1e-12, 1 - 1e-12)
    ratios = [_log_ratio(labels[:, r], se[r], sp[r]) for r in range(labels.shape[1])]
    out: dict[tuple[int, int], tuple[int, float, float]] = {}
    for a in range(labels.shape[1]):
        for b in range(a + 1, labels.shape[1]):
            both = ~np.isnan(labels[:, a]) & ~np.isnan(labels[:, b])
            if not both.any() or not np.isfinite([se[a], sp[a], se[b], sp[b]]).all():
                continue
            q = expit(logit(post) - ratios[a] - ratios[b])[both]
            e = q * (se[a] * se[b] + (1 - se[a]) * (1 - se[b])) + (1 - q) * (
                sp[a] * sp[b] + (1 - sp[a]) * (1 - sp[b])
            )
            sd = float(np.sqrt((e * (1 - e)).sum()))
            observed = float((labels[both, a] == labels[both, b]).sum())
            z = (observed - float(e.sum())) / sd if sd > 0 else float("nan")
            out[(a, b)] = (int(both.sum()), float(e.mean()), z)
    return out


def saturated(labels: np.ndarray, groups: tuple[tuple[int, ...], ...]) -> bool:
    """Whether the readers-only model has as many parameters as the readers' joint patterns have degrees of
    freedom (three independent readers: 7 and 7), so that no pair of readers can be checked."""
    has = (~np.isnan(labels)).any(axis=0)
    grouped = {j for g in groups for j in g}
    cats = [2 for j in range(has.size) if has[j] and j not in grouped]
    cats += [2 ** len(g) for g in groups if has[list(g)].any()]  # a group: its complete label patterns
    df = int(np.prod(cats)) - 1 if cats else 0
    return 1 + sum(2 * (c - 1) for c in cats) >= df


def pair_rows(
    finding: str,
    readers: Sequence[str],
    labels: np.ndarray,
    readers_only: LatentClassFit,
    joint: LatentClassFit | None,
    scored: np.ndarray,
    groups: tuple[tuple[int, ...], ...],
) -> list[dict[str, object]]:
    """The rows of ``latent_reader_agreement.csv`` of one finding: both checks for every pair of readers (``labels``
    (n, R)), the pairs within a declared group left out (their dependence is modelled). The readers-only check is
    NaN where that model is saturated; the score-aware one uses ``joint`` (the ``'spline'`` joint fit on the
    studies ``scored``; None: not run) and is NaN for a reader of a group (it has no accuracy of its own)."""
    within = {(a, b) for g in groups for a in g for b in g}
    rows = [
        row
        for row in reader_agreement_rows(finding, readers, labels, readers_only)
        if (readers.index(str(row["source_a"])), readers.index(str(row["source_b"]))) not in within
    ]
    if saturated(labels, groups):
        for row in rows:
            row["z_both_positive"] = float("nan")
    if joint is not None:
        grouped = {j for g in groups for j in g}
        fitted = joint_agreement(labels[scored], joint)
        for row in rows:
            key = (readers.index(str(row["source_a"])), readers.index(str(row["source_b"])))
            if key in fitted and not grouped & set(key):
                row["fitted_agreement_joint"], row["z_agreement_joint"] = fitted[key][1:]
    return rows


def pair_flagged(row: dict[str, object]) -> bool:
    """Whether a row of ``latent_reader_agreement.csv`` flags its pair: ``|z| >= FLAG_Z`` in either check."""
    zs = (float(str(row.get("z_both_positive", "nan"))), float(str(row.get("z_agreement_joint", "nan"))))
    return any(np.isfinite(z) and abs(z) >= FLAG_Z for z in zs)


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
