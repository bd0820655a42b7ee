"""What several demo sections share: the run.json parameters of an AUC evaluation and the agreement section
(what ``cxreval agree`` writes into a section folder)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

from ..io._write import write_summary
from .data import DemoContext, metadata, need

if TYPE_CHECKING:
    from ..agreement import AgreementTableResult
    from ..stats import AUCResult

__all__: list[str] = []


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
