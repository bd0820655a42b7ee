"""IQA benchmark: time per 1024x1024 greyscale pair, cxreval vs piq and pyiqa, one thread each, same run,
with the values side by side. Writes the section "## IQA" of bench/RESULTS.md.

Run in the development venv (torch, piq, pyiqa, cxreval editable)::

    /work/venvs/iqa/bin/python bench/iqa.py [--repeats 3]

The pair is a real NIH radiograph (../shared/data/images/nih/00000075_000.png, 8-bit) and the same image
with Gaussian noise (sigma 8). Peers get float64 tensors (piq) or float32 in [0, 1] (pyiqa, its native
input); grey images are given as one channel where the peer accepts it, else repeated to three. A peer
that fails on an input is reported as n/a. Times are the median of ``--repeats`` calls after one warm-up.
"""

from __future__ import annotations

import os

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_v] = "1"

import argparse  # noqa: E402
import math  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
NIH = ROOT.parent / "shared" / "data" / "images" / "nih" / "00000075_000.png"
RESULTS = ROOT / "bench" / "RESULTS.md"


def _timeit(fn, repeats: int) -> tuple[float, float]:
    value = float(fn())
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), value


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()

    import piq
    import torch
    from PIL import Image

    from cxreval.iqa import get_metric

    torch.set_num_threads(1)
    ref = np.asarray(Image.open(NIH).convert("L"), dtype=np.float64)
    dist = np.clip(ref + np.random.default_rng(0).normal(0, 8, ref.shape), 0, 255)
    t64 = {k: torch.from_numpy(v)[None, None] for k, v in (("r", ref), ("d", dist))}
    t32 = {k: torch.from_numpy((v / 255.0).astype(np.float32))[None, None] for k, v in (("r", ref), ("d", dist))}

    def pyiqa_fr(cls_path: str, **kw):
        import importlib

        mod, cls = cls_path.rsplit(".", 1)
        net = getattr(importlib.import_module(mod), cls)(**kw)

        def run():
            with torch.no_grad():
                try:
                    return float(net(t32["d"], t32["r"]))
                except Exception:
                    return float(net(t32["d"].repeat(1, 3, 1, 1), t32["r"].repeat(1, 3, 1, 1)))
        return run

    def pyiqa_piqe():
        from pyiqa.archs.piqe_arch import piqe

        return lambda: float(piqe(t32["d"].double())[0][0])

    x, y = t64["d"], t64["r"]
    # metric: (cxreval options, piq callable, pyiqa factory)
    table = {
        "psnr": ({}, lambda: piq.psnr(x, y, data_range=255.0), lambda: pyiqa_fr("pyiqa.archs.psnr_arch.PSNR")),
        "ssim": ({}, lambda: piq.ssim(x, y, data_range=255.0, downsample=False),
                 lambda: pyiqa_fr("pyiqa.archs.ssim_arch.SSIM", channels=1)),
        "ms_ssim": ({}, lambda: piq.multi_scale_ssim(x, y, data_range=255.0),
                    lambda: pyiqa_fr("pyiqa.archs.ssim_arch.MS_SSIM", channels=1)),
        "iw_ssim": ({}, lambda: piq.information_weighted_ssim(x, y, data_range=255.0), None),
        "vifp": ({}, lambda: piq.vif_p(x, y, data_range=255.0), None),
        "gmsd": ({"std": "population"}, lambda: piq.gmsd(x, y, data_range=255.0),
                 lambda: pyiqa_fr("pyiqa.archs.gmsd_arch.GMSD")),
        "mdsi": ({}, lambda: piq.mdsi(x, y, data_range=255.0), None),
        "haarpsi": ({}, lambda: piq.haarpsi(x, y, data_range=255.0), None),
        "haarpsi_med": ({}, lambda: piq.haarpsi(x, y, data_range=255.0, c=5.0, alpha=4.9), None),
        "fsim": ({"downsample": "pool", "median": "lower", "epsilon": float(np.finfo(float).eps)},
                 lambda: piq.fsim(x, y, data_range=255.0, chromatic=False),
                 lambda: pyiqa_fr("pyiqa.archs.fsim_arch.FSIM", chromatic=False)),
        "vsi": ({"downsample": "piq"}, lambda: piq.vsi(x, y, data_range=255.0),
                lambda: pyiqa_fr("pyiqa.archs.vsi_arch.VSI")),
        "dss": ({}, lambda: piq.dss(x, y, data_range=255.0), None),
        "cw_ssim": ({}, None, lambda: pyiqa_fr("pyiqa.archs.ssim_arch.CW_SSIM", channels=1, test_y_channel=False)),
        "vif": ({"round_8bit": True}, None, lambda: pyiqa_fr("pyiqa.archs.vif_arch.VIF")),
        "piqe": ({"normalize": "max", "round_8bit": True}, None, pyiqa_piqe),
    }
    rows = []
    for name, (opts, piq_fn, pyiqa_factory) in table.items():
        try:
            spec = get_metric(name)
        except KeyError:
            continue
        if spec.reference == "full":
            def ours(spec=spec, opts=opts):
                return spec(ref, dist, data_range=255, **opts)
        else:
            def ours(spec=spec, opts=opts):
                return spec(dist, data_range=255, **opts)
        t_c, v_c = _timeit(ours, args.repeats)
        res = {"metric": name, "t_cx": t_c, "v_cx": v_c}
        for peer, fn in (("piq", piq_fn), ("pyiqa", None)):
            if peer == "pyiqa" and pyiqa_factory is not None:
                try:
                    fn = pyiqa_factory()
                except Exception as exc:  # peer unavailable for this metric
                    print(f"pyiqa {name}: {type(exc).__name__}: {exc}")
                    fn = None
            if fn is None:
                continue
            try:
                res[f"t_{peer}"], res[f"v_{peer}"] = _timeit(fn, args.repeats)
            except Exception as exc:
                print(f"{peer} {name}: {type(exc).__name__}: {exc}")
        rows.append(res)
        print(res, flush=True)
    write_results(rows, args.repeats)


