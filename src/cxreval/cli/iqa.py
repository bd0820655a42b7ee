"""``cxreval iqa``: degrade images, score pairs with the registered metrics, compare metrics with experts."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import typer

from ..exceptions import CxrevalError, SchemaError
from ._common import echo_json, prepare_out, write_summary, write_table

__all__ = ["register"]

iqa_app = typer.Typer(no_args_is_help=True, help="Image quality: degradations, metrics, metric-vs-expert analysis.")


@iqa_app.command("list")
def list_cmd(reference: str = typer.Option(None, "--reference", help="'full' or 'no'."),
             json_out: bool = typer.Option(False, "--json", help="Print as JSON.")) -> None:
    """List the registered IQA metrics."""
    from ..iqa import get_metric, list_metrics

    specs = [get_metric(n).to_dict() for n in list_metrics(reference=reference)]  # type: ignore[arg-type]
    if json_out:
        echo_json(specs)
        return
    for s in specs:
        arrow = "higher" if s["higher_is_better"] else "lower"
        typer.echo(f"{s['name']:<14} {s['reference']:<5} {arrow:<6} {s['description']}")


@iqa_app.command("degrade")
def degrade_cmd(images: Path = typer.Option(..., "--images", help="Folder of images (PNG/TIFF/DICOM/NPY)."),
                plan: Path = typer.Option(..., "--plan", help="Degradation plan (YAML)."),
                out: Path = typer.Option(..., "--out", help="Output folder."),
                json_out: bool = typer.Option(False, "--json", help="Print a JSON summary.")) -> None:
    """Apply a degradation plan to every image; write images, manifest.csv/.json and pairs.csv."""
    from ..iqa._image import IMAGE_SUFFIXES
    from ..iqa.degrade import degrade_images, read_plan

    if not images.is_dir():
        raise SchemaError(f"--images {images} is not a folder.")
    files = sorted(p for p in images.iterdir() if p.suffix.lower() in IMAGE_SUFFIXES)
    skipped = sorted(p.name for p in images.iterdir() if p.is_file() and p.suffix.lower() not in IMAGE_SUFFIXES)
    if not files:
        raise SchemaError(f"--images {images} holds no image files ({', '.join(IMAGE_SUFFIXES)}).")
    out = prepare_out(out)
    res = degrade_images(files, read_plan(plan), out / "images")
    write_table(res.manifest, out, "manifest")
    (out / "manifest.json").write_text(json.dumps({"plan": res.plan.to_dict(),
                                                   "files": res.manifest.to_dict(orient="records")}, indent=1))
    write_table(res.pairs(), out, "pairs", parquet=False)
    write_summary(out, f"# cxreval iqa degrade\n\n{len(files)} source image(s) x {len(res.plan.entries)} "
                       f"degradation(s) = {len(res.manifest)} image(s) in `images/`.\n\n"
                       f"Skipped non-image files: {skipped or 'none'}.\n")
    if json_out:
        echo_json({**res.to_dict(), "skipped": skipped})
    else:
        typer.echo(f"wrote {len(res.manifest)} degraded images to {out / 'images'}")


@iqa_app.command("score")
def score_cmd(pairs: Path = typer.Option(..., "--pairs", help="CSV with columns reference,test (image paths)."),
              metrics: str = typer.Option("all", "--metrics", help="'all', 'full', 'no' or comma-separated names."),
              out: Path = typer.Option(..., "--out", help="Output folder."),
              json_out: bool = typer.Option(False, "--json", help="Print a JSON summary.")) -> None:
    """Score (reference, test) pairs with the chosen metrics -> scores.csv (reference, test, metric, value).

    Each pair is compared in the reference's data range: a test image of another bit depth is rescaled
    (float64, no rounding). Relative paths are relative to the pairs file. Metrics needing downloaded
    weights are skipped by 'all' and reported.
    """
    from ..iqa import score_pairs, select_metrics

    if not pairs.is_file():
        raise SchemaError(f"--pairs file {pairs} does not exist.")
    table = pd.read_csv(pairs)
    names, skipped = select_metrics(metrics)
    try:
        df = score_pairs(table, names, base_dir=pairs.parent)
    except CxrevalError as exc:  # name the file: the library names the pair
        raise type(exc)(f"{pairs}: {exc}") from exc
    out = prepare_out(out)
    write_table(df, out, "scores")
    write_summary(out, f"# cxreval iqa score\n\n{len(table)} pair(s) x {len(names)} metric(s): "
                       f"{', '.join(names)}.\n\nSkipped (need downloaded weights): {skipped or 'none'}.\n")
    if json_out:
        echo_json({"n_pairs": len(table), "metrics": names, "skipped": skipped})
    else:
        typer.echo(f"wrote {len(df)} scores to {out / 'scores.csv'}")


@iqa_app.command("agree")
def agree_cmd(scores: Path = typer.Option(..., "--scores", help="scores.csv from `cxreval iqa score`."),
              ratings: Path = typer.Option(..., "--ratings", help="CSV with columns image,rater,rating."),
              out: Path = typer.Option(..., "--out", help="Output folder."),
              scale_min: float = typer.Option(1, "--scale-min", help="Lowest rating on the scale."),
              scale_max: float = typer.Option(4, "--scale-max", help="Highest rating on the scale."),
              n_resamples: int = typer.Option(1000, "--n-resamples", help="Bootstrap resamples of reference images."),
              confidence_level: float = typer.Option(0.95, "--confidence-level"),
              seed: int = typer.Option(0, "--seed", help="Bootstrap seed."),
              json_out: bool = typer.Option(False, "--json", help="Print the tables as JSON."),
              unscored: str = typer.Option("keep", "--unscored", help="Rated images no metric scored (e.g. the "
                                           "undegraded references): 'keep' their ratings in each rater's mean/SD "
                                           "and correlate only scored images, 'exclude' them before z-scoring, or "
                                           "'error'.")) -> None:
    """z-scores and z-MOS, inter-rater SRCC/KRCC (Table 3) and metric-vs-z-MOS SRCC/KRCC with CIs (Table 4).

    Example: cxreval iqa agree --scores scored/scores.csv --ratings ratings.csv --unscored keep --out agree
    """
    from ..iqa.expert import metric_agreement, rater_agreement, zscores_for_scores

    for p, opt in ((scores, "--scores"), (ratings, "--ratings")):
        if not p.is_file():
            raise SchemaError(f"{opt} file {p} does not exist.")
    score_table = pd.read_csv(scores)
    res = zscores_for_scores(pd.read_csv(ratings), score_table, unscored=unscored, scale=(scale_min, scale_max))
    raters = rater_agreement(res)
    metrics, dropped = metric_agreement(score_table, res.zmos, n_resamples=n_resamples,
                                        confidence_level=confidence_level, rng=seed,
                                        unscored="error" if unscored == "error" else "keep")
    out = prepare_out(out)
    write_table(res.zscores, out, "zscores")
    write_table(res.zmos, out, "zmos")
    write_table(raters, out, "rater_agreement")
    write_table(metrics, out, "metric_agreement")
    write_table(dropped, out, "dropped", parquet=False)
    lines = ["# cxreval iqa agree", "", f"{len(res.zmos)} rated image(s), {len(res.rater_stats)} rater(s).", "",
             "## Raters vs z-MOS (Table 3)", "", "| rater | SRCC | KRCC | n |", "|---|---|---|---|"]
    for _, r in raters[raters["rater_b"] == "z-MOS"].iterrows():
        lines.append(f"| {r.rater_a} | {r.srcc:.2f} | {r.krcc:.2f} | {r.n} |")
    lines += ["", "## Metrics vs z-MOS (Table 4)", "", "| metric | SRCC [CI] | KRCC [CI] | n |", "|---|---|---|---|"]
    for _, r in metrics.sort_values("srcc", ascending=False).iterrows():
        lines.append(f"| {r.metric} | {r.srcc:.2f} [{r.srcc_ci_low:.2f}, {r.srcc_ci_high:.2f}] | "
                     f"{r.krcc:.2f} [{r.krcc_ci_low:.2f}, {r.krcc_ci_high:.2f}] | {r.n} |")
    n_unscored = int((dropped["reason"] != "no ratings for this image").sum()) if len(dropped) else 0
    lines += ["", f"Scored images without ratings (not used): {len(dropped) - n_unscored}.",
              f"Rated images no metric scored: --unscored {unscored} "
              + ("(their ratings are in the raters' mean/SD)." if unscored == "keep" else "(removed before z-scoring)."),
              f"(image, metric) pairs rated but not scored by that metric, kept in the mean/SD and not correlated: "
              f"{n_unscored}."]
    write_summary(out, "\n".join(lines))
    if json_out:
        echo_json({"rater_agreement": raters.to_dict(orient="records"),
                   "metric_agreement": metrics.to_dict(orient="records"), "n_dropped": len(dropped)})
    else:
        typer.echo(f"wrote z-MOS, rater and metric agreement tables to {out}")


def register(app: typer.Typer) -> None:
    app.add_typer(iqa_app, name="iqa")
