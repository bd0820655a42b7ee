"""ChestX-ray8's counts as its CVPR 2017 paper [1]_ publishes them, and the table that sets them beside the
audited counts (``published_counts.csv``).

References
----------
.. [1] X. Wang, Y. Peng, L. Lu, Z. Lu, M. Bagheri and R. M. Summers, "ChestX-ray8: Hospital-scale chest
   X-ray database and benchmarks on weakly-supervised classification and localization of common thorax
   diseases", Proc. IEEE CVPR 2017, 3462-3471. https://doi.org/10.1109/CVPR.2017.369
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING

import pandas as pd

if TYPE_CHECKING:
    from .audit import DatasetAudit

__all__ = ["PublishedCounts", "CHESTXRAY8_PUBLISHED", "PUBLISHED_COLUMNS"]


@dataclass(frozen=True)
class PublishedCounts:
    """A dataset's counts as its paper publishes them.

    Attributes
    ----------
    dataset : str
    citation : str
    n_images, n_patients, n_abnormal, n_normal : int
        Images, patients, images with at least one finding, images labelled normal.
    images : Mapping of str to int
        Images per finding (canonical names), the paper's table.
    table : str
        Where the per-finding counts are in the paper.
    """

    dataset: str
    citation: str
    n_images: int
    n_patients: int
    n_abnormal: int
    n_normal: int
    images: Mapping[str, int]
    table: str


CHESTXRAY8_PUBLISHED = PublishedCounts(
    dataset="ChestX-ray8",
    citation="Wang et al., ChestX-ray8, CVPR 2017 (doi:10.1109/CVPR.2017.369)",
    n_images=108_948,
    n_patients=32_717,
    n_abnormal=24_636,
    n_normal=84_312,
    images=MappingProxyType(
        {
            "Atelectasis": 5_789,
            "Cardiomegaly": 1_010,
            "Effusion": 6_331,
            "Infiltration": 10_317,
            "Mass": 6_046,
            "Nodule": 1_971,
            "Pneumonia": 1_062,
            "Pneumothorax": 2_793,
        }
    ),
    table="Table 1",
)
"""ChestX-ray8's counts as its CVPR 2017 paper gives them: 108,948 frontal
images of 32,717 patients, 24,636 with one or more of the eight findings, 84,312 normal; Table 1's images per
finding (they sum to 35,319, more than 24,636: an image can carry several labels)."""

PUBLISHED_COLUMNS: tuple[str, ...] = ("quantity", "finding", "published", "audited", "published_in")
"""Columns of ``published_counts.csv``: each published count beside the same count of the files audited
(``finding`` empty for the totals)."""


def _published_table(audit: DatasetAudit, n_with: int, published: PublishedCounts) -> pd.DataFrame:
    """``published``'s counts beside the same counts of ``audit`` (:data:`PUBLISHED_COLUMNS`); ``n_with``: the
    audited images carrying one of the findings of the paper's table.

    Rows: ``images``, ``patients``, ``images with one of its findings``, ``images with none of them`` (the
    paper's "normal"), then ``images`` of each finding of the paper's table. The audited counts are on the
    same findings (the eight of ChestX-ray8), so an image with only a ChestX-ray14 addition (e.g. Hernia)
    counts as having none of them.
    """
    f = audit.findings.set_index("finding")["n_images"]
    k = len(published.images)
    src = published.citation
    rows = [
        ("images", "", published.n_images, audit.n_images, src),
        ("patients", "", published.n_patients, audit.n_patients, src),
        (f"images with one of the {k} findings", "", published.n_abnormal, n_with, src),
        (f"images with none of the {k} findings", "", published.n_normal, audit.n_images - n_with, src),
    ]
    rows += [
        ("images", name, n, int(f.get(name, 0)), f"{src}, {published.table}")
        for name, n in published.images.items()
    ]
    return pd.DataFrame(rows, columns=list(PUBLISHED_COLUMNS))
