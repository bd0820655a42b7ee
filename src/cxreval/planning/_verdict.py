"""What a relabelling plan tells its user, in words: per finding the budget that reaches the target power or why
none can (``budget.csv``'s rows and their ``verdict``), the models merged for having identical scores, why the power
curve has the shape it has, and what the plan's priority order helps."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from ._planner import FindingFit, PowerCurve

__all__ = [
    "budget_row",
    "merged_models",
    "curve_shape",
    "curve_falls",
    "draws_in_effect",
    "POWER_CALIBRATION",
    "headline",
]

POWER_CALIBRATION = (
    "The power assumes the latent model, since the truths are drawn from it. On 150 simulated study sets of 500 "
    "studies (one cheap reference, three models of close AUCs; the bench part planning:power_calibration) the mean "
    "predicted probability of the right decision was 0.05, 0.07, 0.09 and 0.15 at 25, 50, 100 and 200 studies, and "
    "the observed frequency 0.03, 0.05, 0.08 and 0.10; where the prediction was above 0.2 the observed frequency was "
    "about half of it or less: read it as a guide to the budget and an upper bound, not as a certainty for one "
    "finding."
)


def _names(items: Sequence[str]) -> str:
    items = list(items)
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def _z(p: float) -> float:
    from scipy.special import ndtri

    return float(ndtri(p))


def budget_row(
    ff: FindingFit, curve: PowerCurve, *, target_power: float, confidence_level: float
) -> dict[str, object]:
    """One row of ``budget.csv``: the budget that reaches ``target_power`` or the sentence that none can, and why.

    ``resolvable_delta`` is the AUC difference that relabelling every study would detect with ``target_power``,
    by the normal approximation ``(z_{1-alpha/2} + z_{power}) * SE``, ``SE`` the median half-width of the interval
    with every study relabelled (``half_width_all``) over ``z_{1-alpha/2}``."""
    f = ff.data.finding
    same = "; ".join(f"{k} = {' = '.join(v)}" for k, v in ff.data.copies.items())
    row: dict[str, object] = {
        "finding": f,
        "best": ff.best,
        "runner_up": ff.runner_up or "none",
        "same_scores": same,
        "delta": ff.delta if ff.runner_up else float("nan"),
        "target_power": target_power,
        "budget_needed": curve.needed,
        "p_right": curve.at_needed[0] if curve.needed is not None else curve.at_all[0],
        "mc_se": curve.at_needed[1] if curve.needed is not None else curve.at_all[1],
        "n_studies": curve.n_all,
        "p_all": curve.at_all[0],
        "half_width_all": curve.half_all,
        "resolvable_delta": float("nan"),
        "verdict": "",
    }
    if ff.runner_up is None:
        row["verdict"] = (
            f"{f}: every model has the same scores ({_names([ff.best, *ff.data.copies.get(ff.best, ())])}): "
            "no relabelling can separate them."
        )
        return row
    z = _z(0.5 + confidence_level / 2)
    resolvable = (z + _z(target_power)) * curve.half_all / z if np.isfinite(curve.half_all) else float("nan")
    row["resolvable_delta"] = resolvable
    pair = f"{ff.best} from {ff.runner_up}"
    now = f"{f}: the current labels separate {pair} (comparison.csv); " if curve.separable_now else f"{f}: "
    if curve.needed is not None:
        row["verdict"] = now + (
            f"relabelling {curve.needed} studies drawn by the plan's design separates {pair} with the best on "
            f"top with probability {curve.at_needed[0]:.2f} (target {target_power:g}; the latent model's "
            "prediction, which ran high above 0.2 on simulated study sets with one cheap reference: read the budget "
            "as a lower bound)."
        )
    else:
        row["verdict"] = now + (
            f"relabelling cannot separate {pair}: their AUCs differ by "
            + (f"{abs(ff.delta):.3f}" if abs(ff.delta) >= 0.001 else "less than 0.001")
            + f" (two-phase estimate), and with all {curve.n_all} studies relabelled the "
            f"{round(100 * confidence_level)}% interval of the difference would still be ±{curve.half_all:.3f} "
            f"wide, so only a difference of about {resolvable:.3f} or more would be found with probability "
            f"{target_power:g} (predicted probability of the right decision with every study relabelled: "
            f"{curve.at_all[0]:.2f})."
        )
    return row


def merged_models(copies: dict[str, dict[str, tuple[str, ...]]], n_models: int) -> str:
    """The sentence on models merged for identical scores (``{finding: {kept: copies}}``), or ``''``."""
    sets: dict[tuple[str, ...], list[str]] = {}
    for f, groups in copies.items():
        for kept, others in groups.items():
            sets.setdefault((kept, *others), []).append(f)
    if not sets:
        return ""
    models = sorted({m for group in sets for m in group})
    parts = [f"{' = '.join(g)} on {_names(sorted(fs))}" for g, fs in sorted(sets.items())]
    return (
        f"{len(models)} of the {n_models} models give identical scores on some findings ({'; '.join(parts)}): "
        "no relabelling can separate models with the very same scores, so each set is one model to the plan, "
        "named by its first (the plan's tables list the distinct models only)."
    )


def curve_shape(power: pd.DataFrame) -> str:
    """Why the power curves (``power.csv``) have their shape, from the table itself: the effective draws behind
    every point, and each fall of a curve read as Monte Carlo noise (within 2 standard errors) or as the
    estimate's own behaviour."""
    rows = power.dropna(subset=["p_right"])
    if rows.empty:
        return ""
    intro = (
        f"Each point is a Monte Carlo estimate from the draws in effect once weighted ({draws_in_effect(rows)}); the "
        "figure's bars are ±2 standard errors. The same draws of the truth and of the design's random order serve every budget, and one draw's verdict can change "
        "as more of its truths are revealed, so a curve need not rise with the budget."
    )
    return " ".join([intro, *curve_falls(rows)])


