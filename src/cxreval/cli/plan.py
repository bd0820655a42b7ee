"""``cxreval plan``: which studies an expert should relabel to settle which model is best, the power per budget,
and a ready reader study. Parses the options, calls :func:`cxreval.planning.plan_relabelling`, saves its
:class:`~cxreval.planning.RelabelPlanResult` and echoes."""

from __future__ import annotations

from pathlib import Path

import typer

from ..exceptions import InvalidParameterError
from ..labels import read_label_tables, read_prediction_tables
from ._common import (
    blank_state_option,
    check_folder_option,
    check_inputs,
    echo_json,
    findings_option,
    open_output,
    out_option,
    overwrite_option,
    progress,
    seed_option,
    split_list,
    state_encoding_option,
)

__all__ = ["register"]


def plan(
    predictions: list[Path] = typer.Option(..., "--predictions", "-p", help="Long prediction table(s): study_id, "
                                           "model, finding, score (at least two models; repeatable)."),
    labels: list[Path] = typer.Option(..., "--labels", "-l", help="Long label table(s): study_id, [patient_id,] "
                                      "finding, source, state (repeatable)."),
    reference: str = typer.Option(..., "--reference", help="The cheap source that labels every study (e.g. a report "
                                  "labeller)."),
    budget: int = typer.Option(..., "--budget", help="How many studies the expert can relabel: the length of "
                               "relabel.csv and of the reader study."),
    out: Path = out_option(),
    readers: str = typer.Option(None, "--readers", help="Further noisy sources, comma-separated (other labellers, "
                                "readers)."),
    anchor: str = typer.Option(None, "--anchor", help="A source whose labels are exact where given (an earlier "
                               "relabelling round): those studies are known and not planned again."),
    anchor_studies: Path = typer.Option(None, "--anchor-studies", help="A table with a study_id column (e.g. an "
                                        "earlier plan's relabel.csv): count the --anchor labels on these studies "
                                        "only (a relabelling simulated with a source that labels every study)."),
    images: Path = typer.Option(None, "--images", help="Folder of the images (<study_id>.png/.jpg/.dcm... or "
                                "<study_id>/<image>): the selected studies' images are copied into OUT/images/, so "
                                "that `cxreval reader init --study OUT/study.yaml` opens the study."),
    findings: list[str] = findings_option("Findings, comma-separated or repeated (default: every finding the "
                                          "reference labels and the predictions score)."),
    budgets: str = typer.Option(None, "--budgets", help="Budgets of power.csv, comma-separated (default 0, 25%, 50%, "
                                "75% and 100% of --budget)."),
    n_draws: int = typer.Option(200, "--n-draws", help="Monte Carlo draws of every study's truth and the model's "
                                "parameters (power.csv; the same draws for every budget)."),
    confidence_level: float = typer.Option(0.95, "--confidence-level", help="Level of the interval that decides "
                                           "whether the best model is separable from the runner-up."),
    seed: int = seed_option("Seed of the Monte Carlo draws."),
    state_encoding: str = state_encoding_option(),
    blank_state: str = blank_state_option(),
    overwrite: bool = overwrite_option(),
    json_out: bool = typer.Option(False, "--json", help="Print the written files and the power table as JSON."),
) -> None:
    """Plan an expert's relabelling: the studies whose label would most change which model is best.

    Writes relabel.csv (study_id, patient_id, priority 1 = first, expected_change, reason), power.csv (per
    finding and budget: the probability that the best model is separable from the runner-up after relabelling
    that many studies, and the method), auc.csv and comparison.csv (the current two-phase estimate), a reader
    study (study.yaml, images.csv and, with --images, images/), summary.md and run.json: the files of
    cxreval.planning.RelabelPlanResult.

    Example:

    \b
        cxreval plan -p predictions.csv -l labels.csv --reference chexpert_labeler --budget 100 --images imgs -o plan

    A second round, with the first round's expert labels (source expert) as the anchor:

    \b
        cxreval plan -p predictions.csv -l labels.csv -l expert.csv --reference chexpert_labeler --anchor expert --budget 50 -o plan2
    """
    from ..io import read_table
    from ..planning import plan_relabelling

    check_inputs(*[("--predictions", p) for p in predictions], *[("--labels", p) for p in labels],
                 ("--images", images), ("--anchor-studies", anchor_studies))
    check_folder_option("--images", images)
    inputs = [*predictions, *labels, *(p for p in (images, anchor_studies) if p is not None)]
    with open_output(out, overwrite=overwrite, inputs=inputs, meta={"seed": seed}) as d:
        with progress() as prog:
            res = plan_relabelling(
                read_prediction_tables(predictions)[0],
                read_label_tables(labels, state_encoding=state_encoding, blank_state=blank_state)[0],
                reference=reference, budget=budget, readers=split_list(readers, option="--readers"), anchor=anchor,
                anchor_studies=None if anchor_studies is None else read_table(anchor_studies, text=True),
                findings=split_list(findings, option="--findings"), budgets=_budgets(budgets), n_draws=n_draws,
                confidence_level=confidence_level, images=images, rng=seed, progress=prog)
        written = res.save(d)
    if json_out:
        echo_json({"files": {k: str(Path(out) / Path(v).name) for k, v in written.items()},
                   "power": res.power.drop(columns=["method"]).to_dict(orient="records")})
    else:
        typer.echo(f"wrote {', '.join(Path(p).name for p in written.values())} and summary.md to {out}; "
                   f"reader study: cxreval reader init --study {Path(out) / res.STUDY_FILE}")


def _budgets(value: str | None) -> list[int] | None:
    items = split_list(value, option="--budgets")
    if items is None:
        return None
    bad = [i for i in items if not (i.isascii() and i.isdigit())]  # ('²'.isdigit() is True, int('²') fails)
    if bad:
        raise InvalidParameterError(f"--budgets must be whole numbers (digits 0-9), comma-separated. Got {value!r}: "
                                    f"{bad[0]!r} is not one.")
    return [int(i) for i in items]


def register(app: typer.Typer) -> None:
    app.command("plan")(plan)
