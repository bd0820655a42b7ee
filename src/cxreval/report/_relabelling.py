"""The report's section and key finding for a relabelling plan (a ``cxreval plan`` folder).

The folder holds the plan (``relabel.csv``: the studies an expert should relabel first; ``power.csv``: the
probability that the best model becomes separable from the runner-up per budget) and the current two-phase
estimate (``auc.csv``, ``comparison.csv``: the leading pair per finding). Its ``auc.csv`` is not a
classification table (no ``reference`` column: one estimate against the latent truth), so the folder is this
kind's alone (``Kind.replaces``).
"""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
import plotly.graph_objects as go

from ..planning import RelabelPlanResult, TwoPhaseAUCResult
from ..planning._estimate import COMPARISON_COLUMNS
from ..planning._plan_result import RELABEL_COLUMNS
from ..planning._verdict import curve_falls, draws_in_effect
from ._blocks import Block, difference_figure, table_block
from ._key_finding_base import KeyFinding, _ci, _load, _num, _str, fmt
from ._thresholds import Thresholds

__all__ = ["build_relabelling", "relabelling_finding"]

_POWER = ("finding", "best", "runner_up", "budget", "p_separable")


_COMPARISON_TITLE = "Best model minus runner-up, two-phase estimate"
_POWER_SHAPE = (
    "Why a curve can wobble or fall: each point is estimated by simulating the expert's answers many times, so it "
    "carries a Monte Carlo error; the bars are ±2 of its standard errors, and a point can move about that much "
    "with another seed or more draws. The curve need not rise with the budget: the same simulated answers serve "
    "every budget, and with only a few relabelled studies the two-phase interval is too narrow (it leaves out how "
    "unsure the model of the labels still is), so a small budget can be credited with a separation that more "
    "labels take back. A fall at small budgets is that overconfidence, not harm done by relabelling more. "
)
"""The plain words beside the power chart on the shape of its curves."""


def _curve_shape(folder: Path) -> str:
    """This plan's own reading of its curves (draws in effect, each fall as noise or overconfidence), or ''."""
    power = _load(folder, RelabelPlanResult.FILES["power"], (*_POWER, "mc_se", "n_draws", "effective_draws"))
    if power is None:
        return ""
    if (
        "p_right" not in power.columns
    ):  # a plan before the right-decision power: its curves are read elsewhere
        return ""
    power = power.dropna(subset=["p_right"])
    if power.empty:
        return ""
    return " ".join(
        [f"In this plan, the draws in effect once weighted: {draws_in_effect(power)}.", *curve_falls(power)]
    )


def _comparison_figure(d: pd.DataFrame) -> go.Figure | None:
    return difference_figure(
        d, "delta", ("model_a", "model_b"), joiner=" − ", title=_COMPARISON_TITLE, value_title="ΔAUC"
    )


def build_relabelling(folder: Path) -> list[Block]:
    files = RelabelPlanResult.FILES
    power = table_block(
        "How many relabelled studies are enough?",
        folder,
        files["power"],
        _POWER,
        figure=RelabelPlanResult.figure,
        how="Each line is one finding: the predicted probability that the best model's interval "
        "against the runner-up excludes 0 once an expert has relabelled that many of the "
        "top-priority studies (budget 0: the labels as they are). The method column says how it "
        "is computed; read it as a guide to the budget, not a certainty for one finding. "
        + _POWER_SHAPE
        + _curve_shape(folder),
    )
    relabel = table_block(
        "Studies to relabel, in priority order",
        folder,
        files["relabel"],
        RELABEL_COLUMNS[:4],
        how="Priority 1 first: the studies whose true label would change the leading pair's ΔAUC "
        "the most (expected absolute change, summed over findings), with the reason in words. "
        "study.yaml and images.csv beside it are the reader study that collects those labels "
        "(cxreval reader init --study study.yaml --db sqlite:///relabel.db).",
        shown=True,
    )
    auc = table_block(
        "Two-phase AUC estimate",
        folder,
        files["auc"],
        ("finding", "model", "auc"),
        figure=TwoPhaseAUCResult.figure,
        how="Each marker is one model's AUC against the truth estimated from the references (and the "
        "expert's labels where the folder's anchor has them); auc_reference is the same model "
        "against the cheap reference alone, for comparison.",
    )
    comp = table_block(
        "Is the best model separable now?",
        folder,
        files["comparison"],
        COMPARISON_COLUMNS[:6],
        figure=_comparison_figure,
        how="Each row is a finding's best model minus its runner-up under the two-phase estimate, "
        "with its interval; an interval that covers 0 means the current labels do not settle "
        "which of the two is better.",
    )
    return [b for b in (relabel, power, comp, auc) if b]  # the list to act on first, open


def relabelling_finding(folder: Path, th: Thresholds) -> KeyFinding | None:
    """Which findings the current labels already settle, and for the hardest one left how likely the planned
    budget is to settle it (``power.csv`` at its largest budget, ``comparison.csv`` now)."""
    del th  # the verdict is a probability and an interval, not a band
    comp = _load(folder, RelabelPlanResult.FILES["comparison"], COMPARISON_COLUMNS[:6])
    power = _load(folder, RelabelPlanResult.FILES["power"], _POWER)
    if comp is None or power is None:
        return None
    col = "p_right" if "p_right" in power.columns else "p_separable"  # a plan before the right-decision power
    power = power.assign(_b=_num(power, "budget"), _p=_num(power, col)).dropna(subset=["_b", "_p"])
    if power.empty:
        return None
    budget = int(power["_b"].max())
    at = power[power["_b"] == budget].assign(finding=lambda d: _str(d, "finding"))
    comp = comp.assign(
        finding=_str(comp, "finding"),
        _d=_num(comp, "delta"),
        _lo=_num(comp, "ci_low"),
        _hi=_num(comp, "ci_high"),
    )
    settled = comp[(comp["_lo"] > 0) | (comp["_hi"] < 0)]["finding"].tolist()
    open_ = at[~at["finding"].isin(settled)]
    n = len(comp)
    head = (
        f"The current labels settle the best model (its interval against the runner-up excludes 0) for "
        f"{len(settled)} of {n} finding{'s' if n != 1 else ''}"
        + (f" ({', '.join(settled)})" if settled else "")
    )
    if open_.empty:
        return KeyFinding(
            "relabelling", head + "; relabelling is not needed to say which model is best.", "settled now"
        )
    hard = open_.sort_values("_p", kind="stable").iloc[0]
    row = comp[comp["finding"] == hard["finding"]]
    now = ""
    if len(row):
        r = row.iloc[0]
        level = float(_num(row, "confidence_level").iloc[0])
        iv = f", {_ci(folder, r['_lo'], r['_hi'], level=level, digits=3)}" if math.isfinite(r["_lo"]) else ""
        now = f", now ΔAUC {fmt(r['_d'], 3)}{iv}"
    k = len(open_)
    text = (
        f"{head}. After {budget} studies of the plan's sample are relabelled, the predicted probability of "
        + ("the right decision on " if col == "p_right" else "settling ")
        + f"{hard['finding']} ({hard['best']} against {hard['runner_up']}{now}) is {fmt(hard['_p'])}"
        + (f", the lowest of the {k} findings not yet settled" if k > 1 else "")
    )
    name = "P(right decision)" if col == "p_right" else "P(separable)"
    return KeyFinding("relabelling", text + ".", f"{name} {fmt(hard['_p'])} at {budget} studies")
