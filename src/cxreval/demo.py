"""``cxreval demo``: the main job end to end on real public data, into one HTML report.

The demo runs the analysis library functions (not sub-processes) section by section, writes each
section's tidy tables (CSV + Parquet, the same files the analysis commands write) and ``summary.md``
into ``OUT/<section>/``, and renders ``OUT/report.html`` from them. Data:

- public metadata from the ``torchxrayvision`` wheel (:func:`cxreval.datasets.fetch.fetch_metadata`);
- GitHub-hosted model predictions and CheXpert test labels, pinned by commit and SHA-256
  (:mod:`cxreval.datasets.mirror`), from a mirror folder when one is given or found, else downloaded;
- the XQA paper's tables and sample radiographs, from a mirror folder only.

A section whose module is not in this build, or whose data cannot be had, is listed in the report as
"not built" with the reason and the command that would get it; the demo never fails because one
source is unreachable.
"""

from __future__ import annotations

import logging
import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING

import pandas as pd

from .cli._common import write_summary, write_table
from .exceptions import CxrevalError, InvalidParameterError

if TYPE_CHECKING:
    from .ranking import RankingStabilityResult

__all__ = ["DemoContext", "DemoSection", "DemoResult", "SECTIONS", "run_demo"]

log = logging.getLogger(__name__)


class NotBuilt(Exception):
    """Raised by a section that cannot be built: the reason and the command that would get it."""

    def __init__(self, reason: str, command: str = "") -> None:
        super().__init__(reason)
        self.reason = reason
        self.command = command


@dataclass(frozen=True)
class DemoContext:
    """What every section gets: where to write, where data lies, and the seed."""

    out: Path
    mirror: Path | None
    cache_dir: Path | None
    n_resamples: int
    rng: int
    download: bool
    iqa_metrics: tuple[str, ...] = ()
    iqa_images: int = 3
    missing: list[tuple[str, str, str]] = field(default_factory=list)
    """Parts of built sections that could not be made: (title, reason, command)."""

    def folder(self, key: str) -> Path:
        d = self.out / key
        d.mkdir(parents=True, exist_ok=True)
        return d


@dataclass(frozen=True)
class DemoSection:
    """Outcome of one demo section: ``status`` is ``built``, ``not built`` or ``error``."""

    key: str
    title: str
    status: str
    seconds: float
    folder: Path | None = None
    reason: str = ""
    command: str = ""

    def to_dict(self) -> dict[str, object]:
        return {"key": self.key, "title": self.title, "status": self.status, "seconds": round(self.seconds, 2),
                "folder": None if self.folder is None else str(self.folder), "reason": self.reason,
                "command": self.command}


@dataclass(frozen=True)
class DemoResult:
    """What :func:`run_demo` did: the sections, the report file and its size, the total time."""

    out: Path
    report: Path
    report_bytes: int
    sections: tuple[DemoSection, ...] = field(default=())
    seconds: float = 0.0

    def to_dict(self) -> dict[str, object]:
        return {"out": str(self.out), "report": str(self.report), "report_bytes": self.report_bytes,
                "seconds": round(self.seconds, 2), "sections": [s.to_dict() for s in self.sections]}


# ------------------------------------------------------------------------------------------------
# data helpers
# ------------------------------------------------------------------------------------------------

def _need(module: str, what: str, command: str) -> ModuleType:
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise NotBuilt(f"{what}: module {module} is not in this build ({exc})", command) from exc


def _metadata(ctx: DemoContext, name: str) -> Path:
    from .datasets.fetch import WHEEL_SHA256, fetch_metadata, resolve_cache_dir

    stamp = resolve_cache_dir(ctx.cache_dir) / "torchxrayvision-data" / ".wheel_sha256"
    if not ctx.download and not (stamp.exists() and stamp.read_text().strip() == WHEEL_SHA256):
        raise NotBuilt(f"public metadata not cached in {stamp.parent} and downloads are off", "cxreval data fetch")
    try:
        res = fetch_metadata(cache_dir=ctx.cache_dir)
    except CxrevalError as exc:
        raise NotBuilt(f"public metadata unavailable: {exc}", "cxreval data fetch") from exc
    return res.files[name]


