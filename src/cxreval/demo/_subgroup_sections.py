"""The subgroup section of ``cxreval demo``: the NIH fold's 10 models by sex, age band, view and sex × view, what
``cxreval subgroups`` writes.

Three runs of the command, each into its own folder of the section (the section's folder holds its summary, so
that a report of it shows each run as its own section):

- ``nih_subgroups/nih_textmined/``: the 14 NIH findings on the 22,433 fold images under ``nih_textmined``;
- ``nih_subgroups/google_expert/``: Google's findings under ``nih_textmined`` and ``google_expert`` side by side on
  the images Google's experts relabelled (NIH labels and scores mapped by ``nih_to_google``), with the verdict
  where a gap changes sign or significance with the reference;
- ``nih_subgroups/calibration/``: the calibration of the 10 models, by view.

The gaps need no probabilities (the AUC and the rates at the threshold of specificity 0.9 read the scores' order
only), so the first two runs read the fold's files as they are. Calibration reads a score as a probability and
``cxreval subgroups`` refuses scores outside [0, 1]: ``dd_densenet121_v2_logits.csv`` holds logits, so the third
run reads the fold as the decision section does, exported with that model's scores mapped through the sigmoid, and
the section says so."""

from __future__ import annotations

import shlex
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from ..io._markdown import markdown_table
from ..io._write import write_summary
from ..options import Design, Resampling
from ._decision_sections import (
    _PREDICTIONS,
    LOGIT_MODELS,
    probability_export,
    probability_export_command,
)
from ._section_parts import _export_commands, _exported_labels
from .data import NIH_MODELS, DemoContext, metadata, need, nih_fold_folder

if TYPE_CHECKING:
    from ..subgroups import SubgroupResult

__all__: list[str] = []

KEY = "nih_subgroups"
BY = ("sex", "age_band", "view", "sex*view")
"""The attributes of the gaps: three metadata columns and one intersection."""
CALIBRATION_BY = ("view",)
"""The attribute of the calibration run (calibration per view beside every study's: the gaps of this run repeat
the first run's view rows)."""
N_RESAMPLES = 200
"""The section's bootstrap replicates at most: 10 models × 14 findings × 13 groups on 22,433 images take about
50 s at 200 (``python bench/run.py subgroups:nih`` runs the same table at 1,000 in about 4 minutes); the Wald
p-values and percentile intervals need the bootstrap standard error, which 200 replicates give to about 5%."""
GOOGLE = "google_expert"
TEXTMINED = "nih_textmined"
_META_EXPORT = ("chestxray14_metadata", "meta")
_TITLES = {
    "gaps": f"NIH fold, {TEXTMINED}: subgroup gaps of the 10 models on every image",
    "both": f"NIH fold, {TEXTMINED} vs {GOOGLE}: subgroup gaps on the images Google's experts relabelled",
    "calibration": f"NIH fold, {TEXTMINED}: calibration of the 10 models",
}
"""The title of each run's ``summary.md`` (the report's section title)."""
_LOGITS_MAPPED = (
    f"{', '.join(LOGIT_MODELS)} holds logits, not probabilities: calibration reads a score as the probability of "
    "the finding (a calibration in subgroups refuses scores outside [0, 1]), so the calibration run reads that "
    "model's scores mapped through the sigmoid 1/(1 + exp(-x)) by the nih_predictions export's `--logits sigmoid` "
    "(its calibration is that of the sigmoid of its logits)"
)


def _quote(args: list[str]) -> str:
    return " ".join(shlex.quote(a) for a in args)


def _exported_metadata(ctx: DemoContext, tmp: Path) -> Path:
    """What ``cxreval data export chestxray14_metadata -o meta`` writes, into ``tmp``: the metadata file."""
    from ..datasets import export_dataset, nih

    metadata(ctx, nih.DATA_ENTRY)
    name, sub = _META_EXPORT
    (tmp / sub).mkdir()
    export_dataset(name, cache_dir=ctx.cache_dir).save(tmp / sub)
    return tmp / sub / "metadata.csv"


