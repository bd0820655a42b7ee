"""The sections of ``cxreval demo`` (:data:`SECTIONS`): each a function of the :class:`~cxreval.demo.data.DemoContext`
that calls the analysis library on real public data and saves its results into ``OUT/<section>/``, declared with
the ``cxreval`` commands that write the same files. :func:`cxreval.demo.run_demo` runs them."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from ..io._write import write_summary
from ..options import Design
from ._chexpert_sections import (
    _sec_chexpert,
    _sec_chexpert_agreement,
    _sec_chexpert_fusion,
    _sec_chexpert_reader_study,
    _sec_chexpert_relabelling,
)
from ._decision_sections import _sec_nih_decision
from ._image_sections import _sec_iqa, _sec_localization, _sec_localization_real
from ._section_parts import _agreement_section, _auc_meta, _export_commands, _exported_labels
from ._subgroup_sections import _sec_nih_subgroups
from .data import (
    NIH_MODELS,
    RERUN,
    DemoContext,
    NotBuilt,
    metadata,
    need,
    pinned,
)

__all__: list[str] = []

log = logging.getLogger(__name__)


# ------------------------------------------------------------------------------------------------
# sections
# ------------------------------------------------------------------------------------------------


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
    from ..datasets._bbox_list import BBOX_FILE

    res = au.audit_chestxray14(
        path=entry, bbox_path=metadata(ctx, BBOX_FILE), split_dir=split_dir, cache_dir=ctx.cache_dir
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
            design=Design(finding_map="nih_to_google", studies="common"),
            resampling=ctx.resampling,
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
        "nih_decision",
        "NIH fold: the 10 models at two operating points and their decision curves (text-mined reference)",
        _sec_nih_decision,
        ("cxreval data export", "cxreval classify"),
    ),
    DemoSpec(
        "nih_subgroups",
        "NIH fold: subgroup gaps of the 10 models under two references, and their calibration",
        _sec_nih_subgroups,
        ("cxreval data export", "cxreval subgroups"),
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
