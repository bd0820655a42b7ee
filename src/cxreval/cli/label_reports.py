"""``cxreval label-reports``: report text -> a long label table per report section, traced to its sentences;
optionally scored against a reference label source (``labeller_validation.csv``)."""

from __future__ import annotations

from pathlib import Path

import typer

from ..jobs import label_reports_file, label_rules_text
from ..labeller._rules import DEFAULT_CONVENTIONS
from ._common import (
    blank_state_option,
    echo_json,
    executor_option,
    findings_option,
    json_option,
    n_resamples_option,
    out_option,
    overwrite_option,
    progress,
    save_output,
    seed_option,
    state_encoding_option,
)

__all__: list[str] = []


def label_reports_command(
    reports: Path = typer.Option(
        None,
        "--reports",
        help="(Required.) Reports: a CSV/Parquet with study_id, [patient_id,] and text "
        "or one column per section (findings, impression, ...); or the OpenI archive "
        "NLMCXR_reports.tgz or a folder of its XML files.",
    ),
    out: Path = out_option(
        "(Required; no default.) Output folder (written atomically; must not exist unless --overwrite).",
        default=None,
    ),
    sections: str = typer.Option(
        "findings,impression,whole",
        "--sections",
        help="Comma-separated label sources to write: findings (report_findings), "
        "impression (report_impression), whole (report).",
    ),
    vocabulary: str = typer.Option(
        "chestxray14", "--vocabulary", help="Findings to label: chestxray14 or chexpert."
    ),
    conventions: str = typer.Option(
        DEFAULT_CONVENTIONS,
        "--conventions",
        help="How 'No definite X' and 'No new X' "
        "read: cxreval (default; 'No definite X' uncertain, 'No new X' negative) or "
        "chexpert (the CheXpert labeller's: 'No definite X' negative, 'No new X' "
        "uncertain). Recorded in summary.json (rules.conventions).",
    ),
    rules: Path = typer.Option(
        None, "--rules", help="A YAML rules file merged over the packaged rules (see --print-rules)."
    ),
    validate_against: Path = typer.Option(
        None,
        "--validate-against",
        help="A long label table (CSV/Parquet: "
        "study_id, [patient_id,] finding, source, state) of a reference source, "
        "e.g. human codes: write labeller_validation.csv (precision, recall, F1 "
        "with bootstrap CIs) of the 'whole' source (or of the one --sections "
        "source) against it, on the reference's studies. OpenI's human MeSH "
        "codes: `cxreval data export openi_mesh -o DIR` writes DIR/labels.csv.",
    ),
    reference_source: str = typer.Option(
        None,
        "--reference-source",
        help="The reference source in --validate-against (default: its only source).",
    ),
    findings: list[str] = findings_option(
        "With --validate-against: findings to score, comma-separated or a "
        "vocabulary name (chestxray8, ...); default those the reference labels."
    ),
    uncertain: str = typer.Option(
        "negative",
        "--uncertain",
        help="With --validate-against: an uncertain label "
        "counts as 'negative' (default) or 'positive', on both sides.",
    ),
    n_resamples: int = n_resamples_option(
        "With --validate-against: patient-bootstrap replicates of the CIs.", min=1
    ),
    seed: int = seed_option(),
    state_encoding: str = state_encoding_option(),
    blank_state: str = blank_state_option(),
    executor: str = executor_option(),
    chunk_size: int = typer.Option(
        2000,
        "--chunk-size",
        min=1,
        help="Reports per task (one chunk of their text each); the output does not depend on it.",
    ),
    print_rules: bool = typer.Option(
        False,
        "--print-rules",
        help="Print the packaged rules of --vocabulary (YAML) and exit; a starting point for --rules.",
    ),
    overwrite: bool = overwrite_option(),
    json_out: bool = json_option("Print the run summary as JSON."),
) -> None:
    """Label findings in report text per section; write labels.csv/.parquet, mentions.csv, notes.csv, summary.json.

    With --executor, each task carries one chunk of --chunk-size reports' text (no file is read by the workers); the
    output files are identical, byte for byte, on every executor. With --validate-against, also
    labeller_validation.csv/.parquet: the labeller scored against a reference label source.

    Example: cxreval label-reports --reports NLMCXR_reports.tgz --sections findings,impression,whole -o openi-labels
    """
    if print_rules:
        typer.echo(label_rules_text(vocabulary, conventions=conventions))
        return
    with progress() as prog:
        res = label_reports_file(
            reports,
            out,
            overwrite=overwrite,
            sections=sections,
            vocabulary=vocabulary,
            conventions=conventions,
            rules=rules,
            reference_labels=validate_against,
            reference=reference_source,
            findings=findings,
            uncertain=uncertain,
            n_resamples=n_resamples,
            rng=seed,
            state_encoding=state_encoding,
            blank_state=blank_state,
            executor=executor,
            chunk_size=chunk_size,
            progress=prog,
        )
    meta: dict[str, object] = {
        "sections": [x.strip() for x in sections.split(",") if x.strip()],
        "vocabulary": vocabulary,
        "conventions": conventions,
        "rules": res.rules.to_dict(),
    }
    inputs = [reports] + [p for p in (rules, validate_against) if p is not None]
    save_output(res, out, overwrite=overwrite, inputs=inputs, meta=meta)
    val = res.validation
    if json_out:
        echo_json(res.to_dict() | ({} if val is None else {"validation": val.to_dict()}))
    else:
        counts = res.counts()["notes"]
        if res.ignored_columns:
            typer.echo(
                f"note: columns not labelled (neither ids nor report text): {list(res.ignored_columns)}"
            )
        files = [*res.FILES.values(), *(() if val is None else val.FILES.values())]
        typer.echo(
            f"labelled {res.n_reports} reports ({len(res.mentions)} mentions, sources "
            f"{', '.join(sorted(res.labels['source'].unique()))}); notes: {counts or 'none'}; wrote "
            f"{', '.join(files)} (+ Parquet twins of the tables) and summary.md to {out}"
        )


def register(app: typer.Typer) -> None:
    app.command("label-reports")(label_reports_command)
