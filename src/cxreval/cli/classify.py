"""``cxreval classify``: predictions + references → per-finding AUC with patient-bootstrap CIs."""

from __future__ import annotations

import functools
import logging
import time
from pathlib import Path

import pandas as pd
import typer

from ..classification import AUCResult, evaluate_auc, prepare_from_files
from ..exceptions import SchemaError
from ..labels import MACRO, read_label_tables, read_prediction_tables, validate_model_groups
from ..tables import markdown_table, write_summary, write_table
from ._common import (
    ProgressExecutor,
    check_inputs,
    cli_executor,
    echo_json,
    executor_option,
    findings_option,
    open_output,
    out_option,
    overwrite_option,
    progress,
    seed_option,
    split_list,
    state_encoding_option,
)

__all__ = ["register", "load_inputs", "md_table", "run_classification"]

md_table = functools.partial(markdown_table, floatfmt="{:.3f}", nan="", missing=None)
"""The AUC tables' Markdown form: 3 decimals, NaN as an empty cell."""

log = logging.getLogger(__name__)


def load_inputs(predictions: list[Path], labels: list[Path], model_groups: Path | None, *,
                state_encoding: str | None = None
                ) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame | None, list[str]]:
    """Read prediction files/folders (long table, folder of long Parquet/CSV parts, or a folder of wide
    ``<model>.csv``/``.parquet``), label files (states read under ``state_encoding``) and groups as DataFrames.
    ``cxreval classify`` itself reads them straight into arrays (:func:`~cxreval.classification.prepare_from_files`)."""
    preds, notes = read_prediction_tables(predictions)
    labs, lnotes = read_label_tables(labels, state_encoding=state_encoding)
    return preds, labs, _read_groups(model_groups), notes + lnotes


def _read_groups(model_groups: Path | None) -> pd.DataFrame | None:
    if model_groups is None:
        return None
    gp = Path(model_groups)
    if not gp.exists():
        raise SchemaError(f"File {str(gp)!r} does not exist.")
    return validate_model_groups(pd.read_csv(gp, dtype=str), where=f"file {str(gp)!r}")


def run_classification(predictions: list[Path], labels: list[Path], *, model_groups: Path | None,
                       references: list[str] | None, findings: list[str] | None, policy: str, not_mentioned: str,
                       unlabeled: str, n_resamples: int, seed: int, confidence_level: float,
                       executor: object = None, spill_dir: Path | None = None,
                       state_encoding: str | None = None) -> tuple[AUCResult, list[str]]:
    """Read the inputs and evaluate; ``executor`` runs the blocks (off-process executors memory-map the arrays
    from a temporary folder under ``spill_dir``, e.g. the output's temporary folder: shared storage for a
    multi-machine cluster)."""
    with progress() as prog:
        task = prog.add("reading predictions and labels")
        prep = prepare_from_files(predictions, labels, state_encoding=state_encoding, references=references or None,
                                  findings=findings or None, policy=policy, not_mentioned=not_mentioned,
                                  model_groups=_read_groups(model_groups), unlabeled=unlabeled)
        notes = list(prep.notes)
        prog.done(task)
        executor = ProgressExecutor(executor, prog, "AUC blocks (model x finding, every replicate)")
        t0 = time.perf_counter()
        res = evaluate_auc(prep, n_resamples=n_resamples, confidence_level=confidence_level, rng=seed,
                           executor=executor, spill_dir=spill_dir)
    log.info("AUC of %d models x %d findings x %d references, %d replicates: %.2f s", len(res.models),
             len(res.findings), len(res.references), res.n_resamples, time.perf_counter() - t0)
    return res, notes


