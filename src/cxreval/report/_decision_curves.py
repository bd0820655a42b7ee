"""The report's blocks for a classify folder's operating points (``operating_points.csv``) and decision curves
(``decision_curve.csv``): a table of the rates with their intervals, and net benefit against the threshold
probability, one line per model plus treat all / treat none, a menu switching finding and reference."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import plotly.graph_objects as go

from .._plots import analyses as plots
from ..classification import OperatingPointResult
from ..classification._operating_points import (
    DECISION_CURVE_COLUMNS,
    OPERATING_POINT_COLUMNS,
    TREAT_ALL,
    TREAT_NONE,
    rate_cells,
)
from ._blocks import Block, table_block
from .html_tables import html_table

__all__ = ["build_decision_curves", "best_net_benefit"]

_FILES = OperatingPointResult.FILES
_STRATEGIES = (TREAT_ALL, TREAT_NONE)


def _panels(d: pd.DataFrame) -> list[tuple[str, pd.DataFrame]]:
    keys = d["finding"].astype(str) + " · " + d["reference"].astype(str)
    return [(k, d[keys == k]) for k in plots.ordered(keys)]


def _y_range(panel: pd.DataFrame) -> list[float]:
    """The net benefit axis of one finding × reference: from a little below 0 to a little above the prevalence or
    the best model, whichever is higher (treat all falls far below 0 at high thresholds; the models stay legible,
    a finding of 0.2% as one of 18%)."""
    models = panel[~panel["model"].astype(str).isin(_STRATEGIES)]
    top = max(
        pd.to_numeric(panel["prevalence"], errors="coerce").max(),
        pd.to_numeric(models["net_benefit"], errors="coerce").max(),
    )
    top = 1.1 * max(float(top) if pd.notna(top) else 0.0, 1e-3)
    return [-0.1 * top, top]


def decision_curve_figure(d: pd.DataFrame) -> go.Figure | None:
    """Net benefit against the threshold probability, a line per model and strategy (dashed), one panel per
    finding × reference shown at a time (the menu switches it and its net benefit axis)."""
    panels = _panels(d)
    if not panels:
        return None
    fig = go.Figure()
    visible: list[list[bool]] = []
    for i, (_, g) in enumerate(panels):
        start = len(fig.data)
        for model, m in g.groupby("model", sort=False):
            strategy = str(model) in _STRATEGIES
            fig.add_trace(
                go.Scatter(
                    x=pd.to_numeric(m["threshold"], errors="coerce"),
                    y=pd.to_numeric(m["net_benefit"], errors="coerce"),
                    name=str(model),
                    mode="lines",
                    visible=i == 0,
                    line={"dash": "dash", "color": "grey" if model == TREAT_ALL else "black"}
                    if strategy
                    else {},
                )
            )
        visible.append([start <= j < len(fig.data) for j in range(len(fig.data))])
    n = len(fig.data)
    ranges = [_y_range(g) for _, g in panels]
    buttons = [
        {
            "label": k,
            "method": "update",
            "args": [{"visible": v + [False] * (n - len(v))}, {"yaxis.range": r}],
        }
        for (k, _), v, r in zip(panels, visible, ranges)
    ]
    fig.update_layout(
        title="Decision curve: net benefit per model, against treating all and treating none",
        xaxis_title="threshold probability",
        yaxis_title="net benefit",
        yaxis_range=ranges[0],
        height=600,
        margin={"t": 120},  # the title, then the menu just above the plot area, clear of each other
        updatemenus=[{"buttons": buttons, "x": 0, "xanchor": "left", "y": 1.02, "yanchor": "bottom"}]
        if len(buttons) > 1
        else [],
    )
    return fig


def best_net_benefit(curve: pd.DataFrame) -> pd.DataFrame:
    """Per finding × reference, the threshold ranges where one model has the highest net benefit of all models and
    beats both strategies (columns ``finding``, ``reference``, ``model``, ``lowest``, ``highest``)."""
    models = curve[~curve["model"].astype(str).isin(_STRATEGIES)].copy()
    models["net_benefit"] = pd.to_numeric(models["net_benefit"], errors="coerce")
    strat = curve[curve["model"].astype(str).isin(_STRATEGIES)]
    keys = ["finding", "reference", "threshold"]
    floor = pd.to_numeric(strat["net_benefit"], errors="coerce").groupby([strat[k] for k in keys]).max()
    rows = []
    for (f, r), g in models.groupby(["finding", "reference"], sort=False):
        top = g.loc[g.groupby("threshold")["net_benefit"].idxmax()].sort_values("threshold")
        base = floor.reindex(pd.MultiIndex.from_frame(top[keys])).to_numpy()
        top = top[top["net_benefit"].to_numpy() > base]
        for _, run in top.groupby((top["model"] != top["model"].shift()).cumsum(), sort=False):
            rows.append(
                {
                    "finding": f,
                    "reference": r,
                    "model": run["model"].iloc[0],
                    "lowest": float(run["threshold"].min()),
                    "highest": float(run["threshold"].max()),
                }
            )
    return pd.DataFrame(rows, columns=["finding", "reference", "model", "lowest", "highest"])


def _best_sentence(curve: pd.DataFrame) -> str:
    best = best_net_benefit(curve)
    text = (
        "Net benefit counts the true positives a model's threshold finds, less its false positives weighted by "
        "the odds of the threshold probability pt (TP/n − FP/n · pt/(1 − pt)): a model is useful at pt where its "
        "curve lies above both treating everyone and treating no one."
    )
    if best.empty:
        return text + " No model beats both strategies anywhere on the curve."
    parts = [
        f"{r.finding} ({r.reference}): {r.model} over {r.lowest:g}–{r.highest:g}"
        for r in best.sort_values("highest", key=lambda s: best["lowest"] - s)
        .drop_duplicates(["finding", "reference"])
        .itertuples()
    ]
    return text + " Highest net benefit, widest range per finding: " + "; ".join(parts) + "."


def _rates_table(d: pd.DataFrame) -> str:
    return html_table(
        rate_cells(d), name="operating_points_ci", caption="Rates at each operating point [95% CI]"
    )


def build_decision_curves(folder: Path) -> list[Block]:
    """The operating-point and decision-curve blocks of a classify folder (none when it holds neither file)."""
    ops = table_block(
        "Operating points",
        folder,
        _FILES["operating_points"],
        OPERATING_POINT_COLUMNS,
        extra=_rates_table,
        how="Each row is one model at one operating point (a fixed threshold, a target specificity or "
        "sensitivity, or Youden's J) under one reference: sensitivity, specificity, PPV and NPV with "
        "patient-bootstrap intervals; a study is positive where its score ≥ the threshold.",
    )
    curve = table_block(
        "Decision curves",
        folder,
        _FILES["decision_curve"],
        DECISION_CURVE_COLUMNS,
        figure=decision_curve_figure,
        extra=lambda d: f"<p>{_best_sentence(d)}</p>",
        how="Each line is one model's net benefit at each threshold probability; the dashed lines are "
        "treating everyone (grey) and no one (black). The menu switches finding and reference.",
    )
    return [b for b in (ops, curve) if b]
