"""``cxreval plan``: which studies an expert should relabel to settle which model is best, the power per budget,
and a ready reader study. Parses the options, calls :func:`cxreval.jobs.plan_relabelling_files` (or, with
``--pilot``, :func:`cxreval.jobs.plan_reader_study_files`), saves its result and echoes."""

from __future__ import annotations

from pathlib import Path

import typer

from .. import jobs
from ._common import (
    blank_state_option,
    check_folder_option,
    confidence_level_option,
    echo_json,
    findings_option,
    json_option,
    labels_option,
    model_inputs,
    named_inputs,
    open_output,
    out_option,
    out_paths,
    overwrite_option,
    predictions_option,
    progress,
    refuse_options,
    repeated,
    seed_option,
    split_list,
    state_encoding_option,
    wrote,
)

__all__: list[str] = []


def plan(
    predictions: list[Path] = predictions_option(
        "Long prediction table(s): study_id, "
        "model, finding, score, or wide files as for `cxreval classify` (at least two "
        "models; repeatable). Required for a relabelling plan.",
        default=None,
    ),
    labels: list[Path] = labels_option(
        "Long label table(s): study_id, [patient_id,] finding, source, state, or wide files as "
        "for `cxreval classify` (the source is the file name; repeatable)."
    ),
    reference: str = typer.Option(
        ..., "--reference", help="The cheap source that labels every study (e.g. a report labeller)."
    ),
    budget: int = typer.Option(
        None,
        "--budget",
        help="How many studies the expert can relabel: the length of "
        "relabel.csv and of the reader study. Required for a relabelling plan.",
    ),
    out: Path = out_option(),
    readers: str = typer.Option(
        None, "--readers", help="Further noisy sources, comma-separated (other labellers, readers)."
    ),
    anchor: str = typer.Option(
        None,
        "--anchor",
        help="A source whose labels are exact where given (an earlier "
        "relabelling round): those studies are known and not planned again.",
    ),
    anchor_studies: Path = typer.Option(
        None,
        "--anchor-studies",
        help="A table with a study_id column (e.g. an "
        "earlier plan's relabel.csv): count the --anchor labels on these studies "
        "only; with a plan's relabel.csv (its inclusion_probability), design_auc.csv gives the "
        "design-based estimate from them.",
    ),
    images: Path = typer.Option(
        None,
        "--images",
        help="Folder of the images (<study_id>.png/.jpg/.dcm... or "
        "<study_id>/<image>): the selected studies' images are copied into OUT/images/, so "
        "that `cxreval reader init --study OUT/study.yaml` opens the study.",
    ),
    findings: list[str] = findings_option(
        "Findings, comma-separated or repeated (default: every finding the "
        "reference labels and the predictions score)."
    ),
    budgets: str = typer.Option(
        None,
        "--budgets",
        help="Budgets of power.csv, comma-separated (default 0, 25%, 50%, 75% and 100% of --budget).",
    ),
    n_draws: int = typer.Option(
        200,
        "--n-draws",
        help="Monte Carlo draws of every study's truth and the model's "
        "parameters (power.csv; the same draws for every budget).",
    ),
    confidence_level: float = confidence_level_option(
        "Level of the interval that decides whether the best model is separable from the runner-up."
    ),
    uniform_floor: float = typer.Option(
        0.2,
        "--uniform-floor",
        help="The share of --budget drawn with equal probabilities (in (0, 1]; 1 = a simple random sample); "
        "the rest follows the sampling score, so every study has a probability above 0 (relabel.csv's "
        "inclusion_probability).",
    ),
    seed: int = seed_option("Seed of the sample and of the Monte Carlo draws."),
    state_encoding: str = state_encoding_option(),
    blank_state: str = blank_state_option(),
    pilot: Path = typer.Option(
        None,
        "--pilot",
        help="Plan a reader study (MRMC) instead: a pilot's ratings table "
        "(reader, modality, study_id, finding, rating; two modalities, as `cxreval reader "
        "export` writes ratings.csv). Writes sample_size.csv, minimum_cases.csv, images.csv, "
        "study.yaml (with ratings, two sessions and a washout) and summary.md.",
    ),
    effect: float = typer.Option(
        None,
        "--effect",
        help="With --pilot: the AUC difference to detect (default: the pilot's observed one).",
    ),
    power: float = typer.Option(
        0.8, "--power", help="The target power: budget.csv's smallest budget (with --pilot: of the design)."
    ),
    n_readers: str = typer.Option(
        "4,6,8,10,12", "--n-readers", help="With --pilot: reader counts to size, comma-separated."
    ),
    alpha: float = typer.Option(0.05, "--alpha", help="With --pilot: the two-sided significance level."),
    analysis: str = typer.Option(
        "RRRC",
        "--analysis",
        help="With --pilot: RRRC (readers and cases random), FRRC (readers fixed) or RRFC (cases fixed).",
    ),
    washout_days: float = typer.Option(
        28, "--washout-days", help="With --pilot: days between a reader's two readings of one case."
    ),
    latent_sources: str = typer.Option(
        None,
        "--latent-sources",
        help="With --pilot and --reference latent: the "
        "label sources the latent truth is fitted on (three or more, "
        "comma-separated).",
    ),
    overwrite: bool = overwrite_option(),
    json_out: bool = json_option("Print the written files and the power table as JSON."),
) -> None:
    """Plan an expert's relabelling (a sample drawn with known probabilities, favouring the studies whose labels
    sharpen the models' AUCs most), or a reader study.

    With --pilot: a reader study (MRMC) sized from a pilot's ratings instead; see the last example.

    Writes relabel.csv (the sample: study_id, patient_id, priority = the reading order 1 = first,
    inclusion_probability, random_part, sampling_score, expected_change, reason), power.csv (per finding and budget: p_right, the
    probability of the right decision (the best model separated from the runner-up and on top) once that many
    studies drawn by the design are labelled, p_separable, p_wrong, and the method), budget.csv (per finding: the
    smallest budget whose p_right reaches --power, searched up to every study, or why relabelling cannot separate
    the two leading models), design_auc.csv and design_comparison.csv (the design-based estimate, valid whatever
    the latent model, once --anchor-studies is an earlier plan's relabel.csv), auc.csv and comparison.csv (the
    latent model's two-phase estimate), a reader
    study (study.yaml, images.csv and, with --images, images/), summary.md and run.json: the files of
    cxreval.planning.RelabelPlanResult.

    Example:

    \b
        cxreval plan -p predictions.csv -l labels.csv --reference chexpert_labeler --budget 100 --images imgs -o plan

    Once the expert (source expert) has labelled the sample: the design-based estimate, and a second round:

    \b
        cxreval plan -p predictions.csv -l labels.csv -l expert.csv --reference chexpert_labeler --anchor expert --anchor-studies plan/relabel.csv --budget 50 -o plan2

    A reader study sized from a pilot (unaided vs aided), its cases drawn from the labelled studies:

    \b
        cxreval plan --pilot pilot/ratings.csv -l labels.csv --reference consensus -f Edema --images imgs -o study
    """
    if pilot is not None:
        _plan_reader_study(
            pilot,
            labels,
            reference=reference,
            findings=findings,
            effect=effect,
            power=power,
            n_readers=n_readers,
            alpha=alpha,
            analysis=analysis,
            washout_days=washout_days,
            latent_sources=latent_sources,
            images=images,
            seed=seed,
            state_encoding=state_encoding,
            blank_state=blank_state,
            out=out,
            overwrite=overwrite,
            mixed={
                "--predictions": predictions,
                "--budget": budget,
                "--readers": readers,
                "--anchor": anchor,
                "--anchor-studies": anchor_studies,
                "--budgets": budgets,
            },
        )
        return
    given = [k for k, v in (("--effect", effect), ("--latent-sources", latent_sources)) if v is not None]
    refuse_options(
        bool(given),
        f"{' and '.join(given)} {'belongs' if len(given) == 1 else 'belong'} to a reader-study plan: give "
        f"--pilot too, or leave {'it' if len(given) == 1 else 'them'} out of a relabelling plan.",
    )
    inputs = model_inputs(predictions, labels, ("--images", images), ("--anchor-studies", anchor_studies))
    check_folder_option("--images", images)
    with open_output(out, overwrite=overwrite, inputs=inputs, meta={"seed": seed}) as d:
        with progress() as prog:
            res = jobs.plan_relabelling_files(
                predictions or None,
                labels,
                reference=reference,
                budget=budget,
                readers=split_list(readers, option="--readers"),
                anchor=anchor,
                anchor_studies=anchor_studies,
                findings=split_list(findings, option="--findings"),
                budgets=budgets,
                n_draws=n_draws,
                confidence_level=confidence_level,
                target_power=power,
                uniform_floor=uniform_floor,
                images=images,
                state_encoding=state_encoding,
                blank_state=blank_state,
                rng=seed,
                progress=prog,
            )
        written = res.save(d)
    if json_out:
        echo_json(
            {
                "files": out_paths(written, out),
                "power": res.power.drop(columns=["method"]).to_dict(orient="records"),
            }
        )
    else:
        typer.echo(
            f"{wrote(written.values(), out)}; {res.headline()}; "
            f"reader study: cxreval reader init --study {Path(out) / res.STUDY_FILE}"
            + (
                ""
                if res.image_sources
                else " --images IMAGES (the folder of the images: <study_id>.png, ...)"
            )
        )


