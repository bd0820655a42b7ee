"""The image sections of ``cxreval demo``: the localization protocol study (synthetic and on real boxes) and
image quality assessment."""

from __future__ import annotations

from ..io._write import write_summary
from .data import (
    RERUN,
    DemoContext,
    NotBuilt,
    metadata,
    need,
    offline_hint,
    pinned_folder,
)

NIH_IMAGES = "images/nih/"
"""The pinned ChestX-ray14 radiographs of the image sections (:data:`cxreval.datasets.mirror.PINNED`)."""

__all__: list[str] = []


def _sec_localization(ctx: DemoContext) -> str:
    loc = need("cxreval.localization", "localization synthetic study", "cxreval synth")
    res = loc.simulate_localization_study(
        rng=0, per_size=60
    )  # what `cxreval synth --seed 0 --per-size 60` runs
    ctx.meta.update(
        {
            "seed": 0,
            "study": "synthetic localization study: simulated heat maps scored against exact "
            "reference boxes (ChestX-ray8 protocol)",
            "commands": ["cxreval synth --seed 0 --per-size 60 -o localization_synthetic"],
        }
    )
    out = ctx.folder("localization_synthetic")
    res.save(out)
    write_summary(
        out,
        "# Localization protocol: a synthetic study with exact boxes\n\nSimulated heat maps, random "
        "seed 0, "
        f"{res.synthetic.per_size} images per size class; 'finding' is the size class of the reference "
        "boxes.",
    )
    return str(out)


def _sec_localization_real(ctx: DemoContext) -> str:
    loc = need("cxreval.localization", "localization on real boxes", "cxreval synth")
    bf = need("cxreval.datasets.boxes", "box file reader", "cxreval data fetch")
    import shlex

    from ..datasets._bbox_list import BBOX_FILE
    from ..localization._overlays import boxed_images

    boxes = bf.read_box_file(metadata(ctx, BBOX_FILE)).table  # what `cxreval synth --real-boxes` reads
    out = ctx.folder("localization_real_boxes")
    folder = None
    try:
        folder = pinned_folder(ctx, NIH_IMAGES)
        images = [ctx.use(p) for p in boxed_images(folder, boxes)]
    except NotBuilt as exc:
        images, why, fix = [], exc.reason, exc.command
    else:
        why, fix = ("" if images else f"no pinned radiograph in {folder} has a BBox_List_2017 box"), RERUN
    # what `cxreval synth --no-synthetic --real-boxes auto [--images FOLDER]` runs
    res = loc.simulate_localization_study(
        boxes,
        rng=ctx.rng,
        synthetic=False,
        images=folder if images else None,
        origin="of ChestX-ray14 pinned by commit and SHA-256",
    )
    study = res.real_boxes
    ctx.meta.update(
        {
            "boxes": "BBox_List_2017 (radiologists' boxes)",
            "localizers": "heatmap bilinear (thresholds 60, 180), tiny box at the peak, whole image",
            "overlap rules": "IoBB, IoU",
            "heatmaps": "simulated: the error model's map of each image's real boxes (no model ran)",
        }
    )
    res.save(out)
    lines = [
        f"# Localization protocol: the error model on the {study.n_boxes} real BBox_List_2017 boxes",
        "",
        f"{study.n_boxes} radiologist boxes on {study.n_images} ChestX-ray14 images; one error-model heat "
        f"map per (image, finding) from its real boxes (seed {ctx.rng}); localizers: the protocol's pipeline "
        "(bilinear upsampling, thresholds 60 and 180) on the noise-free and the noisy map, a 6 x 6 box "
        "at the peak, the whole image. Acc./AFP per finding at each T, IoBB and IoU.",
    ]
    ctx.meta["commands"] = [
        "cxreval synth --no-synthetic --real-boxes auto"
        + (f" --images {shlex.quote(str(folder))}" if images else "")
        + f" --seed {ctx.rng} -o localization_real_boxes"
    ]
    if res.overlays is not None:
        lines += ["", res.overlays.summary()]
    else:
        ctx.missing.append(
            ("Localization: box overlays on real radiographs", why, fix, offline_hint(f"{NIH_IMAGES}*.png"))
        )
    write_summary(out, "\n".join(lines))
    return str(out)


def _sec_iqa(ctx: DemoContext) -> str:
    import shlex

    need("cxreval.iqa", "IQA metrics", "cxreval iqa score")
    from .images import IQA_COMPARISON, IQA_PLAN, IQA_SCORES, run_iqa

    folder = pinned_folder(ctx, NIH_IMAGES)
    out = ctx.folder("iqa")
    ctx.folder(f"iqa/{IQA_SCORES}")
    ctx.folder(f"iqa/{IQA_COMPARISON}")
    facts = run_iqa(folder, out, metrics=ctx.iqa_metrics, n_images=ctx.iqa_images)
    for name in facts["images"]:
        ctx.use(folder / f"{name}.png")
    ctx.meta["commands"] = [
        f"cxreval iqa degrade --images {shlex.quote(str(folder))} --plan {IQA_PLAN} "
        f"--sample {len(facts['images'])} --max-size {facts['size']} -o iqa",
        f"cxreval iqa score --pairs iqa/pairs.csv --metrics {','.join(facts['metrics'])} -o iqa/{IQA_SCORES}",
        f"cxreval iqa compare --scores iqa/{IQA_SCORES}/scores.csv -o iqa/{IQA_COMPARISON}",
    ]
    cmd = "cxreval iqa agree --scores S --ratings R --out OUT"
    ctx.missing.append(
        (
            "IQA: metrics against expert quality ratings (z-MOS)",
            "no public expert quality ratings exist for these radiographs; none are invented",
            "",
            f"With expert ratings (image, rater, rating) of your own: {cmd} gives z-MOS and each "
            "metric's SRCC/KRCC with it.",
        )
    )
    ctx.meta.update(
        {
            "metrics": list(facts["metrics"]),
            "degradations": list(facts["degradations"]),
            "images": len(facts["images"]),
            "expert_ratings": "none (metric vs metric only)",
        }
    )
    write_summary(
        out,
        "# Image quality: how full-reference metrics rank controlled degradations\n\n"
        f"{len(facts['images'])} radiographs from {facts['sources']}, block-averaged to at most "
        f"{facts['size']} pixels, each degraded {len(facts['degradations'])} ways "
        f"({', '.join(facts['degradations'])}; the packaged plan `--plan {IQA_PLAN}`) and scored with "
        f"{', '.join(facts['metrics'])} ({facts['n_pairs']} pairs, `{IQA_SCORES}/`, as `cxreval iqa "
        f"score`; the metrics' rankings and agreement in `{IQA_COMPARISON}/`, as `cxreval iqa "
        "compare`). The same files: the commands in run.json (`commands`), run in an empty folder.\n\n"
        "**Metric vs metric, not metric vs experts**: there are no public expert ratings of these "
        "images, so the tables give each metric's ranking of the degradations and the SRCC/KRCC "
        "between metrics. With ratings (image, rater, rating), `" + cmd + "` gives z-MOS and "
        "each metric's rank correlation (SRCC/KRCC) with it.",
    )
    return str(out)
