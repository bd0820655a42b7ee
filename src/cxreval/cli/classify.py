"""``cxreval classify``: predictions + references → per-finding AUC with patient-bootstrap CIs."""

from __future__ import annotations

from pathlib import Path

import typer

from ..classification.comparison import compare_best_models
from ..io import write_summary
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
    split_list,
    state_encoding_option,
    studies_option,
)

__all__ = ["register"]


def classify(
    predictions: list[Path] = typer.Option(..., "--predictions", "-p", help="Long prediction table (CSV/Parquet: "
                                           "study_id, model, finding, score), a folder of such files read as one "
                                           "table (e.g. Parquet parts), or a folder of wide <model>.csv/.parquet "
                                           "files (repeatable)."),
    labels: list[Path] = typer.Option(..., "--labels", "-l", help="Long label table: study_id, patient_id, finding, "
                                      "source, state (CSV/Parquet, or a folder of such files read as one table; "
                                      "repeatable). A p_positive column (e.g. fuse's fused_labels.csv) makes each "
                                      "source with values in it a soft reference: the expected AUC over label "
                                      "draws, not an estimate of the AUC against the truth."),
    out: Path = out_option(),
    references: list[str] = typer.Option(None, "--references", "-r", help="Label sources to evaluate against, "
                                         "comma-separated or repeated (default all)."),
    findings: list[str] = findings_option("Findings, comma-separated or repeated (default: all predicted and "
                                          "labelled)."),
    model_groups: Path = typer.Option(None, "--model-groups", help="CSV with columns model, group."),
    policy: str = typer.Option("exclude", "--policy", help="Uncertain labels: exclude, zeros or ones."),
    not_mentioned: str = typer.Option("negative", "--not-mentioned", help="not_mentioned labels: negative or exclude."),
    unlabeled: str = typer.Option("error", "--unlabeled", help="Prediction studies absent from the labels: error or drop."),
    n_resamples: int = typer.Option(1000, "--n-resamples", help="Bootstrap replicates (0: point estimates only)."),
    seed: int = seed_option("Seed of the resampling plan."),
    confidence_level: float = typer.Option(0.95, "--confidence-level", help="Confidence level of the percentile CIs."),
    executor: str = executor_option(),
    state_encoding: str = state_encoding_option(),
    blank_state: str = blank_state_option(),
    studies: str = studies_option(),
    finding_map: str = finding_map_option(),
    map_score: str = map_score_option(),
    missing_scores: str = missing_scores_option(),
    overwrite: bool = overwrite_option(),
    json_out: bool = typer.Option(False, "--json", help="Print the AUC table as JSON."),
    latent_truth: bool = typer.Option(False, "--latent-truth", help="Estimate each model's AUC against the latent "
                                      "truth of the --readers (a latent-class model of the readers and the model's "
                                      "score, refitted in every bootstrap replicate; reference 'latent' in auc.csv), "
                                      "instead of against each reference; per finding on every study with a label "
                                      "from at least one reader (--studies does not apply). Also writes "
                                      "reader_accuracy.csv and the diagnostics of the model's assumption."),
    readers: list[str] = typer.Option(None, "--readers", help="With --latent-truth: the label sources treated as "
                                      "readers, comma-separated or repeated (at least three per finding, unless "
                                      "--reader-accuracy or --anchor is given)."),
    reader_accuracy: Path = typer.Option(None, "--reader-accuracy", help="With --latent-truth: known sensitivity "
                                         "and specificity per finding and reader (a reader_accuracy.csv written by "
                                         "fuse or classify --latent-truth: finding, source, sensitivity, "
                                         "specificity), held fixed."),
    anchor: str = typer.Option(None, "--anchor", help="With --latent-truth: a label source treated as exact for "
                               "the studies it labels (e.g. an expert's relabelled subset)."),
) -> None:
    """Per-finding ROC-AUC of every model against every reference, with patient-level bootstrap CIs.

    Writes auc.csv/.parquet (model, group, finding, reference, auc, ci_low, ci_high, n_pos, n_neg, n_dropped;
    finding 'macro' = macro average, 'micro' = one AUC of all (study, finding) pairs pooled, model 'Mean' = mean over
    models), counts.csv, dropped.csv, summary.md and run.json.

    Example:

    \b
        cxreval classify -p preds.csv -l labels.csv -f Effusion,Edema --seed 0 -o auc-out
        cxreval classify -p preds.parquet -l labels.parquet --executor dask:local:2 -o auc-out
        cxreval classify -p preds.csv -l labels.csv --latent-truth --readers bc4,bc6,bc8,chexpert_labeler -o latent-out

    The work is split into blocks (model x finding, model x micro average), each with every reference and
    every replicate; off-process executors memory-map the arrays from the output's temporary folder (for a
    Dask cluster on several machines, put -o on storage every worker sees).
    """
    check_inputs(*[("--predictions", p) for p in predictions], *[("--labels", p) for p in labels],
                 ("--model-groups", model_groups), ("--reader-accuracy", reader_accuracy))
    if latent_truth or readers or reader_accuracy or anchor:
        _latent(predictions, labels, out, latent_truth=latent_truth, readers=readers, reader_accuracy=reader_accuracy,
                anchor=anchor, references=references, findings=findings, model_groups=model_groups, policy=policy,
                not_mentioned=not_mentioned, unlabeled=unlabeled, n_resamples=n_resamples, seed=seed,
                confidence_level=confidence_level, state_encoding=state_encoding, blank_state=blank_state,
                finding_map=finding_map, overwrite=overwrite, json_out=json_out)
        return
    fmap, design = design_options(studies, finding_map, map_score, missing_scores)
    with cli_executor(executor) as ex, open_output(out, overwrite=overwrite, inputs=[*predictions, *labels,
                                                                                   model_groups],
                                                   meta={"seed": seed, "design": design}) as d:
        with progress() as prog:
            res = auc_from_files(prog, ex, d, predictions=predictions, labels=labels, references=references,
                                 findings=findings, seed=seed, model_groups=model_groups,
                                 state_encoding=state_encoding, blank_state=blank_state, policy=policy,
                                 not_mentioned=not_mentioned, unlabeled=unlabeled, n_resamples=n_resamples,
                                 confidence_level=confidence_level, studies=studies, finding_map=fmap,
                                 missing_scores=missing_scores)
        paths = res.save(d)
        sep = compare_best_models(res)
        sep.save(d)  # auc_comparison.csv: is the best model separable from the next?
        write_summary(d, res.summary("cxreval classify") + "\n\n" + sep.verdicts())
    if json_out:
        echo_json({"auc": res.table.to_dict(orient="records"), "n_resamples": res.n_resamples, "seed": seed})
    else:
        typer.echo(res.design())
        typer.echo(f"AUC of {len(res.models)} models x {len(res.findings)} findings x {len(res.references)} "
                   f"references -> {Path(out) / paths['auc'].name}")



