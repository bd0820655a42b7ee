"""``cxreval iqa``: degrade images, score pairs with the registered metrics, compare metrics with experts."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import typer

from ..exceptions import CxrevalError, InvalidParameterError, SchemaError
from ..iqa import IQA_KENDALL, IQA_SPEARMAN
from ..outputs import check_output_path
from ._common import (
    check_inputs,
    echo_json,
    executor_option,
    open_output,
    out_option,
    overwrite_option,
    progress,
    seed_option,
)

__all__ = ["register"]

iqa_app = typer.Typer(
    no_args_is_help=True,
    rich_markup_mode=None,
    help="Image quality: degradations, metrics, metric-vs-expert analysis.",
)

_PLAN_HELP = (
    "Degradation plan, YAML: 'seed: 0', 'output_dtype: same|uint8|uint16|float32' and a "
    "'degradations:' list of {name, transform, params}, e.g. '- {transform: gaussian_blur, params: "
    "{sigma: [1, 2]}}' (a list expands to one entry each). Transforms: window (level, width), "
    "contrast_stretch (low, high), gamma (gamma), unsharp_mask (sigma, amount), gaussian_blur (sigma), "
    "gaussian_noise (sigma), poisson_noise (peak), resample (factor, order), jpeg (quality)."
)


def _echo(res: Any, json_out: bool, line: str) -> None:
    """Print the result as JSON (``--json``) or one line."""
    if json_out:
        echo_json(res.to_dict())
    else:
        typer.echo(line)


def _read_csv(path: Path, option: str, columns: tuple[str, ...], dtype: object = None) -> pd.DataFrame:
    """Read a CSV input; an empty file, a header without rows or a missing column is a one-line error."""
    from ..io import read_csv_file

    def why(f: Path, exc: BaseException) -> str:
        if isinstance(exc, pd.errors.EmptyDataError):
            return f"{option} file {f} is empty; expected a header with columns {', '.join(columns)} and at least one row."
        return f"{option} file {f} cannot be read as CSV: {exc}"

    df = read_csv_file(path, error=why, dtype=dtype)
    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise SchemaError(f"{option} file {path} has no column(s) {missing}; columns are {list(df.columns)}.")
    if len(df) == 0:
        raise SchemaError(f"{option} file {path} has no rows.")
    for c in columns:  # a blank cell in a required column is refused, never read as the text 'nan'
        blank = df[c].isna().to_numpy() | (df[c].astype(str).str.strip() == "").to_numpy()
        if blank.any():
            i = int(np.flatnonzero(blank)[0])
            raise SchemaError(
                f"{option} file {path}: blank cell in row {i}, column {c!r} ({int(blank.sum())} "
                f"such rows); every row needs a {c}."
            )
    return df


@iqa_app.command("list")
def list_cmd(
    reference: str = typer.Option(None, "--reference", help="'full' or 'no'."),
    json_out: bool = typer.Option(False, "--json", help="Print as JSON."),
) -> None:
    """List the registered IQA metrics: name, reference (full or no), which way is better, what it measures.

    Example:

    \b
        cxreval iqa list --reference full
        cxreval iqa list --json
    """
    from ..iqa import get_metric, list_metrics

    if reference not in (None, "full", "no"):
        raise InvalidParameterError(f"--reference must be 'full' or 'no'. Got {reference!r}.")
    specs = [get_metric(n).to_dict() for n in list_metrics(reference=reference)]  # type: ignore[arg-type]
    if json_out:
        echo_json(specs)
        return
    for s in specs:
        arrow = "higher" if s["higher_is_better"] else "lower"
        typer.echo(f"{s['name']:<14} {s['reference']:<5} {arrow:<6} {s['description']}")


@iqa_app.command("degrade")
def degrade_cmd(
    images: Path = typer.Option(..., "--images", help="Folder of images (PNG/TIFF/DICOM/NPY)."),
    plan: str = typer.Option(
        ...,
        "--plan",
        help=_PLAN_HELP + " Or a packaged plan's name: demo (the plan of `cxreval demo`'s IQA section).",
    ),
    sample: int = typer.Option(
        None,
        "--sample",
        help="Degrade N of the folder's images, spread over "
        "the sorted names (every (count // N)-th from the first); "
        "deterministic. Default: all.",
    ),
    max_size: int = typer.Option(
        None,
        "--max-size",
        help="Block-average each image to at most this "
        "many pixels on its longest side (factor ceil(side / max-size)) and "
        "write it to references/ as a 16-bit PNG. Default: copy as is.",
    ),
    out: Path = out_option(),
    overwrite: bool = overwrite_option(),
    json_out: bool = typer.Option(False, "--json", help="Print a JSON summary."),
) -> None:
    """Apply a degradation plan to every image; write references/, images/, manifest, pairs, run.json.

    Float images must hold values in [0, 1]; the plan is checked entry by entry before any image is written.
    The output folder is self-contained: the sources are copied to references/ (shrunk there with
    --max-size), and pairs.csv (image, reference, test, degradation) names both images by paths relative to
    it, as `cxreval iqa score` reads them.

    Example:

    \b
        cxreval iqa degrade --images pngs/ --plan plan.yaml -o degraded
        cxreval iqa degrade --images pngs/ --plan demo --sample 3 --max-size 512 -o iqa
    """
    from ..iqa import IMAGES_DIR, degrade_folder, plan_source

    if not images.is_dir():
        raise SchemaError(f"--images {images} is not a folder.")
    with open_output(out, overwrite=overwrite, inputs=[images, plan_source(plan)]) as d:
        res = degrade_folder(images, plan, d, sample=sample, max_size=max_size)
        res.save(d)
    _echo(res, json_out, f"wrote {len(res.manifest)} degraded images to {Path(out) / IMAGES_DIR}")


@iqa_app.command("score")
def score_cmd(
    pairs: Path = typer.Option(
        ...,
        "--pairs",
        help="CSV with columns reference,test (image paths); "
        "other columns (image, degradation) are carried onto the scores.",
    ),
    metrics: str = typer.Option("all", "--metrics", help="'all', 'full', 'no' or comma-separated names."),
    niqe_model: Path = typer.Option(
        None,
        "--niqe-model",
        help="NIQE's pristine model: a .mat with "
        "mu_prisparam and cov_prisparam (the authors' modelparameters.mat) or "
        "an .npz with mu (36) and cov (36x36); read and checked before "
        "scoring. With it 'all' and 'no' include niqe; without it (default) "
        "niqe is skipped, as no model is bundled.",
    ),
    out: Path = out_option(),
    executor: str = executor_option(),
    overwrite: bool = overwrite_option(),
    json_out: bool = typer.Option(False, "--json", help="Print a JSON summary."),
) -> None:
    """Score (reference, test) pairs with the chosen metrics -> scores.csv (reference, test, metric, value).

    Each pair is compared in the reference's data range: a test image of another bit depth is rescaled
    (float64, no rounding). Relative paths are relative to the pairs file. The pairs file's other columns
    (pairs.csv of `cxreval iqa degrade`: image, degradation) are carried onto each pair's score rows.
    Metrics needing downloaded weights are skipped by 'all' and reported. Every image header is checked
    before scoring starts. Pairs are scored in blocks of 32 (the progress bar advances per block) and written
    when all are scored; with --executor, tasks carry chunks of pairs (paths) and each worker opens its own
    images, so the images must be on storage every worker sees at the same path (shared storage). The scores are identical, byte for byte, on every executor.
    NIQE needs a pristine model file (--niqe-model); the file is named in run.json (with its SHA-256) and in
    summary.md.

    Example:

    \b
        cxreval iqa score --pairs degraded/pairs.csv --metrics psnr,ssim --executor process:2 -o scores
        cxreval iqa score --pairs degraded/pairs.csv --metrics niqe,piqe --niqe-model modelparameters.mat -o nr
    """
    from ..iqa import score_pairs

    check_inputs(("--pairs", pairs), ("--niqe-model", niqe_model), kind="file")
    table = _read_csv(pairs, "--pairs", ("reference", "test"), dtype=str)
    check_output_path(out, overwrite=overwrite, inputs=[p for p in (pairs, niqe_model) if p is not None])
    with progress() as prog:
        try:  # every image header is checked before the first pair is scored
            res = score_pairs(
                table, metrics, base_dir=pairs.parent, niqe_model=niqe_model, executor=executor, progress=prog
            )
        except CxrevalError as exc:  # name the file: the library names the pair
            raise type(exc)(f"{pairs}: {exc}") from exc
    meta: dict[str, object] = {"executor": executor}
    if niqe_model is not None:
        meta["niqe_model"] = str(niqe_model)
    with open_output(out, overwrite=overwrite, inputs=[pairs, niqe_model], meta=meta) as d:
        res.save(d)
    if json_out:
        echo_json(
            {
                "n_pairs": len(table),
                **res.selection.to_dict(),
                **({"niqe_model": str(niqe_model)} if niqe_model is not None else {}),
            }
        )
    else:
        typer.echo(f"wrote {len(res.table)} scores to {Path(out) / res.FILES['scores']}")


@iqa_app.command("compare")
def compare_cmd(
    scores: Path = typer.Option(
        ...,
        "--scores",
        help="scores.csv of `cxreval iqa score` on pairs "
        "that carry their degradation (pairs.csv of `cxreval iqa degrade`).",
    ),
    out: Path = out_option(),
    overwrite: bool = overwrite_option(),
    json_out: bool = typer.Option(False, "--json", help="Print the tables as JSON."),
) -> None:
    """Metric vs metric, without expert ratings: each metric's ranking of the degradations and SRCC/KRCC
    between metrics -> degradation_ranking.csv, metric_vs_metric.csv.

    Example:

    \b
        cxreval iqa compare --scores scores/scores.csv -o iqa-compare
    """
    from ..iqa import compare_metrics

    check_inputs(("--scores", scores), kind="file")
    scores_df = _read_csv(
        scores,
        "--scores",
        ("test", "metric", "value", "degradation"),
        dtype={"reference": str, "test": str, "metric": str, "degradation": str, "image": str},
    )
    check_output_path(out, overwrite=overwrite, inputs=[scores])  # a bad --out is refused before computing
    res = compare_metrics(scores_df)
    with open_output(out, overwrite=overwrite, inputs=[scores]) as d:
        res.save(d)
    _echo(res, json_out, f"wrote {', '.join(res.FILES.values())} to {out}")


@iqa_app.command("agree")
def agree_cmd(
    scores: Path = typer.Option(..., "--scores", help="scores.csv from `cxreval iqa score`."),
    ratings: Path = typer.Option(..., "--ratings", help="CSV with columns image,rater,rating."),
    out: Path = out_option(),
    scale_min: float = typer.Option(1, "--scale-min", help="Lowest rating on the scale."),
    scale_max: float = typer.Option(4, "--scale-max", help="Highest rating on the scale."),
    n_resamples: int = typer.Option(1000, "--n-resamples", help="Bootstrap resamples of reference images."),
    confidence_level: float = typer.Option(
        0.95, "--confidence-level", help="Confidence level of the percentile CIs."
    ),
    seed: int = seed_option("Bootstrap seed."),
    overwrite: bool = overwrite_option(),
    json_out: bool = typer.Option(False, "--json", help="Print the tables as JSON."),
    unscored: str = typer.Option(
        "keep",
        "--unscored",
        help="Rated images no metric scored (e.g. the "
        "undegraded references): 'keep' their ratings in each rater's mean/SD "
        "and correlate only scored images, 'exclude' them before z-scoring, or "
        "'error'.",
    ),
    ddof: int = typer.Option(
        0,
        "--ddof",
        help="Delta degrees of freedom of each rater's standard "
        "deviation in the z-scores: 0 (default; population SD, divisor n, as "
        "scipy.stats.zscore) or 1 (sample SD, divisor n - 1). The XQA paper does "
        "not name the divisor.",
    ),
    spearman: str = typer.Option(
        IQA_SPEARMAN,
        "--spearman",
        help="SRCC variant: pearson (default; "
        "Pearson correlation of average ranks, scipy.stats.spearmanr) or "
        "formula (the XQA paper's 1 - 6 sum d^2 / (n(n^2-1)) on average "
        "ranks). Equal without ties; the names rank uses.",
    ),
    kendall: str = typer.Option(
        IQA_KENDALL,
        "--kendall",
        help="KRCC variant: tau-b (default; "
        "tie-corrected, scipy.stats.kendalltau) or tau-a (the XQA paper's "
        "(C - D) / (n(n-1)/2)). Equal without ties; the names rank uses.",
    ),
) -> None:
    """z-scores and z-MOS, inter-rater SRCC/KRCC and metric-vs-z-MOS SRCC/KRCC with CIs (as Tables 3 and 4 of
    the XQA-Chest paper: its raters' and its IQA metrics' agreement with the expert z-MOS).

    The z-score divisor (--ddof) and the SRCC/KRCC variants (--spearman, --kendall) are written in
    summary.md, run.json and the --json output.

    Example:

    \b
        cxreval iqa agree --scores scores/scores.csv --ratings ratings.csv --unscored keep --seed 0 -o iqa-agree
        cxreval iqa agree --scores scores/scores.csv --ratings ratings.csv --spearman formula --kendall tau-a --ddof 1 -o iqa-agree-formulas
    """
    from ..iqa import compare_with_experts

    check_inputs(("--scores", scores), ("--ratings", ratings), kind="file")
    if not (np.isfinite(scale_min) and np.isfinite(scale_max) and scale_min < scale_max):
        raise InvalidParameterError(
            f"--scale-min and --scale-max must be finite with --scale-min < --scale-max. "
            f"Got {scale_min} and {scale_max}."
        )
    ratings_df = _read_csv(ratings, "--ratings", ("image", "rater", "rating"))
    scores_df = _read_csv(scores, "--scores", ("reference", "test", "metric", "value"))
    meta = {"seed": seed, "ddof": ddof, "spearman": spearman, "kendall": kendall, "unscored": unscored}
    check_output_path(
        out, overwrite=overwrite, inputs=[scores, ratings]
    )  # a bad --out: refused before computing
    res = compare_with_experts(
        ratings_df,
        scores_df,
        unscored=unscored,
        scale=(scale_min, scale_max),
        n_resamples=n_resamples,
        confidence_level=confidence_level,
        rng=seed,
        ddof=ddof,
        spearman=spearman,
        kendall=kendall,
    )
    with open_output(out, overwrite=overwrite, inputs=[scores, ratings], meta=meta) as d:
        res.save(d)
    _echo(res, json_out, f"wrote z-MOS, rater and metric agreement tables to {out}")


def register(app: typer.Typer) -> None:
    app.add_typer(iqa_app, name="iqa")
