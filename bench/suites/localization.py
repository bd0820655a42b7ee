"""Localization: heatmaps to boxes and the ChestX-ray8 synthetic study, beside the paper's reference pipeline.

The reference is the paper's study script run verbatim (``tests/localization/reference_pipeline.py``:
``skimage.transform.resize`` + ``scipy.ndimage.label`` + ``find_objects``, ``fractions.Fraction`` scoring); both
run in the same process, one thread, on the same maps, and their boxes / printed output are compared.
"""

from __future__ import annotations

import importlib.util
import os
import re
import time

from suites._common import ROOT, Context, Figures, Part, Peer

TITLE = "Localization: heatmaps to boxes, Acc / AFP"

__all__ = ["PARTS", "TITLE"]

REFERENCE = ROOT / "tests" / "localization" / "reference_pipeline.py"


def _reference():
    spec = importlib.util.spec_from_file_location("localization_reference_pipeline", REFERENCE)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)  # type: ignore[union-attr]
    return mod


def _peer() -> Peer:
    import scipy
    import skimage

    return Peer(
        "the ChestX-ray14 article's reference script (verbatim)",
        f"scipy {scipy.__version__}, scikit-image {skimage.__version__}",
    )


def _norm(lines):
    return [re.sub(r"\s+", " ", ln).strip() for ln in lines if ln.strip()]


def heatmap_boxes(ctx: Context) -> Figures:
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    import numpy as np

    from cxreval.localization import heatmaps_to_boxes, synthetic_cases

    ref_mod = _reference()
    maps = np.stack([c.noisy for cs in synthetic_cases(ctx.seed, per_size=60).values() for c in cs])
    n = ctx.size(40, len(maps))
    t = time.perf_counter()
    ref = [[ref_mod.ref_boxes_from(m, 1, thr) for m in maps[:n]] for thr in (60, 180)]
    t_ref = time.perf_counter() - t
    t = time.perf_counter()
    got = heatmaps_to_boxes(maps[:n], thresholds=(60.0, 180.0)).boxes
    t_cx = time.perf_counter() - t
    same = all([tuple(b) for b in got[i][k].tolist()] == ref[i][k] for i in range(2) for k in range(n))
    fig = Figures(peer=_peer())
    tab = fig.table(
        f"heatmap -> boxes (bilinear, thresholds 60 and 180, {n} maps 32x32 -> 1024x1024)",
        ["maps", "reference maps/s", "cxreval maps/s", "reference s / cxreval s", "same boxes"],
    )
    tab.add(n, round(n / t_ref, 1), round(n / t_cx, 1), round(t_ref / t_cx, 1), same)
    fig.ratios["reference s / cxreval s"] = t_ref / t_cx
    fig.checked[f"{n} maps | same boxes"] = str(same)
    return fig


def synthetic_study(ctx: Context) -> Figures:
    from cxreval.localization import simulate_localization as study

    ref_mod = _reference()
    per = ctx.size(5, 60)
    t = time.perf_counter()
    ref_lines = ref_mod.reference_study(ctx.seed, per)
    t_ref = time.perf_counter() - t
    t = time.perf_counter()
    cx = study(ctx.seed, per_size=per)
    t_cx = time.perf_counter() - t
    same = _norm(ref_lines) == _norm(list(cx.lines))
    fig = Figures(peer=_peer())
    tab = fig.table(
        f"synthetic study end to end ({per} images per box size)",
        ["images per size", "reference s", "cxreval s", "reference / cxreval", "same printed output"],
    )
    tab.add(per, round(t_ref, 2), round(t_cx, 2), round(t_ref / t_cx, 1), same)
    fig.ratios["reference s / cxreval s"] = t_ref / t_cx
    fig.checked[f"per_size {per} | same output"] = str(same)
    return fig


PARTS = (
    Part(
        "heatmap_boxes",
        "Maps per second of heatmap -> boxes (bilinear upsampling, thresholds 60 and 180) on "
        "40 (quick) / 180 noisy maps, cxreval vs the reference pipeline, boxes compared.",
        heatmap_boxes,
    ),
    Part(
        "synthetic_study",
        "The whole synthetic Acc / AFP study (5 images per size quick, 60 full), cxreval vs "
        "the paper's script, printed outputs compared line by line.",
        synthetic_study,
    ),
)
