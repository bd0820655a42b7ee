"""The IQA section of ``cxreval demo``: controlled degradations of real radiographs, metric vs metric.

It needs radiographs from a data mirror (``images/nih/*.png``: 39 real ChestX-ray14 images; or
``iqa_fixture/``), which a fresh machine does not have; :mod:`cxreval.demo` lists it as not built, with the
reason, when the images are absent.

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
from typing import Any, NamedTuple

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


class IQASources(NamedTuple):
    """What :func:`iqa_sources` returns: the radiographs, where they come from (in words) and the folder
    ``cxreval iqa degrade --images`` samples them from."""

    files: list[Path]
    origin: str
    folder: Path | None


def iqa_sources(mirror: Path, n_images: int) -> IQASources:
    """The radiographs the IQA section degrades (:func:`cxreval.iqa.sample_images`: spread over the
    sorted names), where they come from, and the folder ``cxreval iqa degrade --images`` samples them from
    (None for the IQA fixture, whose folder also holds test images)."""
    from ..iqa._degrade import sample_images

    nih = mirror / "images" / "nih"
    if nih.is_dir():
        files = sorted(nih.glob("*.png"))
        if files:
            return IQASources(
                sample_images(files, n_images),
                f"{nih} (ChestX-ray14 radiographs, 1024 x 1024, 8-bit)",
                nih,
            )
    fx = mirror / "iqa_fixture"
    refs = sorted(fx.glob("*__reference.png")) if fx.is_dir() else []
    return IQASources(
        (sample_images(refs, n_images) if refs else []),
        f"{fx} (reference images of the IQA fixture, 16-bit)",
        None,
    )


def run_iqa(
    mirror: Path, out: Path, *, metrics: Sequence[str] = IQA_METRICS, n_images: int = IQA_N_IMAGES
) -> dict[str, Any]:
    """Degrade into ``out``, score into ``out/scores`` and compare metrics into ``out/comparison``, as the
    commands do.

    As ``cxreval iqa degrade --images DIR --plan demo --sample N --max-size 512 -o out``: the sampled
    radiographs are block-averaged to at most :data:`IQA_SIZE` pixels into ``out/references/`` (16-bit PNG,
    :func:`cxreval.iqa.shrink_images`) and degraded by :func:`cxreval.iqa.degrade_folder` with the
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
    from ..iqa import compare_metrics, degrade_folder, score_pairs

    sources, where, folder = iqa_sources(mirror, int(n_images))
    if not sources:
        raise DataUnavailableError(
            f"no radiographs in {mirror / 'images' / 'nih'} or {mirror / 'iqa_fixture'}"
        )
    if folder is not None:  # as `cxreval iqa degrade --images FOLDER --sample N --max-size 512`
        deg = degrade_folder(folder, IQA_PLAN, out, sample=int(n_images), max_size=IQA_SIZE)
    else:  # the IQA fixture's references, named without their '__reference' suffix
        from ..iqa._degrade import REFERENCES_DIR, shrink_images

        refs = shrink_images(
            sources,
            out / REFERENCES_DIR,
            IQA_SIZE,
            names=[p.stem.replace("__reference", "") for p in sources],
        )
        deg = degrade_folder(refs, IQA_PLAN, out)
    deg.save(out)
    pairs = deg.pairs()
    scores = score_pairs(pairs, list(metrics), base_dir=out)
    scores.save(out / IQA_SCORES)
    comparison = compare_metrics(scores.table)
    comparison.save(out / IQA_COMPARISON)
    selection, plan = scores.selection, deg.plan
    return {
        "sources": where,
        "images": [p.stem for p in sources],
        "n_pairs": len(pairs),
        "images_folder": folder,
        "metrics": list(selection.names),
        "degradations": [e[0] for e in plan.entries],
        "size": IQA_SIZE,
    }
