"""``cxreval mrmc``: a reader study analysed as the field does (Obuchowski–Rockette, DBM, readers' operating
points on a model's ROC curve), under every reference."""

from __future__ import annotations

from pathlib import Path

import typer

from .. import jobs
from ..io._write import SUMMARY_FILE
from ._common import (
    blank_state_option,
    findings_option,
    labels_option,
    n_resamples_option,
    named_inputs,
    open_output,
    out_option,
    overwrite_option,
    predictions_option,
    repeated,
    seed_option,
    split_list,
    state_encoding_option,
    studies_option,
    wrote,
)

__all__: list[str] = []


def mrmc(
    labels: list[Path] = labels_option(
        "Long label table (CSV or Parquet) holding the references (repeatable)."
    ),
    references: str = typer.Option(
        ...,
        "--references",
        "-r",
        help="References, comma-separated: sources of the "
        "labels, or 'latent' (the latent truth of --latent-sources).",
    ),
    ratings: Path = typer.Option(
        None,
        "--ratings",
        help="Ratings table (CSV or Parquet): reader, modality, "
        "study_id, finding, rating [, patient_id] — what `cxreval reader export` writes "
        "as ratings.csv.",
    ),
    readers: str = typer.Option(
        None,
        "--readers",
        help="Label sources read as binary readers (1 positive, 0 "
        "negative), comma-separated: a study whose readers gave labels, not ratings.",
    ),
    predictions: list[Path] = predictions_option(
        "Long prediction table (study_id, model, finding, score): the models compared with the readers.",
        default=None,
    ),
    findings: list[str] = findings_option(
        "Findings, comma-separated or repeated (default: every finding rated)."
    ),
    studies: str = studies_option(
        "common (the default here, as classify and rank: every "
        "reference on the studies all of them label) or each (every reference on its own "
        "studies)."
    ),
    covariance: str = typer.Option(
        "jackknife",
        "--covariance",
        help="OR covariance estimator: jackknife (OR-RRRC then equals DBM-RRRC), delong or unbiased.",
    ),
    reader_weights: str = typer.Option(
        "equal",
        "--reader-weights",
        help="How the OR analysis averages readers "
        "who read different numbers of cases (split-plot designs): equal (the "
        "default; MRMCaov, OR-DBM MRMC, RJafroc) or case_pairs (each reader by the "
        "diseased x non-diseased pairs it read, iMRMC's average).",
    ),
    margin: float = typer.Option(
        0.05, "--margin", help="Non-inferiority margin on the AUC and on sensitivity at matched specificity."
    ),
    latent_sources: str = typer.Option(
        None,
        "--latent-sources",
        help="Label sources the 'latent' reference is fitted on (three or more, none a reader of the study).",
    ),
    scale: str = typer.Option(
        None,
        "--scale",
        metavar="MIN:MAX",
        help="The rating scale (1:5, 0:100): a rating outside it is refused.",
    ),
    n_resamples: int = n_resamples_option(
        "Patient-bootstrap replicates of the operating points' intervals (default 1000)."
    ),
    seed: int = seed_option(),
    state_encoding: str = state_encoding_option(),
    blank_state: str = blank_state_option(),
    out: Path = out_option(),
    overwrite: bool = overwrite_option(),
) -> None:
    """Is the model radiologist-level? Readers' AUCs, OR and DBM analyses, and the model against the readers,
    under every reference.

    Writes the tables (CSV + Parquet), summary.md (a verdict per reference) and run.json.

    Example:

    \b
        cxreval mrmc --ratings ratings.csv -l labels.parquet -r consensus -o mrmc-out
        cxreval mrmc -l chexpert/labels.parquet --readers bc4,bc6,bc8 -p chexpert_predictions/predictions.parquet -r consensus,chexpert_labeler -f Cardiomegaly,Edema -o chexpert_mrmc
    """
    inputs = named_inputs(
        *repeated("--labels", labels), ("--ratings", ratings), *repeated("--predictions", predictions)
    )
    with open_output(out, overwrite=overwrite, inputs=inputs) as d:
        res = jobs.evaluate_reader_study_files(
            labels,
            references=split_list(references, option="--references") or [],
            ratings=ratings,
            readers=split_list(readers, option="--readers"),
            predictions=predictions or None,
            findings=split_list(findings, option="--findings"),
            studies=studies,
            covariance=covariance,
            reader_weights=reader_weights,
            margin=margin,
            latent_sources=split_list(latent_sources, option="--latent-sources"),
            scale=scale,
            n_resamples=n_resamples,
            rng=seed,
            state_encoding=state_encoding,
            blank_state=blank_state,
        )
        paths = res.save(d)
    typer.echo(wrote(sorted(p.name for p in paths.values() if p.name != SUMMARY_FILE), out))


def register(app: typer.Typer) -> None:
    app.command("mrmc")(mrmc)
