"""IW-SSIM and GMSD before/after issue 15 (items 9-10) on the bench pair of bench/iqa.py.

NIH 00000075_000.png vs the same image with Gaussian noise (sigma 8, ``default_rng(0)``), 0..255 float64.
Prints cxreval's value under the new default and the old convention, their ratio and the ratio the
normalisation predicts: IW-SSIM ``old ** (1 / sum(MS_WEIGHTS))``, GMSD ``sqrt(N / (N - 1))`` with ``N`` the pixels
of the 2x-downsampled GMS map. No peer is needed (the piq values are in bench/RESULTS.md, "## IQA")::

    .venv/bin/python bench/iqa_issue15_defaults.py
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
from PIL import Image

from cxreval.iqa import gmsd, iw_ssim
from cxreval.iqa.structural_similarity import MS_WEIGHTS

NIH = Path(__file__).resolve().parents[2] / "shared" / "data" / "images" / "nih" / "00000075_000.png"


def main() -> None:
    ref = np.asarray(Image.open(NIH).convert("L"), dtype=np.float64)
    dist = np.clip(ref + np.random.default_rng(0).normal(0, 8, ref.shape), 0, 255)
    n = (ref.shape[0] // 2) * (ref.shape[1] // 2)
    rows = [
        ("iw_ssim", iw_ssim(ref, dist, data_range=255), iw_ssim(ref, dist, data_range=255, normalize_weights=False),
         "normalize_weights=False"),
        ("gmsd", gmsd(ref, dist, data_range=255), gmsd(ref, dist, data_range=255, std="population"),
         "std='population'"),
    ]
    print("| metric | new default | old convention (option) | new - old | predicted new |")
    print("|---|---|---|---|---|")
    for name, new, old, opt in rows:
        pred = old ** (1 / sum(MS_WEIGHTS)) if name == "iw_ssim" else old * math.sqrt(n / (n - 1))
        print(f"| {name} | {new:.12f} | {old:.12f} ({opt}) | {new - old:+.3e} | {pred:.12f} |")


if __name__ == "__main__":
    main()
