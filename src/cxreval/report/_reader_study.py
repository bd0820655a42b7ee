"""The report's section and key finding for a reader study (a ``cxreval mrmc`` folder).

The section shows every reader's AUC by modality (a forest plot per reference), the model's ROC curve with the
readers' operating points on it, the model against the panel of readers per reference, and the OR analysis of the
modalities in one sentence per reference. Its key finding says under which references the model is non-inferior
to the readers, and under which it is not.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import plotly.graph_objects as go

from ..mrmc._result import READER_STUDY_COLUMNS, ReaderStudyResult
from ._blocks import Block, difference_figure, table_block
from ._key_finding_base import KeyFinding, _load, _num, _str
from ._thresholds import Thresholds

__all__ = ["build_reader_study", "reader_study_finding"]

_FILES = ReaderStudyResult.FILES
_VERDICT = READER_STUDY_COLUMNS["verdicts"]


_MODEL_TITLE = (
    "Model minus the readers, per reference (ΔAUC for rating readers, "
    "ΔSe at the panel's specificity for binary readers)"
)


def _model_figure(d: pd.DataFrame) -> go.Figure | None:
    return difference_figure(
        d, "difference", ("model", "modality"), color="reference", title=_MODEL_TITLE, value_title="Δ"
    )


def _roc_figure(roc: pd.DataFrame, points: pd.DataFrame | None) -> go.Figure | None:
    """The first model's ROC curve per reference for the first finding, with the readers' operating points."""
    if roc.empty:
        return None
    finding, model = str(roc["finding"].iloc[0]), str(roc["model"].iloc[0])
    fig = go.Figure()
    sel = roc[(_str(roc, "finding") == finding) & (_str(roc, "model") == model)]
    for ref, g in sel.groupby("reference", sort=False):
        fig.add_trace(
            go.Scatter(
                x=_num(g, "fpr"),
                y=_num(g, "tpr"),
                mode="lines",
                name=f"{model} · {ref}",
                line={"shape": "hv"},
            )
        )
        if points is not None and not points.empty:
            p = points[
                (_str(points, "finding") == finding)
                & (_str(points, "model") == model)
                & (_str(points, "reference") == str(ref))
                & (_str(points, "kind") == "reader")
            ]
            fig.add_trace(
                go.Scatter(
                    x=_num(p, "fpr"),
                    y=_num(p, "tpr"),
                    mode="markers+text",
                    text=_str(p, "reader"),
                    textposition="top center",
                    name=f"readers · {ref}",
                )
            )
    fig.update_layout(
        title=f"{finding}: {model}'s ROC curve and the readers' operating points",
        xaxis_title="1 − specificity",
        yaxis_title="sensitivity",
        template="plotly_white",
    )
    return fig


def build_reader_study(folder: Path) -> list[Block]:
    readers = table_block(
        "Readers' AUC by modality",
        folder,
        _FILES["reader_auc"],
        READER_STUDY_COLUMNS["reader_auc"][:5],
        figure=ReaderStudyResult.figure,
        how="Each marker is one reader's empirical AUC in one modality against one reference, "
        "with its interval; a reader whose AUC moves with the reference is judged by the "
        "reference as much as by the images.",
    )
    model = table_block(
        "Is the model radiologist-level, under each reference?",
        folder,
        _FILES["verdicts"],
        _VERDICT,
        figure=_model_figure,
        how="Each marker is a model minus the panel of readers under one reference, with its "
        "interval: the AUC minus the readers' mean AUC for readers who give ratings, the "
        "sensitivity at the readers' mean specificity minus theirs for binary readers. The model "
        "is non-inferior when the interval's lower end lies above minus the margin.",
    )
    roc_table = _load(folder, _FILES["roc_curve"], READER_STUDY_COLUMNS["roc_curve"])
    pts = _load(folder, _FILES["readers_vs_curve"], READER_STUDY_COLUMNS["readers_vs_curve"])
    roc = None
    if roc_table is not None and not roc_table.empty:
        roc = table_block(
            "Readers on the model's ROC curve",
            folder,
            _FILES["readers_vs_curve"],
            READER_STUDY_COLUMNS["readers_vs_curve"][:9],
            figure=lambda _d: _roc_figure(roc_table, pts),
            how="The line is the model's empirical ROC curve against each reference; each marker a "
            "reader's sensitivity and 1 − specificity against the same reference. A reader below "
            "the curve reads worse than the model at that reader's specificity.",
        )
    diffs = table_block(
        "Modalities compared (OR and DBM)",
        folder,
        _FILES["differences"],
        READER_STUDY_COLUMNS["differences"][:6],
        how="Each row is one modality minus another, by the OR or DBM method and its analysis "
        "(RRRC: readers and cases random, Hillis's degrees of freedom; FRRC: readers fixed; "
        "RRFC: cases fixed), with its interval and p-value.",
    )
    return [b for b in (model, roc, readers, diffs) if b]


def reader_study_finding(folder: Path, th: Thresholds) -> KeyFinding | None:
    """Under which references a model is non-inferior to the readers, for the first model and finding where the
    verdict differs between references (else the first)."""
    del th  # the verdict is the interval against the stated margin
    d = _load(folder, _FILES["verdicts"], _VERDICT)
    if d is None or d.empty:
        return None
    d = d.assign(
        _lo=_num(d, "ci_low"),
        _est=_num(d, "difference"),
        _ok=_str(d, "non_inferior").str.lower().isin(["true", "1"]),
    )
    groups = list(d.groupby(["finding", "model", "modality"], sort=False))
    split = [g for g in groups if g[1]["_ok"].any() and not g[1]["_ok"].all()]
    (finding, model, modality), g = (split or groups)[0]
    yes = [str(r) for r in g.loc[g["_ok"], "reference"]]
    no = [str(r) for r in g.loc[~g["_ok"], "reference"]]
    if yes and no:
        text = (
            f"Radiologist-level depends on the reference in {len(split)} of {len(groups)} comparisons "
            f"({model}, {finding}: yes under {', '.join(yes)}, not {', '.join(no)})."
        )
        verdict = "depends on the reference"
    elif yes:
        text = f"{model} is non-inferior to the {modality} readers for {finding} under every reference ({', '.join(yes)})."
        verdict = "non-inferior"
    else:
        text = (
            f"{model} is not shown non-inferior to the {modality} readers for {finding} under any reference "
            f"({', '.join(no)})."
        )
        verdict = "not shown non-inferior"
    return KeyFinding("reader_study", text, verdict)
