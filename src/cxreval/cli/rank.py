"""``cxreval rank``: ranking stability across references, from predictions + labels or from AUC tables."""

from __future__ import annotations

from pathlib import Path

import typer

from .. import jobs
from ._common import (
    auc_table_input,
    blank_state_option,
    confidence_level_option,
    echo_json,
    evaluation_arguments,
    executor_option,
    finding_map_option,
    findings_option,
    json_option,
    kendall_option,
    labels_option,
    map_score_option,
    missing_scores_option,
    model_groups_option,
    model_inputs,
    n_resamples_option,
    not_mentioned_option,
    open_output,
    out_option,
    overwrite_option,
    policy_option,
    predictions_option,
    progress,
    references_option,
    refuse_options,
    seed_option,
    spearman_option,
    state_encoding_option,
    studies_option,
    unlabeled_option,
)

__all__: list[str] = []


def rank(
    ctx: typer.Context,
    out: Path = out_option(),
    auc_table: str = typer.Option(
        None,
        "--auc-table",
        help="AUC table (model, group, finding, reference, auc[, dataset]) "
        "as CSV/Parquet, or 'xqa' for the packaged XQA Tables 16-25. Point estimates only.",
    ),
    predictions: list[Path] = predictions_option(
        "As for `cxreval classify`: a long "
        "table, a folder of its parts, a wide file (the model is the file name) or a "
        "folder of wide <model> files (repeatable).",
        default=None,
    ),
    labels: list[Path] = labels_option(
        "As for `cxreval classify`: a long label table, a folder of its parts, or a wide file "
        "(one column per finding; the source is the file name; repeatable).",
        default=None,
    ),
    references: list[str] = references_option(
        "Label sources to rank under, comma-separated or repeated (default all)."
    ),
    findings: list[str] = findings_option(),
    model_groups: Path = model_groups_option(),
    policy: str = policy_option(),
    not_mentioned: str = not_mentioned_option(),
    unlabeled: str = unlabeled_option(),
    n_resamples: int = n_resamples_option("Bootstrap replicates (predictions mode)."),
    seed: int = seed_option("Seed of the resampling plan."),
    confidence_level: float = confidence_level_option(),
    pairs: str = typer.Option(
        None,
        "--pairs",
        help="Reference pairs to correlate, A:B[,C:D...] (default: every pair of references).",
    ),
    groups: str = typer.Option("all", "--groups", help="all, overall or per-group."),
    min_models: int = typer.Option(3, "--min-models", help="Skip model groups with fewer models."),
    dataset: str = typer.Option(
        "", "--dataset", help="Dataset name written in the tables (predictions mode)."
    ),
    kendall: str = kendall_option(),
    spearman: str = spearman_option(),
    state_encoding: str = state_encoding_option(),
    blank_state: str = blank_state_option(),
    studies: str = studies_option(),
    finding_map: str = finding_map_option(),
    map_score: str = map_score_option(),
    missing_scores: str = missing_scores_option(),
    executor: str = executor_option(),
    overwrite: bool = overwrite_option(),
    json_out: bool = json_option("Print the rank correlations as JSON."),
) -> None:
    """SRCC/KRCC between the model rankings each reference induces, per finding, macro average and model group.

    Writes rank_correlation.csv, rankings.csv (bump-chart table), top_changes.csv, auc.csv (the AUCs ranked; from
    predictions also counts.csv, dropped.csv and auc_summary.md) plus summary.md and run.json. With --auc-table
    the correlations are point values beside the paper's bootstrap mean +- sd. The SRCC/KRCC variants (default: the XQA paper's formulas) are in column `variant` and
    in summary.md.

    Example:

    \b
        cxreval rank --auc-table xqa --kendall tau-b --spearman pearson -o rank-xqa
        cxreval rank -p preds.csv -l labels.csv --n-resamples 1000 --seed 0 -o rank-out
        cxreval rank -p preds.csv -l labels.csv --executor process:2 -o rank-out
        cxreval rank -p preds.csv -l labels.csv --pairs CR:Rep1,CR:Rep2 -o rank-out
    """
    table = auc_table_input(auc_table)
    refuse_options(
        auc_table is not None and bool(predictions or labels),
        "Give either --auc-table or --predictions/--labels, not both.",
    )
    refuse_options(
        auc_table is None and not (predictions and labels),
        "cxreval rank needs --auc-table, or both --predictions and --labels.",
    )
    refuse_options(
        auc_table is not None and (finding_map is not None or missing_scores != "refuse"),
        "--finding-map and --missing-scores apply to --predictions/--labels, not to --auc-table.",
    )
    refuse_options(
        auc_table is not None and bool(references),
        "--references applies to --predictions/--labels; --auc-table ranks every reference of the table "
        "(--pairs A:B chooses the pairs compared).",
    )
    refuse_options(auc_table is not None and map_score is not None, "--map-score needs --finding-map.")
    inputs = [*model_inputs(predictions, labels, ("--model-groups", model_groups)), table]
    meta: dict[str, object] = {"seed": seed}
    with open_output(out, overwrite=overwrite, inputs=inputs, meta=meta) as d:
        if auc_table is not None:
            res = jobs.compare_auc_table_file(
                auc_table,
                pairs=pairs,
                groups=groups,
                min_models=min_models,
                kendall=kendall,
                spearman=spearman,
            )
        else:
            with progress() as prog:
                res = jobs.compare_references_files(
                    predictions,
                    labels,
                    pairs=pairs,
                    groups=groups,
                    min_models=min_models,
                    dataset=dataset,
                    kendall=kendall,
                    spearman=spearman,
                    **evaluation_arguments(ctx.params, progress=prog, spill_dir=d),
                )
        meta["design"] = res.design_record()
        res.save(d)
    if json_out:
        echo_json(
            {
                "rank_correlation": res.ranking.correlations.to_dict(orient="records"),
                "n_resamples": res.ranking.n_resamples,
                "kendall": res.ranking.kendall,
                "spearman": res.ranking.spearman,
            }
        )
    else:
        if auc_table is None:
            typer.echo(res.design())
        typer.echo(
            f"{len(res.ranking.correlations)} rank correlations, {len(res.ranking.top_changes)} top-rank rows "
            f"-> {out}"
        )


def register(app: typer.Typer) -> None:
    app.command("rank")(rank)
