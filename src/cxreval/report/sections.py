"""Report sections: which analysis a result folder holds, and its tables and figures.

A result folder is recognised by the file names the analysis commands write:

==============  =====================================================  =============================
kind            files (any of)                                         written by
==============  =====================================================  =============================
audit           ``audit.json``                                         ``cxreval data audit``
classification  ``auc.csv`` (``AUCTableResult.FILES``)                 ``cxreval classify``
ranking         ``rank_correlation.csv``, ``rankings.csv``,            ``cxreval rank``
                ``top_changes.csv`` (``RankingStabilityResult``)
agreement       ``agreement.csv``, ``prevalence.csv``, ``flows.csv``   ``cxreval agree``
fusion          ``fusion_agreement.csv``, ``fused_labels.csv``         ``cxreval fuse``
localization    ``localization.csv``, ``synth_output.txt``,            ``cxreval localize`` / ``synth``
                ``overlays.csv``, ... (the ``FILES`` of the results     / ``cxreval demo``
                of :mod:`cxreval.localization`; ``boxes.csv`` shown)
iqa             ``scores.csv``, ``metric_agreement.csv``, ``zmos.csv``  ``cxreval iqa score|agree``
                (``zscores.csv``), ``degradation_ranking.csv``,        / ``compare`` / ``cxreval demo``
                ``metric_vs_metric.csv``
report_labels   ``labeller_validation.csv``                            ``cxreval label-reports
                                                                       --validate-against``
==============  =====================================================  =============================

(each ``.csv`` may be its ``.parquet`` twin). A part whose file lacks a column it needs is shown as
"not available" with the missing column named; optional columns are used when present. When a
``run.json`` governs the folder, only the files it lists are read (:func:`~cxreval.report.tables.listed_files`).

Each part (:class:`Block`) has its figure, one sentence on how to read it, and its tables; each section
has its key finding (:mod:`cxreval.report.key_findings`). A kind no folder holds is suggested with two
exact commands: the ``cxreval demo`` section that computes it on public data, and the command's help.
"""

from __future__ import annotations

import html
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from ..agreement import AgreementTableResult, FlowsResult, PrevalenceResult
from ..classification import AUCTableResult
from ..datasets.audit import DatasetAudit
from ..fusion import FusionResult
from ..iqa import MetricAgreementResult, MetricComparisonResult, ScoresResult, ZMOSResult
from ..labels import SUMMARY_ROWS
from ..labels.schema import FINDING, STUDY_ID
from ..localization import LocalizationResult, OverlayResult, RealBoxesResult, SynthResult
from ..localization.schema import BOX_COORDS
from ..ranking import RankingStabilityResult
from ..reports import PRF_COLUMNS, LabellerValidationResult
from ..results import TableResult
from . import plots
from .key_findings import KeyFinding, key_finding
from .tables import find_result_file, html_table, missing_columns, read_result_table, result_path
from .thresholds import Thresholds

__all__ = ["KINDS", "Kind", "Block", "Section", "Unavailable", "detect_kinds", "build_sections", "result_files"]


@dataclass(frozen=True)
class Unavailable:
    """A section the report could not build: its title, why, the exact commands that would produce it
    (each runnable as written) and a hint in words (data it needs, placeholders)."""

    title: str
    reason: str
    command: str = ""
    hint: str = ""
    commands: tuple[str, ...] = ()

    @property
    def all_commands(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(c for c in (self.command, *self.commands) if c))

    def to_dict(self) -> dict[str, object]:
        return {"title": self.title, "reason": self.reason, "command": self.command, "hint": self.hint,
                "commands": list(self.all_commands)}


@dataclass(frozen=True)
class Block:
    """One part of a section: a heading, an optional figure, how to read it, HTML (tables, text) and notes."""

    heading: str
    figure: go.Figure | None = None
    html: str = ""
    missing: str = ""  # non-empty: the part is not available, and why
    how: str = ""  # one sentence: how to read the figure (or what the tables hold)


