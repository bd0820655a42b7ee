"""``cxreval iqa``: degrade images, score pairs with the registered metrics, compare metrics with experts."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any, cast

import pandas as pd
import typer

from ..exceptions import CxrevalError, SchemaError
from ..outputs import check_output_path
from ..tables import write_summary, write_table
from ._common import (
    check_inputs,
    cli_executor,
    echo_json,
    executor_option,
    open_output,
    out_option,
    overwrite_option,
    progress,
    seed_option,
)

__all__ = ["register"]

iqa_app = typer.Typer(no_args_is_help=True, rich_markup_mode=None,
                      help="Image quality: degradations, metrics, metric-vs-expert analysis.")

_PLAN_HELP = ("Degradation plan, YAML: 'seed: 0', 'output_dtype: same|uint8|uint16|float32' and a "
              "'degradations:' list of {name, transform, params}, e.g. '- {transform: gaussian_blur, params: "
              "{sigma: [1, 2]}}' (a list expands to one entry each). Transforms: window (level, width), "
              "contrast_stretch (low, high), gamma (gamma), unsharp_mask (sigma, amount), gaussian_blur (sigma), "
              "gaussian_noise (sigma), poisson_noise (peak), resample (factor, order), jpeg (quality).")


def _read_csv(path: Path, option: str, columns: tuple[str, ...]) -> pd.DataFrame:
    """Read a CSV input; an empty file, a header without rows or a missing column is a one-line error."""
    try:
        df = pd.read_csv(path)
    except pd.errors.EmptyDataError:
        raise SchemaError(f"{option} file {path} is empty; expected a header with columns "
                          f"{', '.join(columns)} and at least one row.") from None
    except (pd.errors.ParserError, UnicodeDecodeError, ValueError) as exc:
        raise SchemaError(f"{option} file {path} cannot be read as CSV: {exc}") from None
    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise SchemaError(f"{option} file {path} has no column(s) {missing}; columns are {list(df.columns)}.")
    if len(df) == 0:
        raise SchemaError(f"{option} file {path} has a header but no rows.")
    return df


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
                plan: Path = typer.Option(..., "--plan", help=_PLAN_HELP),
                out: Path = out_option(),
                overwrite: bool = overwrite_option(),
                json_out: bool = typer.Option(False, "--json", help="Print a JSON summary.")) -> None:
    """Apply a degradation plan to every image; write images/, manifest.csv/.json, pairs.csv, run.json.

    Float images must hold values in [0, 1]; the plan is checked entry by entry before any image is written.
    pairs.csv names the images where they end up (inside --out).

    Example:

    \b
        cxreval iqa degrade --images pngs/ --plan plan.yaml -o degraded
    """
    from ..iqa import IMAGE_SUFFIXES
    from ..iqa.degrade import degrade_images, read_plan

    if not images.is_dir():
        raise SchemaError(f"--images {images} is not a folder.")
    files = sorted(p for p in images.iterdir() if p.suffix.lower() in IMAGE_SUFFIXES)
    skipped = sorted(p.name for p in images.iterdir() if p.is_file() and p.suffix.lower() not in IMAGE_SUFFIXES)
    if not files:
        raise SchemaError(f"--images {images} holds no image files ({', '.join(IMAGE_SUFFIXES)}).")
    the_plan = read_plan(plan)
    final = Path(out).expanduser().absolute()
    with open_output(out, overwrite=overwrite, inputs=[images, plan]) as d:
        res = degrade_images(files, the_plan, d / "images")
        manifest = res.manifest.copy()  # paths as they will be once the folder is in place
        manifest["test"] = [str(final / Path(t).relative_to(d)) for t in manifest["test"]]
        # absolute: pairs.csv is read relative to its own folder (iqa score) or a study folder (reader)
        manifest["reference"] = [str(Path(r).expanduser().absolute()) for r in manifest["reference"]]
        manifest["source"] = manifest["reference"]
        write_table(manifest, d, "manifest")
        (d / "manifest.json").write_text(json.dumps({"plan": res.plan.to_dict(),
                                                     "files": manifest.to_dict(orient="records")}, indent=1))
        write_table(manifest[["reference", "test"]], d, "pairs", parquet=False)
        write_summary(d, f"# cxreval iqa degrade\n\n{len(files)} source image(s) x {len(res.plan.entries)} "
                         f"degradation(s) = {len(res.manifest)} image(s) in `images/`.\n\n"
                         f"Skipped non-image files: {skipped or 'none'}.\n")
    if json_out:
        echo_json({**res.to_dict(), "skipped": skipped})
    else:
        typer.echo(f"wrote {len(res.manifest)} degraded images to {final / 'images'}")


@iqa_app.command("score")
def score_cmd(pairs: Path = typer.Option(..., "--pairs", help="CSV with columns reference,test (image paths)."),
              metrics: str = typer.Option("all", "--metrics", help="'all', 'full', 'no' or comma-separated names."),
              out: Path = out_option(),
              executor: str = executor_option(),
              overwrite: bool = overwrite_option(),
              json_out: bool = typer.Option(False, "--json", help="Print a JSON summary.")) -> None:
    """Score (reference, test) pairs with the chosen metrics -> scores.csv (reference, test, metric, value).

    Each pair is compared in the reference's data range: a test image of another bit depth is rescaled
    (float64, no rounding). Relative paths are relative to the pairs file. Metrics needing downloaded
    weights are skipped by 'all' and reported. Every image header is checked before scoring starts.
    Pairs are scored in blocks, written as they come; with --executor, tasks carry chunks of pairs (paths)
    and each worker opens its own images, so the images must be on storage every worker sees at the same
    path (shared storage). The scores are identical, byte for byte, on every executor.

    Example:

    \b
        cxreval iqa score --pairs degraded/pairs.csv --metrics psnr,ssim --executor process:2 -o scores
    """
    from ..iqa import score_pair_batches, select_metrics
    from ..tables import TableWriter

    check_inputs(("--pairs", pairs), kind="file")
    table = _read_csv(pairs, "--pairs", ("reference", "test"))
    names, skipped = select_metrics(metrics)
    check_output_path(out, overwrite=overwrite)
    with cli_executor(executor) as ex:
        try:  # every image header is checked now, before the output folder is opened
            blocks = _naming(score_pair_batches(table, names, base_dir=pairs.parent, executor=ex), pairs)
        except CxrevalError as exc:  # name the file: the library names the pair
            raise type(exc)(f"{pairs}: {exc}") from exc
        with open_output(out, overwrite=overwrite, inputs=[pairs], meta={"executor": executor}) as d, \
                progress() as prog, TableWriter(d, "scores") as writer:
            task = prog.add(f"scoring pairs ({len(names)} metrics)", total=len(table))
            for block in blocks:
                writer.write(block)
                prog.advance(task, len(block) // len(names))
            write_summary(d, f"# cxreval iqa score\n\n{len(table)} pair(s) x {len(names)} metric(s): "
                             f"{', '.join(names)}.\n\nSkipped (need downloaded weights): {skipped or 'none'}.\n")
    if json_out:
        echo_json({"n_pairs": len(table), "metrics": names, "skipped": skipped})
    else:
        typer.echo(f"wrote {writer.n_rows} scores to {Path(out) / 'scores.csv'}")


def _naming(blocks: Iterator[pd.DataFrame], pairs: Path) -> Iterator[pd.DataFrame]:
    """The blocks, with a failing pair's error naming the pairs file too."""
    try:
        yield from blocks
    except CxrevalError as exc:
        raise type(exc)(f"{pairs}: {exc}") from exc


