"""``cxreval synth``: the seed's synthetic localization study (and the error model on real boxes)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import typer

from ._common import echo_json, prepare_out, write_summary, write_table

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
    seed: int = typer.Option(0, "--seed", help="Generator seed (np.random.default_rng(seed))."),
    per_size: int = typer.Option(60, "--per-size", min=1, help="Images per size class."),
    out: Path = typer.Option(None, "--out", help="Write synth_output.txt and tidy tables here."),
    real_boxes: str = typer.Option(None, "--real-boxes", help="Also run the error model on real boxes: a "
                                   "BBox_List_2017.csv[.gz] path, or 'auto' for the fetched metadata copy."),
    json_out: bool = typer.Option(False, "--json", help="Print the checks as JSON instead of the text."),
) -> None:
    """Run the seed's synthetic study: Part A (exact boxes), checks, Part B (Acc/AFP), Part C (Table 4)."""
    from ..localization.synthetic import synthetic_study

    res = synthetic_study(seed, per_size=per_size)
    real = None
    if real_boxes is not None:
        from ..datasets.fetch import metadata_path
        from ..datasets.nih_boxes import read_nih_boxes
        from ..localization.evaluate import real_boxes_study

        path = metadata_path("BBox_List_2017.csv.gz") if real_boxes == "auto" else Path(real_boxes)
        real = real_boxes_study(read_nih_boxes(path).table, rng=seed)
    if json_out:
        echo_json(res.to_dict())
    else:
        typer.echo(res.text, nl=False)
    if out is not None:
        d = prepare_out(out)
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
                     compact.to_markdown(index=False, floatfmt=".3f") if _has_tabulate() else compact.to_string()]
        write_summary(d, "\n".join(text))


def _has_tabulate() -> bool:
    try:
        import tabulate  # noqa: F401
    except ImportError:
        return False
    return True


def register(app: typer.Typer) -> None:
    app.command("synth")(synth)
