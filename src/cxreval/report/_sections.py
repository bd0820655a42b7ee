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
relabelling     ``relabel.csv``, ``power.csv``, ``comparison.csv``,    ``cxreval plan``
                ``images.csv`` (``RelabelPlanResult``; its
                ``auc.csv`` shown, not as a classification)
reader_study    ``mrmc_*.csv`` (``ReaderStudyResult``)                  ``cxreval mrmc``
subgroups       ``subgroups.csv``, ``verdicts.csv``,                   ``cxreval subgroups``
                ``calibration.csv``, ``reliability.csv``
                (``SubgroupResult``)
==============  =====================================================  =============================

(each ``.csv`` may be its ``.parquet`` twin). A part whose file lacks a column it needs is shown as
"not available" with the missing column named; optional columns are used when present. When a
``run.json`` governs the folder, only the files it lists are read (:func:`~cxreval.report.result_files.listed_files`).

Each part (:class:`Block`) has its figure, one sentence on how to read it, and its tables; each section
has its key finding (:mod:`cxreval.report`). A kind no folder holds is suggested with two
exact commands: the ``cxreval demo`` section that computes it on public data, and the command's help.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pandas as pd
import plotly.graph_objects as go

from .._plots import analyses as plots
from ..agreement import AgreementTableResult, FlowsResult, PrevalenceResult
from ..classification import SeparabilityResult
from ..datasets.audit import DatasetAudit
from ..fusion import FusionResult
from ..labeller import LabellerValidationResult
from ..labeller._validation import PRF_COLUMNS
from ..mrmc._result import ReaderStudyResult
from ..planning import RelabelPlanResult
from ..ranking import RankingStabilityResult
from ..results import TableResult
from ..stats import AUCTableResult
from ..subgroups import SubgroupResult
from ._blocks import Block, Kind, Section, Unavailable, load_table, result_block, result_files, table_block
from ._decision_curves import build_decision_curves
from ._key_findings import key_finding
from ._reader_study import build_reader_study
from ._relabelling import build_relabelling
from ._subgroups import build_subgroups
from ._templates import REPORT
from ._thresholds import Thresholds
from .html_tables import html_table
from .image_sections import IQA_RESULTS, LOCALIZATION_RESULTS, build_iqa, build_localization
from .result_files import find_result_file, result_path

__all__ = [
    "KINDS",
    "Kind",
    "Block",
    "Section",
    "Unavailable",
    "detect_kinds",
    "build_sections",
    "result_files",
]


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
        s["cell"] = [
            f"{x:.3f} [{y:.3f}, {z:.3f}]" if pd.notna(y) else f"{x:.3f}" for x, y, z in zip(a, lo, hi)
        ]
    else:
        s["cell"] = [f"{x:.3f}" for x in a]
    s["_a"] = a
    order = s.groupby("model", sort=False)["_a"].mean().sort_values(ascending=False, kind="stable").index
    pv = s.pivot_table(index="model", columns="reference", values="cell", aggfunc="first", sort=False)
    pv = pv.reindex(order).reset_index()
    return html_table(pv, name=f"auc_{finding}_by_reference", caption=f"AUC [95% CI], {finding}")


def _by_dataset(
    fig: Callable[[pd.DataFrame], go.Figure | None],
) -> Callable[[pd.DataFrame], go.Figure | None]:
    """Wrap a figure function so that a ``dataset`` column with several values prefixes the findings
    (panels of different datasets are never mixed)."""

    def wrapped(df: pd.DataFrame) -> go.Figure | None:
        return fig(plots.by_dataset(df))

    return wrapped


_CLASSIFICATION_RESULTS = (AUCTableResult,)  # auc.csv: the AUC table every AUC result writes (AUCResult too)


