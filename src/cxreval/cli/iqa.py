"""``cxreval iqa``: degrade images, score pairs with the registered metrics, compare metrics with experts."""

from __future__ import annotations

from pathlib import Path

import typer

from ..iqa._expert import IQA_KENDALL, IQA_SPEARMAN
from ._common import (
    confidence_level_option,
    echo_json,
    echo_result,
    executor_option,
    json_option,
    n_resamples_option,
    open_output,
    out_option,
    overwrite_option,
    progress,
    save_output,
    seed_option,
)
from .main import command_group

__all__: list[str] = []

iqa_app = command_group("Image quality: degradations, metrics, metric-vs-expert analysis.")

_PLAN_HELP = (
    "Degradation plan, YAML: 'seed: 0', 'output_dtype: same|uint8|uint16|float32' and a "
    "'degradations:' list of {name, transform, params}, e.g. '- {transform: gaussian_blur, params: "
    "{sigma: [1, 2]}}' (a list expands to one entry each). Transforms: window (level, width), "
    "contrast_stretch (low, high), gamma (gamma), unsharp_mask (sigma, amount), gaussian_blur (sigma), "
    "gaussian_noise (sigma), poisson_noise (peak), resample (factor, order), jpeg (quality)."
)


@iqa_app.command("list")
def list_cmd(
    reference: str = typer.Option(None, "--reference", help="'full' or 'no'."),
    json_out: bool = json_option("Print as JSON."),
) -> None:
    """List the registered IQA metrics: name, reference (full or no), which way is better, what it measures.

    Example:

    \b
        cxreval iqa list --reference full
        cxreval iqa list --json
    """
    from ..jobs import list_iqa_metrics

    specs = [spec.to_dict() for spec in list_iqa_metrics(reference)]
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
    json_out: bool = json_option("Print a JSON summary."),
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
    from ..iqa._degrade import IMAGES_DIR, plan_source
    from ..jobs import degrade_image_folder

    with open_output(out, overwrite=overwrite, inputs=[images, plan_source(plan)]) as d:
        res = degrade_image_folder(images, plan, d, sample=sample, max_size=max_size)
        res.save(d)
    echo_result(
        res, json_out=json_out, text=f"wrote {len(res.manifest)} degraded images to {Path(out) / IMAGES_DIR}"
    )


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
    json_out: bool = json_option("Print a JSON summary."),
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
    from ..jobs import score_pairs_file

    with progress() as prog:
        res = score_pairs_file(
            pairs,
            metrics,
            niqe_model=niqe_model,
            executor=executor,
            progress=prog,
            out=out,
            overwrite=overwrite,
        )
    meta: dict[str, object] = {"executor": executor}
    if niqe_model is not None:
        meta["niqe_model"] = str(niqe_model)
    save_output(res, out, overwrite=overwrite, inputs=[pairs, niqe_model], meta=meta)
    if json_out:
        echo_json(
            {
                "n_pairs": res.n_pairs,
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
    json_out: bool = json_option("Print the tables as JSON."),
) -> None:
    """Metric vs metric, without expert ratings: each metric's ranking of the degradations and SRCC/KRCC
    between metrics -> degradation_ranking.csv, metric_vs_metric.csv.

    Example:

    \b
        cxreval iqa compare --scores scores/scores.csv -o iqa-compare
    """
    from ..jobs import compare_metrics_file

    res = compare_metrics_file(scores, out=out, overwrite=overwrite)
    save_output(res, out, overwrite=overwrite, inputs=[scores])
    echo_result(res, json_out=json_out, text=f"wrote {', '.join(res.FILES.values())} to {out}")


@iqa_app.command("agree")
def agree_cmd(
    scores: Path = typer.Option(..., "--scores", help="scores.csv from `cxreval iqa score`."),
    ratings: Path = typer.Option(..., "--ratings", help="CSV with columns image,rater,rating."),
    out: Path = out_option(),
    scale_min: float = typer.Option(1, "--scale-min", help="Lowest rating on the scale."),
    scale_max: float = typer.Option(4, "--scale-max", help="Highest rating on the scale."),
    n_resamples: int = n_resamples_option("Bootstrap resamples of reference images."),
    confidence_level: float = confidence_level_option("Confidence level of the percentile CIs."),
    seed: int = seed_option("Bootstrap seed."),
    overwrite: bool = overwrite_option(),
    json_out: bool = json_option("Print the tables as JSON."),
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
    from ..jobs import compare_with_experts_files

    res = compare_with_experts_files(
        scores,
        ratings,
        scale_min=scale_min,
        scale_max=scale_max,
        unscored=unscored,
        n_resamples=n_resamples,
        confidence_level=confidence_level,
        rng=seed,
        ddof=ddof,
        spearman=spearman,
        kendall=kendall,
        out=out,
        overwrite=overwrite,
    )
    meta = {"seed": seed, "ddof": ddof, "spearman": spearman, "kendall": kendall, "unscored": unscored}
    save_output(res, out, overwrite=overwrite, inputs=[scores, ratings], meta=meta)
    echo_result(res, json_out=json_out, text=f"wrote z-MOS, rater and metric agreement tables to {out}")


def register(app: typer.Typer) -> None:
    app.add_typer(iqa_app, name="iqa")
