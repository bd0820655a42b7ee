"""``cxreval demo``: the main job end to end on real public data, into one HTML report.

The demo runs the analysis library functions (not sub-processes) section by section, writes each
section's tidy tables (CSV + Parquet, the same files the analysis commands write) and ``summary.md``
into ``OUT/<section>/``, and renders ``OUT/report.html`` from them. Data:

- public metadata from the ``torchxrayvision`` wheel (:func:`cxreval.datasets.fetch_metadata`);
- GitHub-hosted model predictions and CheXpert test labels, pinned by commit and SHA-256
  (:mod:`cxreval.datasets.mirror`), from a mirror folder when one is given or found, else downloaded;
- the XQA paper's tables and sample radiographs, from a mirror folder only.

A section whose module is not in this build, or whose data cannot be had, is listed in the report as
"not built" with the reason, what data it needs and an exact command that would build it (each runs as
written); the demo never fails because one source is unreachable. A part of a built section that could
not be made (the official split lists of the audit, expert ratings for IQA) is listed the same way and
named in the section's outcome, never claimed.

The whole output folder is written atomically (:func:`cxreval.outputs.output_folder`); each section
folder also gets its own ``run.json``: the inputs it read with their SHA-256 and its parameters
(bootstrap size, confidence level and CI type, label policy, vocabularies, seed), which the report's
"Methods and provenance" section shows.
"""

from __future__ import annotations

import json
import logging
import os
import time
import traceback
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

import numpy as np

from .._typing import RNGLike
from .._validation import check_folder
from ..exceptions import CxrevalError, InvalidParameterError
from ..outputs import output_folder
from ..outputs._folder import atomic_file, check_output_path
from ..outputs._run_record import RUN_FILE, utc_now, write_run_record
from ..progress import Progress, as_progress
from .data import RERUN, DemoContext, NotBuilt, rerun_command
from .sections import SECTIONS, DemoSpec

__all__ = ["DemoSection", "DemoResult", "run_demo"]

log = logging.getLogger(__name__)


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
    hint: str = ""

    def to_dict(self) -> dict[str, object]:
        return {
            **asdict(self),
            "seconds": round(self.seconds, 2),
            "folder": None if self.folder is None else str(self.folder),
        }


@dataclass(frozen=True)
class DemoResult:
    """What :func:`run_demo` did: the sections, the report file and its size, the total time, and the data
    mirror it read (``data_mirror``: the folder, or None when it had none; ``mirror_source``: how it was
    chosen, ``--data-mirror``, ``$CXREVAL_DATA_MIRROR`` or ``../shared/data``)."""

    out: Path
    report: Path
    report_bytes: int
    sections: tuple[DemoSection, ...] = field(default=())
    seconds: float = 0.0
    data_mirror: Path | None = None
    mirror_source: str = ""

    def to_dict(self) -> dict[str, object]:
        return {
            "out": str(self.out),
            "report": str(self.report),
            "report_bytes": self.report_bytes,
            "seconds": round(self.seconds, 2),
            "sections": [s.to_dict() for s in self.sections],
            "data_mirror": None if self.data_mirror is None else str(self.data_mirror),
            "mirror_source": self.mirror_source,
        }


def _section_record(ctx: DemoContext, spec: DemoSpec, started: str) -> None:
    """Write ``run.json`` into each folder the section created: its inputs, parameters, files and the commands
    that write the same files."""
    for d in ctx.created:
        write_run_record(
            d,
            started=started,
            inputs=[p for p in ctx.used if p.exists()],
            meta={
                "demo_section": spec.key,
                "seed": ctx.rng,
                "same_files_as": list(spec.commands),
                "commands": [],
                **ctx.meta,
            },
        )


