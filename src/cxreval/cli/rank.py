"""``cxreval rank``: ranking stability across references, from predictions + labels or from AUC tables."""

from __future__ import annotations

from pathlib import Path

import typer

from ..agreement import parse_pairs
from ..classification import AUC_SUMMARY_FILE
from ..exceptions import SchemaError
from ..io import write_summary
from ..ranking import check_ranking_options, compare_rankings
from ..ranking.correlation import DEFAULT_KENDALL, DEFAULT_SPEARMAN
from ..ranking.published import XQA_AUC_TABLES, rank_auc_table, read_auc_table
from ._common import (
    auc_from_files,
    blank_state_option,
    check_inputs,
    cli_executor,
    design_options,
    echo_json,
    executor_option,
    finding_map_option,
    findings_option,
    map_score_option,
    missing_scores_option,
    open_output,
    out_option,
    overwrite_option,
    progress,
    seed_option,
    state_encoding_option,
    studies_option,
)

__all__ = ["register"]


def rank(
    out: Path = out_option(),
    auc_table: str = typer.Option(None, "--auc-table", help="AUC table (model, group, finding, reference, auc[, dataset]) "
                                  "as CSV/Parquet, or 'xqa' for the packaged XQA Tables 16-25. Point estimates only."),
    predictions: list[Path] = typer.Option(None, "--predictions", "-p", help="As for `cxreval classify`: a long "
                                           "table, a folder of its parts, or a folder of wide <model> files "
                                           "(repeatable)."),
    labels: list[Path] = typer.Option(None, "--labels", "-l", help="As for `cxreval classify`: a long label table "
                                      "or a folder of its parts (repeatable)."),
    references: list[str] = typer.Option(None, "--references", "-r", help="Label sources to rank under, "
                                         "comma-separated or repeated (default all)."),
    findings: list[str] = findings_option(),
    model_groups: Path = typer.Option(None, "--model-groups", help="CSV with columns model, group."),
    policy: str = typer.Option("exclude", "--policy", help="Uncertain labels: exclude, zeros or ones."),
    not_mentioned: str = typer.Option("negative", "--not-mentioned", help="not_mentioned labels: negative or exclude."),
    unlabeled: str = typer.Option("error", "--unlabeled", help="Prediction studies absent from the labels: error or "
                                  "drop."),
    n_resamples: int = typer.Option(1000, "--n-resamples", help="Bootstrap replicates (predictions mode)."),
    seed: int = seed_option("Seed of the resampling plan."),
    confidence_level: float = typer.Option(0.95, "--confidence-level", help="Confidence level of the percentile CIs."),
    pairs: str = typer.Option(None, "--pairs", help="Reference pairs to correlate, A:B[,C:D...] (default: every "
                              "pair of references)."),
    groups: str = typer.Option("all", "--groups", help="all, overall or per-group."),
    min_models: int = typer.Option(3, "--min-models", help="Skip model groups with fewer models."),
    dataset: str = typer.Option("", "--dataset", help="Dataset name written in the tables (predictions mode)."),
    kendall: str = typer.Option(DEFAULT_KENDALL, "--kendall", help="KRCC variant: tau-a (default, the XQA paper's "
                                "(C - D) / (n(n-1)/2)) or tau-b (tie-corrected, scipy.stats.kendalltau)."),
    spearman: str = typer.Option(DEFAULT_SPEARMAN, "--spearman", help="SRCC variant: formula (default, the XQA "
                                 "paper's 1 - 6 sum d^2 / (n(n^2-1)) on average ranks) or pearson (Pearson "
                                 "correlation of average ranks, scipy.stats.spearmanr). Equal without ties."),
    state_encoding: str = state_encoding_option(),
    blank_state: str = blank_state_option(),
    studies: str = studies_option(),
    finding_map: str = finding_map_option(),
    map_score: str = map_score_option(),
    missing_scores: str = missing_scores_option(),
    executor: str = executor_option(),
    overwrite: bool = overwrite_option(),
    json_out: bool = typer.Option(False, "--json", help="Print the rank correlations as JSON."),
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
    check_ranking_options(kendall=kendall, spearman=spearman, min_models=min_models)  # before any AUC
    if auc_table is not None:
        if predictions or labels:
            raise SchemaError("Give either --auc-table or --predictions/--labels, not both.")
        if auc_table.lower() != XQA_AUC_TABLES:
            check_inputs(("--auc-table", Path(auc_table)))
    elif not predictions or not labels:
        raise SchemaError("cxreval rank needs --auc-table, or both --predictions and --labels.")
    pair_list = parse_pairs(pairs) if pairs else None
    fmap, design = design_options(studies, finding_map, map_score, missing_scores)
    if auc_table is not None and (finding_map is not None or missing_scores != "refuse"):
        raise SchemaError("--finding-map and --missing-scores apply to --predictions/--labels, not to --auc-table.")
    if auc_table is not None and references:
        raise SchemaError("--references applies to --predictions/--labels; --auc-table ranks every reference of the "
                          "table (--pairs A:B chooses the pairs compared).")
    check_inputs(*[("--predictions", p) for p in predictions or []], *[("--labels", p) for p in labels or []],
                 ("--model-groups", model_groups))
    inputs = [*(predictions or []), *(labels or []), model_groups]
    if auc_table is not None and auc_table.lower() != XQA_AUC_TABLES:
        inputs.append(Path(auc_table))
    with cli_executor(executor) as ex, open_output(out, overwrite=overwrite, inputs=inputs,
                                                                  meta={"seed": seed, "design": design}) as d:
        if auc_table is not None:
            auc = read_auc_table(auc_table)
            res = rank_auc_table(auc, pairs=pair_list, groups=groups, min_models=min_models, kendall=kendall,
                                 spearman=spearman)
        else:
            with progress() as prog:
                auc = auc_from_files(prog, ex, d, predictions=predictions, labels=labels, references=references,
                                     findings=findings, seed=seed, model_groups=model_groups,
                                     state_encoding=state_encoding, blank_state=blank_state, policy=policy,
                                     not_mentioned=not_mentioned, unlabeled=unlabeled, n_resamples=n_resamples,
                                     confidence_level=confidence_level, studies=studies, finding_map=fmap,
                                     missing_scores=missing_scores)
                task = prog.add("rank correlations over the replicates")
                res = compare_rankings(auc, pairs=pair_list, groups=groups, min_models=min_models, dataset=dataset,
                                        kendall=kendall, spearman=spearman)
                prog.done(task)
            from ..classification.comparison import compare_best_models

            sep = compare_best_models(auc)
            (d / AUC_SUMMARY_FILE).write_text(auc.summary("cxreval classify") + "\n\n" + sep.verdicts())
            sep.save(d)  # auc_comparison.csv, as classify writes it
        auc.save(d)
        res.save(d)
        write_summary(d, res.summary("cxreval rank") + ("" if auc_table is not None else "\n\n" + sep.verdicts()))
    if json_out:
        echo_json({"rank_correlation": res.correlations.to_dict(orient="records"), "n_resamples": res.n_resamples,
                   "kendall": res.kendall, "spearman": res.spearman})
    else:
        if auc_table is None:
            typer.echo(auc.design())
        typer.echo(f"{len(res.correlations)} rank correlations, {len(res.top_changes)} top-rank rows -> {out}")



def register(app: typer.Typer) -> None:
    app.command("rank")(rank)
