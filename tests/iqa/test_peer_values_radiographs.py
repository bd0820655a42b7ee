"""cxreval's metrics against piq, pyiqa and sewar values on radiographs (tests/iqa/data/reference_values.csv).

The CSV is made in a separate development venv (never in CI) by tests/iqa/make_reference_values.py (piq, pyiqa)
and tests/iqa/make_reference_values_sewar.py (sewar; AMBE by its definition); each row holds the peer's call
and conventions in ``settings``. Pairs: the shared 16-bit fixture (2 NIH radiographs x 8 degradations,
512x512) and an NIH radiograph degraded by tests/iqa/data/nih_plan.yaml (1024x1024), images as float64 in
[0, 1]. Here cxreval runs on the same pairs with the option that reproduces the peer's convention
(:data:`CASES`: tolerance, call, why) and every difference must be within the stated relative tolerance.
`python bench/run.py iqa:reference_values` runs all rows (the validation table of bench/RESULTS.md); this test runs
a subset (first pairs of each row group) to stay within seconds.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from cxreval.io.images import read_image
from cxreval.iqa import ms_ssim, psnr, ssim
from cxreval.iqa._dct_subband_similarity import dss
from cxreval.iqa._feature_similarity import fsim
from cxreval.iqa._full_reference import ambe, rmse, uqi
from cxreval.iqa._gradient import gmsd, mdsi
from cxreval.iqa._haar_wavelet_similarity import haarpsi, haarpsi_med
from cxreval.iqa._no_reference import piqe
from cxreval.iqa._structural_similarity import cw_ssim, iw_ssim
from cxreval.iqa._visual_information import vif, vifp
from cxreval.iqa._visual_saliency_similarity import vsi

CSV = Path(__file__).parent / "data" / "reference_values.csv"
PLAN = Path(__file__).parent / "data" / "nih_plan.yaml"
EPS = float(np.finfo(np.float64).eps)


def _r8(f, **kw):
    """pyiqa's 8-bit convention: ``round(255 x)`` on the 0..255 scale."""
    return lambda x, y: f(np.rint(x * 255), np.rint(y * 255), data_range=255.0, **kw)


# (metric, library, substring of settings) -> (relative tolerance, cxreval call, why; optional pair prefix:
# only those pairs are comparable)
CASES = {
    ("psnr", "piq", ""): (
        1e-4,
        lambda x, y: psnr(x, y, data_range=1.0),
        "piq adds 1e-8 to the MSE (2e-5 relative at 40-50 dB)",
    ),
    ("psnr", "pyiqa", ""): (1e-4, lambda x, y: psnr(x, y, data_range=1.0), "pyiqa adds 1e-8 to the MSE too"),
    ("psnr", "sewar", ""): (1e-9, lambda x, y: psnr(x, y, data_range=1.0), "float64, same formula"),
    ("rmse", "sewar", ""): (1e-9, lambda x, y: rmse(x, y, data_range=1.0), "float64, same formula"),
    ("ambe", "definition", ""): (1e-9, lambda x, y: ambe(x, y, data_range=1.0), "float64, same formula"),
    ("uqi", "sewar", ""): (
        1e-4,
        lambda x, y: uqi(x, y, data_range=1.0),
        "UQI = sewar's SSIM with C1 = C2 = 1e-14 (not 0), 8x8 uniform window",
    ),
    ("ssim", "piq", "downsample=False"): (1e-6, lambda x, y: ssim(x, y, data_range=1.0), "float64"),
    ("ssim", "piq", "downsample=True"): (
        1e-6,
        lambda x, y: ssim(x, y, data_range=1.0, downsample=True),
        "ssim.m's downsampling (option), = piq's avg_pool2d for f = 2: 512-px "
        "pairs only (at f = 4 the block alignment differs)",
        "fixture/",
    ),
    ("ssim", "pyiqa", ""): (1e-4, _r8(ssim), "pyiqa rounds to 8 bits (reproduced) and works in float32"),
    ("ms_ssim", "piq", ""): (
        1e-6,
        lambda x, y: ms_ssim(x, y, data_range=1.0),
        "float64 (even sizes: avg_pool2d == MATLAB's 2x2 filter)",
    ),
    ("ms_ssim", "pyiqa", ""): (
        1e-4,
        _r8(ms_ssim),
        "pyiqa rounds to 8 bits (reproduced) and works in float32",
    ),
    ("iw_ssim", "piq", ""): (
        1e-4,
        lambda x, y: iw_ssim(x, y, data_range=1.0),
        "float64; piq's Laplacian pyramid pads differently at odd sizes",
    ),
    ("cw_ssim", "pyiqa", ""): (1e-4, lambda x, y: cw_ssim(x, y, data_range=1.0), "pyiqa's float32 masks"),
    ("vif", "pyiqa", ""): (1e-4, _r8(vif), "sp5 pyramid; pyiqa rounds Y to 8 bits (reproduced), float32"),
    ("vifp", "piq", ""): (1e-6, lambda x, y: vifp(x, y, data_range=1.0), "float64"),
    ("vifp", "sewar", ""): (1e-6, lambda x, y: vifp(x, y, data_range=1.0), "float64"),
    ("gmsd", "piq", ""): (
        1e-6,
        lambda x, y: gmsd(x, y, data_range=1.0, std="population"),
        "float64, piq's population std (default: MATLAB std2, N - 1)",
    ),
    ("gmsd", "pyiqa", ""): (1e-4, _r8(gmsd), "pyiqa rounds Y to 8 bits (reproduced), float32"),
    ("haarpsi", "piq", ""): (1e-6, lambda x, y: haarpsi(x, y, data_range=1.0), "float64"),
    ("haarpsi_med", "piq", ""): (1e-6, lambda x, y: haarpsi_med(x, y, data_range=1.0), "float64"),
    ("mdsi", "piq", ""): (1e-6, lambda x, y: mdsi(x, y, data_range=1.0), "float64, grey replicated"),
    ("fsim", "piq", ""): (
        1e-5,
        lambda x, y: fsim(x, y, data_range=1.0, downsample="pool", median="lower", epsilon=EPS),
        "float64, piq's pooling/median/epsilon",
    ),
    ("fsim", "pyiqa", ""): (
        1e-4,
        lambda x, y: fsim(x, y, data_range=1.0, downsample="pool", median="lower", epsilon=EPS),
        "pyiqa (piq's port) in float32",
    ),
    ("vsi", "piq", ""): (
        1e-6,
        lambda x, y: vsi(x, y, data_range=1.0, downsample="piq"),
        "float64, piq's downsampling",
    ),
    ("vsi", "pyiqa", ""): (
        1e-4,
        lambda x, y: vsi(x, y, data_range=1.0, downsample="piq"),
        "pyiqa (piq's port) in float32",
    ),
    ("dss", "piq", ""): (1e-6, lambda x, y: dss(x, y, data_range=1.0), "piq keeps subband scores in float32"),
    ("piqe", "pyiqa", "float64"): (
        1e-3,
        lambda x, y: piqe(y, data_range=1.0, normalize="max", round_8bit=True),
        "pyiqa's max-normalisation and 8-bit rounding reproduced (options); 22 of 24 "
        "pairs within 1.5e-5, 2 pairs 8e-4: PIQE thresholds block statistics, and "
        "rounding-level MSCN differences flip single blocks",
    ),
    ("piqe", "pyiqa", "grey as 3"): (
        1e-2,
        lambda x, y: piqe(y, data_range=1.0, normalize="max", round_8bit=True),
        "pyiqa's wrapper computes in float32 and PIQE thresholds block "
        "statistics, so more single blocks flip",
    ),
}


