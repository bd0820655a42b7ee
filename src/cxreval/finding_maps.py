"""Finding maps: one vocabulary's findings re-expressed in another's, applied to labels *and* predictions.

A finding map (a :class:`~cxreval.findings.VocabularyMapping`) defines each *target* finding from one or more
*source* findings of the input vocabulary, in one step (sources are read from the input, never from another
target). Labels: a source of labels that labels the target itself keeps those labels; one that labels every
source finding gets the target from them by ``combine='any'`` (positive if any source is positive; otherwise
missing if any source is missing; otherwise the highest state, not mentioned < negative < uncertain). Scores: a
model that scores the target keeps those scores; one that scores every source finding gets the target's score by
the map's ``score`` rule (``'max'``, the default, or ``'mean'`` of the source scores). Only target findings remain
after a map.

Built-in maps (:data:`FINDING_MAPS`, by name): ``nih_to_google`` (ChestX-ray14 -> Google 2019 expert labels),
``nih_to_chexpert`` (ChestX-ray14 -> CheXpert / MIMIC-CXR 14, where they overlap), ``nih_to_vindr``
(ChestX-ray14 -> VinDr-CXR) and ``nih_to_padchest`` (PadChest's labels are read into the ChestX-ray14 findings:
the identity on the 14). A map file is YAML::

    name: my_map            # optional (default: the file name)
    score: max              # optional: max (default) or mean
    findings:
      Nodule or Mass: any(Nodule, Mass)
      Pneumothorax: Pneumothorax

Examples
--------
>>> import pandas as pd
>>> m = get_finding_map("nih_to_google")
>>> m.targets["Nodule or Mass"]
('Nodule', 'Mass')
>>> labels = pd.DataFrame({"study_id": ["a", "a"], "patient_id": ["1", "1"], "finding": ["Nodule", "Mass"],
...                        "source": "nih", "state": pd.array([0, 2], dtype="Int8")})
>>> map_label_table(labels, parse_finding_map({"findings": {"Nodule or Mass": "any(Nodule, Mass)"}}))[
...     ["finding", "state"]].to_dict("records")
[{'finding': 'Nodule or Mass', 'state': 2}]
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from os import PathLike
from pathlib import Path
from types import MappingProxyType
from typing import Any

import numpy as np
import pandas as pd

from ._validation import did_you_mean, read_yaml_file
from .exceptions import SchemaError, UnknownNameError
from .findings import CHESTXRAY14, VocabularyMapping, canonical_finding

__all__ = [
    "FINDING_MAPS",
    "get_finding_map",
    "parse_finding_map",
    "map_label_table",
    "map_prediction_table",
]

SCORE_RULES: tuple[str, ...] = ("max", "mean")
"""How a model's scores of several source findings make its score of a merged finding."""

FINDING_MAP_COLUMNS: tuple[str, ...] = ("map", "finding", "sources", "labels_rule", "score_rule")
"""Columns of ``finding_map.csv``: one row per target finding; ``sources`` joined with ``' | '``."""

NIH_TO_GOOGLE = VocabularyMapping(
    name="nih_to_google",
    targets={
        "Pneumothorax": ("Pneumothorax",),
        "Nodule or Mass": ("Nodule", "Mass"),
        "Airspace Opacity": ("Consolidation", "Pneumonia", "Infiltration"),
    },
    combine="any",
    note="NIH finding(s) whose OR defines each Google finding; Fracture has no ChestX-ray14 counterpart.",
    unmapped=("Fracture",),
)
"""ChestX-ray14 -> Google 2019 (Majkowska et al.): the airspace findings make ``Airspace Opacity`` (Edema left
out, a stated choice); ``Fracture`` has no counterpart."""

_SAME_CHEXPERT = (
    "Atelectasis",
    "Cardiomegaly",
    "Consolidation",
    "Edema",
    "Effusion",
    "Pneumonia",
    "Pneumothorax",
)
NIH_TO_CHEXPERT = VocabularyMapping(
    name="nih_to_chexpert",
    targets={
        **{f: (f,) for f in _SAME_CHEXPERT},
        "Lung Lesion": ("Nodule", "Mass"),
        "Lung Opacity": (
            "Atelectasis",
            "Consolidation",
            "Edema",
            "Infiltration",
            "Pneumonia",
            "Nodule",
            "Mass",
        ),
    },
    combine="any",
    note="The 7 shared findings as they are; CheXpert's Lung Lesion = Nodule OR Mass and Lung Opacity = OR of the "
    "opacities (CheXpert's hierarchy: Lung Opacity is the parent of Edema, Consolidation, Pneumonia, Lung "
    "Lesion and Atelectasis; Infiltration added).",
    unmapped=("No Finding", "Enlarged Cardiomediastinum", "Pleural Other", "Fracture", "Support Devices"),
)
"""ChestX-ray14 -> CheXpert / MIMIC-CXR 14 (where they overlap)."""

