"""cxreval's PSNR, SSIM family and VIF against piq/pyiqa values (tests/iqa/data/reference_values.csv).

The CSV is made by bench/iqa_reference_values.py in a separate development venv (never in CI); each row
holds the peer's call and conventions in ``settings``. Here cxreval is run on the same pairs with the
matching option, and compared with a per-row tolerance (relative):

=========================================  ==========  ==================================================
row (metric / library / settings)          tolerance   cxreval call
=========================================  ==========  ==================================================
psnr / piq                                 1e-4        psnr (piq adds 1e-8 to the MSE)
ssim / piq downsample=False                1e-4        ssim
ssim / piq downsample=True                 1e-4        ssim(downsample=True)
ms_ssim / piq                              1e-4        ms_ssim (even sizes: avg_pool2d == MATLAB filter)
vifp / piq                                 1e-4        vifp
iw_ssim / piq                              1e-3        iw_ssim
ssim / pyiqa (8-bit rounding)              1e-3        ssim on round(255 x), data_range=255
cw_ssim / pyiqa (float32 masks)            1e-3        cw_ssim
vif / pyiqa (sp5Filters, Y rounded)        1e-4        vif(round_8bit=True) (pyiqa: round(255 Y))
=========================================  ==========  ==================================================
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from cxreval.iqa import cw_ssim, iw_ssim, ms_ssim, psnr, read_image, ssim, vif, vifp

CSV = Path(__file__).parent / "data" / "reference_values.csv"
PLAN = Path(__file__).parent / "data" / "nih_plan.yaml"

CASES = {
    ("psnr", "piq", ""): (1e-4, lambda x, y: psnr(x, y, data_range=1.0)),
    ("ssim", "piq", "downsample=False"): (1e-4, lambda x, y: ssim(x, y, data_range=1.0)),
    ("ssim", "piq", "downsample=True"): (1e-4, lambda x, y: ssim(x, y, data_range=1.0, downsample=True)),
    ("ms_ssim", "piq", ""): (1e-4, lambda x, y: ms_ssim(x, y, data_range=1.0)),
    ("vifp", "piq", ""): (1e-4, lambda x, y: vifp(x, y, data_range=1.0)),
    ("iw_ssim", "piq", ""): (1e-3, lambda x, y: iw_ssim(x, y, data_range=1.0)),
    ("ssim", "pyiqa", ""): (1e-3, lambda x, y: ssim(np.rint(x * 255), np.rint(y * 255), data_range=255.0)),
    ("cw_ssim", "pyiqa", ""): (1e-3, lambda x, y: cw_ssim(x, y, data_range=1.0)),
    ("vif", "pyiqa", ""): (1e-4, lambda x, y: vif(x, y, data_range=1.0, round_8bit=True)),
}


def _load_pairs(shared: Path, names: set[str], tmp: Path) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    from cxreval.iqa.degrade import degrade_images

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


@pytest.mark.slow
def test_against_reference_values(shared_data, tmp_path):
    if not CSV.is_file():
        pytest.skip("tests/iqa/data/reference_values.csv not generated (bench/iqa_reference_values.py)")
    ref = pd.read_csv(CSV, comment="#")
    rows = []
    for (metric, lib, key), (tol, fn) in CASES.items():
        sel = ref[(ref.metric == metric) & (ref.library == lib) & ref.settings.str.contains(key, regex=False)]
        if metric == "ssim" and lib == "piq" and key == "downsample=False":
            sel = sel[~sel.settings.str.contains("downsample=True")]
        rows += [(metric, lib, key, tol, fn, r.pair, float(r.value)) for r in sel.itertuples()]
    if not rows:
        pytest.skip("no rows for this module's metrics in the reference CSV")
    # a subset keeps the test within seconds: every metric on up to 4 pairs
    by_metric: dict[tuple, list] = {}
    for r in rows:
        by_metric.setdefault(r[:3], []).append(r)
    chosen = [r for v in by_metric.values() for r in v[:4]]
    pairs = _load_pairs(shared_data, {r[5] for r in chosen}, tmp_path)
    worst = {}
    for metric, lib, key, tol, fn, pair, expected in chosen:
        x, y = pairs[pair]
        got = fn(x, y)
        rel = abs(got - expected) / max(abs(expected), 1e-12)
        worst[(metric, lib, key)] = max(worst.get((metric, lib, key), 0.0), rel)
        assert rel <= tol, f"{metric}/{lib} {key} on {pair}: cxreval {got!r} vs {expected!r} (rel {rel:.2e} > {tol})"
