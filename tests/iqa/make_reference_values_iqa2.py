"""Reference values of the IQA-2 metrics (GMSD, MDSI, HaarPSI, HaarPSImed, FSIM, VSI, DSS, PIQE, NIQE) from
piq 0.8.0 and pyiqa 0.1.16, written to tests/iqa/data/reference_values_iqa2.csv.

Run in the development venv that has torch, piq and pyiqa (never in CI)::

    /work/venvs/iqa/bin/python tests/iqa/make_reference_values_iqa2.py

Pairs: two synthetic 512x512 pairs the tests regenerate bit-for-bit (:func:`synthetic_pairs`), and a real
NIH radiograph (../shared/data/images/nih/00000075_000.png, 1024x1024, 8-bit) degraded by Gaussian blur,
Gaussian noise and gamma. Images are passed to the peers as float64 tensors (no 8-bit rounding), the
reference image as piq's ``y`` (target) and the test image as ``x``; one thread. ``settings`` holds the
cxreval options that reproduce the peer's convention (JSON).
"""

from __future__ import annotations

import csv
import json
import sys
from pathlib import Path

import numpy as np
from scipy import ndimage

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "tests" / "iqa" / "data" / "reference_values_iqa2.csv"
NIH = ROOT.parent / "shared" / "data" / "images" / "nih" / "00000075_000.png"


def synthetic_pairs() -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Deterministic 512x512 pairs on the 0..255 scale (float64)."""
    rng = np.random.default_rng(0)
    base = ndimage.gaussian_filter(rng.normal(size=(512, 512)), 6.0)
    yy, xx = np.mgrid[0:512, 0:512] / 512.0
    ref = 60.0 + 120.0 * (base - base.min()) / (base.max() - base.min()) + 40.0 * xx * yy
    noise = np.clip(ref + np.random.default_rng(1).normal(0.0, 6.0, ref.shape), 0.0, 255.0)
    return {"synthetic512_blur": (ref, ndimage.gaussian_filter(ref, 1.2)), "synthetic512_noise": (ref, noise)}


def nih_pairs() -> dict[str, tuple[np.ndarray, np.ndarray]]:
    from PIL import Image

    ref = np.asarray(Image.open(NIH).convert("L"), dtype=np.float64)
    rng = np.random.default_rng(0)
    return {
        "nih0075_blur": (ref, ndimage.gaussian_filter(ref, 1.5)),
        "nih0075_noise": (ref, np.clip(ref + rng.normal(0.0, 8.0, ref.shape), 0.0, 255.0)),
        "nih0075_gamma": (ref, 255.0 * (ref / 255.0) ** 0.7),
    }


def niqe_test_model() -> tuple[np.ndarray, np.ndarray]:
    """A made-up (not the published) NIQE model, identical in the tests: mu (36,), SPD cov (36, 36)."""
    rng = np.random.default_rng(0)
    mu = rng.normal(size=36)
    a = rng.normal(size=(36, 36))
    return mu, a @ a.T / 36.0 + np.eye(36)


def main() -> None:
    import piq
    import torch
    from pyiqa.archs import niqe_arch
    from pyiqa.archs.piqe_arch import piqe as pyiqa_piqe

    torch.set_num_threads(1)
    eps = float(np.finfo(np.float64).eps)

    def t(a: np.ndarray) -> torch.Tensor:
        return torch.from_numpy(a)[None, None]

    fr = {
        "gmsd": (lambda r, d: piq.gmsd(t(d), t(r), data_range=255.0), {"std": "population"}),
        "mdsi": (lambda r, d: piq.mdsi(t(d), t(r), data_range=255.0), {}),
        "haarpsi": (lambda r, d: piq.haarpsi(t(d), t(r), data_range=255.0), {}),
        "haarpsi_med": (lambda r, d: piq.haarpsi(t(d), t(r), data_range=255.0, c=5.0, alpha=4.9), {}),
        "fsim": (
            lambda r, d: piq.fsim(t(d), t(r), data_range=255.0, chromatic=False),
            {"downsample": "pool", "median": "lower", "epsilon": eps},
        ),
        "vsi": (lambda r, d: piq.vsi(t(d), t(r), data_range=255.0), {"downsample": "piq"}),
        "dss": (lambda r, d: piq.dss(t(d), t(r), data_range=255.0), {}),
    }
    pairs = synthetic_pairs()
    if NIH.is_file():
        pairs.update(nih_pairs())
    else:
        print(f"warning: {NIH} not found; only synthetic pairs", file=sys.stderr)
    mu, cov = niqe_test_model()
    rows = []
    for pair, (ref, dist) in pairs.items():
        for metric, (fn, settings) in fr.items():
            rows.append((metric, pair, "piq-0.8.0", float(fn(ref, dist)), json.dumps(settings)))
        for which, img in (("ref", ref), ("test", dist)):
            value = float(pyiqa_piqe(torch.from_numpy(img / 255.0)[None, None])[0][0])
            rows.append(
                (
                    "piqe",
                    f"{pair}:{which}",
                    "pyiqa-0.1.16",
                    value,
                    json.dumps({"normalize": "max", "round_8bit": True}),
                )
            )
            value = float(
                niqe_arch.niqe(
                    torch.round(torch.from_numpy(img))[None, None],
                    torch.from_numpy(mu)[None],
                    torch.from_numpy(cov)[None],
                )
            )
            rows.append(
                (
                    "niqe",
                    f"{pair}:{which}",
                    "pyiqa-0.1.16",
                    value,
                    json.dumps({"round_8bit": True, "model": "niqe_test_model"}),
                )
            )
    OUT.parent.mkdir(parents=True, exist_ok=True)
    with open(OUT, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["metric", "pair", "library", "value", "settings"])
        for r in rows:
            w.writerow([r[0], r[1], r[2], repr(r[3]), r[4]])
    print(f"wrote {len(rows)} rows to {OUT}")


if __name__ == "__main__":
    main()
