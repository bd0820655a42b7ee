"""Scoring a set of heatmaps against reference boxes, and the error model on real boxes.

:func:`evaluate_heatmaps` is what ``cxreval localize`` runs: maps keyed ``"<image id>/<finding>"``
become boxes under a :class:`~cxreval.localization.protocol.LocalizationProtocol` and are scored per
finding, threshold, rule and T into a Table-4-style table plus a per-box detail table.

:func:`real_boxes_study` runs the seed's error model on real radiologist boxes (``BBox_List_2017``): one
map per (image, finding) made from its boxes, scored per finding, to show what the protocol rewards for
findings of each size.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import SupportsFloat

import numpy as np
import pandas as pd

from .._validation import check_choice, check_columns, normalize_rng
from ..exceptions import InvalidParameterError, SchemaError
from ..executor import get_executor
from ..findings import canonical_finding
from .boxes import check_boxes, iobb, iou
from .heatmap_files import HeatmapFiles, read_maps
from .heatmaps import check_heatmaps, heatmap_peaks, heatmaps_to_boxes
from .protocol import DEFAULT_T, LocalizationProtocol, score_images
from .synthetic import ErrorModel, coverage, error_model_maps

__all__ = ["LocalizationResult", "evaluate_heatmaps", "split_key", "real_boxes_study", "file_chunk_boxes", "FILE_CHUNK"]

_BOX_COLS = ("image_id", "finding", "x_min", "y_min", "x_max", "y_max")
FILE_CHUNK = 1024   # maps per task when the maps are read from files


def split_key(key: str) -> tuple[str, str]:
    """Split a map key ``"<image id>/<finding>"`` at its last ``/``; canonicalise the finding."""
    if not isinstance(key, str) or "/" not in key:
        raise SchemaError(f"heatmap key {key!r} is not '<image id>/<finding>' (e.g. '00013118_008.png/Atelectasis').")
    image, finding = key.rsplit("/", 1)
    if not image:
        raise SchemaError(f"heatmap key {key!r} has an empty image id.")
    return image, canonical_finding(finding, where=f"heatmap key {key!r}")


@dataclass(frozen=True)
class LocalizationResult:
    """Acc. and AFP per finding, threshold, rule and T, with the per-box detail.

    Attributes
    ----------
    summary : pandas.DataFrame
        ``finding, T, threshold, rule, acc, afp, hits, false_positives, n_boxes, n_images, T_iou, n_afp,
        fp_without_box``: ``T`` is the column's T (T(IoBB)), ``T_iou`` the IoU threshold of the row's rule
        (= ``T`` unless the protocol sets ``T_iou``), ``n_afp`` the AFP denominator
        (:attr:`LocalizationProtocol.afp_denominator`), ``fp_without_box`` the false positives (included in
        ``false_positives``) on maps of box images without a box of the finding (0 under ``'pairs'``).
    detail : pandas.DataFrame
        One row per detected box: ``image_id, finding, threshold, box, x_min, y_min, x_max, y_max, iou,
        iobb`` (best over the image's reference boxes of the finding) and one boolean column per rule
        and T (``"IoBB>0.1"``...).
    protocol : LocalizationProtocol
    notes : tuple of str
        Maps without reference boxes, references without maps, renames.
    """

    summary: pd.DataFrame
    detail: pd.DataFrame
    protocol: LocalizationProtocol
    notes: tuple[str, ...] = field(default=())

    def to_dict(self) -> dict[str, object]:
        return {"protocol": self.protocol.to_dict(), "notes": list(self.notes),
                "summary": self.summary.to_dict(orient="records")}


def _col(rule: str, T: SupportsFloat, strict: bool, T_iou: SupportsFloat | None = None) -> str:
    op = ">" if strict else ">="
    if T_iou is None or rule == "IoBB" or float(T_iou) == float(T):
        t = float(T) if rule != "IoU" or T_iou is None else float(T_iou)
        return f"{rule}{op}{t:g}"
    if rule == "IoU":
        return f"IoU{op}{float(T_iou):g}"
    return f"IoU{op}{float(T_iou):g} or IoBB{op}{float(T):g}"


def evaluate_heatmaps(heatmaps: Mapping[str, object] | HeatmapFiles, boxes: pd.DataFrame, *,
                      protocol: LocalizationProtocol = LocalizationProtocol(),
                      missing_maps: str = "error", executor: object = None) -> LocalizationResult:
    """Score heatmaps against reference boxes under the ChestX-ray8 protocol.

    Parameters
    ----------
    heatmaps : mapping of str to array-like of shape (h, w), or HeatmapFiles
        Keys ``"<image id>/<finding>"``; findings go through :func:`cxreval.findings.canonical_finding`.
        A :class:`~cxreval.localization.heatmap_files.HeatmapFiles` index
        (:func:`~cxreval.localization.heatmap_files.scan_heatmaps` of ``.npz`` files or folders of
        ``.npy``) streams the maps: they are read in chunks of :data:`FILE_CHUNK` maps, each task reading
        its own maps from the files (on an executor, every worker must see the files at the same paths),
        and only their boxes are kept. The result is the same as for the maps in memory.
    boxes : pandas.DataFrame
        ``image_id, finding, x_min, y_min, x_max, y_max`` (e.g. from
        :func:`cxreval.datasets.nih_boxes.read_nih_boxes`).
    protocol : LocalizationProtocol
    missing_maps : {'error', 'miss'}, default='error'
        What to do with reference boxes of an (image, finding) that has no map: raise, or score them
        as missed (no detected box). Maps of a finding on an image without a box of that finding are
        scored for AFP only when ``protocol.afp_denominator`` is ``'box_images'`` or ``'boxes'`` and the
        image is in the box set (every box they give is a false positive); otherwise they are not scored
        and are listed in ``notes``.
    executor : None, str or Executor, optional
        Runs heatmaps → boxes in chunks of maps (see :func:`~cxreval.localization.heatmaps.heatmaps_to_boxes`
        and :func:`cxreval.executor.get_executor`); default in this process. The result is identical.
        With files, a task carries the file paths, the byte offsets of its maps and the protocol's
        parameters, never the maps.

    Returns
    -------
    res : LocalizationResult
    """
    check_choice(missing_maps, ("error", "miss"), name="missing_maps", func="evaluate_heatmaps")
    if not isinstance(heatmaps, (HeatmapFiles, Mapping)):
        raise InvalidParameterError(f"The 'heatmaps' parameter of evaluate_heatmaps must be a mapping of "
                                    f"'<image id>/<finding>' to maps or a HeatmapFiles index (scan_heatmaps). Got "
                                    f"{type(heatmaps).__name__} instead.")
    ex = None if executor is None else get_executor(executor)
    check_columns(boxes, _BOX_COLS, where="the boxes table")
    if len(boxes) == 0:
        raise SchemaError("the boxes table is empty; nothing to score.")
    refs = boxes.loc[:, list(_BOX_COLS)].copy()
    refs["finding"] = [canonical_finding(f, where="the boxes table, column 'finding'") for f in refs["finding"]]
    coords = check_boxes(refs[["x_min", "y_min", "x_max", "y_max"]].to_numpy(float), name="reference boxes",
                         image_shape=protocol.image_shape, where="the boxes table")
    dup = refs.duplicated(keep=False).to_numpy()
    if dup.any():
        rows = np.flatnonzero(dup)[:4].tolist()
        r = refs.iloc[rows[0]]
        raise SchemaError(f"the boxes table repeats the same box in rows {rows} (image {r['image_id']!r}, finding "
                          f"{r['finding']!r}); a repeated row would be counted twice. Remove the duplicates.")
    H, W = protocol.image_shape
    files = heatmaps if isinstance(heatmaps, HeatmapFiles) else None
    maps: dict[tuple[str, str], np.ndarray] = {}
    shapes: dict[tuple[str, str], tuple[int, int]] = {}
    entry: dict[tuple[str, str], int] = {}
    if isinstance(heatmaps, HeatmapFiles):
        for i, key in enumerate(heatmaps.keys):
            k = split_key(key)
            if k in entry:
                raise SchemaError(f"two heatmaps for image {k[0]!r} and finding {k[1]!r} (key {key!r}, in "
                                  f"{heatmaps.where(entry[k])} and {heatmaps.where(i)}).")
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
            raise SchemaError(f"heatmap {'/'.join(k)!r}{where} is {h} x {w} but the image is {H} x {W}: upsampling "
                              "would stretch it (a different aspect ratio). Give heatmaps with the image's aspect "
                              "ratio.")
    groups: dict[tuple[str, str], list[int]] = {}
    for i, (im, f) in enumerate(zip(refs["image_id"], refs["finding"])):
        groups.setdefault((str(im), f), []).append(i)
    notes = []
    no_map = [k for k in groups if k not in shapes]
    if no_map and missing_maps == "error":
        raise SchemaError(f"{len(no_map)} (image, finding) pair(s) with reference boxes have no heatmap, e.g. "
                          f"{'/'.join(no_map[0])!r}; pass missing_maps='miss' (--missing-maps miss) to score "
                          "them as missed.")
    if no_map:
        notes.append(f"{len(no_map)} (image, finding) pair(s) without a heatmap scored as missed")
    box_images = set(refs["image_id"].astype(str))
    afp_only: list[tuple[str, str]] = []
    if protocol.afp_denominator != "pairs":
        afp_only = [k for k in shapes if k not in groups and k[0] in box_images]
        if afp_only:
            notes.append(f"{len(afp_only)} heatmap(s) of box images without a box of their finding scored for AFP "
                         f"only (afp_denominator={protocol.afp_denominator!r}): all their boxes are false positives")
    unscored = [k for k in shapes if k not in groups and k not in set(afp_only)]
    if unscored:
        notes.append(f"{len(unscored)} heatmap(s) without a reference box not scored, e.g. {'/'.join(unscored[0])!r}")
    n_afp = {"pairs": None, "box_images": len(box_images), "boxes": len(refs)}[protocol.afp_denominator]
    keys = list(groups)
    pred = _predicted_boxes(maps, files, entry, [k for k in keys + afp_only if k in shapes], protocol, ex)
    empty = np.zeros((0, 4), dtype=np.int64)
    rows, details = [], []
    findings = sorted({k[1] for k in keys})
    t_iou = protocol.T_iou
    for thr in protocol.thresholds:
        det_parts = []
        for f in findings:
            fk = [k for k in keys if k[1] == f]
            P = [pred[thr].get(k, empty) for k in fk]
            G = [coords[groups[k]] for k in fk]
            extra = [pred[thr][k] for k in afp_only if k[1] == f]
            fp_extra = int(sum(len(b) for b in extra))
            denom = len(fk) if n_afp is None else n_afp
            cols = {}
            for rule in protocol.rules:
                sc = score_images(P, G, rule=rule, T_values=protocol.T_values, strict=protocol.strict_T, T_iou=t_iou)
                for ti, T in enumerate(protocol.T_values):
                    fp = int(sc.false_positives[ti].sum()) + fp_extra
                    rows.append({"finding": f, "T": float(T), "threshold": thr, "rule": rule,
                                 "acc": float(sc.acc()[ti]), "afp": fp / max(denom, 1),
                                 "hits": int(sc.hits[ti].sum()), "false_positives": fp,
                                 "n_boxes": int(sc.n_refs.sum()), "n_images": len(fk),
                                 "T_iou": float(protocol.T_iou_values[ti]) if rule != "IoBB" else float(T),
                                 "n_afp": int(denom), "fp_without_box": fp_extra})
                # per detected box: correct for any reference of its image
                n_p = sc.n_preds
                n_r = sc.n_refs
                pair_pred = np.repeat(np.arange(n_p.sum()), np.repeat(n_r, n_p)) if n_p.sum() else np.zeros(0, int)
                for ti, T in enumerate(protocol.T_values):
                    ok = np.zeros(int(n_p.sum()), dtype=bool)
                    np.logical_or.at(ok, pair_pred, sc.correct[ti])
                    cols[_col(rule, T, protocol.strict_T, None if t_iou is None else t_iou[ti])] = ok
            if sum(len(p) for p in P):
                img_idx = np.repeat(np.arange(len(fk)), [len(p) for p in P])
                Pc = np.concatenate(P).astype(float)
                best_iou, best_iobb = _best_overlaps(Pc, img_idx, G)
                det = pd.DataFrame({"image_id": [fk[i][0] for i in img_idx], "finding": f, "threshold": thr,
                                    "box": np.concatenate([np.arange(len(p)) for p in P]),
                                    "x_min": Pc[:, 0].astype(int), "y_min": Pc[:, 1].astype(int),
                                    "x_max": Pc[:, 2].astype(int), "y_max": Pc[:, 3].astype(int),
                                    "iou": best_iou, "iobb": best_iobb, **cols})
                det_parts.append(det)
            if fp_extra:
                xk = [k for k in afp_only if k[1] == f]
                Pc = np.concatenate(extra).astype(int)
                det_parts.append(pd.DataFrame({
                    "image_id": np.repeat([k[0] for k in xk], [len(b) for b in extra]), "finding": f, "threshold": thr,
                    "box": np.concatenate([np.arange(len(b)) for b in extra]), "x_min": Pc[:, 0], "y_min": Pc[:, 1],
                    "x_max": Pc[:, 2], "y_max": Pc[:, 3], "iou": np.nan, "iobb": np.nan,
                    **{c: np.zeros(len(Pc), dtype=bool) for c in cols}}))
        details += det_parts
    summary = pd.DataFrame(rows)
    detail = pd.concat(details, ignore_index=True) if details else pd.DataFrame(
        columns=["image_id", "finding", "threshold", "box", "x_min", "y_min", "x_max", "y_max", "iou", "iobb"])
    return LocalizationResult(summary, detail, protocol, tuple(notes))


def _best_overlaps(Pc: np.ndarray, img_idx: np.ndarray, G: Sequence[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
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
    return (np.maximum.reduceat(iou(Pc[pj], Gc[ri]), starts), np.maximum.reduceat(iobb(Pc[pj], Gc[ri]), starts))


def _predicted_boxes(maps: dict[tuple[str, str], np.ndarray], files: HeatmapFiles | None,
                     entry: dict[tuple[str, str], int], order: list[tuple[str, str]],
                     protocol: LocalizationProtocol, ex: object) -> dict[float, dict[tuple[str, str], np.ndarray]]:
    """Boxes of the maps ``order`` at each threshold: in memory batched by map shape, from files in chunks."""
    pred: dict[float, dict[tuple[str, str], np.ndarray]] = {t: {} for t in protocol.thresholds}
    params = (protocol.image_shape, protocol.upsampling, protocol.thresholds, protocol.strict_threshold,
              protocol.connectivity)
    if files is not None:
        idx = np.array([entry[k] for k in order], dtype=np.int64)
        items = [files.take(idx[b0:b0 + FILE_CHUNK]) for b0 in range(0, idx.size, FILE_CHUNK)]
        func = functools.partial(file_chunk_boxes, params)
        parts = ex.map(func, items) if ex is not None else [func(x) for x in items]  # type: ignore[attr-defined]
        for ti, t in enumerate(protocol.thresholds):
            pred[t] = dict(zip(order, (b for part in parts for b in part[ti])))
        return pred
    by_shape: dict[tuple[int, int], list[tuple[str, str]]] = {}
    for k in order:
        by_shape.setdefault(maps[k].shape, []).append(k)
    for ks in by_shape.values():
        res = heatmaps_to_boxes(np.stack([maps[k] for k in ks]), image_shape=protocol.image_shape,
                                upsampling=protocol.upsampling, thresholds=protocol.thresholds,
                                strict=protocol.strict_threshold, connectivity=protocol.connectivity, executor=ex)
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
        res = heatmaps_to_boxes(np.stack([maps[i] for i in ii]), image_shape=image_shape, upsampling=upsampling,
                                thresholds=thresholds, strict=strict, connectivity=connectivity)
        for ti, per in enumerate(res):
            for i, b in zip(ii, per):
                out[ti][i] = b
    return out


def real_boxes_study(boxes: pd.DataFrame, *, rng: object = 0, model: ErrorModel = ErrorModel(),
                     T_values: Sequence[object] = DEFAULT_T) -> pd.DataFrame:
    """The seed's error model on real reference boxes, scored per finding.

    For every (image, finding) of ``boxes`` (in order of first appearance) a clean and a noisy map are
    made from the coverage of its boxes (their maximum where boxes overlap), with the distractor kept
    away from the first box, drawing from ``rng`` in that order. Localizers: the bilinear pipeline at
    60 and 180 on both maps, the 6 x 6 peak box and the whole image on the noisy map.

    Returns
    -------
    df : pandas.DataFrame
        ``variant, localizer, threshold, finding, rule, T, acc, afp, n_boxes, n_images,
        median_area_fraction`` (median box area over the image area).
    """
    check_columns(boxes, _BOX_COLS, where="the boxes table")
    if len(boxes) == 0:
        raise SchemaError("the boxes table is empty (a header without rows?); the error model needs boxes.")
    gen = normalize_rng(rng)
    img = model.image_size
    coords = check_boxes(boxes[["x_min", "y_min", "x_max", "y_max"]].to_numpy(float), name="reference boxes",
                         image_shape=(img, img), where="the boxes table")
    groups: dict[tuple[str, str], list[int]] = {}
    for i, (im, f) in enumerate(zip(boxes["image_id"], boxes["finding"])):
        groups.setdefault((str(im), str(f)), []).append(i)
    keys = list(groups)
    clean, noisy = [], []
    for k in keys:
        cov = np.max([coverage(coords[i], model) for i in groups[k]], axis=0)
        c, nz, _ = error_model_maps(tuple(coords[groups[k][0]]), gen, model, cover=cov)
        clean.append(c)
        noisy.append(nz)
    stacks = {"noise-free": np.stack(clean), "noisy": np.stack(noisy)}
    preds: dict[tuple[str, str, str], list[np.ndarray]] = {}
    for variant, st in stacks.items():
        b = heatmaps_to_boxes(st, image_shape=(img, img), thresholds=(60.0, 180.0))
        preds[(variant, "heatmap bilinear", "60")] = b[0]
        preds[(variant, "heatmap bilinear", "180")] = b[1]
    pk = heatmap_peaks(stacks["noisy"], (img, img))
    preds[("noisy", "tiny box", "-")] = [np.array([[c - 3, r - 3, c + 3, r + 3]]) for r, c in pk]
    preds[("noisy", "whole image", "-")] = [np.array([[0, 0, img, img]]) for _ in keys]
    area = (coords[:, 2] - coords[:, 0]) * (coords[:, 3] - coords[:, 1]) / (img * img)
    rows = []
    findings = list(dict.fromkeys(k[1] for k in keys))
    for (variant, lname, thr), P in preds.items():
        for f in findings:
            idx = [j for j, k in enumerate(keys) if k[1] == f]
            G = [coords[groups[keys[j]]] for j in idx]
            med = float(np.median(np.concatenate([area[groups[keys[j]]] for j in idx])))
            for rule in ("IoBB", "IoU"):
                sc = score_images([P[j] for j in idx], G, rule=rule, T_values=T_values)
                for ti, T in enumerate(T_values):
                    rows.append({"variant": variant, "localizer": lname, "threshold": thr, "finding": f,
                                 "rule": rule, "T": float(T), "acc": float(sc.acc()[ti]), "afp": float(sc.afp()[ti]),  # type: ignore[arg-type]
                                 "n_boxes": int(sc.n_refs.sum()), "n_images": len(idx),
                                 "median_area_fraction": med})
    return pd.DataFrame(rows)
