"""The image-based sections of ``cxreval demo``: IQA on real radiographs and localization box overlays.

Both need radiographs from a data mirror (``images/nih/*.png``: 39 real ChestX-ray14 images, 12 with
radiologist boxes; or ``iqa_fixture/``), which a fresh machine does not have; :mod:`cxreval.demo` lists
them as not built, with the reason, when the images are absent.

IQA. A few radiographs (downsampled to at most :data:`IQA_SIZE` pixels by block averaging) are degraded
with :data:`IQA_PLAN` through :func:`cxreval.iqa.degrade_folder` and scored with the fast
full-reference metrics :data:`IQA_METRICS` by :func:`cxreval.iqa.score_pairs`, as ``cxreval iqa degrade``
and ``cxreval iqa score`` do. There are no public expert ratings of these images, so no z-MOS is invented:
the section reports how each metric *ranks the degradations* and how far the metrics agree with each other
(:func:`cxreval.iqa.compare_metrics`, as ``cxreval iqa compare``; SRCC/KRCC between metrics, clearly
metric-vs-metric). ``cxreval iqa agree --scores S --ratings R`` gives metric-vs-expert z-MOS once
ratings exist.

Localization. For each boxed radiograph, the synthetic study's error model (:func:`cxreval.localization.simulate_localization`)
makes a heat map from its real BBox_List_2017 boxes; the ChestX-ray8 protocol turns the map into boxes
(:func:`cxreval.localization.heatmaps_to_boxes`, thresholds 60 and 180). ``overlays.csv`` lists the
reference and detected boxes, ``overlays/`` holds the downsampled radiographs (PNG) and
``overlay_heatmaps.npz`` the maps; the report draws them over each other.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .._typing import RNGLike
from ..localization import OVERLAY_SIZE

__all__ = ["IQA_METRICS", "IQA_PLAN", "IQA_SIZE", "IQA_N_IMAGES", "IQA_SCORES", "IQA_COMPARISON", "iqa_sources", "OVERLAY_SIZE", "block_downsample",
           "run_iqa", "boxed_images", "run_overlays", "overlay_boxes"]

IQA_METRICS: tuple[str, ...] = ("psnr", "ssim", "ms_ssim", "gmsd", "mdsi", "haarpsi", "dss")
"""Full-reference metrics the demo scores with: the fast ones (each under ~0.3 s on a 512 x 512 pair here;
VIF, IW-SSIM, CW-SSIM, FSIM and VSI take 1-6 s)."""

IQA_SIZE = 512
"""Largest side of the images the demo scores (1024-pixel radiographs are 2 x 2 block-averaged)."""

IQA_N_IMAGES = 3
"""Radiographs the demo degrades."""

IQA_PLAN = "demo"
"""The demo's degradation plan: the packaged plan ``cxreval iqa degrade --plan demo`` reads
(:data:`cxreval.iqa.degrade.BUILTIN_PLANS`)."""

IQA_SCORES = "scores"
"""The subfolder of ``iqa`` with what ``cxreval iqa score`` writes."""

IQA_COMPARISON = "comparison"
"""The subfolder of ``iqa`` with what ``cxreval iqa compare`` writes."""



def block_downsample(image: np.ndarray, factor: int) -> np.ndarray:
    """Mean over ``factor x factor`` blocks, the remainder cropped: :func:`cxreval.iqa.box_downsample`'s
    ``'pool'`` alignment (``skimage.measure.block_reduce``), in float64."""
    from ..iqa import box_downsample

    return box_downsample(np.asarray(image, dtype=np.float64), int(factor), convention="pool")


# --------------------------------------------------------------------------------------------------
# IQA: scoring and metric-vs-metric analysis
# --------------------------------------------------------------------------------------------------

def iqa_sources(mirror: Path, n_images: int) -> tuple[list[Path], str, Path | None]:
    """The radiographs the IQA section degrades (:func:`cxreval.iqa.degrade.sample_images`: spread over the
    sorted names), where they come from, and the folder ``cxreval iqa degrade --images`` samples them from
    (None for the IQA fixture, whose folder also holds test images)."""
    from ..iqa.degrade import sample_images

    nih = mirror / "images" / "nih"
    if nih.is_dir():
        files = sorted(nih.glob("*.png"))
        if files:
            return sample_images(files, n_images), f"{nih} (ChestX-ray14 radiographs, 1024 x 1024, 8-bit)", nih
    fx = mirror / "iqa_fixture"
    refs = sorted(fx.glob("*__reference.png")) if fx.is_dir() else []
    return (sample_images(refs, n_images) if refs else []), f"{fx} (reference images of the IQA fixture, 16-bit)", None


def run_iqa(mirror: Path, out: Path, *, metrics: Sequence[str] = IQA_METRICS,
            n_images: int = IQA_N_IMAGES) -> dict[str, Any]:
    """Degrade into ``out``, score into ``out/scores`` and compare metrics into ``out/comparison``, as the
    commands do.

    As ``cxreval iqa degrade --images DIR --plan demo --sample N --max-size 512 -o out``: the sampled
    radiographs are block-averaged to at most :data:`IQA_SIZE` pixels into ``out/references/`` (16-bit PNG,
    :func:`cxreval.iqa.degrade.shrink_images`) and degraded by :func:`cxreval.iqa.degrade_folder` with the
    packaged plan :data:`IQA_PLAN` (``manifest``, ``pairs``, ``images/``); then, as ``cxreval iqa score --pairs
    out/pairs.csv --metrics ... -o out/scores`` and ``cxreval iqa compare --scores out/scores/scores.csv -o
    out/comparison``, :func:`cxreval.iqa.score_pairs` (``scores``) and :func:`cxreval.iqa.compare_metrics`
    (``degradation_ranking``, ``metric_vs_metric``), each saved by its result's ``save``. Returns facts for the
    summary (``images_folder``: the folder the command samples, None for the fixture).

    Raises
    ------
    DataUnavailableError
        If the mirror holds no radiographs.
    """
    from ..exceptions import DataUnavailableError
    from ..io import write_summary
    from ..iqa import ScoresResult, compare_metrics, degrade_folder, score_pairs, select_metrics
    from ..iqa.degrade import REFERENCES_DIR, plan_source, read_plan, shrink_images

    sources, where, folder = iqa_sources(mirror, int(n_images))
    if not sources:
        raise DataUnavailableError(f"no radiographs in {mirror / 'images' / 'nih'} or {mirror / 'iqa_fixture'}")
    plan = read_plan(plan_source(IQA_PLAN))
    refs = shrink_images(sources, out / REFERENCES_DIR, IQA_SIZE,
                         names=[p.stem.replace("__reference", "") for p in sources])
    deg = degrade_folder(refs, plan, out)
    deg.save(out)
    selection = select_metrics(list(metrics))
    pairs = deg.pairs()
    scores = score_pairs(pairs, selection.names, base_dir=out)
    scores.save(out / IQA_SCORES)
    write_summary(out / IQA_SCORES, ScoresResult.describe(len(pairs), selection))
    comparison = compare_metrics(scores.table)
    comparison.save(out / IQA_COMPARISON)
    write_summary(out / IQA_COMPARISON, comparison.summary())
    return {"sources": where, "images": [p.stem for p in sources], "n_pairs": len(pairs), "images_folder": folder,
            "metrics": list(selection.names), "degradations": [e[0] for e in plan.entries], "size": IQA_SIZE}


# --------------------------------------------------------------------------------------------------
# localization: box overlays on real radiographs
# --------------------------------------------------------------------------------------------------

def boxed_images(mirror: Path, boxes: pd.DataFrame) -> list[Path]:
    """The mirror's ChestX-ray14 radiographs (``images/nih``) that carry radiologist boxes, by name
    (:func:`cxreval.localization.boxed_images`)."""
    from ..localization import boxed_images as boxed

    return boxed(mirror / "images" / "nih", boxes)


def overlay_boxes(images: Sequence[Path], boxes: pd.DataFrame, *, rng: RNGLike = None) -> Any:
    """:func:`cxreval.localization.overlay_boxes` (its owner; what ``cxreval synth --images`` runs)."""
    from ..localization import overlay_boxes as overlay

    return overlay(images, boxes, rng=rng)


def run_overlays(images: Sequence[Path], boxes: pd.DataFrame, out: Path, *, rng: RNGLike = None) -> pd.DataFrame:
    """:func:`overlay_boxes` saved into ``out`` (:meth:`OverlayResult.save`); returns ``overlays.csv``'s table."""
    res = overlay_boxes(images, boxes, rng=rng)
    res.save(out)
    return res.table
