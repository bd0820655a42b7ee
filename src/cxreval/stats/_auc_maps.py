"""A finding map applied to the scanned codes of prediction and label files (what ``classify --finding-map`` runs).

The rules are those of :mod:`cxreval.finding_maps` (:func:`~cxreval.finding_maps.map_label_table` and
:func:`~cxreval.finding_maps.map_prediction_table` on DataFrames); here they work on
:class:`~cxreval.labels.PredictionScan` / :class:`~cxreval.labels.LabelScan` in place, so a large file is never
held as a long table.
"""

from __future__ import annotations

import numpy as np

from ..finding_maps import combine_scores, combine_states
from ..findings import VocabularyMapping
from ..labels._streaming import LabelScan, PredictionScan

__all__ = ["map_prediction_scan", "map_label_scan"]


def _code(values: list, name: str) -> int:
    if name not in values:
        values.append(name)
    return values.index(name)


def map_prediction_scan(ps: PredictionScan, mapping: VocabularyMapping) -> None:
    """Add each target finding to the models that score all its sources but not the target (score rule of the
    map); ``ps`` is changed in place."""
    by_model: dict[int, set[str]] = {}
    for m, j in ps.scores:
        by_model.setdefault(m, set()).add(ps.findings[j])
    n = len(ps.studies)
    for t, srcs in mapping.targets.items():
        if srcs == (t,):
            continue
        derive = [m for m, have in by_model.items() if t not in have and all(s in have for s in srcs)]
        if not derive:
            continue
        tc = _code(ps.findings, t)
        scodes = [ps.findings.index(s) for s in srcs]
        for m in derive:
            cols = np.full((n, len(srcs)), np.nan)
            for q, j in enumerate(scodes):
                a = ps.scores[(m, j)][:n]
                cols[: len(a), q] = a
            ps.scores[(m, tc)] = combine_scores(cols, mapping.score)
            ps.slot_first[(m, tc)] = min(ps.slot_first[(m, j)] for j in scodes)
        first = np.full(n, np.iinfo(np.int64).max, dtype=np.int64)
        for j in [tc, *scodes]:
            a = ps.first_row.get(j)
            if a is not None:
                np.minimum(first[: len(a)], a[:n], out=first[: len(a)])
        ps.first_row[tc] = first


def map_label_scan(ls: LabelScan, mapping: VocabularyMapping) -> None:
    """Add each target finding's labels to the sources that label all its sources but not the target
    (``combine='any'``); ``ls`` is changed in place."""
    miss = LabelScan.MISSING_STATE
    new = []
    for r in np.unique(ls.source):
        rows_r = ls.source == r
        have = {ls.findings[j] for j in np.unique(ls.finding[rows_r])}
        for t, srcs in mapping.targets.items():
            if srcs == (t,) or t in have or not all(s in have for s in srcs):
                continue
            tc = _code(ls.findings, t)
            scodes = np.array([ls.findings.index(s) for s in srcs])
            sel = np.flatnonzero(rows_r & np.isin(ls.finding, scodes))
            studies, inv = np.unique(ls.study[sel], return_inverse=True)
            wide = np.full((len(studies), len(srcs)), miss, dtype=np.int16)
            wide[inv, _positions(scodes, ls.finding[sel])] = ls.state[sel]
            patient = np.full(len(studies), -1, dtype=ls.patient.dtype)
            np.maximum.at(patient, inv, ls.patient[sel])
            new.append(
                (
                    studies.astype(ls.study.dtype),
                    patient,
                    np.full(len(studies), tc, ls.finding.dtype),
                    np.full(len(studies), r, ls.source.dtype),
                    combine_states(wide, miss).astype(np.int8),
                )
            )
    if new:
        ls.study = np.concatenate([ls.study, *(p[0] for p in new)])
        ls.patient = np.concatenate([ls.patient, *(p[1] for p in new)])
        ls.finding = np.concatenate([ls.finding, *(p[2] for p in new)])
        ls.source = np.concatenate([ls.source, *(p[3] for p in new)])
        ls.state = np.concatenate([ls.state, *(p[4] for p in new)])


def _positions(codes: np.ndarray, values: np.ndarray) -> np.ndarray:
    """The position in ``codes`` of each of ``values`` (all present)."""
    order = np.argsort(codes)
    return order[np.searchsorted(codes[order], values)]
