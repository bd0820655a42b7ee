"""``cxreval localize``: score heatmaps against reference boxes under the ChestX-ray8 protocol."""

from __future__ import annotations

from pathlib import Path

import typer

from ..localization._heatmap_files import HEATMAP_INPUTS
from ._common import echo_json, executor_option, executor_output, json_option, out_option, overwrite_option

__all__: list[str] = []


def localize(
    heatmaps: list[Path] = typer.Option(
        ..., "--heatmaps", help=f"Heatmaps: {HEATMAP_INPUTS}. Read map by map, never all at once."
    ),
    boxes: Path = typer.Option(
        ...,
        "--boxes",
        help="Reference boxes: BBox_List_2017.csv[.gz], VinDr-CXR's "
        "vinbigdata-train.csv[.gz] (the vindr_boxes dataset; every reader's box is a "
        "reference) or a box table (study_id, finding, [source,] x_min, y_min, x_max, y_max; "
        ".csv or .parquet).",
    ),
    out: Path = out_option(),
    upsampling: str = typer.Option("bilinear", "--upsampling", help="bilinear or nearest."),
    threshold: list[float] = typer.Option(
        [60.0, 180.0], "--threshold", help="Thresholds on [0, 255] (repeat)."
    ),
    inclusive_threshold: bool = typer.Option(False, "--inclusive-threshold", help="Region is >= threshold."),
    connectivity: int = typer.Option(8, "--connectivity", help="8 or 4."),
    rule: list[str] = typer.Option(
        ["IoBB", "IoU", "IoU or IoBB"], "--rule", help="IoBB, IoU or 'IoU or IoBB'."
    ),
    t_values: list[str] = typer.Option(
        ["0.1", "0.25", "0.5", "0.75", "0.9"],
        "--t-value",
        "-t",
        help="Overlap thresholds T (repeat; fractions such as 1/3 allowed).",
    ),
    inclusive_t: bool = typer.Option(False, "--inclusive-t", help="Correct when measure >= T (default > T)."),
    t_iou: list[str] = typer.Option(
        None,
        "--t-iou",
        help="A separate T(IoU), one per --t-value (repeat), for the IoU "
        "and 'IoU or IoBB' rules; default: T(IoU) = T(IoBB) = --t-value.",
    ),
    afp_denominator: str = typer.Option(
        "pairs",
        "--afp-denominator",
        help="AFP = false positives / 'pairs' "
        "((image, finding) pairs with a box; the synthetic study's reading), 'box_images' "
        "(all images with a box) or 'boxes' (all boxes).",
    ),
    image_size: int = typer.Option(1024, "--image-size", help="Image height and width in pixels."),
    missing_maps: str = typer.Option("error", "--missing-maps", help="error, or miss: score as missed."),
    studies_from_maps: bool = typer.Option(
        False,
        "--studies-from-maps",
        help="Score only the images that have a "
        "heat map (the other images' boxes are left out, as when the maps cover a "
        "subset of the box set); a finding without any map is N/A, not 0.",
    ),
    executor: str = executor_option(),
    overwrite: bool = overwrite_option(),
    json_out: bool = json_option("Print the summary as JSON."),
) -> None:
    """Heatmaps -> boxes -> IoU / IoBB -> Acc and AFP per finding, threshold, rule and T.

    Writes localization and boxes (CSV + Parquet), summary.md and run.json.

    The maps are indexed from the files' headers (a bad file is refused, naming it, before any work) and
    read in chunks of 1,024 maps by the tasks themselves: memory holds one chunk of maps per worker and
    the boxes, not the maps. On a Dask cluster every worker must see the heatmap files at the same paths
    (shared storage).

    Example:

    \b
        cxreval localize --heatmaps maps.npz --boxes BBox_List_2017.csv -t 0.1 -t 0.5 -o loc-out
        cxreval localize --heatmaps preds/heatmaps/densenet.npz --boxes BBox_List_2017.csv --executor process:2 -o loc
        cxreval localize --heatmaps my12maps.npz --boxes BBox_List_2017.csv --studies-from-maps -o loc-mine
    """
    from ..jobs import evaluate_localization_files

    with executor_output(executor, out, overwrite=overwrite, inputs=[*heatmaps, boxes]) as (ex, d, prog):
        res = evaluate_localization_files(
            heatmaps,
            boxes,
            upsampling=upsampling,
            thresholds=threshold,
            strict_threshold=not inclusive_threshold,
            connectivity=connectivity,
            rules=rule,
            T_values=t_values,
            strict_T=not inclusive_t,
            T_iou=t_iou or None,
            afp_denominator=afp_denominator,
            image_size=image_size,
            missing_maps=missing_maps,
            studies_from_maps=studies_from_maps,
            executor=ex,
            progress=prog,
        )
        res.save(d)
    if json_out:
        echo_json(res.to_dict())
    else:
        typer.echo(res.table4().round(4).to_string())


def register(app: typer.Typer) -> None:
    app.command("localize")(localize)
