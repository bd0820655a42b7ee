"""Shared style of the report's figures: colour-blind-safe palette, one colour per reference, layout helpers.

Colours are Okabe & Ito's eight, then Paul Tol's muted set; a reference keeps one colour in every figure
of a report: :func:`reference_colors` holds the name -> colour map that :func:`ref_color` fills in order
of first use (the report opens one map per page). Helpers: :func:`ordered` (categories in order of first
appearance, macro/micro first), :func:`base_layout`, :func:`dropdown` (a menu that switches panels),
:func:`num` (a column as floats).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from contextvars import ContextVar

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from ..schema._columns import SUMMARY_ROWS
from ..schema._states import ORDINAL_STATES, REPORT_STATES

__all__ = [
    "OKABE_ITO",
    "TOL_MUTED",
    "PALETTE",
    "SYMBOLS",
    "STATE_COLORS",
    "STATE_ORDER",
    "CORRELATION_SCALE",
    "SUMMARY_ROWS",
    "reference_colors",
    "ref_color",
    "ref_symbol",
    "palette_color",
    "rgba",
    "ordered",
    "base_layout",
    "dropdown",
    "num",
    "ci_columns",
    "interval_error",
    "text_heatmap",
]

OKABE_ITO = ("#0072B2", "#E69F00", "#009E73", "#D55E00", "#56B4E9", "#CC79A7", "#000000", "#F0E442")
TOL_MUTED = (
    "#882255",
    "#44AA99",
    "#999933",
    "#AA4499",
    "#332288",
    "#88CCEE",
    "#DDCC77",
    "#117733",
    "#CC6677",
)
PALETTE = tuple(c for c in OKABE_ITO if c != "#F0E442") + TOL_MUTED + ("#F0E442",)
"""Colour-blind-safe categorical colours: Okabe & Ito (2008), then Paul Tol's 'muted' scheme; Okabe & Ito's
yellow, faint on white, last."""
SYMBOLS = ("circle", "square", "diamond", "triangle-up", "x", "triangle-down", "star", "cross")
CORRELATION_SCALE = {"zmin": -1, "zmax": 1, "zmid": 0, "colorscale": "RdBu"}
"""The colours of a heat map of correlations: red to blue over -1..1, white at 0."""

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


def ref_symbol(name: str) -> str:
    """The marker symbol of reference ``name`` (changes once the palette repeats)."""
    cmap = _REF_COLORS.get() or {}
    i = list(cmap).index(name) if name in cmap else 0
    return SYMBOLS[(i // len(PALETTE)) % len(SYMBOLS)]  # a second round of colours gets another symbol


STATE_ORDER = (*reversed(ORDINAL_STATES), *REPORT_STATES[len(ORDINAL_STATES) :], "missing")
"""States in the order figures stack them: positive, uncertain, negative, not_mentioned, missing."""
STATE_COLORS = dict(zip(STATE_ORDER, ("#D55E00", "#F0E442", "#0072B2", "#999999", "#DDDDDD"), strict=True))
"""The colour of each state (:data:`STATE_ORDER`)."""


def palette_color(i: int) -> str:
    """The ``i``-th palette colour (cycling)."""
    return PALETTE[i % len(PALETTE)]


def rgba(hex_color: str, alpha: float) -> str:
    """``#rrggbb`` as ``rgba(r,g,b,alpha)``."""
    h = hex_color.lstrip("#")
    r, g, b = (int(h[i : i + 2], 16) for i in (0, 2, 4))
    return f"rgba({r},{g},{b},{alpha})"


def ordered(values: Sequence[object] | pd.Series, *, summary_first: bool = True) -> list[str]:
    """Unique values as strings in order of first appearance; 'macro'/'micro' first (or last)."""
    seen = list(dict.fromkeys(str(v) for v in values))
    summary = [s for s in SUMMARY_ROWS if s in seen]
    rest = [s for s in seen if s not in summary]
    return summary + rest if summary_first else rest + summary


def base_layout(fig: go.Figure, *, title: str, height: int) -> go.Figure:
    """Title, height, template, margins and legend shared by every figure."""
    fig.update_layout(
        # the title under the mode bar (its buttons take the top 28 px and would cover a title there; a second
        # title line moves the first up by ~10 px)
        title={
            "text": title,
            "x": 0.0,
            "xanchor": "left",
            "yref": "container",
            "y": 1.0,
            "yanchor": "top",
            "pad": {"t": 48},
            "font": {"size": 15},
        },
        height=int(height),
        template="plotly_white",
        margin={"l": 60, "r": 20, "t": 70, "b": 50},
        legend={"orientation": "v", "x": 1.02, "y": 1.0},
        font={"size": 12},
    )
    return fig


def dropdown(
    fig: go.Figure, panels: list[tuple[str, list[int], dict]], *, n_traces: int, prefix: str = ""
) -> None:
    """Add a menu that shows one panel (a set of trace indices and layout changes) at a time."""
    if len(panels) <= 1:
        return
    buttons = []
    for label, idx, layout in panels:
        vis = [False] * n_traces
        for i in idx:
            vis[i] = True
        buttons.append({"label": f"{prefix}{label}", "method": "update", "args": [{"visible": vis}, layout]})
    fig.update_layout(
        updatemenus=[
            {
                "buttons": buttons,
                "direction": "down",
                "x": 0.0,
                "xanchor": "left",
                "y": 1.0,
                "yanchor": "bottom",
                "pad": {"b": 4},
                "showactive": True,
                "active": 0,
            }
        ],
        margin={"t": 100},
    )


def num(df: pd.DataFrame, col: str) -> np.ndarray:
    """Column ``col`` as floats (NaN where not numeric or absent)."""
    if col not in df.columns:
        return np.full(len(df), np.nan)
    return pd.to_numeric(df[col], errors="coerce").to_numpy(dtype=float)


def ci_columns(df: pd.DataFrame, stat: str) -> tuple[str, str] | tuple[None, None]:
    """The interval columns of statistic ``stat`` (``<stat>_low/_high``, ``_ci_low/_ci_high``, ``_lo/_hi`` or
    ``_lower/_upper``), or (None, None)."""
    for lo, hi in (
        (f"{stat}_low", f"{stat}_high"),
        (f"{stat}_ci_low", f"{stat}_ci_high"),
        (f"{stat}_lo", f"{stat}_hi"),
        (f"{stat}_lower", f"{stat}_upper"),
    ):
        if lo in df.columns and hi in df.columns:
            return lo, hi
    return None, None


def interval_error(value: np.ndarray, low: np.ndarray, high: np.ndarray, *, thickness: float) -> dict | None:
    """Plotly error bars (``error_x``) from ``value`` to ``low`` and ``high`` (clipped at 0), or None when no
    ``low`` is finite."""
    if not np.isfinite(low).any():
        return None
    return {
        "type": "data",
        "symmetric": False,
        "array": np.clip(high - value, 0, None),
        "arrayminus": np.clip(value - low, 0, None),
        "thickness": thickness,
        "width": 3,
    }


def text_heatmap(
    z: np.ndarray, *, x: Sequence[str], y: Sequence[str], text: np.ndarray, **style: object
) -> go.Heatmap:
    """A heat map of ``z`` (rows ``y``, columns ``x``) with ``text`` written in its cells; ``style``: the other
    ``go.Heatmap`` properties."""
    return go.Heatmap(z=z, x=x, y=y, text=text, texttemplate="%{text}", **style)
