"""Report builders of the image analyses: localization (Acc./AFP curves, the synthetic study's output,
box overlays on real radiographs) and image quality (metric vs expert z-MOS, metric vs metric)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from .._plots import analyses as plots
from ..iqa import MetricAgreementResult, MetricComparisonResult, ScoresResult
from ..iqa._expert import ZMOSResult
from ..localization import LocalizationResult, SynthResult
from ..localization._overlays import OverlayResult
from ..localization._real_boxes import RealBoxesResult
from ..results import TableResult
from ..schema import FINDING, STUDY_ID
from ..schema._boxes import BOX_COORDS
from ._blocks import Block, load_table, table_block
from ._templates import REPORT
from .html_tables import html_table
from .result_files import result_path, run_record

__all__: list[str] = []


# The kind is recognised by the files of these results; LocalizationResult and SynthResult write the same
# localization.csv, and their boxes.csv (a name the audit also writes) is shown but recognises nothing.
LOCALIZATION_RESULTS = (RealBoxesResult, OverlayResult)
_BOXES = LocalizationResult.FILES["boxes"]


def build_localization(folder: Path) -> list[Block]:
    out = [
        table_block(
            "Acc. and AFP against T",
            folder,
            LocalizationResult.FILES["localization"],
            (FINDING, "T"),
            figure=lambda d: LocalizationResult.figure(d) if {"acc", "afp"} & set(d.columns) else None,
            how="Left: the share of reference boxes found at each overlap threshold T; right: false "
            "positives per image; one line per finding, the menu switches localizer and variant.",
        )
    ]
    synth = result_path(folder, SynthResult.TEXT_FILES["output"])
    if synth is not None:
        out.append(
            Block(
                "Synthetic localization study (printed output)",
                None,
                REPORT.macro("output")(synth.read_text(errors="replace")),
                how="The protocol's printed output, verbatim.",
            )
        )
    out += [
        _overlay_block(folder),
        table_block(
            "Per finding",
            folder,
            RealBoxesResult.FILES["by_finding"],
            (FINDING,),
            how="IoBB Acc. of each localizer on the noisy maps at T = 0.1, 0.5 and 0.9, beside the "
            "number of boxes and their median area (a fraction of the image).",
        ),
        table_block(
            "AFP denominators",
            folder,
            SynthResult.FILES["afp_denominators"],
            (),
            how="Which AFP denominator reproduces the printed AFPs (localize --afp-denominator).",
        ),
        table_block("Boxes", folder, _BOXES, (), how="Every box of the study."),
    ]
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

    df, path, why = load_table(folder, OverlayResult.FILES["overlays"], _OVERLAY_COLS)
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
        panels.append(
            {
                "label": f"{im} — {f}" if f else str(im),
                "source": "data:image/png;base64," + base64.b64encode(data).decode("ascii"),
                "image_size": size,
                "png_size": side,
                "boxes": sub,
                "heatmap": maps.get(key),
            }
        )
    rec = run_record(folder)
    simulated = rec is not None and str(rec[0].get("heatmaps", "")).startswith("simulated")
    what = "simulated heat map" if simulated else "heat map"
    if simulated:
        heading = "Reference boxes and boxes detected on a simulated heat map, over real radiographs"
    fig = plots.box_overlays(panels, title=f"Reference and detected boxes ({what})") if panels else None
    missing = "; ".join(problems)
    caption = (
        f"Reference boxes (solid) and the boxes the protocol finds (dashed) on each {what}"
        + (" (the error model's map of the real boxes: no model ran)" if simulated else "")
        + "; the radiographs are downsampled for the page, boxes are in full-resolution pixels."
    )
    return Block(
        heading,
        fig,
        html_table(
            df.drop(columns=[c for c in ("image_file", "heatmap_key") if c in df.columns]),
            name=path.stem,
            caption=caption,
            source=path,
        ),
        missing,
        how=f"Solid green boxes are the radiologists'; dashed boxes are what the protocol finds on the {what} "
        "drawn over the radiograph; the menu switches image.",
    )


_ZMOS_COLUMNS = ("zmos", "z_mos", "zMOS", "z-mos", "mos")
_KEYS = ("reference", "test", "image", "study_id", "image_id")


def _iqa_merge(scores: pd.DataFrame, zmos: pd.DataFrame) -> tuple[pd.DataFrame | None, str]:
    zfile = ZMOSResult.FILES["zmos"]
    zcol = next((c for c in _ZMOS_COLUMNS if c in zmos.columns), None)
    if zcol is None:
        return (
            None,
            f"{zfile} has no z-MOS column (one of {list(_ZMOS_COLUMNS)}); it has {list(zmos.columns)}",
        )
    keys = [k for k in _KEYS if k in scores.columns and k in zmos.columns]
    if not keys:
        return None, (
            f"{ScoresResult.FILES['scores']} and {zfile} share no key column (one of {list(_KEYS)}); "
            f"scores has {list(scores.columns)}, zmos has {list(zmos.columns)}"
        )
    z = zmos[keys + [zcol]].rename(columns={zcol: "zmos"})
    return scores.merge(z, on=keys, how="inner"), ""


_AGREE_CMD = "cxreval iqa agree --scores S --ratings R --out OUT"
IQA_RESULTS: tuple[type[TableResult], ...] = (
    ScoresResult,
    ZMOSResult,
    MetricAgreementResult,
    MetricComparisonResult,
)
"""The results whose files the IQA section shows (``cxreval iqa score``, ``agree`` and ``compare``)."""


def build_iqa(folder: Path) -> list[Block]:
    out = []
    zfile = ZMOSResult.FILES["zmos"]
    scores, spath, why_s = load_table(folder, ScoresResult.FILES["scores"], ("metric", "value"))
    zmos, zpath, why_z = load_table(folder, zfile, ())
    if spath is not None:
        fig, missing, heading = None, why_s, "Metric scores vs expert z-MOS"
        if not why_s and zpath is not None and not why_z:
            merged, missing = _iqa_merge(scores, zmos)  # both loaded (no why_*)
            if merged is not None and merged.empty:
                missing = "no score row matches a z-MOS row"
            elif merged is not None:
                fig = plots.iqa_scatter(merged)
        elif not why_s:
            missing = (
                f"metric vs expert z-MOS: no {zfile} (expert ratings) in this folder; with ratings, "
                f"`{_AGREE_CMD}` produces it"
            )
            if "degradation" in scores.columns:  # type: ignore[union-attr]  # loaded: why_s is empty
                heading = "Metric scores per degradation"
                fig = ScoresResult.figure(scores)
        body = (
            html_table(scores, name=spath.stem, source=spath)
            if scores is not None and not scores.empty
            else ""
        )
        how = (
            "Each point is one test image: the metric's value against the experts' z-MOS; a monotone cloud "
            "means the metric orders images as the experts do."
            if heading.endswith("z-MOS")
            else "Each column of points is one degradation's scores over the test images; the menu switches metric."
        )
        out.append(Block(heading, fig, body, missing, how))
    if zpath is not None and zmos is not None and not zmos.empty:
        out.append(
            Block(
                "Expert z-MOS",
                None,
                html_table(zmos, name=zpath.stem, source=zpath),
                how="The experts' standardised mean opinion score of each image.",
            )
        )
    blocks = (
        table_block(
            "Metric agreement with experts",
            folder,
            MetricAgreementResult.FILES["metric_agreement"],
            ("metric",),
            figure=lambda d: MetricAgreementResult.figure(d) if {"srcc", "krcc"} & set(d.columns) else None,
            how="Each bar is one metric's rank correlation with the experts' z-MOS: higher is closer to "
            "the experts.",
        ),
        table_block(
            "How each metric ranks the degradations (metric vs metric)",
            folder,
            MetricComparisonResult.FILES["degradation_ranking"],
            ("metric", "degradation", "rank"),
            figure=plots.degradation_rank_heatmap,
            caption="Rank 1 = the degradation the metric judges least harmful (mean over images, "
            "oriented so that higher is better).",
            how="Each column is one metric's ranking of the degradations (1 = judged least harmful): a row "
            "whose colour changes across columns is where the metrics disagree.",
        ),
        table_block(
            "Agreement between metrics: SRCC / KRCC (metric vs metric, not vs experts)",
            folder,
            MetricComparisonResult.FILES["metric_vs_metric"],
            ("metric_a", "metric_b"),
            figure=lambda d: MetricComparisonResult.figure(d) if {"srcc", "krcc"} & set(d.columns) else None,
            caption="Rank correlation between two metrics' oriented scores: over the degradations "
            "(their rankings) and over the test images. Low values: the metrics disagree.",
            how="Each cell is the rank correlation between two metrics (1 = the same ranking); the menu "
            "switches statistic and what is ranked.",
        ),
    )
    out += [b for b in blocks if b]
    return out
