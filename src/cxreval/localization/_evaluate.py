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

import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from os import PathLike
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, ClassVar, SupportsFloat

import numpy as np
from numpy.typing import ArrayLike

from .._validation import check_choice
from ..exceptions import InvalidParameterError, SchemaError
from ..executor import Executor, ExecutorLike, get_executor, open_executor
from ..findings import canonical_finding
from ..io._write import write_summary
from ..progress import Progress, as_progress
from ..results import ReadResult, TableResult, as_table
from ..schema import FINDING, STUDY_ID
from ..schema._boxes import (
    BOX_COLUMNS,
    BOX_COORDS,
    LOCALIZATION_COLUMNS,
    NO_THRESHOLD,
    check_box_table,
    threshold_label,
)
from ._boxes import check_boxes, iobb, iou
from ._heatmap_files import HeatmapFiles, read_maps, scan_heatmaps
from ._heatmaps import batch_boxes, check_heatmaps, heatmaps_to_boxes
from ._protocol import LocalizationProtocol, score_images

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
FILE_CHUNK = 1024  # maps per task when the maps are read from files


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
class LocalizationResult(TableResult):
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

    @classmethod
    def figure(cls, table: pd.DataFrame) -> Any:
        """Acc. (left) and AFP (right) against the overlap threshold T, one line per finding, a menu switching
        localizer and variant (the report's figure of ``localization.csv``)."""
        from .._plots.analyses import localization_curves

        return localization_curves(table)


def table4_view(table: pd.DataFrame, *, rule: str) -> pd.DataFrame:
    """Acc. and AFP of one rule as the paper's Table 4 lays them out: a row per finding, a column per
    (measure, threshold, T)."""
    t4 = table[table.rule == rule].pivot_table(
        index=FINDING, columns=["threshold", "T"], values=["acc", "afp"]
    )
    return t4[sorted(t4.columns, key=lambda c: (c[0], float(c[1]) if c[1] != NO_THRESHOLD else np.inf, c[2]))]


