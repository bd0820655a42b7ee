"""Plotly figures of the HTML report, one function per figure type.

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

import contextlib
from collections.abc import Iterator, Sequence
from contextvars import ContextVar

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from .tables import ci_columns

__all__ = [
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
    "ordered",
    "ref_color",
    "reference_colors",
]

OKABE_ITO = ("#0072B2", "#E69F00", "#009E73", "#D55E00", "#56B4E9", "#CC79A7", "#000000", "#F0E442")
TOL_MUTED = ("#882255", "#44AA99", "#999933", "#AA4499", "#332288", "#88CCEE", "#DDCC77", "#117733", "#CC6677")
PALETTE = OKABE_ITO + TOL_MUTED
"""Colour-blind-safe categorical colours: Okabe & Ito (2008), then Paul Tol's 'muted' scheme."""
SYMBOLS = ("circle", "square", "diamond", "triangle-up", "x", "triangle-down", "star", "cross")
STATE_COLORS = {"positive": "#D55E00", "uncertain": "#F0E442", "negative": "#0072B2",
                "not_mentioned": "#999999", "missing": "#DDDDDD"}

_REF_COLORS: ContextVar[dict[str, str] | None] = ContextVar("cxreval_ref_colors", default=None)


@contextlib.contextmanager
def reference_colors(colors: dict[str, str] | None = None) -> Iterator[dict[str, str]]:
    """Within the block, :func:`ref_color` gives each reference one colour (``colors``, filled as used)."""
    cmap = {} if colors is None else colors
    token = _REF_COLORS.set(cmap)
    try:
        yield cmap
    finally:
        _REF_COLORS.reset(token)


def ref_color(name: str) -> str:
    """The colour of reference ``name``: the same in every figure inside one :func:`reference_colors` block."""
    cmap = _REF_COLORS.get()
    if cmap is None:
        cmap = {}
        _REF_COLORS.set(cmap)
    if name not in cmap:
        cmap[name] = PALETTE[len(cmap) % len(PALETTE)]
    return cmap[name]


