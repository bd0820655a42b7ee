"""Each source's labels as one study x finding grid of states, built once per source and reused across pairs."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import pandas as pd

from ..schema import FINDING, SOURCE, STATE, STUDY_ID

__all__ = ["SourceGrid", "SourceGrids"]


class SourceGrid(NamedTuple):
    """One source's labels (:meth:`SourceGrids.get`): its studies, its findings and the study x finding grid of
    states (NaN = no label)."""

    studies: pd.Index
    findings: pd.Index
    states: np.ndarray


class SourceGrids:
    """Each source's labels as one study x finding float grid, built once per source (NaN = no label)."""

    def __init__(self, labels: pd.DataFrame) -> None:
        self.labels = labels
        self.present = list(pd.unique(labels[SOURCE]))
        self._cache: dict[str, SourceGrid] = {}
        self._groups: dict[str, np.ndarray] | None = None

    def get(self, source: str) -> SourceGrid:
        if source not in self._cache:
            if self._groups is None:
                self._groups = {str(k): v for k, v in self.labels.groupby(SOURCE, sort=False).indices.items()}
            sub = self.labels.iloc[self._groups[source]]
            si, studies = pd.factorize(sub[STUDY_ID], sort=False)
            fi, findings = pd.factorize(sub[FINDING], sort=False)
            grid = np.full((len(studies), len(findings)), np.nan)
            grid[si, fi] = sub[STATE].to_numpy(dtype=float, na_value=np.nan)
            # object (not Arrow-string) indexes: isin / get_indexer use a hash table
            self._cache[source] = SourceGrid(
                pd.Index(np.asarray(studies, dtype=object), dtype=object),
                pd.Index(np.asarray(findings, dtype=object), dtype=object),
                grid,
            )
        return self._cache[source]