def _col(rule: str, T: SupportsFloat, strict: bool, T_iou: SupportsFloat | None = None) -> str:
    op = ">" if strict else ">="
    if T_iou is None or rule == "IoBB" or float(T_iou) == float(T):
        t = float(T) if rule != "IoU" or T_iou is None else float(T_iou)
        return f"{rule}{op}{t:g}"
    if rule == "IoU":
        return f"IoU{op}{float(T_iou):g}"
    return f"IoU{op}{float(T_iou):g} or IoBB{op}{float(T):g}"


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
    notes = list(read_notes)
    n_read = len(refs)
    if studies_from_maps:
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
        refs, coords = refs[keep].reset_index(drop=True), coords[keep]
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
    n_afp = {"pairs": None, "box_images": len(box_images), "boxes": len(refs)}[protocol.afp_denominator]
    keys = list(groups)
    pred = _predicted_boxes(
        maps, files, entry, [k for k in keys + afp_only if k in shapes], protocol, ex, progress
    )
    empty = np.zeros((0, 4), dtype=np.int64)
    rows, details = [], []
    findings = sorted({k[1] for k in keys})
    t_iou = protocol.T_iou
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
                rows += [
                    {
                        **case,
                        "threshold": threshold_label(thr),
                        "finding": f,
                        "rule": rule,
                        "T": float(T),
                        "T_iou": float(protocol.T_iou_values[ti]) if rule != "IoBB" else float(T),
                        "acc": np.nan,
                        "afp": np.nan,
                        "hits": 0,
                        "false_positives": 0,
                        "n_boxes": n_box,
                        "n_images": len(fk),
                        "n_afp": 0,
                        "fp_without_box": 0,
                        "median_area_fraction": med_area[f],
                    }
                    for rule in protocol.rules
                    for ti, T in enumerate(protocol.T_values)
                ]
                continue
            P = [pred[thr].get(k, empty) for k in fk]
            G = [coords[groups[k]] for k in fk]
            extra = [pred[thr][k] for k in afp_only if k[1] == f]
            fp_extra = int(sum(len(b) for b in extra))
            denom = len(fk) if n_afp is None else n_afp
            cols = {}
            for rule in protocol.rules:
                sc = score_images(
                    P, G, rule=rule, T_values=protocol.T_values, strict=protocol.strict_T, T_iou=t_iou
                )
                for ti, T in enumerate(protocol.T_values):
                    fp = int(sc.false_positives[ti].sum()) + fp_extra
                    rows.append(
                        {
                            **case,
                            "threshold": threshold_label(thr),
                            "finding": f,
                            "rule": rule,
                            "T": float(T),
                            "T_iou": float(protocol.T_iou_values[ti]) if rule != "IoBB" else float(T),
                            "acc": float(sc.acc()[ti]),
                            "afp": fp / max(denom, 1),
                            "hits": int(sc.hits[ti].sum()),
                            "false_positives": fp,
                            "n_boxes": int(sc.n_refs.sum()),
                            "n_images": len(fk),
                            "n_afp": int(denom),
                            "fp_without_box": fp_extra,
                            "median_area_fraction": med_area[f],
                        }
                    )
                # per detected box: correct for any reference of its image
                n_p = sc.n_preds
                n_r = sc.n_refs
                pair_pred = (
                    np.repeat(np.arange(n_p.sum()), np.repeat(n_r, n_p)) if n_p.sum() else np.zeros(0, int)
                )
                for ti, T in enumerate(protocol.T_values):
                    ok = np.zeros(int(n_p.sum()), dtype=bool)
                    np.logical_or.at(ok, pair_pred, sc.correct[ti])
                    cols[_col(rule, T, protocol.strict_T, None if t_iou is None else t_iou[ti])] = ok
            if sum(len(p) for p in P):
                img_idx = np.repeat(np.arange(len(fk)), [len(p) for p in P])
                Pc = np.concatenate(P).astype(float)
                best_iou, best_iobb = _best_overlaps(Pc, img_idx, G)
                det = pd.DataFrame(
                    {
                        STUDY_ID: [fk[i][0] for i in img_idx],
                        FINDING: f,
                        "x_min": Pc[:, 0].astype(int),
                        "y_min": Pc[:, 1].astype(int),
                        "x_max": Pc[:, 2].astype(int),
                        "y_max": Pc[:, 3].astype(int),
                        "threshold": threshold_label(thr),
                        "box": np.concatenate([np.arange(len(p)) for p in P]),
                        "iou": best_iou,
                        "iobb": best_iobb,
                        **cols,
                    }
                )
                det_parts.append(det)
            if fp_extra:
                xk = [k for k in afp_only if k[1] == f]
                Pc = np.concatenate(extra).astype(int)
                det_parts.append(
                    pd.DataFrame(
                        {
                            STUDY_ID: np.repeat([k[0] for k in xk], [len(b) for b in extra]),
                            FINDING: f,
                            "x_min": Pc[:, 0],
                            "y_min": Pc[:, 1],
                            "x_max": Pc[:, 2],
                            "y_max": Pc[:, 3],
                            "threshold": threshold_label(thr),
                            "box": np.concatenate([np.arange(len(b)) for b in extra]),
                            "iou": np.nan,
                            "iobb": np.nan,
                            **{c: np.zeros(len(Pc), dtype=bool) for c in cols},
                        }
                    )
                )
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
    if executor is None:
        return evaluate_heatmaps(
            index,
            boxes,
            protocol=protocol,
            missing_maps=missing_maps,
            studies_from_maps=studies_from_maps,
            progress=progress,
        )
    with open_executor(executor) as ex:
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