def _run_section(ctx: DemoContext, spec: DemoSpec, prog: Progress) -> DemoSection:
    """Run one section (one task of ``prog``); on failure remove what it wrote and say why, with an exact
    command."""
    import shutil

    key, title = spec.key, spec.title
    ctx.used.clear()
    ctx.created.clear()
    ctx.meta.clear()
    n_missing = len(ctx.missing)
    log.info("demo: %s", title)
    task = prog.add(f"demo: {title}")
    t, started = time.perf_counter(), utc_now()
    rerun = rerun_command(key)
    try:
        folder = Path(spec.build(ctx))
        _section_record(ctx, spec, started)
        parts = [m[0] for m in ctx.missing[n_missing:]]
        ctx.missing[n_missing:] = [
            (a, b, rerun if c == RERUN else c, d) for a, b, c, d in ctx.missing[n_missing:]
        ]
        res = DemoSection(
            key,
            title,
            "built",
            time.perf_counter() - t,
            folder,
            reason=("built without: " + "; ".join(parts)) if parts else "",
        )
    except Exception as exc:  # the section is listed as not built (a bug: as an error); the others go on
        for d in ctx.created:
            shutil.rmtree(d, ignore_errors=True)
        del ctx.missing[n_missing:]
        if isinstance(exc, NotBuilt):
            res = DemoSection(
                key,
                title,
                "not built",
                time.perf_counter() - t,
                reason=exc.reason,
                command=rerun if exc.command == RERUN else exc.command,
                hint=exc.hint,
            )
        elif isinstance(exc, (CxrevalError, OSError)):
            res = DemoSection(
                key, title, "not built", time.perf_counter() - t, reason=str(exc), command=rerun
            )
        else:
            log.warning("demo section %s failed:\n%s", key, traceback.format_exc())
            res = DemoSection(
                key,
                title,
                "error",
                time.perf_counter() - t,
                reason=f"internal error: {type(exc).__name__}: {exc}",
            )
    prog.done(task)
    log.info("demo: %s: %s (%.1f s)", title, res.status, res.seconds)
    return res


def _add_to_run_record(out: Path, name: str) -> None:
    """List ``name`` (written after the folder was moved into place) in ``out/run.json``."""
    p = out / RUN_FILE
    rec = json.loads(p.read_text())
    rec["files"] = sorted({*rec.get("files", []), name})
    with atomic_file(p, overwrite=True) as tmp:
        tmp.write_text(json.dumps(rec, indent=2, default=str) + "\n")


