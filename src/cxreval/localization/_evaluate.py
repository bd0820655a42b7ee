"""Scoring a set of heatmaps against reference boxes, and the error model on real boxes.

:func:`evaluate_heatmap_files` is what ``cxreval localize`` runs (the maps streamed from their files; the
command's job, with the box file read, is :func:`cxreval.jobs.evaluate_localization_files`);
:func:`evaluate_heatmaps` scores maps in memory or a :class:`HeatmapFiles` index: maps keyed ``"<image id>/<finding>"``
become boxes under a :class:`~cxreval.localization.LocalizationProtocol` and are scored per
finding, threshold, rule and T into a Table-4-style table plus a per-box detail table.

:func:`~cxreval.localization.simulate_localization_on_boxes` runs the synthetic study's error model on real radiologist boxes
(``BBox_List_2017``): one map per (image, finding) made from its boxes, scored per finding, to show what the
protocol rewards for findings of each size.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from os import PathLike
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, ClassVar

import numpy as np
from numpy.typing import ArrayLike

from .._validation import check_choice
from ..exceptions import InvalidParameterError, SchemaError
from ..executor import ExecutorLike, get_executor, open_executor
from ..findings import canonical_finding
from ..io._write import write_summary
from ..progress import Progress, as_progress
from ..results import ReadResult, as_table
from ..schema import FINDING, STUDY_ID
from ..schema._boxes import (
    BOX_COLUMNS,
    BOX_COORDS,
    LOCALIZATION_COLUMNS,
    NO_THRESHOLD,
    check_box_table,
)
from ._boxes import check_boxes
from ._finding_scores import not_scored_rows, score_finding
from ._heatmap_files import HeatmapFiles, scan_heatmaps
from ._heatmaps import check_heatmaps
from ._map_boxes import FILE_CHUNK, _predicted_boxes, file_chunk_boxes
from ._protocol import LocalizationProtocol
from ._table_result import _LocalizationTableResult

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "LocalizationResult",
    "evaluate_heatmaps",
    "evaluate_heatmap_files",
    "split_key",
    "file_chunk_boxes",
    "FILE_CHUNK",
    "DETAIL_COLUMNS",
    "table4_view",
]

DETAIL_COLUMNS: tuple[str, ...] = (*BOX_COLUMNS, "threshold", "box", "iou", "iobb")
"""The first columns of ``boxes.csv`` (one per detected box); one boolean column per rule and T follows."""


def split_key(key: str) -> tuple[str, str]:
    """Split a map key ``"<image id>/<finding>"`` at its last ``/``; canonicalise the finding."""
    if not isinstance(key, str) or "/" not in key:
        raise SchemaError(
            f"heatmap key {key!r} is not '<image id>/<finding>' (e.g. '00013118_008.png/Atelectasis')."
        )
    image, finding = key.rsplit("/", 1)
    if not image:
        raise SchemaError(f"heatmap key {key!r} has an empty image id.")
    return image, canonical_finding(finding, where=f"heatmap key {key!r}")


@dataclass(frozen=True)
class LocalizationResult(_LocalizationTableResult):
    """Acc. and AFP per finding, threshold, rule and T (``localization.csv``), with the per-box detail
    (``boxes.csv``).

    Attributes
    ----------
    table : pandas.DataFrame
        Columns :data:`~cxreval.schema.LOCALIZATION_COLUMNS`: ``variant`` is ``heatmaps``,
        ``localizer`` ``heatmap``, ``upsampling`` the protocol's; ``T`` is the column's T (T(IoBB)),
        ``T_iou`` the IoU threshold of the row's rule (= ``T`` unless the protocol sets ``T_iou``),
        ``n_afp`` the AFP denominator (:attr:`LocalizationProtocol.afp_denominator`), ``fp_without_box``
        the false positives (included in ``false_positives``) on maps of box images without a box of the
        finding (0 under ``'pairs'``), ``median_area_fraction`` the median reference box area of the
        finding over the image area.
    detail : pandas.DataFrame
        One row per detected box: :data:`DETAIL_COLUMNS` ``study_id, finding, x_min, y_min, x_max, y_max,
        threshold, box, iou, iobb`` (best over the image's reference boxes of the finding) and one boolean
        column per rule and T (``"IoBB>0.1"``...).
    protocol : LocalizationProtocol
    notes : tuple of str
        Maps without reference boxes, references without maps, renames, and the reading of the boxes.
    heatmaps, boxes : str
        What was scored: the heatmap files (or ``"maps in memory"``) and the reference boxes' file.
    n_reference_boxes : int
        The reference boxes scored (with ``studies_from_maps``: those on images with a heat map).
    not_scored : tuple of str
        Findings with reference boxes but no heat map at all: their Acc. and AFP are NaN (N/A).
    """

    FILES: ClassVar[Mapping[str, str]] = MappingProxyType(
        {"localization": "localization.csv", "boxes": "boxes.csv"}
    )
    TEXT_FILES: ClassVar[Mapping[str, str]] = MappingProxyType({"summary": "summary.md"})
    COLUMNS: ClassVar[tuple[str, ...]] = LOCALIZATION_COLUMNS

    table: pd.DataFrame
    detail: pd.DataFrame
    protocol: LocalizationProtocol
    notes: tuple[str, ...] = field(default=())
    heatmaps: str = "maps in memory"
    boxes: str = "a boxes table"
    n_reference_boxes: int = 0
    not_scored: tuple[str, ...] = ()

    def tables(self) -> dict[str, pd.DataFrame]:
        return {"localization": self.table, "boxes": self.detail}

    def save(self, folder: str | PathLike[str]) -> dict[str, Path]:
        """Write ``localization.csv`` and ``boxes.csv`` (CSV + Parquet) and ``summary.md`` (:meth:`summary`): every
        file of ``cxreval localize`` but its ``run.json`` (``folder`` is made if missing); return ``{name: path}``."""
        Path(folder).mkdir(parents=True, exist_ok=True)
        paths = super().save(folder)
        return {**paths, "summary": write_summary(Path(folder), self.summary())}  # TEXT_FILES["summary"]

    def table4(self) -> pd.DataFrame:
        """Table 4 of the paper's layout for the protocol's first rule (:func:`table4_view`)."""
        return table4_view(self.table, rule=self.protocol.rules[0])

    def summary(self) -> str:
        """What was scored, the protocol, the notes and the Table-4 view, as Markdown."""
        t4 = self.table4()
        return "\n".join(
            [
                f"# cxreval localize: {self.heatmaps} vs {self.boxes}",
                "",
                f"Protocol: {self.protocol.to_dict()}",
                "",
                f"Reference boxes scored: {self.n_reference_boxes}; notes: {list(self.notes)}",
                "",
                *(
                    [f"N/A (no heat map of the finding, not scored): {', '.join(self.not_scored)}", ""]
                    if self.not_scored
                    else []
                ),
                f"Table 4 style ({self.protocol.rules[0]}):",
                "",
                "```",
                t4.round(4).to_string(),
                "```",
            ]
        )

    def to_dict(self) -> dict[str, object]:
        return {
            "protocol": self.protocol.to_dict(),
            "notes": list(self.notes),
            "heatmaps": self.heatmaps,
            "boxes": self.boxes,
            "summary": self.table.to_dict(orient="records"),
        }


def table4_view(table: pd.DataFrame, *, rule: str) -> pd.DataFrame:
    """Acc. and AFP of one rule as the paper's Table 4 lays them out: a row per finding, a column per
    (measure, threshold, T)."""
    t4 = table[table.rule == rule].pivot_table(
        index=FINDING, columns=["threshold", "T"], values=["acc", "afp"]
    )
    return t4[sorted(t4.columns, key=lambda c: (c[0], float(c[1]) if c[1] != NO_THRESHOLD else np.inf, c[2]))]


def evaluate_heatmaps(
    heatmaps: Mapping[str, ArrayLike] | HeatmapFiles,
    boxes: pd.DataFrame | ReadResult,
    *,
    protocol: LocalizationProtocol = LocalizationProtocol(),
    missing_maps: str = "error",
    studies_from_maps: bool = False,
    executor: ExecutorLike = None,
    progress: Progress | None = None,
) -> LocalizationResult:
    """Score heatmaps against reference boxes under the ChestX-ray8 protocol.

    Parameters
    ----------
    heatmaps : mapping of str to array-like of shape (h, w), or HeatmapFiles
        Keys ``"<image id>/<finding>"``; findings go through :func:`cxreval.findings.canonical_finding`.
        A :class:`~cxreval.localization.HeatmapFiles` index
        (:func:`~cxreval.localization.scan_heatmaps` of ``.npz`` files or folders of
        ``.npy``) streams the maps: they are read in chunks of :data:`FILE_CHUNK` maps, each task reading
        its own maps from the files (on an executor, every worker must see the files at the same paths),
        and only their boxes are kept. The result is the same as for the maps in memory.
    boxes : pandas.DataFrame, ReadResult or a list of them
        A box table (:data:`~cxreval.schema.BOX_COLUMNS` ``study_id, finding, [source,] x_min,
        y_min, x_max, y_max``), or the :class:`~cxreval.results.ReadResult` of a box reader
        (:func:`cxreval.datasets.boxes.read_box_file`, :func:`~cxreval.datasets.nih_boxes.read_nih_boxes`,
        :func:`~cxreval.datasets.vindr.read_vindr_boxes`), whose file and notes the result records. With a
        ``source`` column (VinDr-CXR's readers) every source's boxes are references: a detected box is
        correct when it matches any of them, and Acc. counts each source's box. A list of tables (or of
        ReadResults) is concatenated in order.
    protocol : LocalizationProtocol
    missing_maps : {'error', 'miss'}, default='error'
        What to do with reference boxes of an (image, finding) that has no map: raise, or score them
        as missed (no detected box). Maps of a finding on an image without a box of that finding are
        scored for AFP only when ``protocol.afp_denominator`` is ``'box_images'`` or ``'boxes'`` and the
        image is in the box set (every box they give is a false positive); otherwise they are not scored
        and are listed in ``notes``.
    studies_from_maps : bool, default=False
        Score only the images that have at least one heat map: the reference boxes of every other image are
        left out (counted in ``notes`` and :attr:`LocalizationResult.n_reference_boxes`), as when a model's maps
        cover a subset of the box set. With it (or with ``missing_maps='miss'``) a finding that has no heat map
        at all is not scored: its rows have Acc. and AFP NaN (N/A, never 0) and it is named in ``notes`` and
        :attr:`LocalizationResult.not_scored`.
    executor : None, str or Executor, optional
        Runs heatmaps → boxes in chunks of maps (see :func:`~cxreval.localization.heatmaps_to_boxes`
        and :func:`cxreval.executor.get_executor`); default in this process. The result is identical.
        With files, a task carries the file paths, the byte offsets of its maps and the protocol's
        parameters, never the maps.
    progress : Progress, optional
        A task counting the maps turned into boxes (:class:`cxreval.progress.Progress`; e.g. the CLI's
        progress bars).

    Returns
    -------
    res : LocalizationResult
    """
    import pandas as pd

    check_choice(missing_maps, ("error", "miss"), name="missing_maps", func="evaluate_heatmaps")
    if not isinstance(heatmaps, (HeatmapFiles, Mapping)):
        raise InvalidParameterError(
            f"The 'heatmaps' parameter of evaluate_heatmaps must be a mapping of "
            f"'<image id>/<finding>' to maps or a HeatmapFiles index (scan_heatmaps). Got "
            f"{type(heatmaps).__name__} instead."
        )
    ex = None if executor is None else get_executor(executor)
    progress = as_progress(progress, func="evaluate_heatmaps")
    refs, coords, read_notes, boxes_name = _reference_boxes(boxes, protocol)
    files, maps, shapes, entry = _heatmap_index(heatmaps, protocol)
    notes = list(read_notes)
    if studies_from_maps:
        refs, coords = _studies_with_maps(refs, coords, shapes, notes)
    groups, not_scored, afp_only = _pairs_to_score(
        refs, shapes, protocol, missing_maps=missing_maps, studies_from_maps=studies_from_maps, notes=notes
    )
    n_afp = {"pairs": None, "box_images": len(set(refs[STUDY_ID].astype(str))), "boxes": len(refs)}[
        protocol.afp_denominator
    ]
    keys = list(groups)
    pred = _predicted_boxes(
        maps, files, entry, [k for k in keys + afp_only if k in shapes], protocol, ex, progress
    )
    rows, details = [], []
    findings = sorted({k[1] for k in keys})
    H, W = protocol.image_shape
    area = (coords[:, 2] - coords[:, 0]) * (coords[:, 3] - coords[:, 1]) / (H * W)
    med_area = {f: float(np.median(area[(refs[FINDING] == f).to_numpy()])) for f in findings}
    case = {"variant": "heatmaps", "localizer": "heatmap", "upsampling": protocol.upsampling}
    for thr in protocol.thresholds:
        det_parts = []
        for f in findings:
            fk = [k for k in keys if k[1] == f]
            if f in not_scored:  # no map of this finding at all: N/A, not 0
                n_box = int(sum(len(groups[k]) for k in fk))
                rows += not_scored_rows(case, thr, f, n_box, len(fk), med_area[f], protocol)
                continue
            f_rows, f_parts = score_finding(
                case,
                thr,
                f,
                fk,
                pred[thr],
                [coords[groups[k]] for k in fk],
                [k for k in afp_only if k[1] == f],
                n_afp,
                med_area[f],
                protocol,
            )
            rows += f_rows
            det_parts += f_parts
        details += det_parts
    table = pd.DataFrame(rows, columns=list(LOCALIZATION_COLUMNS))
    detail = pd.concat(details, ignore_index=True) if details else pd.DataFrame(columns=list(DETAIL_COLUMNS))
    return LocalizationResult(
        table,
        detail,
        protocol,
        tuple(notes),
        heatmaps=_describe(heatmaps),
        boxes=boxes_name,
        n_reference_boxes=len(refs),
        not_scored=not_scored,
    )


def _reference_boxes(
    boxes: object, protocol: LocalizationProtocol
) -> tuple[pd.DataFrame, np.ndarray, tuple[str, ...], str]:
    """The reference boxes checked (table, coordinates), the notes of their reader and the boxes' name."""
    import pandas as pd

    read_notes: tuple[str, ...] = ()
    boxes_name = "a boxes table"
    if isinstance(boxes, ReadResult):
        read_notes, boxes_name = tuple(boxes.report.notes), Path(boxes.report.source).name
        boxes = boxes.table
    elif isinstance(boxes, (list, tuple)):
        boxes = as_table(boxes, name="boxes", func="evaluate_heatmaps")
    if not isinstance(boxes, pd.DataFrame):
        raise InvalidParameterError(
            f"The 'boxes' parameter of evaluate_heatmaps must be a box table (DataFrame) or "
            f"a ReadResult of one. Got {type(boxes).__name__} instead."
        )
    refs = check_box_table(boxes).copy()
    if len(refs) == 0:
        raise SchemaError("the boxes table is empty; nothing to score.")
    refs[FINDING] = [canonical_finding(f, where="the boxes table, column 'finding'") for f in refs[FINDING]]
    coords = check_boxes(
        refs[list(BOX_COORDS)].to_numpy(float),
        name="reference boxes",
        image_shape=protocol.image_shape,
        where="the boxes table",
    )
    dup = refs.duplicated(keep=False).to_numpy()
    if dup.any():
        rows = np.flatnonzero(dup)[:4].tolist()
        r = refs.iloc[rows[0]]
        raise SchemaError(
            f"the boxes table repeats the same box in rows {rows} (image {r[STUDY_ID]!r}, finding "
            f"{r[FINDING]!r}); a repeated row would be counted twice. Remove the duplicates."
        )
    return refs, coords, read_notes, boxes_name


def _heatmap_index(
    heatmaps: Mapping[str, ArrayLike] | HeatmapFiles, protocol: LocalizationProtocol
) -> tuple[
    HeatmapFiles | None,
    dict[tuple[str, str], np.ndarray],
    dict[tuple[str, str], tuple[int, int]],
    dict[tuple[str, str], int],
]:
    """The maps keyed ``(image, finding)``: the files (or None), the maps in memory, every map's shape and its
    entry in the files; a repeated key or a map of another aspect ratio than the image is refused."""
    H, W = protocol.image_shape
    files = heatmaps if isinstance(heatmaps, HeatmapFiles) else None
    maps: dict[tuple[str, str], np.ndarray] = {}
    shapes: dict[tuple[str, str], tuple[int, int]] = {}
    entry: dict[tuple[str, str], int] = {}
    if isinstance(heatmaps, HeatmapFiles):
        for i, key in enumerate(heatmaps.keys):
            k = split_key(key)
            if k in entry:
                raise SchemaError(
                    f"two heatmaps for image {k[0]!r} and finding {k[1]!r} (key {key!r}, in "
                    f"{heatmaps.where(entry[k])} and {heatmaps.where(i)})."
                )
            entry[k] = i
            shapes[k] = (int(heatmaps.shape[i, 0]), int(heatmaps.shape[i, 1]))
    elif isinstance(heatmaps, Mapping):
        for key, m in heatmaps.items():
            k = split_key(key)
            if k in maps:
                raise SchemaError(f"two heatmaps for image {k[0]!r} and finding {k[1]!r} (key {key!r}).")
            maps[k] = check_heatmaps(m, name=f"heatmap {key!r}")
            shapes[k] = maps[k].shape
    for k, (h, w) in shapes.items():
        if h * W != w * H:
            where = f" ({files.where(entry[k])})" if files is not None else ""
            raise SchemaError(
                f"heatmap {'/'.join(k)!r}{where} is {h} x {w} but the image is {H} x {W}: upsampling "
                "would stretch it (a different aspect ratio). Give heatmaps with the image's aspect "
                "ratio."
            )
    return files, maps, shapes, entry


def _studies_with_maps(
    refs: pd.DataFrame, coords: np.ndarray, shapes: Mapping[tuple[str, str], object], notes: list[str]
) -> tuple[pd.DataFrame, np.ndarray]:
    """The reference boxes of the images with at least one heat map (``studies_from_maps``), noted."""
    n_read = len(refs)
    mapped = {k[0] for k in shapes}
    keep = refs[STUDY_ID].astype(str).isin(mapped).to_numpy()
    if not keep.any():
        raise SchemaError(
            f"studies_from_maps: none of the {len(mapped)} image(s) with a heat map has a reference "
            f"box (e.g. {sorted(mapped)[:1]}); check that the maps' image ids match the boxes' "
            "study_id."
        )
    notes.append(
        f"scored only the {int(refs[STUDY_ID][keep].nunique())} image(s) with a heat map: "
        f"{int(keep.sum())} of {n_read} reference boxes (the rest, on images without a map, left out)"
    )
    return refs[keep].reset_index(drop=True), coords[keep]


def _pairs_to_score(
    refs: pd.DataFrame,
    shapes: Mapping[tuple[str, str], object],
    protocol: LocalizationProtocol,
    *,
    missing_maps: str,
    studies_from_maps: bool,
    notes: list[str],
) -> tuple[dict[tuple[str, str], list[int]], tuple[str, ...], list[tuple[str, str]]]:
    """The reference boxes' rows per ``(image, finding)``, the findings without any map (not scored) and the
    maps scored for AFP only; what is left out is noted, a pair without a map refused unless
    ``missing_maps='miss'``."""
    groups: dict[tuple[str, str], list[int]] = {}
    for i, (im, f) in enumerate(zip(refs[STUDY_ID], refs[FINDING])):
        groups.setdefault((str(im), f), []).append(i)
    not_scored: tuple[str, ...] = ()
    if studies_from_maps or missing_maps == "miss":
        mapped_findings = {k[1] for k in shapes}
        not_scored = tuple(sorted({k[1] for k in groups} - mapped_findings))
        if not_scored:
            notes.append(f"finding(s) without any heat map not scored (N/A): {', '.join(not_scored)}")
    no_map = [k for k in groups if k not in shapes and k[1] not in not_scored]
    if no_map and missing_maps == "error":
        raise SchemaError(
            f"{len(no_map)} (image, finding) pair(s) with reference boxes have no heatmap, e.g. "
            f"{'/'.join(no_map[0])!r}; pass missing_maps='miss' to score "
            "them as missed."
        )
    if no_map:
        notes.append(f"{len(no_map)} (image, finding) pair(s) without a heatmap scored as missed")
    box_images = set(refs[STUDY_ID].astype(str))
    afp_only: list[tuple[str, str]] = []
    if protocol.afp_denominator != "pairs":
        afp_only = [k for k in shapes if k not in groups and k[0] in box_images]
        if afp_only:
            notes.append(
                f"{len(afp_only)} heatmap(s) of box images without a box of their finding scored for AFP "
                f"only (afp_denominator={protocol.afp_denominator!r}): all their boxes are false positives"
            )
    unscored = [k for k in shapes if k not in groups and k not in set(afp_only)]
    if unscored:
        notes.append(
            f"{len(unscored)} heatmap(s) without a reference box not scored, e.g. {'/'.join(unscored[0])!r}"
        )
    return groups, not_scored, afp_only


def evaluate_heatmap_files(
    heatmaps: Sequence[str | PathLike[str]] | str | PathLike[str],
    boxes: pd.DataFrame | ReadResult | Sequence[pd.DataFrame | ReadResult],
    *,
    protocol: LocalizationProtocol = LocalizationProtocol(),
    missing_maps: str = "error",
    studies_from_maps: bool = False,
    executor: ExecutorLike = None,
    progress: Progress | None = None,
) -> LocalizationResult:
    """Score the heatmaps of ``.npz`` files and folders of ``.npy`` against reference boxes: ``cxreval localize``.

    The files are indexed from their headers (:func:`~cxreval.localization.scan_heatmaps`: a bad file is refused,
    naming it, before any work) and the maps read in chunks by the tasks themselves, so memory holds one chunk
    of maps per worker and the boxes, not the maps; the result is :func:`evaluate_heatmaps` of that index, and
    its :meth:`~LocalizationResult.save` writes every file of the command but ``run.json``.

    Parameters
    ----------
    heatmaps : path-like or sequence of path-like
        ``.npz`` files and folders of ``.npy`` files, keyed ``"<image id>/<finding>"``.
    boxes, protocol, missing_maps, studies_from_maps, progress
        As for :func:`evaluate_heatmaps`.
    executor : None, str or Executor, optional
        As for :func:`evaluate_heatmaps`; an executor started here from a spec string (``'process:2'``) is
        closed before returning.

    Returns
    -------
    res : LocalizationResult
    """
    index = scan_heatmaps(heatmaps)
    with contextlib.nullcontext() if executor is None else open_executor(executor) as ex:
        return evaluate_heatmaps(
            index,
            boxes,
            protocol=protocol,
            missing_maps=missing_maps,
            studies_from_maps=studies_from_maps,
            executor=ex,
            progress=progress,
        )


def _describe(heatmaps: object) -> str:
    """The heatmap files' names (``"maps in memory"`` for a mapping)."""
    if isinstance(heatmaps, HeatmapFiles):
        return ", ".join(
            dict.fromkeys(
                Path(f).name if f.endswith(".npz") else f"{Path(f).parent.name}/" for f in heatmaps.files
            )
        )
    return "maps in memory"
