"""Finding vocabularies and the one alias table for dataset spellings.

Every finding name inside cxreval is *canonical*: one spelling per concept. Datasets spell the same
concept differently (``Infiltrate`` / ``Infiltration``, ``Pleural_Thickening``, ``Pleural Effusion`` /
``Effusion``); :data:`ALIASES` maps those spellings to the canonical name and
:func:`canonical_finding` applies it, returning what it renamed so that callers record it.

A mapping *between vocabularies* (for example Google's ``Nodule or mass`` onto NIH's ``Nodule`` and
``Mass``) is a different thing: it changes what a label means and is therefore an explicit
:class:`VocabularyMapping`, never an alias.

Examples
--------
>>> canonical_finding("Pleural_Thickening")
'Pleural Thickening'
>>> canonical_finding("pleural effusion")
'Effusion'
>>> CHESTXRAY8[:3]
('Atelectasis', 'Cardiomegaly', 'Effusion')
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import NamedTuple

from .exceptions import SchemaError

__all__ = [
    "CHESTXRAY14",
    "CHESTXRAY8",
    "CHEXPERT",
    "CHEXPERT_COMPETITION",
    "XQA",
    "XQA_SELECTED",
    "ALIASES",
    "canonical_finding",
    "VocabularyMapping",
]

CHESTXRAY14: tuple[str, ...] = (
    "Atelectasis",
    "Cardiomegaly",
    "Effusion",
    "Infiltration",
    "Mass",
    "Nodule",
    "Pneumonia",
    "Pneumothorax",
    "Consolidation",
    "Edema",
    "Emphysema",
    "Fibrosis",
    "Pleural Thickening",
    "Hernia",
)
"""The 14 ChestX-ray14 findings in the order of the NIH release."""

CHESTXRAY8: tuple[str, ...] = CHESTXRAY14[:8]
"""The 8 ChestX-ray8 findings (CVPR 2017), the findings with radiologist boxes."""

CHEXPERT: tuple[str, ...] = (
    "No Finding",
    "Enlarged Cardiomediastinum",
    "Cardiomegaly",
    "Lung Opacity",
    "Lung Lesion",
    "Edema",
    "Consolidation",
    "Pneumonia",
    "Atelectasis",
    "Pneumothorax",
    "Effusion",
    "Pleural Other",
    "Fracture",
    "Support Devices",
)
"""The 14 CheXpert / MIMIC-CXR observations (``Pleural Effusion`` is canonically ``Effusion``)."""

CHEXPERT_COMPETITION: tuple[str, ...] = ("Atelectasis", "Cardiomegaly", "Consolidation", "Edema", "Effusion")
"""The 5 CheXpert competition findings."""

VINDR: tuple[str, ...] = (
    "Aortic Enlargement",
    "Atelectasis",
    "Calcification",
    "Cardiomegaly",
    "Consolidation",
    "ILD",
    "Infiltration",
    "Lung Opacity",
    "Nodule or Mass",
    "Other Lesion",
    "Effusion",
    "Pleural Thickening",
    "Pneumothorax",
    "Pulmonary Fibrosis",
    "No Finding",
)
"""VinDr-CXR's 14 local findings plus ``No Finding`` (as in ``vinbigdata-train.csv``)."""

GOOGLE_NIH: tuple[str, ...] = ("Fracture", "Pneumothorax", "Airspace Opacity", "Nodule or Mass")
"""The 4 findings of Google's 2019 adjudicated expert labels for NIH images (Majkowska et al., 2020)."""

XQA: tuple[str, ...] = (
    "Atelectasis",
    "Cardiomegaly",
    "Edema",
    "Enlarged Cardiomediastinum",
    "Consolidation",
    "Fracture",
    "Lung Lesion",
    "Lung Opacity",
    "Effusion",
    "Pleural Other",
    "Pneumonia",
    "Pneumothorax",
)
"""The 12 pathologies of the XQA-Chest paper, in its order: the 14 CheXpert/MIMIC-CXR categories less
``No Finding`` and ``Support Devices`` (its section 2: "By focusing on pathologies, we exclude No
finding and Support devices from our analysis, yielding 12 pathologies"). Its "all 12" macro/micro averages
(Tables 9-15, 30) are over this set."""

XQA_SELECTED: tuple[str, ...] = ("Atelectasis", "Consolidation", "Lung Opacity", "Effusion")
"""The XQA paper's four selected findings (its ranking-stability analysis)."""

VOCABULARIES: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {
        "chestxray14": CHESTXRAY14,
        "chestxray8": CHESTXRAY8,
        "chexpert": CHEXPERT,
        "chexpert_competition": CHEXPERT_COMPETITION,
        "vindr": VINDR,
        "google_nih": GOOGLE_NIH,
        "xqa": XQA,
        "xqa_selected": XQA_SELECTED,
    }
)

