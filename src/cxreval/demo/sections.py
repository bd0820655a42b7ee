"""The sections of ``cxreval demo`` (:data:`SECTIONS`): each a function of the :class:`~cxreval.demo.data.DemoContext`
that calls the analysis library on real public data and saves its results into ``OUT/<section>/``, declared with
the ``cxreval`` commands that write the same files. :func:`cxreval.demo.run_demo` runs them."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

from ..io._write import write_summary
from .data import (
    CHEXPERT_BENCH_READERS,
    CHEXPERT_COMPETITION,
    CHEXPERT_GT_READERS,
    CHEXPERT_MODELS,
    NIH_MODELS,
    RERUN,
    DemoContext,
    NotBuilt,
    chexpert_labels,
    metadata,
    mirror_only,
    need,
    offline_hint,
    pinned,
)

if TYPE_CHECKING:
    from ..agreement import AgreementTableResult
    from ..stats import AUCResult

__all__: list[str] = []

log = logging.getLogger(__name__)


# ------------------------------------------------------------------------------------------------
# sections
# ------------------------------------------------------------------------------------------------


def _auc_meta(res: AUCResult, *, vocabulary: str) -> dict[str, object]:
    """run.json parameters of an AUC evaluation (bootstrap, CI, label policy, vocabulary)."""
    return {
        "n_resamples": res.n_resamples,
        "confidence_level": res.confidence_level,
        "ci_method": "percentile",
        "bootstrap_unit": "patient",
        "label_policy": f"uncertain labels: {res.policy}; not mentioned counts as negative",
        "vocabulary": vocabulary,
        "findings": list(res.findings),
        "references": list(res.references),
    }


def _pair_drops(res: AgreementTableResult) -> str:
    """Markdown lines saying, per pair, how many studies only one source labels (not compared)."""
    lines = ["Sources are compared on the studies both label (studies='each', CLI `--intersect`):", ""]
    for p in res.pairs:
        lines.append(
            f"- {p.pair}: {p.n_studies} common studies; {p.n_only_a} only in "
            f"{p.source_a}, {p.n_only_b} only in {p.source_b} (not compared)"
        )
    return "\n".join(lines) + "\n"


def _sec_audit(ctx: DemoContext) -> str:
    au = need("cxreval.datasets.audit", "ChestX-ray14 audit", "cxreval data audit chestxray14 --json")
    from ..datasets.nih import DATA_ENTRY

    entry = metadata(ctx, DATA_ENTRY)
    split_dir = None
    try:
        lists = [
            pinned(ctx, "chestxray14/official_test_list.txt"),
            pinned(ctx, "chestxray14/official_train_val_list.txt"),
        ]
        if lists[0].parent == lists[1].parent:
            split_dir = lists[0].parent
    except NotBuilt as exc:
        log.info("official split lists unavailable (%s); auditing without a split", exc.reason)
        ctx.missing.append(
            (
                "ChestX-ray14 audit: official split and patient leakage",
                f"not checked: the official split lists were not available ({exc.reason}); "
                'audit.json has "split": null and only the counts are shown',
                RERUN,
                exc.hint,
            )
        )
    res = au.audit_chestxray14(
        path=entry, bbox_path=metadata(ctx, au.BBOX_FILE), split_dir=split_dir, cache_dir=ctx.cache_dir
    )
    ctx.meta.update(
        {"split_lists": "official (train_val_list / test_list)" if split_dir else "not available"}
    )
    ctx.meta["commands"] = [
        "cxreval data audit chestxray14"
        + (f" --split-dir {split_dir}" if split_dir else "")
        + " -o chestxray14_audit"
    ]
    out = ctx.folder("chestxray14_audit")
    res.save(out)
    return str(out)


def _agreement_section(
    ctx: DemoContext,
    name: str,
    labels: pd.DataFrame,
    pairs: list[tuple[str, str]],
    *,
    title: str = "",
    meta: dict[str, object] | None = None,
    **options: object,
) -> str:
    """Save what ``cxreval agree --labels L --pairs PAIRS [options]`` writes into the section folder ``name``
    (:func:`cxreval.agreement.compare_sources`, the command's job, with the same ``options``: ``flow_pairs``,
    ``finding_map``...).

    ``meta`` goes to the section's run.json; with ``title`` (Markdown), ``summary.md`` is the title followed by the
    studies each pair compared (:func:`_pair_drops`), without it the folder holds the tables only. Returns the
    folder.
    """
    ag = need("cxreval.agreement", "agreement", "cxreval agree")
    ctx.meta.update(meta or {})
    res = ag.compare_sources(labels, pairs, **options)
    out = ctx.folder(name)
    res.save_tables(out)
    if title:
        write_summary(out, title + _pair_drops(res.agreement))
    return str(out)


_EXPORTS = (("chestxray14", "nih"), ("google2019", "google"))
"""The datasets the NIH-vs-Google sections read, and the folder ``cxreval data export NAME -o FOLDER`` writes."""


def _export_commands() -> list[str]:
    return [f"cxreval data export {name} -o {sub}" for name, sub in _EXPORTS]


def _exported_labels(ctx: DemoContext, tmp: Path) -> list[Path]:
    """What ``cxreval data export chestxray14 -o nih`` and ``... google2019 -o google`` write, into ``tmp``: the
    label files the NIH-vs-Google sections read."""
    from ..datasets import export_dataset, google, nih

    metadata(ctx, google.GOOGLE_FILE)
    metadata(ctx, nih.DATA_ENTRY)
    paths = []
    for name, sub in _EXPORTS:
        (tmp / sub).mkdir()
        export_dataset(name, cache_dir=ctx.cache_dir).save(tmp / sub)
        paths.append(tmp / sub / "labels.parquet")
    return paths


def _sec_nih_google_agreement(ctx: DemoContext) -> str:
    """What ``cxreval agree --finding-map nih_to_google --studies common`` writes on the exported labels."""
    import tempfile

    need("cxreval.agreement", "agreement", "cxreval agree")
    from ..finding_maps import NIH_TO_GOOGLE
    from ..labels._files import read_label_tables

    with tempfile.TemporaryDirectory() as tmp:
        table, _ = read_label_tables(_exported_labels(ctx, Path(tmp)))
    n = table.loc[table["source"] == "google_expert", "study_id"].nunique()
    ctx.meta["commands"] = [
        *_export_commands(),
        "cxreval agree -l nih/labels.parquet -l google/labels.parquet "
        "--finding-map nih_to_google --studies common --pairs google_expert:nih_textmined "
        "-o nih_vs_google_agreement",
    ]
    return _agreement_section(
        ctx,
        "nih_vs_google_agreement",
        table,
        [("google_expert", "nih_textmined")],
        studies="common",
        finding_map=NIH_TO_GOOGLE,
        meta={
            "label_policy": "weighted κ over the ordered states; Low/High κ resolve uncertain labels "
            "pessimistically/optimistically",
            "studies": "common: per finding, the studies both sources label",
            "vocabulary": "Google's expert findings (NIH mapped by the finding map nih_to_google)",
        },
        title=f"# NIH text-mined vs Google expert labels\n\n{n} ChestX-ray14 images with Google's adjudicated "
        "expert labels; NIH labels mapped to Google's findings with the finding map nih_to_google "
        "(cxreval.finding_maps.NIH_TO_GOOGLE: OR of the NIH findings).\n\n",
    )


def _sec_nih_models(ctx: DemoContext) -> str:
    """What ``cxreval data export chestxray14/google2019`` and ``cxreval rank --finding-map nih_to_google --studies
    common`` write, from the same files (the exact lines are the section's ``commands`` in run.json)."""
    import tempfile

    need("cxreval.classification", "classification", "cxreval classify")
    need("cxreval.ranking", "ranking", "cxreval rank")
    jb = need("cxreval.jobs", "the jobs of the commands", "cxreval rank")
    folder = pinned(ctx, f"nih_fold_predictions/{NIH_MODELS[0]}.csv").parent
    for model in NIH_MODELS[1:]:
        pinned(ctx, f"nih_fold_predictions/{model}.csv")
    refs = "nih_textmined,google_expert"
    opts = [
        "-r",
        refs,
        "--finding-map",
        "nih_to_google",
        "--studies",
        "common",
        "--n-resamples",
        str(ctx.n_resamples),
        "--seed",
        str(ctx.rng),
    ]
    with tempfile.TemporaryDirectory() as tmp:
        labels = _exported_labels(ctx, Path(tmp))
        res = jb.compare_references_files(
            folder,
            labels,
            references=refs.split(","),
            finding_map="nih_to_google",
            studies="common",
            n_resamples=ctx.n_resamples,
            rng=ctx.rng,
        )
    auc = res.auc
    ctx.meta.update(
        _auc_meta(
            auc,
            vocabulary="Google's expert findings (NIH labels and scores mapped by the finding "
            "map nih_to_google)",
        )
    )
    ctx.meta["commands"] = [
        *_export_commands(),
        f"cxreval rank -p {folder} -l nih/labels.parquet -l "
        "google/labels.parquet " + " ".join(opts) + " -o nih_models",
    ]
    out = ctx.folder("nih_models")
    res.save(out, summaries=False)  # the tables of `cxreval rank -p`; the section's own summary.md
    write_summary(
        out,
        f"# 10 NIH models: text-mined vs expert reference\n\n{auc.plan.n_studies if auc.plan else ''} "
        f"images ({auc.plan.n_patients if auc.plan else ''} patients) carrying both references; "
        f"patient-level bootstrap, {ctx.n_resamples} resamples, seed {ctx.rng}. {res.design()}\n\n"
        "The same files: the commands in run.json (`commands`), run in an empty folder.\n\n"
        + res.comparison.verdicts(),
    )
    return str(out)


_CHEXPERT_EXPORTS = (("chexpert_test", "chexpert"), ("chexpert_test_predictions", "chexpert_predictions"))
"""The CheXpert datasets the CheXpert sections read, and the folder ``cxreval data export NAME --path ROOT -o
FOLDER`` writes (labels: consensus, 8 radiologists, 2 report labelers; predictions: model ``<name>`` from
``<name>_predictions.csv``)."""


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
            studies="each",
            pairs=pairs,
            n_resamples=ctx.n_resamples,
            rng=ctx.rng,
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
        "n_draws": 100,
        "rng": ctx.rng,
    }
    first = pl.plan_relabelling(predictions, table, **opts)
    second = pl.plan_relabelling(
        predictions, table, anchor="consensus", anchor_studies=list(first.table["study_id"]), **opts
    )
    line = (
        f"cxreval plan -p chexpert_predictions/predictions.parquet -l chexpert/labels.parquet --reference "
        f"chexpert_labeler -f {','.join(findings)} --budget 100 --n-draws 100 --seed {ctx.rng}"
    )
    ctx.meta.update(
        {
            "reference": "chexpert_labeler",
            "expert": "consensus (5 radiologists), revealed on the first round's studies",
            "budget": 100,
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
        "`first_round/`: the 100 studies whose label would most change which model is best, from "
        "chexpert_labeler alone, and the power per budget. `second_round/`: the consensus revealed on "
        "those 100 studies (the expert), the two-phase AUC estimate (`auc.csv`) and the next round's "
        "plan. The commands in run.json (`commands`) write the same files in an empty folder.",
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


def _sec_xqa(ctx: DemoContext) -> str:
    rk = need("cxreval.ranking._published", "XQA published tables", "cxreval rank --auc-table xqa")
    jb = need("cxreval.jobs", "the jobs of the commands", "cxreval rank --auc-table xqa")
    ctx.meta.update(
        {
            "data": "the XQA paper's published AUC tables 16-25 and rank-correlation tables 26-29 "
            "(shipped with cxreval)",
            "n_resamples": 0,
            "ci_method": "none here (point values from published AUCs; the paper's bootstrap mean and sd "
            "are shown beside them)",
        }
    )
    res = jb.compare_auc_table_file(rk.XQA_AUC_TABLES)  # what `cxreval rank --auc-table xqa` runs
    ctx.meta["commands"] = ["cxreval rank --auc-table xqa -o xqa_published"]
    out = ctx.folder("xqa_published")
    res.save(out, summaries=False)
    write_summary(
        out,
        "# The XQA paper's published AUCs and rank correlations\n\nModel rankings and rank "
        "correlations (SRCC/KRCC) recomputed from the AUCs the paper publishes, beside the paper's own "
        "bootstrap mean and sd of each correlation (tables named in Methods).",
    )
    return str(out)


def _sec_localization(ctx: DemoContext) -> str:
    loc = need("cxreval.localization", "localization synthetic study", "cxreval synth")
    res = loc.simulate_localization_study(
        rng=0, per_size=60
    )  # what `cxreval synth --seed 0 --per-size 60` runs
    ctx.meta.update(
        {
            "seed": 0,
            "study": "synthetic localization study: simulated heat maps scored against exact "
            "reference boxes (ChestX-ray8 protocol)",
            "commands": ["cxreval synth --seed 0 --per-size 60 -o localization_synthetic"],
        }
    )
    out = ctx.folder("localization_synthetic")
    res.save(out)
    write_summary(
        out,
        "# Localization protocol: a synthetic study with exact boxes\n\nSimulated heat maps, random "
        "seed 0, "
        f"{res.synthetic.per_size} images per size class; 'finding' is the size class of the reference "
        "boxes.",
    )
    return str(out)


def _sec_localization_real(ctx: DemoContext) -> str:
    loc = need("cxreval.localization", "localization on real boxes", "cxreval synth")
    bf = need("cxreval.datasets.boxes", "box file reader", "cxreval data fetch")
    import shlex

    from ..datasets.audit import BBOX_FILE

    boxes = bf.read_box_file(metadata(ctx, BBOX_FILE)).table  # what `cxreval synth --real-boxes` reads
    out = ctx.folder("localization_real_boxes")
    folder = None
    try:
        folder = mirror_only(ctx, "images/nih")
        overlays = need("cxreval.localization._overlays", "localization on real boxes", "cxreval synth")
        images = overlays.boxed_images(folder, boxes)
    except NotBuilt as exc:
        images = []
        why = exc.reason
    else:
        why = "" if images else "the data mirror's images/nih holds no radiograph with a BBox_List_2017 box"
    # what `cxreval synth --no-synthetic --real-boxes auto [--images FOLDER]` runs
    res = loc.simulate_localization_study(
        boxes, rng=ctx.rng, synthetic=False, images=folder if images else None, origin="from the data mirror"
    )
    study = res.real_boxes
    ctx.meta.update(
        {
            "boxes": "BBox_List_2017 (radiologists' boxes)",
            "localizers": "heatmap bilinear (thresholds 60, 180), tiny box at the peak, whole image",
            "overlap rules": "IoBB, IoU",
            "heatmaps": "simulated: the error model's map of each image's real boxes (no model ran)",
        }
    )
    res.save(out)
    lines = [
        f"# Localization protocol: the error model on the {study.n_boxes} real BBox_List_2017 boxes",
        "",
        f"{study.n_boxes} radiologist boxes on {study.n_images} ChestX-ray14 images; one error-model heat "
        f"map per (image, finding) from its real boxes (seed {ctx.rng}); localizers: the protocol's pipeline "
        "(bilinear upsampling, thresholds 60 and 180) on the noise-free and the noisy map, a 6 x 6 box "
        "at the peak, the whole image. Acc./AFP per finding at each T, IoBB and IoU.",
    ]
    ctx.meta["commands"] = [
        "cxreval synth --no-synthetic --real-boxes auto"
        + (f" --images {shlex.quote(str(folder))}" if images else "")
        + f" --seed {ctx.rng} -o localization_real_boxes"
    ]
    if res.overlays is not None:
        lines += ["", res.overlays.summary()]
    else:
        ctx.missing.append(
            ("Localization: box overlays on real radiographs", why, RERUN, offline_hint("images/nih/*.png"))
        )
    write_summary(out, "\n".join(lines))
    return str(out)


def _sec_iqa(ctx: DemoContext) -> str:
    import shlex

    need("cxreval.iqa", "IQA metrics", "cxreval iqa score")
    from .images import IQA_COMPARISON, IQA_PLAN, IQA_SCORES, run_iqa

    try:
        mirror = mirror_only(ctx, "images/nih").parents[1]
    except NotBuilt:
        mirror = mirror_only(ctx, "iqa_fixture").parent
    out = ctx.folder("iqa")
    ctx.folder(f"iqa/{IQA_SCORES}")
    ctx.folder(f"iqa/{IQA_COMPARISON}")
    facts = run_iqa(mirror, out, metrics=ctx.iqa_metrics, n_images=ctx.iqa_images)
    if facts["images_folder"] is not None:  # the IQA fixture's folder also holds its test images
        ctx.meta["commands"] = [
            f"cxreval iqa degrade --images {shlex.quote(str(facts['images_folder']))} --plan {IQA_PLAN} "
            f"--sample {len(facts['images'])} --max-size {facts['size']} -o iqa",
            f"cxreval iqa score --pairs iqa/pairs.csv --metrics {','.join(facts['metrics'])} -o iqa/{IQA_SCORES}",
            f"cxreval iqa compare --scores iqa/{IQA_SCORES}/scores.csv -o iqa/{IQA_COMPARISON}",
        ]
    cmd = "cxreval iqa agree --scores S --ratings R --out OUT"
    ctx.missing.append(
        (
            "IQA: metrics against expert quality ratings (z-MOS)",
            "no public expert quality ratings exist for these radiographs; none are invented",
            "",
            f"With expert ratings (image, rater, rating) of your own: {cmd} gives z-MOS and each "
            "metric's SRCC/KRCC with it.",
        )
    )
    ctx.meta.update(
        {
            "metrics": list(facts["metrics"]),
            "degradations": list(facts["degradations"]),
            "images": len(facts["images"]),
            "expert_ratings": "none (metric vs metric only)",
        }
    )
    write_summary(
        out,
        "# Image quality: how full-reference metrics rank controlled degradations\n\n"
        f"{len(facts['images'])} radiographs from {facts['sources']}, block-averaged to at most "
        f"{facts['size']} pixels, each degraded {len(facts['degradations'])} ways "
        f"({', '.join(facts['degradations'])}; the packaged plan `--plan {IQA_PLAN}`) and scored with "
        f"{', '.join(facts['metrics'])} ({facts['n_pairs']} pairs, `{IQA_SCORES}/`, as `cxreval iqa "
        f"score`; the metrics' rankings and agreement in `{IQA_COMPARISON}/`, as `cxreval iqa "
        "compare`). The same files: the commands in run.json (`commands`), run in an empty folder.\n\n"
        "**Metric vs metric, not metric vs experts**: there are no public expert ratings of these "
        "images, so the tables give each metric's ranking of the degradations and the SRCC/KRCC "
        "between metrics. With ratings (image, rater, rating), `" + cmd + "` gives z-MOS and "
        "each metric's rank correlation (SRCC/KRCC) with it.",
    )
    return str(out)


_OPENI_PAIR = "report_findings:report_impression"
_OPENI_AGREEMENT = "findings_vs_impression"
"""The subfolder of ``openi_report_labels`` with what ``cxreval agree`` writes (Findings vs Impression); the
section folder itself holds what ``cxreval label-reports --validate-against`` writes."""


def _sec_openi_reports(ctx: DemoContext) -> str:
    """What ``cxreval label-reports --validate-against`` (the held-out MeSH codes) and ``cxreval agree --studies
    common`` (Findings vs Impression) write (the exact lines are the section's ``commands`` in run.json)."""
    import shlex

    rp = need("cxreval.labeller", "report labeller", "cxreval label-reports")
    from ..datasets.openi import openi_mesh_labels, read_openi_reports
    from ..findings import CHESTXRAY8, XQA, XQA_SELECTED

    tgz = metadata(ctx, "NLMCXR_reports.tgz")
    rep = read_openi_reports(tgz).table
    text = pd.DataFrame(
        {
            "study_id": rep["report_id"],
            "findings": rep["findings"].fillna(""),
            "impression": rep["impression"].fillna(""),
        }
    )
    # the held-out half, as `cxreval data export openi_mesh --half held-out`: the packaged rules were tuned on
    # the other half (cxreval.datasets.openi.openi_tuning_split)
    mesh = openi_mesh_labels(reports=rep, half="held-out").table
    held_out = mesh["study_id"].unique()
    # as `cxreval label-reports --sections whole --validate-against MESH --findings chestxray8`: every report
    # labelled, scored on the reference's studies
    val = rp.label_reports(
        text,
        sections="whole",
        reference_labels=mesh,
        reference="openi_mesh",
        findings=CHESTXRAY8,
        n_resamples=ctx.n_resamples,
        rng=ctx.rng,
    ).validation
    # as `cxreval label-reports --sections findings,impression --vocabulary chexpert` then `cxreval agree
    # --studies common`: a report without one of the sections has it `missing`, so the pair compares (and the
    # prevalence counts) the reports with both sections
    both = text[(text["findings"].str.strip() != "") & (text["impression"].str.strip() != "")]
    fi = rp.label_reports(text, sections="findings,impression", vocabulary="chexpert").labels
    reports = shlex.quote(str(tgz))
    ctx.meta["commands"] = [
        "cxreval data export openi_mesh --half held-out -o openi_mesh",
        f"cxreval label-reports --reports {reports} --sections whole --validate-against openi_mesh/labels.csv "
        f"--findings chestxray8 --n-resamples {ctx.n_resamples} --seed {ctx.rng} -o openi_report_labels",
        f"cxreval label-reports --reports {reports} --sections findings,impression --vocabulary chexpert "
        "-o openi_sections",
        f"cxreval agree -l openi_sections/labels.parquet --pairs {_OPENI_PAIR} --findings xqa --finding-set "
        f"selected=xqa_selected --finding-set all=xqa --studies common -o openi_report_labels/{_OPENI_AGREEMENT}",
    ]
    out = ctx.folder("openi_report_labels")
    val.save(out)
    _agreement_section(
        ctx,
        f"openi_report_labels/{_OPENI_AGREEMENT}",
        fi,
        [_OPENI_PAIR.partition(":")[::2]],
        findings=list(XQA),
        finding_sets={"selected": list(XQA_SELECTED), "all": list(XQA)},
        studies="common",
    )
    write_summary(
        out,
        f"# OpenI: report-derived labels\n\ncxreval.labeller on the {len(held_out)} OpenI reports of "
        "the held-out half (FINDINGS + IMPRESSION; the packaged rules were tuned on the other, "
        "development half: `cxreval.datasets.openi.openi_tuning_split`) against the human MeSH major codes "
        f"(`openi_mesh`), uncertain -> negative, {ctx.n_resamples} report-bootstrap resamples; "
        "`nih_*`: the NIH labeller's published figures (Wang et al. 2017, on all OpenI reports). "
        "bench/labeller_openi.py reports both halves.\n\n"
        + val.summary()
        + f"\n\nFindings vs Impression (`{_OPENI_AGREEMENT}/`): {len(both)} reports with both "
        "sections, CheXpert vocabulary; "
        "the XQA paper's MIMIC-CXR values: macro kappa_w 0.34 over its four selected "
        "findings, Atelectasis 0.20, Pleural effusion 0.33.\n",
    )
    return str(out)


@dataclass(frozen=True)
class DemoSpec:
    """One section of the demo, declared: its key and title, the function that computes it (library calls and
    ``Result.save``, nothing else) and the ``cxreval`` commands that write the same files from the same inputs
    written to files (each pair is checked by a test in ``tests/demo_cli``)."""

    key: str
    title: str
    build: Callable[[DemoContext], str]
    commands: tuple[str, ...]


SECTIONS: tuple[DemoSpec, ...] = (
    DemoSpec(
        "audit",
        "ChestX-ray14 audit (counts; official split and leakage when the split lists are available)",
        _sec_audit,
        ("cxreval data audit",),
    ),
    DemoSpec(
        "nih_vs_google_agreement",
        "NIH text-mined vs Google expert labels",
        _sec_nih_google_agreement,
        ("cxreval agree",),
    ),
    DemoSpec(
        "nih_models",
        "10 NIH models against text-mined and expert references",
        _sec_nih_models,
        ("cxreval data export", "cxreval rank"),
    ),
    DemoSpec(
        "chexpert_models",
        "CheXpert test set: 10 models against 11 references",
        _sec_chexpert,
        ("cxreval data export", "cxreval rank"),
    ),
    DemoSpec(
        "chexpert_agreement",
        "CheXpert test set: reader agreement",
        _sec_chexpert_agreement,
        ("cxreval data export", "cxreval agree"),
    ),
    DemoSpec(
        "chexpert_fusion",
        "CheXpert test set: fusion of the 5 ground-truth readers",
        _sec_chexpert_fusion,
        ("cxreval data export", "cxreval fuse"),
    ),
    DemoSpec(
        "chexpert_relabelling",
        "CheXpert test set: plan an expert's relabelling, then the two-phase estimate",
        _sec_chexpert_relabelling,
        ("cxreval data export", "cxreval plan"),
    ),
    DemoSpec(
        "chexpert_reader_study",
        "CheXpert test set: are the models radiologist-level, under every reference?",
        _sec_chexpert_reader_study,
        ("cxreval data export", "cxreval mrmc"),
    ),
    DemoSpec("xqa_published", "XQA paper's published tables", _sec_xqa, ("cxreval rank",)),
    DemoSpec(
        "openi_report_labels",
        "OpenI: report labeller vs MeSH codes; Findings vs Impression",
        _sec_openi_reports,
        ("cxreval data export openi_mesh --half held-out", "cxreval label-reports", "cxreval agree"),
    ),
    DemoSpec("localization", "Localization protocol study", _sec_localization, ("cxreval synth",)),
    DemoSpec(
        "localization_real",
        "Localization: the error model on real boxes, with box overlays",
        _sec_localization_real,
        ("cxreval synth",),
    ),
    DemoSpec(
        "iqa",
        "Image quality assessment",
        _sec_iqa,
        ("cxreval iqa degrade", "cxreval iqa score", "cxreval iqa compare"),
    ),
)
"""The demo's sections, in the order they run and appear in the report."""
