"""``cxreval fuse``: fuse several readers' labels into consensus sources, and score them against an
adjudicated source (the XQA paper's Table 30 / Figure 6)."""

from __future__ import annotations

import shutil
import warnings
from pathlib import Path
from typing import Any

import pandas as pd
import typer

from ..agreement import agreement_table
from ..exceptions import CxrevalWarning, InvalidParameterError
from ..findings import XQA_SELECTED
from ..fusion import fuse_label_table, list_fusion
from ..fusion.neural import load_neural_fusion
from ..labels import SUMMARY_ROWS, read_label_tables, state_names
from ..tables import markdown_table, write_summary, write_table
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

__all__ = ["register", "FUSION_AGREEMENT_COLUMNS", "fusion_agreement"]

FUSION_AGREEMENT_COLUMNS: tuple[str, ...] = ("method", "finding", "kappa_w", "kappa_low", "kappa_high",
                                             "f1_w", "f1_low", "f1_high", "n", "finding_set")
DEFAULT_METHODS = "mv,or,and,ds,mace"
LABELS_FORMATS = ("csv", "parquet", "both")


def _split(value: str, *, option: str) -> list[str]:
    items = [x.strip() for x in value.split(",") if x.strip()]
    if not items:
        raise InvalidParameterError(f"{option} needs a comma-separated list. Got {value!r}.")
    return items


def _finding_sets(findings: list[str]) -> dict[str, list[str]]:
    selected = [f for f in XQA_SELECTED if f in findings]
    return {"selected": selected, "all": findings} if selected else {"all": findings}


def fusion_agreement(labels: pd.DataFrame, fused: pd.DataFrame, adjudicated: str, methods: list[str]) -> pd.DataFrame:
    """Agreement of each ``fused_<method>`` source with ``adjudicated`` (reference = F1 ``y_true``),
    per finding plus macro/micro over the selected findings and over all; columns
    :data:`FUSION_AGREEMENT_COLUMNS`."""
    ref = labels[labels["source"] == adjudicated]
    table = pd.concat([ref[["study_id", "finding", "source", "state"]],
                       fused[["study_id", "finding", "source", "state"]]], ignore_index=True)
    findings = sorted(set(fused["finding"]) & set(ref["finding"]))
    if not findings:
        raise InvalidParameterError(f"The adjudicated source {adjudicated!r} labels none of the fused findings.")
    agr = agreement_table(table, [(adjudicated, f"fused_{m}") for m in methods], findings=findings,
                          finding_sets=_finding_sets(findings), studies="intersection")
    agr.insert(0, "method", agr.pop("pair").str.split(":").str[1].str.removeprefix("fused_"))
    agr["finding_set"] = agr["finding_set"].fillna("")
    return agr[list(FUSION_AGREEMENT_COLUMNS)]


