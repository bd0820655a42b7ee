"""The synthetic study's result: its printed output, and its tables built from :class:`SynthCells` on first access.

:func:`~cxreval.localization.simulate_localization` fills a :class:`SynthResult`; the tables (Part B's cells, every
scored box, the AFP denominators that give the printed AFPs, the one localization table) are DataFrames made only
when asked for, so printing the study never imports pandas.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from os import PathLike
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from ..results import TableResult
from ..schema import FINDING, STUDY_ID
from ..schema._boxes import LOCALIZATION_COLUMNS
from ._boxes import box_area, intersection_area
from ._table4 import afp_denominators

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "SEED_SYNTH_AFP",
    "SYNTH_SCORE_COLUMNS",
    "SynthCells",
    "SynthResult",
    "afp_denominator_table",
    "synth_localization_table",
]

SEED_SYNTH_AFP: Mapping[str, str] = {"large": "0.300", "medium": "0.433"}
"""AFP the article's script prints for noisy maps, bilinear, threshold 60, IoBB, T = 0.1 (its Part B), per size class."""

SYNTH_SCORE_COLUMNS: tuple[str, ...] = (
    "variant",
    "localizer",
    "upsampling",
    "threshold",
    "size",
    "rule",
    "T",
    "acc",
    "afp",
    "hits",
    "false_positives",
    "n_images",
)
"""The columns of :attr:`SynthResult.scores`, one row per Part B cell."""


@dataclass(frozen=True)
class SynthCells:
    """What the synthetic study's tables are built from: every scored box and every Part B cell.

    Attributes
    ----------
    rows : tuple of dict
        One dict per Part B cell, keyed by :data:`SYNTH_SCORE_COLUMNS`.
    run_keys : tuple of tuple
        ``(variant, localizer, upsampling, threshold, size)`` of each run of boxes, in the script's order.
    run_id, image_no : ndarray of int64
        Per scored box: its run (an index into ``run_keys``) and its image within the size class.
    boxes_pred, boxes_ref : ndarray of shape (n, 4), int64
        The scored box and its image's reference box, ``(x_min, y_min, x_max, y_max)``.
    median_area : mapping of str to float
        The median reference-box area per size class, as a fraction of the image.
    """

    rows: tuple[dict[str, object], ...]
    run_keys: tuple[tuple, ...]
    run_id: np.ndarray
    image_no: np.ndarray
    boxes_pred: np.ndarray
    boxes_ref: np.ndarray
    median_area: Mapping[str, float]

    def boxes_table(self) -> pd.DataFrame:
        """Every scored box in the box schema (:attr:`SynthResult.boxes`)."""
        import pandas as pd

        P, G = self.boxes_pred, self.boxes_ref
        inter = intersection_area(P, G).astype(np.int64)
        ap = box_area(P).astype(np.int64)
        union = ap + box_area(G).astype(np.int64) - inter
        keys = [self.run_keys[i] for i in self.run_id.tolist()]
        with np.errstate(divide="ignore", invalid="ignore"):
            return pd.DataFrame(
                {
                    STUDY_ID: [f"{k[4]}_{i:03d}" for k, i in zip(keys, self.image_no.tolist())],
                    FINDING: [f"synthetic {k[4]}" for k in keys],
                    "x_min": P[:, 0],
                    "y_min": P[:, 1],
                    "x_max": P[:, 2],
                    "y_max": P[:, 3],
                    "variant": [k[0] for k in keys],
                    "localizer": [k[1] for k in keys],
                    "upsampling": [k[2] for k in keys],
                    "threshold": [str(k[3]) for k in keys],
                    "ref_x_min": G[:, 0],
                    "ref_y_min": G[:, 1],
                    "ref_x_max": G[:, 2],
                    "ref_y_max": G[:, 3],
                    "iou": inter / union,
                    "iobb": inter / ap,
                }
            )