@dataclass(frozen=True)
class Section:
    """A section of the report built from one result folder and one analysis kind."""

    kind: str
    title: str
    folder: Path
    blocks: tuple[Block, ...] = field(default=())
    key: KeyFinding | None = None

    @property
    def n_figures(self) -> int:
        return sum(b.figure is not None for b in self.blocks)

    def to_dict(self) -> dict[str, object]:
        return {"kind": self.kind, "title": self.title, "folder": str(self.folder), "n_figures": self.n_figures,
                "key_finding": None if self.key is None else self.key.to_dict(),
                "blocks": [{"heading": b.heading, "figure": b.figure is not None, "missing": b.missing}
                           for b in self.blocks]}


@dataclass(frozen=True)
class Kind:
    """An analysis kind: its files, the demo section that computes it on public data, its own command.

    ``results`` are the result classes whose files the kind shows; for such a kind ``files`` is the union of
    their ``FILES`` (:func:`result_files`), so that the report never re-types a file name an analysis owns.
    """

    name: str
    title: str
    files: tuple[str, ...]
    demo_section: str
    own_command: str
    build: Callable[[Path], list[Block]]
    results: tuple[type[TableResult], ...] = ()

    @property
    def commands(self) -> tuple[str, str]:
        """Two exact, runnable commands: this analysis on public data, and the help of its command."""
        return (f"cxreval demo --out cxreval-demo-{self.name} --section {self.demo_section}",
                f"{self.own_command} --help")


def result_files(*results: type[TableResult]) -> tuple[str, ...]:
    """The file names the result classes own (their ``FILES`` values), in order, without repeats."""
    return tuple(dict.fromkeys(f for r in results for f in r.FILES.values()))


def _load(folder: Path, name: str, required: tuple[str, ...]) -> tuple[pd.DataFrame | None, Path | None, str]:
    """Read ``name`` from ``folder``; return (table, path, why-missing)."""
    path = find_result_file(folder, name)
    if path is None:
        return None, None, f"{name} not found in {folder}"
    df = read_result_table(path)
    miss = missing_columns(df, required)
    if miss:
        return df, path, f"{path.name} lacks column(s) {miss}; it has {list(df.columns)}"
    if df.empty:
        return df, path, f"{path.name} has no rows"
    return df, path, ""


def _table_block(heading: str, folder: Path, name: str, required: tuple[str, ...],
                 figure: Callable[[pd.DataFrame], go.Figure | None] | None = None, caption: str = "",
                 extra: Callable[[pd.DataFrame], str] | None = None, how: str = "") -> Block | None:
    """A block showing ``name`` as a table, with a figure when the required columns are present."""
    df, path, why = _load(folder, name, required)
    if path is None:
        return None
    if df is None or why:
        body = html_table(df, name=path.stem, source=path) if df is not None and not df.empty else ""
        return Block(heading, None, body, why, how)
    fig = figure(df) if figure is not None else None
    body = (extra(df) if extra is not None else "") + html_table(df, name=path.stem, caption=caption, source=path)
    return Block(heading, fig, body, how=how)


# --------------------------------------------------------------------------------------------------
# per-kind builders
# --------------------------------------------------------------------------------------------------

def _auc_pivot(df: pd.DataFrame) -> str:
    """Compact model × reference table for the first finding shown (macro when present)."""
    finding = plots.ordered(df["finding"])[0]
    s = df[df["finding"].astype(str) == finding].copy()
    a = pd.to_numeric(s["auc"], errors="coerce")
    if {"ci_low", "ci_high"} <= set(s.columns):
        lo, hi = pd.to_numeric(s["ci_low"], errors="coerce"), pd.to_numeric(s["ci_high"], errors="coerce")
        s["cell"] = [f"{x:.3f} [{y:.3f}, {z:.3f}]" if pd.notna(y) else f"{x:.3f}" for x, y, z in zip(a, lo, hi)]
    else:
        s["cell"] = [f"{x:.3f}" for x in a]
    s["_a"] = a
    order = s.groupby("model", sort=False)["_a"].mean().sort_values(ascending=False, kind="stable").index
    pv = s.pivot_table(index="model", columns="reference", values="cell", aggfunc="first", sort=False)
    pv = pv.reindex(order).reset_index()
    return html_table(pv, name=f"auc_{finding}_by_reference", caption=f"AUC [95% CI], {finding}")


