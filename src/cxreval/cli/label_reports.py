"""``cxreval label-reports``: report text -> a long label table per report section, traced to its sentences."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import typer

from ..datasets.openi import read_openi_reports
from ..exceptions import InvalidParameterError, SchemaError
from ..labels import state_names
from ..outputs import check_output_path
from ..reports import (
    SECTION_CHOICES,
    VOCABULARIES,
    check_report_table,
    label_reports,
    load_rules,
    read_reports,
)
from ..results import ReadReport
from ._common import (
    cli_executor,
    echo_json,
    executor_option,
    open_output,
    out_option,
    overwrite_option,
    progress,
)

__all__ = ["register", "load_report_table"]

_PROGRESS_MIN = 5000  # reports; below this no progress bar


def load_report_table(path: Path) -> tuple[pd.DataFrame, ReadReport]:
    """A report table from a CSV/Parquet file, or from the OpenI archive / a folder of its XML files."""
    p = Path(path)
    if not p.exists():
        raise SchemaError(f"File {str(p)!r} does not exist.")
    if p.is_dir() or p.name.lower().endswith((".tgz", ".tar.gz", ".tar")):
        res = read_openi_reports(p)
        t = res.table
        table = pd.DataFrame({"study_id": t["report_id"], "patient_id": t["report_id"]})
        for c in ("comparison", "indication", "findings", "impression"):
            table[c] = t[c].fillna("").astype(str).to_numpy(dtype=object)
        return table, res.report
    res = read_reports(p)
    return res.table, res.report


def label_reports_command(
    reports: Path = typer.Option(None, "--reports", help="(Required.) Reports: a CSV/Parquet with study_id, [patient_id,] and text "
                                 "or one column per section (findings, impression, ...); or the OpenI archive "
                                 "NLMCXR_reports.tgz or a folder of its XML files."),
    out: Path = out_option("(Required.) Output folder (written atomically; must not exist unless --overwrite).",
                           default=None),
    sections: str = typer.Option("findings,impression,whole", "--sections",
                                 help="Comma-separated label sources to write: findings (report_findings), "
                                 "impression (report_impression), whole (report)."),
    vocabulary: str = typer.Option("chestxray14", "--vocabulary", help="Findings to label: chestxray14 or chexpert."),
    rules: Path = typer.Option(None, "--rules", help="A YAML rules file merged over the packaged rules (see "
                               "--print-rules)."),
    executor: str = executor_option(),
    chunk_size: int = typer.Option(2000, "--chunk-size", min=1, help="Reports per task (one chunk of their text "
                                   "each); the output does not depend on it."),
    print_rules: bool = typer.Option(False, "--print-rules", help="Print the packaged rules of --vocabulary (YAML) "
                                     "and exit; a starting point for --rules."),
    overwrite: bool = overwrite_option(),
    json_out: bool = typer.Option(False, "--json", help="Print the run summary as JSON."),
) -> None:
    """Label findings in report text per section; write labels.csv/.parquet, mentions.csv and notes.csv.

    With --executor, each task carries one chunk of --chunk-size reports' text (no file is read by the workers); the
    output files are identical, byte for byte, on every executor.

    Example: cxreval label-reports --reports NLMCXR_reports.tgz --sections findings,impression,whole -o openi-labels
    """
    if vocabulary not in VOCABULARIES:
        raise InvalidParameterError(f"--vocabulary must be one of {list(VOCABULARIES)}. Got {vocabulary!r}.")
    if print_rules:
        from ..reports import packaged_rules_text

        typer.echo(packaged_rules_text(vocabulary))
        return
    missing = [o for o, v in (("--reports", reports), ("--out", out)) if v is None]
    if missing:
        raise InvalidParameterError(f"Missing option {' and '.join(missing)} (only --print-rules runs without them).")
    secs = tuple(x.strip() for x in sections.split(",") if x.strip())
    bad = [x for x in secs if x not in SECTION_CHOICES]
    if bad or not secs:
        raise InvalidParameterError(f"--sections must be a comma-separated subset of {list(SECTION_CHOICES)}. "
                                    f"Got {sections!r}.")
    if not Path(reports).exists():
        raise SchemaError(f"File {str(reports)!r} does not exist.")
    with cli_executor(executor) as ex:  # a bad --executor fails here, before any input is read
        check_output_path(out, overwrite=overwrite)
        rs = load_rules(rules, vocabulary=vocabulary)
        table, read = load_report_table(reports)
        where = f"file {str(reports)!r}"
        checked = check_report_table(table, where=where)  # bad input fails before the output folder is opened
        inputs = [reports] + ([rules] if rules is not None else [])
        with open_output(out, overwrite=overwrite, inputs=inputs,
                         meta={"sections": list(secs), "vocabulary": vocabulary, "rules": rs.to_dict()}) as d, \
                progress(enabled=None if len(table) >= _PROGRESS_MIN else False) as prog:
            task = prog.add("labelling reports", total=len(table))
            done = [0]

            def step(k: int) -> None:  # label_reports reports the cumulative count
                prog.advance(task, k - done[0])
                done[0] = k

            res = label_reports(table, sections=secs, rules=rs, executor=ex, chunk_size=chunk_size, where=where,
                                progress=step)
            labels = res.labels.copy()
            labels["state"] = state_names(labels["state"])  # names, so every reader needs no --state-encoding
            labels.to_parquet(d / "labels.parquet", index=False)
            labels.to_csv(d / "labels.csv", index=False)
            res.mentions.to_csv(d / "mentions.csv", index=False)
            res.notes.to_csv(d / "notes.csv", index=False)
            summary = {"reports": str(reports), "read": read.to_dict(), **res.summary(),
                       "ignored_columns": list(checked.ignored_columns)}
            (d / "summary.json").write_text(json.dumps(summary, indent=2, default=str) + "\n")
    if json_out:
        echo_json(summary)
    else:
        counts = res.notes["note"].value_counts().to_dict() if len(res.notes) else {}
        if checked.ignored_columns:
            typer.echo(f"note: columns not labelled (neither ids nor report text): {list(checked.ignored_columns)}")
        typer.echo(f"labelled {res.n_reports} reports ({len(res.mentions)} mentions, sources "
                   f"{', '.join(sorted(res.labels['source'].unique()))}); notes: {counts or 'none'}; wrote labels.csv, "
                   f"labels.parquet, mentions.csv, notes.csv, summary.json to {out}")


def register(app: typer.Typer) -> None:
    app.command("label-reports")(label_reports_command)