def _latent(predictions: list[Path], labels: list[Path], out: Path, *, latent_truth: bool, readers: list[str] | None,
            reader_accuracy: Path | None, anchor: str | None, references: list[str] | None, findings: list[str] | None,
            model_groups: Path | None, policy: str, not_mentioned: str, unlabeled: str, n_resamples: int, seed: int,
            confidence_level: float, state_encoding: str | None, blank_state: str | None, finding_map: str | None,
            overwrite: bool, json_out: bool) -> None:
    """``classify --latent-truth``: :func:`cxreval.latent.evaluate_latent_auc_files`, saved."""
    from ..classification import read_model_groups
    from ..exceptions import InvalidParameterError
    from ..latent import evaluate_latent_auc_files

    if not latent_truth:
        raise InvalidParameterError("--readers, --reader-accuracy and --anchor apply only with --latent-truth.")
    reader_list = split_list(readers, option="--readers")
    if not reader_list:
        raise InvalidParameterError("--latent-truth needs --readers: the label sources treated as readers "
                                    "(e.g. --readers bc4,bc6,bc8).")
    if references or finding_map:
        raise InvalidParameterError("--references and --finding-map do not apply with --latent-truth (the "
                                    "reference is the latent truth of --readers).")
    groups = read_model_groups(model_groups) if model_groups is not None else None
    with open_output(out, overwrite=overwrite, inputs=[*predictions, *labels, model_groups, reader_accuracy],
                     meta={"seed": seed}) as d:
        with progress() as prog:
            res = evaluate_latent_auc_files(predictions, labels, readers=reader_list, anchor=anchor,
                                            reader_accuracy=reader_accuracy,
                                            findings=split_list(findings, option="--findings") or None,
                                            policy=policy, not_mentioned=not_mentioned, model_groups=groups,
                                            unlabeled=unlabeled, state_encoding=state_encoding,
                                            blank_state=blank_state, n_resamples=n_resamples,
                                            confidence_level=confidence_level, rng=seed, progress=prog)
        paths = res.save(d)
        write_summary(d, res.summary("cxreval classify --latent-truth"))
    if json_out:
        echo_json({"auc": res.table.to_dict(orient="records"), "n_resamples": res.n_resamples, "seed": seed})
    else:
        typer.echo(res.design())
        typer.echo(f"AUC of {len(res.models)} models x {len(res.findings)} findings against the latent truth -> "
                   f"{Path(out) / paths['auc'].name}")


def register(app: typer.Typer) -> None:
    app.command("classify")(classify)
