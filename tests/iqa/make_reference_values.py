"""Reference values of IQA metrics from piq and pyiqa, for cxreval's tests (tests/iqa/data/reference_values.csv).

Run ONLY in the development venv that holds the peers (never in CI)::

    python3 -m venv /work/venvs/iqa
    /work/venvs/iqa/bin/pip install torch==2.14.1 torchvision==0.29.1 piq pyrtools sewar
    /work/venvs/iqa/bin/pip install --no-deps pyiqa   # + pyyaml opencv-python-headless requests tqdm huggingface_hub
    OMP_NUM_THREADS=1 /work/venvs/iqa/bin/python tests/iqa/make_reference_values.py

Pairs: the shared 16-bit fixture (../shared/data/iqa_fixture: 2 NIH radiographs x 8 degradations, 512x512)
and NIH radiographs (../shared/data/images/nih, 8-bit, 1024x1024) degraded by tests/iqa/data/nih_plan.yaml
with cxreval.iqa.degrade_images (written as 16-bit PNGs). Every image is read as float64 in [0, 1]
(value / data_range) and passed to the peers as a float64 tensor of shape (1, 1, H, W) (or repeated to 3
channels where a peer requires colour), data_range=1. Columns: metric (cxreval name), pair, library,
value, settings (the peer call and its conventions). The published calibration pairs (TID2013 I01 /
i01_01_5 used by piq's and pyiqa's tests) are not shipped in the wheels and cannot be downloaded here, so
none are included.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import torch  # noqa: E402

torch.set_num_threads(1)
ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "src"))
SHARED = Path(os.environ.get("CXREVAL_DATA_MIRROR", ROOT.parent / "shared" / "data"))
OUT = ROOT / "tests" / "iqa" / "data" / "reference_values.csv"
N_NIH = int(os.environ.get("IQA_REF_N_NIH", "1"))


def _t(a: np.ndarray, ch: int = 1) -> torch.Tensor:
    t = torch.from_numpy(np.ascontiguousarray(a, dtype=np.float64))[None, None]
    return t.repeat(1, ch, 1, 1) if ch > 1 else t


def pairs() -> list[tuple[str, np.ndarray, np.ndarray]]:
    from cxreval.io.images import read_image
    from cxreval.iqa._degrade import degrade_images

    out = []
    fx = SHARED / "iqa_fixture"
    man = json.loads((fx / "manifest.json").read_text())
    for f in man["files"]:
        if f["degradation"] == "reference":
            continue
        ref = read_image(fx / f"{f['image']}__reference.png")
        tst = read_image(fx / f["file"])
        out.append((f"fixture/{f['file']}", ref.image / ref.data_range, tst.image / tst.data_range))
    nih = sorted((SHARED / "images" / "nih").glob("*.png"))[:N_NIH]
    with tempfile.TemporaryDirectory() as tmp:
        res = degrade_images(nih, ROOT / "tests" / "iqa" / "data" / "nih_plan.yaml", tmp)
        for _, r in res.manifest.iterrows():
            ref = read_image(r.reference)
            tst = read_image(r.test)
            out.append((f"nih/{Path(r.test).name}", ref.image / ref.data_range, tst.image / tst.data_range))
    return out


def peers() -> list[tuple[str, str, str, object]]:
    """(cxreval metric, library, settings, callable(x_np, y_np) -> float)."""
    import piq

    def p(fn, ch=1, **kw):
        return lambda x, y: float(fn(_t(y, ch), _t(x, ch), data_range=1.0, **kw))

    rows = [
        ("psnr", "piq", "piq.psnr(data_range=1) float64", p(piq.psnr)),
        ("ssim", "piq", "piq.ssim(downsample=False) float64", p(piq.ssim, downsample=False)),
        (
            "ssim",
            "piq",
            "piq.ssim(downsample=True) float64 [cxreval downsample=True]",
            p(piq.ssim, downsample=True),
        ),
        ("ms_ssim", "piq", "piq.multi_scale_ssim() float64 (avg_pool2d padding)", p(piq.multi_scale_ssim)),
        ("iw_ssim", "piq", "piq.information_weighted_ssim() float64", p(piq.information_weighted_ssim)),
        ("vifp", "piq", "piq.vif_p(sigma_n_sq=2) float64", p(piq.vif_p)),
        ("gmsd", "piq", "piq.gmsd() float64 (grey: no colour conversion)", p(piq.gmsd)),
        ("haarpsi", "piq", "piq.haarpsi(scales=3, subsample=True, c=30, alpha=4.2) float64", p(piq.haarpsi)),
        ("haarpsi_med", "piq", "piq.haarpsi(c=5, alpha=4.9) float64", p(piq.haarpsi, c=5.0, alpha=4.9)),
        ("mdsi", "piq", "piq.mdsi() float64 grey repeated to 3 channels", p(piq.mdsi, ch=3)),
        ("fsim", "piq", "piq.fsim(chromatic=False) float64", p(piq.fsim, chromatic=False)),
        ("vsi", "piq", "piq.vsi() float64 grey repeated to 3 channels", p(piq.vsi, ch=3)),
        ("dss", "piq", "piq.dss() float64", p(piq.dss)),
    ]
    try:
        import pyiqa
    except Exception as exc:  # pragma: no cover - depends on the venv
        print("pyiqa unavailable:", exc)
        return rows
    cache: dict[str, object] = {}

    def q(name, ch=1, **kw):
        def f(x, y):
            key = name + json.dumps(kw, sort_keys=True)
            if key not in cache:
                cache[key] = pyiqa.create_metric(name, device="cpu", as_loss=False, **kw)
            m = cache[key]
            with torch.no_grad():
                if m.metric_mode == "NR":
                    return float(m(_t(y, ch).float()))
                return float(m(_t(y, ch).float(), _t(x, ch).float()))

        return f

    rows += [
        ("psnr", "pyiqa", "pyiqa psnr, 1 channel, float32", q("psnr", test_y_channel=False)),
        (
            "ssim",
            "pyiqa",
            "pyiqa ssim, 1 channel: x*255 rounded to integers, relu(cs), data_range 255",
            q("ssim", test_y_channel=False),
        ),
        (
            "ms_ssim",
            "pyiqa",
            "pyiqa ms_ssim, 1 channel: x*255 rounded, avg_pool2d",
            q("ms_ssim", test_y_channel=False),
        ),
        (
            "cw_ssim",
            "pyiqa",
            "pyiqa cw_ssim(level=4, ori=8), 1 channel, float32 masks",
            q("cw_ssim", test_y_channel=False),
        ),
        (
            "vif",
            "pyiqa",
            "pyiqa vif (sp5Filters spatial steerable pyramid), grey as 3 channels -> Y (x*255)",
            q("vif", ch=3),
        ),
        ("gmsd", "pyiqa", "pyiqa gmsd, grey as 3 channels -> Y (x*255, rounded)", q("gmsd", ch=3)),
        (
            "fsim",
            "pyiqa",
            "pyiqa fsim(chromatic=False), grey as 3 channels",
            q("fsim", ch=3, chromatic=False),
        ),
        ("vsi", "pyiqa", "pyiqa vsi, grey as 3 channels", q("vsi", ch=3)),
        ("piqe", "pyiqa", "pyiqa piqe, grey as 3 channels -> Y (x*255, rounded)", q("piqe", ch=3)),
    ]
    return rows


def main() -> None:
    prs = pairs()
    rows = []
    for metric, lib, settings, fn in peers():
        t0 = time.perf_counter()
        n_ok = 0
        for name, x, y in prs:
            try:
                v = fn(x, y)
            except Exception as exc:  # record why a peer cannot compute
                print(f"{metric}/{lib} failed on {name}: {type(exc).__name__}: {exc}"[:300])
                break
            rows.append(
                {
                    "metric": metric,
                    "pair": name,
                    "library": lib,
                    "value": repr(float(v)),
                    "settings": settings,
                }
            )
            n_ok += 1
        print(f"{metric:<12} {lib:<6} {n_ok} pairs {time.perf_counter() - t0:7.1f}s  {settings}", flush=True)
    import piq

    pyiqa_version = ""
    try:
        import pyiqa

        pyiqa_version = pyiqa.__version__
    except Exception:
        pass
    df = pd.DataFrame(rows, columns=["metric", "pair", "library", "value", "settings"])
    header = (
        f"# made by tests/iqa/make_reference_values.py with torch {torch.__version__}, piq {piq.__version__}, "
        f"pyiqa {pyiqa_version}; OMP_NUM_THREADS=1; images as float64 in [0,1]\n"
    )
    with open(OUT, "w") as fh:
        fh.write(header)
        df.to_csv(fh, index=False)
    print(f"wrote {len(df)} rows to {OUT}")


if __name__ == "__main__":
    main()
