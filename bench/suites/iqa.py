"""Image quality assessment: cxreval's metrics against reference implementations (piq, pyiqa, sewar values on
radiographs), their speed beside piq and pyiqa, and the expert-agreement bootstrap beside a SciPy loop.
"""

from __future__ import annotations

import importlib.util
import os
import statistics
import time

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from suites._common import (  # noqa: E402
    ROOT,
    SHARED,
    Context,
    Figures,
    Part,
    Peer,
    missing,
    module_version,
    peer_unavailable,
)

TITLE = "IQA: image quality metrics"

__all__ = ["PARTS", "TITLE"]

NIH = SHARED / "images" / "nih" / "00000075_000.png"
REFERENCE_TEST = ROOT / "tests" / "iqa" / "test_peer_values_radiographs.py"
PEER_NAMES = {
    "piq": "piq 0.8.0",
    "pyiqa": "pyiqa 0.1.16",
    "sewar": "sewar 0.4.10",
    "definition": "definition (numpy)",
}


def reference_values(ctx: Context) -> Figures:
    why = missing(SHARED / "iqa_fixture", SHARED / "images")
    if why:
        return Figures(unavailable=why)
    spec = importlib.util.spec_from_file_location("iqa_reference_values_test", REFERENCE_TEST)
    t = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(t)  # type: ignore[union-attr]
    rows = t.reference_rows()
    if ctx.quick:  # the first two pairs of every (metric, reference, convention)
        kept: dict[tuple, list] = {}
        for r in rows:
            kept.setdefault(r[:3], []).append(r)
        rows = [r for group in kept.values() for r in group[:2]]
    pairs = t.load_pairs(SHARED, {r[5] for r in rows}, ctx.tmp)
    worst: dict[tuple, list] = {}
    for metric, lib, key, tol, fn, pair, expected in rows:
        x, y = pairs[pair]
        rel = abs(fn(x, y) - expected) / max(abs(expected), 1e-12)
        w = worst.setdefault((metric, lib, key), [0.0, 0, tol])
        w[1] += 1
        w[0] = max(w[0], rel)
    fig = Figures(
        peer=Peer(
            "piq, pyiqa, sewar (stored values, tests/iqa/data/reference_values.csv)",
            ", ".join(PEER_NAMES[k] for k in ("piq", "pyiqa", "sewar")),
        )
    )
    tab = fig.table(
        f"{len(rows)} reference values recomputed with cxreval (relative difference "
        "|cxreval - reference| / |reference|)",
        [
            "metric",
            "reference implementation",
            "tolerance",
            "largest relative difference",
            "pairs",
            "convention / reason for the tolerance",
        ],
    )
    for (metric, lib, key), (rel, n, tol) in sorted(worst.items()):
        ok = rel <= tol
        tab.add(
            metric,
            PEER_NAMES.get(lib, lib) + (f" ({key})" if key else ""),
            f"{tol:.0e}",
            f"{rel:.1e}" + ("" if ok else " FAIL"),
            n,
            t.CASES[(metric, lib, key)][2],
        )
        fig.checked[f"{metric} | {lib} | {key} | within tolerance"] = str(ok)
    tab.notes.append(
        "tolerances and the options reproducing each peer's convention: "
        "tests/iqa/test_peer_values_radiographs.py (CASES)"
    )
    return fig


def _timeit(fn, repeats: int) -> tuple[float, float]:
    value = float(fn())
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), value


def speed_vs_peers(ctx: Context) -> Figures:
    why = missing(NIH)
    if why:
        return Figures(unavailable=why)
    try:
        import piq
        import torch
    except ImportError:
        p = peer_unavailable("piq / pyiqa", "piq")
        return Figures(peer=p, unavailable=p.unavailable)
    from PIL import Image

    from cxreval.iqa import get_metric

    torch.set_num_threads(1)
    ref = np.asarray(Image.open(NIH).convert("L"), dtype=np.float64)
    dist = np.clip(ref + np.random.default_rng(ctx.seed).normal(0, 8, ref.shape), 0, 255)
    x, y = (torch.from_numpy(v)[None, None] for v in (dist, ref))
    table = {
        "psnr": ({}, lambda: piq.psnr(x, y, data_range=255.0)),
        "ssim": ({}, lambda: piq.ssim(x, y, data_range=255.0, downsample=False)),
        "ms_ssim": ({}, lambda: piq.multi_scale_ssim(x, y, data_range=255.0)),
        "iw_ssim": ({}, lambda: piq.information_weighted_ssim(x, y, data_range=255.0)),
        "vifp": ({}, lambda: piq.vif_p(x, y, data_range=255.0)),
        "gmsd": ({"std": "population"}, lambda: piq.gmsd(x, y, data_range=255.0)),
        "mdsi": ({}, lambda: piq.mdsi(x, y, data_range=255.0)),
        "haarpsi": ({}, lambda: piq.haarpsi(x, y, data_range=255.0)),
        "fsim": (
            {"downsample": "pool", "median": "lower", "epsilon": float(np.finfo(float).eps)},
            lambda: piq.fsim(x, y, data_range=255.0, chromatic=False),
        ),
        "vsi": ({"downsample": "piq"}, lambda: piq.vsi(x, y, data_range=255.0)),
        "dss": ({}, lambda: piq.dss(x, y, data_range=255.0)),
    }
    repeats = ctx.size(1, 3)
    fig = Figures(peer=Peer("piq", f"{module_version('piq')} (torch {torch.__version__})"))
    tab = fig.table(
        "Time per 1024x1024 greyscale pair (NIH 00000075_000.png vs Gaussian noise sigma 8), median of "
        f"{repeats} call(s) after a warm-up, one thread each",
        ["metric", "cxreval s", "piq s", "piq / cxreval", "cxreval value", "piq value"],
    )
    logs = []
    for name, (opts, piq_fn) in table.items():
        spec = get_metric(name)
        t_c, v_c = _timeit(lambda spec=spec, opts=opts: spec(ref, dist, data_range=255, **opts), repeats)
        t_p, v_p = _timeit(piq_fn, repeats)
        tab.add(name, round(t_c, 4), round(t_p, 4), round(t_p / t_c, 2), f"{v_c:.6g}", f"{v_p:.6g}")
        logs.append(np.log(t_p / t_c))
    fig.ratios["geometric mean of piq s / cxreval s"] = float(np.exp(np.mean(logs)))
    return fig


