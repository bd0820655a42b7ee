"""One finding's scores at one threshold: its rows of ``localization.csv`` (a row per rule and T) and its
detected boxes for ``boxes.csv`` (best IoU and IoBB over the references, correct or not per rule and T)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, SupportsFloat

import numpy as np

from ..schema import FINDING, STUDY_ID
from ..schema._boxes import threshold_label
from ._boxes import iobb, iou
from ._protocol import LocalizationProtocol, score_images

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["score_finding", "not_scored_rows"]


def _col(rule: str, T: SupportsFloat, strict: bool, T_iou: SupportsFloat | None = None) -> str:
    op = ">" if strict else ">="
    if T_iou is None or rule == "IoBB" or float(T_iou) == float(T):
        t = float(T) if rule != "IoU" or T_iou is None else float(T_iou)
        return f"{rule}{op}{t:g}"
    if rule == "IoU":
        return f"IoU{op}{float(T_iou):g}"
    return f"IoU{op}{float(T_iou):g} or IoBB{op}{float(T):g}"


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


def not_scored_rows(
    case: Mapping[str, object],
    thr: float,
    f: str,
    n_box: int,
    n_images: int,
    median_area: float,
    protocol: LocalizationProtocol,
) -> list[dict[str, object]]:
    """The rows of a finding without any map: Acc. and AFP NaN (N/A, never 0), a row per rule and T."""
    return [
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
            "n_images": n_images,
            "n_afp": 0,
            "fp_without_box": 0,
            "median_area_fraction": median_area,
        }
        for rule in protocol.rules
        for ti, T in enumerate(protocol.T_values)
    ]


def score_finding(
    case: Mapping[str, object],
    thr: float,
    f: str,
    fk: list[tuple[str, str]],
    pred: Mapping[tuple[str, str], np.ndarray],
    G: list[np.ndarray],
    xk: list[tuple[str, str]],
    n_afp: int | None,
    median_area: float,
    protocol: LocalizationProtocol,
) -> tuple[list[dict[str, object]], list[pd.DataFrame]]:
    """The rows of finding ``f`` at threshold ``thr`` (a row per rule and T) and its detected boxes.

    ``fk``: its ``(image, finding)`` pairs with reference boxes ``G``; ``pred``: the boxes of each map at
    ``thr``; ``xk``: its maps scored for AFP only (every box a false positive); ``n_afp``: the AFP
    denominator, None for the number of pairs.
    """
    empty = np.zeros((0, 4), dtype=np.int64)
    P = [pred.get(k, empty) for k in fk]
    extra = [pred[k] for k in xk]
    fp_extra = int(sum(len(b) for b in extra))
    denom = len(fk) if n_afp is None else n_afp
    rows, cols = _rule_rows(case, thr, f, P, G, fp_extra, denom, median_area, protocol)
    det_parts = []
    if sum(len(p) for p in P):
        det_parts.append(_detected_boxes(thr, f, fk, P, G, cols))
    if fp_extra:
        det_parts.append(_afp_only_boxes(thr, f, xk, extra, cols))
    return rows, det_parts


def _rule_rows(
    case: Mapping[str, object],
    thr: float,
    f: str,
    P: list[np.ndarray],
    G: list[np.ndarray],
    fp_extra: int,
    denom: int,
    median_area: float,
    protocol: LocalizationProtocol,
) -> tuple[list[dict[str, object]], dict[str, np.ndarray]]:
    """A row per rule and T, and per rule and T whether each detected box is correct (a column of
    ``boxes.csv``: correct for any reference of its image)."""
    t_iou = protocol.T_iou
    rows: list[dict[str, object]] = []
    cols = {}
    for rule in protocol.rules:
        sc = score_images(P, G, rule=rule, T_values=protocol.T_values, strict=protocol.strict_T, T_iou=t_iou)
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
                    "n_images": len(P),
                    "n_afp": int(denom),
                    "fp_without_box": fp_extra,
                    "median_area_fraction": median_area,
                }
            )
        # per detected box: correct for any reference of its image
        n_p = sc.n_preds
        n_r = sc.n_refs
        pair_pred = np.repeat(np.arange(n_p.sum()), np.repeat(n_r, n_p)) if n_p.sum() else np.zeros(0, int)
        for ti, T in enumerate(protocol.T_values):
            ok = np.zeros(int(n_p.sum()), dtype=bool)
            np.logical_or.at(ok, pair_pred, sc.correct[ti])
            cols[_col(rule, T, protocol.strict_T, None if t_iou is None else t_iou[ti])] = ok
    return rows, cols


def _detected_boxes(
    thr: float,
    f: str,
    fk: list[tuple[str, str]],
    P: list[np.ndarray],
    G: list[np.ndarray],
    cols: Mapping[str, np.ndarray],
) -> pd.DataFrame:
    """The detected boxes of ``f``'s maps with their best overlaps and correctness."""
    import pandas as pd

    img_idx = np.repeat(np.arange(len(fk)), [len(p) for p in P])
    Pc = np.concatenate(P).astype(float)
    best_iou, best_iobb = _best_overlaps(Pc, img_idx, G)
    return pd.DataFrame(
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


def _afp_only_boxes(
    thr: float,
    f: str,
    xk: list[tuple[str, str]],
    extra: list[np.ndarray],
    cols: Mapping[str, np.ndarray],
) -> pd.DataFrame:
    """The boxes of ``f``'s maps scored for AFP only: no overlap, never correct."""
    import pandas as pd

    Pc = np.concatenate(extra).astype(int)
    return pd.DataFrame(
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
