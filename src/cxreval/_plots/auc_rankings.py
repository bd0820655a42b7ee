"""Figures of the AUC and ranking tables: AUCs per model and reference, model ranks across references and rank
correlations between references. Re-exported by :mod:`cxreval._plots.analyses`."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from .style import (
    CORRELATION_SCALE,
    SUMMARY_ROWS,
    base_layout,
    dropdown,
    interval_error,
    num,
    ordered,
    palette_color,
    ref_color,
    ref_symbol,
    text_heatmap,
)

__all__ = [
    "auc_forest",
    "bump_chart",
    "separability_forest",
    "rank_correlation_heatmap",
    "rank_correlation_vs_paper",
]


def auc_forest(auc: pd.DataFrame, *, title: str = "ROC-AUC per model and reference") -> go.Figure:
    """Forest plot: AUC with its CI per model (rows) and reference (colours), one panel per finding.

    Uses columns ``model, finding, reference, auc`` and, when present, ``group``, ``ci_low``, ``ci_high``.
    """
    df = auc.copy()
    df["model"] = df["model"].astype(str)
    summary = df["model"].str.lower().isin(("mean", "average"))
    if "group" in df.columns:
        summary |= df["group"].astype(str).str.lower() == "summary"
        groups = set(df.loc[~summary, "group"].astype(str))
    else:
        groups = set()
    # models are named as given; their group only where the table has several groups; the mean over models
    # (a summary row, not a model) is labelled so and placed after the models
    df["label"] = df["model"] + (" (" + df["group"].astype(str) + ")" if len(groups) > 1 else "")
    df.loc[summary, "label"] = df.loc[summary, "model"] + " of the models"
    df["_summary"] = summary
    findings = ordered(df["finding"])
    refs = ordered(df["reference"], summary_first=False)
    m = len(refs)
    width = 0.7 / max(m, 1)
    fig = go.Figure()
    panels: list[tuple[str, list[int], dict[str, Any]]] = []
    n_rows_max = 1
    for fi, finding in enumerate(findings):
        sub = df[df["finding"].astype(str) == finding]
        models = sub[~sub["_summary"]]
        labels = (
            models.assign(_a=num(models, "auc"))
            .groupby("label", sort=False)["_a"]
            .mean()
            .sort_values(ascending=False, kind="stable")
            .index.tolist()
        )
        labels += list(dict.fromkeys(sub.loc[sub["_summary"], "label"]))
        pos = {lab: i for i, lab in enumerate(labels)}
        n_rows_max = max(n_rows_max, len(labels))
        idx = []
        for ri, ref in enumerate(refs):
            s = sub[sub["reference"].astype(str) == ref]
            if s.empty:
                continue
            a = num(s, "auc")
            lo, hi = num(s, "ci_low"), num(s, "ci_high")
            y = np.array([pos[lab] for lab in s["label"]], dtype=float) + (ri - (m - 1) / 2) * width
            err = interval_error(a, lo, hi, thickness=1.2)
            custom = np.stack([s["model"].to_numpy(dtype=object), lo, hi], axis=1)
            fig.add_trace(
                go.Scatter(
                    x=a,
                    y=y,
                    mode="markers",
                    name=ref,
                    legendgroup=ref,
                    showlegend=True,
                    marker={"color": ref_color(ref), "size": 8, "symbol": ref_symbol(ref)},
                    error_x=err,
                    visible=fi == 0,
                    customdata=custom,
                    hovertemplate="%{customdata[0]}<br>" + ref + ": AUC %{x:.3f} [%{customdata[1]:.3f}, "
                    "%{customdata[2]:.3f}]<extra></extra>",
                )
            )
            idx.append(len(fig.data) - 1)
        panels.append(
            (
                finding,
                idx,
                {
                    "yaxis.tickvals": list(range(len(labels))),
                    "yaxis.ticktext": labels,
                    "title.text": f"{title}: {finding}",
                },
            )
        )
    base_layout(
        fig, title=f"{title}: {findings[0]}" if findings else title, height=170 + n_rows_max * max(28, 11 * m)
    )
    if panels:
        fig.update_yaxes(
            tickvals=panels[0][2]["yaxis.tickvals"],
            ticktext=panels[0][2]["yaxis.ticktext"],
            autorange="reversed",
            showgrid=False,
            zeroline=False,
        )
    fig.update_xaxes(title_text="ROC-AUC (0.5 = chance, 1 = perfect)")
    fig.update_yaxes(title_text="model")
    dropdown(fig, panels, n_traces=len(fig.data), prefix="finding: ")
    return fig


def separability_forest(
    comparison: pd.DataFrame, *, title: str = "Paired AUC differences of the best model"
) -> go.Figure:
    """Paired ΔAUC (``model_a − model_b``) with its interval, one panel per finding (menu) and one row per
    comparison (``reference: model_a − model_b``), so no two intervals share a row whatever the number of
    references; separable comparisons (interval excluding 0) coloured, the others grey.

    Uses columns ``finding, reference, model_a, model_b, difference, ci_low, ci_high`` and, when present,
    ``separable``, ``comparison``.
    """
    df = comparison.copy()
    lo, hi = num(df, "ci_low"), num(df, "ci_high")
    sep = (lo > 0) | (hi < 0)
    if "separable" in df.columns:
        sep = df["separable"].astype(str).str.lower().isin(("true", "1")).to_numpy()
    df["_sep"] = sep
    df["_row"] = (
        df["reference"].astype(str) + ": " + df["model_a"].astype(str) + " − " + df["model_b"].astype(str)
    )
    why = df["comparison"].astype(str) if "comparison" in df.columns else pd.Series("", index=df.index)
    fig = go.Figure()
    panels: list[tuple[str, list[int], dict[str, Any]]] = []
    findings = ordered(df["finding"])
    n_rows_max = 1
    for fi, finding in enumerate(findings):
        sub = df[df["finding"].astype(str) == finding]
        refs = {r: i for i, r in enumerate(ordered(sub["reference"], summary_first=False))}
        sub = sub.iloc[np.argsort(sub["reference"].astype(str).map(refs).to_numpy(), kind="stable")]
        rows = list(dict.fromkeys(sub["_row"]))  # grouped by reference, in the table's order within one
        pos = {r: i for i, r in enumerate(rows)}
        n_rows_max = max(n_rows_max, len(rows))
        idx = []
        for flag, name, color in (
            (True, "separable", "#0072B2"),
            (False, "not separable (interval covers 0)", "#8a8a8a"),
        ):
            s = sub[sub["_sep"] == flag]
            if s.empty:
                continue
            d, a, b = num(s, "difference"), num(s, "ci_low"), num(s, "ci_high")
            fig.add_trace(
                go.Scatter(
                    x=d,
                    y=[pos[r] for r in s["_row"]],
                    mode="markers",
                    name=name,
                    legendgroup=name,
                    marker={"color": color, "size": 8},
                    error_x=interval_error(d, a, b, thickness=1.5),
                    visible=fi == 0,
                    customdata=np.stack([s["_row"], a, b, why[s.index]], axis=1),
                    hovertemplate="%{customdata[0]}<br>ΔAUC %{x:.3f} [%{customdata[1]:.3f}, %{customdata[2]:.3f}]"
                    "<br>%{customdata[3]}<extra></extra>",
                )
            )
            idx.append(len(fig.data) - 1)
        layout = {
            "yaxis.tickvals": list(range(len(rows))),
            "yaxis.ticktext": rows,
            "title.text": f"{title}: {finding}",
        }
        layout["yaxis.range"] = [len(rows) - 0.5, -0.5]
        panels.append((finding, idx, layout))
    first = panels[0][2] if panels else {}
    base_layout(fig, title=first.get("title.text", title), height=max(360, 190 + 24 * n_rows_max))
    fig.add_vline(x=0.0, line_dash="dot", line_color="grey")
    fig.update_xaxes(title_text="ΔAUC, model_a − model_b (0: not separable)", zeroline=False)
    fig.update_yaxes(
        tickvals=first.get("yaxis.tickvals"),
        ticktext=first.get("yaxis.ticktext"),
        range=first.get("yaxis.range"),
        title_text="comparison",
        showgrid=True,
    )
    dropdown(fig, panels, n_traces=len(fig.data), prefix="finding: ")
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
    df["rank"] = num(df, "rank")
    df["auc"] = num(df, "auc")
    fig = go.Figure()
    panels: list[tuple[str, list[int], dict[str, Any]]] = []
    keys = list(dict.fromkeys(zip(df["finding"].astype(str), df["group"].astype(str))))
    keys.sort(key=lambda k: (k[0] not in SUMMARY_ROWS, ordered(df["finding"]).index(k[0])))
    max_rank = 1
    for pi, (finding, group) in enumerate(keys):
        sub = df[(df["finding"].astype(str) == finding) & (df["group"].astype(str) == group)]
        top = sub[sub["rank"] == sub.groupby("reference")["rank"].transform("min")]
        top_models = set(top["model"].astype(str))
        tops_by_ref = top.groupby("reference", sort=False)["model"].agg(
            lambda s: "/".join(sorted(map(str, s)))
        )
        changes = tops_by_ref.nunique() > 1
        idx = []
        models = ordered(sub.sort_values(["rank"], kind="stable")["model"], summary_first=False)
        refs = ordered(
            sub["reference"], summary_first=False
        )  # this panel's references only: no empty columns
        xpos = {r: i for i, r in enumerate(refs)}
        max_rank = max(max_rank, int(np.nanmax(sub["rank"])) if sub["rank"].notna().any() else 1)
        for mi, model in enumerate(models):
            s = sub[sub["model"].astype(str) == model].copy()
            s["_x"] = s["reference"].astype(str).map(xpos)
            s = s.sort_values("_x")
            is_top = model in top_models
            fig.add_trace(
                go.Scatter(
                    x=s["_x"].to_numpy(),
                    y=s["rank"].to_numpy(),
                    mode="lines+markers",
                    name=model,
                    legendgroup=model,
                    line={"width": 4 if is_top else 1.5, "color": palette_color(mi)},
                    opacity=1.0 if is_top else 0.55,
                    marker={"size": 10 if is_top else 6},
                    visible=pi == 0,
                    customdata=np.stack([s["reference"].astype(str), s["auc"]], axis=1),
                    hovertemplate=model
                    + "<br>%{customdata[0]}: rank %{y}, AUC %{customdata[1]:.3f}<extra></extra>",
                )
            )
            idx.append(len(fig.data) - 1)
        note = (
            ("top rank changes: " + " | ".join(f"{r}: {m}" for r, m in tops_by_ref.items()))
            if changes
            else "top rank stable: " + (tops_by_ref.iloc[0] if len(tops_by_ref) else "")
        )
        label = finding if group == "all" else f"{finding} / {group}"
        panels.append(
            (
                label,
                idx,
                {
                    "title.text": f"{title}: {label}<br><sup>{note}</sup>",
                    "xaxis.tickvals": list(range(len(refs))),
                    "xaxis.ticktext": refs,
                    "xaxis.range": [-0.3, len(refs) - 0.7],
                },
            )
        )
    first = panels[0][2]["title.text"] if panels else title
    n_legend = max((len(p[1]) for p in panels), default=1)  # one legend line per model of the fullest panel
    base_layout(fig, title=first, height=max(360, 140 + 28 * max_rank, 170 + 30 * n_legend))
    if panels:
        fig.update_xaxes(
            tickvals=panels[0][2]["xaxis.tickvals"],
            ticktext=panels[0][2]["xaxis.ticktext"],
            range=panels[0][2]["xaxis.range"],
        )
    fig.update_xaxes(title_text="reference")
    fig.update_yaxes(range=[max_rank + 0.5, 0.5], title_text="rank (1 = best)", dtick=1)
    dropdown(fig, panels, n_traces=len(fig.data))
    return fig


def rank_correlation_heatmap(
    rc: pd.DataFrame, *, title: str = "Rank correlation between references"
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
    panels: list[tuple[str, list[int], dict[str, Any]]] = []
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
        fig.add_trace(
            text_heatmap(
                z,
                x=groups,
                y=findings,
                text=text,
                **CORRELATION_SCALE,
                visible=pi == 0,
                colorbar={"title": {"text": f"{method} (−1 to 1)"}},
                hovertemplate="%{y} / %{x}<br>" + method + " %{z:.3f}<extra></extra>",
                name=f"{method}: {pair}",
            )
        )
        panels.append(
            (
                f"{method}: {pair}",
                [pi],
                {
                    "title.text": f"{title}: {method}, {pair}",
                    "xaxis.categoryarray": groups,
                    "yaxis.categoryarray": findings,
                },
            )
        )
    first = panels[0][2]["title.text"] if panels else title
    base_layout(fig, title=first, height=max(320, 150 + 42 * n_findings))
    fig.update_yaxes(
        autorange="reversed",
        type="category",
        title_text="finding",
        categoryorder="array",
        categoryarray=panels[0][2]["yaxis.categoryarray"] if panels else None,
    )
    fig.update_xaxes(
        type="category",
        title_text="model group",
        categoryorder="array",
        categoryarray=panels[0][2]["xaxis.categoryarray"] if panels else None,
    )
    dropdown(fig, panels, n_traces=len(fig.data))
    return fig


def rank_correlation_vs_paper(
    rc: pd.DataFrame, *, title: str = "Recomputed point value vs published bootstrap mean ± sd"
) -> go.Figure:
    """Scatter of the recomputed statistic against the paper's bootstrap mean (error bars: paper sd).

    Uses ``statistic``, ``paper_mean`` and optionally ``paper_sd``, ``method``.
    """
    df = rc.copy()
    if "method" not in df.columns:
        df["method"] = "SRCC"
    fig = go.Figure()
    for i, method in enumerate(ordered(df["method"], summary_first=False)):
        s = df[df["method"].astype(str) == method]
        sd = num(s, "paper_sd")
        label = (
            s["finding"].astype(str)
            + " / "
            + s.get("group", pd.Series("", index=s.index)).astype(str)
            + " / "
            + s["reference_a"].astype(str)
            + " vs "
            + s["reference_b"].astype(str)
        )
        fig.add_trace(
            go.Scatter(
                x=num(s, "paper_mean"),
                y=num(s, "statistic"),
                mode="markers",
                name=method,
                marker={"color": palette_color(i), "size": 8},
                error_x={"type": "data", "array": np.nan_to_num(sd)} if np.isfinite(sd).any() else None,
                text=label,
                hovertemplate="%{text}<br>paper %{x:.3f}, recomputed %{y:.3f}<extra></extra>",
            )
        )
    fig.add_trace(
        go.Scatter(
            x=[-1, 1],
            y=[-1, 1],
            mode="lines",
            name="y = x",
            line={"color": "#999", "dash": "dot", "width": 1},
            hoverinfo="skip",
        )
    )
    base_layout(fig, title=title, height=460)
    fig.update_xaxes(title_text="paper bootstrap mean", range=[-1.05, 1.05])
    fig.update_yaxes(title_text="recomputed point value", range=[-1.05, 1.05])
    return fig
