"""``cxreval synth``: the seed's synthetic localization study (and the error model on real boxes)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
import typer

from ..tables import markdown_table, write_summary, write_table
from ._common import check_inputs, echo_json, open_output, out_option, overwrite_option, progress, seed_option

__all__ = ["register", "synth"]


def _tidy(scores: pd.DataFrame) -> pd.DataFrame:
    df = scores.copy()
    df["finding"] = "synthetic " + df["size"]
    df["n_boxes"] = df["n_images"]
    df["T"] = [float(__import__("fractions").Fraction(t)) for t in df["T"]]
    cols = ["finding", "T", "threshold", "rule", "acc", "afp", "n_boxes", "n_images", "variant", "localizer",
            "upsampling", "size", "hits", "false_positives"]
    return df[cols]


def _real_table(df: pd.DataFrame) -> pd.DataFrame:
    """Compact per-finding view: IoBB Acc at T = 0.1 / 0.5 / 0.9 for each localizer on noisy maps."""
    d = df[(df.variant == "noisy") & (df.rule == "IoBB") & (df["T"].isin([0.1, 0.5, 0.9]))].copy()
    d["col"] = d["localizer"] + " " + d["threshold"].astype(str) + " @" + d["T"].map(lambda t: f"{t:g}")
    wide = d.pivot_table(index="finding", columns="col", values="acc", sort=False)
    meta = df.groupby("finding", sort=False)[["n_boxes", "median_area_fraction"]].first()
    return meta.join(wide).reset_index()


def synth(
    seed: int = seed_option("Generator seed (np.random.default_rng(seed))."),
    per_size: int = typer.Option(60, "--per-size", min=1, help="Images per size class."),
    out: Path = out_option("Write synth_output.txt, tidy tables, summary.md and run.json into this folder "
                           "(atomically; must not exist unless --overwrite).", default=None),
    real_boxes: str = typer.Option(None, "--real-boxes", help="Also run the error model on real boxes: a "
                                   "BBox_List_2017.csv[.gz] path, or 'auto' for the fetched metadata copy."),
    overwrite: bool = overwrite_option(),
    json_out: bool = typer.Option(False, "--json", help="Print the checks as JSON instead of the text."),
) -> None:
    """Run the seed's synthetic study: Part A (exact boxes), checks, Part B (Acc/AFP), Part C (Table 4).

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
            _write_synth(d, res, real, seed=seed, per_size=per_size)
    if json_out:
        echo_json(res.to_dict())
    else:
        typer.echo(res.text, nl=False)


def _run(seed: int, per_size: int, path: Path | None) -> tuple[object, pd.DataFrame | None]:
    from ..localization.synthetic import synthetic_study

    with progress() as prog:
        task = prog.add(f"synthetic study ({3 * per_size} images)")
        res = synthetic_study(seed, per_size=per_size)
        prog.done(task)
        real = None
        if path is not None:
            from ..datasets.nih_boxes import read_nih_boxes
            from ..localization.evaluate import real_boxes_study

            task = prog.add("error model on the real boxes")
            real = real_boxes_study(read_nih_boxes(path).table, rng=seed)
            prog.done(task)
    return res, real


def _write_synth(d: Path, res: Any, real: pd.DataFrame | None, *, seed: int, per_size: int) -> None:
    (d / "synth_output.txt").write_text(res.text)
    write_table(_tidy(res.scores), d, "localization")
    write_table(res.boxes, d, "boxes")
    write_table(res.afp_denominators, d, "afp_denominators")
    text = [f"# cxreval synth (seed {seed}, {per_size} images per size class)", "", "```", res.text.rstrip(),
            "```", "", "## AFP denominators (localize --afp-denominator): which choice gives the seed's AFPs", "",
            "```", res.afp_denominators.to_string(index=False), "```"]
    if real is not None:
        write_table(real, d, "real_boxes")
        compact = _real_table(real)
        write_table(compact, d, "real_boxes_by_finding")
        text += ["", "## Error model on the real BBox_List_2017 boxes (noisy maps, IoBB Acc)", "",
                 markdown_table(compact, floatfmt="{:.3f}")]
    write_summary(d, "\n".join(text))


def register(app: typer.Typer) -> None:
    app.command("synth")(synth)