def _build_classification(folder: Path) -> list[Block]:
    (auc,) = _CLASSIFICATION_RESULTS
    b = result_block(
        "AUC per model and reference",
        folder,
        auc,
        "auc",
        extra=_by_dataset_html(_auc_pivot),
        how="Each marker is one model's ROC-AUC under one reference (one colour per reference), the "
        "bar its bootstrap confidence interval; models are sorted by mean AUC and the menu "
        "switches finding.",
    )
    sep = result_block(
        "Is the best model separable?",
        folder,
        SeparabilityResult,
        "auc_comparison",
        how="Each row compares the best model under a reference with the runner-up, or with the best "
        "model under another reference, both scored under that reference: the paired ΔAUC and its "
        "interval, simultaneous over the finding's comparisons. An interval that covers 0 means "
        "the two are not separable.",
    )
    return [blk for blk in (b, sep) if blk] + build_decision_curves(folder)


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
    t = (
        top.groupby(["finding", "group", "reference"], sort=False)["model"]
        .agg(lambda s: " / ".join(sorted(map(str, s))))
        .unstack("reference")
        .reset_index()
    )
    refs = [c for c in t.columns if c not in ("finding", "group")]
    t["top rank changes"] = t[refs].nunique(axis=1, dropna=True) > 1
    return html_table(t, name="top_model_per_reference", caption="Top-ranked model under each reference")


_RANKING_RESULTS = (RankingStabilityResult,)


def _build_ranking(folder: Path) -> list[Block]:
    (rk,) = _RANKING_RESULTS
    blocks = (
        table_block(
            "Model ranks across references",
            folder,
            rk.FILES["rankings"],
            ("finding", "reference", "model", "rank"),
            figure=rk.figure,
            extra=_by_dataset_html(_top_per_reference),
            how="Each line follows one model from reference to reference: crossing lines are rank "
            "changes, thick lines are models ranked first under some reference.",
        ),
        table_block(
            "Top-rank changes",
            folder,
            rk.FILES["top_changes"],
            (),
            how="The best model under each reference, with its AUC and rank under every other reference.",
        ),
        table_block(
            "Rank correlation between references (SRCC / KRCC)",
            folder,
            rk.FILES["rank_correlation"],
            ("finding", "reference_a", "reference_b", "statistic"),
            figure=_by_dataset(plots.rank_correlation_heatmap),
            how="Each cell is the rank correlation between two references' model rankings for one finding "
            "and model group (1 = the same ranking, 0 = unrelated, −1 = reversed), with its bootstrap "
            "interval when there is one.",
        ),
    )
    out = [b for b in blocks if b]
    if blocks[-1]:
        df, path, why = load_table(folder, rk.FILES["rank_correlation"], ("statistic", "paper_mean"))
        if not why and df is not None and pd.to_numeric(df["paper_mean"], errors="coerce").notna().any():
            out.append(
                Block(
                    "Recomputed vs published rank correlations",
                    plots.rank_correlation_vs_paper(df),
                    how="Each point is one correlation: on the dotted line the value recomputed here "
                    "equals the paper's bootstrap mean; bars are the paper's standard deviation.",
                )
            )
    return out


_AGREEMENT_RESULTS = (AgreementTableResult, PrevalenceResult, FlowsResult)
_KAPPA_TABLES: dict[str, tuple[type[TableResult], str, str]] = {
    "agreement": (
        AgreementTableResult,
        "Agreement: weighted κ with Low-High κ",
        "Each diamond is the weighted κ between two label sources for one finding; its bar runs "
        "from the pessimistic (Low) to the optimistic (High) κ over the uncertain labels.",
    ),
    "fusion_agreement": (
        FusionResult,
        "Agreement of each fusion method with the reference",
        "Each bar is one fusion method's weighted κ with the reference for one finding; the dark "
        "bar is its Low–High interval.",
    ),
}
"""The tables of weighted κ with its Low-High interval (first columns: pair or method, finding, kappa_w), by
file key: their result, heading and how to read the figure."""


def _kappa_block(folder: Path, key: str) -> Block | None:
    result, heading, how = _KAPPA_TABLES[key]
    return result_block(heading, folder, result, key, result.COLUMNS[:3], how=how)