def _ref_symbol(name: str) -> str:
    cmap = _REF_COLORS.get() or {}
    i = list(cmap).index(name) if name in cmap else 0
    return SYMBOLS[(i // len(PALETTE)) % len(SYMBOLS)]  # a second round of colours gets another symbol
_STATE_ORDER = ("positive", "uncertain", "negative", "not_mentioned", "missing")
_SUMMARY_ROWS = ("macro", "micro")


def _color(i: int) -> str:
    return PALETTE[i % len(PALETTE)]


def _rgba(hex_color: str, alpha: float) -> str:
    h = hex_color.lstrip("#")
    r, g, b = (int(h[i:i + 2], 16) for i in (0, 2, 4))
    return f"rgba({r},{g},{b},{alpha})"


def ordered(values: Sequence[object] | pd.Series, *, summary_first: bool = True) -> list[str]:
    """Unique values as strings in order of first appearance; 'macro'/'micro' first (or last)."""
    seen = list(dict.fromkeys(str(v) for v in values))
    summary = [s for s in _SUMMARY_ROWS if s in seen]
    rest = [s for s in seen if s not in summary]
    return summary + rest if summary_first else rest + summary


def _base_layout(fig: go.Figure, *, title: str, height: int) -> go.Figure:
    fig.update_layout(title={"text": title, "x": 0.0, "xanchor": "left", "font": {"size": 15}},
                      height=int(height), template="plotly_white", margin={"l": 60, "r": 20, "t": 70, "b": 50},
                      legend={"orientation": "v", "x": 1.02, "y": 1.0}, font={"size": 12})
    return fig


def _dropdown(fig: go.Figure, panels: list[tuple[str, list[int], dict]], *, n_traces: int,
              prefix: str = "") -> None:
    """Add a menu that shows one panel (a set of trace indices and layout changes) at a time."""
    if len(panels) <= 1:
        return
    buttons = []
    for label, idx, layout in panels:
        vis = [False] * n_traces
        for i in idx:
            vis[i] = True
        buttons.append({"label": f"{prefix}{label}", "method": "update", "args": [{"visible": vis}, layout]})
    fig.update_layout(updatemenus=[{"buttons": buttons, "direction": "down", "x": 0.0, "xanchor": "left",
                                    "y": 1.0, "yanchor": "bottom", "pad": {"b": 4}, "showactive": True,
                                    "active": 0}],
                      margin={"t": 100})


def _num(df: pd.DataFrame, col: str) -> np.ndarray:
    if col not in df.columns:
        return np.full(len(df), np.nan)
    return pd.to_numeric(df[col], errors="coerce").to_numpy(dtype=float)


# ---------------------------------------------------------------------------------------------------
# classification and ranking
# ---------------------------------------------------------------------------------------------------

def auc_forest(auc: pd.DataFrame, *, title: str = "ROC-AUC per model and reference") -> go.Figure:
    """Forest plot: AUC with its CI per model (rows) and reference (colours), one panel per finding.

    Uses columns ``model, finding, reference, auc`` and, when present, ``group``, ``ci_low``, ``ci_high``.
    """
    df = auc.copy()
    df["model"] = df["model"].astype(str)
    if "group" in df.columns:
        df["label"] = df["model"] + " (" + df["group"].astype(str) + ")"
    else:
        df["label"] = df["model"]
    findings = ordered(df["finding"])
    refs = ordered(df["reference"], summary_first=False)
    m = len(refs)
    width = 0.7 / max(m, 1)
    fig = go.Figure()
    panels: list[tuple[str, list[int], dict]] = []
    n_rows_max = 1
    for fi, finding in enumerate(findings):
        sub = df[df["finding"].astype(str) == finding]
        labels = (sub.assign(_a=_num(sub, "auc")).groupby("label", sort=False)["_a"].mean()
                  .sort_values(ascending=False, kind="stable").index.tolist())
        pos = {lab: i for i, lab in enumerate(labels)}
        n_rows_max = max(n_rows_max, len(labels))
        idx = []
        for ri, ref in enumerate(refs):
            s = sub[sub["reference"].astype(str) == ref]
            if s.empty:
                continue
            a = _num(s, "auc")
            lo, hi = _num(s, "ci_low"), _num(s, "ci_high")
            y = np.array([pos[lab] for lab in s["label"]], dtype=float) + (ri - (m - 1) / 2) * width
            err = None
            if np.isfinite(lo).any():
                err = {"type": "data", "symmetric": False, "array": np.clip(hi - a, 0, None),
                       "arrayminus": np.clip(a - lo, 0, None), "thickness": 1.2, "width": 3}
            custom = np.stack([s["model"].to_numpy(dtype=object), lo, hi], axis=1)
            fig.add_trace(go.Scatter(
                x=a, y=y, mode="markers", name=ref, legendgroup=ref, showlegend=True,
                marker={"color": ref_color(ref), "size": 8, "symbol": _ref_symbol(ref)}, error_x=err,
                visible=fi == 0, customdata=custom,
                hovertemplate="%{customdata[0]}<br>" + ref + ": AUC %{x:.3f} [%{customdata[1]:.3f}, "
                              "%{customdata[2]:.3f}]<extra></extra>"))
            idx.append(len(fig.data) - 1)
        panels.append((finding, idx, {"yaxis.tickvals": list(range(len(labels))), "yaxis.ticktext": labels,
                                      "title.text": f"{title}: {finding}"}))
    _base_layout(fig, title=f"{title}: {findings[0]}" if findings else title,
                 height=170 + n_rows_max * max(28, 11 * m))
    if panels:
        fig.update_yaxes(tickvals=panels[0][2]["yaxis.tickvals"], ticktext=panels[0][2]["yaxis.ticktext"],
                         autorange="reversed", showgrid=False, zeroline=False)
    fig.update_xaxes(title_text="ROC-AUC (0.5 = chance, 1 = perfect)")
    fig.update_yaxes(title_text="model")
    _dropdown(fig, panels, n_traces=len(fig.data), prefix="finding: ")
    return fig


def bump_chart(rankings: pd.DataFrame, *, title: str = "Model ranks across references") -> go.Figure:
    """Bump chart (the XQA paper's Figures 10-14): rank of each model under each reference.

    One panel per ``(finding, group)``. Models that hold rank 1 under some reference are drawn thick;
    when the top-ranked model differs between references the panel title says so. Uses columns
    ``finding, reference, model, rank`` and, when present, ``group``, ``auc``.
    """
    df = rankings.copy()
    if "group" not in df.columns:
        df["group"] = "all"
    df["rank"] = _num(df, "rank")
    df["auc"] = _num(df, "auc")
    fig = go.Figure()
    panels = []
    keys = list(dict.fromkeys(zip(df["finding"].astype(str), df["group"].astype(str))))
    keys.sort(key=lambda k: (k[0] not in _SUMMARY_ROWS, ordered(df["finding"]).index(k[0])))
    max_rank = 1
    for pi, (finding, group) in enumerate(keys):
        sub = df[(df["finding"].astype(str) == finding) & (df["group"].astype(str) == group)]
        top = sub[sub["rank"] == sub.groupby("reference")["rank"].transform("min")]
        top_models = set(top["model"].astype(str))
        tops_by_ref = top.groupby("reference", sort=False)["model"].agg(lambda s: "/".join(sorted(map(str, s))))
        changes = tops_by_ref.nunique() > 1
        idx = []
        models = ordered(sub.sort_values(["rank"], kind="stable")["model"], summary_first=False)
        refs = ordered(sub["reference"], summary_first=False)  # this panel's references only: no empty columns
        xpos = {r: i for i, r in enumerate(refs)}
        max_rank = max(max_rank, int(np.nanmax(sub["rank"])) if sub["rank"].notna().any() else 1)
        for mi, model in enumerate(models):
            s = sub[sub["model"].astype(str) == model].copy()
            s["_x"] = s["reference"].astype(str).map(xpos)
            s = s.sort_values("_x")
            is_top = model in top_models
            fig.add_trace(go.Scatter(
                x=s["_x"].to_numpy(), y=s["rank"].to_numpy(), mode="lines+markers", name=model, legendgroup=model,
                line={"width": 4 if is_top else 1.5, "color": _color(mi)}, opacity=1.0 if is_top else 0.55,
                marker={"size": 10 if is_top else 6}, visible=pi == 0,
                customdata=np.stack([s["reference"].astype(str), s["auc"]], axis=1),
                hovertemplate=model + "<br>%{customdata[0]}: rank %{y}, AUC %{customdata[1]:.3f}<extra></extra>"))
            idx.append(len(fig.data) - 1)
        note = ("top rank changes: " + " | ".join(f"{r}: {m}" for r, m in tops_by_ref.items())) if changes \
            else "top rank stable: " + (tops_by_ref.iloc[0] if len(tops_by_ref) else "")
        label = finding if group == "all" else f"{finding} / {group}"
        panels.append((label, idx, {"title.text": f"{title}: {label}<br><sup>{note}</sup>",
                                    "xaxis.tickvals": list(range(len(refs))), "xaxis.ticktext": refs,
                                    "xaxis.range": [-0.3, len(refs) - 0.7]}))
    first = panels[0][2]["title.text"] if panels else title
    _base_layout(fig, title=first, height=max(360, 140 + 28 * max_rank))
    if panels:
        fig.update_xaxes(tickvals=panels[0][2]["xaxis.tickvals"], ticktext=panels[0][2]["xaxis.ticktext"],
                         range=panels[0][2]["xaxis.range"])
    fig.update_xaxes(title_text="reference")
    fig.update_yaxes(range=[max_rank + 0.5, 0.5], title_text="rank (1 = best)", dtick=1)
    _dropdown(fig, panels, n_traces=len(fig.data))
    return fig


def rank_correlation_heatmap(rc: pd.DataFrame, *, title: str = "Rank correlation between references"
                             ) -> go.Figure:
    """Heat map of SRCC/KRCC per finding (rows) and model group (columns), one panel per pair and method.

    Cell text gives the point value and, when present, the bootstrap interval ``[ci_low, ci_high]``.
    Uses columns ``finding, reference_a, reference_b, method, statistic`` and optionally ``group``,
    ``ci_low``, ``ci_high``, ``boot_mean``.
    """
    df = rc.copy()
    if "group" not in df.columns:
        df["group"] = "all"
    if "method" not in df.columns:
        df["method"] = "SRCC"
    df["pair"] = df["reference_a"].astype(str) + " vs " + df["reference_b"].astype(str)
    fig = go.Figure()
    panels = []
    n_findings = 1
    for pi, (method, pair) in enumerate(dict.fromkeys(zip(df["method"].astype(str), df["pair"]))):
        sub = df[(df["method"].astype(str) == method) & (df["pair"] == pair)]
        findings = ordered(sub["finding"])  # this panel's rows and columns only: no empty categories
        groups = ordered(sub["group"], summary_first=False)
        n_findings = max(n_findings, len(findings))
        z = np.full((len(findings), len(groups)), np.nan)
        text = np.full(z.shape, "", dtype=object)
        for row in sub.itertuples(index=False):
            r = findings.index(str(row.finding))
            c = groups.index(str(row.group))
            v = float(pd.to_numeric(row.statistic, errors="coerce"))
            z[r, c] = v
            t = f"{v:.2f}"
            lo, hi = getattr(row, "ci_low", np.nan), getattr(row, "ci_high", np.nan)
            if pd.notna(lo) and pd.notna(hi):
                t += f"<br>[{float(lo):.2f}, {float(hi):.2f}]"
            text[r, c] = t
        fig.add_trace(go.Heatmap(
            z=z, x=groups, y=findings, text=text, texttemplate="%{text}", zmin=-1, zmax=1, zmid=0,
            colorscale="RdBu", visible=pi == 0, colorbar={"title": {"text": f"{method} (−1 to 1)"}},
            hovertemplate="%{y} / %{x}<br>" + method + " %{z:.3f}<extra></extra>", name=f"{method}: {pair}"))
        panels.append((f"{method}: {pair}", [pi], {"title.text": f"{title}: {method}, {pair}",
                                                   "xaxis.categoryarray": groups, "yaxis.categoryarray": findings}))
    first = panels[0][2]["title.text"] if panels else title
    _base_layout(fig, title=first, height=max(320, 150 + 42 * n_findings))
    fig.update_yaxes(autorange="reversed", type="category", title_text="finding", categoryorder="array",
                     categoryarray=panels[0][2]["yaxis.categoryarray"] if panels else None)
    fig.update_xaxes(type="category", title_text="model group", categoryorder="array",
                     categoryarray=panels[0][2]["xaxis.categoryarray"] if panels else None)
    _dropdown(fig, panels, n_traces=len(fig.data))
    return fig


def rank_correlation_vs_paper(rc: pd.DataFrame, *, title: str = "Recomputed point value vs published "
                              "bootstrap mean ± sd") -> go.Figure:
    """Scatter of the recomputed statistic against the paper's bootstrap mean (error bars: paper sd).

    Uses ``statistic``, ``paper_mean`` and optionally ``paper_sd``, ``method``.
    """
    df = rc.copy()
    if "method" not in df.columns:
        df["method"] = "SRCC"
    fig = go.Figure()
    for i, method in enumerate(ordered(df["method"], summary_first=False)):
        s = df[df["method"].astype(str) == method]
        sd = _num(s, "paper_sd")
        label = (s["finding"].astype(str) + " / " + s.get("group", pd.Series("", index=s.index)).astype(str) + " / "
                 + s["reference_a"].astype(str) + " vs " + s["reference_b"].astype(str))
        fig.add_trace(go.Scatter(
            x=_num(s, "paper_mean"), y=_num(s, "statistic"), mode="markers", name=method,
            marker={"color": _color(i), "size": 8},
            error_x={"type": "data", "array": np.nan_to_num(sd)} if np.isfinite(sd).any() else None,
            text=label, hovertemplate="%{text}<br>paper %{x:.3f}, recomputed %{y:.3f}<extra></extra>"))
    fig.add_trace(go.Scatter(x=[-1, 1], y=[-1, 1], mode="lines", name="y = x",
                             line={"color": "#999", "dash": "dot", "width": 1}, hoverinfo="skip"))
    _base_layout(fig, title=title, height=460)
    fig.update_xaxes(title_text="paper bootstrap mean", range=[-1.05, 1.05])
    fig.update_yaxes(title_text="recomputed point value", range=[-1.05, 1.05])
    return fig


# ---------------------------------------------------------------------------------------------------
# agreement and fusion
# ---------------------------------------------------------------------------------------------------

def interval_plot(df: pd.DataFrame, *, series: str, x: str = "finding",
                  metrics: Sequence[tuple[str, str, str, str]] = (("kappa_w", "kappa_low", "kappa_high", "κ"),),
                  kind: str = "dot", title: str = "") -> go.Figure:
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
    panels = []
    avail = [mt for mt in metrics if mt[0] in df.columns]
    for pi, (val, lo_c, hi_c, label) in enumerate(avail):
        idx = []
        for si, s in enumerate(sers):
            sub = df[df[series].astype(str) == s]
            xs = np.array([cats.index(str(v)) for v in sub[x]], dtype=float) + (si - (m - 1) / 2) * w
            v, lo, hi = _num(sub, val), _num(sub, lo_c), _num(sub, hi_c)
            color = ref_color(key[s])
            custom = np.stack([sub[x].astype(str), lo, hi], axis=1)
            hover = f"{s}<br>%{{customdata[0]}}: {label} %{{y:.3f}} (Low %{{customdata[1]:.3f}}, High %{{customdata[2]:.3f}})<extra></extra>"
            if kind == "bar":
                fig.add_trace(go.Bar(x=xs, y=v, width=w * 0.9, name=s, legendgroup=s, marker_color=_rgba(color, 0.75),
                                     visible=pi == 0, customdata=custom, hovertemplate=hover))
            else:
                fig.add_trace(go.Scatter(x=xs, y=v, mode="markers", name=s, legendgroup=s, visible=pi == 0,
                                         marker={"color": color, "size": 9, "symbol": "diamond"},
                                         customdata=custom, hovertemplate=hover))
            idx.append(len(fig.data) - 1)
            if np.isfinite(lo).any() or np.isfinite(hi).any():
                segx, segy = [], []
                for xi, a, b in zip(xs, lo, hi):
                    if np.isfinite(a) and np.isfinite(b):
                        segx += [xi, xi, None]
                        segy += [a, b, None]
                fig.add_trace(go.Scatter(x=segx, y=segy, mode="lines+markers", legendgroup=s, showlegend=False,
                                         line={"color": "#333" if kind == "bar" else color, "width": 2},
                                         marker={"symbol": "line-ew-open", "size": 10,
                                                 "color": "#333" if kind == "bar" else color},
                                         visible=pi == 0, hoverinfo="skip", name=f"{s} Low-High"))
                idx.append(len(fig.data) - 1)
        panels.append((label, idx, {"yaxis.title.text": f"{label} (point) with Low-High interval"}))
    _base_layout(fig, title=title, height=460)
    fig.update_xaxes(tickvals=list(range(len(cats))), ticktext=cats, range=[-0.6, len(cats) - 0.4], title_text=x)
    fig.update_yaxes(title_text=panels[0][2]["yaxis.title.text"] if panels else "", zeroline=True)
    if kind == "bar":
        fig.update_layout(barmode="overlay")
    _dropdown(fig, panels, n_traces=len(fig.data), prefix="metric: ")
    return fig


def prevalence_bars(prev: pd.DataFrame, *, title: str = "Label prevalence per source") -> go.Figure:
    """Stacked bars of label states per finding and source (percent when given, else count)."""
    df = prev.copy()
    value = "percent" if "percent" in df.columns else "count"
    fig = go.Figure()
    findings = ordered(df["finding"], summary_first=False)
    sources = ordered(df["source"], summary_first=False)
    states = [s for s in _STATE_ORDER if s in set(df["state"].astype(str))]
    states += [s for s in ordered(df["state"], summary_first=False) if s not in states]
    for i, state in enumerate(states):
        sub = df[df["state"].astype(str) == state]
        key = {(str(f), str(s)): v for f, s, v in zip(sub["finding"], sub["source"], _num(sub, value))}
        xs = [[f for f in findings for _ in sources], [s for _ in findings for s in sources]]
        ys = [key.get((f, s), 0.0) for f in findings for s in sources]
        fig.add_trace(go.Bar(x=xs, y=ys, name=state, marker_color=STATE_COLORS.get(state, _color(i)),
                             hovertemplate="%{x}<br>" + state + ": %{y}<extra></extra>"))
    _base_layout(fig, title=title, height=460)
    fig.update_layout(barmode="stack")
    fig.update_yaxes(title_text="studies (%)" if value == "percent" else "studies (count)")
    fig.update_xaxes(title_text="finding / label source")
    return fig


def sankey_flows(flows: pd.DataFrame, *, title: str = "Label flows between sources",
                 max_panels: int = 60) -> go.Figure:
    """Sankey diagram of label states from one source to another (XQA Figure 4), one panel per
    ``(source_a, source_b, finding)``. Flows whose state is unchanged are grey; changed flows take the
    colour of the left state."""
    df = flows.copy()
    df["count"] = _num(df, "count")
    keys = list(dict.fromkeys(zip(df["source_a"].astype(str), df["source_b"].astype(str), df["finding"].astype(str))))
    keys.sort(key=lambda k: (k[2] not in _SUMMARY_ROWS and k[2] != "all", 0))
    keys = keys[:max_panels]
    fig = go.Figure()
    panels = []
    for pi, (a, b, f) in enumerate(keys):
        sub = df[(df["source_a"].astype(str) == a) & (df["source_b"].astype(str) == b) & (df["finding"].astype(str) == f)]
        sub = sub[sub["count"] > 0]
        sa = [s for s in _STATE_ORDER if s in set(sub["state_a"].astype(str))]
        sa += [s for s in ordered(sub["state_a"], summary_first=False) if s not in sa]
        sb = [s for s in _STATE_ORDER if s in set(sub["state_b"].astype(str))]
        sb += [s for s in ordered(sub["state_b"], summary_first=False) if s not in sb]
        labels = [f"{a}: {s}" for s in sa] + [f"{b}: {s}" for s in sb]
        colors = [STATE_COLORS.get(s, "#999") for s in sa + sb]
        src = [sa.index(str(s)) for s in sub["state_a"]]
        tgt = [len(sa) + sb.index(str(s)) for s in sub["state_b"]]
        lcol = [_rgba("#999999", 0.35) if str(x) == str(y) else _rgba(STATE_COLORS.get(str(x), "#999999"), 0.55)
                for x, y in zip(sub["state_a"], sub["state_b"])]
        fig.add_trace(go.Sankey(
            node={"label": labels, "color": colors, "pad": 18, "thickness": 16},
            link={"source": src, "target": tgt, "value": sub["count"].tolist(), "color": lcol},
            visible=pi == 0, name=f"{a} → {b}: {f}", arrangement="fixed"))
        panels.append((f"{a} → {b}: {f}", [pi], {"title.text": f"{title}: {a} → {b}, {f}"}))
    first = panels[0][2]["title.text"] if panels else title
    _base_layout(fig, title=first, height=440)
    _dropdown(fig, panels, n_traces=len(fig.data))
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


def localization_curves(loc: pd.DataFrame, *, title: str = "Localization accuracy and false positives vs T"
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
    panels = []
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
                fig.add_trace(go.Scatter(x=s["T"].to_numpy(), y=_num(s, metric), mode="lines+markers", name=f, legendgroup=f,
                                         showlegend=show, line={"color": _color(fi)}, visible=vi == 0,
                                         hovertemplate=f + f"<br>T=%{{x}}: {metric} %{{y:.3f}}<extra></extra>"),
                              row=1, col=col)
                idx.append(len(fig.data) - 1)
        parts = [f"{'threshold ' if c == 'threshold' else 'rule ' if c == 'rule' else ''}{val}"
                 for c, val in zip(case_cols, key.split("\x1f")) if val not in ("", "-", "nan")]
        label = ", ".join(parts) or "all"
        panels.append((label, idx, {"title.text": title if len(variants) > 1 else f"{title} ({label})"}))
    first = panels[0][2]["title.text"] if panels else title
    _base_layout(fig, title=first, height=440)
    fig.update_xaxes(title_text="T (overlap threshold)")
    fig.update_yaxes(title_text="accuracy", row=1, col=1)
    fig.update_yaxes(title_text="average false positives per image", row=1, col=2)
    _dropdown(fig, panels, n_traces=len(fig.data))
    if fig.layout.updatemenus:  # above the subplot titles
        fig.update_layout(margin={"t": 135}, height=480)
        fig.layout.updatemenus[0].y = 1.1
    return fig


def iqa_scatter(merged: pd.DataFrame, *, value: str = "value", zmos: str = "zmos",
                title: str = "IQA metric vs z-MOS") -> go.Figure:
    """Scatter of each metric's value against the experts' z-MOS, one panel per metric.

    ``merged`` holds ``metric``, ``value`` and ``zmos`` columns (scores joined with z-MOS);
    ``test`` (or ``reference``) labels the points when present.
    """
    fig = go.Figure()
    panels = []
    label_col = next((c for c in ("test", "image", "reference") if c in merged.columns), None)
    for i, metric in enumerate(ordered(merged["metric"], summary_first=False)):
        s = merged[merged["metric"].astype(str) == metric]
        fig.add_trace(go.Scatter(x=_num(s, zmos), y=_num(s, value), mode="markers", name=metric,
                                 marker={"color": _color(i), "size": 7}, visible=i == 0,
                                 text=s[label_col].astype(str) if label_col else None,
                                 hovertemplate="%{text}<br>z-MOS %{x:.3f}, " + metric + " %{y:.4g}<extra></extra>"))
        panels.append((metric, [i], {"yaxis.title.text": metric, "title.text": f"{title}: {metric}"}))
    first = panels[0][2]["title.text"] if panels else title
    _base_layout(fig, title=first, height=420)
    fig.update_xaxes(title_text="z-MOS (experts)")
    fig.update_yaxes(title_text=panels[0][0] if panels else value)
    _dropdown(fig, panels, n_traces=len(fig.data), prefix="metric: ")
    return fig


def iqa_correlation_bars(ma: pd.DataFrame, *, title: str = "Metric agreement with experts (SRCC / KRCC)"
                         ) -> go.Figure:
    """Grouped bars of SRCC and KRCC per metric, with interval whiskers when CI columns are present
    (``srcc_low``/``srcc_high``, ``srcc_ci_low``/``srcc_ci_high`` or ``_lo``/``_hi``)."""
    fig = go.Figure()
    metrics = ordered(ma["metric"], summary_first=False)
    for i, stat in enumerate(s for s in ("srcc", "krcc") if s in ma.columns):
        v = _num(ma, stat)
        lo_c, hi_c = ci_columns(ma, stat)
        err = None
        if lo_c and hi_c:
            lo, hi = _num(ma, lo_c), _num(ma, hi_c)
            err = {"type": "data", "symmetric": False, "array": np.clip(np.nan_to_num(hi - v), 0, None),
                   "arrayminus": np.clip(np.nan_to_num(v - lo), 0, None)}
        fig.add_trace(go.Bar(x=ma["metric"].astype(str), y=v, name=stat.upper(), marker_color=_color(i), error_y=err,
                             hovertemplate="%{x}: " + stat.upper() + " %{y:.3f}<extra></extra>"))
    _base_layout(fig, title=title, height=420)
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
        fig.add_trace(go.Box(x=s["degradation"].astype(str), y=_num(s, "value"), name=metric, boxpoints="all",
                             jitter=0.3, pointpos=0, marker={"color": _color(i), "size": 7}, line={"width": 1},
                             fillcolor="rgba(0,0,0,0)", text=label[s.index], visible=i == 0,
                             hovertemplate="%{text}, %{x}<br>" + metric + " %{y:.4g}<extra></extra>"))
        panels.append((metric, [i], {"yaxis.title.text": metric, "title.text": f"{title}: {metric}"}))
    first = panels[0][2]["title.text"] if panels else title
    _base_layout(fig, title=first, height=420)
    fig.update_xaxes(categoryorder="array", categoryarray=degs, title_text="degradation")
    fig.update_yaxes(title_text=panels[0][0] if panels else "value")
    fig.update_layout(showlegend=False)
    _dropdown(fig, panels, n_traces=len(fig.data), prefix="metric: ")
    return fig


def degradation_rank_heatmap(ranking: pd.DataFrame, *, title: str = "How each metric ranks the degradations "
                             "(1 = judged least harmful)") -> go.Figure:
    """Heat map of each metric's rank of each degradation (``metric, degradation, rank``); rows whose
    ranks differ between metrics are where the metrics disagree."""
    metrics = ordered(ranking["metric"], summary_first=False)
    degs = ordered(ranking.sort_values("rank", kind="stable")["degradation"], summary_first=False)
    z = np.full((len(degs), len(metrics)), np.nan)
    for m, d, r in zip(ranking["metric"].astype(str), ranking["degradation"].astype(str), _num(ranking, "rank")):
        z[degs.index(d), metrics.index(m)] = r
    text = np.where(np.isfinite(z), np.vectorize(lambda v: f"{v:g}")(np.nan_to_num(z)), "")
    fig = go.Figure(go.Heatmap(z=z, x=metrics, y=degs, text=text, texttemplate="%{text}", colorscale="Viridis",
                               reversescale=True, colorbar={"title": {"text": "rank"}},
                               hovertemplate="%{x}: %{y} ranked %{z}<extra></extra>"))
    _base_layout(fig, title=title, height=max(320, 150 + 40 * len(degs)))
    fig.update_yaxes(autorange="reversed", type="category", title_text="degradation")
    fig.update_xaxes(type="category", title_text="metric")
    return fig


def metric_correlation_matrix(mvm: pd.DataFrame, *, title: str = "Agreement between metrics (metric vs metric)"
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
            for a, b, v in zip(sub["metric_a"].astype(str), sub["metric_b"].astype(str), _num(sub, stat)):
                z[metrics.index(a), metrics.index(b)] = z[metrics.index(b), metrics.index(a)] = v
            n = int(_num(sub, "n")[0]) if "n" in sub.columns and len(sub) else 0
            label = f"{stat.upper()} over {over}" + (f" (n={n})" if n else "")
            fig.add_trace(go.Heatmap(z=z, x=metrics, y=metrics, zmin=-1, zmax=1, zmid=0, colorscale="RdBu",
                                     texttemplate="%{z:.2f}", visible=not panels, name=label,
                                     colorbar={"title": {"text": stat.upper()}},
                                     hovertemplate="%{y} vs %{x}: %{z:.3f}<extra></extra>"))
            panels.append((label, [len(fig.data) - 1], {"title.text": f"{title}: {label}"}))
    first = panels[0][2]["title.text"] if panels else title
    _base_layout(fig, title=first, height=max(360, 160 + 40 * len(metrics)))
    fig.update_yaxes(autorange="reversed", type="category", title_text="metric")
    fig.update_xaxes(type="category", title_text="metric")
    _dropdown(fig, panels, n_traces=len(fig.data))
    return fig


_BOX_COLS = (("x0", "y0", "x1", "y1"), ("x_min", "y_min", "x_max", "y_max"))


def _box_xy(boxes: pd.DataFrame) -> tuple[list, list]:
    cols = next((c for c in _BOX_COLS if set(c) <= set(boxes.columns)), _BOX_COLS[0])
    xs: list = []
    ys: list = []
    for x0, y0, x1, y1 in zip(*(_num(boxes, c) for c in cols)):
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


_HEAT = [[0.0, "rgba(255,40,0,0)"], [0.25, "rgba(255,40,0,0.12)"], [0.6, "rgba(255,120,0,0.45)"],
         [1.0, "rgba(255,230,0,0.75)"]]
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
        fig.add_trace(go.Image(source=p["source"], x0=s / 2, y0=s / 2, dx=s, dy=s, visible=pi == 0, name="image",
                               hoverinfo="skip"))
        idx.append(len(fig.data) - 1)
        hm = p.get("heatmap")
        if hm is not None:
            hm = np.asarray(hm, dtype=float)
            c = float(p["image_size"]) / hm.shape[0]
            fig.add_trace(go.Heatmap(z=hm, x0=c / 2, dx=c, y0=c / 2, dy=c, colorscale=_HEAT, zmin=0, zmax=1,
                                     showscale=False, zsmooth="best", visible=pi == 0, name="heat map",
                                     hovertemplate="heat map %{z:.2f}<extra></extra>"))
            idx.append(len(fig.data) - 1)
        b = p["boxes"]
        for kind in kinds_all:
            sub = b[b["kind"].astype(str) == kind]
            color, dash, width = _KIND_STYLE.get(kind, (_DETECTED_COLORS[detected.index(kind) % 4]
                                                        if kind in detected else "#999", "dash", 2))
            xs, ys = _box_xy(sub)
            fig.add_trace(go.Scatter(x=xs or [None], y=ys or [None], mode="lines", name=f"{kind} ({len(sub)})",
                                     line={"color": color, "width": width, "dash": dash}, visible=pi == 0,
                                     legendgroup=kind, hoverinfo="skip"))
            idx.append(len(fig.data) - 1)
        menu.append((p["label"], idx, {"title.text": f"{title}: {p['label']}"}))
    first = menu[0][2]["title.text"] if menu else title
    _base_layout(fig, title=first, height=640)
    fig.update_xaxes(range=[0, size], showgrid=False, visible=False, constrain="domain")
    fig.update_yaxes(range=[size, 0], showgrid=False, visible=False, scaleanchor="x", constrain="domain")
    fig.update_layout(margin={"l": 10, "r": 10, "t": 100, "b": 10}, legend={"x": 1.0, "y": 1.0})
    _dropdown(fig, menu, n_traces=len(fig.data), prefix="image: ")
    return fig


def box_overlay(image: np.ndarray, boxes: pd.DataFrame, *, title: str = "", heatmap: np.ndarray | None = None
                ) -> go.Figure:
    """One radiograph (greyscale array) with boxes and optionally a coarse heat map drawn over it.

    ``boxes`` has ``kind`` (default ``reference``) and ``x_min, y_min, x_max, y_max`` or ``x0, y0, x1,
    y1`` in the image's pixels; see :func:`box_overlays`.
    """
    img = np.asarray(image, dtype=float)
    b = boxes if "kind" in boxes.columns else boxes.assign(kind="reference")
    return box_overlays([{"label": title or "image", "source": png_data_uri(img), "image_size": img.shape[0],
                          "png_size": img.shape[0], "boxes": b, "heatmap": heatmap}], title=title or "Boxes")