@iqa_app.command("agree")
def agree_cmd(scores: Path = typer.Option(..., "--scores", help="scores.csv from `cxreval iqa score`."),
              ratings: Path = typer.Option(..., "--ratings", help="CSV with columns image,rater,rating."),
              out: Path = out_option(),
              scale_min: float = typer.Option(1, "--scale-min", help="Lowest rating on the scale."),
              scale_max: float = typer.Option(4, "--scale-max", help="Highest rating on the scale."),
              n_resamples: int = typer.Option(1000, "--n-resamples", help="Bootstrap resamples of reference images."),
              confidence_level: float = typer.Option(0.95, "--confidence-level", help="Confidence level of the percentile CIs."),
              seed: int = seed_option("Bootstrap seed."),
              overwrite: bool = overwrite_option(),
              json_out: bool = typer.Option(False, "--json", help="Print the tables as JSON."),
              unscored: str = typer.Option("keep", "--unscored", help="Rated images no metric scored (e.g. the "
                                           "undegraded references): 'keep' their ratings in each rater's mean/SD "
                                           "and correlate only scored images, 'exclude' them before z-scoring, or "
                                           "'error'.")) -> None:
    """z-scores and z-MOS, inter-rater SRCC/KRCC (Table 3) and metric-vs-z-MOS SRCC/KRCC with CIs (Table 4).

    Example:

    \b
        cxreval iqa agree --scores scores/scores.csv --ratings ratings.csv --unscored keep --seed 0 -o iqa-agree
    """
    from ..iqa.expert import metric_agreement, rater_agreement, zscores_for_scores

    check_inputs(("--scores", scores), ("--ratings", ratings), kind="file")
    ratings_df = _read_csv(ratings, "--ratings", ("image", "rater", "rating"))
    scores_df = _read_csv(scores, "--scores", ("reference", "test", "metric", "value"))
    with open_output(out, overwrite=overwrite, inputs=[scores, ratings], meta={"seed": seed}) as d:
        res = zscores_for_scores(ratings_df, scores_df, unscored=unscored, scale=(scale_min, scale_max))
        raters = rater_agreement(res)
        metrics, dropped = metric_agreement(scores_df, res.zmos, n_resamples=n_resamples,
                                            confidence_level=confidence_level, rng=seed,
                                            unscored="error" if unscored == "error" else "keep")
        _write_agree(d, res, raters, metrics, dropped, unscored)
    if json_out:
        echo_json({"rater_agreement": raters.to_dict(orient="records"),
                   "metric_agreement": metrics.to_dict(orient="records"), "n_dropped": len(dropped)})
    else:
        typer.echo(f"wrote z-MOS, rater and metric agreement tables to {out}")


def _write_agree(out: Path, res: object, raters: pd.DataFrame, metrics: pd.DataFrame, dropped: pd.DataFrame,
                 unscored: str) -> None:
    res = cast(Any, res)
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


def register(app: typer.Typer) -> None:
    app.add_typer(iqa_app, name="iqa")