def _by_dataset(fig: Callable[[pd.DataFrame], go.Figure | None]) -> Callable[[pd.DataFrame], go.Figure | None]:
    """Wrap a figure function so that a ``dataset`` column with several values prefixes the findings
    (panels of different datasets are never mixed)."""
    def wrapped(df: pd.DataFrame) -> go.Figure | None:
        if "dataset" in df.columns and df["dataset"].astype(str).nunique() > 1:
            df = df.copy()
            df["finding"] = df["dataset"].astype(str) + ": " + df["finding"].astype(str)
        return fig(df)
    return wrapped


_CLASSIFICATION_RESULTS = (AUCTableResult,)  # auc.csv: the AUC table every AUC result writes (AUCResult too)


def _build_classification(folder: Path) -> list[Block]:
    (auc,) = _CLASSIFICATION_RESULTS
    b = _table_block("AUC per model and reference", folder, auc.FILES["auc"], auc.COLUMNS,
                     figure=_by_dataset(plots.auc_forest), extra=_by_dataset_html(_auc_pivot),
                     how="Each marker is one model's ROC-AUC under one reference (one colour per reference), the "
                         "bar its bootstrap confidence interval; models are sorted by mean AUC and the menu "
                         "switches finding.")
    return [b] if b else []


def _by_dataset_html(fn: Callable[[pd.DataFrame], str]) -> Callable[[pd.DataFrame], str]:
    def wrapped(df: pd.DataFrame) -> str:
        if "dataset" in df.columns and df["dataset"].astype(str).nunique() > 1:
            df = df.copy()
            df["finding"] = df["dataset"].astype(str) + ": " + df["finding"].astype(str)
        return fn(df)
    return wrapped


def _top_per_reference(df: pd.DataFrame) -> str:
    d = df.copy()
    if "group" not in d.columns:
        d["group"] = "all"
    d["rank"] = pd.to_numeric(d["rank"], errors="coerce")
    top = d[d["rank"] == d.groupby(["finding", "group", "reference"])["rank"].transform("min")]
    t = (top.groupby(["finding", "group", "reference"], sort=False)["model"]
         .agg(lambda s: " / ".join(sorted(map(str, s)))).unstack("reference").reset_index())
    refs = [c for c in t.columns if c not in ("finding", "group")]
    t["top rank changes"] = t[refs].nunique(axis=1, dropna=True) > 1
    return html_table(t, name="top_model_per_reference", caption="Top-ranked model under each reference")


_RANKING_RESULTS = (RankingStabilityResult,)


def _build_ranking(folder: Path) -> list[Block]:
    out = []
    (rk,) = _RANKING_RESULTS
    b = _table_block("Model ranks across references", folder, rk.FILES["rankings"],
                     ("finding", "reference", "model", "rank"), figure=_by_dataset(plots.bump_chart),
                     extra=_by_dataset_html(_top_per_reference),
                     how="Each line follows one model from reference to reference: crossing lines are rank "
                         "changes, thick lines are models ranked first under some reference.")
    if b:
        out.append(b)
    b = _table_block("Top-rank changes", folder, rk.FILES["top_changes"], (),
                     how="The best model under each reference, with its AUC and rank under every other "
                         "reference.")
    if b:
        out.append(b)
    b = _table_block("Rank correlation between references (SRCC / KRCC)", folder, rk.FILES["rank_correlation"],
                     ("finding", "reference_a", "reference_b", "statistic"),
                     figure=_by_dataset(plots.rank_correlation_heatmap),
                     how="Each cell is the rank correlation between two references' model rankings for one finding "
                         "and model group (1 = the same ranking, 0 = unrelated, −1 = reversed), with its bootstrap "
                         "interval when there is one.")
    if b:
        out.append(b)
        df, path, why = _load(folder, rk.FILES["rank_correlation"], ("statistic", "paper_mean"))
        if not why and df is not None and pd.to_numeric(df["paper_mean"], errors="coerce").notna().any():
            out.append(Block("Recomputed vs published rank correlations", plots.rank_correlation_vs_paper(df),
                             how="Each point is one correlation: on the dotted line the value recomputed here "
                                 "equals the paper's bootstrap mean; bars are the paper's standard deviation."))
    return out