def _fmt(v: float | None, spec: str) -> str:
    return "n/a" if v is None else format(v, spec)


def write_results(rows: list[dict], repeats: int) -> None:
    lines = ["## IQA", "",
             "Time per 1024x1024 greyscale pair (NIH 00000075_000.png vs Gaussian noise sigma 8), median of "
             f"{repeats} calls after a warm-up, one thread each (numpy/scipy float64 vs torch {_torch_version()}), "
             "same run; `bench/iqa.py` in the dev venv. Ratio = peer time / cxreval time (>1: cxreval faster). "
             "Options that reproduce the peer's convention are used where they differ (see the metric docs).", "",
             "| metric | cxreval s | piq s | pyiqa s | piq/cx | pyiqa/cx | cxreval value | piq value | pyiqa value |",
             "|---|---|---|---|---|---|---|---|---|"]
    ratios_piq, slower_pyiqa = [], []
    for r in rows:
        rp = r["t_piq"] / r["t_cx"] if "t_piq" in r else None
        ry = r["t_pyiqa"] / r["t_cx"] if "t_pyiqa" in r else None
        if rp:
            ratios_piq.append(rp)
        if ry is not None and ry < 1:
            slower_pyiqa.append(r["metric"])
        lines.append(f"| {r['metric']} | {r['t_cx']:.4f} | {_fmt(r.get('t_piq'), '.4f')} | "
                     f"{_fmt(r.get('t_pyiqa'), '.4f')} | {_fmt(rp, '.2f')} | {_fmt(ry, '.2f')} | {r['v_cx']:.6g} | "
                     f"{_fmt(r.get('v_piq'), '.6g')} | {_fmt(r.get('v_pyiqa'), '.6g')} |")
    gm = math.exp(sum(map(math.log, ratios_piq)) / len(ratios_piq)) if ratios_piq else float("nan")
    lines += ["", f"Geometric mean of piq/cxreval over {len(ratios_piq)} metrics: **{gm:.2f}** (target >= 1). "
              f"Metrics where pyiqa is faster than cxreval: {', '.join(slower_pyiqa) or 'none'}.", ""]
    section = "\n".join(lines) + "\n"
    text = RESULTS.read_text() if RESULTS.is_file() else "# Benchmark results\n\n"
    start = text.find("## IQA\n")
    if start >= 0:
        end = text.find("\n## ", start + 1)
        old = text[start:end + 1] if end >= 0 else text[start:]
        sub = old.find("\n### ")  # subsections (bench/iqa_validation.py's table) are kept
        if sub >= 0:
            section += old[sub + 1:].rstrip("\n") + "\n\n"
        text = text[:start] + section + (text[end + 1:] if end >= 0 else "")
    else:
        text = text.rstrip("\n") + "\n\n" + section
    RESULTS.write_text(text)
    print(f"wrote {RESULTS} (geometric mean piq/cxreval {gm:.2f})")


def _torch_version() -> str:
    import torch

    return torch.__version__


if __name__ == "__main__":
    main()
