"""Small Plotly figures drawn from a result's tidy table: what ``TableResult.plot()`` returns.

Each function takes a DataFrame and column names and returns a :class:`plotly.graph_objects.Figure` with one
trace per group (colour); plotly is imported inside the functions, so importing this module stays cheap.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ..schema import MACRO, MEAN, MICRO

if TYPE_CHECKING:
    import plotly.graph_objects as go

__all__ = [
    "dot_interval",
    "bars",
    "lines",
    "sankey",
    "heatmap",
    "box_outlines",
    "first_panel",
    "localization_figure",
]

SUMMARY_FIRST = (MACRO, MICRO, MEAN)
"""Summary rows drawn first when a figure shows one panel of several (the macro average when there is one)."""


def _groups(df: pd.DataFrame, color: str | None) -> list[tuple[str, pd.DataFrame]]:
    if color is None or color not in df.columns:
        return [("", df)]
    return [(str(k), g) for k, g in df.groupby(color, sort=False, dropna=False)]


def _figure(title: str, xaxis: str, yaxis: str, n_rows: int = 0) -> go.Figure:
    import plotly.graph_objects as go

    fig = go.Figure()
    fig.update_layout(
        title=title,
        xaxis_title=xaxis,
        yaxis_title=yaxis,
        template="plotly_white",
        height=max(360, min(1200, 120 + 22 * n_rows)),
        legend_title_text="",
    )
    return fig


def _nonempty(fig: go.Figure) -> go.Figure:
    """A figure of an empty table still carries one (empty) trace and says why it is empty."""
    import plotly.graph_objects as go

    if not fig.data:
        fig.add_trace(go.Scatter(x=[], y=[], name="no rows"))
        fig.add_annotation(
            text="the table has no rows", showarrow=False, xref="paper", yref="paper", x=0.5, y=0.5
        )
    return fig


def first_panel(df: pd.DataFrame, column: str) -> pd.DataFrame:
    """The rows of ``df`` whose ``column`` is the first summary value present (``macro``...), else the first value."""
    if column not in df.columns or df.empty:
        return df
    values = list(dict.fromkeys(df[column].astype(str)))
    pick = next((v for v in SUMMARY_FIRST if v in values), values[0])
    return df[df[column].astype(str) == pick]


def dot_interval(
    df: pd.DataFrame,
    *,
    value: str,
    category: str | Sequence[str],
    low: str | None = None,
    high: str | None = None,
    color: str | None = None,
    title: str = "",
    value_title: str | None = None,
    reference_line: float | None = None,
) -> go.Figure:
    """A dot per row at ``value`` along x with its interval ``[low, high]``, one row of the y axis per
    ``category`` (several columns are joined with " · "), one trace per ``color``."""
    import plotly.graph_objects as go

    cats = [category] if isinstance(category, str) else list(category)
    joined = (
        df[cats].astype(str).agg(" · ".join, axis=1) if len(df) else pd.Series([], index=df.index, dtype=str)
    )
    d = df.assign(_cat=joined)
    fig = _figure(title, value_title or value, " · ".join(cats), d["_cat"].nunique())
    for name, g in _groups(d, color):
        v = pd.to_numeric(g[value], errors="coerce").to_numpy(float)
        err: dict[str, Any] = {}
        if low is not None and high is not None:
            lo = pd.to_numeric(g[low], errors="coerce").to_numpy(float)
            hi = pd.to_numeric(g[high], errors="coerce").to_numpy(float)
            err = {"error_x": {"type": "data", "symmetric": False, "array": hi - v, "arrayminus": v - lo}}
        fig.add_trace(go.Scatter(x=v, y=g["_cat"], mode="markers", name=name or value, **err))
    if reference_line is not None:
        fig.add_vline(x=reference_line, line_dash="dot", line_color="grey")
    fig.update_yaxes(autorange="reversed", type="category")
    return _nonempty(fig)


def bars(
    df: pd.DataFrame,
    *,
    x: str,
    y: str,
    color: str | None = None,
    title: str = "",
    y_title: str | None = None,
    barmode: str = "group",
) -> go.Figure:
    """Bars of ``y`` per ``x``, one trace per ``color`` (grouped or ``barmode='stack'``)."""
    import plotly.graph_objects as go

    fig = _figure(title, x, y_title or y)
    for name, g in _groups(df, color):
        fig.add_trace(go.Bar(x=g[x].astype(str), y=pd.to_numeric(g[y], errors="coerce"), name=name or y))
    fig.update_layout(barmode=barmode)
    return _nonempty(fig)


def sankey(
    df: pd.DataFrame,
    *,
    source: str,
    target: str,
    value: str,
    title: str = "",
    left: str = "",
    right: str = "",
) -> go.Figure:
    """A Sankey diagram of ``value`` flowing from each ``source`` category (left) to each ``target`` (right)."""
    import plotly.graph_objects as go

    flows = df.groupby([source, target], sort=False)[value].sum().reset_index()
    flows = flows[flows[value] > 0]
    lnames = list(dict.fromkeys(flows[source].astype(str)))
    rnames = list(dict.fromkeys(flows[target].astype(str)))
    labels = [f"{left} {n}".strip() for n in lnames] + [f"{right} {n}".strip() for n in rnames]
    fig = _figure(title, "", "")
    fig.add_trace(
        go.Sankey(
            node={"label": labels, "pad": 12},
            link={
                "source": [lnames.index(str(s)) for s in flows[source]],
                "target": [len(lnames) + rnames.index(str(t)) for t in flows[target]],
                "value": flows[value].to_numpy(float),
            },
        )
    )
    return fig


def lines(
    df: pd.DataFrame,
    *,
    x: str,
    y: str,
    color: str | None = None,
    markers: bool = True,
    reversed_y: bool = False,
    title: str = "",
    y_title: str | None = None,
) -> go.Figure:
    """A line of ``y`` against ``x`` per ``color`` (rows in the table's order)."""
    import plotly.graph_objects as go

    fig = _figure(title, x, y_title or y)
    for name, g in _groups(df, color):
        fig.add_trace(
            go.Scatter(
                x=g[x],
                y=pd.to_numeric(g[y], errors="coerce"),
                name=name or y,
                mode="lines+markers" if markers else "lines",
            )
        )
    if reversed_y:
        fig.update_yaxes(autorange="reversed")
    return _nonempty(fig)


def heatmap(
    df: pd.DataFrame,
    *,
    x: str,
    y: str,
    z: str,
    title: str = "",
    zmin: float | None = None,
    zmax: float | None = None,
    symmetric: bool = False,
) -> go.Figure:
    """A heat map of ``z`` over the ``x`` × ``y`` grid (``symmetric``: each pair also drawn mirrored)."""
    import plotly.graph_objects as go

    d = df[[x, y, z]].copy()
    if symmetric:
        d = pd.concat([d, d.rename(columns={x: y, y: x})], ignore_index=True)
    grid = d.pivot_table(index=y, columns=x, values=z, aggfunc="mean", sort=False)
    fig = _figure(title, x, y, len(grid))
    fig.add_trace(
        go.Heatmap(
            z=grid.to_numpy(float),
            x=[str(c) for c in grid.columns],
            y=[str(i) for i in grid.index],
            zmin=zmin,
            zmax=zmax,
            colorbar={"title": z},
            text=np.round(grid.to_numpy(float), 2),
            texttemplate="%{text}",
        )
    )
    return fig


def box_outlines(df: pd.DataFrame, *, color: str, title: str = "") -> go.Figure:
    """Every box (``x_min, y_min, x_max, y_max`` in pixels) drawn as an outline, one trace per ``color``;
    the y axis points down as in an image."""
    import plotly.graph_objects as go

    fig = _figure(title, "x (pixels)", "y (pixels)")
    for name, g in _groups(df, color):
        xs: list[float | None] = []
        ys: list[float | None] = []
        for x0, y0, x1, y1 in g[["x_min", "y_min", "x_max", "y_max"]].to_numpy(float):
            xs += [x0, x1, x1, x0, x0, None]
            ys += [y0, y0, y1, y1, y0, None]
        fig.add_trace(go.Scatter(x=xs, y=ys, mode="lines", name=name or "boxes"))
    fig.update_yaxes(autorange="reversed", scaleanchor="x")
    return _nonempty(fig)


def localization_figure(
    table: pd.DataFrame, *, title: str = "Localization accuracy and false positives vs T"
) -> go.Figure:
    """Acc. (solid) and AFP (dotted, right axis) against the overlap threshold ``T`` of a ``localization.csv``
    table, one colour per finding (and per variant, localizer and map threshold when there are several)."""
    import plotly.graph_objects as go

    t = table.copy()
    keys = [
        c for c in ("variant", "localizer", "threshold") if c in t.columns and t[c].astype(str).nunique() > 1
    ]
    t["_name"] = t[["finding", *keys]].astype(str).agg(" · ".join, axis=1)
    fig = _figure(title, "T", "Acc.")
    for i, (name, g) in enumerate(t.groupby("_name", sort=False)):
        g = g.sort_values("T")
        group = f"g{i}"
        fig.add_trace(
            go.Scatter(
                x=g["T"],
                y=pd.to_numeric(g["acc"], errors="coerce"),
                mode="lines+markers",
                name=f"{name} Acc.",
                legendgroup=group,
            )
        )
        fig.add_trace(
            go.Scatter(
                x=g["T"],
                y=pd.to_numeric(g["afp"], errors="coerce"),
                mode="lines+markers",
                line={"dash": "dot"},
                name=f"{name} AFP",
                legendgroup=group,
                yaxis="y2",
            )
        )
    fig.update_layout(yaxis={"range": [0, 1]}, yaxis2={"title": "AFP", "overlaying": "y", "side": "right"})
    return _nonempty(fig)