def _pinned(ctx: DemoContext, local_path: str) -> Path:
    from .datasets.mirror import fetch_file

    try:
        return fetch_file(local_path, mirror=ctx.mirror, cache_dir=ctx.cache_dir, download=ctx.download)
    except CxrevalError as exc:
        raise NotBuilt(str(exc), f"cxreval demo --data-mirror DIR  (DIR holding {local_path})") from exc


def _mirror_only(ctx: DemoContext, relative: str) -> Path:
    from .datasets.mirror import mirror_path

    try:
        return mirror_path(relative, mirror=ctx.mirror)
    except CxrevalError as exc:
        raise NotBuilt(str(exc), f"cxreval demo --data-mirror DIR  (DIR holding {relative})") from exc


def _plain(df: pd.DataFrame) -> pd.DataFrame:
    """``df`` without ``attrs`` (readers keep DataFrames there, which ``pd.concat`` cannot compare)."""
    df = df.copy()
    df.attrs = {}
    return df


NIH_MODELS = ("jrzech_densenet121", "dd_densenet201", "dd_mobilenet_v2", "dd_resnet50", "dd_resnet152",
              "dd_densenet121_v2_logits", "hy_densenet121_nih25", "hy_densenet121_nih25_lrdecay033",
              "hy_densenet121_test1", "hy_densenet121_results")
CHEXPERT_MODELS = ("desmond", "drnet", "hieupham", "ihil", "jfaboy", "ngango2", "ngango3", "sensexdr", "uestc",
                   "yww211")
CHEXPERT_GT_READERS = ("bc1", "bc2", "bc3", "bc5", "bc7")
CHEXPERT_BENCH_READERS = ("bc4", "bc6", "bc8")
CHEXPERT_COMPETITION = ("Atelectasis", "Cardiomegaly", "Consolidation", "Edema", "Effusion")


def nih_google_labels(ctx: DemoContext) -> tuple[pd.DataFrame, pd.DataFrame]:
    """NIH text-mined labels mapped to Google's findings plus Google's expert labels, on Google's images."""
    _need("cxreval.datasets.google", "Google expert labels", "cxreval data fetch")
    from .datasets import google, nih

    g = google.load_labels(_metadata(ctx, google.GOOGLE_FILE), cache_dir=ctx.cache_dir).table
    n = nih.load_labels(_metadata(ctx, nih.DATA_ENTRY), cache_dir=ctx.cache_dir).table
    n = n[n["study_id"].isin(set(g["study_id"]))]
    mapped = google.map_nih_to_google(n)
    g = g[g["finding"].isin(set(mapped["finding"]))]
    cols = ["study_id", "patient_id", "finding", "source", "state"]
    return pd.concat([mapped[cols], g[cols]], ignore_index=True), g


def nih_predictions(ctx: DemoContext, studies: set[str]) -> pd.DataFrame:
    """The 10 NIH models' scores on ``studies``, in Google's findings (max over the NIH findings that
    define each Google finding, the same mapping as the labels)."""
    from .datasets.google import NIH_TO_GOOGLE
    from .labels import read_wide_predictions

    parts = []
    needed = sorted({f for sources in NIH_TO_GOOGLE.targets.values() for f in sources})
    for model in NIH_MODELS:
        p = _pinned(ctx, f"nih_fold_predictions/{model}.csv")
        pr = _plain(read_wide_predictions(p, model=model, id_column="Image Index", prefix="prob_",
                                          findings=needed).table)
        pr = pr[pr["study_id"].isin(studies)]
        wide = pr.pivot(index="study_id", columns="finding", values="score")
        for target, sources in NIH_TO_GOOGLE.targets.items():
            parts.append(pd.DataFrame({"study_id": wide.index, "model": model, "finding": target,
                                       "score": wide[list(sources)].max(axis=1).to_numpy()}))
    return pd.concat(parts, ignore_index=True)


def chexpert_labels(ctx: DemoContext) -> pd.DataFrame:
    """CheXpert test labels: consensus, 8 radiologists and 2 report labelers, as one long table."""
    from .labels import read_wide_labels

    files = {"consensus": "chexpert_test/groundtruth.csv"}
    files.update({r: f"chexpert_test/radiologists/groundtruth/{r}_gt.csv" for r in CHEXPERT_GT_READERS})
    files.update({r: f"chexpert_test/radiologists/benchmark_radiologists/{r}.csv" for r in CHEXPERT_BENCH_READERS})
    files.update({"chexpert_labeler": "chexpert_test/labeler/chexpert_labels.csv",
                  "chexbert": "chexpert_test/labeler/chexbert_labels.csv"})
    parts = [_plain(read_wide_labels(_pinned(ctx, p), source=src, id_column="Study").table)
             for src, p in files.items()]
    return pd.concat(parts, ignore_index=True)