_SAME_VINDR = (
    "Atelectasis",
    "Cardiomegaly",
    "Consolidation",
    "Infiltration",
    "Effusion",
    "Pleural Thickening",
    "Pneumothorax",
)
NIH_TO_VINDR = VocabularyMapping(
    name="nih_to_vindr",
    targets={
        **{f: (f,) for f in _SAME_VINDR},
        "Nodule or Mass": ("Nodule", "Mass"),
        "Pulmonary Fibrosis": ("Fibrosis",),
    },
    combine="any",
    note="The 7 shared findings as they are; VinDr's Nodule or Mass = Nodule OR Mass, Pulmonary Fibrosis = Fibrosis.",
    unmapped=("Aortic Enlargement", "Calcification", "ILD", "Lung Opacity", "Other Lesion", "No Finding"),
)
"""ChestX-ray14 -> VinDr-CXR (where they overlap)."""

NIH_TO_PADCHEST = VocabularyMapping(
    name="nih_to_padchest",
    targets={f: (f,) for f in CHESTXRAY14},
    combine="any",
    note="PadChest's labels are read into the ChestX-ray14 findings (cxreval.datasets.padchest.PADCHEST_MAPPING): "
    "the identity on the 14.",
)
"""ChestX-ray14 -> PadChest (the identity on the 14 findings both use)."""

FINDING_MAPS: Mapping[str, VocabularyMapping] = MappingProxyType(
    {m.name: m for m in (NIH_TO_GOOGLE, NIH_TO_CHEXPERT, NIH_TO_VINDR, NIH_TO_PADCHEST)}
)
"""The built-in finding maps by name."""

_ANY = re.compile(r"^\s*any\s*\((.*)\)\s*$", re.IGNORECASE)
_CALL = re.compile(r"^\s*([A-Za-z_]\w*)\s*\(.*\)\s*$")


def get_finding_map(name: str) -> VocabularyMapping:
    """A built-in finding map by name (:data:`FINDING_MAPS`); an unknown name raises with a did-you-mean."""
    if name not in FINDING_MAPS:
        raise UnknownNameError(
            f"Unknown finding map {name!r}; built-in maps: {list(FINDING_MAPS)} (or give a YAML "
            f"file).{did_you_mean(name, list(FINDING_MAPS))}"
        )
    return FINDING_MAPS[name]


def read_finding_map(spec: str | PathLike[str] | VocabularyMapping) -> VocabularyMapping:
    """A finding map: a :class:`~cxreval.findings.VocabularyMapping`, a built-in name or a YAML file (above).

    Raises
    ------
    SchemaError
        The file does not exist, is not YAML of the form above, names an unknown finding, or has a chain or cycle
        (:func:`check_finding_map`).
    UnknownNameError
        Neither a file nor a built-in name.
    """
    if isinstance(spec, VocabularyMapping):
        return check_finding_map(spec)
    text = str(spec)
    if text in FINDING_MAPS:
        return FINDING_MAPS[text]
    p = Path(text)
    if p.suffix.lower() not in (".yaml", ".yml") and not p.exists():
        return get_finding_map(text)
    if not p.is_file():
        raise SchemaError(f"Finding map file {text!r} does not exist.")
    data = read_yaml_file(p, what="finding map")
    return parse_finding_map(data, name=p.stem, where=f"finding map file {text!r}")


def resolve_finding_map(
    finding_map: str | PathLike[str] | VocabularyMapping | None,
    map_score: str | None = None,
    *,
    func: str = "resolve_finding_map",
) -> VocabularyMapping | None:
    """The finding map ``finding_map`` (:func:`read_finding_map`) with its score rule replaced by ``map_score``
    when given (one of :data:`SCORE_RULES`), read and checked before any table is read; None without a map.
    ``func``: the function an error message names (a job that takes these options).

    Raises
    ------
    InvalidParameterError
        A ``map_score`` without a map, or a ``map_score`` that is no rule.
    SchemaError, UnknownNameError
        An unknown map name or an invalid map file.
    """
    import dataclasses

    from .exceptions import InvalidParameterError

    if finding_map is None:
        if map_score is not None:
            raise InvalidParameterError("map_score= needs finding_map=.")
        return None
    fmap = read_finding_map(finding_map)
    if map_score is not None:
        if map_score not in SCORE_RULES:
            raise InvalidParameterError(
                f"The 'map_score' parameter of {func} must be one of {', '.join(SCORE_RULES)}. Got {map_score!r}."
            )
        fmap = check_finding_map(dataclasses.replace(fmap, score=map_score))
    return fmap


