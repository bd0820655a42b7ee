"""``cxreval classify``: predictions + references → per-finding AUC with patient-bootstrap CIs."""

from __future__ import annotations

from pathlib import Path

import typer

from .. import jobs
from ._common import (
    blank_state_option,
    confidence_level_option,
    echo_json,
    evaluation_arguments,
    executor_option,
    finding_map_option,
    findings_option,
    json_option,
    labels_option,
    map_score_option,
    missing_scores_option,
    model_groups_option,
    model_inputs,
    n_resamples_option,
    not_mentioned_option,
    open_output,
    operating_point_inputs,
    out_option,
    overwrite_option,
    policy_option,
    predictions_option,
    progress,
    references_option,
    seed_option,
    split_list,
    state_encoding_option,
    studies_option,
    unlabeled_option,
)

__all__: list[str] = []


def classify(
    ctx: typer.Context,
    predictions: list[Path] = predictions_option(
        "Long prediction table (CSV/Parquet: "
        "study_id, model, finding, score), a folder of such files read as one "
        "table (e.g. Parquet parts), a wide file (Study or study_id, then one score "
        "column per finding, as CheXpert ships them: the model is the file name), or a "
        "folder of wide <model>.csv/.parquet files (repeatable)."
    ),
    labels: list[Path] = labels_option(
        "Long label table: study_id, patient_id, finding, "
        "source, state (CSV/Parquet, or a folder of such files read as one table; "
        "repeatable), or a wide file as CheXpert ships labels (Study or study_id, then one "
        "column per finding coded 1 / 0 / -1 / blank: the source is the file name; the "
        "patient from a patient_id column or the study id). A p_positive column (e.g. fuse's fused_labels.csv) makes each "
        "source with values in it a soft reference: the expected AUC over label "
        "draws, not an estimate of the AUC against the truth."
    ),
    out: Path = out_option(),
    references: list[str] = references_option(),
    findings: list[str] = findings_option(
        "Findings, comma-separated or repeated (default: all predicted and labelled)."
    ),
    model_groups: Path = model_groups_option(),
    policy: str = policy_option(),
    not_mentioned: str = not_mentioned_option(),
    unlabeled: str = unlabeled_option(),
    n_resamples: int = n_resamples_option(),
    seed: int = seed_option("Seed of the resampling plan."),
    confidence_level: float = confidence_level_option(),
    executor: str = executor_option(),
    state_encoding: str = state_encoding_option(),
    blank_state: str = blank_state_option(),
    studies: str = studies_option(),
    finding_map: str = finding_map_option(),
    map_score: str = map_score_option(),
    missing_scores: str = missing_scores_option(),
    overwrite: bool = overwrite_option(),
    json_out: bool = json_option("Print the AUC table as JSON."),
    latent_truth: bool = typer.Option(
        False,
        "--latent-truth",
        help="Estimate each model's AUC against the latent "
        "truth of the --readers: one latent-class model per finding of the readers and every model's "
        "score (one truth for all models; the score model averaged by BIC weights), refitted in every "
        "bootstrap replicate; reference 'latent' in auc.csv, with the score model, the declared "
        "dependence and the checks' flags beside each AUC; instead of against each reference; per finding "
        "on every study with a label from at least one reader (--studies does not apply). Assumes the "
        "readers' errors independent given the truth, except --dependent groups. Also writes "
        "reader_accuracy.csv, the diagnostics, latent_sensitivity.csv (leave one reader out, each score "
        "model, an assumed reader error correlation 0 to 0.5) and latent_comparators.csv (hard and soft "
        "Dawid-Skene, majority vote, the best single reader). Cost: one EM fit per finding and per "
        "replicate; on the CheXpert test set (10 models x 5 findings x 500 studies, 4 readers) see "
        "bench/suites/latent.py, part chexpert-speed (--executor process:N runs the findings in N "
        "processes); progress bars on a terminal, log lines with -v otherwise.",
    ),
    readers: list[str] = typer.Option(
        None,
        "--readers",
        help="With --latent-truth: the label sources treated as "
        "readers, comma-separated or repeated (at least three per finding, unless "
        "--reader-accuracy, --reader-prior or --anchor is given).",
    ),
    reader_accuracy: Path = typer.Option(
        None,
        "--reader-accuracy",
        help="With --latent-truth: known sensitivity "
        "and specificity per finding and reader (a reader_accuracy.csv written by "
        "fuse or classify --latent-truth: finding, source, sensitivity, "
        "specificity), held fixed.",
    ),
    reader_prior: Path = typer.Option(
        None,
        "--reader-prior",
        help="With --latent-truth: plausible ranges of readers' accuracies, an informative prior (finding, "
        "source, sensitivity_low, sensitivity_high, specificity_low, specificity_high; each range a Beta "
        "prior's mean +- 1.96 SD). Identifies two readers; latent_sensitivity.csv shows the AUCs at the "
        "ranges' ends and without the prior.",
    ),
    dependent: list[str] = typer.Option(
        None,
        "--dependent",
        help="With --latent-truth: readers that share errors (e.g. two labellers of one report), "
        "comma-separated, one group per use (repeatable): each group is modelled as one reader with a "
        "free joint label pattern; three conditionally independent readers per finding are needed (a "
        "group counts once), else the run is refused. 'flagged' (the default): per finding, group the "
        "readers of each pair the pair checks flag on a first fit, where three independent readers remain "
        "(beside declared groups: add --dependent flagged). 'none': every reader independent given the "
        "truth, whatever the checks say.",
    ),
    anchor: str = typer.Option(
        None,
        "--anchor",
        help="With --latent-truth: a label source treated as exact for "
        "the studies it labels (e.g. an expert's relabelled subset).",
    ),
    operating_points: list[str] = typer.Option(
        None,
        "--operating-point",
        help="Operating points, comma-separated or repeated (default: none): spec=S (the smallest threshold "
        "with specificity >= S), sens=S (the largest with sensitivity >= S), youden (max sensitivity + "
        "specificity - 1), threshold=T (positive where score >= T) or from=FILE (the thresholds of an "
        "operating_points.csv from another run, held fixed). Writes operating_points.csv: threshold, "
        "sensitivity, specificity, PPV, NPV with patient-bootstrap CIs on the AUCs' replicates; the "
        "threshold of spec/sens/youden is chosen again in every replicate.",
    ),
    decision_curve: str = typer.Option(
        None,
        "--decision-curve",
        help="START:STOP:STEP (e.g. 0.01:0.99:0.01; default: none): net benefit TP/n - FP/n * pt/(1-pt) per "
        "model, finding and reference at each threshold probability pt, with the treat-all and treat-none "
        "rows (decision_curve.csv); the scores must be probabilities.",
    ),
) -> None:
    """Per-finding ROC-AUC of every model against every reference, with patient-level bootstrap CIs.

    Writes auc.csv/.parquet (model, group, finding, reference, auc, ci_low, ci_high, n_pos, n_neg, n_dropped;
    finding 'macro' = macro average, 'micro' = one AUC of all (study, finding) pairs pooled, model 'Mean' = mean over
    models), counts.csv, dropped.csv, summary.md and run.json; with --operating-point, operating_points.csv; with
    --decision-curve, decision_curve.csv.

    Example:

    \b
        cxreval classify -p preds.csv -l labels.csv -f Effusion,Edema --seed 0 -o auc-out
        cxreval classify -p preds.parquet -l labels.parquet --executor dask:local:2 -o auc-out
        cxreval classify -p preds.csv -l labels.csv --latent-truth --readers bc4,bc6,bc8,chexpert_labeler -o latent-out
        cxreval classify -p preds.csv -l labels.csv --latent-truth --readers bc4,bc6,bc8,chexpert_labeler --dependent bc4,chexpert_labeler -o latent-dep
        cxreval classify -p preds.csv -l labels.csv --operating-point spec=0.9,youden --decision-curve 0.01:0.5:0.01 -o op-out
        cxreval classify -p test-preds.csv -l test-labels.csv --operating-point from=op-out/operating_points.csv -o op-test

    The work is split into blocks (model x finding, model x micro average), each with every reference and
    every replicate; off-process executors memory-map the arrays from the output's temporary folder (for a
    Dask cluster on several machines, put -o on storage every worker sees).
    """
    points = split_list(operating_points, option="--operating-point")
    inputs = model_inputs(
        predictions,
        labels,
        ("--model-groups", model_groups),
        ("--reader-accuracy", reader_accuracy),
        ("--reader-prior", reader_prior),
        *operating_point_inputs(points),
    )
    meta: dict[str, object] = {"seed": seed}
    with open_output(out, overwrite=overwrite, inputs=inputs, meta=meta) as d:
        with progress() as prog:
            res = jobs.evaluate_classifiers_files(
                predictions,
                labels,
                **evaluation_arguments(ctx.params, progress=prog, spill_dir=d),
                latent_truth=latent_truth,
                readers=split_list(readers, option="--readers"),
                anchor=anchor,
                reader_accuracy=reader_accuracy,
                reader_prior=reader_prior,
                dependent=dependent or None,
                operating_points=points,
                decision_curve=decision_curve,
            )
        if not res.latent:
            meta["design"] = res.design_record()
        paths = res.save(d)
    if json_out:
        echo_json(
            {"auc": res.table.to_dict(orient="records"), "n_resamples": res.auc.n_resamples, "seed": seed}
        )
    else:
        typer.echo(res.design())
        refs = getattr(res.auc, "references", ())
        against = "against the latent truth" if res.latent else f"x {len(refs)} references"
        typer.echo(
            f"AUC of {len(res.auc.models)} models x {len(res.auc.findings)} findings {against} -> "
            f"{Path(out) / paths['auc'].name}"
        )


def register(app: typer.Typer) -> None:
    app.command("classify")(classify)