def fuse(
    labels: list[Path] = typer.Option(..., "--labels", "-l", help="Long label table (CSV or Parquet): study_id, "
                                      "[patient_id,] finding, source, state (repeatable)."),
    readers: str = typer.Option(..., "--readers", help="Comma-separated sources to fuse (at least two)."),
    out: Path = out_option(),
    methods: str = typer.Option(DEFAULT_METHODS, "--methods", help="Comma-separated methods: mv, or, and, ds, mace, "
                                "nn, nn_ps (nn* need --adjudicated)."),
    adjudicated: str = typer.Option(None, "--adjudicated", help="Reference source: score every method against it "
                                    "(fusion_agreement.csv); the nn methods are trained on it."),
    findings: list[str] = findings_option("Findings to fuse, comma-separated or repeated; aliases and vocabulary names (xqa, "
                                         "xqa_selected, ...) accepted (default all)."),
    not_mentioned: str = typer.Option("negative", "--not-mentioned", help="A reader's not_mentioned label: "
                                      "'negative' or 'exclude'."),
    seed: int = seed_option("Seed of the randomised methods (MACE restarts, nn)."),
    state_encoding: str = state_encoding_option(),
    overwrite: bool = overwrite_option(),
    json_out: bool = typer.Option(False, "--json", help="Print the run summary (and agreement) as JSON."),
    save_model: bool = typer.Option(False, "--save-model", help="Save each fitted nn/nn_ps model as "
                                    "<method>_model.npz in the output folder (apply it with --load-model)."),
    load_model: Path = typer.Option(None, "--load-model", help="Apply a saved nn/nn_ps model (from --save-model) "
                                    "instead of training it; --readers are mapped onto the model's readers by name, "
                                    "else in the model's (sorted) reader order."),
    write_inputs: bool = typer.Option(False, "--write-inputs", help="Also write the input labels (every source of "
                                      "--labels) into fused_labels, before the fused sources (default: the fused "
                                      "sources only)."),
    labels_format: str = typer.Option("csv", "--labels-format", help="Format of fused_labels: csv, parquet or "
                                      "both."),
    executor: str = executor_option(),
) -> None:
    """Fuse readers' labels with MV, FUSE_OR, FUSE_AND, Dawid-Skene, MACE, NN Fusion (PS) into new sources.

    Writes fused_labels (the fused sources; --write-inputs adds the input labels; --labels-format csv, parquet
    or both), per-method diagnostics, agreement tables, summary.md (with each Dawid-Skene / MACE fit's
    iterations and whether it converged) and run.json. With --executor, Dawid-Skene and MACE are fitted one
    finding per task; each task reads its finding's arrays from a spill folder inside the output folder
    (removed at the end; on a multi-machine cluster the output folder must be on shared storage). The
    output is identical to the serial run's, byte for byte.

    Example:

    \b
        cxreval fuse -l labels.csv --readers Rep1,Rep2,Rep3 --adjudicated CR --seed 0 -o fuse-out

    At scale: Parquet output, two worker processes:

    \b
        cxreval fuse -l big.parquet --readers R1,R2,R3,R4,R5 --labels-format parquet --executor process:2 -o big

    Train NN Fusion on one dataset and apply it to another (the XQA paper's Tables 14-15):

    \b
        cxreval fuse -l xqa.csv --readers Rep1,Rep2 --methods nn --adjudicated CR --save-model -o fit
        cxreval fuse -l mimic.csv --readers chexpert,chexbert --methods mv --load-model fit/nn_model.npz -o mimic
    """
    reader_list = _split(readers, option="--readers")
    method_list = _split(methods, option="--methods")
    finding_list = split_list(findings, option="--findings")
    check_inputs(*[("--labels", p) for p in labels], *([("--load-model", load_model)] if load_model else []))
    if labels_format not in LABELS_FORMATS:
        raise InvalidParameterError(f"--labels-format must be one of {list(LABELS_FORMATS)}; got {labels_format!r}.")
    inputs = [*labels, *([load_model] if load_model else [])]
    with cli_executor(executor) as ex, open_output(out, overwrite=overwrite, inputs=inputs,
                                                   meta={"seed": seed}) as d:
        table, _ = read_label_tables(labels, state_encoding=state_encoding)
        fitted: dict[str, object] = {}
        fuse_table, mapping = table, ""
        if load_model is not None:
            model = load_neural_fusion(load_model)
            name = "nn_ps" if model.specialists else "nn"
            method_list = [m for m in method_list if m != name]
            if len(reader_list) != len(model.readers_):
                raise InvalidParameterError(f"--load-model {load_model}: the model was fitted on "
                                            f"{len(model.readers_)} readers {list(model.readers_)}; --readers names "
                                            f"{len(reader_list)}.")
            if set(reader_list) != set(model.readers_):
                rename = dict(zip(reader_list, model.readers_))
                clash = sorted(set(model.readers_) & (set(table["source"].astype(str)) - set(reader_list)))
                if clash:
                    raise InvalidParameterError(f"--load-model {load_model}: the label table already has source(s) "
                                                f"{clash} named like the model's readers; pass them in --readers.")
                fuse_table = table.assign(source=table["source"].astype(str).replace(rename))
                mapping = "; sources mapped onto the model's readers: " + ", ".join(
                    f"{a} -> {b}" for a, b in rename.items())
                reader_list = list(model.readers_)
            fitted[name] = model
        with progress() as prog:
            task = prog.add(f"fusing {len(reader_list)} readers with {', '.join(method_list) or 'the loaded model'}")
            parallel = executor not in (None, "", "serial")
            spill = d / ".fuse-spill"
            res = fuse_label_table(fuse_table, reader_list, method_list, adjudicated=adjudicated,
                                   findings=finding_list, not_mentioned=not_mentioned, rng=seed, fitted=fitted,
                                   executor=ex if parallel else None, spill_dir=spill if parallel else None)
            shutil.rmtree(spill, ignore_errors=True)
            method_list = list(res.estimators)
            prog.done(task)
            task = prog.add("agreement tables and writing")
            loaded = [f"- {m}: loaded from {load_model} (readers {list(e.readers_)}, findings "  # type: ignore[attr-defined]
                      f"{list(e.findings_)}), applied without refitting{mapping}" for m, e in fitted.items()]
            written, agr = _write_fuse(d, labels, table, res, method_list, adjudicated, not_mentioned, seed,
                                       save_model=save_model, fitted=fitted, loaded=loaded,
                                       write_inputs=write_inputs, labels_format=labels_format)
            prog.done(task)
    for w in res.warnings:  # summarised once per run with the other warnings (cli.main)
        warnings.warn(w, CxrevalWarning, stacklevel=1)
    if json_out:
        payload: dict[str, object] = {"files": {k: str(Path(out) / Path(v).name) for k, v in written.items()},
                                      **res.to_dict()}
        if agr is not None:
            payload["agreement"] = agr.to_dict(orient="records")
        echo_json(payload)
    else:
        typer.echo(f"wrote {', '.join(Path(p).name for p in written.values())} and summary.md to {out} "
                   f"(methods available: {', '.join(list_fusion())})")