def chexpert_predictions(ctx: DemoContext) -> pd.DataFrame:
    from .labels import read_wide_predictions

    parts = [_plain(read_wide_predictions(
        _pinned(ctx, f"chexpert_test/example_models/predictions/standard/{m}_predictions.csv"),
        model=m, id_column="Study").table) for m in CHEXPERT_MODELS]
    return pd.concat(parts, ignore_index=True)


# ------------------------------------------------------------------------------------------------
# sections
# ------------------------------------------------------------------------------------------------

def _write_ranking(res: RankingStabilityResult, out: Path) -> None:
    write_table(res.correlations, out, "rank_correlation")
    write_table(res.rankings, out, "rankings")
    write_table(res.top_changes, out, "top_changes")


def _pair_drops(table: pd.DataFrame) -> str:
    """Markdown lines saying, per pair, how many studies only one source labels (not compared)."""
    lines = ["Sources are compared on the studies both label (studies='intersection', CLI `--intersect`):", ""]
    for pair, info in table.attrs.get("pairs", {}).items():
        lines.append(f"- {pair}: {info['n_studies']} common studies; {info['n_only_a']} only in "
                     f"{info['source_a']}, {info['n_only_b']} only in {info['source_b']} (not compared)")
    return "\n".join(lines) + "\n"


def _sec_audit(ctx: DemoContext) -> str:
    au = _need("cxreval.datasets.audit", "ChestX-ray14 audit", "cxreval data audit chestxray14 --json")
    from .datasets.nih import DATA_ENTRY

    entry = _metadata(ctx, DATA_ENTRY)
    split_dir = None
    try:
        lists = [_pinned(ctx, "chestxray14/official_test_list.txt"),
                 _pinned(ctx, "chestxray14/official_train_val_list.txt")]
        if lists[0].parent == lists[1].parent:
            split_dir = lists[0].parent
    except NotBuilt as exc:
        log.info("official split lists unavailable (%s); auditing without a split", exc.reason)
    res = au.audit_chestxray14(path=entry, bbox_path=_metadata(ctx, au.BBOX_FILE), split_dir=split_dir,
                               cache_dir=ctx.cache_dir)
    out = ctx.folder("chestxray14_audit")
    au.write_audit(res, out)
    return str(out)


def _sec_nih_google_agreement(ctx: DemoContext) -> str:
    ag = _need("cxreval.agreement", "agreement", "cxreval agree")
    labels, _ = nih_google_labels(ctx)
    out = ctx.folder("nih_vs_google_agreement")
    pairs = [("google_expert", "nih_textmined")]
    table = ag.agreement_table(labels, pairs, studies="intersection")
    write_table(table, out, "agreement")
    write_table(ag.prevalence_table(labels), out, "prevalence")
    write_table(ag.flows_table(labels, pairs, studies="intersection"), out, "flows")
    n = labels["study_id"].nunique()
    write_summary(out, f"# NIH text-mined vs Google expert labels\n\n{n} ChestX-ray14 images with Google's "
                       "adjudicated expert labels; NIH labels mapped to Google's findings with "
                       "cxreval.datasets.google.NIH_TO_GOOGLE (OR of the NIH findings).\n\n"
                       + _pair_drops(table))
    return str(out)


def _sec_nih_models(ctx: DemoContext) -> str:
    cl = _need("cxreval.classification", "classification", "cxreval classify")
    rk = _need("cxreval.ranking", "ranking", "cxreval rank")
    labels, g = nih_google_labels(ctx)
    preds = nih_predictions(ctx, set(g["study_id"]))
    labels = labels[labels["study_id"].isin(set(preds["study_id"]))]
    res = cl.evaluate_auc(preds, labels, references=["nih_textmined", "google_expert"],
                          n_resamples=ctx.n_resamples, rng=ctx.rng)
    out = ctx.folder("nih_models")
    write_table(res.table, out, "auc")
    _write_ranking(rk.ranking_stability(res), out)
    n = preds["study_id"].nunique()
    write_summary(out, f"# 10 NIH models: text-mined vs expert reference\n\n{n} images "
                       f"({labels['patient_id'].nunique()} patients) carrying both references; "
                       f"patient-level bootstrap, {ctx.n_resamples} resamples, seed {ctx.rng}. Model scores for a "
                       "Google finding are the max over its NIH findings (NIH_TO_GOOGLE).")
    return str(out)