def draws_in_effect(power: pd.DataFrame) -> str:
    """``'Atelectasis 218, Edema 299 of 400'``: each finding's effective draws of ``power.csv``, of the draws."""
    ess = power.groupby("finding", sort=False)["effective_draws"].first()
    return f"{', '.join(f'{f} {e:.0f}' for f, e in ess.items())} of {int(power['n_draws'].iloc[0])}"


def curve_falls(power: pd.DataFrame) -> list[str]:
    """One sentence per curve of ``power.csv`` that falls by 0.05 or more: its fall, read as Monte Carlo noise
    (within 2 standard errors) or as the two-phase interval's small-budget overconfidence."""
    rows = power.dropna(subset=["p_right"])
    ess = rows.groupby("finding", sort=False)["effective_draws"].first()
    out = []
    for f, g in rows.groupby("finding", sort=False):
        p, se, k = g["p_right"].to_numpy(), g["mc_se"].to_numpy(), g["budget"].to_numpy()
        if len(p) < 2:
            continue
        i = int(np.argmax(p))
        j = i + int(np.argmin(p[i:]))
        drop = p[i] - p[j]
        if drop < 0.05:
            continue
        sd = float(np.hypot(se[i], se[j]))
        if sd > 0 and drop <= 2 * sd:
            why = (
                f"within {drop / sd:.1f} Monte Carlo standard errors ({ess[f]:.0f} draws in effect): noise; "
                "more draws (n_draws) steady it"
            )
        else:
            why = (
                "beyond Monte Carlo noise: with few labelled studies the interval's variance is estimated from "
                "few residuals and runs narrow, so small budgets are credited with separations that more labels "
                "withdraw"
            )
        out.append(f"{f} falls from {p[i]:.2f} at {k[i]} studies to {p[j]:.2f} at {k[j]}, {why}.")
    return out


def headline(needed: pd.DataFrame) -> str:
    """One line for the command: the findings with a budget for the target power, and those relabelling cannot
    settle."""
    if needed.empty:
        return ""
    target = float(needed["target_power"].iloc[0])
    ok = needed[needed["budget_needed"].notna()]
    no = needed[needed["budget_needed"].isna()]["finding"].tolist()
    parts = [f"{r.finding} {int(r.budget_needed)}" for r in ok.itertuples()]
    return (
        f"budget for power {target:g}{' (lower bounds: the predicted power runs high)' if parts else ''}: "
        + ("; ".join(parts) if parts else "none")
        + (f"; relabelling cannot separate the leading models of {_names(no)} (see summary.md)" if no else "")
    )