def parse_finding_map(
    data: Mapping[str, Any], *, name: str = "finding_map", where: str = "finding map"
) -> VocabularyMapping:
    """A finding map from its YAML content: ``{"name": ..., "score": ..., "findings": {target: "any(A, B)" | "A" |
    [A, B]}}`` (or the ``findings`` mapping alone), checked by :func:`check_finding_map`."""
    if not isinstance(data, dict):
        raise SchemaError(
            f"{where}: expected a mapping with 'findings' (target: any(A, B)). Got {type(data).__name__}."
        )
    body = data.get("findings", data) if "findings" in data else data
    extra = set(data) - {"name", "score", "findings", "note"} if "findings" in data else set()
    if extra:
        raise SchemaError(f"{where}: unknown key(s) {sorted(extra)}; expected name, score, findings, note.")
    if not isinstance(body, dict) or not body:
        raise SchemaError(f"{where}: 'findings' must be a non-empty mapping target: any(A, B).")
    targets: dict[str, tuple[str, ...]] = {}
    for raw_target, raw_def in body.items():
        target = canonical_finding(raw_target, where=f"{where}, target {raw_target!r}")
        if isinstance(raw_def, str):
            m = _ANY.match(raw_def)
            call = _CALL.match(raw_def)
            if m is None and call is not None:
                raise SchemaError(
                    f"{where}: target {raw_target!r}: {raw_def!r} uses {call.group(1)}(...); the form "
                    f"supported is any(A, B) (a study is positive for the target when any source "
                    f"finding is), one finding or a list."
                )
            parts = m.group(1).split(",") if m else [raw_def]
        elif isinstance(raw_def, list):
            parts = [str(v) for v in raw_def]
        else:
            raise SchemaError(
                f"{where}: target {raw_target!r}: expected any(A, B), one finding or a list. Got {raw_def!r}."
            )
        srcs = tuple(
            canonical_finding(s.strip(), where=f"{where}, target {raw_target!r}") for s in parts if s.strip()
        )
        if not srcs:
            raise SchemaError(f"{where}: target {raw_target!r} has no source finding.")
        if target in targets:
            raise SchemaError(f"{where}: target {target!r} is defined twice.")
        targets[target] = srcs
    score = str(data.get("score", "max")) if "findings" in data else "max"
    mp = VocabularyMapping(
        name=str(data.get("name", name)) if "findings" in data else name,
        targets=targets,
        combine="any",
        note=str(data.get("note", "")) if "findings" in data else "",
        score=score,
    )
    return check_finding_map(mp, where=where)


def check_finding_map(mapping: VocabularyMapping, *, where: str = "") -> VocabularyMapping:
    """Refuse a map with an unknown rule, a repeated source, or a chain or cycle: a target other than the identity
    (``X: X``) that is also a source of another target (maps are one step from the input vocabulary)."""
    w = where or f"finding map {mapping.name!r}"
    if mapping.combine != "any":
        raise SchemaError(f"{w}: unsupported label rule {mapping.combine!r}; only 'any' is implemented.")
    if mapping.score not in SCORE_RULES:
        raise SchemaError(f"{w}: score rule must be one of {', '.join(SCORE_RULES)}. Got {mapping.score!r}.")
    for t, srcs in mapping.targets.items():
        if len(set(srcs)) != len(srcs):
            raise SchemaError(f"{w}: target {t!r} repeats a source finding: {list(srcs)}.")
    identity = {t for t, srcs in mapping.targets.items() if srcs == (t,)}
    for t, srcs in mapping.targets.items():
        for s in srcs:
            if s != t and s in mapping.targets and s not in identity:
                kind = "cycle" if t in mapping.targets[s] else "chain"
                raise SchemaError(
                    f"{w}: {kind}: {s!r} is defined by the map and used to define {t!r}; a map is one "
                    "step from the input findings (define each target from input findings only)."
                )
    return mapping


def finding_map_table(mapping: VocabularyMapping | None) -> pd.DataFrame:
    """The map as ``finding_map.csv`` (:data:`FINDING_MAP_COLUMNS`; empty without a map)."""
    if mapping is None:
        return pd.DataFrame({c: pd.Series(dtype=object) for c in FINDING_MAP_COLUMNS})
    rows = [
        (
            mapping.name,
            t,
            " | ".join(s),
            "as labelled" if s == (t,) else f"any({', '.join(s)})",
            "as scored" if s == (t,) else f"{mapping.score}({', '.join(s)})",
        )
        for t, s in mapping.targets.items()
    ]
    return pd.DataFrame(rows, columns=list(FINDING_MAP_COLUMNS))


