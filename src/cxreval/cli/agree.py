"""``cxreval agree``: agreement, prevalence and omission flows between label sources."""

from __future__ import annotations

from pathlib import Path

import typer

from .._typing import Studies
from ..jobs import compare_sources_files
from ._common import (
    blank_state_option,
    echo_json,
    finding_map_option,
    findings_option,
    json_option,
    labels_option,
    not_mentioned_option,
    open_output,
    out_option,
    out_paths,
    overwrite_option,
    state_encoding_option,
    studies_option,
    studies_value,
    wrote,
)

__all__: list[str] = []


def agree(
    labels: list[Path] = labels_option(),
    pairs: str = typer.Option(..., "--pairs", help="Source pairs A:B[,C:D...]; A is the F1 reference."),
    flow_pairs: str = typer.Option(
        None,
        "--flow-pairs",
        help="Pairs A:B[,C:D...] whose flows and omissions are "
        "written (default: those of --pairs); agreement and prevalence stay those of "
        "--pairs.",
    ),
    out: Path = out_option(),
    findings: list[str] = findings_option(
        "Findings, comma-separated or repeated, or a vocabulary name (xqa, "
        "xqa_selected, chestxray14, ...); default those both sources label."
    ),
    finding_sets: list[str] = typer.Option(
        None,
        "--finding-set",
        help="NAME=F1,F2,... to macro/micro-average over (repeatable); default one set 'all'.",
    ),
    not_mentioned: str = not_mentioned_option("not_mentioned labels: 'negative' or 'exclude'."),
    weights: str = typer.Option(
        "quadratic", "--weights", help="kappa_w weighting: quadratic (default), linear or none."
    ),
    both_uncertain: str = typer.Option(
        "agree",
        "--both-uncertain",
        help="A pair where both labels are uncertain, "
        "under the pessimistic (Low) mapping: 'agree' (default; identical labels "
        "always agree, as in the XQA-Chest paper's Table 30 of "
        "agreement with the consensus labels) or 'disagree' (half in each "
        "disagreeing cell: the pair counts as a disagreement).",
    ),
    intersect: bool = typer.Option(
        False,
        "--intersect",
        help="Compare each pair of sources on the studies both label (studies='each'), whatever --studies "
        "says.",
    ),
    state_encoding: str = state_encoding_option(),
    blank_state: str = blank_state_option(),
    overwrite: bool = overwrite_option(),
    studies: str = studies_option(
        "Study design: common (default, as classify and rank: per finding, only the studies every "
        "source of the pairs labelling it labels, for agreement, flows and prevalence alike) or each (a "
        "pair of sources compares their own labels, each pair on the same studies; --intersect: on the "
        "studies both label)."
    ),
    finding_map: str = finding_map_option(
        "Finding map applied to the labels first: a built-in "
        "map (nih_to_google, nih_to_chexpert, nih_to_vindr, nih_to_padchest) or a YAML "
        "file ('findings: {Nodule or Mass: any(Nodule, Mass)}'); written to "
        "finding_map.csv."
    ),
    json_out: bool = json_option("Print the agreement and omission tables as JSON."),
) -> None:
    """Weighted kappa, Low/High kappa and weighted F1 per finding (+ macro, micro), prevalence and omission flows.

    Writes agreement, prevalence, flows and omissions (CSV + Parquet), summary.md and run.json.

    Example:

    \b
        cxreval agree -l labels.csv --pairs CR:nih_textmined --findings xqa_selected -o agree-out
        cxreval agree -l labels.csv --pairs CR:Rep1,CR:Rep2,CR:Rep3 --flow-pairs CR:Rep1 --intersect -o agree-flows
        cxreval agree -l nih/labels.parquet -l google/labels.parquet --finding-map nih_to_google --studies common --pairs google_expert:nih_textmined -o agree-nih-google
    """
    design: Studies = "each" if intersect else "common" if studies == "common" else "same"
    meta: dict[str, object] = {"design": {"studies": design, "finding_map": None}}
    with open_output(out, overwrite=overwrite, inputs=labels, meta=meta) as d:
        res = compare_sources_files(
            labels,
            pairs,
            findings=findings,
            finding_sets=finding_sets,
            weights=weights,
            not_mentioned=not_mentioned,
            studies=studies_value(studies),
            intersect=intersect,
            both_uncertain=both_uncertain,
            finding_map=finding_map,
            flow_pairs=flow_pairs,
            state_encoding=state_encoding,
            blank_state=blank_state,
            title=f"cxreval agree: {', '.join(str(p) for p in labels)}",
        )
        if res.finding_map is not None:
            meta["design"] = {"studies": design, "finding_map": res.finding_map.to_dict()}
        paths = out_paths(res.save(d), out)
    if json_out:
        echo_json(
            {
                "files": {k: v for k, v in paths.items() if k != "summary"},
                "agreement": res.agreement.table.to_dict(orient="records"),
                "omissions": res.omissions.table.to_dict(orient="records"),
            }
        )
    else:
        typer.echo(wrote((p for k, p in paths.items() if k != "summary"), out))


def register(app: typer.Typer) -> None:
    app.command("agree")(agree)
