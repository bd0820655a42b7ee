"""Benchmark and check of the XQA-fidelity fixes of issue 15 (items 1-4 and 11): rank correlations with ties,
micro-average coverage, the (UNC, UNC) rule of Low-kappa and the 12-pathology vocabulary.

1. Kendall's tau at n = 200,000 with ties (SciPy's own large test size): cxreval's O(n log n) path vs
   ``scipy.stats.kendalltau``, time and peak traced memory (``tracemalloc``) of each, in one process; the
   all-pairs path it replaces would have needed ``n(n-1)/2`` pairs x 8 bytes x several temporaries.
2. The bootstrap case: 1000 replicates x 34 models (the XQA-RR model count), vectorised tau-a / tau-b / both
   SRCC forms vs a loop of ``scipy.stats.kendalltau`` / ``spearmanr`` (tau-b and Pearson only: SciPy has no
   tau-a and no d² formula; those are checked against a pair loop in tests/test_ranking.py).
3. The XQA paper's published AUCs (Tables 16-25, 2 decimals, many ties): point SRCC / KRCC under the seed's
   formulas (default) and the SciPy forms, against the paper's bootstrap means (Tables 26-29); coverage of the
   168 published rows by ``attach_published``.
4. Agreement: the seed's Table 30 case (identical CR label sets, 448 NEG / 37 UNC / 165 POS Atelectasis) under
   both ``both_uncertain`` rules; and the XQA "all 12" micro average with the old and the seed's vocabulary.

Run:  .venv/bin/python bench/xqa_fidelity.py
"""

from __future__ import annotations

import argparse
import time
import tracemalloc

import numpy as np
from scipy.stats import kendalltau, spearmanr

from cxreval.agreement import agreement_scores, agreement_table
from cxreval.findings import CHEXPERT, XQA
from cxreval.ranking import ranking_stability
from cxreval.ranking.correlation import kendall_tau_a, kendall_tau_b, spearman_rho, spearman_rho_d2
from cxreval.ranking.published import attach_published, load_xqa_auc_table


def _timed(fn, *args, repeats: int = 3):
    """(result, median seconds, peak traced MiB of one run)."""
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        out = fn(*args)
        times.append(time.perf_counter() - t)
    tracemalloc.start()
    fn(*args)
    peak = tracemalloc.get_traced_memory()[1] / 2**20
    tracemalloc.stop()
    return out, float(np.median(times)), peak


def large_n(n: int, seed: int) -> None:
    g = np.random.default_rng(seed)
    x = np.round(g.random(n), 2)
    y = np.round(x + g.normal(0, 0.3, n), 1)
    ours, t_ours, m_ours = _timed(lambda a, b: float(kendall_tau_b(a, b)), x, y)
    ref, t_ref, m_ref = _timed(lambda a, b: kendalltau(a, b).statistic, x, y)
    ta, t_a, _ = _timed(lambda a, b: float(kendall_tau_a(a, b)), x, y)
    pairs_gb = n * (n - 1) / 2 * 8 / 1e9
    print(f"### Kendall's tau, n = {n:,} with ties ({np.unique(x).size} distinct x, {np.unique(y).size} distinct y)\n")
    print("| | cxreval | scipy.stats.kendalltau | ratio (cxreval / scipy) |\n|---|---|---|---|")
    print(f"| tau-b | {ours:.15f} | {ref:.15f} | diff {abs(ours - ref):.1e} |")
    print(f"| time (s, median of 3) | {t_ours:.3f} | {t_ref:.3f} | {t_ours / t_ref:.2f}x |")
    print(f"| peak traced memory (MiB) | {m_ours:.1f} | {m_ref:.1f} | {m_ours / max(m_ref, 1e-9):.2f}x |")
    print(f"| tau-a (seed), time (s) | {ta:.15f}, {t_a:.3f} | n/a | |")
    print(f"\nThe all-pairs path would hold {n * (n - 1) // 2:,} pairs: {pairs_gb:.0f} GB per float64 temporary.\n")