_KAPPA = (("kappa_w", "kappa_low", "kappa_high", "κ"), ("f1_w", "f1_low", "f1_high", "weighted F1"))


_AGREEMENT_RESULTS = (AgreementTableResult, PrevalenceResult, FlowsResult)


def _build_agreement(folder: Path) -> list[Block]:
    out = []
    agr, prev, flows = _AGREEMENT_RESULTS
    b = _table_block("Agreement: weighted κ with Low-High κ", folder, agr.FILES["agreement"],
                     agr.COLUMNS[:3],  # pair, finding, kappa_w
                     figure=lambda d: plots.interval_plot(d, series="pair", metrics=_KAPPA,
                                                          title="Agreement per finding and pair"),
                     how="Each diamond is the weighted κ between two label sources for one finding; its bar runs "
                         "from the pessimistic (Low) to the optimistic (High) κ over the uncertain labels.")
    if b:
        out.append(b)
    b = _table_block("Prevalence per source", folder, prev.FILES["prevalence"],
                     prev.COLUMNS[:3],  # source, finding, state
                     figure=lambda d: plots.prevalence_bars(d) if set(prev.COLUMNS[3:]) & set(d.columns) else None,
                     how="Each bar splits one source's labels of one finding into states; a 'positive' share that "
                         "differs between sources is a prevalence shift.")
    if b:
        out.append(b)
    b = _table_block("Label flows between sources (omissions)", folder, flows.FILES["flows"], flows.COLUMNS,
                     figure=plots.sankey_flows,
                     how="Each band carries the studies one source labels one way (left) and the other source "
                         "another way (right): grey bands agree, coloured bands change state.")
    if b:
        out.append(b)
    return out


def _fusion_figure(d: pd.DataFrame) -> go.Figure | None:
    """κ of each fusion method per finding, with the macro/micro over all findings (not over a subset)."""
    if "finding_set" in d.columns:
        sets = d["finding_set"].fillna("").astype(str)
        d = d[sets.isin(("", "all"))]
    return plots.interval_plot(d, series=FusionResult.COLUMNS[0], metrics=_KAPPA, kind="bar",
                               title="Fusion methods vs reference")


def _build_fusion(folder: Path) -> list[Block]:
    out = []
    files, cols = FusionResult.FILES, FusionResult.FILE_COLUMNS
    b = _table_block("Agreement of each fusion method with the reference", folder, files["fusion_agreement"],
                     FusionResult.COLUMNS[:3],  # method, finding, kappa_w
                     figure=_fusion_figure,
                     how="Each bar is one fusion method's weighted κ with the reference for one finding; the dark "
                         "bar is its Low–High interval.")
    if b:
        out.append(b)
    b = _table_block("Warnings: states fused far more often than any reader uses them", folder,
                     files["fusion_warnings"], cols["fusion_warnings"],
                     caption="A state fused more than 1.5x as often as any reader gives it. For MACE this is its "
                             "model (no class prior, truth-independent spam), not a fitting defect: see "
                             "cxreval.fusion.mace; prefer Dawid-Skene there.")
    if b:
        out.append(b)
    b = _table_block("Fused labels", folder, files["fused_labels"], (),
                     how="The fused label of every study, finding and method.")
    if b:
        out.append(b)
    return out


