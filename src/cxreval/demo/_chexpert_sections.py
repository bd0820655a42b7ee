"""The CheXpert test-set sections of ``cxreval demo``: the models against every reference, reader agreement,
fusion of the ground-truth readers, an expert's relabelling plan and the reader study."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from ..io._write import write_summary
from ..options import Design
from ._section_parts import _agreement_section, _auc_meta
from .data import (
    CHEXPERT_BENCH_READERS,
    CHEXPERT_COMPETITION,
    CHEXPERT_GT_READERS,
    CHEXPERT_MODELS,
    DemoContext,
    chexpert_labels,
    need,
    pinned,
)

__all__: list[str] = []


_CHEXPERT_EXPORTS = (("chexpert_test", "chexpert"), ("chexpert_test_predictions", "chexpert_predictions"))
"""The CheXpert datasets the CheXpert sections read, and the folder ``cxreval data export NAME --path ROOT -o
FOLDER`` writes (labels: consensus, 8 radiologists, 2 report labelers; predictions: model ``<name>`` from
``<name>_predictions.csv``)."""
PLAN_DRAWS = 400
"""Monte Carlo draws of the relabelling section's power curves. The draws are weighted, and on this test set few
of them count: at 100 draws Atelectasis rested on 2 draws in effect and Consolidation on 7, and their curves jumped
by up to 0.3 between budgets; at 400 every finding has at least 22 in effect and each point's Monte Carlo standard
error is at most 0.05 (the curves' ±2 SE bars). The cost grows faster than the draws: about 30 s of CPU per plan
at 400 on two cores, against 3 s at 100, twice in the section (first and second round)."""


def _chexpert_root(ctx: DemoContext, *, predictions: bool = False) -> Path:
    """The CheXpert test-set folder, with every file the sections read pinned (mirror, cache or GitHub)."""
    chexpert_labels(ctx)
    if predictions:
        for m in CHEXPERT_MODELS:
            pinned(ctx, f"chexpert_test/example_models/predictions/standard/{m}_predictions.csv")
    return pinned(ctx, "chexpert_test/groundtruth.csv").parent


def _chexpert_exports(
    ctx: DemoContext, tmp: Path, *, predictions: bool = False
) -> tuple[list[Path], list[str]]:
    """What ``cxreval data export chexpert_test --path ROOT -o chexpert`` (and, with ``predictions``, ``...
    chexpert_test_predictions ... -o chexpert_predictions``) write, into ``tmp``: the written tables, and those
    command lines."""
    import shlex

    from ..datasets import export_dataset

    root = _chexpert_root(ctx, predictions=predictions)
    paths, commands = [], []
    for name, sub in _CHEXPERT_EXPORTS[: 2 if predictions else 1]:
        res = export_dataset(name, root)
        (tmp / sub).mkdir()
        res.save(tmp / sub)
        paths.append(tmp / sub / f"{res.kind}.parquet")
        commands.append(f"cxreval data export {name} --path {shlex.quote(str(root))} -o {sub}")
    return paths, commands


def _sec_chexpert(ctx: DemoContext) -> str:
    """What ``cxreval data export chexpert_test/chexpert_test_predictions`` and ``cxreval rank --studies each``
    write, from the same files (the exact lines are the section's ``commands`` in run.json)."""
    import tempfile

    need("cxreval.classification", "classification", "cxreval classify")
    need("cxreval.ranking", "ranking", "cxreval rank")
    jb = need("cxreval.jobs", "the jobs of the commands", "cxreval rank")

    refs = ["consensus", *CHEXPERT_GT_READERS, *CHEXPERT_BENCH_READERS, "chexpert_labeler", "chexbert"]
    pairs = [("consensus", r) for r in refs[1:]]
    with tempfile.TemporaryDirectory() as tmp:
        (labels, preds), commands = _chexpert_exports(ctx, Path(tmp), predictions=True)
        res = jb.compare_references_files(
            preds,
            labels,
            references=refs,
            findings=list(CHEXPERT_COMPETITION),
            design=Design(studies="each"),
            resampling=ctx.resampling,
            pairs=pairs,
        )
    ctx.meta.update(_auc_meta(res.auc, vocabulary="CheXpert competition findings"))
    ctx.meta["commands"] = [
        *commands,
        "cxreval rank -p chexpert_predictions/predictions.parquet -l "
        f"chexpert/labels.parquet -r {','.join(refs)} -f {','.join(CHEXPERT_COMPETITION)} "
        "--studies each --pairs "
        + ",".join(f"{a}:{b}" for a, b in pairs)
        + f" --n-resamples {ctx.n_resamples} --seed {ctx.rng} -o chexpert_models",
    ]
    out = ctx.folder("chexpert_models")
    res.save(out, summaries=False)  # the tables of `cxreval rank -p`; the section's own summary.md
    n_studies = res.auc.plan.n_studies if res.auc.plan else ""
    write_summary(
        out,
        f"# CheXpert test set: 10 leaderboard models, {len(refs)} references\n\n"
        f"{n_studies} studies; references: {', '.join(refs)}; "
        f"{ctx.n_resamples} patient-bootstrap resamples, seed {ctx.rng}.\n\n"
        "The same files: the commands in run.json (`commands`), run in an empty folder.\n\n"
        + res.comparison.verdicts(),
    )
    return str(out)


def _chexpert_label_table(ctx: DemoContext) -> tuple[pd.DataFrame, list[str]]:
    """The labels ``cxreval data export chexpert_test --path ROOT -o chexpert`` writes, as the commands read
    ``chexpert/labels.parquet`` back; and that command line."""
    import tempfile

    from ..labels._files import read_label_tables

    with tempfile.TemporaryDirectory() as tmp:
        (path,), commands = _chexpert_exports(ctx, Path(tmp))
        table, _ = read_label_tables([path])
    return table, commands


def _sec_chexpert_agreement(ctx: DemoContext) -> str:
    """What ``cxreval agree --intersect --flow-pairs ...`` writes on the exported CheXpert labels."""
    labels, commands = _chexpert_label_table(ctx)
    pairs = [
        ("consensus", s)
        for s in (*CHEXPERT_GT_READERS, *CHEXPERT_BENCH_READERS, "chexpert_labeler", "chexbert")
    ]
    flow_pairs = [("consensus", "chexpert_labeler"), ("consensus", "bc4")]
    ctx.meta["commands"] = [
        *commands,
        "cxreval agree -l chexpert/labels.parquet --pairs "
        + ",".join(f"{a}:{b}" for a, b in pairs)
        + " --flow-pairs "
        + ",".join(f"{a}:{b}" for a, b in flow_pairs)
        + f" -f {','.join(CHEXPERT_COMPETITION)} --intersect -o chexpert_agreement",
    ]
    return _agreement_section(
        ctx,
        "chexpert_agreement",
        labels,
        pairs,
        flow_pairs=flow_pairs,
        studies="each",
        findings=list(CHEXPERT_COMPETITION),
        meta={
            "label_policy": "report labelers' blanks count as negative (not mentioned); weighted κ, "
            "Low/High κ over uncertain labels",
            "studies": "intersection of each pair",
            "vocabulary": "CheXpert competition findings",
            "findings": list(CHEXPERT_COMPETITION),
        },
        title="# CheXpert test set: reader and labeler agreement with the consensus\n\n5 competition findings; "
        "report labelers' blanks count as negative (not mentioned).\n\n",
    )


def _sec_chexpert_fusion(ctx: DemoContext) -> str:
    """What ``cxreval fuse --readers bc1,... --adjudicated consensus`` writes on the exported CheXpert labels."""
    fu = need("cxreval.fusion", "fusion", "cxreval fuse")
    from ..jobs import DEFAULT_FUSION_METHODS, fuse_and_compare

    # the unsupervised methods (the neural fusion is supervised: it needs the reference it is compared with)
    methods = [m for m in DEFAULT_FUSION_METHODS if m in fu.list_fusion()]
    labels, commands = _chexpert_label_table(ctx)
    res = fuse_and_compare(
        labels,
        list(CHEXPERT_GT_READERS),
        methods,
        adjudicated="consensus",
        findings=list(CHEXPERT_COMPETITION),
        rng=ctx.rng,
        studies="each",
        title="CheXpert test set: fusing the 5 ground-truth readers",
    )
    ctx.meta.update(
        {
            "readers": list(CHEXPERT_GT_READERS),
            "reference": "consensus (groundtruth.csv)",
            "vocabulary": "CheXpert competition findings",
            "methods": methods,
        }
    )
    ctx.meta["commands"] = [
        *commands,
        f"cxreval fuse -l chexpert/labels.parquet --readers "
        f"{','.join(CHEXPERT_GT_READERS)} --methods {','.join(methods)} --adjudicated consensus "
        f"-f {','.join(CHEXPERT_COMPETITION)} --seed {ctx.rng} -o chexpert_fusion",
    ]
    out = ctx.folder("chexpert_fusion")
    res.save(out)
    write_summary(
        out,
        res.summary() + "\n\nEach method "
        f"fuses readers {', '.join(CHEXPERT_GT_READERS)}; agreement with the published majority vote "
        "(groundtruth.csv).",
    )
    return str(out)


def _sec_chexpert_relabelling(ctx: DemoContext) -> str:
    """The closed loop on the CheXpert test set, the expert played by the 5-radiologist consensus: what ``cxreval
    plan`` writes from chexpert_labeler alone (``first_round``), then with the consensus revealed on the first round's
    100 studies (``--anchor consensus --anchor-studies``: ``second_round``, the two-phase estimate)."""
    import tempfile

    from ..labels._files import read_label_tables, read_prediction_tables

    pl = need("cxreval.planning", "relabelling plans", "cxreval plan")
    findings = list(CHEXPERT_COMPETITION)
    with tempfile.TemporaryDirectory() as tmp:
        (labels, preds), commands = _chexpert_exports(ctx, Path(tmp), predictions=True)
        table, _ = read_label_tables([labels])
        predictions, _ = read_prediction_tables([preds])
    opts = {
        "reference": "chexpert_labeler",
        "findings": findings,
        "budget": 100,
        "n_draws": PLAN_DRAWS,
        "rng": ctx.rng,
    }
    first = pl.plan_relabelling(predictions, table, **opts)
    second = pl.plan_relabelling(predictions, table, anchor="consensus", anchor_studies=first.table, **opts)
    line = (
        f"cxreval plan -p chexpert_predictions/predictions.parquet -l chexpert/labels.parquet --reference "
        f"chexpert_labeler -f {','.join(findings)} --budget 100 --n-draws {PLAN_DRAWS} --seed {ctx.rng}"
    )
    ctx.meta.update(
        {
            "reference": "chexpert_labeler",
            "expert": "consensus (5 radiologists), revealed on the first round's studies",
            "budget": 100,
            "n_draws": PLAN_DRAWS,
            "findings": findings,
        }
    )
    ctx.meta["commands"] = [
        *commands,
        f"{line} -o chexpert_relabelling/first_round",
        f"{line} --anchor consensus --anchor-studies chexpert_relabelling/first_round/relabel.csv "
        "-o chexpert_relabelling/second_round",
    ]
    out = ctx.folder("chexpert_relabelling")
    for name, res in (("first_round", first), ("second_round", second)):
        (out / name).mkdir()
        res.save(out / name)
    write_summary(
        out,
        "# CheXpert test set: plan an expert's relabelling, then the two-phase estimate\n\n"
        "`first_round/`: a sample of 100 studies drawn with known probabilities (favouring those whose labels sharpen the AUCs most), from "
        "chexpert_labeler alone, and the power per budget. `second_round/`: the consensus revealed on "
        "those 100 studies (the expert), the two-phase AUC estimate (`auc.csv`) and the next round's "
        f"plan. The power curves rest on {PLAN_DRAWS} Monte Carlo draws (`--n-draws`; the bars are ±2 Monte Carlo "
        "standard errors), and each round's summary.md says why a curve wobbles or falls. The commands in run.json "
        "(`commands`) write the same files in an empty folder.",
    )
    return str(out)


def _sec_chexpert_reader_study(ctx: DemoContext) -> str:
    """What ``cxreval mrmc`` writes on the exported CheXpert test set: the 10 models against the 3 benchmark
    radiologists under the consensus, the CheXpert labeler and the latent truth of the other sources."""
    import tempfile

    need("cxreval.mrmc", "reader studies", "cxreval mrmc")
    jb = need("cxreval.jobs", "the jobs of the commands", "cxreval mrmc")
    refs, latent = (
        ["consensus", "chexpert_labeler", "latent"],
        [*CHEXPERT_GT_READERS, "chexpert_labeler", "chexbert"],
    )
    findings = list(CHEXPERT_COMPETITION)
    with tempfile.TemporaryDirectory() as tmp:
        (labels, preds), commands = _chexpert_exports(ctx, Path(tmp), predictions=True)
        res = jb.evaluate_reader_study_files(
            [labels],
            references=refs,
            readers=list(CHEXPERT_BENCH_READERS),
            predictions=[preds],
            findings=findings,
            latent_sources=latent,
            n_resamples=ctx.n_resamples,
            rng=ctx.rng,
        )
    ctx.meta.update(
        {
            "readers": list(CHEXPERT_BENCH_READERS),
            "references": refs,
            "latent_sources": latent,
            "findings": findings,
        }
    )
    ctx.meta["commands"] = [
        *commands,
        "cxreval mrmc -l chexpert/labels.parquet --readers "
        f"{','.join(CHEXPERT_BENCH_READERS)} -p chexpert_predictions/predictions.parquet -r "
        f"{','.join(refs)} --latent-sources {','.join(latent)} -f {','.join(findings)} "
        f"--n-resamples {ctx.n_resamples} --seed {ctx.rng} -o chexpert_reader_study",
    ]
    out = ctx.folder("chexpert_reader_study")
    res.save(out)
    return str(out)