@dataclass(frozen=True)
class SynthResult(TableResult):
    """The synthetic study's printed output and tidy tables.

    The tables (:attr:`scores`, :attr:`boxes`, :attr:`afp_denominators`, :attr:`table`) are built from
    :attr:`cells` on first access, so printing the study (``cxreval synth``) never imports pandas.

    :meth:`save` writes ``localization.csv`` (:attr:`table`), ``boxes.csv`` (:attr:`boxes`) and
    ``afp_denominators.csv`` (``FILES``, each with its Parquet twin) and the printed output
    ``synth_output.txt`` (``TEXT_FILES``).

    Attributes
    ----------
    lines : tuple of str
        The printed output, line by line (blank lines included), as the article's reference script prints it.
    scores : pandas.DataFrame
        ``variant, localizer, upsampling, threshold, size, rule, T, acc, afp, hits, false_positives,
        n_images``: every Part B cell, ``T`` as the exact fraction (``'1/10'``).
    boxes : pandas.DataFrame
        Every scored box, in the box schema: ``study_id`` (``'<size>_<image number>'``, e.g. ``large_007``),
        ``finding`` (``synthetic <size>``), ``x_min, y_min, x_max, y_max``, then ``variant, localizer,
        upsampling, threshold, ref_x_min, ref_y_min, ref_x_max, ref_y_max, iou, iobb``.
    cells : SynthCells
        The scored boxes and Part B's cells as arrays and rows, which the tables are built from.
    checks : dict
        The values of the checks.
    seed, per_size : int
    afp_denominators : pandas.DataFrame
        Which :attr:`~cxreval.localization.LocalizationProtocol.afp_denominator` choices give the
        printed AFPs: ``case, afp_denominator, n, false_positives, afp, printed, reproduces``. The article's
        synthetic AFPs (0.300 / 0.433) need ``'pairs'`` (60 images per size class; ``'box_images'`` and
        ``'boxes'`` give 180); Table 4's Nodule 0.0772 needs ``'box_images'`` (68/880, truncated) or
        ``'boxes'`` (76/984), never ``'pairs'`` (k/79). Not part of :attr:`lines`, which stay the script's output.
    table : pandas.DataFrame
        The Part B cells as the one localization table
        (:data:`~cxreval.schema.LOCALIZATION_COLUMNS`): ``finding`` is ``synthetic <size>``,
        ``T`` a float, AFP per image (``n_afp = n_images``).
    """

    FILES: ClassVar[Mapping[str, str]] = MappingProxyType(
        {"localization": "localization.csv", "boxes": "boxes.csv", "afp_denominators": "afp_denominators.csv"}
    )
    TEXT_FILES: ClassVar[Mapping[str, str]] = MappingProxyType({"output": "synth_output.txt"})
    COLUMNS: ClassVar[tuple[str, ...]] = LOCALIZATION_COLUMNS

    lines: tuple[str, ...]
    cells: SynthCells = field(repr=False)
    checks: dict[str, object] = field(default_factory=dict)
    seed: int | None = 0
    per_size: int = 60

    @property
    def text(self) -> str:
        return "\n".join(self.lines) + "\n"

    @functools.cached_property
    def scores(self) -> pd.DataFrame:
        import pandas as pd

        return pd.DataFrame(list(self.cells.rows), columns=list(SYNTH_SCORE_COLUMNS))

    @functools.cached_property
    def boxes(self) -> pd.DataFrame:
        return self.cells.boxes_table()

    @functools.cached_property
    def afp_denominators(self) -> pd.DataFrame:
        return afp_denominator_table(self.cells.rows, self.per_size)

    @functools.cached_property
    def table(self) -> pd.DataFrame:
        return synth_localization_table(self.scores, self.cells.median_area)

    def tables(self) -> dict[str, pd.DataFrame]:
        return {"localization": self.table, "boxes": self.boxes, "afp_denominators": self.afp_denominators}

    def save(self, folder: str | PathLike[str]) -> dict[str, Path]:
        """Write the tables of ``FILES`` (CSV + Parquet) and ``synth_output.txt``; return ``{name: path}``."""
        paths = super().save(folder)
        out = Path(folder) / self.TEXT_FILES["output"]
        out.write_text(self.text)
        return {**paths, "output": out}

    def summary(self) -> str:
        """The printed output and the AFP-denominator check, as Markdown."""
        return "\n".join(
            [
                f"# cxreval synth (seed {self.seed}, {self.per_size} images per size class)",
                "",
                "```",
                self.text.rstrip(),
                "```",
                "",
                "## AFP denominators (localize --afp-denominator): which choice gives the printed AFPs",
                "",
                "```",
                self.afp_denominators.to_string(index=False),
                "```",
            ]
        )

    def to_dict(self) -> dict[str, object]:
        return {
            "seed": self.seed,
            "per_size": self.per_size,
            "checks": dict(self.checks),
            "n_scores": len(self.cells.rows),
            "n_boxes": len(self.cells.boxes_pred),
        }

    @classmethod
    def figure(cls, table: pd.DataFrame) -> Any:
        """Acc. (left) and AFP (right) against the overlap threshold T, one line per finding, a menu switching
        localizer and variant (the report's figure of ``localization.csv``)."""
        from .._plots.analyses import localization_curves

        return localization_curves(table)


