"""``cxreval synth``: the synthetic localization study (and the error model on real boxes)."""

from __future__ import annotations

from pathlib import Path

import typer

from ._common import echo_json, json_option, out_option, overwrite_option, progress, save_output, seed_option

__all__: list[str] = []


def synth(
    seed: int = seed_option("Generator seed (np.random.default_rng(seed))."),
    per_size: int = typer.Option(60, "--per-size", min=1, help="Images per size class."),
    out: Path = out_option(
        "Write synth_output.txt, tidy tables, summary.md and run.json into this folder "
        "(atomically; must not exist unless --overwrite). By default none: the check is only printed.",
        default=None,
    ),
    real_boxes: str = typer.Option(
        None,
        "--real-boxes",
        help="Also run the error model on real boxes: a "
        "BBox_List_2017.csv[.gz] path (or any box file cxreval localize reads), or "
        "'auto' for the fetched metadata copy; saved into OUT/real_boxes/.",
    ),
    images: Path = typer.Option(
        None,
        "--images",
        help="With --real-boxes: a folder of radiographs named by their "
        "study_id (00004296_000.png); the boxed ones get box overlays (overlays.csv, "
        "overlay_heatmaps.npz, overlays/*.png) beside the real-box tables.",
    ),
    synthetic: bool = typer.Option(
        True,
        "--synthetic/--no-synthetic",
        help="Run the synthetic study (default); "
        "--no-synthetic (with --real-boxes and -o) writes only the real-box tables, "
        "at the top of OUT.",
    ),
    overwrite: bool = overwrite_option(),
    json_out: bool = json_option("Print the checks as JSON instead of the text."),
) -> None:
    """Run the synthetic localization study: Part A (exact boxes), checks, Part B (Acc/AFP), Part C (the
    published ChestX-ray8 accuracies), then a short legend of its terms (on stderr).

    Example:

    \b
        cxreval synth --seed 0 --per-size 60 -o synth-out
        cxreval synth --no-synthetic --real-boxes auto --images radiographs --seed 0 -o real-boxes
    """
    from ..jobs import real_boxes_file, simulate_localization_study_files

    with progress() as prog:
        res = simulate_localization_study_files(
            real_boxes,
            rng=seed,
            per_size=per_size,
            synthetic=synthetic,
            images=images,
            out=out,
            overwrite=overwrite,
            progress=prog,
        )
    if out is not None:  # without a folder nothing is written: the study is printed
        inputs = [real_boxes_file(real_boxes), images]
        save_output(res, out, overwrite=overwrite, inputs=inputs, meta={"seed": seed})
    if json_out:
        echo_json(res.to_dict())
    elif res.synthetic is not None:
        typer.echo(res.synthetic.text, nl=False)
        typer.echo(LEGEND, err=True)  # stderr: stdout stays the study's reproducible output
    elif res.real_boxes is not None:
        typer.echo(f"{res.real_boxes.summary()}\n-> {out}")


LEGEND = """
How to read this (ChestX-ray8 localization protocol, simulated heat maps):
  IoU   overlap / union of a predicted and a reference box; IoBB  overlap / area of the predicted box
  T     the overlap a predicted box must exceed to hit the reference box (0.1 ... 0.9)
  Acc   share of reference boxes hit at T;  AFP  average false-positive boxes per image
  a/b   in Part B: Acc/AFP at each T, for: map (heatmap, 6 x 6 peak box, whole image, oracle),
        upsampling (bilinear, nearest), threshold on the 0-255 map (60, 180), size class, overlap rule
  Part C: the image counts n <= 200 that reproduce each published Acc. (ChestX-ray8's Table 4,
        its localization results)"""
"""The legend ``cxreval synth`` prints under the study's output (on stderr)."""


def register(app: typer.Typer) -> None:
    app.command("synth")(synth)