def _n_images(table: pd.DataFrame) -> int:
    """The images one attribute's groups (its ``(no value)`` row included) hold together, the most over the models
    and findings."""
    auc = table[table["metric"] == "auc"]
    return int(auc.groupby(["model", "finding", "attribute"])["n_studies"].sum().max())


def _changes(verdicts: pd.DataFrame) -> pd.DataFrame:
    """The AUC and FNR gaps of the two-reference run whose sign or significance changes with the reference."""
    v = verdicts[
        verdicts["metric"].isin(["auc", "fnr"])
        & verdicts["verdict"].isin(["sign changes", "significance changes"])
    ]
    cols = ["model", "finding", "attribute", "group", "metric", "verdict"]
    cols += [f"gap_{r}" for r in (TEXTMINED, GOOGLE)] + [f"pvalue_holm_{r}" for r in (TEXTMINED, GOOGLE)]
    return v[cols]


def _counts(table: pd.DataFrame) -> pd.DataFrame:
    """Per reference, attribute and metric (AUC, FNR): the rows, the estimable ones and the significant ones."""
    t = table[table["metric"].isin(["auc", "fnr"])]
    return (
        t.groupby(["reference", "attribute", "metric"], sort=True)
        .agg(rows=("estimable", "size"), estimable=("estimable", "sum"), significant=("significant", "sum"))
        .reset_index()
    )


def _calibration_table(cal: pd.DataFrame) -> pd.DataFrame:
    """Every study's calibration per model, averaged over the findings (the per-finding rows: calibration.csv)."""
    c = cal[cal["attribute"] == "all"]
    cols = ["ece_l2_debiased", "brier", "intercept", "slope"]
    return c.groupby("model", sort=True)[cols].mean().reset_index().sort_values("ece_l2_debiased")


def _summary(
    ctx: DemoContext,
    n: int,
    seconds: float,
    gaps: SubgroupResult,
    both: SubgroupResult,
    cal: SubgroupResult,
    n_models: int,
) -> str:
    changes = _changes(both.verdicts)
    lines = [
        "# NIH fold: subgroup gaps of the 10 models under two references, and their calibration",
        "",
        f"Attributes: {', '.join(BY)} (metadata of `cxreval data export chestxray14_metadata`); the AUC, and "
        "sensitivity, specificity, FNR (the under-diagnosis rate) and selection rate at the threshold of "
        "specificity 0.9 of each model, finding and reference; each group against the rest of the images. "
        f"{n} patient-bootstrap resamples (one plan for every model, finding and reference), seed {ctx.rng}; "
        f"Holm across the groups of an attribute; a gap needs {gaps.min_cases} cases of each class it counts "
        f"in the group and in the rest, else its row says why it is not estimable. This section ran in "
        f"{seconds:.0f} s.",
        "",
        "The same files: the commands in run.json (`commands`), run in an empty folder.",
        "",
        f"- `{TEXTMINED}/`: the 14 NIH findings on all "
        f"{_n_images(gaps.table):,} fold images "
        f"under {TEXTMINED}.",
        f"- `{GOOGLE}/`: Google's findings under {TEXTMINED} and {GOOGLE} side by side on the images both "
        "label (NIH labels and scores mapped by the finding map nih_to_google); `verdicts.csv` says where a gap "
        "changes sign or significance with the reference. Few images: wide intervals.",
        f"- `calibration/`: reliability bins, debiased ECE with its interval, Brier score and its decomposition, "
        f"calibration intercept and slope per model and finding (every image and by view), {TEXTMINED}; "
        f"all {n_models} models; {_LOGITS_MAPPED}.",
        "",
        "A gap measured against text-mined labels includes the labeller's own misses: where the gap's "
        "significance changes with the reference, the text-mined gap may be partly the labeller's.",
        "",
        f"## Gaps per reference, attribute and metric ({TEXTMINED}, all images)",
        "",
        markdown_table(_counts(gaps.table)),
        "",
        f"## Gaps per reference, attribute and metric ({TEXTMINED} and {GOOGLE}, Google's images)",
        "",
        markdown_table(_counts(both.table)),
        "",
        f"## AUC and FNR gaps that change with the reference ({len(changes)})",
        "",
        markdown_table(changes, floatfmt="{:.3g}") if len(changes) else "None.",
        "",
        f"## Calibration ({TEXTMINED}, every image; mean over the 14 findings)",
        "",
        markdown_table(_calibration_table(cal.calibration), floatfmt="{:.3g}"),
        "",
    ]
    return "\n".join(lines)