def _sec_chexpert(ctx: DemoContext) -> str:
    cl = _need("cxreval.classification", "classification", "cxreval classify")
    rk = _need("cxreval.ranking", "ranking", "cxreval rank")
    labels = chexpert_labels(ctx)
    preds = chexpert_predictions(ctx)
    refs = list(dict.fromkeys(labels["source"]))
    res = cl.evaluate_auc(preds, labels, references=refs, findings=list(CHEXPERT_COMPETITION),
                          n_resamples=ctx.n_resamples, rng=ctx.rng)
    out = ctx.folder("chexpert_models")
    write_table(res.table, out, "auc")
    _write_ranking(rk.ranking_stability(res, pairs=[("consensus", r) for r in refs[1:]]), out)
    write_summary(out, f"# CheXpert test set: 10 leaderboard models, {len(refs)} references\n\n"
                       f"{preds['study_id'].nunique()} studies; references: {', '.join(refs)}; "
                       f"{ctx.n_resamples} patient-bootstrap resamples, seed {ctx.rng}.")
    return str(out)


def _sec_chexpert_agreement(ctx: DemoContext) -> str:
    ag = _need("cxreval.agreement", "agreement", "cxreval agree")
    labels = chexpert_labels(ctx)
    labels = labels[labels["finding"].isin(CHEXPERT_COMPETITION)]
    others = [s for s in dict.fromkeys(labels["source"]) if s != "consensus"]
    pairs = [("consensus", s) for s in others]
    out = ctx.folder("chexpert_agreement")
    table = ag.agreement_table(labels, pairs, studies="intersection")
    write_table(table, out, "agreement")
    write_table(ag.prevalence_table(labels), out, "prevalence")
    write_table(ag.flows_table(labels, [("consensus", "chexpert_labeler"), ("consensus", "bc4")],
                               studies="intersection"), out, "flows")
    write_summary(out, "# CheXpert test set: reader and labeler agreement with the consensus\n\n"
                       "5 competition findings; report labelers' blanks count as negative (not mentioned).\n\n"
                       + _pair_drops(table))
    return str(out)


def _sec_chexpert_fusion(ctx: DemoContext) -> str:
    fu = _need("cxreval.fusion", "fusion", "cxreval fuse")
    ag = _need("cxreval.agreement", "agreement", "cxreval agree")
    labels = chexpert_labels(ctx)
    labels = labels[labels["finding"].isin(CHEXPERT_COMPETITION)]
    readers = labels[labels["source"].isin(CHEXPERT_GT_READERS) & labels["state"].notna()]
    ann = pd.DataFrame({"study_id": readers["study_id"].astype(str), "reader": readers["source"].astype(str),
                        "finding": readers["finding"].astype(str), "label": readers["state"].astype(int)})
    ref = labels[labels["source"] == "consensus"].set_index(["study_id", "finding"])["state"]
    from .fusion.diagnostics import overfused_states

    fused, rows, warns = [], [], []
    # the unsupervised methods (the neural fusion is supervised: it needs the reference it is compared with)
    for name in [m for m in ("mv", "or", "and", "ds", "mace") if m in fu.list_fusion()]:
        est = fu.get_fusion(name)()
        lab = est.fit_predict(ann)
        fin = lab.index.get_level_values("finding")
        for f, g in ann.groupby("finding"):  # states fused far more often than any reader uses them (issue 15)
            warns += [(f, name, w) for w in overfused_states(g, lab[fin == f], method=name)]
        df = lab.rename("state").reset_index()
        df.columns = ["study_id", "finding", "state"]
        df["method"] = name
        fused.append(df)
        joined = df.set_index(["study_id", "finding"])["state"].rename("fused").to_frame().join(ref, how="inner")
        for finding, sub in [*joined.groupby(level="finding"), ("micro", joined)]:
            r = ag.agreement_scores(sub["state"].to_numpy(), sub["fused"].to_numpy())
            rows.append({"method": name, "finding": finding, "kappa_w": r.kappa_w, "kappa_low": r.kappa_low,
                         "kappa_high": r.kappa_high, "f1_w": r.f1_w, "f1_low": r.f1_low, "f1_high": r.f1_high,
                         "n": r.n})
    out = ctx.folder("chexpert_fusion")
    fa = pd.DataFrame(rows)
    per = fa[fa["finding"] != "micro"]
    macro = per.groupby("method", sort=False)[["kappa_w", "kappa_low", "kappa_high", "f1_w", "f1_low", "f1_high"]].mean()
    macro = macro.assign(finding="macro", n=per.groupby("method", sort=False)["n"].sum()).reset_index()
    write_table(pd.concat([fa, macro[fa.columns]], ignore_index=True), out, "fusion_agreement")
    write_table(pd.concat(fused, ignore_index=True), out, "fused_labels")
    if warns:
        write_table(pd.DataFrame(warns, columns=["finding", "method", "warning"]), out, "fusion_warnings")
    write_summary(out, "# CheXpert test set: fusing the 5 ground-truth readers\n\nEach method fuses readers "
                       f"{', '.join(CHEXPERT_GT_READERS)}; agreement with the published majority vote "
                       "(groundtruth.csv).")
    return str(out)