def _build_agreement(folder: Path) -> list[Block]:
    _, prev, flows = _AGREEMENT_RESULTS
    blocks = (
        _kappa_block(folder, "agreement"),
        table_block(
            "Prevalence per source",
            folder,
            prev.FILES["prevalence"],
            prev.COLUMNS[:3],  # source, finding, state
            figure=lambda d: prev.figure(d) if set(prev.COLUMNS[3:]) & set(d.columns) else None,
            how="Each bar splits one source's labels of one finding into states; a 'positive' share that "
            "differs between sources is a prevalence shift.",
        ),
        result_block(
            "Label flows between sources (omissions)",
            folder,
            flows,
            "flows",
            how="Each band carries the studies one source labels one way (left) and the other source "
            "another way (right): grey bands agree, coloured bands change state.",
        ),
    )
    return [b for b in blocks if b]


def _build_fusion(folder: Path) -> list[Block]:
    files, cols = FusionResult.FILES, FusionResult.FILE_COLUMNS
    blocks = (
        _kappa_block(folder, "fusion_agreement"),
        table_block(
            "Warnings: states fused far more often than any reader uses them",
            folder,
            files["fusion_warnings"],
            cols["fusion_warnings"],
            caption="A state fused more than 1.5x as often as any reader gives it. For MACE this is its "
            "model (no class prior, truth-independent spam), not a fitting defect: see "
            "cxreval.fusion; prefer Dawid-Skene there.",
        ),
        table_block(
            "Fused labels",
            folder,
            files["fused_labels"],
            (),
            how="The fused label of every study, finding and method.",
        ),
    )
    return [b for b in blocks if b]


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
                parts.append(REPORT.macro("heading")(h, k) + _json_html(v, f"{name}_{k}", depth + 1))
        return "".join(parts)
    if isinstance(obj, list):
        if obj and all(isinstance(x, dict) for x in obj):
            return html_table(pd.json_normalize(obj), name=name)
        return html_table(
            pd.DataFrame({"value": [json.dumps(x) if isinstance(x, (dict, list)) else x for x in obj]}),
            name=name,
        )
    return REPORT.macro("paragraph")(obj)


_AUDIT_TABLES = {
    "boxes": "One row per finding with radiologist boxes: the boxes, the images that carry them, and how many of "
    "those images the text-mined labels also call positive for it (n_images_labelled).",
    "findings": "One row per finding: the images and patients labelled with it, and its share of all images.",
    "published_counts": "The counts the dataset's paper published beside the counts of the files audited here; a "
    "difference is a release that changed since the paper.",
    "shared_patients": "The patients found in more than one part of the split (patient leakage); no row means none.",
    "split_pairs": "Each pair of parts of the split: the patients they share and those patients' studies in each.",
    "split_sizes": "Each part of the split: its studies and patients, and the listed studies absent from the "
    "metadata (n_unknown).",
    "views": "One row per view position: its images and patients.",
}
"""How to read each table :class:`~cxreval.datasets.audit.DatasetAudit` writes beside ``audit.json``, by its key."""


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
        missing = (
            "official split and patient leakage: not checked; no split lists were available "
            f'({name} has "split": null)'
        )
    else:
        missing = ""
    out = [
        Block(
            "Dataset audit",
            None,
            _json_html(obj, "audit"),
            missing,
            how=f"The audit's counts as {name} records them.",
        )
    ]
    tables = sorted((csv, key) for key, csv in DatasetAudit.FILES.items() if key != "audit")
    for csv, key in tables:  # the tables DatasetAudit.save writes beside audit.json, by file name
        if result_path(folder, csv) is None:
            continue
        b = table_block(
            key.replace("_", " ").capitalize(),
            folder,
            csv,
            (),
            how=_AUDIT_TABLES.get(key, f"The audit's {key.replace('_', ' ')} table ({csv})."),
        )
        if b:
            out.append(b)
    return out


def _build_report_labels(folder: Path) -> list[Block]:
    def fig(d: pd.DataFrame) -> go.Figure | None:
        return LabellerValidationResult.figure(d) if len(plots.labeller_long(d)) else None

    b = table_block(
        "Report labeller against human-coded labels",
        folder,
        LabellerValidationResult.FILES["labeller_validation"],
        (PRF_COLUMNS[0], "f1"),
        figure=fig,
        how="Each bar is the labeller's F1 (menu: precision, recall) for one finding against the human "
        "codes, with its bootstrap interval; the second series gives the published labeller's "
        "figures where they exist.",
    )
    return [b] if b else []