ALL_FINDINGS: tuple[str, ...] = tuple(dict.fromkeys(f for v in VOCABULARIES.values() for f in v))
"""Every canonical finding name, in first-seen order."""


def _key(name: str) -> str:
    return " ".join(name.replace("_", " ").split()).casefold()


ALIASES: Mapping[str, str] = MappingProxyType(
    {
        "Infiltrate": "Infiltration",
        "Infiltrates": "Infiltration",
        "Pleural_Thickening": "Pleural Thickening",
        "Pleural Effusion": "Effusion",
        "Pleural effusion": "Effusion",
        "Nodule/Mass": "Nodule or Mass",
        "Nodule or mass": "Nodule or Mass",
        "Airspace opacity": "Airspace Opacity",
        "Lung opacity": "Lung Opacity",
        "Lung lesion": "Lung Lesion",
        "No finding": "No Finding",
        "No Findings": "No Finding",
        "Aortic enlargement": "Aortic Enlargement",
        "Other lesion": "Other Lesion",
        "Pleural thickening": "Pleural Thickening",
        "Pulmonary fibrosis": "Pulmonary Fibrosis",
        "Enlarged cardiomediastinum": "Enlarged Cardiomediastinum",
        "Support devices": "Support Devices",
        "Pleural other": "Pleural Other",
    }
)
"""Dataset spellings -> canonical finding name. Matching ignores case, ``_`` vs space and repeated spaces."""

_LOOKUP: dict[str, str] = {_key(f): f for f in ALL_FINDINGS}
_LOOKUP.update({_key(a): c for a, c in ALIASES.items()})


def canonical_finding(name: str, *, where: str = "") -> str:
    """Return the canonical spelling of a finding name.

    Parameters
    ----------
    name : str
        A finding name as spelt by a dataset (case, ``_`` and spacing are ignored).
    where : str, default=''
        Where the name was read (file, column), used in the error message.

    Returns
    -------
    name : str
        The canonical name.

    Raises
    ------
    SchemaError
        If the name is neither canonical nor a known alias; the message suggests close names.
    """
    if isinstance(name, str):
        hit = _LOOKUP.get(_key(name))
        if hit is not None:
            return hit
    close = difflib.get_close_matches(_key(str(name)), list(_LOOKUP), n=3, cutoff=0.6)
    names = list(dict.fromkeys(_LOOKUP[c] for c in close))
    hint = f" Did you mean {', '.join(map(repr, names))}?" if names else ""
    loc = f" in {where}" if where else ""
    raise SchemaError(
        f"Unknown finding name {name!r}{loc}; expected one of cxreval.findings.ALL_FINDINGS "
        f"or an alias in cxreval.findings.ALIASES.{hint}"
    )


class CanonicalFindings(NamedTuple):
    """What :func:`canonical_findings` returns: the canonical names and the renames applied (``{original:
    canonical}``)."""

    findings: tuple[str, ...]
    renamed: dict[str, str]


def canonical_findings(names: Iterable[str], *, where: str = "") -> CanonicalFindings:
    """Canonicalise several names; return them and the renames applied (``{original: canonical}``)."""
    out, renamed = [], {}
    for n in names:
        c = canonical_finding(n, where=where)
        if c != n:
            renamed[str(n)] = c
        out.append(c)
    return CanonicalFindings(tuple(out), renamed)


@dataclass(frozen=True)
class VocabularyMapping:
    """An explicit mapping from findings of one vocabulary onto findings of another.

    Each target finding is defined from one or more source findings combined with ``combine``
    (``"any"``: positive if any source is positive, as for ``Nodule or Mass`` from ``Nodule`` and
    ``Mass``). Findings absent from ``targets`` have no counterpart and are reported as such.

    Attributes
    ----------
    name : str
        Name recorded on results, e.g. ``"nih_to_google"``.
    targets : Mapping[str, tuple[str, ...]]
        ``{target finding: (source findings, ...)}`` in canonical names.
    combine : {'any'}
        How several source labels are combined (``'any'``: positive if any source is positive; otherwise missing
        if any source is missing; otherwise the highest of the states not mentioned < negative < uncertain).
    score : {'max', 'mean'}
        How a model's scores of several source findings make its score of the target (``'max'``: the highest).
    note : str
        Free-text justification recorded with the result.
    """

    name: str
    targets: Mapping[str, tuple[str, ...]]
    combine: str = "any"
    note: str = ""
    unmapped: tuple[str, ...] = field(default=())
    score: str = "max"

    def to_dict(self) -> dict[str, object]:
        return {
            "name": self.name,
            "targets": {k: list(v) for k, v in self.targets.items()},
            "combine": self.combine,
            "score": self.score,
            "note": self.note,
            "unmapped": list(self.unmapped),
        }
