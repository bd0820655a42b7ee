"""``cxreval rank``: ranking stability across references, from predictions + labels or from AUC tables."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import typer

from ..exceptions import InvalidParameterError, SchemaError
from ..published import attach_published, load_xqa_auc_table
from ..rank_correlation import DEFAULT_KENDALL, DEFAULT_SPEARMAN, KENDALL_VARIANTS, SPEARMAN_VARIANTS
from ..ranking import ALL_MODELS, RankingStabilityResult, ranking_stability
from ..tables import write_summary, write_table
from ._common import (
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
from .classify import auc_summary, md_table, run_classification

__all__ = ["register", "rank_summary"]

_CORR_OUT = ("dataset", "finding", "group", "reference_a", "reference_b", "method", "variant", "statistic",
             "boot_mean", "boot_sd", "ci_low", "ci_high", "paper_mean", "paper_sd", "n_undefined", "n_models",
             "n_tied_a", "n_tied_b")
_VARIANT_TEXT = {"formula": "SRCC = 1 - 6 sum d^2 / (n (n^2 - 1)) on average ranks (the seed's formula)",
                 "pearson": "SRCC = Pearson correlation of average ranks (scipy.stats.spearmanr)",
                 "tau-a": "KRCC = tau-a = (C - D) / (n (n - 1) / 2) (the seed's formula)",
                 "tau-b": "KRCC = tau-b = (C - D) / sqrt((n0 - n1)(n0 - n2)) (scipy.stats.kendalltau)"}


def _read_auc_table(spec: str) -> tuple[pd.DataFrame, bool]:
    """``xqa`` → the packaged XQA Tables 16–25; otherwise a CSV/Parquet file."""
    if spec.lower() == "xqa":
        return load_xqa_auc_table(), True
    p = Path(spec)
    if not p.exists():
        raise SchemaError(f"AUC table {spec!r} does not exist (give a CSV/Parquet file, or 'xqa' for the packaged "
                          "XQA tables).")
    try:
        df = pd.read_parquet(p) if p.suffix.lower() == ".parquet" else pd.read_csv(p)
    except (ValueError, OSError) as exc:
        raise SchemaError(f"Could not read AUC table {spec!r}: {exc}") from exc
    if "finding" in df.columns:
        from ..published import table_finding

        df["finding"] = df["finding"].astype(str).map(table_finding)
    return df, False


def _pm(m: float, s: float) -> str:
    return "" if np.isnan(m) else f"{m:.2f} ± {s:.2f}"


def rank_summary(res: RankingStabilityResult, corr: pd.DataFrame, *, source: str) -> str:
    lines = ["# cxreval rank", "", source, "",
             f"Rank correlations: {_VARIANT_TEXT[res.spearman]}; {_VARIANT_TEXT[res.kendall]}. Tied AUCs share "
             "the average rank (column `variant` of rank_correlation.csv).", ""]
    if "note" in corr.columns and (corr["note"].fillna("") != "").any():
        notes = corr.loc[corr["note"].fillna("") != "", "note"]
        lines += [f"{len(notes)} published rows have no recomputed value: "
                  + "; ".join(f"{k} ({v} rows)" for k, v in notes.value_counts().items()), ""]
    boot = res.n_resamples > 0
    c = corr[corr.group == ALL_MODELS] if (corr.group == ALL_MODELS).any() else corr
    for ds in pd.unique(c.dataset):
        sub = c[c.dataset == ds]
        rows = []
        for (f, ra, rb), g in sub.groupby(["finding", "reference_a", "reference_b"], sort=False):
            row = {"finding": f, "pair": f"{ra} vs {rb}"}
            for m in ("SRCC", "KRCC"):
                r = g[g.method == m]
                if r.empty:
                    continue
                r = r.iloc[0]
                row[m] = r.statistic
                if boot:
                    row[f"{m} boot"] = _pm(r.boot_mean, r.boot_sd)
                    row[f"{m} CI"] = "" if np.isnan(r.ci_low) else f"[{r.ci_low:.2f}, {r.ci_high:.2f}]"
                if "paper_mean" in g.columns and not np.isnan(r.paper_mean):
                    row[f"{m} paper"] = _pm(r.paper_mean, r.paper_sd)
            row["tied a/b"] = f"{int(g.n_tied_a.iloc[0])}/{int(g.n_tied_b.iloc[0])} of {int(g.n_models.iloc[0])}"
            rows.append(row)
        title = f"## Rank correlations, all models{f' ({ds})' if ds else ''}"
        lines += [title, "", md_table(pd.DataFrame(rows)), ""]
    t = res.top_changes
    t = t[t.group == ALL_MODELS] if (t.group == ALL_MODELS).any() else t
    if len(t):
        rows = []
        for (ds, f, bu, m), g in t.groupby(["dataset", "finding", "best_under", "model"], sort=False):  # type: ignore[assignment]
            ranks = ", ".join(f"{r}: {rk:g}" + (f" ({lo}-{hi})" if lo != hi else "")
                              for r, rk, lo, hi in zip(g.reference, g["rank"], g.rank_min, g.rank_max))
            rows.append({"dataset": ds, "finding": f, "best under": bu, "model": m, "rank under each reference": ranks})
        lines += ["## Top-rank changes (best model under each reference, its rank under all; tie range in brackets)",
                  "", md_table(pd.DataFrame(rows)), ""]
    return "\n".join(lines)


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
    groups: str = typer.Option("all", "--groups", help="all, overall or per-group."),
    min_models: int = typer.Option(3, "--min-models", help="Skip model groups with fewer models."),
    dataset: str = typer.Option("", "--dataset", help="Dataset name written in the tables (predictions mode)."),
    kendall: str = typer.Option(DEFAULT_KENDALL, "--kendall", help="KRCC variant: tau-a (default, the XQA paper's "
                                "(C - D) / (n(n-1)/2)) or tau-b (tie-corrected, scipy.stats.kendalltau)."),
    spearman: str = typer.Option(DEFAULT_SPEARMAN, "--spearman", help="SRCC variant: formula (default, the XQA "
                                 "paper's 1 - 6 sum d^2 / (n(n^2-1)) on average ranks) or pearson (Pearson "
                                 "correlation of average ranks, scipy.stats.spearmanr). Equal without ties."),
    state_encoding: str = state_encoding_option(),
    executor: str = executor_option(),
    overwrite: bool = overwrite_option(),
    json_out: bool = typer.Option(False, "--json", help="Print the rank correlations as JSON."),
) -> None:
    """SRCC/KRCC between the model rankings each reference induces, per finding, macro average and model group.

    Writes rank_correlation.csv, rankings.csv (bump-chart table), top_changes.csv (and auc.csv from predictions)
    plus summary.md and run.json. With --auc-table the correlations are point values beside the paper's
    bootstrap mean +- sd. The SRCC/KRCC variants (default: the XQA paper's formulas) are in column `variant` and
    in summary.md.

    Example:

    \b
        cxreval rank --auc-table xqa --kendall tau-b --spearman pearson -o rank-xqa
        cxreval rank -p preds.csv -l labels.csv --n-resamples 1000 --seed 0 -o rank-out
        cxreval rank -p preds.csv -l labels.csv --executor process:2 -o rank-out
    """
    if kendall not in KENDALL_VARIANTS:
        raise InvalidParameterError(f"--kendall must be one of {', '.join(KENDALL_VARIANTS)}. Got {kendall!r}.")
    if spearman not in SPEARMAN_VARIANTS:
        raise InvalidParameterError(f"--spearman must be one of {', '.join(SPEARMAN_VARIANTS)}. Got {spearman!r}.")
    if auc_table is not None:
        if predictions or labels:
            raise SchemaError("Give either --auc-table or --predictions/--labels, not both.")
        if auc_table.lower() != "xqa":
            check_inputs(("--auc-table", Path(auc_table)))
    elif not predictions or not labels:
        raise SchemaError("cxreval rank needs --auc-table, or both --predictions and --labels.")
    check_inputs(*[("--predictions", p) for p in predictions or []], *[("--labels", p) for p in labels or []],
                 ("--model-groups", model_groups))
    inputs = [*(predictions or []), *(labels or []), model_groups]
    if auc_table is not None and auc_table.lower() != "xqa":
        inputs.append(Path(auc_table))
    with cli_executor(executor) as ex, open_output(out, overwrite=overwrite, inputs=inputs, meta={"seed": seed}) as d:
        if auc_table is not None:
            table, is_xqa = _read_auc_table(auc_table)
            res = ranking_stability(table, groups=groups, min_models=min_models, kendall=kendall,
                                    spearman=spearman)
            corr = attach_published(res)
            source = (f"From the AUC table {'XQA Tables 16-25 (packaged)' if is_xqa else auc_table}: point estimates "
                      "(no bootstrap); ties from 2-decimal rounding share the average rank (rank_min/rank_max give "
                      "the range). `paper` = the XQA paper's bootstrap mean ± sd (Tables 26-29).")
        else:
            auc, notes = run_classification(predictions, labels, model_groups=model_groups,
                                            references=split_list(references, option="--references"),
                                            findings=split_list(findings, option="--findings"), policy=policy,
                                            not_mentioned=not_mentioned, unlabeled=unlabeled,
                                            n_resamples=n_resamples, seed=seed, confidence_level=confidence_level,
                                            executor=ex, spill_dir=d, state_encoding=state_encoding)
            write_table(auc.table, d, "auc")
            (d / "auc_summary.md").write_text(auc_summary(auc, notes, seed=seed) + "\n")
            with progress() as prog:
                task = prog.add("rank correlations over the replicates")
                res = ranking_stability(auc, groups=groups, min_models=min_models, dataset=dataset,
                                        kendall=kendall, spearman=spearman)
                prog.done(task)
            corr = res.correlations.assign(paper_mean=np.nan, paper_sd=np.nan)
            source = (f"From predictions + labels: {len(auc.models)} models, references {list(auc.references)}, "
                      f"{auc.n_resamples} patient-bootstrap replicates (seed {seed}); boot = mean ± sd of the "
                      f"replicate correlations, CI = {int(auc.confidence_level * 100)}% percentile.")
        corr = corr[[c for c in _CORR_OUT if c in corr.columns] + [c for c in corr.columns if c not in _CORR_OUT]]
        write_table(corr, d, "rank_correlation")
        write_table(res.rankings, d, "rankings")
        write_table(res.top_changes, d, "top_changes")
        write_summary(d, rank_summary(res, corr, source=source))
    if json_out:
        echo_json({"rank_correlation": corr.to_dict(orient="records"), "n_resamples": res.n_resamples,
                   "kendall": res.kendall, "spearman": res.spearman})
    else:
        typer.echo(f"{len(corr)} rank correlations, {len(res.top_changes)} top-rank rows -> {out}")


def register(app: typer.Typer) -> None:
    app.command("rank")(rank)