# The kind is recognised by the files of these results; LocalizationResult and SynthResult write the same
# localization.csv, and their boxes.csv (a name the audit also writes) is shown but recognises nothing.
_LOCALIZATION_RESULTS = (RealBoxesResult, OverlayResult)
_BOXES = LocalizationResult.FILES["boxes"]


def _build_localization(folder: Path) -> list[Block]:
    out = [_table_block("Acc. and AFP against T", folder, LocalizationResult.FILES["localization"], (FINDING, "T"),
                        figure=lambda d: plots.localization_curves(d) if {"acc", "afp"} & set(d.columns) else None,
                        how="Left: the share of reference boxes found at each overlap threshold T; right: false "
                            "positives per image; one line per finding, the menu switches localizer and variant.")]
    synth = result_path(folder, SynthResult.TEXT_FILES["output"])
    if synth is not None:
        out.append(Block("Synthetic localization study (printed output)", None,
                         f'<pre class="output">{html.escape(synth.read_text(errors="replace"))}</pre>',
                         how="The protocol's printed output, verbatim."))
    out += [_overlay_block(folder),
            _table_block("Per finding", folder, RealBoxesResult.FILES["by_finding"], (FINDING,),
                         how="IoBB Acc. of each localizer on the noisy maps at T = 0.1, 0.5 and 0.9, beside the "
                             "number of boxes and their median area (a fraction of the image)."),
            _table_block("AFP denominators", folder, SynthResult.FILES["afp_denominators"], (),
                         how="Which AFP denominator reproduces the printed AFPs (localize --afp-denominator)."),
            _table_block("Boxes", folder, _BOXES, (), how="Every box of the study.")]
    return [b for b in out if b]


_OVERLAY_COLS = (STUDY_ID, "kind", *BOX_COORDS, "image_file")


def _png_side(data: bytes) -> int:
    """Width of a PNG from its IHDR chunk (0 when ``data`` is not a PNG)."""
    if data[:8] != b"\x89PNG\r\n\x1a\n" or len(data) < 24:
        return 0
    return int.from_bytes(data[16:20], "big")


def _overlay_block(folder: Path) -> Block | None:
    """Reference and detected boxes over the radiographs listed in ``overlays.csv`` (images embedded)."""
    import base64

    import numpy as np

    df, path, why = _load(folder, OverlayResult.FILES["overlays"], _OVERLAY_COLS)
    if path is None:
        return None
    heading = "Reference and detected boxes on real radiographs"
    if df is None or why:
        return Block(heading, None, "", why)
    maps: dict[str, object] = {}
    npz = result_path(folder, OverlayResult.MAPS_FILE)
    if npz is not None and "heatmap_key" in df.columns:
        with np.load(npz, allow_pickle=False) as z:
            maps = dict(zip(z["keys"].tolist(), z["maps"]))
    if "finding" not in df.columns:
        df = df.assign(finding="")
    panels, problems = [], []
    for (im, f), sub in df.groupby([STUDY_ID, FINDING], sort=False):
        img = folder / str(sub["image_file"].iloc[0])
        data = img.read_bytes() if result_path(folder, str(sub["image_file"].iloc[0])) is not None else b""
        side = _png_side(data)
        if not side:
            problems.append(f"{img.name} is missing or not a PNG")
            continue
        size = float(sub["image_size"].iloc[0]) if "image_size" in sub.columns else float(side)
        key = str(sub["heatmap_key"].iloc[0]) if "heatmap_key" in sub.columns else ""
        panels.append({"label": f"{im} — {f}" if f else str(im), "source": "data:image/png;base64,"
                       + base64.b64encode(data).decode("ascii"), "image_size": size, "png_size": side,
                       "boxes": sub, "heatmap": maps.get(key)})
    fig = plots.box_overlays(panels) if panels else None
    missing = "; ".join(problems)
    caption = ("Reference boxes (solid) and the boxes the protocol finds (dashed) on each heat map; "
               "the radiographs are downsampled for the page, boxes are in full-resolution pixels.")
    return Block(heading, fig, html_table(df.drop(columns=[c for c in ("image_file", "heatmap_key") if c in df.columns]),
                                          name=path.stem, caption=caption, source=path), missing,
                 how="Solid green boxes are the radiologists'; dashed boxes are what the protocol finds on the heat "
                     "map drawn over the radiograph; the menu switches image.")