def afp_denominator_table(rows: Sequence[Mapping[str, object]], n_images: int) -> pd.DataFrame:
    """Which AFP denominators give the printed AFPs (:attr:`SynthResult.afp_denominators`)."""
    import pandas as pd

    afp_rows = []
    for size, printed in SEED_SYNTH_AFP.items():
        r = next(
            r
            for r in rows
            if (r["variant"], r["localizer"], r["upsampling"], r["threshold"], r["size"], r["rule"], r["T"])
            == ("noisy", "heatmap", "bilinear", "60", size, "IoBB", "1/10")
        )
        fp = int(r["false_positives"])  # type: ignore[call-overload]
        for name, n in (("pairs", n_images), ("box_images", 3 * n_images), ("boxes", 3 * n_images)):
            afp = fp / n
            afp_rows.append(
                {
                    "case": f"synthetic {size}, noisy, bilinear 60, IoBB, T=0.1",
                    "afp_denominator": name,
                    "n": n,
                    "false_positives": str(fp),
                    "afp": afp,
                    "printed": printed,
                    "reproduces": f"{afp:.3f}" == printed,
                }
            )
    for t in afp_denominators().itertuples():
        ks = t.k_trunc or t.k_round
        afp_rows.append(
            {
                "case": "Table 4 Nodule, T >= 0.5 (BBox_List_2017 counts)",
                "afp_denominator": t.afp_denominator,
                "n": t.n,
                "false_positives": ks,
                "afp": int(ks.split(",")[0]) / t.n if ks else float("nan"),
                "printed": f"{t.value:.4f}",
                "reproduces": bool(t.fits),
            }
        )
    return pd.DataFrame(afp_rows)


def synth_localization_table(scores: pd.DataFrame, median_area: Mapping[str, float]) -> pd.DataFrame:
    """Part B's cells as the one localization table: one reference box per image, AFP per image."""
    import pandas as pd

    t = pd.DataFrame(
        {
            "variant": scores["variant"],
            "localizer": scores["localizer"],
            "upsampling": scores["upsampling"],
            "threshold": scores["threshold"],
            FINDING: "synthetic " + scores["size"],
            "rule": scores["rule"],
            "T": [float(Fraction(t)) for t in scores["T"]],
        }
    )
    t["T_iou"] = t["T"]
    for col in ("acc", "afp", "hits", "false_positives"):
        t[col] = scores[col]
    t["n_boxes"] = t["n_images"] = t["n_afp"] = scores["n_images"]
    t["fp_without_box"] = 0
    t["median_area_fraction"] = scores["size"].map(median_area)
    return t[list(LOCALIZATION_COLUMNS)]