def combine_states(states: np.ndarray, missing: int = -128) -> np.ndarray:
    """``combine='any'`` over the last axis of integer states (``missing`` marks a missing label): positive (2) if
    any is; else ``missing`` if any is missing; else the highest state."""
    s = np.asarray(states)
    pos = (s == 2).any(axis=-1)
    miss = (s == missing).any(axis=-1)
    return np.where(pos, 2, np.where(miss, missing, s.max(axis=-1))).astype(s.dtype)


def combine_scores(scores: np.ndarray, rule: str) -> np.ndarray:
    """A merged finding's scores from its sources' (last axis): ``max`` or ``mean``; NaN where any is NaN."""
    s = np.asarray(scores, dtype=float)
    return s.max(axis=-1) if rule == "max" else s.mean(axis=-1)


def _targets(
    table: pd.DataFrame, by: str, mapping: VocabularyMapping
) -> Iterator[tuple[Any, pd.DataFrame, str, tuple[str, ...]]]:
    """``(group, its rows, target, the findings it is made of)`` for each target of ``mapping`` one group of
    ``table`` (per ``by``: a source, a model) can have (:func:`_plan`; ``(target,)`` when it has the target
    itself)."""
    for key, sub in table.groupby(by, sort=False):
        for target, use in _plan(mapping, pd.unique(sub["finding"])).items():
            if use is not None:
                yield key, sub, target, use


def _plan(mapping: VocabularyMapping, have: Iterable[str]) -> dict[str, tuple[str, ...] | None]:
    """Per target: ``(target,)`` if present, its sources if all present, else None."""
    h = set(have)
    return {
        t: (t,) if t in h else (srcs if all(s in h for s in srcs) else None)
        for t, srcs in mapping.targets.items()
    }


def map_label_table(labels: pd.DataFrame, mapping: VocabularyMapping) -> pd.DataFrame:
    """A long label table (``study_id, patient_id, finding, source, state``) in the map's target findings.

    Per label source and target: its own labels of the target if it has any, else the ``any`` of its labels of the
    target's sources when it labels all of them (a study it labels for some source: a row, missing unless a
    source is positive), else nothing. Other columns are dropped.
    """
    from .labels import validate_label_table

    check_finding_map(mapping)
    labels = validate_label_table(labels, require_patient=False)
    cols = ["study_id", "patient_id", "finding", "source", "state"]
    parts = []
    for src, sub, t, use in _targets(labels, "source", mapping):
        if use == (t,):
            parts.append(sub.loc[sub["finding"] == t, cols])
        else:
            s = sub[sub["finding"].isin(use)]
            st = s["state"].astype("Int8").to_numpy(dtype=np.int16, na_value=-128)
            wide = pd.DataFrame(
                {"study_id": s["study_id"].to_numpy(), "finding": s["finding"].to_numpy(), "st": st}
            ).pivot(index="study_id", columns="finding", values="st")
            wide = wide.reindex(columns=list(use)).fillna(-128).astype(np.int16)
            comb = combine_states(wide.to_numpy())
            pats = s.drop_duplicates("study_id").set_index("study_id")["patient_id"].reindex(wide.index)
            state = pd.array(comb.astype(np.int8), dtype="Int8")
            state[comb == -128] = pd.NA
            parts.append(
                pd.DataFrame(
                    {
                        "study_id": wide.index.to_numpy(),
                        "patient_id": pats.to_numpy(),
                        "finding": t,
                        "source": src,
                        "state": state,
                    }
                )
            )
    if not parts:
        return labels.iloc[:0][cols].copy()
    out = pd.concat(parts, ignore_index=True)
    out["state"] = out["state"].astype("Int8")
    return out


def map_prediction_table(predictions: pd.DataFrame, mapping: VocabularyMapping) -> pd.DataFrame:
    """A long prediction table (``study_id, model, finding, score``) in the map's target findings: per model, its
    own scores of a target, else the ``score`` rule over the target's sources when it scores all of them (studies
    scored for every source), else nothing."""
    check_finding_map(mapping)
    parts = []
    for model, sub, t, use in _targets(predictions, "model", mapping):
        if use == (t,):
            parts.append(sub.loc[sub["finding"] == t, ["study_id", "model", "finding", "score"]])
        else:
            s = sub[sub["finding"].isin(use)]
            wide = s.pivot(index="study_id", columns="finding", values="score").reindex(columns=list(use))
            sc = combine_scores(wide.to_numpy(dtype=float), mapping.score)
            ok = np.isfinite(sc)
            parts.append(
                pd.DataFrame(
                    {"study_id": wide.index.to_numpy()[ok], "model": model, "finding": t, "score": sc[ok]}
                )
            )
    if not parts:
        return predictions.iloc[:0][["study_id", "model", "finding", "score"]].copy()
    return pd.concat(parts, ignore_index=True)