def run_demo(
    out: str | Path = "demo-out",
    *,
    data_mirror: str | Path | None = None,
    cache_dir: str | Path | None = None,
    n_resamples: int = 1000,
    rng: RNGLike = None,
    download: bool = True,
    sections: Sequence[str] | None = None,
    progress: Progress | None = None,
    iqa_metrics: Sequence[str] | None = None,
    iqa_images: int | None = None,
    overwrite: bool = False,
) -> DemoResult:
    """Run the demo into ``out`` and write ``out/report.html``.

    Parameters
    ----------
    out : path, default='demo-out'
        Output folder (one sub-folder per section, plus ``report.html``).
    data_mirror : path, optional
        A local copy of the demo's data (:data:`cxreval.demo.data.MIRROR_LAYOUT`: ``chexpert_test/``,
        ``nih_fold_predictions/``, ``chestxray14/``, ``images/nih/``, each file as its pinned
        source publishes it); default ``$CXREVAL_DATA_MIRROR`` or ``../shared/data`` when present
        (:func:`cxreval.datasets.mirror.default_mirror`).
    cache_dir : path, optional
        Cache directory for metadata and downloads.
    n_resamples : int, default=1000
        Patient-bootstrap replicates.
    rng : int, optional
        The seed of every section (an int: each section records it in its ``run.json``, and the same seed gives
        the same tables); a generator is refused. Default: a seed drawn from fresh entropy, recorded likewise
        (``cxreval demo --seed`` defaults to 0).
    download : bool, default=True
        Allow network downloads (PyPI for metadata is handled by ``cxreval data fetch``; GitHub for
        pinned files).
    sections : sequence of str, optional
        Keys of :data:`SECTIONS` to run (default all); an unknown key is refused before any work, as are
        ``data_mirror`` or ``cache_dir`` when not a folder (``cache_dir`` not writable with ``download``).
    progress : Progress, optional
        One task per section, done when the section is (each is also logged).
    iqa_metrics : sequence of str, optional
        Full-reference metrics of the IQA section (default :data:`cxreval.demo.images.IQA_METRICS`).
    iqa_images : int, optional
        Radiographs the IQA section degrades (default :data:`cxreval.demo.images.IQA_N_IMAGES`).
    overwrite : bool, default=False
        Replace an existing non-empty ``out`` whole; without it such a folder is refused before any work.

    Returns
    -------
    res : DemoResult
    """
    from ..datasets.mirror import default_mirror
    from ..report import write_report
    from ..report._blocks import Unavailable
    from .images import IQA_METRICS, IQA_N_IMAGES

    keys = [spec.key for spec in SECTIONS]
    if sections is not None:
        unknown = [s for s in sections if s not in keys]
        if unknown:
            raise InvalidParameterError(f"sections=: unknown section(s) {unknown}; known: {', '.join(keys)}.")
    if iqa_images is not None and (
        isinstance(iqa_images, bool) or not isinstance(iqa_images, int) or iqa_images < 1
    ):
        raise InvalidParameterError(
            f"The 'iqa_images' parameter of run_demo must be a positive int. Got {iqa_images!r} instead."
        )
    if iqa_metrics is not None:
        from ..iqa import list_metrics

        known = list_metrics(reference="full")
        bad = [m for m in iqa_metrics if m not in known]
        if bad or isinstance(iqa_metrics, str) or not iqa_metrics:
            raise InvalidParameterError(
                f"The 'iqa_metrics' parameter of run_demo must be a non-empty list of "
                f"full-reference metrics {known}. Got {iqa_metrics!r} instead."
            )
    if rng is None:
        rng = int(np.random.SeedSequence().generate_state(1)[0])
    if isinstance(rng, bool) or not isinstance(rng, (int, np.integer)):
        raise InvalidParameterError(
            f"The 'rng' parameter of run_demo must be an int seed (recorded in each section's "
            f"run.json). Got {rng!r} instead."
        )
    prog = as_progress(progress, func="run_demo")
    t0 = time.perf_counter()
    guard = [p for p in (data_mirror, cache_dir) if p is not None]
    out = check_output_path(out, overwrite=overwrite, inputs=guard)
    check_folder("--data-mirror", data_mirror)
    check_folder("--cache-dir", cache_dir, write=bool(download))
    mirror = default_mirror(data_mirror)
    done: list[DemoSection] = []
    missing: list[tuple[str, str, str, str]] = []
    with output_folder(
        out,
        overwrite=overwrite,
        meta={
            "seed": int(rng),
            "n_resamples": int(n_resamples),
            "data_mirror": None if mirror is None else str(mirror),
        },
        protect=guard,
    ) as tmp:
        ctx = DemoContext(
            tmp,
            mirror,
            None if cache_dir is None else Path(cache_dir),
            int(n_resamples),
            int(rng),
            bool(download),
            tuple(IQA_METRICS if iqa_metrics is None else iqa_metrics),
            IQA_N_IMAGES if iqa_images is None else int(iqa_images),
        )
        for spec in SECTIONS:
            if sections is not None and spec.key not in sections:
                continue
            done.append(_run_section(ctx, spec, prog))
        missing = list(ctx.missing)
    done = [s if s.folder is None else replace(s, folder=out / s.folder.relative_to(tmp)) for s in done]
    built = [s.folder for s in done if s.folder is not None]
    unavailable = [
        Unavailable(s.title, f"{s.status}: {s.reason}", s.command, s.hint)
        for s in done
        if s.status != "built"
    ]
    unavailable += [Unavailable(t, r, c, h) for t, r, c, h in missing]
    intro = (
        "<p>How the choice of reference changes conclusions, on real public data: each section below "
        "was computed by <code>cxreval demo</code> with the library's analysis functions; the tables are "
        "the files in the section's folder.</p>"
    )
    rep = write_report(
        built,
        out / "report.html",
        title="cxreval demo: does the conclusion survive a change of reference?",
        unavailable=unavailable,
        intro_html=intro,
        list_missing_kinds=False,
        allow_empty=True,
        overwrite=True,
    )
    _add_to_run_record(out, "report.html")
    source = (
        "data_mirror="
        if data_mirror is not None
        else "$CXREVAL_DATA_MIRROR"
        if os.environ.get("CXREVAL_DATA_MIRROR")
        else "../shared/data"
        if mirror is not None
        else ""
    )
    return DemoResult(out, rep.path, rep.n_bytes, tuple(done), time.perf_counter() - t0, mirror, source)
