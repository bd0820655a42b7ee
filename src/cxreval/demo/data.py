"""Data of ``cxreval demo``: the context every section gets, how a section says it cannot be built, and
the readers of the public data it uses (metadata from the cache, pinned files from a mirror, the cache or
GitHub), each recording what it read for the section's ``run.json``."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import NamedTuple

import pandas as pd

from ..exceptions import CxrevalError
from ..options import Resampling

__all__: list[str] = []

log = logging.getLogger(__name__)


RERUN = "<rerun this section>"
"""Placeholder command, replaced by the exact ``cxreval demo`` command that reruns the failing section."""


MIRROR_LAYOUT = (
    "DIR/chexpert_test/ (groundtruth.csv; radiologists/groundtruth/bc{1,2,3,5,7}_gt.csv; "
    "radiologists/benchmark_radiologists/bc{4,6,8}.csv; labeler/chexpert_labels.csv, chexbert_labels.csv; "
    "example_models/predictions/standard/*.csv), DIR/nih_fold_predictions/<model>.csv (10 models' NIH "
    "predictions), DIR/chestxray14/official_test_list.txt and official_train_val_list.txt, "
    "DIR/images/nih/*.png (39 ChestX-ray14 radiographs); "
    "each file byte-identical to its pinned GitHub copy (cxreval.datasets.mirror.PINNED)"
)
"""The layout of a data mirror (``--data-mirror DIR``): each path as its pinned source publishes it."""


def offline_hint(relative: str) -> str:
    """'offline: use --data-mirror DIR with this layout: DIR/<relative>' (the one file or folder a part needs)."""
    return (
        f"offline: use --data-mirror DIR with this layout: DIR/{relative} (full layout: --data-mirror in the "
        "demo's help)"
    )


def short_reason(text: str, limit: int = 160) -> str:
    """A failure's reason on one short line: a network library's nested error text cut off at its first
    ``: HTTP``/``(Caused by``, and anything longer than ``limit`` characters ended with '…'."""
    for cut in (": HTTPSConnectionPool", ": HTTPConnectionPool", " (Caused by", ": <urlopen"):
        if cut in text:
            text = text.split(cut, 1)[0]
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def rerun_command(key: str) -> str:
    """The exact command that runs one demo section (data from the mirror, the cache or pinned downloads)."""
    return f"cxreval demo --out cxreval-demo-{key} --section {key}"


class NotBuilt(Exception):
    """Raised by a section that cannot be built: the reason, an exact command that would build it and a
    hint in words (the data it needs)."""

    def __init__(self, reason: str, command: str = "", hint: str = "") -> None:
        super().__init__(reason)
        self.reason = reason
        self.command = command
        self.hint = hint


@dataclass(frozen=True)
class DemoContext:
    """What every section gets: where to write, where data lies, and the random seed."""

    out: Path
    mirror: Path | None
    cache_dir: Path | None
    n_resamples: int
    rng: int
    download: bool
    iqa_metrics: tuple[str, ...] = ()
    iqa_images: int = 3
    missing: list[tuple[str, str, str, str]] = field(default_factory=list)
    """Parts of built sections that could not be made: (title, reason, command, hint)."""
    used: list[Path] = field(default_factory=list)
    """Input files the running section read (recorded with their SHA-256 in its run.json)."""
    created: list[Path] = field(default_factory=list)
    """Folders the running section created."""
    meta: dict[str, object] = field(default_factory=dict)
    """Parameters of the running section (recorded in its run.json)."""

    @property
    def resampling(self) -> Resampling:
        """The bootstrap of every section: ``n_resamples`` replicates drawn with the seed ``rng``."""
        return Resampling(n_resamples=self.n_resamples, rng=self.rng)

    def folder(self, key: str) -> Path:
        d = self.out / key
        d.mkdir(parents=True, exist_ok=True)
        if d not in self.created:
            self.created.append(d)
        return d

    def use(self, path: Path) -> Path:
        """Record ``path`` as an input of the running section; return it."""
        if path not in self.used:
            self.used.append(path)
        return path


# ------------------------------------------------------------------------------------------------
# data helpers
# ------------------------------------------------------------------------------------------------


def need(module: str, what: str, command: str) -> ModuleType:
    """Import ``module`` or say that this build lacks it (the section is not built)."""
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise NotBuilt(
            f"{what}: module {module} is not in this build ({exc})",
            hint=f"this cxreval build lacks {module}; {command} needs it too",
        ) from exc


def metadata(ctx: DemoContext, name: str) -> Path:
    """A cached public metadata file (``cxreval data fetch``)."""
    from ..datasets import fetch_metadata
    from ..datasets._fetch import WHEEL_SHA256, resolve_cache_dir

    stamp = resolve_cache_dir(ctx.cache_dir) / "torchxrayvision-data" / ".wheel_sha256"
    if not ctx.download and not (stamp.exists() and stamp.read_text().strip() == WHEEL_SHA256):
        raise NotBuilt(
            f"public metadata not cached in {stamp.parent} and downloads are off", "cxreval data fetch"
        )
    try:
        res = fetch_metadata(cache_dir=ctx.cache_dir)
    except CxrevalError as exc:
        raise NotBuilt(short_reason(f"public metadata unavailable: {exc}"), "cxreval data fetch") from exc
    return ctx.use(res.files[name])


def _not_fetched(ctx: DemoContext, what: str) -> NotBuilt:
    """The section cannot be built: ``what`` (a pinned file or folder) is in neither the mirror nor the cache, and
    could not be downloaded; the one command that brings it."""
    where = "not in the data mirror" + (f" {ctx.mirror}" if ctx.mirror else " (none given)") + " or the cache"
    why = "downloads are off (--offline)" if not ctx.download else "its download failed (offline?)"
    # one command brings every pinned file (with the network, or from a mirror), and the demo then runs offline
    return NotBuilt(f"{what} is {where}, and {why}", "cxreval data fetch --all", offline_hint(what))


def pinned(ctx: DemoContext, local_path: str) -> Path:
    """A pinned file, from the mirror, the cache or its pinned GitHub commit."""
    from ..datasets.mirror import fetch_file

    try:
        return ctx.use(
            fetch_file(local_path, mirror=ctx.mirror, cache_dir=ctx.cache_dir, download=ctx.download)
        )
    except CxrevalError as exc:
        raise _not_fetched(ctx, local_path) from exc


def pinned_folder(ctx: DemoContext, prefix: str) -> Path:
    """A folder holding exactly the pinned files under ``prefix`` (e.g. ``images/nih/``: the 39 radiographs),
    each from the mirror, the cache or its pinned GitHub commit (:func:`cxreval.datasets.mirror.fetch_folder`)."""
    from ..datasets.mirror import fetch_folder

    try:
        return fetch_folder(prefix, mirror=ctx.mirror, cache_dir=ctx.cache_dir, download=ctx.download)
    except CxrevalError as exc:
        raise _not_fetched(ctx, f"{prefix}*.png") from exc


NIH_MODELS = (
    "jrzech_densenet121",
    "dd_densenet201",
    "dd_mobilenet_v2",
    "dd_resnet50",
    "dd_resnet152",
    "dd_densenet121_v2_logits",
    "hy_densenet121_nih25",
    "hy_densenet121_nih25_lrdecay033",
    "hy_densenet121_test1",
    "hy_densenet121_results",
)
CHEXPERT_MODELS = (
    "desmond",
    "drnet",
    "hieupham",
    "ihil",
    "jfaboy",
    "ngango2",
    "ngango3",
    "sensexdr",
    "uestc",
    "yww211",
)
CHEXPERT_GT_READERS = ("bc1", "bc2", "bc3", "bc5", "bc7")
CHEXPERT_BENCH_READERS = ("bc4", "bc6", "bc8")
CHEXPERT_COMPETITION = ("Atelectasis", "Cardiomegaly", "Consolidation", "Edema", "Effusion")


class NihGoogleLabels(NamedTuple):
    """What :func:`nih_google_labels` returns: both label tables on Google's images, and Google's alone."""

    labels: pd.DataFrame
    google: pd.DataFrame


def nih_google_labels(ctx: DemoContext) -> NihGoogleLabels:
    """NIH text-mined labels mapped to Google's findings plus Google's expert labels, on Google's images."""
    need("cxreval.datasets.google", "Google expert labels", "cxreval data fetch")
    from ..datasets import google, nih

    g = google.load_labels(metadata(ctx, google.GOOGLE_FILE), cache_dir=ctx.cache_dir).table
    n = nih.load_labels(metadata(ctx, nih.DATA_ENTRY), cache_dir=ctx.cache_dir).table
    n = n[n["study_id"].isin(set(g["study_id"]))]
    mapped = google.map_nih_to_google(n)
    g = g[g["finding"].isin(set(mapped["finding"]))]
    cols = ["study_id", "patient_id", "finding", "source", "state"]
    return NihGoogleLabels(pd.concat([mapped[cols], g[cols]], ignore_index=True), g)


def nih_predictions(ctx: DemoContext, study_ids: set[str]) -> pd.DataFrame:
    """The 10 NIH models' scores on the studies ``study_ids``, in Google's findings (max over the NIH findings that
    define each Google finding, the same mapping as the labels)."""
    from ..finding_maps import NIH_TO_GOOGLE
    from ..labels._wide import read_wide_predictions

    parts = []
    needed = sorted({f for sources in NIH_TO_GOOGLE.targets.values() for f in sources})
    for model in NIH_MODELS:
        p = pinned(ctx, f"nih_fold_predictions/{model}.csv")
        pr = read_wide_predictions(
            p, model=model, id_column="Image Index", prefix="prob_", findings=needed
        ).table
        pr = pr[pr["study_id"].isin(study_ids)]
        wide = pr.pivot(index="study_id", columns="finding", values="score")
        for target, sources in NIH_TO_GOOGLE.targets.items():
            parts.append(
                pd.DataFrame(
                    {
                        "study_id": wide.index,
                        "model": model,
                        "finding": target,
                        "score": wide[list(sources)].max(axis=1).to_numpy(),
                    }
                )
            )
    return pd.concat(parts, ignore_index=True)


def chexpert_labels(ctx: DemoContext) -> pd.DataFrame:
    """CheXpert test labels: consensus, 8 radiologists and 2 report labelers, as one long table."""
    from ..labels import read_wide_labels

    files = {"consensus": "chexpert_test/groundtruth.csv"}
    files.update({r: f"chexpert_test/radiologists/groundtruth/{r}_gt.csv" for r in CHEXPERT_GT_READERS})
    files.update(
        {r: f"chexpert_test/radiologists/benchmark_radiologists/{r}.csv" for r in CHEXPERT_BENCH_READERS}
    )
    files.update(
        {
            "chexpert_labeler": "chexpert_test/labeler/chexpert_labels.csv",
            "chexbert": "chexpert_test/labeler/chexbert_labels.csv",
        }
    )
    parts = [
        read_wide_labels(pinned(ctx, p), source=src, id_column="Study").table for src, p in files.items()
    ]
    return pd.concat(parts, ignore_index=True)


def chexpert_predictions(ctx: DemoContext) -> pd.DataFrame:
    """The 10 CheXpert leaderboard models' test-set predictions, as one long table."""
    from ..labels._wide import read_wide_predictions

    parts = [
        read_wide_predictions(
            pinned(ctx, f"chexpert_test/example_models/predictions/standard/{m}_predictions.csv"),
            model=m,
            id_column="Study",
        ).table
        for m in CHEXPERT_MODELS
    ]
    return pd.concat(parts, ignore_index=True)
