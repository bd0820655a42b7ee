"""``cxreval synth``: the synthetic localization study (and the error model on real boxes)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from ..exceptions import SchemaError
from ..io import write_summary
from ._common import check_inputs, echo_json, open_output, out_option, overwrite_option, progress, seed_option

__all__ = ["register", "synth"]


def synth(
    seed: int = seed_option("Generator seed (np.random.default_rng(seed))."),
    per_size: int = typer.Option(60, "--per-size", min=1, help="Images per size class."),
    out: Path = out_option("Write synth_output.txt, tidy tables, summary.md and run.json into this folder "
                           "(atomically; must not exist unless --overwrite).", default=None),
    real_boxes: str = typer.Option(None, "--real-boxes", help="Also run the error model on real boxes: a "
                                   "BBox_List_2017.csv[.gz] path (or any box file cxreval localize reads), or "
                                   "'auto' for the fetched metadata copy; saved into OUT/real_boxes/."),
    images: Path = typer.Option(None, "--images", help="With --real-boxes: a folder of radiographs named by their "
                                "study_id (00004296_000.png); the boxed ones get box overlays (overlays.csv, "
                                "overlay_heatmaps.npz, overlays/*.png) beside the real-box tables."),
    synthetic: bool = typer.Option(True, "--synthetic/--no-synthetic", help="Run the synthetic study (default); "
                                   "--no-synthetic (with --real-boxes and -o) writes only the real-box tables, "
                                   "at the top of OUT."),
    overwrite: bool = overwrite_option(),
    json_out: bool = typer.Option(False, "--json", help="Print the checks as JSON instead of the text."),
) -> None:
    """Run the synthetic localization study: Part A (exact boxes), checks, Part B (Acc/AFP), Part C (the
    published ChestX-ray8 accuracies), then a short legend of its terms (on stderr).

    Example:

    \b
        cxreval synth --seed 0 --per-size 60 -o synth-out
        cxreval synth --no-synthetic --real-boxes auto --images radiographs --seed 0 -o real-boxes
    """
    from ..exceptions import InvalidParameterError

    if images is not None and real_boxes is None:
        raise InvalidParameterError("--images needs --real-boxes (the boxes drawn over the radiographs).")
    if not synthetic and (real_boxes is None or out is None):
        raise InvalidParameterError("--no-synthetic needs --real-boxes and --out (it writes only the real-box tables).")
    if images is not None and not Path(images).is_dir():
        raise SchemaError(f"--images {str(images)!r} is not a folder of radiographs.")
    path = None
    if real_boxes is not None:
        from ..datasets import metadata_path

        path = metadata_path("BBox_List_2017.csv.gz") if real_boxes == "auto" else Path(real_boxes)
        check_inputs(("--real-boxes", path), kind="file")
    if out is None:
        res, real, overlays = _run(seed, per_size, path, None, synthetic)
    else:
        with open_output(out, overwrite=overwrite, inputs=[path, images], meta={"seed": seed}) as d:
            res, real, overlays = _run(seed, per_size, path, images, synthetic)
            parts = []
            if res is not None:
                res.save(d)
                parts.append(res.summary())
            if real is not None:
                where = d if res is None else d / real.FOLDER
                where.mkdir(exist_ok=True)
                real.save(where)
                parts.append(real.summary() + ("" if res is None else f"\n\nTables: {real.FOLDER}/."))
                if overlays is not None:
                    overlays.save(where)
                    parts.append(overlays.summary())
            write_summary(d, "\n\n".join(parts))
    if json_out:
        echo_json(res.to_dict() if res is not None else {"real_boxes": real.summary()})
    elif res is not None:
        typer.echo(res.text, nl=False)
        typer.echo(LEGEND, err=True)  # stderr: stdout stays the study's reproducible output
    else:
        typer.echo(f"{real.summary()}\n-> {out}")


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


def _run(seed: int, per_size: int, path: Path | None, images: Path | None, synthetic: bool) -> tuple[Any, Any, Any]:
    """The synthetic study (when ``synthetic``), the error model on the boxes of ``path`` (when given) and the
    overlays on the boxed radiographs of ``images`` (when given and some carry boxes)."""
    from ..localization.synthetic import simulate_localization

    with progress() as prog:
        res = real = overlays = None
        if synthetic:
            task = prog.add(f"synthetic study ({3 * per_size} images)")
            res = simulate_localization(seed, per_size=per_size)
            prog.done(task)
        if path is not None:
            from ..datasets.boxes import read_box_file
            from ..localization.real_boxes import simulate_localization_on_boxes

            task = prog.add("error model on the real boxes")
            boxes = read_box_file(path).table
            real = simulate_localization_on_boxes(boxes, rng=seed)
            prog.done(task)
            if images is not None:
                from ..localization.overlays import boxed_images, overlay_boxes

                files = boxed_images(images, boxes)
                if not files:
                    raise SchemaError(f"--images {str(images)!r} holds no radiograph named by a study_id of the "
                                      f"boxes of {str(path)!r} (<study_id>.png).")
                task = prog.add(f"box overlays on {len(files)} radiographs")
                overlays = overlay_boxes(files, boxes, rng=seed, origin=f"from {images}")
                prog.done(task)
    return res, real, overlays


def register(app: typer.Typer) -> None:
    app.command("synth")(synth)
