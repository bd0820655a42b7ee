"""``cxreval synth``: the synthetic localization study (and the error model on real boxes)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from ..tables import write_summary
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
    overwrite: bool = overwrite_option(),
    json_out: bool = typer.Option(False, "--json", help="Print the checks as JSON instead of the text."),
) -> None:
    """Run the synthetic localization study: Part A (exact boxes), checks, Part B (Acc/AFP), Part C (the
    published ChestX-ray8 accuracies), then a short legend of its terms (on stderr).

    Example:

    \b
        cxreval synth --seed 0 --per-size 60 -o synth-out
    """
    path = None
    if real_boxes is not None:
        from ..datasets.fetch import metadata_path

        path = metadata_path("BBox_List_2017.csv.gz") if real_boxes == "auto" else Path(real_boxes)
        check_inputs(("--real-boxes", path), kind="file")
    if out is None:
        res, real = _run(seed, per_size, path)
    else:
        with open_output(out, overwrite=overwrite, inputs=[path], meta={"seed": seed}) as d:
            res, real = _run(seed, per_size, path)
            res.save(d)
            text = res.summary()
            if real is not None:
                (d / real.FOLDER).mkdir()
                real.save(d / real.FOLDER)
                text += f"\n\n{real.summary()}\n\nTables: {real.FOLDER}/."
            write_summary(d, text)
    if json_out:
        echo_json(res.to_dict())
    else:
        typer.echo(res.text, nl=False)
        typer.echo(LEGEND, err=True)  # stderr: stdout stays the study's reproducible output


LEGEND = """
How to read this (ChestX-ray8 localization protocol, simulated heat maps):
  IoU   overlap / union of a predicted and a reference box; IoBB  overlap / area of the predicted box
  T     the overlap a predicted box must exceed to hit the reference box (0.1 ... 0.9)
  Acc   share of reference boxes hit at T;  AFP  average false-positive boxes per image
  a/b   in Part B: Acc/AFP at each T, for: map (heatmap, 6 x 6 peak box, whole image, oracle),
        upsampling (bilinear, nearest), threshold on the 0-255 map (60, 180), size class, overlap rule
  Part C: the image counts n <= 200 that reproduce each published Acc. (ChestX-ray8, Table 4)"""
"""The legend ``cxreval synth`` prints under the study's output (on stderr)."""


def _run(seed: int, per_size: int, path: Path | None) -> tuple[Any, Any]:
    from ..localization.synthetic import synthetic_study

    with progress() as prog:
        task = prog.add(f"synthetic study ({3 * per_size} images)")
        res = synthetic_study(seed, per_size=per_size)
        prog.done(task)
        real = None
        if path is not None:
            from ..datasets.boxes import read_box_file
            from ..localization.real_boxes import error_model_on_boxes

            task = prog.add("error model on the real boxes")
            real = error_model_on_boxes(read_box_file(path).table, rng=seed)
            prog.done(task)
    return res, real


def register(app: typer.Typer) -> None:
    app.command("synth")(synth)
