"""Plotly figures of the analyses' tables, one function per figure type: what a result's ``plot()`` returns
(``Result.figure(table)``) and what the HTML report shows for the same table read from its file.

Every function takes tidy tables (the files the analysis commands write) and returns a
:class:`plotly.graph_objects.Figure`. Figures draw SVG only (no WebGL), so they render in any browser
and print. Where a figure would need one panel per finding (or per pair), it carries a drop-down menu
that switches panels; the first panel is the macro average when there is one; each panel shows only the
categories it has data for.

Colours are colour-blind safe (Okabe & Ito's eight, then Paul Tol's muted set) and a reference keeps one
colour in every figure of a report: :func:`reference_colors` holds the name -> colour map that
:func:`ref_color` fills in order of first use (the report opens one map per page).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from .auc_rankings import auc_forest, bump_chart, rank_correlation_heatmap, rank_correlation_vs_paper
from .images import (
    box_overlay,
    box_overlays,
    degradation_rank_heatmap,
    iqa_by_degradation,
    iqa_correlation_bars,
    iqa_scatter,
    metric_correlation_matrix,
    png_data_uri,
)
from .style import (
    OKABE_ITO,
    PALETTE,
    STATE_COLORS,
    STATE_ORDER,
    SUMMARY_ROWS,
    base_layout,
    dropdown,
    num,
    ordered,
    palette_color,
    ref_color,
    reference_colors,
    rgba,
)

__all__ = [
    "by_dataset",
    "KAPPA_METRICS",
    "PRF_METRICS",
    "labeller_long",
    "auc_forest",
    "bump_chart",
    "rank_correlation_heatmap",
    "rank_correlation_vs_paper",
    "interval_plot",
    "prevalence_bars",
    "sankey_flows",
    "localization_curves",
    "iqa_scatter",
    "iqa_correlation_bars",
    "box_overlay",
    "box_overlays",
    "png_data_uri",
    "iqa_by_degradation",
    "degradation_rank_heatmap",
    "metric_correlation_matrix",
    "STATE_COLORS",
    "PALETTE",
    "OKABE_ITO",
    "ordered",
    "ref_color",
    "reference_colors",
]


# ---------------------------------------------------------------------------------------------------
# the statistics the interval plots offer and the tables reshaped for the figures (AUC, ranks: auc_rankings)
# ---------------------------------------------------------------------------------------------------

KAPPA_METRICS: tuple[tuple[str, str, str, str], ...] = (
    ("kappa_w", "kappa_low", "kappa_high", "κ"),
    ("f1_w", "f1_low", "f1_high", "weighted F1"),
)
"""The agreement statistics an interval plot offers: ``(value, low, high, label)``."""


PRF_METRICS: tuple[tuple[str, str, str, str], ...] = (
    ("f1", "f1_low", "f1_high", "F1"),
    ("precision", "precision_low", "precision_high", "Precision"),
    ("recall", "recall_low", "recall_high", "Recall"),
)
"""The labeller statistics an interval plot offers: ``(value, low, high, label)``."""


def labeller_long(df: pd.DataFrame) -> pd.DataFrame:
    """The labeller's precision/recall/F1 per finding, with the published labeller's figures as a second
    series where the table gives them (``nih_*`` columns; no interval)."""
    per = df[~df["finding"].astype(str).isin(SUMMARY_ROWS)]
    parts = [per.assign(labeller="this labeller")]
    pub = {f"nih_{m}" for m, *_ in PRF_METRICS} & set(df.columns)
    if pub:
        q = df[df[sorted(pub)].notna().any(axis=1)][["finding", *sorted(pub)]].copy()
        for m, lo, hi, _ in PRF_METRICS:
            q[m] = q.pop(f"nih_{m}") if f"nih_{m}" in q.columns else np.nan
            q[lo] = q[hi] = np.nan
        parts.append(q.assign(labeller="published labeller"))
    return pd.concat(parts, ignore_index=True)


def by_dataset(df: pd.DataFrame) -> pd.DataFrame:
    """``df`` with its findings prefixed by the dataset when a ``dataset`` column holds several (panels of
    different datasets are never mixed); ``df`` itself otherwise."""
    if "dataset" in df.columns and df["dataset"].astype(str).nunique() > 1:
        df = df.copy()
        df["finding"] = df["dataset"].astype(str) + ": " + df["finding"].astype(str)
    return df


# ---------------------------------------------------------------------------------------------------
# agreement and fusion
# ---------------------------------------------------------------------------------------------------


def interval_plot(
    df: pd.DataFrame,
    *,
    series: str,
    x: str = "finding",
    metrics: Sequence[tuple[str, str, str, str]] = (("kappa_w", "kappa_low", "kappa_high", "κ"),),
    kind: str = "dot",
    title: str = "",
) -> go.Figure:
    """Point value with a Low-High interval per ``x`` category and ``series`` (Figures 5-7 of XQA).

    The central mark is the weighted statistic (e.g. quadratically weighted κ); the vertical segment
    runs from the pessimistic to the optimistic value (Low-κ to High-κ), which need not contain it.
    ``metrics`` lists ``(value, low, high, label)`` column triples; several give a menu.
    ``kind='bar'`` draws bars for the central value instead of dots.
    """
    cats = ordered(df[x], summary_first=False)
    sers = ordered(df[series], summary_first=False)
    heads = {str(s).split(":", 1)[0] for s in sers}
    key = {s: (s.split(":", 1)[1] if len(heads) == 1 and ":" in s else s) for s in sers}
    m = len(sers)
    w = 0.8 / max(m, 1)
    fig = go.Figure()
    panels: list[tuple[str, list[int], dict[str, Any]]] = []
    avail = [mt for mt in metrics if mt[0] in df.columns]
    for pi, (val, lo_c, hi_c, label) in enumerate(avail):
        idx = []
        for si, s in enumerate(sers):
            sub = df[df[series].astype(str) == s]
            xs = np.array([cats.index(str(v)) for v in sub[x]], dtype=float) + (si - (m - 1) / 2) * w
            v, lo, hi = num(sub, val), num(sub, lo_c), num(sub, hi_c)
            color = ref_color(key[s])
            custom = np.stack([sub[x].astype(str), lo, hi], axis=1)
            hover = f"{s}<br>%{{customdata[0]}}: {label} %{{y:.3f}} (Low %{{customdata[1]:.3f}}, High %{{customdata[2]:.3f}})<extra></extra>"
            point = {"x": xs, "y": v, "name": s, "legendgroup": s, "visible": pi == 0, "customdata": custom}
            point["hovertemplate"] = hover
            if kind == "bar":
                fig.add_trace(go.Bar(**point, width=w * 0.9, marker_color=rgba(color, 0.75)))
            else:
                fig.add_trace(
                    go.Scatter(
                        **point, mode="markers", marker={"color": color, "size": 9, "symbol": "diamond"}
                    )
                )
            idx.append(len(fig.data) - 1)
            if np.isfinite(lo).any() or np.isfinite(hi).any():
                segx, segy = [], []
                for xi, a, b in zip(xs, lo, hi):
                    if np.isfinite(a) and np.isfinite(b):
                        segx += [xi, xi, None]
                        segy += [a, b, None]
                segment_color = "#333" if kind == "bar" else color
                fig.add_trace(
                    go.Scatter(
                        x=segx,
                        y=segy,
                        line={"color": segment_color, "width": 2},
                        marker={"symbol": "line-ew-open", "size": 10, "color": segment_color},
                        mode="lines+markers",
                        legendgroup=s,
                        showlegend=False,
                        visible=pi == 0,
                        hoverinfo="skip",
                        name=f"{s} Low-High",
                    )
                )
                idx.append(len(fig.data) - 1)
        panels.append((label, idx, {"yaxis.title.text": f"{label} (point) with Low-High interval"}))
    base_layout(fig, title=title, height=460)
    fig.update_xaxes(
        tickvals=list(range(len(cats))), ticktext=cats, range=[-0.6, len(cats) - 0.4], title_text=x
    )
    fig.update_yaxes(title_text=panels[0][2]["yaxis.title.text"] if panels else "", zeroline=True)
    if kind == "bar":
        fig.update_layout(barmode="overlay")
    dropdown(fig, panels, n_traces=len(fig.data), prefix="metric: ")
    return fig


def prevalence_bars(prev: pd.DataFrame, *, title: str = "Label prevalence per source") -> go.Figure:
    """Stacked bars of label states per finding and source (percent when given, else count)."""
    df = prev.copy()
    value = "percent" if "percent" in df.columns else "count"
    fig = go.Figure()
    findings = ordered(df["finding"], summary_first=False)
    sources = ordered(df["source"], summary_first=False)
    states = [s for s in STATE_ORDER if s in set(df["state"].astype(str))]
    states += [s for s in ordered(df["state"], summary_first=False) if s not in states]
    for i, state in enumerate(states):
        sub = df[df["state"].astype(str) == state]
        key = {(str(f), str(s)): v for f, s, v in zip(sub["finding"], sub["source"], num(sub, value))}
        xs = [[f for f in findings for _ in sources], [s for _ in findings for s in sources]]
        ys = [key.get((f, s), 0.0) for f in findings for s in sources]
        fig.add_trace(
            go.Bar(
                x=xs,
                y=ys,
                name=state,
                marker_color=STATE_COLORS.get(state, palette_color(i)),
                hovertemplate="%{x}<br>" + state + ": %{y}<extra></extra>",
            )
        )
    base_layout(fig, title=title, height=460)
    fig.update_layout(barmode="stack")
    fig.update_yaxes(title_text="studies (%)" if value == "percent" else "studies (count)")
    fig.update_xaxes(title_text="finding / label source")
    return fig


def sankey_flows(
    flows: pd.DataFrame, *, title: str = "Label flows between sources", max_panels: int = 60
) -> go.Figure:
    """Sankey diagram of label states from one source to another (XQA Figure 4), one panel per
    ``(source_a, source_b, finding)``. Flows whose state is unchanged are grey; changed flows take the
    colour of the left state."""
    df = flows.copy()
    df["count"] = num(df, "count")
    keys = list(
        dict.fromkeys(zip(df["source_a"].astype(str), df["source_b"].astype(str), df["finding"].astype(str)))
    )
    keys.sort(key=lambda k: (k[2] not in SUMMARY_ROWS and k[2] != "all", 0))
    keys = keys[:max_panels]
    fig = go.Figure()
    panels: list[tuple[str, list[int], dict[str, Any]]] = []
    for pi, (a, b, f) in enumerate(keys):
        sub = df[
            (df["source_a"].astype(str) == a)
            & (df["source_b"].astype(str) == b)
            & (df["finding"].astype(str) == f)
        ]
        sub = sub[sub["count"] > 0]
        sa = [s for s in STATE_ORDER if s in set(sub["state_a"].astype(str))]
        sa += [s for s in ordered(sub["state_a"], summary_first=False) if s not in sa]
        sb = [s for s in STATE_ORDER if s in set(sub["state_b"].astype(str))]
        sb += [s for s in ordered(sub["state_b"], summary_first=False) if s not in sb]
        labels = [f"{a}: {s}" for s in sa] + [f"{b}: {s}" for s in sb]
        colors = [STATE_COLORS.get(s, "#999") for s in sa + sb]
        src = [sa.index(str(s)) for s in sub["state_a"]]
        tgt = [len(sa) + sb.index(str(s)) for s in sub["state_b"]]
        lcol = [
            rgba("#999999", 0.35) if str(x) == str(y) else rgba(STATE_COLORS.get(str(x), "#999999"), 0.55)
            for x, y in zip(sub["state_a"], sub["state_b"])
        ]
        fig.add_trace(
            go.Sankey(
                node={"label": labels, "color": colors, "pad": 18, "thickness": 16},
                link={"source": src, "target": tgt, "value": sub["count"].tolist(), "color": lcol},
                visible=pi == 0,
                name=f"{a} → {b}: {f}",
                arrangement="fixed",
            )
        )
        panels.append((f"{a} → {b}: {f}", [pi], {"title.text": f"{title}: {a} → {b}, {f}"}))
    first = panels[0][2]["title.text"] if panels else title
    base_layout(fig, title=first, height=440)
    dropdown(fig, panels, n_traces=len(fig.data))
    return fig


# ---------------------------------------------------------------------------------------------------
# localization and IQA
# ---------------------------------------------------------------------------------------------------


def _fractions(values: pd.Series) -> np.ndarray:
    """Numbers, accepting exact fractions written as ``'1/10'`` (how the protocol's T is stored)."""
    from fractions import Fraction

    out = np.array(pd.to_numeric(values, errors="coerce"), dtype=float)  # a writable copy
    for i in np.flatnonzero(np.isnan(out)):
        try:
            out[i] = float(Fraction(str(values.iloc[i]).strip()))
        except (ValueError, ZeroDivisionError):
            pass
    return out


def localization_curves(
    loc: pd.DataFrame, *, title: str = "Localization accuracy and false positives vs T"
) -> go.Figure:
    """Acc. and AFP against the overlap threshold T, a line per finding; one panel per combination of
    the case columns present (``variant``, ``localizer``, ``upsampling``, ``threshold``, ``rule``) when the
    table holds several. ``T`` may be written as exact fractions (``'1/10'``)."""
    df = loc.copy()
    case_cols = [c for c in ("variant", "localizer", "upsampling", "threshold", "rule") if c in df.columns]
    df["T"] = _fractions(df["T"]) if "T" in df.columns else np.nan
    fig = make_subplots(rows=1, cols=2, subplot_titles=("Acc.", "AFP"), horizontal_spacing=0.1)
    keys = df[case_cols].astype(str).agg("\x1f".join, axis=1) if case_cols else pd.Series("", index=df.index)
    variants = list(dict.fromkeys(keys))
    panels: list[tuple[str, list[int], dict[str, Any]]] = []
    findings = ordered(df["finding"], summary_first=False)
    for vi, key in enumerate(variants):
        idx = []
        v = df[keys == key]
        for fi, f in enumerate(findings):
            s = v[v["finding"].astype(str) == f].sort_values("T")
            if s.empty:
                continue
            for col, (metric, show) in enumerate((("acc", True), ("afp", False)), start=1):
                if metric not in s.columns:
                    continue
                fig.add_trace(
                    go.Scatter(
                        x=s["T"].to_numpy(),
                        y=num(s, metric),
                        mode="lines+markers",
                        name=f,
                        legendgroup=f,
                        showlegend=show,
                        line={"color": palette_color(fi)},
                        visible=vi == 0,
                        hovertemplate=f + f"<br>T=%{{x}}: {metric} %{{y:.3f}}<extra></extra>",
                    ),
                    row=1,
                    col=col,
                )
                idx.append(len(fig.data) - 1)
        parts = [
            f"{'threshold ' if c == 'threshold' else 'rule ' if c == 'rule' else ''}{val}"
            for c, val in zip(case_cols, key.split("\x1f"))
            if val not in ("", "-", "nan")
        ]
        label = ", ".join(parts) or "all"
        panels.append((label, idx, {"title.text": title if len(variants) > 1 else f"{title} ({label})"}))
    first = panels[0][2]["title.text"] if panels else title
    base_layout(fig, title=first, height=440)
    fig.update_xaxes(title_text="overlap threshold T (IoU or IoBB, 0 to 1)")
    fig.update_yaxes(title_text="accuracy", row=1, col=1)
    fig.update_yaxes(title_text="average false positives per image", row=1, col=2)
    dropdown(fig, panels, n_traces=len(fig.data))
    if fig.layout.updatemenus:  # above the subplot titles
        fig.update_layout(margin={"t": 135}, height=480)
        fig.layout.updatemenus[0].y = 1.1
    return fig