def _sec_xqa(ctx: DemoContext) -> str:
    rk = _need("cxreval.ranking", "ranking", "cxreval rank")
    pub = _need("cxreval.published", "XQA published tables", "cxreval rank --published xqa")
    auc = pub.load_xqa_auc_table()
    res = rk.ranking_stability(auc[["dataset", "model", "group", "finding", "reference", "auc"]])
    out = ctx.folder("xqa_published")
    write_table(pub.attach_published(res), out, "rank_correlation")
    write_table(res.rankings, out, "rankings")
    write_table(res.top_changes, out, "top_changes")
    write_table(auc, out, "auc")
    write_summary(out, "# XQA paper's published tables (16-29)\n\nRankings and point SRCC/KRCC recomputed from "
                       "the published AUCs (Tables 16-25), beside the paper's bootstrap mean and sd (Tables 26-29).")
    return str(out)


def _sec_localization(ctx: DemoContext) -> str:
    syn = _need("cxreval.localization.synthetic", "localization synthetic study", "cxreval synth")
    res = syn.synthetic_study(0)
    sc = res.scores.copy()
    sc.insert(0, "finding", sc["size"].astype(str) + " boxes" if "size" in sc.columns else "synthetic")
    out = ctx.folder("localization_synthetic")
    write_table(sc, out, "localization")
    write_table(res.boxes, out, "boxes")
    (out / "synth_output.txt").write_text("\n".join(res.lines) + "\n")
    write_summary(out, "# Localization protocol: the seed's synthetic study\n\nSeed 0, "
                       f"{res.per_size} images per size class; 'finding' is the size class of the reference boxes.")
    return str(out)


def _sec_localization_real(ctx: DemoContext) -> str:
    ev = _need("cxreval.localization.evaluate", "localization on real boxes", "cxreval localize")
    nb = _need("cxreval.datasets.nih_boxes", "ChestX-ray14 box reader", "cxreval data fetch")
    from .datasets.audit import BBOX_FILE
    from .demo_images import boxed_images, run_overlays

    boxes = _plain(nb.read_nih_boxes(_metadata(ctx, BBOX_FILE)).table)
    out = ctx.folder("localization_real_boxes")
    study = ev.real_boxes_study(boxes, rng=ctx.rng)
    write_table(study, out, "localization")
    n_img = boxes["image_id"].nunique()
    lines = [f"# Localization protocol: the error model on the {len(boxes)} real BBox_List_2017 boxes",
             "", f"{len(boxes)} radiologist boxes on {n_img} ChestX-ray14 images; one error-model heat map per "
             f"(image, finding) from its real boxes (seed {ctx.rng}); localizers: the protocol's pipeline "
             "(bilinear upsampling, thresholds 60 and 180) on the noise-free and the noisy map, a 6 x 6 box "
             "at the peak, the whole image. Acc./AFP per finding at each T, IoBB and IoU."]
    try:
        images = boxed_images(_mirror_only(ctx, "images/nih").parents[1], boxes)
    except NotBuilt as exc:
        images = []
        why = exc.reason
    else:
        why = "" if images else "the data mirror's images/nih holds no radiograph with a BBox_List_2017 box"
    if images:
        ov = run_overlays(images, boxes, out, rng=ctx.rng)
        lines += ["", f"Box overlays: {len(images)} real radiographs from the data mirror (downsampled for the "
                  "report); reference boxes and the boxes the protocol finds on a noisy error-model map made "
                  f"from them ({int((ov['kind'] != 'reference').sum())} detected boxes)."]
    else:
        ctx.missing.append(("Localization: box overlays on real radiographs", why,
                            "cxreval demo --data-mirror DIR  (DIR holding images/nih/*.png)"))
    write_summary(out, "\n".join(lines))
    return str(out)


