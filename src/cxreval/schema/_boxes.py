"""The box schema and the localization table, typed once.

**Boxes.** Every table of boxes in cxreval — reference boxes read from ChestX-ray14's ``BBox_List_2017``
(:func:`cxreval.datasets.nih_boxes.read_nih_boxes`) or VinDr-CXR (:func:`cxreval.datasets.vindr.read_vindr_boxes`),
the boxes ``cxreval localize`` and ``cxreval synth`` detect (``boxes.csv``) and the demo's overlays
(``overlays.csv``) — starts with the columns :data:`BOX_COLUMNS`::

    study_id, finding, [source,] x_min, y_min, x_max, y_max

``study_id`` is the unit (an image id such as ``00013118_008.png``), ``finding`` a canonical finding name,
``source`` (optional) who drew the box (a VinDr reader ``R8``; absent for BBox_List_2017's single set of
boxes), and the box is half-open in pixels of the image: ``x_min <= x < x_max``, ``y_min <= y < y_max``.
A box table is checked with :func:`check_box_table`; one spelled with the old ``image_id`` is refused with
"did you mean 'study_id'" (:data:`cxreval.schema.RENAMED_COLUMNS`).

**Localization tables** (``localization.csv``): one row per case (``variant, localizer, upsampling,
threshold``), finding, overlap rule and T, with the columns :data:`LOCALIZATION_COLUMNS`, whatever study
wrote them (``cxreval localize``, ``cxreval synth``, the error model on real boxes).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ._columns import FINDING, SOURCE, STUDY_ID, check_columns

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "BOX_COORDS",
    "BOX_COLUMNS",
    "SOURCED_BOX_COLUMNS",
    "LOCALIZATION_COLUMNS",
    "NO_THRESHOLD",
    "check_box_table",
    "box_columns",
    "threshold_label",
]

BOX_COORDS: tuple[str, ...] = ("x_min", "y_min", "x_max", "y_max")
"""The four coordinates of a half-open box, in pixels."""

BOX_COLUMNS: tuple[str, ...] = (STUDY_ID, FINDING, *BOX_COORDS)
"""The columns every box table holds (a reference box table needs no more)."""

SOURCED_BOX_COLUMNS: tuple[str, ...] = (STUDY_ID, FINDING, SOURCE, *BOX_COORDS)
"""A box table whose boxes come from several sources (VinDr-CXR's readers): :data:`BOX_COLUMNS` with
``source`` after ``finding``."""

LOCALIZATION_COLUMNS: tuple[str, ...] = (
    FINDING,
    "T",
    "threshold",
    "rule",
    "acc",
    "afp",
    "n_boxes",
    "n_images",
    "hits",
    "false_positives",
    "T_iou",
    "n_afp",
    "fp_without_box",
    "variant",
    "localizer",
    "upsampling",
    "median_area_fraction",
)
"""The columns of every ``localization.csv`` (the first eight are those ``cxreval localize`` and ``synth``
always wrote first).

``variant`` the maps scored (``heatmaps`` for given maps; ``noise-free`` / ``noisy`` error-model maps),
``localizer`` what made the boxes (``heatmap``: the protocol's threshold-and-box pipeline; ``tiny box``: a
6 x 6 box at the map's peak; ``whole image``), ``upsampling`` (``bilinear``, ``nearest`` or ``-``),
``threshold`` the map threshold on [0, 255] as text (``60``; ``-`` for a localizer without one), ``rule``
(``IoBB``, ``IoU``, ``IoU or IoBB``), ``T`` the overlap threshold (T(IoBB)) and ``T_iou`` the IoU threshold
of the row's rule, ``acc`` = ``hits / n_boxes``, ``afp`` = ``false_positives / n_afp``, ``n_images`` the
(image, finding) pairs with a reference box, ``fp_without_box`` the false positives (included) on maps of
box images without a box of the finding, ``median_area_fraction`` the median reference box area over the
image area."""

NO_THRESHOLD = "-"
"""``threshold`` (and ``upsampling``) of a localizer that has none."""


def threshold_label(t: float | str) -> str:
    """A map threshold as the ``threshold`` column writes it: ``60.0`` -> ``'60'``; ``'-'`` stays."""
    if isinstance(t, str):
        return t
    return f"{float(t):g}"


def box_columns(table: pd.DataFrame) -> tuple[str, ...]:
    """:data:`SOURCED_BOX_COLUMNS` when ``table`` has a ``source`` column, else :data:`BOX_COLUMNS`."""
    return SOURCED_BOX_COLUMNS if SOURCE in table.columns else BOX_COLUMNS


def check_box_table(boxes: pd.DataFrame, *, where: str = "the boxes table") -> pd.DataFrame:
    """Check a box table's columns; return its box columns (``source`` kept when present), in schema order.

    Raises
    ------
    SchemaError
        A column of :data:`BOX_COLUMNS` is missing (another tool's spelling such as ``image_id`` is named with
        "did you mean 'study_id'").
    """
    check_columns(boxes, BOX_COLUMNS, where=where)
    return boxes.loc[:, list(box_columns(boxes))]