_ZMOS_COLUMNS = ("zmos", "z_mos", "zMOS", "z-mos", "mos")
_KEYS = ("reference", "test", "image", "study_id", "image_id")


def _iqa_merge(scores: pd.DataFrame, zmos: pd.DataFrame) -> tuple[pd.DataFrame | None, str]:
    zfile = ZMOSResult.FILES["zmos"]
    zcol = next((c for c in _ZMOS_COLUMNS if c in zmos.columns), None)
    if zcol is None:
        return None, f"{zfile} has no z-MOS column (one of {list(_ZMOS_COLUMNS)}); it has {list(zmos.columns)}"
    keys = [k for k in _KEYS if k in scores.columns and k in zmos.columns]
    if not keys:
        return None, (f"{ScoresResult.FILES['scores']} and {zfile} share no key column (one of {list(_KEYS)}); "
                      f"scores has {list(scores.columns)}, zmos has {list(zmos.columns)}")
    z = zmos[keys + [zcol]].rename(columns={zcol: "zmos"})
    return scores.merge(z, on=keys, how="inner"), ""


_AGREE_CMD = "cxreval iqa agree --scores S --ratings R --out OUT"
_IQA_RESULTS: tuple[type[TableResult], ...] = (ScoresResult, ZMOSResult, MetricAgreementResult, MetricComparisonResult)
"""The results whose files the IQA section shows (``cxreval iqa score``, ``agree`` and ``compare``)."""


def _build_iqa(folder: Path) -> list[Block]:
    out = []
    zfile = ZMOSResult.FILES["zmos"]
    scores, spath, why_s = _load(folder, ScoresResult.FILES["scores"], ("metric", "value"))
    zmos, zpath, why_z = _load(folder, zfile, ())
    if spath is not None:
        fig, missing, heading = None, why_s, "Metric scores vs expert z-MOS"
        if not why_s and zpath is not None and not why_z:
            merged, missing = _iqa_merge(scores, zmos)  # type: ignore[arg-type]  # both loaded (no why_*)
            if merged is not None and merged.empty:
                missing = "no score row matches a z-MOS row"
            elif merged is not None:
                fig = plots.iqa_scatter(merged)
        elif not why_s:
            missing = (f"metric vs expert z-MOS: no {zfile} (expert ratings) in this folder; with ratings, "
                       f"`{_AGREE_CMD}` produces it")
            if "degradation" in scores.columns:  # type: ignore[union-attr]  # loaded: why_s is empty
                heading = "Metric scores per degradation"
                fig = plots.iqa_by_degradation(scores)  # type: ignore[arg-type]
        body = html_table(scores, name=spath.stem, source=spath) if scores is not None and not scores.empty else ""
        how = ("Each point is one test image: the metric's value against the experts' z-MOS; a monotone cloud "
               "means the metric orders images as the experts do." if heading.endswith("z-MOS") else
               "Each column of points is one degradation's scores over the test images; the menu switches metric.")
        out.append(Block(heading, fig, body, missing, how))
    if zpath is not None and zmos is not None and not zmos.empty:
        out.append(Block("Expert z-MOS", None, html_table(zmos, name=zpath.stem, source=zpath),
                         how="The experts' standardised mean opinion score of each image."))
    b = _table_block("Metric agreement with experts", folder, MetricAgreementResult.FILES["metric_agreement"],
                     ("metric",),
                     figure=lambda d: plots.iqa_correlation_bars(d) if {"srcc", "krcc"} & set(d.columns) else None,
                     how="Each bar is one metric's rank correlation with the experts' z-MOS: higher is closer to "
                         "the experts.")
    if b:
        out.append(b)
    b = _table_block("How each metric ranks the degradations (metric vs metric)", folder,
                     MetricComparisonResult.FILES["degradation_ranking"], ("metric", "degradation", "rank"),
                     figure=plots.degradation_rank_heatmap,
                     caption="Rank 1 = the degradation the metric judges least harmful (mean over images, "
                             "oriented so that higher is better).",
                     how="Each column is one metric's ranking of the degradations (1 = judged least harmful): a row "
                         "whose colour changes across columns is where the metrics disagree.")
    if b:
        out.append(b)
    b = _table_block("Agreement between metrics: SRCC / KRCC (metric vs metric, not vs experts)", folder,
                     MetricComparisonResult.FILES["metric_vs_metric"], ("metric_a", "metric_b"),
                     figure=lambda d: plots.metric_correlation_matrix(d) if {"srcc", "krcc"} & set(d.columns)
                     else None,
                     caption="Rank correlation between two metrics' oriented scores: over the degradations "
                             "(their rankings) and over the test images. Low values: the metrics disagree.",
                     how="Each cell is the rank correlation between two metrics (1 = the same ranking); the menu "
                         "switches statistic and what is ranked.")
    if b:
        out.append(b)
    return out


