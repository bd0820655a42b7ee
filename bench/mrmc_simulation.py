"""Roe and Metz studies analysed by the Obuchowski-Rockette test: its size under the null, its power, and the power
Hillis, Obuchowski and Berbaum's (2011) method predicts for it.

- :func:`size_and_power`: ``n_null`` studies with equal AUCs and ``n_alt`` with an AUC difference ``effect``, each
  tested by OR RRRC (Hillis's ddf) with the jackknife and the DeLong covariance; the rejection rates at alpha = 0.05
  with Clopper-Pearson intervals, and the power predicted from the mean components of the null studies (the
  study's own design as the pilot: :func:`cxreval.mrmc.mrmc_sample_size`);
- :func:`null_sweep`: the size in each of Roe and Metz's twelve settings;
- :func:`predicted_vs_simulated`: pilots simulated at one size predict the power at others, against the rejection
  rate of studies simulated at those sizes;
- :func:`split_plot`: the size and power of OR RRRC in a split-plot design (pairs of readers each read their own
  block of cases, blocks of unequal size), readers weighted equally and by the case pairs they read.

Usage: python bench/mrmc_simulation.py [N_NULL] [N_ALT]
"""

from __future__ import annotations

import sys
import time

import numpy as np
from scipy.stats import binomtest

from cxreval.mrmc import (
    ROE_METZ_SETTINGS,
    PilotVarianceComponents,
    mrmc_sample_size,
    or_analysis,
    simulate_roe_metz_studies,
)

__all__ = [
    "COVARIANCES",
    "SPLIT_PLOT_BLOCKS",
    "size_and_power",
    "null_sweep",
    "predicted_vs_simulated",
    "split_plot",
]

COVARIANCES = ("jackknife", "delong")
SPLIT_PLOT_BLOCKS = ((20, 20), (40, 40), (60, 60))
"""(non-diseased, diseased) cases of each block of the split-plot design; two readers read each block."""
ALPHA = 0.05


def _rate(rejected: np.ndarray) -> dict[str, float]:
    k, n = int(rejected.sum()), int(rejected.size)
    ci = binomtest(k, n).proportion_ci(0.95)
    return {"rate": k / n, "low": float(ci.low), "high": float(ci.high), "n": n}


def _pilot(components: list, n_cases: int) -> PilotVarianceComponents:
    """The mean of many studies' OR component estimates: the study design's own components."""
    m = {
        k: float(np.mean([getattr(c, k) for c in components]))
        for k in ("var_error", "cov1", "cov2", "cov3", "ms_treatment_reader")
    }
    var_tr = m["ms_treatment_reader"] - m["var_error"] + m["cov1"] + max(m["cov2"] - m["cov3"], 0.0)
    return PilotVarianceComponents(var_tr, m["var_error"], m["cov1"], m["cov2"], m["cov3"], n_cases)


def size_and_power(
    n_null: int,
    n_alt: int,
    *,
    setting: str = "HL-1.5",
    n_readers: int = 5,
    n_negative: int = 50,
    n_positive: int = 50,
    effect: float = 0.05,
    seed: int = 0,
) -> dict[str, object]:
    p = ROE_METZ_SETTINGS[setting]
    out: dict[str, object] = {"setting": setting, "auc": p.auc(), "effect": effect}
    t0 = time.perf_counter()
    null = simulate_roe_metz_studies(
        n_null,
        n_readers=n_readers,
        n_cases_negative=n_negative,
        n_cases_positive=n_positive,
        parameters=p,
        rng=seed,
    )
    alt = simulate_roe_metz_studies(
        n_alt,
        n_readers=n_readers,
        n_cases_negative=n_negative,
        n_cases_positive=n_positive,
        delta=p.shift_for_auc(p.auc() + effect),
        parameters=p,
        rng=seed + 1,
    )
    out["simulate_seconds"] = time.perf_counter() - t0
    for cov in COVARIANCES:
        t0 = time.perf_counter()
        res = [or_analysis(s.ratings, s.truth, covariance=cov) for s in null]
        seconds_null = time.perf_counter() - t0
        alt_p = np.array([or_analysis(s.ratings, s.truth, covariance=cov).rrrc.test.p_value for s in alt])
        n_cases = n_negative + n_positive
        predicted = mrmc_sample_size(
            _pilot([r.components for r in res], n_cases), effect=effect, n_readers=n_readers, n_cases=n_cases
        ).power_at(n_readers, n_cases)
        out[cov] = {
            "size": _rate(np.array([r.rrrc.test.p_value < ALPHA for r in res])),
            "power": _rate(alt_p < ALPHA),
            "predicted_power": predicted,
            "seconds_per_study": seconds_null / n_null,
            "seconds": time.perf_counter() - t0,
        }
    return out


