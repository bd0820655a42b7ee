"""The job of ``cxreval data split``: a seeded patient-level (or image-level) split of a dataset, its leakage
audit and the files that hold it (``<part>_list.txt``, ``assignments``, ``split_sizes``, ``summary.md``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from .._typing import PathLike, RNGLike
from .._validation import check_choice, check_path
from ..exceptions import InvalidParameterError
from ..io import write_table
from ..io._write import write_summary
from ..results import TableResult
from ._splits import (
    LeakageAudit,
    SplitResult,
    audit_split,
    check_split_names,
    image_split,
    patient_split,
    write_split_lists,
)

__all__ = ["SPLITTABLE", "SPLIT_UNITS", "DatasetSplit", "split_dataset"]

SPLITTABLE: tuple[str, ...] = ("chestxray14",)
"""Datasets :func:`split_dataset` (``cxreval data split``) draws a split of."""
SPLIT_UNITS: tuple[str, ...] = ("patient", "image")
"""What ``by=`` assigns as a whole: ``'patient'`` (no leakage) or ``'image'`` (the leaky baseline)."""


@dataclass(frozen=True)
class DatasetSplit(TableResult):
    """A drawn split of a dataset and its leakage audit.

    ``save(folder)`` writes what ``cxreval data split -o`` writes beside ``run.json``: one ``<part>_list.txt``
    per part (the format of ChestX-ray14's official lists, read back by
    :func:`cxreval.datasets.read_split_lists`), ``assignments`` (``study_id, patient_id, split``) and
    ``split_sizes`` (CSV + Parquet) and ``summary.md``.

    Attributes
    ----------
    dataset : str
        The dataset split.
    by : {'patient', 'image'}
        What was assigned as a whole.
    seed : int or None
        The integer seed of the draw (``None`` when ``rng`` was a generator or fresh entropy).
    split : SplitResult
        The assignments, part names, fractions and stratification.
    leakage : LeakageAudit
        Part sizes and the patients on more than one side (none for a patient-level split).
    """

    dataset: str
    by: str
    seed: int | None
    split: SplitResult
    leakage: LeakageAudit

    FILES: ClassVar[Mapping[str, str]] = MappingProxyType(
        {"assignments": "assignments.csv", "split_sizes": "split_sizes.csv"}
    )
    COLUMNS: ClassVar[tuple[str, ...]] = ("study_id", "patient_id", "split")
    """Columns of ``table`` (``assignments.csv``)."""

    @property
    def table(self) -> pd.DataFrame:
        """The assignments, one row per study (``assignments.csv``)."""
        return self.split.assignments

    def tables(self) -> dict[str, pd.DataFrame]:
        return {"assignments": self.split.assignments, "split_sizes": self.leakage.sizes}

    def save(self, folder: PathLike) -> dict[str, Path]:
        """Write the ``*_list.txt`` files, the tables (CSV + Parquet) and ``summary.md`` into ``folder``; return
        ``{name: path}`` (the lists under their part names)."""
        d = Path(folder)
        written = write_split_lists(self.split.assignments, d)
        written.update(
            {name: write_table(t, d, Path(self.FILES[name]).stem) for name, t in self.tables().items()}
        )
        written["summary"] = write_summary(d, self.summary())
        return written

    def summary(self) -> str:
        """Markdown: the draw (fractions, seed, stratification), the part sizes and the patients shared."""
        res, leak = self.split, self.leakage
        lines = [
            f"# {self.by}-level split of {self.dataset}",
            "",
            f"fractions {list(res.fractions)}, seed {self.seed}"
            + (f", stratified by {list(res.stratify)}" if res.stratify else ""),
            "",
            leak.sizes_markdown(unknown=False),
        ]
        lines += ["", f"Patients on more than one side: {leak.n_shared_patients:,}."]
        return "\n".join(lines)

    def to_dict(self) -> dict[str, object]:
        return {"split": self.split.to_dict(), "leakage": self.leakage.to_dict()}

    def _figure(self) -> Any:
        """Patients per part."""
        from .._plots import bars

        return bars(
            self.leakage.sizes,
            x="split",
            y="n_patients",
            title=f"{self.dataset}: patients per part",
            y_title="patients",
        )


def split_dataset(
    name: str,
    path: PathLike | None = None,
    *,
    fractions: Sequence[float] = (0.7, 0.1, 0.2),
    names: Sequence[str] | None = None,
    stratify: Sequence[str] | None = None,
    by: str = "patient",
    rng: RNGLike = None,
    cache_dir: PathLike | None = None,
) -> DatasetSplit:
    """Draw a split of the dataset ``name`` (one of :data:`SPLITTABLE`) and audit it for leakage.

    Parameters
    ----------
    name : str
        ``'chestxray14'``.
    path : path, optional
        Your own ``Data_Entry_2017*.csv[.gz]``; default the fetched copy.
    fractions : sequence of float
        The fraction of patients (of images with ``by='image'``) per part, summing to 1.
    names : sequence of str, optional
        The parts' names (default ``train, val, test``).
    stratify : sequence of str, optional
        Findings to stratify by (``by='patient'`` only; reads the labels).
    by : {'patient', 'image'}
        Assign whole patients (no leakage) or single images (the leaky baseline).
    rng : int, Generator or None
        The random draw; an int reproduces it (and is recorded as ``seed``).
    cache_dir : path, optional
        Cache directory of ``cxreval data fetch``.

    Returns
    -------
    DatasetSplit

    Raises
    ------
    InvalidParameterError
        An unknown ``name`` or ``by``, ``stratify`` with ``by='image'``, bad ``fractions`` or ``names``.
    """
    from . import nih

    check_choice(name, SPLITTABLE, name="name", func="split_dataset")
    check_choice(by, SPLIT_UNITS, name="by", func="split_dataset")
    check_path(path, name="path", func="split_dataset")
    nm = tuple(names) if names is not None else None
    check_split_names(nm or (), func="split_dataset")
    if stratify and by != "patient":
        raise InvalidParameterError("split_dataset: stratify needs by='patient'.")
    fr = tuple(float(x) for x in fractions)
    seed = int(rng) if isinstance(rng, (int, np.integer)) and not isinstance(rng, bool) else None
    strat = list(stratify) if stratify else None
    if strat:
        table = nih.load_labels(path, cache_dir=cache_dir).table
    else:
        table = nih.load_metadata(path, cache_dir=cache_dir)
    if by == "patient":
        res = patient_split(table, fractions=fr, names=nm, stratify=strat, rng=rng)
    else:
        res = image_split(table, fractions=fr, names=nm, rng=rng)
    meta = table[["study_id", "patient_id"]].drop_duplicates("study_id")
    return DatasetSplit(name, by, seed, res, audit_split(res, meta))