def _json_html(obj: object, name: str, depth: int = 0) -> str:
    """Render parsed JSON: scalars as a key/value table, lists of records as tables, dicts recursively."""
    if isinstance(obj, dict):
        scalars = {k: v for k, v in obj.items() if not isinstance(v, (dict, list))}
        parts = []
        if scalars:
            kv = pd.DataFrame({"key": list(scalars), "value": [str(v) for v in scalars.values()]})
            parts.append(html_table(kv, name=f"{name}"))
        for k, v in obj.items():
            if isinstance(v, (dict, list)):
                h = min(4 + depth, 6)
                parts.append(f"<h{h}>{html.escape(str(k))}</h{h}>" + _json_html(v, f"{name}_{k}", depth + 1))
        return "".join(parts)
    if isinstance(obj, list):
        if obj and all(isinstance(x, dict) for x in obj):
            return html_table(pd.json_normalize(obj), name=name)
        return html_table(pd.DataFrame({"value": [json.dumps(x) if isinstance(x, (dict, list)) else x for x in obj]}),
                          name=name)
    return f"<p>{html.escape(str(obj))}</p>"


def _build_audit(folder: Path) -> list[Block]:
    name = DatasetAudit.FILES["audit"]
    p = result_path(folder, name)
    if p is None:
        return []
    try:
        obj = json.loads(p.read_text())
    except json.JSONDecodeError as exc:
        return [Block("Audit", None, "", f"{name} is not valid JSON: {exc}")]
    if isinstance(obj, dict) and "split" in obj and not isinstance(obj.get("split"), dict):
        missing = ('official split and patient leakage: not checked; no split lists were available '
                   f'({name} has "split": null)')
    else:
        missing = ""
    out = [Block("Dataset audit", None, _json_html(obj, "audit"), missing,
                 how=f"The audit's counts as {name} records them.")]
    tables = sorted((csv, key) for key, csv in DatasetAudit.FILES.items() if key != "audit")
    for csv, key in tables:  # the tables DatasetAudit.save writes beside audit.json, by file name
        if result_path(folder, csv) is None:
            continue
        b = _table_block(key.replace("_", " ").capitalize(), folder, csv, (),
                         how=f"A table of the audit, as written beside {name}.")
        if b:
            out.append(b)
    return out


_PRF = (("f1", "f1_low", "f1_high", "F1"), ("precision", "precision_low", "precision_high", "Precision"),
        ("recall", "recall_low", "recall_high", "Recall"))


