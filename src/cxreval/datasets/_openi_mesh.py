"""The rules turning OpenI's human MeSH major codes into findings (:class:`MeshRule`, :data:`MESH_RULES`).
Re-exported by :mod:`cxreval.datasets.openi`."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass

__all__ = ["MeshRule", "MESH_RULES", "UNUSABLE_MESH"]


def _norm(text: str) -> str:
    return " ".join(str(text).split()).casefold()


@dataclass(frozen=True)
class MeshRule:
    """One rule turning a human MeSH major code of OpenI into a finding.

    A code ``Heading/q1/q2/...`` matches when its heading equals ``heading`` and, if ``qualifier`` is
    given, that qualifier is among ``q1, q2, ...``, and none of ``exclude`` is. Matching ignores case
    and repeated spaces (the archive has ``Subcutaneous  Emphysema`` and ``Thoracic vertebrae``).

    Attributes
    ----------
    heading : str
        MeSH heading (the part before the first ``/``), e.g. ``'Pulmonary Atelectasis'``.
    finding : str
        Canonical finding the code asserts, e.g. ``'Atelectasis'``.
    qualifier : str or None, default=None
        A qualifier the code must carry (``'pleura'`` for ``Thickening/pleura``); None: any qualifiers.
    exclude : tuple of str, default=()
        Qualifiers that stop the match (``'breast'`` for ``Mass/breast``).
    """

    heading: str
    finding: str
    qualifier: str | None = None
    exclude: tuple[str, ...] = ()

    def matches(self, heading: str, qualifiers: Sequence[str]) -> bool:
        """Whether a code with this (normalised) heading and qualifiers matches the rule."""
        if _norm(self.heading) != heading:
            return False
        if self.qualifier is not None and _norm(self.qualifier) not in qualifiers:
            return False
        return not any(_norm(x) in qualifiers for x in self.exclude)

    def to_dict(self) -> dict[str, object]:
        return {**asdict(self), "exclude": list(self.exclude)}


MESH_RULES: tuple[MeshRule, ...] = (
    MeshRule("Pulmonary Atelectasis", "Atelectasis"),
    MeshRule("Cardiomegaly", "Cardiomegaly"),
    MeshRule("Cardiac Shadow", "Cardiomegaly", qualifier="enlarged"),
    MeshRule("Cardiac Shadow", "Cardiomegaly", qualifier="borderline"),
    MeshRule("Pleural Effusion", "Effusion"),
    MeshRule("Infiltrate", "Infiltration"),
    MeshRule("Mass", "Mass", exclude=("breast",)),
    MeshRule("Nodule", "Nodule"),
    MeshRule("Pneumonia", "Pneumonia"),
    MeshRule("Pneumothorax", "Pneumothorax"),
    MeshRule("Hydropneumothorax", "Pneumothorax"),
    MeshRule("Hemopneumothorax", "Pneumothorax"),
    MeshRule("Consolidation", "Consolidation"),
    MeshRule("Pulmonary Edema", "Edema"),
    MeshRule("Emphysema", "Emphysema"),
    MeshRule("Pulmonary Emphysema", "Emphysema"),
    MeshRule("Bullous Emphysema", "Emphysema"),
    MeshRule("Pulmonary Fibrosis", "Fibrosis"),
    MeshRule("Fibrosis", "Fibrosis"),
    MeshRule("Thickening", "Pleural Thickening", qualifier="pleura"),
    MeshRule("Hernia, Hiatal", "Hernia"),
    MeshRule("Hernia, Diaphragmatic", "Hernia"),
)
"""MeSH major code -> ChestX-ray14 finding, built from the headings present in ``NLMCXR_reports.tgz``.

Deliberately *not* mapped (they do not assert the finding): ``Lung/hypoinflation`` (low lung volumes,
not atelectasis), ``Volume Loss``, ``Opacity``, ``Density``, ``Airspace Disease``, ``Pulmonary
Congestion`` and ``Heart Failure`` (not edema), ``Cicatrix`` (scar, not fibrosis), ``Cystic Fibrosis``,
``Pulmonary Disease, Chronic Obstructive``, ``Subcutaneous Emphysema`` / ``Mediastinal Emphysema`` (not
lung emphysema), ``Thickening/bronchi`` and other non-pleural thickening, ``Costophrenic Angle/blunted``,
``Pericardial Effusion``, ``Mass/breast`` (a breast mass), ``Granuloma`` / ``Calcified Granuloma``.
"""

UNUSABLE_MESH: tuple[str, ...] = ("No Indexing",)
"""MeSH major headings that say the report was not coded; a report with only these is dropped."""

_NORMAL = "normal"