def _best_overlaps(
    Pc: np.ndarray, img_idx: np.ndarray, G: Sequence[np.ndarray]
) -> tuple[np.ndarray, np.ndarray]:
    """Best IoU and IoBB of each detected box ``Pc[j]`` over the reference boxes ``G[img_idx[j]]``.

    Vectorised over all (detected, reference) pairs; each pair's value is the same float as
    ``iou(Pc[j], G[i])`` row by row, and the maximum is exact.
    """
    n_r = np.array([len(g) for g in G], dtype=np.int64)
    r_off = np.cumsum(n_r) - n_r
    cnt = n_r[img_idx]
    pj = np.repeat(np.arange(len(Pc)), cnt)
    ri = np.repeat(r_off[img_idx], cnt) + np.arange(int(cnt.sum())) - np.repeat(np.cumsum(cnt) - cnt, cnt)
    Gc = np.concatenate([np.asarray(g, float).reshape(-1, 4) for g in G])
    starts = np.cumsum(cnt) - cnt
    return (
        np.maximum.reduceat(iou(Pc[pj], Gc[ri]), starts),
        np.maximum.reduceat(iobb(Pc[pj], Gc[ri]), starts),
    )


def _predicted_boxes(
    maps: dict[tuple[str, str], np.ndarray],
    files: HeatmapFiles | None,
    entry: dict[tuple[str, str], int],
    order: list[tuple[str, str]],
    protocol: LocalizationProtocol,
    ex: Executor | None,
    progress: Progress,
) -> dict[float, dict[tuple[str, str], np.ndarray]]:
    """Boxes of the maps ``order`` at each threshold: in memory batched by map shape, from files in chunks;
    a ``progress`` task counts the maps."""
    pred: dict[float, dict[tuple[str, str], np.ndarray]] = {t: {} for t in protocol.thresholds}
    task = progress.add("heatmaps -> boxes", total=len(order))
    params = (
        protocol.image_shape,
        protocol.upsampling,
        protocol.thresholds,
        protocol.strict_threshold,
        protocol.connectivity,
    )
    if files is not None:
        idx = np.array([entry[k] for k in order], dtype=np.int64)
        items = [files.take(idx[b0 : b0 + FILE_CHUNK]) for b0 in range(0, idx.size, FILE_CHUNK)]
        func = functools.partial(file_chunk_boxes, params)
        parts = (ex if ex is not None else get_executor(None)).map(
            func, items, on_item=lambda x: progress.advance(task, len(x.keys))
        )
        for ti, t in enumerate(protocol.thresholds):
            pred[t] = dict(zip(order, (b for part in parts for b in part[ti])))
        return pred
    by_shape: dict[tuple[int, int], list[tuple[str, str]]] = {}
    for k in order:
        by_shape.setdefault(maps[k].shape, []).append(k)
    for ks in by_shape.values():
        res = batch_boxes(
            np.stack([maps[k] for k in ks]),
            image_shape=protocol.image_shape,
            upsampling=protocol.upsampling,
            thresholds=protocol.thresholds,
            strict=protocol.strict_threshold,
            connectivity=protocol.connectivity,
            executor=ex,
            on_item=lambda x: progress.advance(task, len(x[1])),
        ).boxes
        for t, per in zip(protocol.thresholds, res):
            for k, b in zip(ks, per):
                pred[t][k] = b
    return pred


def file_chunk_boxes(params: tuple, part: HeatmapFiles) -> list[list[np.ndarray]]:
    """Boxes of the maps of one chunk of a :class:`HeatmapFiles` index, per threshold, in the chunk's order.

    The task of :func:`evaluate_heatmaps` on files: it reads its own maps (:func:`read_maps`), so only
    the file paths and offsets travel with it. ``params`` is ``(image_shape, upsampling, thresholds,
    strict, connectivity)``.
    """
    image_shape, upsampling, thresholds, strict, connectivity = params
    maps = read_maps(part)
    out: list[list[np.ndarray]] = [[np.zeros((0, 4), np.int64)] * len(maps) for _ in thresholds]
    by_shape: dict[tuple[int, int], list[int]] = {}
    for i, m in enumerate(maps):
        by_shape.setdefault(m.shape, []).append(i)
    for ii in by_shape.values():
        res = heatmaps_to_boxes(
            np.stack([maps[i] for i in ii]),
            image_shape=image_shape,
            upsampling=upsampling,
            thresholds=thresholds,
            strict=strict,
            connectivity=connectivity,
        ).boxes
        for ti, per in enumerate(res):
            for i, b in zip(ii, per):
                out[ti][i] = b
    return out