def _labeller_long(df: pd.DataFrame) -> pd.DataFrame | None:
    """The labeller's precision/recall/F1 per finding, with the published labeller's figures as a second
    series where the table gives them (``nih_*`` columns; no interval)."""
    per = df[~df["finding"].astype(str).isin(SUMMARY_ROWS)]
    parts = [per.assign(labeller="this labeller")]
    pub = {f"nih_{m}" for m, *_ in _PRF} & set(df.columns)
    if pub:
        q = df[df[sorted(pub)].notna().any(axis=1)][["finding", *sorted(pub)]].copy()
        for m, lo, hi, _ in _PRF:
            q[m] = q.pop(f"nih_{m}") if f"nih_{m}" in q.columns else np.nan
            q[lo] = q[hi] = np.nan
        parts.append(q.assign(labeller="published labeller"))
    out = pd.concat(parts, ignore_index=True)
    return out if len(out) else None


def _build_report_labels(folder: Path) -> list[Block]:
    def fig(d: pd.DataFrame) -> go.Figure | None:
        long = _labeller_long(d)
        return None if long is None else plots.interval_plot(long, series="labeller", metrics=_PRF, kind="bar",
                                                               title="Report labeller vs human codes")
    b = _table_block("Report labeller against human-coded labels", folder,
                     LabellerValidationResult.FILES["labeller_validation"],
                     (PRF_COLUMNS[0], "f1"), figure=fig,
                     how="Each bar is the labeller's F1 (menu: precision, recall) for one finding against the human "
                         "codes, with its bootstrap interval; the second series gives the published labeller's "
                         "figures where they exist.")
    return [b] if b else []


KINDS: tuple[Kind, ...] = (
    Kind("audit", "Dataset audit", (DatasetAudit.FILES["audit"],), "audit", "cxreval data audit", _build_audit),
    Kind("classification", "Classification: ROC-AUC per model and reference", result_files(*_CLASSIFICATION_RESULTS),
         "chexpert_models", "cxreval classify", _build_classification, results=_CLASSIFICATION_RESULTS),
    Kind("ranking", "Ranking stability across references", result_files(*_RANKING_RESULTS), "xqa_published",
         "cxreval rank", _build_ranking, results=_RANKING_RESULTS),
    Kind("agreement", "Agreement between label sources", result_files(*_AGREEMENT_RESULTS),
         "chexpert_agreement", "cxreval agree", _build_agreement, results=_AGREEMENT_RESULTS),
    Kind("fusion", "Label fusion", result_files(FusionResult), "chexpert_fusion", "cxreval fuse", _build_fusion,
         results=(FusionResult,)),
    Kind("localization", "Localization", result_files(*_LOCALIZATION_RESULTS), "localization", "cxreval synth",
         _build_localization, results=_LOCALIZATION_RESULTS),
    Kind("iqa", "Image quality assessment", result_files(*_IQA_RESULTS), "iqa", "cxreval iqa score", _build_iqa,
         results=_IQA_RESULTS),
    Kind("report_labels", "Report-derived labels", result_files(LabellerValidationResult), "openi_report_labels",
         "cxreval label-reports", _build_report_labels, results=(LabellerValidationResult,)),
)


def detect_kinds(folder: str | Path) -> list[Kind]:
    """The analysis kinds whose files are present in ``folder``."""
    folder = Path(folder)
    return [k for k in KINDS if any(find_result_file(folder, f) is not None for f in k.files)]


def _folder_title(folder: Path) -> str:
    """The first Markdown heading of ``summary.md``, else the folder name."""
    s = result_path(folder, "summary.md")
    if s is not None:
        for line in s.read_text(errors="replace").splitlines():
            if line.startswith("#"):
                return line.lstrip("#").strip()
    return folder.name


def build_sections(folder: str | Path, *, thresholds: Thresholds | None = None) -> list[Section]:
    """Build one :class:`Section` per analysis kind found in ``folder``, each with its key finding."""
    folder = Path(folder)
    name = _folder_title(folder)
    out = []
    for kind in detect_kinds(folder):
        blocks = kind.build(folder)
        out.append(Section(kind.name, f"{kind.title} — {name}", folder, tuple(blocks),
                           key_finding(kind.name, folder, thresholds)))
    return out