def auc_summary(res: AUCResult, notes: list[str], *, seed: int) -> str:
    t = res.table
    lines = ["# cxreval classify", "",
             f"{len(res.models)} models, findings {list(res.findings)}, references {list(res.references)}; "
             f"policy `{res.policy}` (not mentioned → {res.not_mentioned}); {res.n_resamples} patient-level "
             f"bootstrap replicates (seed {seed}), {int(res.confidence_level * 100)}% percentile CIs.", ""]
    if res.plan is not None:
        lines.append(f"Studies: {res.plan.n_studies}; patients: {res.plan.n_patients}.")
    if len(res.dropped):
        lines.append(f"Dropped {len(res.dropped)} prediction studies without any label (see dropped.csv).")
    lines += ["", "## Counts per finding and reference", "", md_table(res.counts, floatfmt="{:.0f}"), ""]
    f = MACRO if MACRO in res.findings else res.findings[0]
    wide = t[t.finding == f].pivot(index="model", columns="reference", values="auc")
    lines += [f"## AUC ({f})", "", md_table(wide.reset_index()), ""]
    if notes:
        lines += ["## Notes", ""] + [f"- {n}" for n in notes]
    return "\n".join(lines)


def classify(
    predictions: list[Path] = typer.Option(..., "--predictions", "-p", help="Long prediction table (CSV/Parquet: "
                                           "study_id, model, finding, score), a folder of such files read as one "
                                           "table (e.g. Parquet parts), or a folder of wide <model>.csv/.parquet "
                                           "files (repeatable)."),
    labels: list[Path] = typer.Option(..., "--labels", "-l", help="Long label table: study_id, patient_id, finding, "
                                      "source, state (CSV/Parquet, or a folder of such files read as one table; "
                                      "repeatable)."),
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
    overwrite: bool = overwrite_option(),
    json_out: bool = typer.Option(False, "--json", help="Print the AUC table as JSON."),
) -> None:
    """Per-finding ROC-AUC of every model against every reference, with patient-level bootstrap CIs.

    Writes auc.csv/.parquet (model, group, finding, reference, auc, ci_low, ci_high, n_pos, n_neg, n_dropped;
    finding 'macro' = macro average, 'micro' = one AUC of all (study, finding) pairs pooled, model 'Mean' = mean over
    models), counts.csv, dropped.csv, summary.md and run.json.

    Example:

    \b
        cxreval classify -p preds.csv -l labels.csv -f Effusion,Edema --seed 0 -o auc-out
        cxreval classify -p preds.parquet -l labels.parquet --executor dask:local:2 -o auc-out

    The work is split into blocks (model x finding, model x micro average), each with every reference and
    every replicate; off-process executors memory-map the arrays from the output's temporary folder (for a
    Dask cluster on several machines, put -o on storage every worker sees).
    """
    check_inputs(*[("--predictions", p) for p in predictions], *[("--labels", p) for p in labels],
                 ("--model-groups", model_groups))
    with cli_executor(executor) as ex, open_output(out, overwrite=overwrite, inputs=[*predictions, *labels,
                                                                                   model_groups],
                                                   meta={"seed": seed}) as d:
        res, notes = run_classification(predictions, labels, model_groups=model_groups,
                                        references=split_list(references, option="--references"),
                                        findings=split_list(findings, option="--findings"), policy=policy,
                                        not_mentioned=not_mentioned, unlabeled=unlabeled, n_resamples=n_resamples,
                                        seed=seed, confidence_level=confidence_level, executor=ex, spill_dir=d,
                                        state_encoding=state_encoding)
        write_table(res.table, d, "auc")
        write_table(res.counts, d, "counts")
        write_table(res.dropped.astype(str), d, "dropped")
        write_summary(d, auc_summary(res, notes, seed=seed))
    if json_out:
        echo_json({"auc": res.table.to_dict(orient="records"), "n_resamples": res.n_resamples, "seed": seed})
    else:
        typer.echo(f"AUC of {len(res.models)} models x {len(res.findings)} findings x {len(res.references)} "
                   f"references -> {Path(out) / 'auc.csv'}")


def register(app: typer.Typer) -> None:
    app.command("classify")(classify)