def _loop_agreement(scores: pd.DataFrame, zm: pd.DataFrame, n_resamples: int, seed: int) -> pd.DataFrame:
    """The metric-vs-z-MOS cluster bootstrap written out: one ``integers`` call per replicate, SciPy's
    ``spearmanr``/``kendalltau`` on the concatenated groups, ``numpy.nanpercentile`` CIs."""
    from scipy import stats

    from cxreval.iqa import get_metric

    gen = np.random.default_rng(seed)
    z_of = zm.set_index("image")["zmos"]
    rows = []
    for m in sorted(scores["metric"].unique()):
        d = scores[scores["metric"] == m]
        sign = 1.0 if get_metric(m).higher_is_better else -1.0
        v = sign * d["value"].to_numpy(float)
        z = z_of.loc[d["test"].str.rsplit("/", n=1).str[-1].str[:-4]].to_numpy()

        def rho_tau(a, b):
            if len(a) < 2 or np.ptp(a) == 0 or np.ptp(b) == 0:
                return np.nan, np.nan
            return stats.spearmanr(a, b).statistic, stats.kendalltau(a, b).statistic

        s, k = rho_tau(v, z)
        refs, codes = np.unique(d["reference"].to_numpy(), return_inverse=True)
        groups = [np.flatnonzero(codes == r) for r in range(len(refs))]
        bs, bk = [], []
        for _ in range(n_resamples):
            idx = np.concatenate([groups[p] for p in gen.integers(0, len(refs), len(refs))])
            a, b = rho_tau(v[idx], z[idx])
            bs.append(a)
            bk.append(b)
        ci = [np.nanpercentile(np.asarray(x, float), [2.5, 97.5]) for x in (bs, bk)]
        rows.append(
            {
                "metric": m,
                "srcc": s,
                "krcc": k,
                "srcc_ci_low": ci[0][0],
                "srcc_ci_high": ci[0][1],
                "krcc_ci_low": ci[1][0],
                "krcc_ci_high": ci[1][1],
            }
        )
    return pd.DataFrame(rows)


