"""Issue 13 in cxreval.iqa: the owners give the numbers of the hand-written code they replaced.

1. ``cxreval.iqa.expert.metric_agreement`` (bootstrap plan from ``cxreval.bootstrap.draw_plan``, SRCC/KRCC from
   ``cxreval.ranking.correlation``) against the loop it replaced, written out here: one
   ``rng.integers(0, n_refs, n_refs)`` per replicate, ``scipy.stats.spearmanr`` / ``kendalltau`` on the
   concatenated groups, ``numpy.percentile`` CIs. Tied ratings (integer 1-4 scale), 2-25 reference images x 4
   degradations x 3 metrics x 3 raters, 1000 resamples, seed 0.
2. ``cxreval.iqa.box_downsample`` (block means by ``skimage.measure.block_reduce``) against the
   reshape-and-sum block means it replaced, on 5 shapes x f = 2..8 x its 3 conventions.

Run::

    .venv/bin/python bench/iqa_owners.py

Prints a markdown section for ``bench/RESULTS.md``.
"""

from __future__ import annotations

import time

import numpy as np
import pandas as pd
from scipy import stats

from cxreval.iqa import box_downsample, expert, get_metric


def loop_agreement(scores: pd.DataFrame, zm: pd.DataFrame, n_resamples: int, seed: int) -> pd.DataFrame:
    """The metric-vs-z-MOS bootstrap as cxreval wrote it before issue 13 (all images rated and scored)."""
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
        rows.append({"metric": m, "srcc": s, "krcc": k, "srcc_ci_low": ci[0][0], "srcc_ci_high": ci[0][1],
                     "krcc_ci_low": ci[1][0], "krcc_ci_high": ci[1][1]})
    return pd.DataFrame(rows)


def data(n_refs: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    g = np.random.default_rng(n_refs)
    rows, rat = [], []
    for r in range(n_refs):
        for k in range(4):
            q = g.normal()
            for m in ("ssim", "gmsd", "psnr"):
                rows.append({"reference": f"r{r}", "test": f"d/r{r}_{k}.png", "metric": m,
                             "value": round(q + g.normal(0, 0.5), 1)})
            for a in "ABC":
                rat.append({"image": f"r{r}_{k}", "rater": a,
                            "rating": int(np.clip(round(2.5 + q + g.normal(0, 0.7)), 1, 4))})
    return pd.DataFrame(rows), pd.DataFrame(rat)


def block_sums(image: np.ndarray, f: int, convention: str) -> np.ndarray:
    """box_downsample's block means as written before issue 13 (reshape and sum)."""
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


def main() -> None:
    print("## Issue 13 in cxreval.iqa: owners instead of hand-written copies\n")
    print("`.venv/bin/python bench/iqa_owners.py`, same run. `metric_agreement` (bootstrap plan of "
          "`cxreval.bootstrap.draw_plan` with reference images as clusters, SRCC/KRCC of "
          "`cxreval.ranking.correlation`) vs the loop it replaced (one `integers` call per replicate, "
          "`scipy.stats.spearmanr`/`kendalltau`, `numpy.percentile`): 4 degradations x 3 metrics x 3 raters "
          "per reference image, integer 1-4 ratings (ties), 1000 resamples, seed 0. The draws are the same "
          "stream (`integers(0, n, (B, n))` equals B calls of `integers(0, n, n)`); the replicate's images come "
          "in another order, which changes only the floating-point rounding. Shared machine (2 cores, ~7 "
          "engineers): times are indicative.\n")
    print("| reference images | max abs difference (SRCC, KRCC, CIs) | loop s | cxreval s | loop / cxreval |")
    print("|---|---|---|---|---|")
    cols = ["srcc", "krcc", "srcc_ci_low", "srcc_ci_high", "krcc_ci_low", "krcc_ci_high"]
    for n_refs in (2, 7, 10, 25):
        scores, ratings = data(n_refs)
        zm = expert.zscores(ratings).zmos
        t0 = time.perf_counter()
        old = loop_agreement(scores, zm, 1000, 0)
        t1 = time.perf_counter()
        new = expert.metric_agreement(scores, zm, n_resamples=1000, rng=0).table
        t2 = time.perf_counter()
        diff = np.nanmax(np.abs(old[cols].to_numpy(float) - new[cols].to_numpy(float)))
        same_nan = bool((np.isnan(old[cols].to_numpy(float)) == np.isnan(new[cols].to_numpy(float))).all())
        print(f"| {n_refs} | {diff:.1e}{'' if same_nan else ' (NaN differ!)'} | {t1 - t0:.2f} | {t2 - t1:.2f} | "
              f"{(t1 - t0) / (t2 - t1):.2f} |")
    g = np.random.default_rng(0)
    worst, n = 0.0, 0
    for shape in [(1024, 1024), (1023, 777), (512, 512), (300, 301), (17, 9)]:
        x = g.uniform(0, 65535, shape)
        for f in range(2, 9):
            for conv in ("matlab", "replicate", "pool"):
                a, b = block_sums(x, f, conv), box_downsample(x, f, convention=conv)
                assert a.shape == b.shape
                worst = max(worst, float(np.max(np.abs(a - b)) / 65535))
                n += 1
    x = g.uniform(0, 1, (2048, 2048))
    t = []
    for fn in (lambda: block_sums(x, 4, "matlab"), lambda: box_downsample(x, 4, convention="matlab")):
        t0 = time.perf_counter()
        for _ in range(5):
            fn()
        t.append((time.perf_counter() - t0) / 5)
    print(f"\n`box_downsample` by `skimage.measure.block_reduce` vs the reshape-and-sum block means: {n} cases "
          f"(5 shapes x f = 2..8 x 3 conventions), largest difference {worst:.1e} of the data range; 2048² "
          f"image, f = 4: {t[0] * 1e3:.0f} ms vs {t[1] * 1e3:.0f} ms. The MATLAB-faithful 2x2 filters of "
          "MS-SSIM/IW-SSIM (`imfilter` + `[::2, ::2]`, symmetric padding at odd sizes) and VIF's strided "
          "window sums are not block means and stay as they are.\n")


if __name__ == "__main__":
    main()