def reference_rows() -> list[tuple]:
    """``(metric, library, key, tol, fn, pair, expected)`` for every CSV row covered by :data:`CASES`."""
    ref = pd.read_csv(CSV, comment="#")
    rows = []
    for (metric, lib, key), case in CASES.items():
        tol, fn, only = case[0], case[1], case[3] if len(case) > 3 else ""
        sel = ref[
            (ref.metric == metric)
            & (ref.library == lib)
            & ref.settings.str.contains(key, regex=False)
            & ref.pair.str.startswith(only)
        ]
        if metric == "ssim" and lib == "piq" and key == "downsample=False":
            sel = sel[~sel.settings.str.contains("downsample=True")]
        rows += [(metric, lib, key, tol, fn, r.pair, float(r.value)) for r in sel.itertuples()]
    return rows


def load_pairs(shared: Path, names: set[str], tmp: Path) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """The named pairs as float64 images in [0, 1] (NIH pairs are re-made with cxreval.iqa.degrade_images)."""
    from cxreval.iqa._degrade import degrade_images

    out = {}
    fx = shared / "iqa_fixture"
    for n in names:
        if n.startswith("fixture/"):
            f = n.split("/", 1)[1]
            ref = read_image(fx / (f.split("__")[0] + "__reference.png"))
            tst = read_image(fx / f)
            out[n] = (ref.image / ref.data_range, tst.image / tst.data_range)
    nih_names = {n.split("/", 1)[1] for n in names if n.startswith("nih/")}
    stems = sorted({n.split("__")[0] for n in nih_names})
    if stems:
        res = degrade_images([shared / "images" / "nih" / f"{s}.png" for s in stems], PLAN, tmp)
        for _, r in res.manifest.iterrows():
            key = f"nih/{Path(r.test).name}"
            if key in names:
                ref, tst = read_image(r.reference), read_image(r.test)
                out[key] = (ref.image / ref.data_range, tst.image / tst.data_range)
    return out


def test_every_case_has_rows():
    if not CSV.is_file():
        pytest.skip("tests/iqa/data/reference_values.csv not generated (tests/iqa/make_reference_values.py)")
    counts: dict[tuple, int] = {}
    for r in reference_rows():
        counts[r[:3]] = counts.get(r[:3], 0) + 1
    assert set(counts) == set(CASES), set(CASES) - set(counts)
    assert min(counts.values()) >= 16
    fr = {k[0] for k in CASES if k[0] != "piqe"}
    assert len(fr) >= 17


@pytest.mark.slow
def test_against_reference_values(shared_data, tmp_path):
    if not CSV.is_file():
        pytest.skip("tests/iqa/data/reference_values.csv not generated (tests/iqa/make_reference_values.py)")
    rows = reference_rows()
    # a subset keeps the test within seconds: every row group on its first 2 (fixture, 512x512) pairs
    by_case: dict[tuple, list] = {}
    for r in rows:
        by_case.setdefault(r[:3], []).append(r)
    chosen = [r for v in by_case.values() for r in v[:2]]
    pairs = load_pairs(shared_data, {r[5] for r in chosen}, tmp_path)
    for metric, lib, key, tol, fn, pair, expected in chosen:
        x, y = pairs[pair]
        got = fn(x, y)
        rel = abs(got - expected) / max(abs(expected), 1e-12)
        assert rel <= tol, (
            f"{metric}/{lib} {key} on {pair}: cxreval {got!r} vs {expected!r} (rel {rel:.2e} > {tol})"
        )
