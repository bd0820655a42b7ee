"""The IQA section of ``cxreval demo``: controlled degradations of real radiographs, metric vs metric.

It degrades public radiographs: the 39 ChestX-ray14 images ``images/nih/*.png`` pinned by commit and SHA-256
(:data:`cxreval.datasets.mirror.PINNED`, from jrzech/reproduce-chexnet's ``starter_images/``), taken from a data
mirror, the cache (``cxreval data fetch --all``) or GitHub; :mod:`cxreval.demo` lists the section as not built,
with the reason and that command, when they cannot be had.

A few radiographs (downsampled to at most :data:`IQA_SIZE` pixels by block averaging) are degraded
with :data:`IQA_PLAN` through :func:`cxreval.iqa.degrade_folder` and scored with the fast
full-reference metrics :data:`IQA_METRICS` by :func:`cxreval.iqa.score_pairs`, as ``cxreval iqa degrade``
and ``cxreval iqa score`` do. There are no public expert ratings of these images, so no z-MOS is invented:
the section reports how each metric *ranks the degradations* and how far the metrics agree with each other
(:func:`cxreval.iqa.compare_metrics`, as ``cxreval iqa compare``; SRCC/KRCC between metrics, clearly
metric-vs-metric). ``cxreval iqa agree --scores S --ratings R`` gives metric-vs-expert z-MOS once
ratings exist. The localization section's box overlays are :func:`cxreval.localization.overlay_boxes`.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

__all__: list[str] = []

IQA_METRICS: tuple[str, ...] = ("psnr", "ssim", "ms_ssim", "gmsd", "mdsi", "haarpsi", "dss")
"""Full-reference metrics the demo scores with: the fast ones (each under ~0.3 s on a 512 x 512 pair here;
VIF, IW-SSIM, CW-SSIM, FSIM and VSI take 1-6 s)."""

IQA_SIZE = 512
"""Largest side of the images the demo scores (1024-pixel radiographs are 2 x 2 block-averaged)."""

IQA_N_IMAGES = 3
"""Radiographs the demo degrades."""

IQA_PLAN = "demo"
"""The demo's degradation plan: the packaged plan ``cxreval iqa degrade --plan demo`` reads
(:data:`cxreval.iqa.BUILTIN_PLANS`)."""

IQA_SCORES = "scores"
"""The subfolder of ``iqa`` with what ``cxreval iqa score`` writes."""

IQA_COMPARISON = "comparison"
"""The subfolder of ``iqa`` with what ``cxreval iqa compare`` writes."""


# --------------------------------------------------------------------------------------------------
# IQA: scoring and metric-vs-metric analysis
# --------------------------------------------------------------------------------------------------


def run_iqa(
    folder: Path, out: Path, *, metrics: Sequence[str] = IQA_METRICS, n_images: int = IQA_N_IMAGES
) -> dict[str, Any]:
    """Degrade radiographs of ``folder`` into ``out``, score into ``out/scores`` and compare metrics into
    ``out/comparison``, as the commands do.

    As ``cxreval iqa degrade --images folder --plan demo --sample N --max-size 512 -o out``: ``n_images``
    radiographs spread over the sorted names (:func:`cxreval.iqa.sample_images`) are block-averaged to at most
    :data:`IQA_SIZE` pixels into ``out/references/`` (16-bit PNG, :func:`cxreval.iqa.shrink_images`) and degraded
    by :func:`cxreval.iqa.degrade_folder` with the packaged plan :data:`IQA_PLAN` (``manifest``, ``pairs``,
    ``images/``); then, as ``cxreval iqa score --pairs out/pairs.csv --metrics ... -o out/scores`` and
    ``cxreval iqa compare --scores out/scores/scores.csv -o out/comparison``, :func:`cxreval.iqa.score_pairs`
    (``scores``) and :func:`cxreval.iqa.compare_metrics` (``degradation_ranking``, ``metric_vs_metric``), each
    saved by its result's ``save``. Returns facts for the summary (``images``: the stems of the sampled
    radiographs).

    Raises
    ------
    DataUnavailableError
        If ``folder`` holds no PNG radiograph.
    """
    from ..exceptions import DataUnavailableError
    from ..iqa import compare_metrics, degrade_folder, score_pairs
    from ..iqa._degrade import sample_images

    files = sorted(Path(folder).glob("*.png"))
    if not files:
        raise DataUnavailableError(f"no radiographs (*.png) in {folder}")
    sources = sample_images(files, int(n_images))
    deg = degrade_folder(folder, IQA_PLAN, out, sample=int(n_images), max_size=IQA_SIZE)
    deg.save(out)
    pairs = deg.pairs()
    scores = score_pairs(pairs, list(metrics), base_dir=out)
    scores.save(out / IQA_SCORES)
    comparison = compare_metrics(scores.table)
    comparison.save(out / IQA_COMPARISON)
    selection, plan = scores.selection, deg.plan
    return {
        "sources": f"{folder} (ChestX-ray14 radiographs, 1024 x 1024, 8-bit)",
        "images": [p.stem for p in sources],
        "n_pairs": len(pairs),
        "metrics": list(selection.names),
        "degradations": [e[0] for e in plan.entries],
        "size": IQA_SIZE,
    }