KINDS: tuple[Kind, ...] = (
    Kind(
        "audit", "Dataset audit", (DatasetAudit.FILES["audit"],), "audit", "cxreval data audit", _build_audit
    ),
    Kind(
        "classification",
        "Classification: ROC-AUC per model and reference",
        result_files(*_CLASSIFICATION_RESULTS),
        "chexpert_models",
        "cxreval classify",
        _build_classification,
        results=_CLASSIFICATION_RESULTS,
    ),
    Kind(
        "ranking",
        "Ranking stability across references",
        result_files(*_RANKING_RESULTS),
        "xqa_published",
        "cxreval rank",
        _build_ranking,
        results=_RANKING_RESULTS,
    ),
    Kind(
        "agreement",
        "Agreement between label sources",
        result_files(*_AGREEMENT_RESULTS),
        "chexpert_agreement",
        "cxreval agree",
        _build_agreement,
        results=_AGREEMENT_RESULTS,
    ),
    Kind(
        "fusion",
        "Label fusion",
        result_files(FusionResult),
        "chexpert_fusion",
        "cxreval fuse",
        _build_fusion,
        results=(FusionResult,),
    ),
    Kind(
        "localization",
        "Localization",
        result_files(*LOCALIZATION_RESULTS),
        "localization",
        "cxreval synth",
        build_localization,
        results=LOCALIZATION_RESULTS,
    ),
    Kind(
        "iqa",
        "Image quality assessment",
        result_files(*IQA_RESULTS),
        "iqa",
        "cxreval iqa score",
        build_iqa,
        results=IQA_RESULTS,
    ),
    Kind(
        "report_labels",
        "Report-derived labels",
        result_files(LabellerValidationResult),
        "openi_report_labels",
        "cxreval label-reports",
        _build_report_labels,
        results=(LabellerValidationResult,),
    ),
    Kind(
        "relabelling",
        "Settling the best model: what an expert should relabel",
        result_files(RelabelPlanResult),
        "chexpert_relabelling",
        "cxreval plan",
        build_relabelling,
        results=(RelabelPlanResult,),
        replaces=("classification",),
    ),
    Kind(
        "reader_study",
        "Reader study (MRMC)",
        result_files(ReaderStudyResult),
        "chexpert_reader_study",
        "cxreval mrmc",
        build_reader_study,
        results=(ReaderStudyResult,),
    ),
    Kind(
        "subgroups",
        "Subgroups and calibration",
        result_files(SubgroupResult),
        "nih_subgroups",
        "cxreval subgroups",
        build_subgroups,
        results=(SubgroupResult,),
    ),
)


def detect_kinds(folder: str | Path) -> list[Kind]:
    """The analysis kinds whose files are present in ``folder``."""
    folder = Path(folder)
    by_name = {k.name: k for k in KINDS}

    def evidence(k: Kind) -> list[str]:  # a file of a kind it replaces is not evidence of it
        shared = {f for name in k.replaces for f in by_name[name].files}
        return [f for f in k.files if f not in shared]

    found = [k for k in KINDS if any(find_result_file(folder, f) is not None for f in evidence(k))]
    replaced = {name for k in found for name in k.replaces}
    return [k for k in found if k.name not in replaced]


def _folder_title(folder: Path) -> str:
    """The first Markdown heading of ``summary.md`` when it names the analysis, else the folder name (a command's
    own heading, ``# cxreval rank``, says nothing the section title does not)."""
    s = result_path(folder, "summary.md")
    if s is not None:
        for line in s.read_text(errors="replace").splitlines():
            if line.startswith("#"):
                title = line.lstrip("#").strip()
                return folder.name if title.startswith("cxreval ") or not title else title
    return folder.name


def build_sections(folder: str | Path, *, thresholds: Thresholds | None = None) -> list[Section]:
    """Build one :class:`Section` per analysis kind found in ``folder``, each with its key finding."""
    folder = Path(folder)
    name = _folder_title(folder)
    out = []
    for kind in detect_kinds(folder):
        blocks = kind.build(folder)
        out.append(
            Section(
                kind.name,
                f"{kind.title} — {name}",
                folder,
                tuple(blocks),
                key_finding(kind.name, folder, thresholds),
            )
        )
    return out
