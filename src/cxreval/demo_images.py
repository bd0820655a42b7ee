"""The image-based sections of ``cxreval demo``: IQA on real radiographs and localization box overlays.

Both need radiographs from a data mirror (``images/nih/*.png``: 39 real ChestX-ray14 images, 12 with
radiologist boxes; or ``iqa_fixture/``), which a fresh machine does not have; :mod:`cxreval.demo` lists
them as not built, with the reason, when the images are absent.

IQA. A few radiographs (downsampled to at most :data:`IQA_SIZE` pixels by block averaging) are degraded
with :data:`IQA_PLAN` through :func:`cxreval.iqa.degrade.degrade_images` and scored with the fast
full-reference metrics :data:`IQA_METRICS` by :func:`cxreval.iqa.score_pairs`, as ``cxreval iqa degrade``
and ``cxreval iqa score`` do. There are no public expert ratings of these images, so no z-MOS is invented:
the section reports how each metric *ranks the degradations* and how far the metrics agree with each other
(:func:`cxreval.iqa.compare_metrics`, as ``cxreval iqa compare``; SRCC/KRCC between metrics, clearly
metric-vs-metric). ``cxreval iqa agree --scores S --ratings R`` gives metric-vs-expert z-MOS once
ratings exist.

Localization. For each boxed radiograph, the synthetic study's error model (:mod:`cxreval.localization.synthetic`)
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

from .localization.overlays import OVERLAY_SIZE

__all__ = ["IQA_METRICS", "IQA_PLAN", "IQA_SIZE", "IQA_N_IMAGES", "OVERLAY_SIZE", "block_downsample",
           "degradation_ranking", "metric_vs_metric", "run_iqa", "boxed_images", "run_overlays", "overlay_boxes"]

IQA_METRICS: tuple[str, ...] = ("psnr", "ssim", "ms_ssim", "gmsd", "mdsi", "haarpsi", "dss")
"""Full-reference metrics the demo scores with: the fast ones (each under ~0.3 s on a 512 x 512 pair here;
VIF, IW-SSIM, CW-SSIM, FSIM and VSI take 1-6 s)."""

IQA_SIZE = 512
"""Largest side of the images the demo scores (1024-pixel radiographs are 2 x 2 block-averaged)."""

IQA_N_IMAGES = 3
"""Radiographs the demo degrades."""

IQA_PLAN: dict[str, object] = {
    "seed": 0,
    "output_dtype": "uint16",
    "degradations": [
        {"name": "blur_s1.5", "transform": "gaussian_blur", "params": {"sigma": 1.5}},
        {"name": "noise_g0.02", "transform": "gaussian_noise", "params": {"sigma": 0.02}},
        {"name": "jpeg_q20", "transform": "jpeg", "params": {"quality": 20}},
        {"name": "resample_x2", "transform": "resample", "params": {"factor": 2}},
        {"name": "gamma_1.3", "transform": "gamma", "params": {"gamma": 1.3}},
        {"name": "unsharp_s1.5_a0.8", "transform": "unsharp_mask", "params": {"sigma": 1.5, "amount": 0.8}},
    ],
}
"""The demo's degradation plan (the format of ``cxreval iqa degrade --plan``)."""



def block_downsample(image: np.ndarray, factor: int) -> np.ndarray:
    """Mean over ``factor x factor`` blocks, the remainder cropped: :func:`cxreval.iqa.box_downsample`'s
    ``'pool'`` alignment (``skimage.measure.block_reduce``), in float64."""
    from .iqa import box_downsample

    return box_downsample(np.asarray(image, dtype=np.float64), int(factor), convention="pool")


# --------------------------------------------------------------------------------------------------
# IQA: scoring and metric-vs-metric analysis
# --------------------------------------------------------------------------------------------------

def degradation_ranking(scores: pd.DataFrame) -> pd.DataFrame:
    """:func:`cxreval.iqa.degradation_ranking` (its owner; kept here for callers of the demo module)."""
    from .iqa import degradation_ranking as ranking

    return ranking(scores)


def metric_vs_metric(scores: pd.DataFrame) -> pd.DataFrame:
    """:func:`cxreval.iqa.metric_vs_metric` (its owner; kept here for callers of the demo module)."""
    from .iqa import metric_vs_metric as mvm

    return mvm(scores)


