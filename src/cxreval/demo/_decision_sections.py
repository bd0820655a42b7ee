"""The decision section of ``cxreval demo``: the NIH fold's 10 models at two operating points (specificity 0.9 and
Youden's J) with patient-bootstrap intervals, against the text-mined reference.

The decision curve is not drawn here, and the section says why: ``dd_densenet121_v2_logits.csv`` holds logits, not
probabilities, net benefit reads a score as a probability (``cxreval classify --decision-curve`` refuses scores
outside [0, 1]), and the command reads the fold as one folder of ``<model>.csv`` files, so it cannot leave one
model out. The two operating points choose their threshold from the ROC curve, which a monotone map of the scores
leaves unchanged: they hold for the logit model too (its ``threshold`` is a logit)."""

from __future__ import annotations

import tempfile
from pathlib import Path

from ..io._write import write_summary
from ..options import Design, Resampling
from ._section_parts import _export_commands, _exported_labels
from .data import NIH_MODELS, DemoContext, need, pinned

__all__: list[str] = []

LOGIT_MODELS = ("dd_densenet121_v2_logits",)
"""NIH fold models whose scores are logits, not probabilities."""
OPERATING_POINTS = ("spec=0.9", "youden")
REFERENCE = "nih_textmined"
N_RESAMPLES = 200
"""The section's bootstrap replicates at most (fewer than the demo's: every replicate chooses each threshold again on 22,433
images × 10 models × 14 findings; 200 keep the section near 30 s)."""
_WHY_NO_CURVE = (
    f"not drawn: {', '.join(LOGIT_MODELS)} holds logits, not probabilities; a decision curve reads a score as the "
    "probability of the finding (a decision curve in classify refuses scores outside [0, 1]) and the NIH fold "
    "is read as one folder of <model>.csv files"
)


def _sec_nih_decision(ctx: DemoContext) -> str:
    """What ``cxreval data export chestxray14`` and ``cxreval classify --operating-point spec=0.9 --operating-point
    youden`` write for the NIH fold (the exact lines are the section's ``commands`` in run.json)."""
    need("cxreval.classification", "classification", "cxreval classify")
    jb = need("cxreval.jobs", "the jobs of the commands", "cxreval classify")
    folder = pinned(ctx, f"nih_fold_predictions/{NIH_MODELS[0]}.csv").parent
    for model in NIH_MODELS[1:]:
        pinned(ctx, f"nih_fold_predictions/{model}.csv")
    n = min(ctx.n_resamples, N_RESAMPLES)
    with tempfile.TemporaryDirectory() as tmp:
        nih_labels = _exported_labels(ctx, Path(tmp))[0]
        res = jb.evaluate_classifiers_files(
            folder,
            nih_labels,
            references=[REFERENCE],
            design=Design(studies="common"),
            resampling=Resampling(n_resamples=n, rng=ctx.rng),
            operating_points=list(OPERATING_POINTS),
        )
    command = (
        " ".join(["cxreval", "classify", "-p", str(folder), "-l", "nih/labels.parquet", "-r", REFERENCE])
        + " "
        + " ".join(f"--operating-point {p}" for p in OPERATING_POINTS)
        + f" --n-resamples {n} --seed {ctx.rng} -o nih_decision"
    )
    ctx.meta.update(
        {
            "reference": REFERENCE,
            "operating_points": list(OPERATING_POINTS),
            "logit_models": list(LOGIT_MODELS),
            "decision_curve": _WHY_NO_CURVE,
            "commands": [_export_commands()[0], command],
        }
    )
    ctx.missing.append(
        (
            "NIH fold: decision curves",
            _WHY_NO_CURVE,
            command.replace(" -o nih_decision", " --decision-curve 0.01:0.5:0.01 -o nih_decision_curve"),
            "pass a folder of the probability models only (or the logit model's scores through the sigmoid)",
        )
    )
    out = ctx.folder("nih_decision")
    res.save(out)
    ops = res.operating_points
    write_summary(
        out,
        f"# NIH fold: the 10 models at two operating points ({REFERENCE})\n\n"
        f"Decision curves {_WHY_NO_CURVE}. The operating points (specificity 0.9, Youden's J) are chosen on the ROC "
        f"curve, which the sigmoid leaves unchanged: {', '.join(LOGIT_MODELS)}'s threshold is a logit. "
        f"{n} patient-bootstrap resamples, seed {ctx.rng}.\n\n"
        "The same files: the commands in run.json (`commands`), run in an empty folder.\n\n"
        + (ops.summary().replace("# ", "## ", 1) if ops is not None else ""),
    )
    return str(out)
