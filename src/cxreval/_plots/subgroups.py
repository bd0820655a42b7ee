"""Figures of the subgroup tables (:mod:`cxreval.subgroups`): the forest plot of the gaps by subgroup and reference,
and the reliability diagrams of the models."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from .style import base_layout, dropdown, interval_error, num, ordered, palette_color, ref_color

__all__ = ["subgroup_forest", "reliability_diagram", "METRIC_WORDS"]

METRIC_WORDS = {
    "auc": "AUC",
    "sensitivity": "sensitivity",
    "specificity": "specificity",
    "fnr": "false-negative rate (under-diagnosis)",
    "selection_rate": "selection rate",
}
"""How each metric of ``subgroups.csv`` is named on a page."""


def _flag(d: pd.DataFrame, col: str) -> np.ndarray:
    return d[col].astype(str).str.lower().isin(("true", "1")).to_numpy()


def _height(n_rows: int) -> int:
    """A forest plot's height for ``n_rows`` rows: 24 px a row (two references' markers and labels clear of each
    other) below the title, menu and legend."""
    return max(380, 230 + 24 * n_rows)


def subgroup_forest(table: pd.DataFrame, *, metric: str = "auc") -> go.Figure | None:
    """Forest plot of the gaps (group − comparator) of ``metric`` in ``subgroups.csv``: one panel per finding and
    attribute (menu), one row per group and model, one marker per reference (colour) with its interval, filled
    where the gap is significant after Holm's adjustment and open where it is not; rows not estimable are left
    out (the table keeps them with their reason). None without an estimable gap of ``metric``."""
    d = table[(table["metric"].astype(str) == metric) & _flag(table, "estimable")].copy()
    d = d[np.isfinite(num(d, "gap"))]
    if d.empty:
        return None
    d["_sig"] = _flag(d, "significant")
    refs = ordered(d["reference"], summary_first=False)
    width = 0.6 / max(len(refs), 1)
    words = METRIC_WORDS.get(metric, metric)
    title = f"Subgroup gaps of the {words} (group − rest), by reference"
    fig = go.Figure()
    panels: list[tuple[str, list[int], dict[str, Any]]] = []
    shown: set[str] = set()
    keys = d["finding"].astype(str) + " · " + d["attribute"].astype(str)
    for pi, key in enumerate(ordered(keys)):
        sub = d[keys == key]
        groups = {g: i for i, g in enumerate(ordered(sub["group"], summary_first=False))}
        models = {m: i for i, m in enumerate(ordered(sub["model"], summary_first=False))}
        pairs = sorted(
            dict.fromkeys(zip(sub["group"].astype(str), sub["model"].astype(str))),
            key=lambda gm: (groups[gm[0]], models[gm[1]]),
        )
        rows = [f"{g} · {m}" for g, m in pairs]  # grouped by group: each group's models together
        pos = {r: i for i, r in enumerate(rows)}
        idx = []
        for ri, ref in enumerate(refs):
            for sig in (True, False):
                s = sub[(sub["reference"].astype(str) == ref) & (sub["_sig"] == sig)]
                if s.empty:
                    continue
                gap, lo, hi = num(s, "gap"), num(s, "gap_ci_low"), num(s, "gap_ci_high")
                label = s["group"].astype(str) + " · " + s["model"].astype(str)
                y = np.array([pos[r] for r in label], float) + (ri - (len(refs) - 1) / 2) * width
                name = f"{ref}: {'significant (Holm)' if sig else 'not significant'}"
                fig.add_trace(
                    go.Scatter(
                        x=gap,
                        y=y,
                        mode="markers",
                        name=name,
                        legendgroup=name,
                        showlegend=name not in shown,
                        visible=pi == 0,
                        marker={
                            "color": ref_color(ref),
                            "size": 8,
                            "symbol": "circle" if sig else "circle-open",
                        },
                        error_x=interval_error(gap, lo, hi, thickness=1.2),
                        customdata=np.stack([label, lo, hi, num(s, "pvalue_holm")], axis=1),
                        hovertemplate="%{customdata[0]}<br>"
                        + ref
                        + ": gap %{x:.3f} [%{customdata[1]:.3f}, %{customdata[2]:.3f}], Holm p "
                        "%{customdata[3]:.3g}<extra></extra>",
                    )
                )
                shown.add(name)
                idx.append(len(fig.data) - 1)
        layout = {
            "yaxis.tickvals": list(range(len(rows))),
            "yaxis.ticktext": rows,
            "yaxis.range": [len(rows) - 0.5, -0.5],
            "title.text": f"{title}: {key}",
            "height": _height(len(rows)),
        }
        panels.append((key, idx, layout))
    first = panels[0][2]
    base_layout(fig, title=first["title.text"], height=first["height"])
    fig.add_vline(x=0.0, line_dash="dot", line_color="grey")
    fig.update_xaxes(title_text=f"gap of the {words}, group − rest (0: no gap)", zeroline=False)
    fig.update_yaxes(
        tickvals=first["yaxis.tickvals"],
        ticktext=first["yaxis.ticktext"],
        range=first["yaxis.range"],
        title_text="group · model",
        showgrid=True,
    )
    fig.update_layout(legend={"orientation": "h", "x": 0.0, "y": -0.08, "yanchor": "top"})
    dropdown(fig, panels, n_traces=len(fig.data), prefix="")
    return fig


def reliability_diagram(reliability: pd.DataFrame) -> go.Figure | None:
    """Reliability diagrams of ``reliability.csv``: per bin, the fraction positive against the mean score, one line
    per model over every study (``attribute == 'all'``, else the first group), one panel per finding and reference
    (menu), the diagonal of perfect calibration dashed. Marker size grows with the bin's studies."""
    d = reliability.copy()
    if "attribute" in d.columns and (d["attribute"].astype(str) == "all").any():
        d = d[d["attribute"].astype(str) == "all"]
    if d.empty:
        return None
    fig = go.Figure()
    panels: list[tuple[str, list[int], dict[str, Any]]] = []
    keys = d["finding"].astype(str) + " · " + d["reference"].astype(str)
    models = ordered(d["model"], summary_first=False)
    for pi, key in enumerate(ordered(keys)):
        sub = d[keys == key]
        idx = []
        for mi, model in enumerate(models):
            m = sub[sub["model"].astype(str) == model].sort_values("bin")
            if m.empty:
                continue
            n = num(m, "n")
            fig.add_trace(
                go.Scatter(
                    x=num(m, "mean_score"),
                    y=num(m, "fraction_positive"),
                    mode="lines+markers",
                    name=model,
                    legendgroup=model,
                    showlegend=pi == 0,
                    visible=pi == 0,
                    line={"color": palette_color(mi), "width": 1.5},
                    marker={"size": 4 + 8 * np.sqrt(n / max(float(np.nanmax(n)), 1.0))},
                    customdata=n,
                    hovertemplate=model + ": mean score %{x:.3f}, fraction positive %{y:.3f} "
                    "(%{customdata} studies)<extra></extra>",
                )
            )
            idx.append(len(fig.data) - 1)
        panels.append((key, idx, {"title.text": f"Reliability diagram: {key}"}))
    fig.add_trace(
        go.Scatter(
            x=[0, 1],
            y=[0, 1],
            mode="lines",
            name="perfect calibration",
            line={"dash": "dash", "color": "grey"},
            hoverinfo="skip",
        )
    )
    diag = len(fig.data) - 1
    panels = [(k, [*idx, diag], layout) for k, idx, layout in panels]
    base_layout(fig, title=panels[0][2]["title.text"], height=620)
    fig.update_xaxes(title_text="mean score in the bin (the model's probability)", range=[0, 1])
    fig.update_yaxes(title_text="fraction positive under the reference", range=[0, 1])
    dropdown(fig, panels, n_traces=len(fig.data), prefix="")
    return fig
