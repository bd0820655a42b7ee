"""``cxreval classify``: predictions + references → per-finding AUC with patient-bootstrap CIs."""

from __future__ import annotations

import logging
import time
from pathlib import Path

import numpy as np
import pandas as pd
import typer

from ..classification import AUCResult, evaluate_auc
from ..exceptions import SchemaError
from ..executor import workers_executor
from ..labels import read_labels, read_predictions, read_wide_predictions, validate_model_groups
from ._common import echo_json, prepare_out, write_summary, write_table

__all__ = ["register", "load_inputs", "md_table", "run_classification"]

log = logging.getLogger(__name__)


def md_table(df: pd.DataFrame, *, floatfmt: str = "{:.3f}") -> str:
    """A GitHub-flavoured Markdown table (no optional dependency)."""
    def fmt(v: object) -> str:
        if isinstance(v, (float, np.floating)):
            return "" if np.isnan(v) else floatfmt.format(v)
        return str(v)
    head = "| " + " | ".join(str(c) for c in df.columns) + " |"
    sep = "|" + "|".join("---" for _ in df.columns) + "|"
    body = ["| " + " | ".join(fmt(v) for v in row) + " |" for row in df.itertuples(index=False)]
    return "\n".join([head, sep, *body])


def _read_prediction_path(p: Path) -> tuple[pd.DataFrame, list[str]]:
    if p.is_dir():
        files = sorted(p.glob("*.csv"))
        if not files:
            raise SchemaError(f"Prediction folder {str(p)!r} has no '*.csv' file.")
        tables, notes = [], []
        for f in files:
            head = pd.read_csv(f, nrows=0).columns
            prefix = "prob_" if any(str(c).startswith("prob_") for c in head) else ""
            res = read_wide_predictions(f, model=f.stem, prefix=prefix)
            res.table.attrs = {}
            tables.append(res.table)
            notes += [f"{f.name}: {n}" for n in res.report.notes]
        return pd.concat(tables, ignore_index=True), notes
    res = read_predictions(p)
    return res.table, list(res.report.notes)


def load_inputs(predictions: list[Path], labels: list[Path], model_groups: Path | None
                ) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame | None, list[str]]:
    """Read prediction files/folders (long table, or a folder of wide ``<model>.csv``), label files and groups."""
    notes: list[str] = []
    ptabs = []
    for p in predictions:
        t, n = _read_prediction_path(Path(p))
        ptabs.append(t)
        notes += n
    preds = pd.concat(ptabs, ignore_index=True)
    ltabs = []
    for lp in labels:
        res = read_labels(lp, require_patient=False)
        ltabs.append(res.table)
        notes += list(res.report.notes)
    labs = pd.concat(ltabs, ignore_index=True)
    groups = None
    if model_groups is not None:
        gp = Path(model_groups)
        if not gp.exists():
            raise SchemaError(f"File {str(gp)!r} does not exist.")
        groups = validate_model_groups(pd.read_csv(gp, dtype=str), where=f"file {str(gp)!r}")
    return preds, labs, groups, notes


def run_classification(predictions: list[Path], labels: list[Path], *, model_groups: Path | None,
                       references: list[str] | None, findings: list[str] | None, policy: str, not_mentioned: str,
                       unlabeled: str, n_resamples: int, seed: int, confidence_level: float,
                       workers: int = 1) -> tuple[AUCResult, list[str]]:
    executor = workers_executor(workers)
    preds, labs, groups, notes = load_inputs(predictions, labels, model_groups)
    t0 = time.perf_counter()
    res = evaluate_auc(preds, labs, references=references or None, findings=findings or None, policy=policy,
                       not_mentioned=not_mentioned, model_groups=groups, n_resamples=n_resamples,
                       confidence_level=confidence_level, unlabeled=unlabeled, rng=seed, executor=executor)
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
    f = "macro" if "macro" in res.findings else res.findings[0]
    wide = t[t.finding == f].pivot(index="model", columns="reference", values="auc")
    lines += [f"## AUC ({f})", "", md_table(wide.reset_index()), ""]
    if notes:
        lines += ["## Notes", ""] + [f"- {n}" for n in notes]
    return "\n".join(lines)


def classify(
    predictions: list[Path] = typer.Option(..., "--predictions", "-p", help="Long prediction table (CSV/Parquet: "
                                           "study_id, model, finding, score) or a folder of wide <model>.csv files."),
    labels: list[Path] = typer.Option(..., "--labels", "-l", help="Long label table(s): study_id, patient_id, finding, "
                                      "source, state."),
    out: Path = typer.Option(..., "--out", "-o", help="Output folder."),
    references: list[str] = typer.Option(None, "--references", "-r", help="Label sources to evaluate against "
                                         "(default all)."),
    findings: list[str] = typer.Option(None, "--findings", "-f", help="Findings (default: all predicted and labelled)."),
    model_groups: Path = typer.Option(None, "--model-groups", help="CSV with columns model, group."),
    policy: str = typer.Option("exclude", "--policy", help="Uncertain labels: exclude, zeros or ones."),
    not_mentioned: str = typer.Option("negative", "--not-mentioned", help="not_mentioned labels: negative or exclude."),
    unlabeled: str = typer.Option("error", "--unlabeled", help="Prediction studies absent from the labels: error or drop."),
    n_resamples: int = typer.Option(1000, "--n-resamples", help="Bootstrap replicates (0: point estimates only)."),
    seed: int = typer.Option(0, "--seed", help="Seed of the resampling plan."),
    confidence_level: float = typer.Option(0.95, "--confidence-level"),
    workers: int = typer.Option(1, "--workers", help="Processes for the bootstrap replicates (1: in process, "
                                "0: one per CPU); the result is identical."),
    json_out: bool = typer.Option(False, "--json", help="Print the AUC table as JSON."),
) -> None:
    """Per-finding ROC-AUC of every model against every reference, with patient-level bootstrap CIs.

    Writes auc.csv/.parquet (model, group, finding, reference, auc, ci_low, ci_high, n_pos, n_neg, n_dropped;
    finding 'macro' = macro average, 'micro' = one AUC of all (study, finding) pairs pooled, model 'Mean' = mean over
    models), counts.csv, dropped.csv and summary.md.
    """
    res, notes = run_classification(predictions, labels, model_groups=model_groups, references=references,
                                    findings=findings, policy=policy, not_mentioned=not_mentioned, unlabeled=unlabeled,
                                    n_resamples=n_resamples, seed=seed, confidence_level=confidence_level,
                                    workers=workers)
    d = prepare_out(out)
    write_table(res.table, d, "auc")
    write_table(res.counts, d, "counts")
    write_table(res.dropped.astype(str), d, "dropped")
    write_summary(d, auc_summary(res, notes, seed=seed))
    if json_out:
        echo_json({"auc": res.table.to_dict(orient="records"), "n_resamples": res.n_resamples, "seed": seed})
    else:
        typer.echo(f"AUC of {len(res.models)} models x {len(res.findings)} findings x {len(res.references)} "
                   f"references -> {d / 'auc.csv'}")


def register(app: typer.Typer) -> None:
    app.command("classify")(classify)
