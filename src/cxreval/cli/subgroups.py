"""``cxreval subgroups``: predictions + references + metadata → per-subgroup metrics, gaps, verdicts, calibration."""

from __future__ import annotations

from pathlib import Path

import typer

from .. import jobs
from ._common import (
    blank_state_option,
    confidence_level_option,
    design_arguments,
    echo_json,
    finding_map_option,
    findings_option,
    json_option,
    labels_option,
    map_score_option,
    missing_scores_option,
    model_inputs,
    n_resamples_option,
    not_mentioned_option,
    open_output,
    out_option,
    overwrite_option,
    policy_option,
    predictions_option,
    references_option,
    seed_option,
    split_list,
    state_encoding_option,
    studies_option,
    unlabeled_option,
)

__all__: list[str] = []


def subgroups(
    ctx: typer.Context,
    predictions: list[Path] = predictions_option(
        "Long prediction table (study_id, model, finding, score; CSV/Parquet or a folder of parts), "
        "repeatable."
    ),
    labels: list[Path] = labels_option(
        "Long label table (study_id, patient_id, finding, source, state), repeatable."
    ),
    metadata: Path = typer.Option(
        ...,
        "--metadata",
        "-m",
        help="Metadata table (CSV/Parquet): study_id and the columns of --by (e.g. sex, age band, view).",
    ),
    by: list[str] = typer.Option(
        ...,
        "--by",
        help="Subgroup attributes: metadata columns, or 'a*b' for the intersection of two; comma-separated "
        "or repeated.",
    ),
    out: Path = out_option(),
    operating_point: str = typer.Option(
        "specificity=0.9",
        "--operating-point",
        help="threshold=T (positive where score >= T) or specificity=S (per model, finding and reference, "
        "the threshold of specificity S on all labelled studies). Default: specificity=0.9.",
    ),
    reference_group: list[str] = typer.Option(
        None,
        "--reference-group",
        help="attribute=value: measure that attribute's gaps against this group instead of the rest "
        "(repeatable).",
    ),
    references: list[str] = references_option(),
    findings: list[str] = findings_option(),
    policy: str = policy_option(),
    not_mentioned: str = not_mentioned_option(),
    unlabeled: str = unlabeled_option(),
    studies: str = studies_option(),
    finding_map: str = finding_map_option(),
    map_score: str = map_score_option(),
    missing_scores: str = missing_scores_option(),
    state_encoding: str = state_encoding_option(),
    blank_state: str = blank_state_option(),
    calibration: bool = typer.Option(
        True,
        "--calibration/--no-calibration",
        help="Calibration per subgroup (needs scores that are probabilities in [0, 1]).",
    ),
    calibration_bins: int = typer.Option(
        10, "--calibration-bins", help="Equal-width bins of the reliability diagram and ECE."
    ),
    min_cases: int = typer.Option(
        10,
        "--min-cases",
        help="The fewest positives (negatives for specificity, both for AUC) a group and its comparator need "
        "for a gap; below it the row is kept, not estimable, with the count in 'reason'.",
    ),
    n_resamples: int = n_resamples_option(),
    seed: int = seed_option("Seed of the patient bootstrap."),
    confidence_level: float = confidence_level_option(),
    overwrite: bool = overwrite_option(),
    json_out: bool = json_option("Print the verdicts as JSON."),
) -> None:
    """Per-subgroup AUC, sensitivity, specificity and FNR, gaps with patient-bootstrap CIs and Holm, under every reference; calibration.

    Per model x finding x reference x subgroup: AUC, sensitivity, specificity, FNR and selection rate at an
    operating point, the gap to the rest (or --reference-group) with patient-bootstrap CIs and Holm-adjusted
    p-values across the groups; the verdict where the gap changes sign or significance with the reference;
    calibration (reliability bins, ECE and its debiased form, Brier and its decomposition, intercept, slope).

    Writes subgroups.csv, verdicts.csv, calibration.csv, reliability.csv (+ Parquet), summary.md and run.json.
    A group too small to estimate a metric is a row with estimable=False and its reason.

    Example:

    \b
        cxreval data export chestxray14_metadata -o nih-meta
        cxreval subgroups -p preds.csv -l labels.csv -m nih-meta/metadata.csv --by sex,age_band,view -o sub-out
        cxreval subgroups -p preds.csv -l labels.csv -m metadata.csv --by 'sex*view' --reference-group sex=M \\
            --operating-point threshold=0.5 -o sub-out
    """
    inputs = model_inputs(predictions, labels, ("--metadata", metadata))
    with open_output(out, overwrite=overwrite, inputs=inputs, meta={"seed": seed}) as d:
        res = jobs.evaluate_subgroups_files(
            predictions,
            labels,
            metadata,
            by=split_list(by, option="--by") or [],
            operating_point=operating_point,
            reference_group=reference_group or None,
            **design_arguments(ctx.params),
            calibration=calibration,
            calibration_bins=calibration_bins,
            min_cases=min_cases,
        )
        paths = res.save(d)
    if json_out:
        echo_json({"verdicts": res.verdicts.to_dict(orient="records"), "seed": seed})
    else:
        typer.echo(res.design())
        flagged = int(res.table["significant"].sum())
        typer.echo(
            f"{flagged} significant gaps of {len(res.table)} rows -> {Path(out) / paths['subgroups'].name}"
        )


def register(app: typer.Typer) -> None:
    app.command("subgroups")(subgroups)
