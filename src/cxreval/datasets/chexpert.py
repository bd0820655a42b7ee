"""The CheXpert test set: 500 studies read by 8 radiologists, two report labelers and 10 leaderboard models.

Citation: Irvin J, Rajpurkar P, et al. CheXpert: A large chest radiograph dataset with uncertainty labels
and expert comparison. AAAI 2019, doi:10.1609/aaai.v33i01.3301590. Test-set labels released by the
CheXpert authors at https://github.com/rajpurkarlab/cheXpert-test-set-labels (used in the CheXternal
paper, Rajpurkar et al., 2020). In that repository (commit a03eb34) ``chexpert_labels.csv`` and
``chexbert_labels.csv`` are byte-identical; :func:`load_labels` says so in its notes.

Layout (a copy of that repository)::

    groundtruth.csv                                   majority vote of 5 radiologists  -> source 'consensus'
    radiologists/groundtruth/bc{1,2,3,5,7}_gt.csv     those 5 readers                  -> sources 'bc1' ...
    radiologists/benchmark_radiologists/bc{4,6,8}.csv 3 more readers                   -> sources 'bc4' ...
    labeler/chexpert_labels.csv, chexbert_labels.csv  report labelers (1/0/-1/blank)   -> 'chexpert_labeler', 'chexbert'
    example_models/predictions/standard/<name>_predictions.csv   leaderboard scores    -> model <name>

Label encoding: radiologists and the consensus are binary (1/0); the report labelers give 1 / 0 / -1
(uncertain) / blank (not mentioned). With the default ``exclude`` policy uncertain report labels are
dropped and not-mentioned counts as negative (CheXpert practice). The patient id is the ``patientNNNNN``
part of the study path (one study per patient in the test set). The competition findings are
Atelectasis, Cardiomegaly, Consolidation, Edema and Pleural Effusion (canonical ``Effusion``).
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import pandas as pd

from .._typing import PathLike
from .._validation import did_you_mean
from ..exceptions import DataUnavailableError, InvalidParameterError, UnknownNameError
from ..findings import CHEXPERT_COMPETITION
from ..labels import read_wide_labels, read_wide_predictions
from ..results import ReadReport, ReadResult

__all__ = ["SOURCES", "RADIOLOGISTS", "LABELERS", "CONSENSUS", "COMPETITION_FINDINGS", "label_files",
           "list_models", "load_labels", "load_predictions"]

CONSENSUS = "consensus"
RADIOLOGISTS: tuple[str, ...] = tuple(f"bc{i}" for i in range(1, 9))
LABELERS: tuple[str, ...] = ("chexpert_labeler", "chexbert")
SOURCES: tuple[str, ...] = (CONSENSUS, *RADIOLOGISTS, *LABELERS)
COMPETITION_FINDINGS: tuple[str, ...] = tuple(CHEXPERT_COMPETITION)


def _root(root: PathLike) -> Path:
    p = Path(root)
    if not (p / "groundtruth.csv").is_file():
        raise DataUnavailableError(f"{str(p)!r} is not a CheXpert test-set folder: 'groundtruth.csv' not found. "
                                   "Point to a copy of rajpurkarlab/cheXpert-test-set-labels.")
    return p


def label_files(root: PathLike) -> dict[str, Path]:
    """Source name → CSV path, for the files present under ``root``."""
    p = _root(root)
    files = {CONSENSUS: p / "groundtruth.csv"}
    for r in RADIOLOGISTS:
        for cand in (p / "radiologists" / "groundtruth" / f"{r}_gt.csv",
                     p / "radiologists" / "benchmark_radiologists" / f"{r}.csv"):
            if cand.is_file():
                files[r] = cand
    for name, fn in (("chexpert_labeler", "chexpert_labels.csv"), ("chexbert", "chexbert_labels.csv")):
        if (p / "labeler" / fn).is_file():
            files[name] = p / "labeler" / fn
    return files


def load_labels(root: PathLike, *, sources: tuple[str, ...] | list[str] | None = None) -> ReadResult:
    """All reference sources of the CheXpert test set as one long label table.

    Parameters
    ----------
    root : path
        The test-set folder (see the module docstring).
    sources : sequence of str, optional
        Subset of :data:`SOURCES` (default: every source present).

    Returns
    -------
    res : ReadResult
        ``res.table``: ``study_id, patient_id, finding, source, state`` for the 14 CheXpert findings;
        ``res.report`` counts the rows read over all files and lists missing files in its notes.

    Raises
    ------
    DataUnavailableError
        ``root`` is not a test-set folder.
    InvalidParameterError
        An unknown or absent source.
    SchemaError
        A file breaks the wide-CSV schema (names the file, row and column).
    """
    files = label_files(root)
    want = list(sources) if sources is not None else list(files)
    for s in want:
        if s not in SOURCES:
            raise UnknownNameError(f"Unknown CheXpert test-set source {s!r}; expected one of {list(SOURCES)}."
                                   f"{did_you_mean(str(s), SOURCES)}")
        if s not in files:
            raise InvalidParameterError(f"Source {s!r} has no file under {str(root)!r}; present: {list(files)}.")
    tables, n_read, notes = [], 0, []
    for s in want:
        res = read_wide_labels(files[s], source=s, id_column="Study")
        tables.append(res.table)
        n_read += res.report.n_read
        notes += [f"{s}: {n}" for n in res.report.notes]
    digests = {s: hashlib.sha256(files[s].read_bytes()).hexdigest() for s in want}
    for i, a in enumerate(want):
        for b in want[i + 1:]:
            if digests[a] == digests[b]:
                notes.append(f"{a} and {b} are byte-identical files ({files[a].name}, {files[b].name}): "
                             "the two sources give the same labels")
    absent = [s for s in SOURCES if s not in files]
    if absent:
        notes.append(f"sources without a file: {absent}")
    table = pd.concat(tables, ignore_index=True)
    return ReadResult(table, ReadReport(str(root), n_read, n_read, notes=tuple(notes)))


def list_models(root: PathLike) -> list[str]:
    """Names of the leaderboard models with a predictions file."""
    d = _root(root) / "example_models" / "predictions" / "standard"
    return sorted(f.name[: -len("_predictions.csv")] for f in d.glob("*_predictions.csv"))


def load_predictions(root: PathLike, *, models: list[str] | None = None) -> ReadResult:
    """The leaderboard models' scores on the competition findings as one long prediction table.

    Scores are used as given: some models' scores exceed 1 (not probabilities), which does not affect
    AUC. Several submissions share identical scores on some findings; the notes list those pairs.
    The thresholded ``decisions/`` files are not read.
    """
    root_p = _root(root)
    d = root_p / "example_models" / "predictions" / "standard"
    avail = list_models(root_p)
    want = list(models) if models is not None else avail
    for m in want:
        if m not in avail:
            raise UnknownNameError(f"Unknown CheXpert leaderboard model {m!r}; available: {avail}."
                                   f"{did_you_mean(str(m), avail)}")
    if not want:
        raise DataUnavailableError(f"No '*_predictions.csv' file in {str(d)!r}.")
    tables, notes, n_read = [], [], 0
    for m in want:
        res = read_wide_predictions(d / f"{m}_predictions.csv", model=m, id_column="Study")
        tables.append(res.table)
        n_read += res.report.n_read
        notes += [f"{m}: {n}" for n in res.report.notes]
        mx = float(res.table["score"].max())
        if mx > 1:
            notes.append(f"{m}: scores are not probabilities (max {mx:.4g}); used as given (AUC is rank-based)")
    table = pd.concat(tables, ignore_index=True)
    wide = table.pivot_table(index=["study_id", "finding"], columns="model", values="score")
    for f in sorted(table["finding"].unique()):
        sub = wide.xs(f, level="finding")
        cols = list(sub.columns)
        for i, a in enumerate(cols):
            for b in cols[i + 1:]:
                if np.array_equal(sub[a].to_numpy(), sub[b].to_numpy()):
                    notes.append(f"identical scores for {f}: {a} = {b}")
    return ReadResult(table, ReadReport(str(d), n_read, n_read, notes=tuple(notes)))