def _iqa_sources(mirror: Path, n_images: int) -> tuple[list[Path], str]:
    """The radiographs the IQA section degrades (spread over the sorted names), and where they come from."""
    nih = mirror / "images" / "nih"
    if nih.is_dir():
        files = sorted(nih.glob("*.png"))
        if files:
            step = max(1, len(files) // n_images)
            return files[::step][:n_images], f"{nih} (ChestX-ray14 radiographs, 1024 x 1024, 8-bit)"
    fx = mirror / "iqa_fixture"
    refs = sorted(fx.glob("*__reference.png")) if fx.is_dir() else []
    return refs[:n_images], f"{fx} (reference images of the IQA fixture, 16-bit)"


def run_iqa(mirror: Path, out: Path, *, metrics: Sequence[str] = IQA_METRICS,
            n_images: int = IQA_N_IMAGES) -> dict[str, Any]:
    """Degrade, score and compare metrics into ``out``, as the commands would.

    The radiographs are block-averaged to at most :data:`IQA_SIZE` pixels into ``out/references/`` (16-bit
    PNG) and :data:`IQA_PLAN` is written as ``plan.yaml``; then, as ``cxreval iqa degrade --images
    out/references --plan plan.yaml``, ``cxreval iqa score --pairs pairs.csv --metrics ...`` and ``cxreval iqa
    compare --scores scores.csv`` do: :func:`cxreval.iqa.degrade_folder` (``manifest``, ``pairs``,
    ``images/``), :func:`cxreval.iqa.score_pairs` (``scores``) and :func:`cxreval.iqa.compare_metrics`
    (``degradation_ranking``, ``metric_vs_metric``), each saved by its result's ``save``. Returns facts for the
    summary.

    Raises
    ------
    DataUnavailableError
        If the mirror holds no radiographs.
    """
    import yaml

    from .exceptions import DataUnavailableError
    from .iqa import (
        ScoresResult,
        compare_metrics,
        degrade_folder,
        read_image,
        score_pairs,
        select_metrics,
        write_image,
    )
    from .iqa.degrade import REFERENCES_DIR, read_plan

    sources, where = _iqa_sources(mirror, int(n_images))
    if not sources:
        raise DataUnavailableError(f"no radiographs in {mirror / 'images' / 'nih'} or {mirror / 'iqa_fixture'}")
    (out / "plan.yaml").write_text(yaml.safe_dump(IQA_PLAN, sort_keys=False))
    plan = read_plan(out / "plan.yaml")
    for p in sources:
        img = read_image(p)
        f = max(1, int(np.ceil(max(img.image.shape) / IQA_SIZE)))
        stem = p.stem.replace("__reference", "")
        write_image(out / REFERENCES_DIR / f"{stem}.png", block_downsample(img.image, f),
                    data_range=img.data_range, dtype="uint16")
    deg = degrade_folder(out / REFERENCES_DIR, plan, out)
    deg.save(out)
    selection = select_metrics(list(metrics))
    pairs = deg.pairs()
    scores = ScoresResult(score_pairs(pairs, selection.names, base_dir=out), selection, len(pairs))
    scores.save(out)
    compare_metrics(scores.table).save(out)
    return {"sources": where, "images": [p.stem for p in sources], "n_pairs": len(pairs),
            "metrics": list(selection.names), "degradations": [e[0] for e in plan.entries], "size": IQA_SIZE}


# --------------------------------------------------------------------------------------------------
# localization: box overlays on real radiographs
# --------------------------------------------------------------------------------------------------

def boxed_images(mirror: Path, boxes: pd.DataFrame) -> list[Path]:
    """The mirror's ChestX-ray14 radiographs (``images/nih``) that carry radiologist boxes, by name
    (:func:`cxreval.localization.overlays.boxed_images`)."""
    from .localization.overlays import boxed_images as boxed

    return boxed(mirror / "images" / "nih", boxes)


def overlay_boxes(images: Sequence[Path], boxes: pd.DataFrame, *, rng: object = 0) -> Any:
    """:func:`cxreval.localization.overlays.overlay_boxes` (its owner; what ``cxreval synth --images`` runs)."""
    from .localization.overlays import overlay_boxes as overlay

    return overlay(images, boxes, rng=rng)


def run_overlays(images: Sequence[Path], boxes: pd.DataFrame, out: Path, *, rng: object = 0) -> pd.DataFrame:
    """:func:`overlay_boxes` saved into ``out`` (:meth:`OverlayResult.save`); returns ``overlays.csv``'s table."""
    res = overlay_boxes(images, boxes, rng=rng)
    res.save(out)
    return res.table
