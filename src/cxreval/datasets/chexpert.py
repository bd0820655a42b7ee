"""CheXpert: the train/valid release (``train.csv``, ``valid.csv``) and the test set (500 studies read by 8
radiologists, two report labelers and 10 leaderboard models).

The release
-----------
``CheXpert-v1.0/`` (or the downsampled ``CheXpert-v1.0-small/``), from
https://stanfordmlgroup.github.io/competitions/chexpert/ (registration), holds ``train.csv`` and
``valid.csv`` with columns ``Path, Sex, Age, Frontal/Lateral, AP/PA`` and the 14 observations, one row per
image; ``Path`` is ``CheXpert-v1.0[-small]/{train,valid}/patientNNNNN/studyN/viewN_{frontal,lateral}.jpg``.
:func:`load_release` reads them as one long label table:

- ``train.csv``: labelled by the CheXpert labeler from the reports (``1.0`` positive, ``0.0`` negative,
  ``-1.0`` uncertain, blank not mentioned) -> source ``chexpert_labeler`` (:data:`TRAIN_SOURCE`);
- ``valid.csv``: 200 studies labelled by the consensus of three board-certified radiologists from the
  images (``1.0`` / ``0.0``) -> source ``chexpert_radiologists`` (:data:`VALID_SOURCE`), kept apart so that a
  model can be scored against either kind of reference.

Labels belong to studies: ``study_id`` is ``patientNNNNN/studyN`` (from the path, the same for the
``-small`` variant), ``patient_id`` the ``patientNNNNN`` part; the images of a study must carry the same
labels (they do in the release: the labels come from the study's report) and are counted in the read report.
An image's view is its ``AP/PA`` value (``AP``, ``PA``, ``LL``, ``RL``) for a frontal image and ``Lateral``
for a lateral one; ``views=('PA', 'AP')`` keeps the studies with such an image (the others are listed in
``dropped``). The ``cxreval data fetch`` copy of ``train.csv`` (``chexpert_train.csv.gz``, the ``-small``
release's) is read by the same reader (dataset ``chexpert_train``).

The test set
------------

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
from ..exceptions import DataUnavailableError, InvalidParameterError, SchemaError, UnknownNameError
from ..findings import CHEXPERT, CHEXPERT_COMPETITION, canonical_finding
from ..io._read import read_csv_file
from ..labels import read_wide_labels, validate_label_table
from ..labels._wide import read_wide_predictions
from ..results import ReadReport, ReadResult
from ..schema._columns import check_columns, first_true
from .mimic import check_views_present, decode_label_codes

__all__ = [
    "load_labels",
    "load_predictions",
]

CONSENSUS = "consensus"
RADIOLOGISTS: tuple[str, ...] = tuple(f"bc{i}" for i in range(1, 9))
LABELERS: tuple[str, ...] = ("chexpert_labeler", "chexbert")
SOURCES: tuple[str, ...] = (CONSENSUS, *RADIOLOGISTS, *LABELERS)
COMPETITION_FINDINGS: tuple[str, ...] = tuple(CHEXPERT_COMPETITION)


def _root(root: PathLike) -> Path:
    p = Path(root)
    if not (p / "groundtruth.csv").is_file():
        raise DataUnavailableError(
            f"{str(p)!r} is not a CheXpert test-set folder: 'groundtruth.csv' not found. "
            "Point to a copy of rajpurkarlab/cheXpert-test-set-labels."
        )
    return p


def label_files(root: PathLike) -> dict[str, Path]:
    """Source name → CSV path, for the files present under ``root``."""
    p = _root(root)
    files = {CONSENSUS: p / "groundtruth.csv"}
    for r in RADIOLOGISTS:
        for cand in (
            p / "radiologists" / "groundtruth" / f"{r}_gt.csv",
            p / "radiologists" / "benchmark_radiologists" / f"{r}.csv",
        ):
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
            raise UnknownNameError(
                f"Unknown CheXpert test-set source {s!r}; expected one of {list(SOURCES)}."
                f"{did_you_mean(str(s), SOURCES)}"
            )
        if s not in files:
            raise InvalidParameterError(
                f"Source {s!r} has no file under {str(root)!r}; present: {list(files)}."
            )
    tables, n_read, notes = [], 0, []
    for s in want:
        res = read_wide_labels(files[s], source=s, id_column="Study")
        tables.append(res.table)
        n_read += res.report.n_read
        notes += [f"{s}: {n}" for n in res.report.notes]
    digests = {s: hashlib.sha256(files[s].read_bytes()).hexdigest() for s in want}
    for i, a in enumerate(want):
        for b in want[i + 1 :]:
            if digests[a] == digests[b]:
                notes.append(
                    f"{a} and {b} are byte-identical files ({files[a].name}, {files[b].name}): "
                    "the two sources give the same labels"
                )
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
            raise UnknownNameError(
                f"Unknown CheXpert leaderboard model {m!r}; available: {avail}.{did_you_mean(str(m), avail)}"
            )
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
            notes.append(
                f"{m}: scores are not probabilities (max {mx:.4g}); used as given (AUC is rank-based)"
            )
    table = pd.concat(tables, ignore_index=True)
    wide = table.pivot_table(index=["study_id", "finding"], columns="model", values="score")
    for f in sorted(table["finding"].unique()):
        sub = wide.xs(f, level="finding")
        cols = list(sub.columns)
        for i, a in enumerate(cols):
            for b in cols[i + 1 :]:
                if np.array_equal(sub[a].to_numpy(), sub[b].to_numpy()):
                    notes.append(f"identical scores for {f}: {a} = {b}")
    return ReadResult(table, ReadReport(str(d), n_read, n_read, notes=tuple(notes)))


TRAIN_FILE = "train.csv"
VALID_FILE = "valid.csv"
TRAIN_SOURCE = "chexpert_labeler"
VALID_SOURCE = "chexpert_radiologists"
RELEASE_COLUMNS: tuple[str, ...] = ("Path", "Sex", "Age", "Frontal/Lateral", "AP/PA")
"""The columns before the 14 observations in ``train.csv`` / ``valid.csv``."""
_STUDY_RE = r"(?:^|/)(patient\d+)/(study\d+)/[^/]+$"


def _views(views: object, func: str) -> tuple[str, ...] | None:
    if views is None:
        return None
    if isinstance(views, str):
        views = views.split(",")
    if (
        not isinstance(views, (list, tuple))
        or not all(isinstance(v, str) for v in views)
        or not [v for v in views if v.strip()]
    ):
        raise InvalidParameterError(
            f"The 'views' parameter of {func} must be a sequence of views such as "
            f"('PA', 'AP') or ('Lateral',), or None. Got {views!r} instead."
        )
    return tuple(v.strip().upper() for v in views if v.strip())


def read_release_file(
    path: PathLike, *, source: str = TRAIN_SOURCE, views: tuple[str, ...] | list[str] | str | None = None
) -> ReadResult:
    """One CheXpert ``train.csv`` / ``valid.csv`` (or the fetched ``chexpert_train.csv.gz``) as a long label
    table of its studies (see the module docstring).

    Returns
    -------
    res : ReadResult
        ``res.table``: ``study_id`` (``patientNNNNN/studyN``), ``patient_id``, ``finding``, ``source``,
        ``state``, one row per study and observation in file order; ``res.report``: images read, kept (the
        images of kept studies), dropped by ``views`` (one row per image, ``value`` its path).

    Raises
    ------
    SchemaError
        A missing column, a path without ``patientNNNNN/studyN/``, a duplicated path, a value other than
        ``1.0, 0.0, -1.0`` or blank, or two images of one study with different labels (naming the rows).
    """
    vw = _views(views, "read_release_file")
    res, present = _read_release(Path(path), source, vw)
    if vw is not None:
        check_views_present(vw, present, func="read_release_file", where=f"file {str(path)!r}")
    return res


def _read_release(p: Path, source: str, vw: tuple[str, ...] | None) -> tuple[ReadResult, list[str]]:
    """:func:`read_release_file`'s table and the views the file's images have (``AP``, ``PA``, ``LATERAL``...)."""
    if not p.is_file():
        raise DataUnavailableError(f"File {str(p)!r} does not exist.")
    where = f"file {str(p)!r}"
    df = read_csv_file(
        p,
        error=lambda f, exc: f"Could not read {where} as CSV: {exc}",
        dtype={c: str for c in RELEASE_COLUMNS},
        keep_default_na=False,
        na_values=[""],
    )
    check_columns(df, RELEASE_COLUMNS, where=where)
    if not len(df):
        raise SchemaError(f"{where} has no rows.")
    fcols = [c for c in df.columns if c not in RELEASE_COLUMNS]
    canon = [canonical_finding(c, where=f"{where}, column {c!r}") for c in fcols]
    missing = [f for f in CHEXPERT if f not in canon]
    if missing:
        raise SchemaError(
            f"{where} lacks the observation columns {missing} (expected {list(RELEASE_COLUMNS)} and "
            f"the 14 CheXpert observations)."
        )
    paths = df["Path"]
    if paths.isna().any():
        raise SchemaError(f"Missing Path in {where}, row {int(np.flatnonzero(paths.isna().to_numpy())[0])}.")
    if paths.duplicated().any():
        raise SchemaError(
            f"Duplicate Path {paths[paths.duplicated()].iloc[0]!r} in {where}; one row per image."
        )
    parts = paths.str.extract(_STUDY_RE)
    bad = parts[0].isna().to_numpy()
    if (i := first_true(bad)) is not None:
        raise SchemaError(
            f"Path {paths.iloc[i]!r} in {where}, row {i}, column 'Path' is not of the form "
            f".../patientNNNNN/studyN/<image> (CheXpert-v1.0[-small]/train/patient00001/study1/"
            f"view1_frontal.jpg)."
        )
    study = (parts[0] + "/" + parts[1]).to_numpy(dtype=object)
    states = np.empty((len(df), len(fcols)), dtype=np.int8)
    for j, c in enumerate(fcols):
        states[:, j] = decode_label_codes(df[c], where=where, column=c)
    codes, uniq = pd.factorize(study)
    first = np.full(len(uniq), -1, dtype=np.int64)
    first[codes[::-1]] = np.arange(len(codes))[::-1]
    differ = (states != states[first[codes]]).any(axis=1)
    if (i := first_true(differ)) is not None:
        raise SchemaError(
            f"Images of study {study[i]!r} carry different labels in {where}: rows {int(first[codes[i]])} "
            f"and {i}; CheXpert labels belong to the study (its report)."
        )
    view = np.where(
        df["Frontal/Lateral"].fillna("").str.strip().str.lower() == "lateral",
        "LATERAL",
        df["AP/PA"].fillna("").str.strip().str.upper().to_numpy(),
    )
    keep_study = np.ones(len(uniq), dtype=bool)
    dropped = pd.DataFrame(columns=["row", "reason", "value"])
    if vw is not None:
        has = np.zeros(len(uniq), dtype=bool)
        np.logical_or.at(has, codes, np.isin(view, vw))
        keep_study = has
        out = np.flatnonzero(~keep_study[codes])
        dropped = pd.DataFrame(
            {
                "row": out,
                "reason": f"study without an image of views {list(vw)}",
                "value": paths.to_numpy(dtype=object)[out],
            }
        )
    rows = first[keep_study]
    k = len(fcols)
    sid = study[rows]
    table = pd.DataFrame(
        {
            "study_id": np.repeat(sid, k),
            "patient_id": np.repeat(parts[0].to_numpy(dtype=object)[rows], k),
            "finding": np.tile(np.asarray(canon, dtype=object), len(rows)),
            "source": source,
            "state": pd.array(states[rows].ravel(), dtype="Int8"),
        }
    )
    table = validate_label_table(table, where=where)
    n_img = len(df)
    notes = [f"{n_img:,} images of {len(uniq):,} studies; the labels are per study (identical on its images)"]
    renamed = [f"{a} -> {b}" for a, b in zip(fcols, canon) if a != b]
    if renamed:
        notes.append(f"renamed findings: {', '.join(renamed)}")
    return (
        ReadResult(
            table, ReadReport(str(p), n_img, n_img - len(dropped), dropped=dropped, notes=tuple(notes))
        ),
        [str(v) for v in pd.unique(view)],
    )


def load_release(
    root: PathLike,
    *,
    sources: tuple[str, ...] | list[str] | None = None,
    views: tuple[str, ...] | list[str] | str | None = None,
) -> ReadResult:
    """The CheXpert release folder (``train.csv``, ``valid.csv``) as one long label table.

    Parameters
    ----------
    root : path
        ``CheXpert-v1.0/`` or ``CheXpert-v1.0-small/`` (the folder holding ``train.csv`` and ``valid.csv``).
    sources : sequence of {'chexpert_labeler', 'chexpert_radiologists'}, optional
        Default both (``train.csv``, ``valid.csv``).
    views : sequence of str, optional
        Keep the studies with an image of these views (``PA``, ``AP``, ``LL``, ``RL``, ``Lateral``).

    Raises
    ------
    DataUnavailableError
        ``root`` is not a folder or lacks a file of a requested source (naming it and where it goes).
    """
    d = Path(root)
    files = {TRAIN_SOURCE: TRAIN_FILE, VALID_SOURCE: VALID_FILE}
    want = list(sources) if sources is not None else list(files)
    for s in want:
        if s not in files:
            raise UnknownNameError(
                f"Unknown CheXpert source {s!r}; expected one of {list(files)}.{did_you_mean(str(s), files)}"
            )
    if not d.is_dir():
        raise DataUnavailableError(
            f"CheXpert folder {str(d)!r} does not exist or is not a folder; pass "
            "CheXpert-v1.0/ (or CheXpert-v1.0-small/), the folder holding train.csv and valid.csv."
        )
    for s in want:
        if not (d / files[s]).is_file():
            raise DataUnavailableError(
                f"CheXpert folder {str(d)!r} has no {files[s]!r}: download CheXpert-v1.0 (or "
                "-small) from https://stanfordmlgroup.github.io/competitions/chexpert/ and "
                f"place {files[s]} in {str(d)!r}."
            )
    vw = _views(views, "load_release")
    read = [_read_release(d / files[s], s, vw) for s in want]
    if vw is not None:
        check_views_present(
            vw,
            [v for _, present in read for v in present],
            func="load_release",
            where=f"{' or '.join(files[s] for s in want)} in {str(d)!r}",
        )
    res = [r for r, _ in read]
    dropped = pd.concat(
        [
            r.report.dropped.assign(value=files[s] + ":" + r.report.dropped["value"].astype(str))
            for s, r in zip(want, res)
        ],
        ignore_index=True,
    )
    notes = tuple(f"{files[s]}: {n}" for s, r in zip(want, res) for n in r.report.notes)
    n_read = sum(r.report.n_read for r in res)
    return ReadResult(
        pd.concat([r.table for r in res], ignore_index=True),
        ReadReport(str(d), n_read, n_read - len(dropped), dropped=dropped, notes=notes),
    )


def load_fetched_train(
    path: PathLike, *, views: tuple[str, ...] | list[str] | str | None = None
) -> ReadResult:
    """The ``cxreval data fetch`` copy of CheXpert's ``train.csv`` (``chexpert_train.csv.gz``, the -small
    release's), read by :func:`read_release_file` (source ``chexpert_labeler``)."""
    return read_release_file(path, source=TRAIN_SOURCE, views=views)