def _sec_nih_subgroups(ctx: DemoContext) -> str:
    """What ``cxreval data export`` and ``cxreval subgroups`` write for the NIH fold (the exact lines are the
    section's ``commands`` in run.json)."""
    need("cxreval.subgroups", "subgroups", "cxreval subgroups")
    jb = need("cxreval.jobs", "the jobs of the commands", "cxreval subgroups")
    t0 = time.perf_counter()
    folder = nih_fold_folder(ctx)
    n = min(ctx.n_resamples, N_RESAMPLES)
    resampling = Resampling(n_resamples=n, rng=ctx.rng)
    common = ["-m", f"{_META_EXPORT[1]}/metadata.csv", "--n-resamples", str(n), "--seed", str(ctx.rng)]
    by = ["--by", ",".join(BY), "--no-calibration"]
    both_refs = f"{TEXTMINED},{GOOGLE}"
    args = {
        "gaps": ["-p", str(folder), "-l", "nih/labels.parquet", "-r", TEXTMINED, *by, *common],
        "both": [
            *["-p", str(folder), "-l", "nih/labels.parquet", "-l", "google/labels.parquet", "-r", both_refs],
            *["--finding-map", "nih_to_google", "--studies", "common", *by, *common],
        ],
        "calibration": [
            *["-p", f"{_PREDICTIONS}/predictions.parquet"],
            *["-l", "nih/labels.parquet", "-r", TEXTMINED, "--by", ",".join(CALIBRATION_BY), *common],
        ],
    }
    with tempfile.TemporaryDirectory() as tmp:
        nih_labels, google_labels = _exported_labels(ctx, Path(tmp))
        meta = _exported_metadata(ctx, Path(tmp))
        probabilities = probability_export(folder, Path(tmp))[0]
        runs: dict[str, tuple[Path, Path | list[Path], tuple[str, ...], dict[str, Any]]] = {
            "gaps": (folder, nih_labels, BY, {"references": [TEXTMINED], "calibration": False}),
            "both": (
                folder,
                [nih_labels, google_labels],
                BY,
                {
                    "references": both_refs.split(","),
                    "design": Design(finding_map="nih_to_google", studies="common"),
                    "calibration": False,
                },
            ),
            "calibration": (probabilities, nih_labels, CALIBRATION_BY, {"references": [TEXTMINED]}),
        }
        results = {
            k: jb.evaluate_subgroups_files(p, labels, meta, by=list(by), resampling=resampling, **options)
            for k, (p, labels, by, options) in runs.items()
        }
    gaps, both, cal = results.values()
    outs = {"gaps": f"{KEY}/{TEXTMINED}", "both": f"{KEY}/{GOOGLE}", "calibration": f"{KEY}/calibration"}
    ctx.meta.update(
        {
            "attributes": list(BY),
            "n_resamples": n,
            "references": [TEXTMINED, GOOGLE],
            "operating_point": gaps.operating_point,
            "logit_models": list(LOGIT_MODELS),
            "calibration": _LOGITS_MAPPED,
            "commands": [
                *_export_commands(),
                f"cxreval data export {_META_EXPORT[0]} -o {_META_EXPORT[1]}",
                probability_export_command(folder),
                *(
                    f"cxreval subgroups {_quote(args[k])} -o {outs[k]}"
                    for k in ("gaps", "both", "calibration")
                ),
            ],
        }
    )
    out = ctx.folder(KEY)
    for k, res in results.items():
        res.save(ctx.folder(outs[k]))
        write_summary(  # the command's summary under a title that says which run it is
            ctx.out / outs[k], f"# {_TITLES[k]}\n\n" + res.summary().replace("# ", "## ", 1)
        )
    write_summary(
        out,
        _summary(ctx, n, time.perf_counter() - t0, gaps, both, cal, len(NIH_MODELS)),
    )
    return str(out)
