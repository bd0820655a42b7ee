"""The inputs of the demo's AUC sections (nih_models, chexpert_models) written to files, for the demo == CLI
tests of ``cxreval classify`` (test_classification.py) and ``cxreval rank`` (test_ranking.py).

The tables are those the demo sections evaluate, loaded by the same loaders (:mod:`cxreval.demo.data`) and
written as a user would hand them to the commands: predictions as Parquet (exact scores), labels with
:func:`cxreval.labels.write_labels`.
"""

from __future__ import annotations

from pathlib import Path

from cxreval.demo.data import (
    CHEXPERT_COMPETITION,
    DemoContext,
    chexpert_labels,
    chexpert_predictions,
)
from cxreval.labels import write_labels
from cxreval.labels._long import write_predictions

from .conftest import N_RESAMPLES


def _context(tmp: Path, shared_data: Path, metadata_dir: Path) -> DemoContext:
    return DemoContext(tmp, shared_data, metadata_dir.parent, N_RESAMPLES, 0, False)


def chexpert_inputs(tmp: Path, shared_data: Path, metadata_dir: Path) -> tuple[list[str], list[str]]:
    """``-p PRED -l LABELS -r REFS -f FINDINGS`` of the chexpert_models section, and its references in order."""
    ctx = _context(tmp / "ctx", shared_data, metadata_dir)
    labels = chexpert_labels(ctx)
    refs = list(dict.fromkeys(labels["source"]))
    p = write_predictions(chexpert_predictions(ctx), tmp / "chexpert_preds.parquet")
    lab = write_labels(labels, tmp / "chexpert_labels.csv")
    return ["-p", str(p), "-l", str(lab), "-r", ",".join(refs), "-f", ",".join(CHEXPERT_COMPETITION)], refs


def common() -> list[str]:
    """The bootstrap options of the demo sections run by the demo == CLI tests."""
    return ["--n-resamples", str(N_RESAMPLES), "--seed", "0"]
