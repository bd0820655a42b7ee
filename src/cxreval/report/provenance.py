"""The report's "Methods and provenance" section: what a reviewer needs to cite a run.

Read from each result folder's ``run.json`` (:mod:`cxreval.outputs`) where present: the command line,
cxreval and Python versions, start and end, the inputs with their SHA-256, and the run's parameters
(bootstrap size, confidence level and CI type, label policy, vocabularies, seed, ...); then the checksum
of every result file the report read, and the folder's ``summary.md``. A folder without ``run.json`` says
so: its provenance was not recorded.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from ..outputs._run_record import sha256_file
from ._key_findings import SEPARABILITY_NOTE, confidence_level
from ._templates import REPORT, Markup
from ._thresholds import Thresholds
from .headline import RULE
from .html_tables import html_table
from .result_files import listed_files, result_path, run_record

__all__: list[str] = []

_STANDARD = ("argv", "cxreval_version", "python", "started", "ended", "status", "inputs", "files")
PARAMETER_NAMES = {
    "n_resamples": "bootstrap resamples",
    "confidence_level": "confidence level",
    "ci_method": "CI type",
    "bootstrap_unit": "bootstrap unit",
    "seed": "seed",
    "label_policy": "label policy",
    "policy": "label policy",
    "not_mentioned": "'not mentioned' counts as",
    "vocabulary": "vocabulary",
    "findings": "findings",
    "references": "references",
    "models": "models",
    "data": "data",
}
"""Display names of the ``run.json`` parameters the section knows; others are shown by their key."""


def _value(v: object) -> str:
    if isinstance(v, (list, tuple)):
        return ", ".join(map(str, v))
    if isinstance(v, dict):
        return "; ".join(f"{k}: {_value(x)}" for k, x in v.items())
    return str(v)


def _shown(path: str | Path) -> str:
    """A path as the page shows it, ``..`` and ``.`` resolved (``/a/cmp/../shared`` is ``/a/shared``)."""
    import os

    return os.path.normpath(str(path))


def _folder_context(folder: Path, titles: Sequence[str]) -> dict[str, object]:
    """What ``templates/provenance.html.j2`` shows of one folder: its run.json's facts, parameters and
    inputs, the checksum of every result file read, its ``summary.md``."""
    heads = dict.fromkeys(t.split(" — ", 1)[-1] for t in titles)
    run_tables = ""
    found = run_record(folder)
    if found is not None:
        rec, prefix = found
        owner = folder.parent if prefix.count("/") == 1 else folder.parent.parent
        where = "this folder's run.json" if not prefix else f"run.json of {owner}"
        argv = rec.get("argv")
        rows: list[tuple[str, object]] = [
            ("recorded in", where),
            ("command", " ".join(map(str, argv)) if isinstance(argv, list) else ""),
            ("cxreval version", rec.get("cxreval_version", "")),
            ("Python", rec.get("python", "")),
            ("started / ended (UTC)", f"{rec.get('started', '')} / {rec.get('ended', '')}"),
            ("status", rec.get("status", "")),
        ]
        params: dict[str, object] = {k: v for k, v in rec.items() if k not in _STANDARD}
        meta = rec.get("meta")
        if isinstance(meta, dict):
            params.update(meta)
            params.pop("meta", None)
        rows += [(PARAMETER_NAMES.get(k, k), _value(v)) for k, v in params.items()]
        level, recorded = confidence_level(folder)
        if not recorded:
            rows.append(("confidence level", f"{level:g} (the library default; not recorded in run.json)"))
        kv = pd.DataFrame(rows, columns=["item", "value"])
        run_tables = html_table(kv, name=f"{folder.name}_run")
        inputs = rec.get("inputs") or []
        if isinstance(inputs, list) and inputs:
            shown = pd.json_normalize(inputs)
            if "path" in shown.columns:  # as run.json records it, '..' resolved
                shown["path"] = [_shown(str(v)) for v in shown["path"]]
            run_tables += html_table(shown, name=f"{folder.name}_inputs", caption="Inputs and their SHA-256")
    listed = listed_files(folder)
    names: list[str] = (
        sorted(listed)
        if listed is not None
        else sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file())
    )
    files = []
    for n in names:
        p = result_path(folder, n)
        if p is not None and p.suffix in (".csv", ".parquet", ".json", ".md", ".txt", ".npz", ".yaml"):
            files.append({"file": n, "bytes": p.stat().st_size, "sha256": sha256_file(p)})
    summary = result_path(folder, "summary.md")
    return {
        "heads": " / ".join(heads),
        "path": _shown(folder),
        "recorded": found is not None,
        "run_tables": Markup(run_tables),
        "n_files": len(files),
        "files_table": Markup(html_table(pd.DataFrame(files), name=f"{folder.name}_files")) if files else "",
        "summary": None if summary is None else summary.read_text(errors="replace"),
    }


def provenance_html(
    folders: Sequence[tuple[Path, Sequence[str]]],
    *,
    thresholds: Thresholds,
    version: str,
    plotly_version: str,
) -> str:
    """The body of the "Methods and provenance" section: report-level facts, the source papers, then one part
    per folder (the template ``templates/provenance.html.j2``)."""
    return REPORT.render(
        "provenance.html.j2",
        version=version,
        plotly_version=plotly_version,
        source=thresholds.source,
        separability_note=SEPARABILITY_NOTE,
        rule=RULE,
        folders=[_folder_context(f, t) for f, t in folders],
    )
