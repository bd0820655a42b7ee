"""Patient-level splits: a seeded generator, split list files and a leakage audit.

A split assigns every study (image) to one named part (``train``, ``val``, ``test`` ...). It is
*patient-level* when all studies of a patient lie in the same part; otherwise a patient's images sit
on both sides and the test set is not independent of training ("leakage"). ChestX-ray14's official
split is patient-level; a split drawn image by image is not.

- :func:`patient_split` draws a seeded patient-level split with given fractions (default 70/10/20),
  optionally stratified by findings (each patient's stratum is which of the findings they have
  positive on any study).
- :func:`read_split_lists` reads a folder of ``*list.txt`` files (one study id per line), one split
  per file, named after the file (``train_val_list.txt`` → ``train_val``).
- :func:`audit_split` counts studies and patients per part and the patients found on more than one
  side, with their studies.

A split is a long table ``study_id, split``; a study may appear in more than one part (that itself is
reported by the audit as leakage).

Examples
--------
>>> import pandas as pd
>>> meta = pd.DataFrame({"study_id": [f"s{i}" for i in range(10)],
...                      "patient_id": ["p0", "p0", "p1", "p2", "p2", "p3", "p4", "p5", "p6", "p7"]})
>>> res = patient_split(meta, fractions=(0.5, 0.5), names=("train", "test"), rng=0)
>>> res.sizes()["n_patients"].tolist()
[4, 4]
>>> audit_split(res.assignments, meta).n_shared_patients
0
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from .._typing import RNGLike
from .._validation import is_str_sequence, normalize_rng
from ..exceptions import InvalidParameterError, SchemaError
from ..findings import canonical_finding
from ..io import markdown_table
from ..schema import LabelState
from ..schema._columns import check_columns, first_true
from ._split_lists import _SPLIT_COLUMNS, check_split_names, read_split_lists, write_split_lists

__all__ = [
    "DEFAULT_FRACTIONS",
    "DEFAULT_NAMES",
    "SplitResult",
    "LeakageAudit",
    "patient_split",
    "image_split",
    "read_split_lists",
    "write_split_lists",
    "check_split_names",
    "audit_split",
]

DEFAULT_FRACTIONS: tuple[float, ...] = (0.7, 0.1, 0.2)
DEFAULT_NAMES: tuple[str, ...] = ("train", "val", "test")


@dataclass(frozen=True)
class SplitResult:
    """A generated split.

    Attributes
    ----------
    assignments : pandas.DataFrame
        ``study_id, patient_id, split``, one row per study, in input order.
    names : tuple of str
        The parts, in the order of ``fractions``.
    fractions : tuple of float
        Requested fraction of patients (or of studies for :func:`image_split`) per part.
    unit : {'patient', 'study'}
        What was assigned as a whole.
    stratify : tuple of str
        Findings used for stratification (empty when none).
    """

    assignments: pd.DataFrame
    names: tuple[str, ...]
    fractions: tuple[float, ...]
    unit: str
    stratify: tuple[str, ...] = ()

    def sizes(self) -> pd.DataFrame:
        """``split, n_studies, n_patients`` per part, in the order of ``names``."""
        g = self.assignments.groupby("split", sort=False)
        out = pd.DataFrame({"n_studies": g["study_id"].size(), "n_patients": g["patient_id"].nunique()})
        out = out.reindex(list(self.names), fill_value=0).rename_axis("split").reset_index()
        return out.astype({"n_studies": int, "n_patients": int})

    def to_dict(self) -> dict[str, object]:
        return {
            "names": list(self.names),
            "fractions": list(self.fractions),
            "unit": self.unit,
            "stratify": list(self.stratify),
            "sizes": self.sizes().to_dict(orient="records"),
        }


@dataclass(frozen=True)
class LeakageAudit:
    """Sizes of a split's parts and the patients (and studies) found on more than one side.

    Attributes
    ----------
    sizes : pandas.DataFrame
        ``split, n_studies, n_patients, n_unknown`` (``n_unknown``: listed studies absent from the metadata,
        which therefore have no patient).
    pairs : pandas.DataFrame
        ``split_a, split_b, n_shared_patients, n_studies_a, n_studies_b``: for each pair of parts, the
        patients in both and how many of their studies lie in each part.
    shared_patients : pandas.DataFrame
        ``patient_id, n_splits, splits, n_studies``: every patient on more than one side.
    shared_studies : pandas.DataFrame
        ``study_id, splits``: studies listed in more than one part.
    unknown_studies : pandas.DataFrame
        ``study_id, split``: listed studies absent from the metadata.
    n_unassigned : int
        Studies of the metadata in no part.
    """

    sizes: pd.DataFrame
    pairs: pd.DataFrame
    shared_patients: pd.DataFrame
    shared_studies: pd.DataFrame
    unknown_studies: pd.DataFrame
    n_unassigned: int
    notes: tuple[str, ...] = field(default=())

    @property
    def n_shared_patients(self) -> int:
        """Patients with studies in more than one part."""
        return int(len(self.shared_patients))

    @property
    def n_shared_studies(self) -> int:
        return int(len(self.shared_studies))

    @property
    def leaks(self) -> bool:
        """True when any patient or study lies on more than one side."""
        return self.n_shared_patients > 0 or self.n_shared_studies > 0

    def sizes_markdown(self, *, unknown: bool = True, unit: str = "images") -> str:
        """:attr:`sizes` as a Markdown table: ``split | images | patients`` (counts right-aligned, with
        thousands separators; ``unit`` names the split's unit, e.g. ``studies``), and ``not in metadata`` when
        ``unknown``."""
        cols = {"split": "split", "n_studies": unit, "n_patients": "patients"}
        if unknown:
            cols["n_unknown"] = "not in metadata"
        t = pd.DataFrame(
            {name: self.sizes[c].map(str if c == "split" else "{:,}".format) for c, name in cols.items()}
        )
        return markdown_table(t, right=list(t.columns[1:]))

    def to_dict(self) -> dict[str, object]:
        return {
            "sizes": self.sizes.to_dict(orient="records"),
            "pairs": self.pairs.to_dict(orient="records"),
            "n_shared_patients": self.n_shared_patients,
            "n_shared_studies": self.n_shared_studies,
            "n_unknown_studies": int(len(self.unknown_studies)),
            "n_unassigned": self.n_unassigned,
            "leaks": self.leaks,
            "notes": list(self.notes),
        }


def _validate_fractions(
    fractions: object, names: object, func: str
) -> tuple[tuple[float, ...], tuple[str, ...]]:
    try:
        fr = tuple(float(f) for f in fractions)  # type: ignore[attr-defined]
    except (TypeError, ValueError):
        raise InvalidParameterError(
            f"The 'fractions' parameter of {func} must be a sequence of floats in "
            f"(0, 1] summing to 1. Got {fractions!r} instead."
        ) from None
    if not fr or any(not np.isfinite(f) or f <= 0 for f in fr) or abs(sum(fr) - 1) > 1e-6:
        raise InvalidParameterError(
            f"The 'fractions' parameter of {func} must be a sequence of floats in "
            f"(0, 1] summing to 1. Got {fractions!r} instead."
        )
    if names is None:
        nm = DEFAULT_NAMES if len(fr) == 3 else tuple(f"split{i}" for i in range(len(fr)))
    elif not is_str_sequence(names):
        raise InvalidParameterError(
            f"The 'names' parameter of {func} must be a sequence of str. Got {names!r} instead."
        )
    else:
        nm = tuple(names)
    if len(nm) != len(fr) or len(set(nm)) != len(nm):
        raise InvalidParameterError(
            f"The 'names' parameter of {func} must hold {len(fr)} distinct names, one per "
            f"fraction. Got {list(nm)} instead."
        )
    check_split_names(nm, func=func)
    return fr, nm


def _studies(table: object, func: str) -> pd.DataFrame:
    """One row per study (``study_id, patient_id``) from metadata or a long label table."""
    if not isinstance(table, pd.DataFrame):
        raise InvalidParameterError(
            f"The 'table' parameter of {func} must be a pandas DataFrame with columns "
            f"['study_id', 'patient_id']. Got {type(table).__name__} instead."
        )
    check_columns(table, ("study_id", "patient_id"), where=f"the table passed to {func}")
    st = pd.DataFrame(
        {
            "study_id": table["study_id"].astype("str").to_numpy(),
            "patient_id": table["patient_id"].astype("str").to_numpy(),
        }
    )
    miss = table["patient_id"].isna().to_numpy()
    if (i := first_true(miss)) is not None:
        raise SchemaError(
            f"Missing patient id in the table passed to {func}, row {i}, column 'patient_id' "
            f"(study {st['study_id'].iloc[i]!r}); a patient-level split needs every patient id."
        )
    st = st.drop_duplicates()
    multi = st["study_id"].duplicated(keep=False)
    if multi.any():
        s = st.loc[multi, "study_id"].iloc[0]
        raise SchemaError(
            f"Study {s!r} in the table passed to {func} has more than one patient id "
            f"{sorted(st.loc[st.study_id == s, 'patient_id'])}."
        )
    return st.reset_index(drop=True)


def _strata(table: pd.DataFrame, patients: np.ndarray, stratify: tuple[str, ...], func: str) -> np.ndarray:
    """Stratum code per patient: which of the findings the patient has positive on any study."""
    check_columns(table, ("finding", "state"), where=f"the table passed to {func} (needed by stratify)")
    fnd = table["finding"].astype("str")
    pos = table["state"].to_numpy(dtype=float, na_value=np.nan) == float(LabelState.POS)
    code = pd.Series(0, index=pd.Index(patients, name="patient_id"), dtype=np.int64)
    for k, f in enumerate(stratify):
        sel = (fnd == f).to_numpy()
        if not sel.any():
            raise SchemaError(
                f"Stratification finding {f!r} has no rows in the table passed to {func}; findings "
                f"present: {sorted(fnd.unique())}."
            )
        hit = pd.Series(pos[sel]).groupby(table["patient_id"].astype("str").to_numpy()[sel]).any()
        code = code + hit.reindex(code.index, fill_value=False).astype(np.int64) * (1 << k)
    return code.to_numpy()


def _allocate(n: int, fractions: tuple[float, ...]) -> np.ndarray:
    """Largest-remainder counts per part summing to ``n``."""
    raw = np.asarray(fractions) * n
    cnt = np.floor(raw).astype(int)
    rest = n - int(cnt.sum())
    if rest:
        order = np.argsort(-(raw - cnt), kind="stable")
        cnt[order[:rest]] += 1
    return cnt


def _allocate_strata(sizes: np.ndarray, fractions: tuple[float, ...], gen: np.random.Generator) -> np.ndarray:
    """Counts per (stratum, part): each stratum split in proportion, and the part totals exactly the
    largest-remainder counts of the whole (controlled rounding; ties broken with ``gen``)."""
    fr = np.asarray(fractions)
    raw = sizes[:, None] * fr[None, :]
    cnt = np.floor(raw).astype(np.int64)
    row_left = sizes - cnt.sum(axis=1)
    col_left = _allocate(int(sizes.sum()), fractions) - cnt.sum(axis=0)
    rem = (raw - cnt).ravel()
    order = np.lexsort((gen.random(rem.size), -rem))  # largest remainder first, random among ties
    for k in order:
        i, j = divmod(int(k), len(fr))
        if row_left[i] > 0 and col_left[j] > 0:
            cnt[i, j] += 1
            row_left[i] -= 1
            col_left[j] -= 1
    for i in np.flatnonzero(row_left > 0):  # type: ignore[assignment]  # rare: fill what the first pass could not place
        for j in np.flatnonzero(col_left > 0):  # type: ignore[assignment]
            take = min(row_left[i], col_left[j])
            cnt[i, j] += take
            row_left[i] -= take
            col_left[j] -= take
    return cnt


def _assign(
    units: np.ndarray, strata: np.ndarray, fractions: tuple[float, ...], gen: np.random.Generator
) -> np.ndarray:
    part = np.empty(len(units), dtype=np.int64)
    levels = np.unique(strata)
    members = [np.flatnonzero(strata == s) for s in levels]
    counts = _allocate_strata(np.array([len(m) for m in members]), fractions, gen)
    for idx, c in zip(members, counts):
        idx = idx[gen.permutation(len(idx))]
        part[idx] = np.repeat(np.arange(len(fractions)), c)
    return part


def patient_split(
    table: pd.DataFrame,
    *,
    fractions: Sequence[float] = DEFAULT_FRACTIONS,
    names: Sequence[str] | None = None,
    stratify: str | Sequence[str] | None = None,
    rng: RNGLike = None,
) -> SplitResult:
    """Draw a seeded patient-level split.

    Patients are shuffled with ``rng`` (within each stratum when ``stratify`` is given) and cut into parts
    holding ``round(fraction * n_patients)`` patients (largest remainder, so the counts add up; with
    strata, each stratum is divided in proportion and the part totals are still exact); every study
    follows its patient.

    Parameters
    ----------
    table : pandas.DataFrame
        Study metadata (``study_id, patient_id``) or a long label table (which must also hold ``finding``
        and ``state`` when ``stratify`` is given).
    fractions : sequence of float, default=(0.7, 0.1, 0.2)
        Fraction of patients per part; positive, summing to 1.
    names : sequence of str, optional
        Part names; default ``('train', 'val', 'test')`` for three parts, else ``split0, split1, ...``.
    stratify : str or sequence of str, optional
        Finding(s) to stratify by: a patient's stratum is the set of these findings that are positive on
        any of their studies, so each part gets about the same share of positive patients.
    rng : int, numpy.random.Generator or None
        Seed or generator; the same input and seed give the same split.

    Returns
    -------
    res : SplitResult

    Raises
    ------
    InvalidParameterError
        Fractions not positive or not summing to 1; names not one per fraction.
    SchemaError
        Missing columns or patient ids; a study with two patients; a stratification finding absent.
    """
    fr, nm = _validate_fractions(fractions, names, "patient_split")
    gen = normalize_rng(rng)
    strat: tuple[str, ...] = ()
    if stratify is not None:
        if not isinstance(stratify, (str, Sequence)):
            raise InvalidParameterError(
                f"The 'stratify' parameter of patient_split must be a finding name, a "
                f"sequence of finding names or None. Got {stratify!r} instead."
            )
        items = (stratify,) if isinstance(stratify, str) else tuple(stratify)
        strat = tuple(canonical_finding(f, where="the 'stratify' parameter of patient_split") for f in items)
    studies = _studies(table, "patient_split")
    patients = np.sort(studies["patient_id"].unique())  # sorted: independent of input row order
    strata = (
        _strata(table, patients, strat, "patient_split") if strat else np.zeros(len(patients), dtype=np.int64)
    )
    part = _assign(patients, strata, fr, gen)
    of_patient = pd.Series(np.asarray(nm, dtype=object)[part], index=patients)
    out = studies.assign(split=of_patient.reindex(studies["patient_id"]).to_numpy())
    return SplitResult(out, nm, fr, "patient", strat)


def image_split(
    table: pd.DataFrame,
    *,
    fractions: Sequence[float] = (0.8, 0.2),
    names: Sequence[str] | None = None,
    rng: RNGLike = None,
) -> SplitResult:
    """Draw a seeded split of *studies*, ignoring patients (the leaky baseline the audit should flag).

    Parameters and return value as :func:`patient_split` (no stratification); default 80/20 named
    ``split0, split1`` unless ``names`` is given.
    """
    fr, nm = _validate_fractions(fractions, names, "image_split")
    gen = normalize_rng(rng)
    studies = _studies(table, "image_split")
    order = np.argsort(studies["study_id"].to_numpy(), kind="stable")
    part = np.empty(len(studies), dtype=np.int64)
    part[order] = _assign(order, np.zeros(len(order), dtype=np.int64), fr, gen)
    return SplitResult(studies.assign(split=np.asarray(nm, dtype=object)[part]), nm, fr, "study")


def _isin(values: pd.Series, members: object) -> np.ndarray:
    """``values.isin(members)`` as a boolean array; a hash lookup (pandas' Arrow-string ``isin`` is slow)."""
    return pd.Index(members).unique().get_indexer(values) >= 0


def _as_split_table(splits: object) -> pd.DataFrame:
    if isinstance(splits, SplitResult):
        splits = splits.assignments
    if isinstance(splits, pd.DataFrame):
        check_columns(splits, _SPLIT_COLUMNS, where="the split table passed to audit_split")
        return pd.DataFrame(
            {
                "study_id": splits["study_id"].astype("str").to_numpy(),
                "split": splits["split"].astype("str").to_numpy(),
            }
        )
    if isinstance(splits, Mapping):
        parts = []
        for name, ids in splits.items():
            if isinstance(ids, str) or not isinstance(ids, (Sequence, np.ndarray, pd.Series, pd.Index)):
                raise InvalidParameterError(
                    f"Split {name!r} passed to audit_split must be a sequence of study ids. "
                    f"Got {type(ids).__name__} instead."
                )
            parts.append(pd.DataFrame({"study_id": pd.Series(list(ids), dtype="str"), "split": str(name)}))
        if not parts:
            raise InvalidParameterError("The 'splits' parameter of audit_split holds no split.")
        return pd.concat(parts, ignore_index=True)
    raise InvalidParameterError(
        "The 'splits' parameter of audit_split must be a DataFrame (study_id, split), a "
        f"SplitResult or a mapping split -> study ids. Got {type(splits).__name__} instead."
    )


def audit_split(
    splits: pd.DataFrame | SplitResult | Mapping[str, Sequence[str]], metadata: pd.DataFrame
) -> LeakageAudit:
    """Audit a split for patient leakage.

    Parameters
    ----------
    splits : DataFrame ``study_id, split``, SplitResult, or mapping ``{split: study ids}``
        The parts (for example from :func:`read_split_lists`).
    metadata : pandas.DataFrame
        ``study_id, patient_id`` for every study (e.g. :func:`cxreval.datasets.nih.load_metadata`).

    Returns
    -------
    res : LeakageAudit
        Sizes per part, patients and studies on more than one side, listed studies missing from the
        metadata (reported, never dropped silently).
    """
    sp = _as_split_table(splits)
    meta = _studies(metadata, "audit_split")
    pid = pd.Series(meta["patient_id"].to_numpy(), index=meta["study_id"].to_numpy())
    sp["patient_id"] = pid.reindex(sp["study_id"].to_numpy()).to_numpy()
    unknown = sp[sp["patient_id"].isna()][["study_id", "split"]].reset_index(drop=True)
    order = list(splits.names) if isinstance(splits, SplitResult) else list(dict.fromkeys(sp["split"]))
    g = sp.assign(unknown=sp["patient_id"].isna()).groupby("split", sort=False)
    sizes = pd.DataFrame(
        {
            "n_studies": g["study_id"].nunique(),
            "n_patients": g["patient_id"].nunique(),
            "n_unknown": g["unknown"].sum(),
        }
    )
    sizes = (
        sizes.reindex(order, fill_value=0)
        .rename_axis("split")
        .reset_index()
        .astype({"n_studies": int, "n_patients": int, "n_unknown": int})
    )
    known = sp.dropna(subset=["patient_id"])
    ps = known[["patient_id", "split"]].drop_duplicates()
    n_sides = ps["patient_id"].value_counts()
    multi = ps[_isin(ps["patient_id"], n_sides.index[n_sides > 1])].sort_values(["patient_id", "split"])
    joined = multi.groupby("patient_id", sort=True)["split"].agg("|".join)
    n_st = known[_isin(known["patient_id"], joined.index)].groupby("patient_id")["study_id"].nunique()
    shared_patients = pd.DataFrame(
        {
            "patient_id": joined.index.astype("str"),
            "n_splits": n_sides.reindex(joined.index).to_numpy(dtype=int),
            "splits": joined.to_numpy(),
            "n_studies": n_st.reindex(joined.index).to_numpy(dtype=int),
        }
    )
    pairs = []
    shared = known[_isin(known["patient_id"], joined.index)]
    sets = {name: set(shared.loc[shared["split"] == name, "patient_id"]) for name in order}
    for i, a in enumerate(order):
        for b in order[i + 1 :]:
            both = sets[a] & sets[b]
            in_a = shared[(shared["split"] == a) & _isin(shared["patient_id"], list(both))]
            in_b = shared[(shared["split"] == b) & _isin(shared["patient_id"], list(both))]
            pairs.append(
                {
                    "split_a": a,
                    "split_b": b,
                    "n_shared_patients": len(both),
                    "n_studies_a": int(in_a["study_id"].nunique()),
                    "n_studies_b": int(in_b["study_id"].nunique()),
                }
            )
    pairs_df = pd.DataFrame(
        pairs, columns=["split_a", "split_b", "n_shared_patients", "n_studies_a", "n_studies_b"]
    )
    ss = sp[["study_id", "split"]].drop_duplicates()
    ms = ss[ss["study_id"].duplicated(keep=False)].sort_values(["study_id", "split"])
    ms_joined = ms.groupby("study_id", sort=True)["split"].agg("|".join)
    shared_studies = pd.DataFrame({"study_id": ms_joined.index.astype("str"), "splits": ms_joined.to_numpy()})
    n_unassigned = int((~_isin(meta["study_id"], sp["study_id"])).sum())
    notes = []
    if len(unknown):
        notes.append(
            f"{len(unknown)} listed studies are not in the metadata (no patient id): e.g. "
            f"{unknown['study_id'].iloc[0]!r}"
        )
    if n_unassigned:
        notes.append(f"{n_unassigned} studies of the metadata are in no split")
    return LeakageAudit(sizes, pairs_df, shared_patients, shared_studies, unknown, n_unassigned, tuple(notes))