def bootstrap_case(n_models: int, n_rep: int, seed: int) -> None:
    g = np.random.default_rng(seed)
    a = np.round(0.5 + 0.3 * g.random((n_models, n_rep)), 2)  # AUC-like, 2 decimals: ties
    b = np.round(a + g.normal(0, 0.03, a.shape), 2)
    rows = []
    for name, fn, ref in (("KRCC tau-b", kendall_tau_b, lambda u, v: kendalltau(u, v).statistic),
                          ("SRCC pearson", spearman_rho, lambda u, v: spearmanr(u, v).statistic),
                          ("KRCC tau-a (seed)", kendall_tau_a, None), ("SRCC formula (seed)", spearman_rho_d2, None)):
        ours, t_ours, _ = _timed(lambda u, v, f=fn: f(u, v, axis=0), a, b)
        if ref is not None:
            loop, t_loop, _ = _timed(lambda u, v, f=ref: np.array([f(u[:, k], v[:, k]) for k in range(n_rep)]), a, b,
                                     repeats=1)
            rows.append(f"| {name} | {t_ours * 1e3:.1f} | {t_loop * 1e3:.0f} | **{t_loop / t_ours:.0f}x** | "
                        f"{np.nanmax(np.abs(ours - loop)):.1e} |")
        else:
            rows.append(f"| {name} | {t_ours * 1e3:.1f} | n/a | | mean {np.nanmean(ours):.3f} |")
    print(f"### Bootstrap case: {n_rep} replicates x {n_models} models (2-decimal AUCs)\n")
    print("| statistic | cxreval, vectorised (ms) | scipy loop (ms) | speed-up | max abs diff |\n|---|---|---|---|---|")
    print("\n".join(rows) + "\n")


def xqa_tables() -> None:
    t = load_xqa_auc_table()
    print("### XQA published AUCs (Tables 16-25): point correlations vs the paper's bootstrap means (Tables 26-29)\n")
    print("| variant | rows with a published value | recomputed | mean abs(point - paper mean) SRCC | KRCC |"
          "\n|---|---|---|---|---|")
    for kendall, spearman in (("tau-a", "formula"), ("tau-b", "pearson")):
        c = attach_published(ranking_stability(t, kendall=kendall, spearman=spearman))
        pub = c[c.paper_mean.notna()]
        both = pub[pub.statistic.notna()]
        d = (both.statistic - both.paper_mean).abs().groupby(both.method).mean()
        print(f"| {spearman} / {kendall}{' (default, seed)' if kendall == 'tau-a' else ''} | {len(pub)} | "
              f"{len(both)} | {d['SRCC']:.4f} | {d['KRCC']:.4f} |")
    print("\nThe 8 rows without a recomputed value are Table 28's \"Micro Avg.\" rows: the paper publishes no "
          "per-model micro-average AUC (computed from predictions by `cxreval classify`/`rank`, finding `micro`).\n")


def agreement_cases(seed: int) -> None:
    cr = np.repeat([0, 1, 2], [448, 37, 165])
    print("### Agreement: Table 30's NN Fusion (PS) vs CR on Atelectasis (identical labels, 37 uncertain)\n")
    print("| both_uncertain | kappa_w | kappa_low | kappa_high | F1_low | F1_high |\n|---|---|---|---|---|---|")
    for rule in ("agree", "disagree"):
        r = agreement_scores(cr, cr.copy(), both_uncertain=rule)
        print(f"| {rule}{' (default)' if rule == 'agree' else ''} | {r.kappa_w:.3f} | {r.kappa_low:.3f} | "
              f"{r.kappa_high:.3f} | {r.f1_low:.3f} | {r.f1_high:.3f} |")
    print("| seed, Table 30 | 1.00 | 1.00 | 1.00 | 1.00 | 1.00 |\n")
    # the "all 12" set: old vocabulary (with Support Devices, without Pleural Other) vs the seed's
    g = np.random.default_rng(seed)
    n, rows = 650, []
    for f in CHEXPERT:
        base = g.choice([0, 1, 2], n, p=[0.75, 0.05, 0.2] if f != "Support Devices" else [0.5, 0.02, 0.48])
        for src, noise in (("CR", 0.0), ("Rep1", 0.25 if f != "Support Devices" else 0.02)):
            st = np.where(g.random(n) < noise, g.choice([0, 1, 2], n), base)
            rows += [{"study_id": i, "finding": f, "source": src, "state": int(v)} for i, v in enumerate(st)]
    import pandas as pd

    t = pd.DataFrame(rows)
    old = ("Atelectasis", "Cardiomegaly", "Consolidation", "Edema", "Effusion", "Lung Opacity", "Pneumothorax",
           "Pneumonia", "Fracture", "Lung Lesion", "Enlarged Cardiomediastinum", "Support Devices")
    print("### XQA \"all 12\" averages, synthetic CR vs Rep1 (650 studies; Support Devices agrees far better)\n")
    print("| vocabulary | macro kappa_w | micro kappa_w |\n|---|---|---|")
    for name, voc in (("before (with Support Devices, no Pleural Other)", old), ("seed's 12 (findings.XQA)", XQA)):
        a = agreement_table(t, "CR:Rep1", findings=list(voc), finding_sets={"all12": list(voc)})
        print(f"| {name} | {a[a.finding == 'macro'].kappa_w.iloc[0]:.3f} | {a[a.finding == 'micro'].kappa_w.iloc[0]:.3f} |")
    print()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=200_000)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    large_n(args.n, args.seed)
    bootstrap_case(34, 1000, args.seed)
    xqa_tables()
    agreement_cases(args.seed)


if __name__ == "__main__":
    main()
