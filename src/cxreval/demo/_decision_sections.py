"""The decision section of ``cxreval demo``: the NIH fold's 10 models at two operating points (specificity 0.9 and
Youden's J) with patient-bootstrap intervals, and their decision curves (net benefit against treating all and
treating none), against the text-mined reference.

A decision curve reads a score as the probability of the finding, and ``dd_densenet121_v2_logits.csv`` holds
logits: the section reads the fold as ``cxreval data export nih_predictions --logits sigmoid`` writes it, that
model's scores mapped through ``1 / (1 + exp(-x))`` (the export's summary names it). The sigmoid keeps the order of
the scores (no two of its scores meet), so its AUCs and the counts at the operating points are those of the logits;
its thresholds are probabilities."""

from __future__ import annotations

import tempfile
from pathlib import Path

from ..io._write import write_summary
from ..options import Design, Resampling
from ._section_parts import _export_commands, _exported_labels
from .data import NIH_MODELS, DemoContext, need, pinned

__all__: list[str] = []

LOGIT_MODELS = ("dd_densenet121_v2_logits",)
"""NIH fold models whose scores are logits, mapped through the sigmoid for the section."""
OPERATING_POINTS = ("spec=0.9", "youden")
DECISION_CURVE = "0.01:0.5:0.01"
"""Threshold probabilities of the decision curves: 1% to 50% (a finding's prevalence in the fold is 0.2%, Hernia, to
18%, Infiltration)."""
REFERENCE = "nih_textmined"
N_RESAMPLES = 200
"""The section's bootstrap replicates at most (fewer than the demo's: every replicate chooses each threshold again on
22,433 images × 10 models × 14 findings)."""
_PREDICTIONS = "nih-probs"
"""The folder ``cxreval data export nih_predictions --logits sigmoid -o`` writes in the recorded commands."""


def probability_export(folder: Path, tmp: Path) -> tuple[Path, list[str]]:
    """What ``cxreval data export nih_predictions --path FOLDER --logits sigmoid -o nih-probs`` writes, into
    ``tmp``: its ``predictions.parquet``, and the models it mapped through the sigmoid."""
    from ..datasets import export_dataset

    probs = export_dataset("nih_predictions", folder, logits="sigmoid")
    preds = tmp / _PREDICTIONS / "predictions.parquet"
    preds.parent.mkdir()
    probs.table.to_parquet(preds, index=False)  # the table the export writes (its CSV twin is not read)
    return preds, [n.split(":")[0] for n in probs.report.notes if "sigmoid" in n]


def probability_export_command(folder: Path) -> str:
    """The recorded command line of :func:`probability_export`."""
    return " ".join(
        ["cxreval", "data", "export", "nih_predictions", "--path", str(folder)]
        + ["--logits", "sigmoid", "-o", _PREDICTIONS]
    )


def _sec_nih_decision(ctx: DemoContext) -> str:
    """What ``cxreval data export chestxray14``, ``cxreval data export nih_predictions --logits sigmoid`` and
    ``cxreval classify --operating-point spec=0.9 --operating-point youden --decision-curve 0.01:0.5:0.01`` write for
    the NIH fold (the exact lines are the section's ``commands`` in run.json)."""
    need("cxreval.classification", "classification", "cxreval classify")
    jb = need("cxreval.jobs", "the jobs of the commands", "cxreval classify")
    folder = pinned(ctx, f"nih_fold_predictions/{NIH_MODELS[0]}.csv").parent
    for model in NIH_MODELS[1:]:
        pinned(ctx, f"nih_fold_predictions/{model}.csv")
    n = min(ctx.n_resamples, N_RESAMPLES)
    with tempfile.TemporaryDirectory() as tmp:
        nih_labels = _exported_labels(ctx, Path(tmp))[0]
        preds, mapped = probability_export(folder, Path(tmp))
        res = jb.evaluate_classifiers_files(
            preds,
            nih_labels,
            references=[REFERENCE],
            design=Design(studies="common"),
            resampling=Resampling(n_resamples=n, rng=ctx.rng),
            operating_points=list(OPERATING_POINTS),
            decision_curve=DECISION_CURVE,
        )
    command = (
        " ".join(
            ["cxreval", "classify", "-p", f"{_PREDICTIONS}/predictions.parquet", "-l", "nih/labels.parquet"]
            + ["-r", REFERENCE]
        )
        + " "
        + " ".join(f"--operating-point {p}" for p in OPERATING_POINTS)
        + f" --decision-curve {DECISION_CURVE} --n-resamples {n} --seed {ctx.rng} -o nih_decision"
    )
    ctx.meta.update(
        {
            "reference": REFERENCE,
            "operating_points": list(OPERATING_POINTS),
            "decision_curve": DECISION_CURVE,
            "logit_models": list(LOGIT_MODELS),
            "logits": f"mapped through the sigmoid 1/(1 + exp(-x)): {', '.join(mapped)}",
            "commands": [
                _export_commands()[0],
                probability_export_command(folder),
                command,
            ],
        }
    )
    out = ctx.folder("nih_decision")
    res.save(out)
    ops = res.operating_points
    write_summary(
        out,
        f"# NIH fold: the 10 models at two operating points and their decision curves ({REFERENCE})\n\n"
        f"{', '.join(mapped)} holds logits: its scores are mapped through the sigmoid 1/(1 + exp(-x)) into "
        "probabilities (the `--logits sigmoid` option of the `nih_predictions` data export), as a decision curve reads a "
        "score as the probability of the finding. The sigmoid keeps the order of the scores, so the model's AUCs "
        "and its counts at the operating points are those of its logits; its threshold is a probability. "
        "Net benefit assumes the scores are calibrated probabilities (a model that over- or under-states risk "
        "moves along the threshold axis). The operating points (specificity 0.9, Youden's J) are chosen on the "
        f"ROC curve; {n} patient-bootstrap resamples, seed {ctx.rng}.\n\n"
        "The same files: the commands in run.json (`commands`), run in an empty folder.\n\n"
        + (ops.summary().replace("# ", "## ", 1) if ops is not None else ""),
    )
    return str(out)
