"""Figures of the report's image analyses: IQA metrics (against z-MOS, per degradation, metric vs metric)
and radiographs with reference and detected boxes. Re-exported by :mod:`cxreval._plots.analyses`."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from .style import (
    CORRELATION_SCALE,
    base_layout,
    ci_columns,
    dropdown,
    num,
    ordered,
    palette_color,
    text_heatmap,
)

__all__ = [
    "metric_axis",
    "METRIC_UNITS",
    "iqa_scatter",
    "iqa_correlation_bars",
    "iqa_by_degradation",
    "degradation_rank_heatmap",
    "metric_correlation_matrix",
    "box_overlays",
    "box_overlay",
    "png_data_uri",
]


METRIC_UNITS = {"psnr": "dB", "mse": "squared intensity", "mae": "intensity"}
"""Units of the IQA metrics that have one (the others are unitless indices)."""


def metric_axis(metric: str) -> str:
    """Axis title of an IQA metric: its name with its unit, or 'unitless'."""
    unit = METRIC_UNITS.get(str(metric).lower(), "unitless")
    return f"{metric} ({unit})"


def iqa_scatter(
    merged: pd.DataFrame, *, value: str = "value", zmos: str = "zmos", title: str = "IQA metric vs z-MOS"
) -> go.Figure:
    """Scatter of each metric's value against the experts' z-MOS, one panel per metric.

    ``merged`` holds ``metric``, ``value`` and ``zmos`` columns (scores joined with z-MOS);
    ``test`` (or ``reference``) labels the points when present.
    """
    fig = go.Figure()
    panels = []
    label_col = next((c for c in ("test", "image", "reference") if c in merged.columns), None)
    for i, metric in enumerate(ordered(merged["metric"], summary_first=False)):
        s = merged[merged["metric"].astype(str) == metric]
        fig.add_trace(
            go.Scatter(
                x=num(s, zmos),
                y=num(s, value),
                mode="markers",
                name=metric,
                marker={"color": palette_color(i), "size": 7},
                visible=i == 0,
                text=s[label_col].astype(str) if label_col else None,
                hovertemplate="%{text}<br>z-MOS %{x:.3f}, " + metric + " %{y:.4g}<extra></extra>",
            )
        )
        panels.append(
            (metric, [i], {"yaxis.title.text": metric_axis(metric), "title.text": f"{title}: {metric}"})
        )
    first = panels[0][2]["title.text"] if panels else title
    base_layout(fig, title=first, height=420)
    fig.update_xaxes(title_text="z-MOS (experts)")
    fig.update_yaxes(title_text=metric_axis(panels[0][0]) if panels else value)
    dropdown(fig, panels, n_traces=len(fig.data), prefix="metric: ")
    return fig


def iqa_correlation_bars(
    ma: pd.DataFrame, *, title: str = "Metric agreement with experts (SRCC / KRCC)"
) -> go.Figure:
    """Grouped bars of SRCC and KRCC per metric, with interval whiskers when CI columns are present
    (``srcc_low``/``srcc_high``, ``srcc_ci_low``/``srcc_ci_high`` or ``_lo``/``_hi``)."""
    fig = go.Figure()
    metrics = ordered(ma["metric"], summary_first=False)
    for i, stat in enumerate(s for s in ("srcc", "krcc") if s in ma.columns):
        v = num(ma, stat)
        lo_c, hi_c = ci_columns(ma, stat)
        err = None
        if lo_c and hi_c:
            lo, hi = num(ma, lo_c), num(ma, hi_c)
            err = {
                "type": "data",
                "symmetric": False,
                "array": np.clip(np.nan_to_num(hi - v), 0, None),
                "arrayminus": np.clip(np.nan_to_num(v - lo), 0, None),
            }
        fig.add_trace(
            go.Bar(
                x=ma["metric"].astype(str),
                y=v,
                name=stat.upper(),
                marker_color=palette_color(i),
                error_y=err,
                hovertemplate="%{x}: " + stat.upper() + " %{y:.3f}<extra></extra>",
            )
        )
    base_layout(fig, title=title, height=420)
    fig.update_layout(barmode="group")
    fig.update_xaxes(categoryorder="array", categoryarray=metrics)
    fig.update_yaxes(title_text="rank correlation with z-MOS (−1 to 1)", range=[-1, 1])
    fig.update_xaxes(title_text="metric")
    return fig


def iqa_by_degradation(scores: pd.DataFrame, *, title: str = "Metric scores per degradation") -> go.Figure:
    """Each metric's scores of the test images, one column of points per degradation, one panel per metric.

    Uses ``metric``, ``value``, ``degradation`` and optionally ``image`` (point labels).
    """
    fig = go.Figure()
    panels = []
    degs = ordered(scores["degradation"], summary_first=False)
    label = scores["image"].astype(str) if "image" in scores.columns else scores["degradation"].astype(str)
    for i, metric in enumerate(ordered(scores["metric"], summary_first=False)):
        s = scores[scores["metric"].astype(str) == metric]
        fig.add_trace(
            go.Box(
                x=s["degradation"].astype(str),
                y=num(s, "value"),
                name=metric,
                boxpoints="all",
                jitter=0.3,
                pointpos=0,
                marker={"color": palette_color(i), "size": 7},
                line={"width": 1},
                fillcolor="rgba(0,0,0,0)",
                text=label[s.index],
                visible=i == 0,
                hovertemplate="%{text}, %{x}<br>" + metric + " %{y:.4g}<extra></extra>",
            )
        )
        panels.append(
            (metric, [i], {"yaxis.title.text": metric_axis(metric), "title.text": f"{title}: {metric}"})
        )
    first = panels[0][2]["title.text"] if panels else title
    base_layout(fig, title=first, height=420)
    fig.update_xaxes(categoryorder="array", categoryarray=degs, title_text="degradation")
    fig.update_yaxes(title_text=metric_axis(panels[0][0]) if panels else "value")
    fig.update_layout(showlegend=False)
    dropdown(fig, panels, n_traces=len(fig.data), prefix="metric: ")
    return fig


def degradation_rank_heatmap(
    ranking: pd.DataFrame, *, title: str = "How each metric ranks the degradations (1 = judged least harmful)"
) -> go.Figure:
    """Heat map of each metric's rank of each degradation (``metric, degradation, rank``); rows whose
    ranks differ between metrics are where the metrics disagree."""
    metrics = ordered(ranking["metric"], summary_first=False)
    degs = ordered(ranking.sort_values("rank", kind="stable")["degradation"], summary_first=False)
    z = np.full((len(degs), len(metrics)), np.nan)
    for m, d, r in zip(
        ranking["metric"].astype(str), ranking["degradation"].astype(str), num(ranking, "rank")
    ):
        z[degs.index(d), metrics.index(m)] = r
    text = np.where(np.isfinite(z), np.vectorize(lambda v: f"{v:g}")(np.nan_to_num(z)), "")
    fig = go.Figure(
        text_heatmap(
            z,
            x=metrics,
            y=degs,
            text=text,
            colorscale="Viridis",
            reversescale=True,
            colorbar={"title": {"text": "rank"}},
            hovertemplate="%{x}: %{y} ranked %{z}<extra></extra>",
        )
    )
    base_layout(fig, title=title, height=max(320, 150 + 40 * len(degs)))
    fig.update_yaxes(autorange="reversed", type="category", title_text="degradation")
    fig.update_xaxes(type="category", title_text="metric")
    return fig


def metric_correlation_matrix(
    mvm: pd.DataFrame, *, title: str = "Agreement between metrics (metric vs metric)"
) -> go.Figure:
    """Symmetric SRCC/KRCC matrix between metrics (``metric_a, metric_b, srcc, krcc`` and optionally
    ``over``), one panel per statistic and level."""
    df = mvm.copy()
    if "over" not in df.columns:
        df["over"] = "all"
    metrics = ordered(pd.concat([df["metric_a"], df["metric_b"]]), summary_first=False)
    fig = go.Figure()
    panels: list[tuple[str, list[int], dict]] = []
    for over in ordered(df["over"], summary_first=False):
        sub = df[df["over"].astype(str) == over]
        for stat in (s for s in ("srcc", "krcc") if s in df.columns):
            z = np.eye(len(metrics))
            for a, b, v in zip(sub["metric_a"].astype(str), sub["metric_b"].astype(str), num(sub, stat)):
                z[metrics.index(a), metrics.index(b)] = z[metrics.index(b), metrics.index(a)] = v
            n = int(num(sub, "n")[0]) if "n" in sub.columns and len(sub) else 0
            label = f"{stat.upper()} over {over}" + (f" (n={n})" if n else "")
            fig.add_trace(
                go.Heatmap(
                    z=z,
                    x=metrics,
                    y=metrics,
                    **CORRELATION_SCALE,
                    texttemplate="%{z:.2f}",
                    visible=not panels,
                    name=label,
                    colorbar={"title": {"text": stat.upper()}},
                    hovertemplate="%{y} vs %{x}: %{z:.3f}<extra></extra>",
                )
            )
            panels.append((label, [len(fig.data) - 1], {"title.text": f"{title}: {label}"}))
    first = panels[0][2]["title.text"] if panels else title
    base_layout(fig, title=first, height=max(360, 160 + 40 * len(metrics)))
    fig.update_yaxes(autorange="reversed", type="category", title_text="metric")
    fig.update_xaxes(type="category", title_text="metric")
    dropdown(fig, panels, n_traces=len(fig.data))
    return fig


_BOX_COLS = (("x0", "y0", "x1", "y1"), ("x_min", "y_min", "x_max", "y_max"))


def _box_xy(boxes: pd.DataFrame) -> tuple[list, list]:
    cols = next((c for c in _BOX_COLS if set(c) <= set(boxes.columns)), _BOX_COLS[0])
    xs: list = []
    ys: list = []
    for x0, y0, x1, y1 in zip(*(num(boxes, c) for c in cols)):
        xs += [x0, x1, x1, x0, x0, None]
        ys += [y0, y0, y1, y1, y0, None]
    return xs, ys


def png_data_uri(image: np.ndarray) -> str:
    """A greyscale array as a ``data:image/png;base64`` URI (min-max scaled to 8 bits)."""
    import base64
    from io import BytesIO

    from PIL import Image

    img = np.asarray(image, dtype=float)
    lo, hi = float(np.nanmin(img)), float(np.nanmax(img))
    u8 = np.zeros(img.shape, np.uint8) if hi <= lo else np.rint((img - lo) / (hi - lo) * 255).astype(np.uint8)
    buf = BytesIO()
    Image.fromarray(u8, mode="L").save(buf, format="PNG")
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode("ascii")


_HEAT = [
    [0.0, "rgba(255,40,0,0)"],
    [0.25, "rgba(255,40,0,0.12)"],
    [0.6, "rgba(255,120,0,0.45)"],
    [1.0, "rgba(255,230,0,0.75)"],
]
_KIND_STYLE = {"reference": ("#009E73", "solid", 3)}
_DETECTED_COLORS = ("#E69F00", "#56B4E9", "#CC79A7", "#F0E442")


def box_overlays(panels: Sequence[dict], *, title: str = "Reference and detected boxes") -> go.Figure:
    """Radiographs with boxes (and optionally a heat map) drawn over them, one panel per entry.

    Each panel is a dict with ``label``, ``source`` (an image ``data:`` URI), ``image_size`` (the side of
    the image in box coordinates), ``png_size`` (the side of the embedded image), ``boxes`` (a table with
    ``kind`` and ``x_min, y_min, x_max, y_max`` or ``x0, y0, x1, y1``) and optionally ``heatmap`` (a
    coarse map covering the whole image). Reference boxes are solid green, each detected kind dashed in
    its own colour; the image is embedded once per panel as PNG, so the figure stays small.
    """
    fig = go.Figure()
    menu = []
    kinds_all: list[str] = []
    for p in panels:
        kinds_all += [k for k in ordered(p["boxes"]["kind"], summary_first=False) if k not in kinds_all]
    detected = [k for k in kinds_all if k not in _KIND_STYLE]
    size = float(panels[0]["image_size"]) if panels else 1.0
    for pi, p in enumerate(panels):
        idx = []
        s = float(p["image_size"]) / float(p["png_size"])
        fig.add_trace(
            go.Image(
                source=p["source"],
                x0=s / 2,
                y0=s / 2,
                dx=s,
                dy=s,
                visible=pi == 0,
                name="image",
                hoverinfo="skip",
            )
        )
        idx.append(len(fig.data) - 1)
        hm = p.get("heatmap")
        if hm is not None:
            hm = np.asarray(hm, dtype=float)
            c = float(p["image_size"]) / hm.shape[0]
            fig.add_trace(
                go.Heatmap(
                    z=hm,
                    x0=c / 2,
                    dx=c,
                    y0=c / 2,
                    dy=c,
                    colorscale=_HEAT,
                    zmin=0,
                    zmax=1,
                    showscale=False,
                    zsmooth="best",
                    visible=pi == 0,
                    name="heat map",
                    hovertemplate="heat map %{z:.2f}<extra></extra>",
                )
            )
            idx.append(len(fig.data) - 1)
        b = p["boxes"]
        for kind in kinds_all:
            sub = b[b["kind"].astype(str) == kind]
            color, dash, width = _KIND_STYLE.get(
                kind, (_DETECTED_COLORS[detected.index(kind) % 4] if kind in detected else "#999", "dash", 2)
            )
            xs, ys = _box_xy(sub)
            fig.add_trace(
                go.Scatter(
                    x=xs or [None],
                    y=ys or [None],
                    mode="lines",
                    name=f"{kind} ({len(sub)})",
                    line={"color": color, "width": width, "dash": dash},
                    visible=pi == 0,
                    legendgroup=kind,
                    hoverinfo="skip",
                )
            )
            idx.append(len(fig.data) - 1)
        menu.append((p["label"], idx, {"title.text": f"{title}: {p['label']}"}))
    first = menu[0][2]["title.text"] if menu else title
    base_layout(fig, title=first, height=640)
    fig.update_xaxes(range=[0, size], showgrid=False, visible=False, constrain="domain")
    fig.update_yaxes(range=[size, 0], showgrid=False, visible=False, scaleanchor="x", constrain="domain")
    fig.update_layout(margin={"l": 10, "r": 10, "t": 100, "b": 10}, legend={"x": 1.0, "y": 1.0})
    dropdown(fig, menu, n_traces=len(fig.data), prefix="image: ")
    return fig


def box_overlay(
    image: np.ndarray, boxes: pd.DataFrame, *, title: str = "", heatmap: np.ndarray | None = None
) -> go.Figure:
    """One radiograph (greyscale array) with boxes and optionally a coarse heat map drawn over it.

    ``boxes`` has ``kind`` (default ``reference``) and ``x_min, y_min, x_max, y_max`` or ``x0, y0, x1,
    y1`` in the image's pixels; see :func:`box_overlays`.
    """
    img = np.asarray(image, dtype=float)
    b = boxes if "kind" in boxes.columns else boxes.assign(kind="reference")
    return box_overlays(
        [
            {
                "label": title or "image",
                "source": png_data_uri(img),
                "image_size": img.shape[0],
                "png_size": img.shape[0],
                "boxes": b,
                "heatmap": heatmap,
            }
        ],
        title=title or "Boxes",
    )
