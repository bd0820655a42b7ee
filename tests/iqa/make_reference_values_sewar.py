"""Extra reference values appended to tests/iqa/data/reference_values.csv: the ``sewar`` package (an
independent numpy/scipy implementation) for RMSE, UQI, PSNR and VIFp, AMBE by its definition, and pyiqa's
PIQE run in float64.

Run in the development venv, after tests/iqa/make_reference_values.py (which rewrites the CSV)::

    /work/venvs/iqa/bin/pip install sewar
    OMP_NUM_THREADS=1 /work/venvs/iqa/bin/python tests/iqa/make_reference_values_sewar.py

Same pairs as tests/iqa/make_reference_values.py (images as float64 in [0, 1]). The rows made here (marked
``[extra]`` in ``settings``) replace any earlier ones:

* rmse: ``sewar.full_ref.rmse(GT, P)`` on [0, 1] images (= cxreval's normalised RMSE).
* uqi: ``sewar.full_ref.ssim(GT, P, ws=8, K1=1e-7, K2=1e-7, MAX=1, fltr_specs=uniform 8x8, mode='valid')``.
  The universal quality index is SSIM without its stabilising constants over an 8x8 uniform window (Wang &
  Bovik 2002, Wang et al. 2004). The constants (C = 1e-14) must vanish against real local variances of
  16-bit images yet dominate the rounding noise (~1e-19) that sewar's ``E[x^2] - E[x]^2`` leaves in
  windows where both images are constant (where img_qi.m defines Q = 2 m_x m_y / (m_x^2 + m_y^2)); with
  C = 1e-18 such windows give values above 1. sewar's own ``uqi`` is not used: it puts window *means*
  where the formula has window *sums* (``uniform_filter`` instead of a box sum) and crops the map, so it
  does not compute Wang & Bovik's index (0.988 instead of 0.789 on a test pair where img_qi.m's
  definition, checked by brute force in tests/iqa/test_iqa_metrics.py, gives 0.789).
* psnr: ``sewar.full_ref.psnr(GT, P, MAX=1)``.
* vifp: ``sewar.full_ref.vifp(255 GT, 255 P, sigma_nsq=2)`` (a port of vifp_mscale.m; 0..255 units).
* ambe: ``|mean(GT) - mean(P)|`` in float64 (library ``definition``: no peer implements AMBE).
* piqe: ``pyiqa.archs.piqe_arch.piqe`` on the test image as a float64 one-channel tensor (it normalises by
  the maximum and rounds to 8 bits itself); tests/iqa/make_reference_values.py's rows run pyiqa's metric
  wrapper, which computes in float32.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(Path(__file__).resolve().parent))
OUT = ROOT / "tests" / "iqa" / "data" / "reference_values.csv"
MARK = "# rows marked [extra] appended by tests/iqa/make_reference_values_sewar.py"


def main() -> None:
    import importlib.metadata as md

    import torch
    from make_reference_values import pairs
    from pyiqa.archs.piqe_arch import piqe
    from sewar.full_ref import psnr, rmse, ssim, vifp
    from sewar.utils import Filter

    torch.set_num_threads(1)
    uniform8 = {"fltr": Filter.UNIFORM, "ws": 8}
    peers = [
        ("rmse", "sewar", "sewar.full_ref.rmse, [0,1] float64", lambda x, y: rmse(x, y)),
        (
            "uqi",
            "sewar",
            "sewar.full_ref.ssim(ws=8, uniform, K1=K2=1e-7, MAX=1, valid) = UQI",
            lambda x, y: ssim(x, y, ws=8, K1=1e-7, K2=1e-7, MAX=1.0, fltr_specs=uniform8, mode="valid")[0],
        ),
        ("psnr", "sewar", "sewar.full_ref.psnr(MAX=1) float64", lambda x, y: psnr(x, y, MAX=1.0)),
        (
            "vifp",
            "sewar",
            "sewar.full_ref.vifp(255x, 255y, sigma_nsq=2)",
            lambda x, y: vifp(255.0 * x, 255.0 * y, sigma_nsq=2),
        ),
        (
            "ambe",
            "definition",
            "abs(mean(x) - mean(y)) float64",
            lambda x, y: abs(float(np.mean(x)) - float(np.mean(y))),
        ),
        (
            "piqe",
            "pyiqa",
            "pyiqa.archs.piqe_arch.piqe, float64, 1 channel (max-normalised, rounded)",
            lambda x, y: float(piqe(torch.from_numpy(np.ascontiguousarray(y))[None, None])[0][0]),
        ),
    ]
    prs = pairs()
    rows = []
    for metric, lib, settings, fn in peers:
        for name, x, y in prs:
            rows.append(
                {
                    "metric": metric,
                    "pair": name,
                    "library": lib,
                    "value": repr(float(fn(x, y))),
                    "settings": f"{settings} [extra]",
                }
            )
        print(metric, lib, len(prs), "pairs", flush=True)
    lines = OUT.read_text().splitlines(keepends=True)
    header = [
        ln for ln in lines if ln.startswith("#") and "tests/iqa/make_reference_values_sewar.py" not in ln
    ]
    old = pd.read_csv(OUT, comment="#", dtype={"value": str})
    old = old[~old.settings.str.endswith("[extra]")]
    df = pd.concat([old, pd.DataFrame(rows)], ignore_index=True)
    with open(OUT, "w") as fh:
        fh.writelines(header)
        fh.write(f"{MARK} (sewar {md.version('sewar')})\n")
        df.to_csv(fh, index=False)
    print(f"wrote {len(df)} rows to {OUT} ({len(rows)} extra)")


if __name__ == "__main__":
    main()