def _sec_iqa(ctx: DemoContext) -> str:
    _need("cxreval.iqa.full_reference", "IQA metrics", "cxreval iqa score")
    from .demo_images import run_iqa

    try:
        mirror = _mirror_only(ctx, "images/nih").parents[1]
    except NotBuilt:
        mirror = _mirror_only(ctx, "iqa_fixture").parent
    out = ctx.folder("iqa")
    facts = run_iqa(mirror, out, metrics=ctx.iqa_metrics, n_images=ctx.iqa_images)
    cmd = "cxreval iqa agree --scores S --ratings R --out OUT"
    ctx.missing.append(("IQA: metric vs expert z-MOS (Tables 3-4)",
                        "no public expert quality ratings exist for these radiographs; none are invented", cmd))
    write_summary(out, "# Image quality: how full-reference metrics rank controlled degradations\n\n"
                       f"{len(facts['images'])} radiographs from {facts['sources']}, block-averaged to at most "
                       f"{facts['size']} pixels, each degraded {len(facts['degradations'])} ways "
                       f"({', '.join(facts['degradations'])}; plan.yaml) and scored with "
                       f"{', '.join(facts['metrics'])} ({facts['n_pairs']} pairs, as `cxreval iqa score`).\n\n"
                       "**Metric vs metric, not metric vs experts**: there are no public expert ratings of these "
                       "images, so the tables give each metric's ranking of the degradations and the SRCC/KRCC "
                       "between metrics. With ratings (image, rater, rating), `" + cmd + "` gives z-MOS and "
                       "each metric's SRCC/KRCC with it (the seed's Tables 3-4).")
    return str(out)


Section = tuple[str, str, Callable[[DemoContext], str]]
SECTIONS: tuple[Section, ...] = (
    ("audit", "ChestX-ray14 audit (counts, official split, leakage)", _sec_audit),
    ("nih_vs_google_agreement", "NIH text-mined vs Google expert labels", _sec_nih_google_agreement),
    ("nih_models", "10 NIH models against text-mined and expert references", _sec_nih_models),
    ("chexpert_models", "CheXpert test set: 10 models against 11 references", _sec_chexpert),
    ("chexpert_agreement", "CheXpert test set: reader agreement", _sec_chexpert_agreement),
    ("chexpert_fusion", "CheXpert test set: fusion of the 5 ground-truth readers", _sec_chexpert_fusion),
    ("xqa_published", "XQA paper's published tables", _sec_xqa),
    ("localization", "Localization protocol study", _sec_localization),
    ("localization_real", "Localization: the error model on real boxes, with box overlays", _sec_localization_real),
    ("iqa", "Image quality assessment", _sec_iqa),
)
"""The demo's sections: ``(key, title, builder)``."""


