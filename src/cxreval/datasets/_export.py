"""A registered dataset written as cxreval's own long table (``cxreval data export``).

The loaders of :mod:`cxreval.datasets` read each public file in its own layout; exporting one writes what the
loader returns — a label table (``study_id, patient_id, finding, source, state``), a box table, a report table
or per-image metadata — as CSV + Parquet, beside the rows the reader dropped and why, so that a user can feed
``agree``, ``classify``, ``fuse``, ``localize`` or ``label-reports --validate-against`` with the same table
the demo uses (for instance the OpenI MeSH codes, ``openi_mesh``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any, ClassVar

import pandas as pd

from .._typing import PathLike
from ..io import markdown_table, write_table
from ..io._write import write_summary
from ..results import ReadReport, TableResult
from ..schema import STATE
from ..schema._states import state_names

__all__ = ["DatasetExport", "export_dataset", "LOGIT_CHOICES", "LOGIT_DATASETS", "VIEW_DATASETS"]

VIEW_DATASETS: tuple[str, ...] = ("mimic_cxr", "chexpert", "chexpert_train")
"""Datasets whose loader filters by view (``views=``; ``cxreval data export --views``)."""
LOGIT_DATASETS: tuple[str, ...] = ("nih_predictions",)
"""Prediction datasets holding logit models, whose loader maps them to probabilities on request (``logits=``;
``cxreval data export --logits``)."""
LOGIT_CHOICES: tuple[str, ...] = ("keep", "sigmoid")
"""What ``logits=`` does with a logit model's scores: keep them as given, or map them through the sigmoid."""


@dataclass(frozen=True)
class DatasetExport(TableResult):
    """A dataset's table as its loader reads it, and the read report.

    ``save`` writes ``<kind>.csv`` (+ Parquet) — ``kind`` is the dataset's kind (``labels``, ``boxes``,
    ``reports``, ``metadata``, ``predictions``) — and ``dropped.csv`` when the reader dropped rows.

    Attributes
    ----------
    name, kind : str
        The dataset and its kind.
    table : pandas.DataFrame
        What the loader returned.
    report : ReadReport
        What was read, kept and dropped.
    options : mapping
        The loader options applied (``half``, ``views``, ``split``), recorded in ``run.json``.
    sources : tuple of Path
        The files read whose SHA-256 ``run.json`` records: the user's ``path``, or a pinned file; none for the
        fetched metadata.
    """

    name: str
    kind: str
    table: pd.DataFrame
    report: ReadReport
    options: Mapping[str, object] = field(default_factory=lambda: MappingProxyType({}))
    sources: tuple[Path, ...] = ()

    FILES: ClassVar[Mapping[str, str]] = MappingProxyType(
        {
            "labels": "labels.csv",
            "boxes": "boxes.csv",
            "reports": "reports.csv",
            "metadata": "metadata.csv",
            "predictions": "predictions.csv",
            "dropped": "dropped.csv",
        }
    )

    def tables(self) -> dict[str, pd.DataFrame]:
        """The dataset's table under its kind (a label table with its states as names, which read back
        without a ``--state-encoding``), and ``dropped`` when rows were dropped."""
        table = self.table
        if self.kind == "labels" and STATE in table.columns:
            table = table.assign(**{STATE: state_names(table[STATE])})
        out = {self.kind: table}
        if self.report.n_dropped:
            out["dropped"] = self.report.dropped
        return out

    def save(self, folder: PathLike) -> dict[str, Path]:
        """Write the tables of :meth:`tables` (CSV + Parquet) and ``summary.md`` (:meth:`summary`) into ``folder``:
        what ``cxreval data export -o`` writes beside ``run.json``; return ``{name: path}`` (``summary.md`` under
        ``"summary"``)."""
        d = Path(folder)
        written = {k: write_table(t, d, Path(self.FILES[k]).stem) for k, t in self.tables().items()}
        written["summary"] = write_summary(d, self.summary())
        return written

    def summary(self) -> str:
        """Markdown: what was read, kept and dropped."""
        rows = pd.DataFrame(
            {
                "": ["rows read", "rows kept", "rows dropped"],
                "n": [self.report.n_read, self.report.n_kept, self.report.n_dropped],
            }
        )
        lines = [
            f"# {self.name} ({self.kind})",
            "",
            f"Read from {self.report.source}.",
            "",
            markdown_table(rows, right=("n",)),
        ]
        for reason, n in self.report.reasons().items():
            lines.append(f"- dropped, {reason}: {n}")
        lines += [f"- {n}" for n in self.report.notes]
        return "\n".join(lines) + "\n"

    def to_dict(self) -> dict[str, object]:
        return {
            "dataset": self.name,
            "kind": self.kind,
            "n_rows": int(len(self.table)),
            "columns": [str(c) for c in self.table.columns],
            **self.report.to_dict(),
        }

    def _figure(self) -> Any:
        """Rows per finding (per state for a label table) of the exported table."""
        from .._plots import bars

        t = self.tables()[self.kind]
        by = [c for c in ("finding", "state") if c in t.columns] or [t.columns[0]]
        counts = t.groupby(by, sort=False).size().rename("rows").reset_index()
        return bars(
            counts,
            x=by[0],
            y="rows",
            color=by[1] if len(by) > 1 else None,
            barmode="stack",
            title=f"{self.name}: rows per {' and '.join(by)}",
        )


def export_dataset(
    name: str, path: PathLike | None = None, *, cache_dir: PathLike | None = None, **kwargs: Any
) -> DatasetExport:
    """Load the registered dataset ``name`` (:func:`cxreval.datasets.load_dataset`) for writing.

    Parameters
    ----------
    name, path, cache_dir, **kwargs
        As :func:`cxreval.datasets.load_dataset`: the dataset's name, the user's own copy (default the fetched
        copy), the cache directory of ``cxreval data fetch``, and what the loader is passed (e.g.
        ``half='held-out'`` for ``openi_mesh``).

    Returns
    -------
    res : DatasetExport

    Raises
    ------
    UnknownDatasetError
        Unknown name, with a did-you-mean.
    DataUnavailableError
        Not fetched, or a folder dataset without ``path``.
    """
    from ._registry import get_spec, load_dataset

    spec = get_spec(name)
    res = load_dataset(spec.name, path, cache_dir=cache_dir, **kwargs)
    sources = (Path(path),) if path else (Path(res.report.source),) if spec.pinned else ()
    return DatasetExport(spec.name, spec.kind, res.table, res.report, MappingProxyType(dict(kwargs)), sources)