def null_sweep(
    n_null: int,
    *,
    n_readers: int = 5,
    n_negative: int = 50,
    n_positive: int = 50,
    covariance: str = "jackknife",
    seed: int = 0,
) -> list[dict[str, object]]:
    rows = []
    for i, (name, p) in enumerate(ROE_METZ_SETTINGS.items()):
        sims = simulate_roe_metz_studies(
            n_null,
            n_readers=n_readers,
            n_cases_negative=n_negative,
            n_cases_positive=n_positive,
            parameters=p,
            rng=seed + 100 + i,
        )
        rej = np.array(
            [or_analysis(s.ratings, s.truth, covariance=covariance).rrrc.test.p_value < ALPHA for s in sims]
        )
        rows.append({"setting": name, "auc": p.auc(), **_rate(rej)})
    return rows


def predicted_vs_simulated(
    n_pilots: int,
    n_studies: int,
    *,
    setting: str = "LH-0.75",
    effect: float = 0.075,
    n_readers: int = 6,
    cases: tuple[int, ...] = (120, 200, 300),
    seed: int = 0,
) -> dict[str, object]:
    """Pilots of 5 readers x 100 cases (50 + 50) with the effect; the planned studies have ``n_readers`` readers
    and each number of ``cases`` (half diseased)."""
    p = ROE_METZ_SETTINGS[setting]
    delta = p.shift_for_auc(p.auc() + effect)
    pilots = simulate_roe_metz_studies(
        n_pilots, n_readers=5, n_cases_negative=50, n_cases_positive=50, delta=delta, parameters=p, rng=seed
    )
    pilot = _pilot([or_analysis(s.ratings, s.truth).components for s in pilots], 100)
    plan = mrmc_sample_size(pilot, effect=effect, n_readers=n_readers, n_cases=list(cases))
    rows = []
    for i, k in enumerate(cases):
        sims = simulate_roe_metz_studies(
            n_studies,
            n_readers=n_readers,
            n_cases_negative=k - k // 2,
            n_cases_positive=k // 2,
            delta=delta,
            parameters=p,
            rng=seed + 1 + i,
        )
        rej = np.array([or_analysis(s.ratings, s.truth).rrrc.test.p_value < ALPHA for s in sims])
        rows.append({"n_cases": k, "predicted": plan.power_at(n_readers, k), **_rate(rej)})
    return {
        "setting": setting,
        "effect": effect,
        "pilot": pilot,
        "rows": rows,
        "minimum_cases": plan.minimum_cases,
    }


def _split(
    ratings: np.ndarray, truth: np.ndarray, blocks=SPLIT_PLOT_BLOCKS, readers_per_block: int = 2
) -> np.ndarray:
    """The ratings with every reader's readings outside its block removed (NaN)."""
    out = ratings.copy()
    neg, pos = np.flatnonzero(truth == 0), np.flatnonzero(truth == 1)
    on = op = 0
    for g, (a, b) in enumerate(blocks):
        keep = np.zeros(truth.size, bool)
        keep[neg[on : on + a]] = keep[pos[op : op + b]] = True
        on, op = on + a, op + b
        out[:, g * readers_per_block : (g + 1) * readers_per_block, ~keep] = np.nan
    return out


def split_plot(
    n_null: int, n_alt: int, *, setting: str = "HL-1.5", effect: float = 0.05, seed: int = 0
) -> dict[str, object]:
    """OR RRRC (jackknife) on split-plot Roe and Metz studies: 3 blocks of cases (``SPLIT_PLOT_BLOCKS``), 2 readers
    each; the rejection rate at alpha = 0.05 of null studies and of studies with an AUC difference ``effect``, with
    readers weighted equally and by case pairs."""
    n_neg, n_pos = (sum(b[i] for b in SPLIT_PLOT_BLOCKS) for i in (0, 1))
    n_readers = 2 * len(SPLIT_PLOT_BLOCKS)
    params = ROE_METZ_SETTINGS[setting]
    shift = params.shift_for_auc(params.auc() + effect)
    out: dict[str, object] = {
        "setting": setting,
        "auc": params.auc(),
        "effect": effect,
        "n_readers": n_readers,
    }
    t0 = time.perf_counter()
    for kind, n, delta in (("size", n_null, 0.0), ("power", n_alt, shift)):
        sims = simulate_roe_metz_studies(
            n,
            n_readers=n_readers,
            n_cases_negative=n_neg,
            n_cases_positive=n_pos,
            delta=delta,
            parameters=setting,
            rng=seed + (kind == "power"),
        )
        for weights in ("equal", "case_pairs"):
            rejected = np.array(
                [
                    or_analysis(
                        _split(sims.study(i).ratings, sims.study(i).truth),
                        sims.study(i).truth,
                        reader_weights=weights,
                    ).rrrc.test.p_value
                    < ALPHA
                    for i in range(n)
                ]
            )
            out[f"{weights} | {kind}"] = _rate(rejected)
    out["seconds"] = time.perf_counter() - t0
    return out


if __name__ == "__main__":
    n_null = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
    n_alt = int(sys.argv[2]) if len(sys.argv) > 2 else 2000
    print(size_and_power(n_null, n_alt))