def run_demo(out: str | Path = "demo-out", *, data_mirror: str | Path | None = None,
             cache_dir: str | Path | None = None, n_resamples: int = 1000, rng: int = 0, download: bool = True,
             sections: Sequence[str] | None = None, progress: Callable[[str], None] | None = None,
             iqa_metrics: Sequence[str] | None = None, iqa_images: int | None = None) -> DemoResult:
    """Run the demo into ``out`` and write ``out/report.html``.

    Parameters
    ----------
    out : path, default='demo-out'
        Output folder (one sub-folder per section, plus ``report.html``).
    data_mirror : path, optional
        A folder laid out like the project's ``shared/data``; default ``$CXREVAL_DATA_MIRROR`` or
        ``../shared/data`` when present (:func:`cxreval.datasets.mirror.default_mirror`).
    cache_dir : path, optional
        Cache directory for metadata and downloads.
    n_resamples : int, default=1000
        Patient-bootstrap replicates.
    rng : int, default=0
        Seed; the same seed gives the same tables.
    download : bool, default=True
        Allow network downloads (PyPI for metadata is handled by ``cxreval data fetch``; GitHub for
        pinned files).
    sections : sequence of str, optional
        Keys of :data:`SECTIONS` to run (default all).
    progress : callable, optional
        Called with a line of text before and after each section (default: logging).
    iqa_metrics : sequence of str, optional
        Full-reference metrics of the IQA section (default :data:`cxreval.demo_images.IQA_METRICS`).
    iqa_images : int, optional
        Radiographs the IQA section degrades (default :data:`cxreval.demo_images.IQA_N_IMAGES`).

    Returns
    -------
    res : DemoResult
    """
    from .datasets.mirror import default_mirror
    from .demo_images import IQA_METRICS, IQA_N_IMAGES
    from .report import Unavailable, write_report

    keys = [k for k, _, _ in SECTIONS]
    if sections is not None:
        unknown = [s for s in sections if s not in keys]
        if unknown:
            raise InvalidParameterError(f"Unknown demo section(s) {unknown}; known: {keys}.")
    if iqa_images is not None and (isinstance(iqa_images, bool) or not isinstance(iqa_images, int) or iqa_images < 1):
        raise InvalidParameterError(f"The 'iqa_images' parameter of run_demo must be a positive int. Got {iqa_images!r} "
                                    "instead.")
    if iqa_metrics is not None:
        from .iqa import list_metrics

        known = list_metrics(reference="full")
        bad = [m for m in iqa_metrics if m not in known]
        if bad or isinstance(iqa_metrics, str) or not iqa_metrics:
            raise InvalidParameterError(f"The 'iqa_metrics' parameter of run_demo must be a non-empty list of "
                                        f"full-reference metrics {known}. Got {iqa_metrics!r} instead.")
    say = progress or (lambda msg: log.info("%s", msg))
    t0 = time.perf_counter()
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    ctx = DemoContext(out, default_mirror(data_mirror), None if cache_dir is None else Path(cache_dir),
                      int(n_resamples), int(rng), bool(download),
                      tuple(IQA_METRICS if iqa_metrics is None else iqa_metrics),
                      IQA_N_IMAGES if iqa_images is None else int(iqa_images))
    done: list[DemoSection] = []
    for key, title, build in SECTIONS:
        if sections is not None and key not in sections:
            continue
        say(f"demo: {title}")
        t = time.perf_counter()
        try:
            folder = Path(build(ctx))
            done.append(DemoSection(key, title, "built", time.perf_counter() - t, folder))
        except NotBuilt as exc:
            done.append(DemoSection(key, title, "not built", time.perf_counter() - t, reason=exc.reason,
                                    command=exc.command))
        except (CxrevalError, OSError) as exc:
            done.append(DemoSection(key, title, "not built", time.perf_counter() - t, reason=str(exc)))
        except Exception as exc:  # a bug in one section must not lose the others; it is reported as such
            log.warning("demo section %s failed:\n%s", key, traceback.format_exc())
            done.append(DemoSection(key, title, "error", time.perf_counter() - t,
                                    reason=f"internal error: {type(exc).__name__}: {exc}"))
        say(f"demo: {title}: {done[-1].status} ({done[-1].seconds:.1f} s)")
    built = [s.folder for s in done if s.folder is not None]
    unavailable = [Unavailable(s.title, f"{s.status}: {s.reason}", s.command) for s in done if s.status != "built"]
    unavailable += [Unavailable(t, r, c) for t, r, c in ctx.missing]
    intro = ("<p>How the choice of reference changes conclusions, on real public data: each section below "
             "was computed by <code>cxreval demo</code> with the library's analysis functions; the tables are "
             "the files in the section's folder.</p>")
    rep = write_report(built, out / "report.html", title="cxreval demo: does the conclusion survive a change of "
                       "reference?", unavailable=unavailable, intro_html=intro, list_missing_kinds=False)
    return DemoResult(out, rep.path, rep.n_bytes, tuple(done), time.perf_counter() - t0)