def _plan_reader_study(
    pilot: Path,
    labels: list[Path],
    *,
    reference: str,
    findings: list[str],
    effect: float | None,
    power: float,
    n_readers: str,
    alpha: float,
    analysis: str,
    washout_days: float,
    latent_sources: str | None,
    images: Path | None,
    seed: int,
    state_encoding: str,
    blank_state: str,
    out: Path,
    overwrite: bool,
    mixed: dict[str, object],
) -> None:
    given = [k for k, v in mixed.items() if v]
    refuse_options(
        bool(given),
        f"--pilot plans a reader study; {', '.join(given)} {'belongs' if len(given) == 1 else 'belong'} to a "
        "relabelling plan. Give one or the other.",
    )
    inputs = named_inputs(("--pilot", pilot), *repeated("--labels", labels), ("--images", images))
    check_folder_option("--images", images)
    with open_output(out, overwrite=overwrite, inputs=inputs, meta={"seed": seed}) as d:
        res = jobs.plan_reader_study_files(
            pilot,
            labels,
            reference=reference,
            findings=split_list(findings, option="--findings"),
            effect=effect,
            target_power=power,
            n_readers=n_readers,
            alpha=alpha,
            analysis=analysis,
            washout_days=washout_days,
            images=images,
            latent_sources=split_list(latent_sources, option="--latent-sources"),
            state_encoding=state_encoding,
            blank_state=blank_state,
            rng=seed,
        )
        written = res.save(d)
    design = (
        f"{res.n_readers} readers x {res.n_cases} cases"
        if res.n_readers
        else "no reader count reaches the power (see summary.md)"
    )
    typer.echo(
        f"{wrote(written.values(), out)}; design: {design}"
        + (
            ""
            if not res.study
            else f"; reader study: cxreval reader init --study {Path(out) / res.STUDY_FILE}"
            if res.image_sources
            else "; the images are not copied (no --images): see summary.md's next step"
        )
    )


def register(app: typer.Typer) -> None:
    app.command("plan")(plan)