def _ratings(n_refs: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    g = np.random.default_rng(n_refs)
    rows, rat = [], []
    for r in range(n_refs):
        for k in range(4):
            q = g.normal()
            for m in ("ssim", "gmsd", "psnr"):
                rows.append(
                    {
                        "reference": f"r{r}",
                        "test": f"d/r{r}_{k}.png",
                        "metric": m,
                        "value": round(q + g.normal(0, 0.5), 1),
                    }
                )
            for a in "ABC":
                rat.append(
                    {
                        "image": f"r{r}_{k}",
                        "rater": a,
                        "rating": int(np.clip(round(2.5 + q + g.normal(0, 0.7)), 1, 4)),
                    }
                )
    return pd.DataFrame(rows), pd.DataFrame(rat)


def expert_agreement(ctx: Context) -> Figures:
    import cxreval.iqa as expert

    n_resamples = ctx.size(300, 1000)
    fig = Figures(peer=Peer("scipy.stats spearmanr / kendalltau bootstrap loop", module_version("scipy")))
    tab = fig.table(
        f"metric_agreement (cluster bootstrap over reference images, {n_resamples} resamples) vs the "
        "SciPy loop: 4 degradations x 3 metrics x 3 raters per reference image, integer 1-4 ratings",
        ["reference images", "max abs difference (SRCC, KRCC, CIs)", "loop s", "cxreval s", "loop / cxreval"],
    )
    cols = ["srcc", "krcc", "srcc_ci_low", "srcc_ci_high", "krcc_ci_low", "krcc_ci_high"]
    for n_refs in (2, 7, 10, 25):
        scores, ratings = _ratings(n_refs)
        zm = expert.zscores(ratings).zmos
        t0 = time.perf_counter()
        loop = _loop_agreement(scores, zm, n_resamples, 0)
        t1 = time.perf_counter()
        ours = expert.metric_agreement(scores, zm, n_resamples=n_resamples, rng=0).table
        t2 = time.perf_counter()
        a, b = loop[cols].to_numpy(float), ours[cols].to_numpy(float)
        diff = float(np.nanmax(np.abs(a - b)))
        same_nan = bool((np.isnan(a) == np.isnan(b)).all())
        tab.add(
            n_refs,
            f"{diff:.1e}" + ("" if same_nan else " (NaN differ)"),
            round(t1 - t0, 2),
            round(t2 - t1, 2),
            round((t1 - t0) / (t2 - t1), 2),
        )
        fig.ratios[f"{n_refs} reference images: loop s / cxreval s"] = (t1 - t0) / (t2 - t1)
        fig.checked[f"{n_refs} reference images | equal to 1e-12, same NaN"] = str(diff <= 1e-12 and same_nan)
    tab.notes.append(
        "the draws are the same stream; a replicate's images come in another order, which changes "
        "only the floating-point rounding"
    )
    return fig


def _block_means(image: np.ndarray, f: int, convention: str) -> np.ndarray:
    """Block means by reshape and sum (the definition ``box_downsample`` is checked against)."""
    if f <= 1:
        return image
    h, w = image.shape
    if convention == "pool":
        nh, nw = h // f, w // f
        x = image[: nh * f, : nw * f]
    else:
        top = (f - 1) // 2 if convention == "matlab" else f // 2
        nh, nw = -(-h // f), -(-w // f)
        pads = ((top, max(0, nh * f - h - top)), (top, max(0, nw * f - w - top)))
        x = np.pad(image, pads, mode="constant" if convention == "matlab" else "edge")[: nh * f, : nw * f]
    rows = x.reshape(nh, f, x.shape[1]).sum(axis=1)
    return rows.reshape(nh, nw, f).sum(axis=2) * (1.0 / (f * f))


def box_downsample(ctx: Context) -> Figures:
    from cxreval.io.images import box_downsample as ours

    g = np.random.default_rng(ctx.seed)
    worst, n = 0.0, 0
    for shape in [(1024, 1024), (1023, 777), (512, 512), (300, 301), (17, 9)]:
        x = g.uniform(0, 65535, shape)
        for f in range(2, 9):
            for conv in ("matlab", "replicate", "pool"):
                a, b = _block_means(x, f, conv), ours(x, f, convention=conv)
                worst = max(worst, float(np.max(np.abs(a - b)) / 65535)) if a.shape == b.shape else np.inf
                n += 1
    x = g.uniform(0, 1, (2048, 2048))
    t = []
    for fn in (lambda: _block_means(x, 4, "matlab"), lambda: ours(x, 4, convention="matlab")):
        t0 = time.perf_counter()
        for _ in range(5):
            fn()
        t.append((time.perf_counter() - t0) / 5)
    fig = Figures(peer=Peer("block means by reshape and sum (numpy)", np.__version__))
    tab = fig.table(
        "box_downsample (skimage.measure.block_reduce) vs reshape-and-sum block means",
        ["cases", "largest difference (of the data range)", "2048² image, f = 4: reshape ms", "cxreval ms"],
    )
    tab.add(
        f"{n} (5 shapes x f = 2..8 x 3 conventions)", f"{worst:.1e}", round(t[0] * 1e3), round(t[1] * 1e3)
    )
    fig.ratios["reshape s / cxreval s"] = t[0] / t[1]
    fig.checked["cases"] = str(n)
    fig.checked["largest difference <= 1e-12"] = str(worst <= 1e-12)
    return fig


PARTS = (
    Part(
        "reference_values",
        "Every row of tests/iqa/data/reference_values.csv (piq, pyiqa, sewar values on the "
        "shared 16-bit fixture and a degraded NIH radiograph; two pairs per metric quick) recomputed with cxreval, "
        "within the tolerances of tests/iqa/test_peer_values_radiographs.py.",
        reference_values,
    ),
    Part(
        "speed_vs_peers",
        "Time per 1024 x 1024 pair of 11 full-reference metrics, cxreval vs piq, one thread, "
        "values side by side (--peer-python with torch + piq).",
        speed_vs_peers,
        python_for="piq",
    ),
    Part(
        "expert_agreement",
        "cxreval.iqa.metric_agreement (cluster bootstrap of SRCC/KRCC between metrics "
        "and z-MOS) vs a SciPy loop on the same draws, 2 to 25 reference images.",
        expert_agreement,
    ),
    Part(
        "box_downsample",
        "box_downsample's three conventions against reshape-and-sum block means on 5 shapes x "
        "f = 2..8, and its time on a 2048² image.",
        box_downsample,
    ),
)
