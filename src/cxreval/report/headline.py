"""The headline figure of the report's first screen: does the best model change with the reference?

The *main comparison* is the first classification section (page order) whose ``auc.csv`` scores the models
under at least two references. Its figure is chosen by one rule (:data:`RULE`, stated in the report's Methods,
not under the figure, whose caption only says how to read it):

- **dot and interval** when it has at most :data:`MAX_DOT_REFERENCES` references and bootstrap intervals:
  each model's AUC with its interval under each reference (one colour per reference), models ordered by their
  AUC under the first (main) reference, for the macro average (else the first finding);
- **rank bump chart** otherwise (many references, or no intervals), from the folder's ``rankings.csv``.

>>> MAX_DOT_REFERENCES
4
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from .._plots import analyses as plots
from .._plots.style import base_layout, interval_error, num, ref_color, ref_symbol
from ..ranking import RankingStabilityResult
from ..schema import MEAN
from ..schema._columns import SUMMARY_ROWS
from ..stats import AUCTableResult
from ._blocks import Section, load_table

__all__: list[str] = []

MAX_DOT_REFERENCES = 4
"""The most references a dot-and-interval headline shows (one colour each); more give the rank bump chart."""

RULE = (
    f"The figure under the key findings shows the first model comparison with two or more references: a "
    f"dot-and-interval plot when it has at most {MAX_DOT_REFERENCES} references with bootstrap intervals, else "
    f"the rank bump chart."
)


@dataclass(frozen=True)
class Headline:
    """The headline figure, the section it shows and the caption that says what it is and why this form."""

    figure: go.Figure
    section: Section
    caption: str


def _summary_finding(findings: Sequence[str]) -> str:
    return next((f for f in SUMMARY_ROWS if f in findings), findings[0])


def auc_by_reference(auc: pd.DataFrame, *, finding: str, title: str) -> go.Figure:
    """Dot and interval: each model's AUC (dot) and interval (bar) under each reference (colour), for ``finding``;
    models (rows) ordered by their AUC under the first reference, best on top."""
    sub = auc[auc["finding"].astype(str) == finding].copy()
    refs = list(dict.fromkeys(sub["reference"].astype(str)))
    sub["_a"] = num(sub, "auc")
    main = sub[sub["reference"].astype(str) == refs[0]]
    models = main.sort_values("_a", ascending=False, kind="stable")["model"].astype(str).tolist()
    models += [m for m in dict.fromkeys(sub["model"].astype(str)) if m not in models]
    pos = {m: i for i, m in enumerate(models)}
    m = len(refs)
    width = 0.6 / max(m, 1)
    fig = go.Figure()
    for ri, ref in enumerate(refs):
        s = sub[sub["reference"].astype(str) == ref]
        a, lo, hi = num(s, "auc"), num(s, "ci_low"), num(s, "ci_high")
        y = np.array([pos[str(x)] for x in s["model"]], dtype=float) + (ri - (m - 1) / 2) * width
        err = interval_error(a, lo, hi, thickness=1.5)
        fig.add_trace(
            go.Scatter(
                x=a,
                y=y,
                mode="markers",
                name=ref + (" (order)" if ri == 0 else ""),
                error_x=err,
                marker={"color": ref_color(ref), "size": 9, "symbol": ref_symbol(ref)},
                customdata=np.stack([s["model"].astype(str).to_numpy(dtype=object), lo, hi], axis=1),
                hovertemplate="%{customdata[0]}<br>" + ref + ": AUC %{x:.3f} [%{customdata[1]:.3f}, "
                "%{customdata[2]:.3f}]<extra></extra>",
            )
        )
    base_layout(fig, title=title, height=150 + 26 * len(models))
    fig.update_yaxes(
        tickvals=list(range(len(models))),
        ticktext=models,
        autorange="reversed",
        showgrid=False,
        zeroline=False,
    )
    fig.update_xaxes(title_text="ROC-AUC with 95% bootstrap interval")
    # the legend at the figure's foot, under the axis title (container coordinates: clear of it at any height)
    fig.update_layout(
        legend={"orientation": "h", "x": 0.0, "y": 0.0, "yanchor": "bottom", "yref": "container"},
        margin={"l": 10, "r": 10, "t": 72, "b": 100},
        height=210 + 26 * len(models),
    )
    return fig


def headline(sections: Sequence[Section]) -> Headline | None:
    """The headline figure of the page (:data:`RULE`), or None when no section compares models under two
    references."""
    auc_file = AUCTableResult.FILES["auc"]
    for sec in sections:
        if sec.kind != "classification":
            continue
        df, _, why = load_table(sec.folder, auc_file, AUCTableResult.COLUMNS)
        if df is None or why:
            continue
        summary = df["model"].astype(str).str.lower().isin((MEAN, "mean", "average"))
        if "group" in df.columns:
            summary |= df["group"].astype(str).str.lower() == "summary"
        df = df[~summary]
        if "dataset" in df.columns and df["dataset"].astype(str).nunique() > 1:
            df = df[df["dataset"].astype(str) == df["dataset"].astype(str).iloc[0]]
        refs = list(dict.fromkeys(df["reference"].astype(str)))
        if len(refs) < 2:
            continue
        finding = _summary_finding(list(dict.fromkeys(df["finding"].astype(str))))
        what = f"{finding} AUC" if finding in SUMMARY_ROWS else f"AUC for {finding}"
        name = sec.title.split(" — ", 1)[-1]
        name = "" if name == sec.folder.name else f"{name}. "  # a folder's own name says nothing to a reader
        has_ci = {"ci_low", "ci_high"} <= set(df.columns) and np.isfinite(num(df, "ci_low")).any()
        if len(refs) <= MAX_DOT_REFERENCES and has_ci:
            fig = auc_by_reference(
                df, finding=finding, title=f"{what[0].upper() + what[1:]} under each reference"
            )
            caption = (
                f"{name}Each row is one model, ordered by its {what} under {refs[0]}; each colour is one "
                f"reference ({', '.join(refs)}), the bar its 95% bootstrap interval. Where the orders differ, "
                "the best model depends on the reference."
            )
            return Headline(fig, sec, caption)
        rk, _, why = load_table(
            sec.folder, RankingStabilityResult.FILES["rankings"], ("finding", "reference", "model", "rank")
        )
        if rk is None or why:
            continue
        rk = rk[rk["finding"].astype(str) == finding]
        if "group" in rk.columns and rk["group"].astype(str).nunique() > 1:
            rk = rk[rk["group"].astype(str) == rk["group"].astype(str).iloc[0]]
        fig = plots.bump_chart(rk, title=f"Model ranks by {what}")
        caption = (
            f"{name}Each line follows one model's rank by {what} from reference to reference ({len(refs)} "
            f"references); crossing lines are rank changes, thick lines are models ranked first under some "
            "reference."
        )
        return Headline(fig, sec, caption)
    return None