def _write_fuse(d: Path, labels: list[Path], table: pd.DataFrame, res: Any, method_list: list[str],
                adjudicated: str | None, not_mentioned: str, seed: int, *, save_model: bool = False,
                fitted: dict[str, object] | None = None,
                loaded: list[str] | None = None, write_inputs: bool = False,
                labels_format: str = "csv") -> tuple[dict[str, Path], pd.DataFrame | None]:
    fitted = fitted or {}
    fused = res.labels
    written = {}
    file_labels = pd.concat([table, fused], ignore_index=True) if write_inputs else fused.copy()
    file_labels["state"] = state_names(file_labels["state"].astype("Int8"))
    if labels_format in ("csv", "both"):
        written["fused_labels"] = write_table(file_labels, d, "fused_labels", parquet=labels_format == "both")
    else:
        file_labels.to_parquet(d / "fused_labels.parquet", index=False)
        written["fused_labels"] = d / "fused_labels.parquet"
    del file_labels
    ests = res.estimators
    if "ds" in ests:
        written["ds_confusion"] = write_table(ests["ds"].errors_, d, "ds_confusion")  # type: ignore[attr-defined]
    if res.warnings:
        parts = [w.split(": ", 2) for w in res.warnings]
        written["fusion_warnings"] = write_table(pd.DataFrame(parts, columns=["finding", "method", "warning"]), d,
                                                 "fusion_warnings")
    if save_model:
        for m in ("nn", "nn_ps"):
            if m in ests and m not in fitted:
                ests[m].save(d / f"{m}_model.npz")  # type: ignore[attr-defined]
                written[f"{m}_model"] = d / f"{m}_model.npz"
    if "mace" in ests:
        written["mace_competence"] = write_table(ests["mace"].competence_, d, "mace_competence")  # type: ignore[attr-defined]
    between = None
    if len(method_list) > 1:
        pairs = [(f"fused_{a}", f"fused_{b}") for i, a in enumerate(method_list) for b in method_list[i + 1:]]
        fs = sorted(set(fused["finding"]))
        between = agreement_table(fused, pairs, findings=fs, finding_sets={"all": fs}, studies="same")
        written["method_agreement"] = write_table(between, d, "method_agreement")
    agr = None
    if adjudicated is not None:
        agr = fusion_agreement(table, fused, adjudicated, method_list)
        written["fusion_agreement"] = write_table(agr, d, "fusion_agreement")
    counts = fused.groupby(["source", "state"], observed=True).size().unstack(fill_value=0)
    counts.columns = [state_names(pd.Series([c], dtype="Int8")).iloc[0] for c in counts.columns]
    lines = [f"# cxreval fuse: {', '.join(str(p) for p in labels)}", "",
             f"- readers fused: {', '.join(res.readers)}; methods: {', '.join(method_list)} (seed={seed})",
             *(loaded or []),
             f"- items (study, finding): {res.n_items}; readers per item: {res.readers_per_item}; fused from fewer "
             f"readers than the most-read item: {res.n_items_partial}",
             f"- reader labels left out: {res.n_dropped} (not_mentioned -> {not_mentioned})",
             "- MV ties -> uncertain; FUSE_OR = largest state; FUSE_AND = smallest state; nn/nn_ps labels for studies "
             "with a reference are out-of-fold (5-fold CV) predictions", "",
             "## Fused label counts", "", markdown_table(counts.reset_index()), ""]
    if res.convergence is not None:
        lines += _convergence_lines(res.convergence, ests)
    if res.warnings:
        lines += ["## Warnings: states fused far more often than any reader uses them", "",
                  *[f"- {w}" for w in res.warnings], ""]
    if agr is not None:
        show = agr[agr["finding"].isin(SUMMARY_ROWS) | agr["finding"].isin(XQA_SELECTED)]
        lines += [f"## Agreement with {adjudicated} (Table 30 style)", "", markdown_table(show), ""]
    if between is not None:
        lines += ["## Agreement between methods (macro/micro over all findings)", "",
                  markdown_table(between[between["finding"].isin(SUMMARY_ROWS)]), ""]
    write_summary(d, "\n".join(lines))
    return written, agr


def _convergence_lines(conv: pd.DataFrame, ests: dict[str, Any]) -> list[str]:
    """The summary's section on the stopping rule of every iterative fit."""
    lines = ["## Stopping rule", ""]
    no_tol = [m for m in conv["method"].unique() if getattr(ests[m], "tol", 0) is None]
    for m, g in conv.groupby("method", sort=False):
        est = ests[m]
        span = f"iterations {int(g['n_iter'].min())}-{int(g['n_iter'].max())}"
        if m in no_tol:
            lines.append(f"- {m}: runs n_iter={est.n_iter} iterations per restart (no tolerance: nothing to converge "
                         f"on), keeps the best of {est.n_restarts} restarts; {span}")
            continue
        what = "rises" if m == "ds" else "changes"
        lines.append(f"- {m}: stops when the log-likelihood per item {what} by less than tol={est.tol:g}, else after "
                     f"n_iter={est.n_iter} iterations; {int(g['converged'].sum())}/{len(g)} fits converged, {span}")
    done = conv["converged"].map({True: "yes", False: "no"})
    show = conv.assign(converged=done.where(~conv["method"].isin(no_tol), "no tol"))
    return [*lines, "", markdown_table(show, floatfmt="{:.3g}"), ""]


def register(app: typer.Typer) -> None:
    app.command("fuse")(fuse)
