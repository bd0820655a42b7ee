"""Ranking: rank correlations with ties beside SciPy, the XQA paper's published figures, and ranking stability
of real models under different references (NIH text-mined vs Google expert labels, the CheXpert test set's
consensus vs each radiologist and report labeler).
"""

from __future__ import annotations

import time
import tracemalloc

import numpy as np
import pandas as pd

from suites._common import SHARED, Context, Figures, Part, Peer, missing, module_version

TITLE = "Ranking: rank correlations and ranking stability"

__all__ = ["PARTS", "TITLE"]


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


def kendall_large_n(ctx: Context) -> Figures:
    from scipy.stats import kendalltau

    from cxreval.stats import kendall_tau_a, kendall_tau_b

    n = ctx.size(50_000, 200_000)
    g = np.random.default_rng(ctx.seed)
    x = np.round(g.random(n), 2)
    y = np.round(x + g.normal(0, 0.3, n), 1)
    ours, t_ours, m_ours = _timed(lambda a, b: float(kendall_tau_b(a, b)), x, y)
    ref, t_ref, m_ref = _timed(lambda a, b: kendalltau(a, b).statistic, x, y)
    ta, t_a, _ = _timed(lambda a, b: float(kendall_tau_a(a, b)), x, y)
    fig = Figures(peer=Peer("scipy.stats.kendalltau", module_version("scipy")))
    t = fig.table(
        f"Kendall's tau, n = {n:,} with ties ({np.unique(x).size} distinct x, {np.unique(y).size} "
        "distinct y)",
        ["", "cxreval", "scipy.stats.kendalltau", "cxreval / scipy"],
    )
    t.add("tau-b", f"{ours:.15f}", f"{ref:.15f}", f"diff {abs(ours - ref):.1e}")
    t.add("time (s, median of 3)", round(t_ours, 3), round(t_ref, 3), round(t_ours / t_ref, 2))
    t.add("peak traced memory (MiB)", round(m_ours, 1), round(m_ref, 1), round(m_ours / max(m_ref, 1e-9), 2))
    t.add("tau-a (the XQA paper's form)", f"{ta:.15f}", "n/a", f"{t_a:.3f} s")
    xd = g.random(n)
    yd = xd + g.normal(0, 0.3, n)
    ours_d, t_ours_d, m_ours_d = _timed(lambda a, b: float(kendall_tau_b(a, b)), xd, yd)
    ref_d, t_ref_d, m_ref_d = _timed(lambda a, b: kendalltau(a, b).statistic, xd, yd)
    t.add("tau-b, all values distinct", f"{ours_d:.15f}", f"{ref_d:.15f}", f"diff {abs(ours_d - ref_d):.1e}")
    t.add(
        "time (s), all values distinct", round(t_ours_d, 3), round(t_ref_d, 3), round(t_ours_d / t_ref_d, 2)
    )
    t.add(
        "peak traced memory (MiB), all values distinct",
        round(m_ours_d, 1),
        round(m_ref_d, 1),
        round(m_ours_d / max(m_ref_d, 1e-9), 2),
    )
    t.notes.append(
        "With ties the discordant pairs come from the contingency table of the two inputs' codes "
        "(no larger than the data here); with all values distinct from the inversions of the y codes, "
        "a bottom-up merge sort (one sort of the whole array per doubling of the merged blocks)."
    )
    fig.ratios["scipy s / cxreval s, all values distinct"] = t_ref_d / t_ours_d
    fig.checked["tau-b, all values distinct, equals scipy to 1e-12"] = str(abs(ours_d - ref_d) <= 1e-12)
    t.notes.append(
        f"An all-pairs computation would hold {n * (n - 1) // 2:,} pairs: "
        f"{n * (n - 1) / 2 * 8 / 1e9:.0f} GB per float64 temporary."
    )
    fig.ratios["scipy s / cxreval s"] = t_ref / t_ours
    fig.checked.update(
        {
            "tau-b": f"{ours:.15f}",
            "tau-a": f"{ta:.15f}",
            "tau-b equals scipy to 1e-12": str(abs(ours - ref) <= 1e-12),
        }
    )
    return fig


def bootstrap_replicates(ctx: Context) -> Figures:
    from scipy.stats import kendalltau, spearmanr

    from cxreval.stats import kendall_tau_a, kendall_tau_b, spearman_rho, spearman_rho_d2

    n_models, n_rep = 34, ctx.size(300, 1000)
    g = np.random.default_rng(ctx.seed)
    a = np.round(0.5 + 0.3 * g.random((n_models, n_rep)), 2)  # AUC-like, 2 decimals: ties
    b = np.round(a + g.normal(0, 0.03, a.shape), 2)
    fig = Figures(peer=Peer("scipy.stats kendalltau / spearmanr loop", module_version("scipy")))
    t = fig.table(
        f"{n_rep} bootstrap replicates x {n_models} models (2-decimal AUCs)",
        ["statistic", "cxreval, vectorised (ms)", "scipy loop (ms)", "loop / cxreval", "max abs diff"],
    )
    for name, fn, ref in (
        ("KRCC tau-b", kendall_tau_b, lambda u, v: kendalltau(u, v).statistic),
        ("SRCC pearson", spearman_rho, lambda u, v: spearmanr(u, v).statistic),
        ("KRCC tau-a (XQA paper)", kendall_tau_a, None),
        ("SRCC d² formula (XQA paper)", spearman_rho_d2, None),
    ):
        ours, t_ours, _ = _timed(lambda u, v, f=fn: f(u, v, axis=0), a, b)
        if ref is not None:
            loop, t_loop, _ = _timed(
                lambda u, v, f=ref: np.array([f(u[:, k], v[:, k]) for k in range(n_rep)]), a, b, repeats=1
            )
            diff = float(np.nanmax(np.abs(ours - loop)))
            t.add(name, round(t_ours * 1e3, 1), round(t_loop * 1e3), round(t_loop / t_ours), f"{diff:.1e}")
            fig.ratios[f"{name}: scipy loop / cxreval"] = t_loop / t_ours
            fig.checked[f"{name} equals scipy to 1e-12"] = str(diff <= 1e-12)
        else:
            t.add(name, round(t_ours * 1e3, 1), "n/a", "", f"mean {np.nanmean(ours):.3f}")
            fig.checked[f"{name} mean"] = f"{np.nanmean(ours):.3f}"
    t.notes.append(
        "SciPy has no tau-a and no d² formula: those are checked against a pair loop in the tests."
    )
    return fig


def xqa_published(ctx: Context) -> Figures:
    from cxreval.ranking import compare_table_rankings, compare_with_published, load_xqa_auc_table

    tab = load_xqa_auc_table()
    fig = Figures()
    t = fig.table(
        "XQA published AUCs (Tables 16-25): point correlations vs the paper's bootstrap means (Tables 26-29)",
        ["variant", "rows with a published value", "recomputed", "mean abs(point - paper mean) SRCC", "KRCC"],
    )
    for kendall, spearman in (("tau-a", "formula"), ("tau-b", "pearson")):
        c = compare_with_published(
            compare_table_rankings(tab, kendall=kendall, spearman=spearman)
        ).correlations
        pub = c[c.paper_mean.notna()]
        both = pub[pub.statistic.notna()]
        d = (both.statistic - both.paper_mean).abs().groupby(both.method).mean()
        name = f"{spearman} / {kendall}" + (" (default, the paper's)" if kendall == "tau-a" else "")
        t.add(name, len(pub), len(both), f"{d['SRCC']:.4f}", f"{d['KRCC']:.4f}")
        fig.checked[f"{spearman}/{kendall}"] = f"{len(pub)} {len(both)} {d['SRCC']:.4f} {d['KRCC']:.4f}"
    t.notes.append(
        'The rows without a recomputed value are Table 28\'s "Micro Avg." rows: the paper publishes '
        "no per-model micro-average AUC."
    )
    return fig


def _wide_auc(auc) -> pd.DataFrame:
    t = auc.table[auc.table.group != "summary"]
    wide = t.assign(
        v=t.auc.map("{:.3f}".format)
        + " ["
        + t.ci_low.map("{:.3f}".format)
        + ", "
        + t.ci_high.map("{:.3f}".format)
        + "]"
    )
    wide = wide.pivot(index="model", columns=["finding", "reference"], values="v")
    wide.columns = [f"{f} / {r}" for f, r in wide.columns]
    return wide.reset_index()


def nih_vs_google(ctx: Context) -> Figures:
    why = missing(SHARED / "nih_fold_predictions")
    if why:
        return Figures(unavailable=why)
    from cxreval.classification import evaluate_auc
    from cxreval.datasets import google, nih
    from cxreval.datasets import nih_predictions as nh
    from cxreval.findings import VocabularyMapping
    from cxreval.ranking import ALL_MODELS, compare_rankings

    headline = VocabularyMapping(
        "nih_to_google_headline",
        {"Pneumothorax": ("Pneumothorax",), "Nodule or Mass": ("Nodule", "Mass")},
        note="Pneumothorax directly; Nodule or Mass = NIH Nodule OR Mass.",
    )
    airspace = VocabularyMapping(
        "nih_to_google_airspace",
        {"Airspace Opacity": ("Consolidation", "Pneumonia", "Infiltration")},
        note="sensitivity analysis: no single NIH counterpart.",
    )
    n_resamples = ctx.size(100, 1000)
    preds = nh.load_predictions(SHARED / "nih_fold_predictions")
    try:
        g = google.load_labels().table
        nl = nih.load_labels().table
    except Exception as exc:
        return Figures(unavailable=f"data unavailable: {exc} (run `cxreval data fetch`)")
    ids = set(preds.table.study_id) & set(g.study_id)
    nl = nl[nl.study_id.isin(ids)]
    p = preds.table[preds.table.study_id.isin(ids)]
    fig = Figures()
    groups_of = {"dd": "derrick-daniel", "hy": "haooyuee", "jrzech": "jrzech"}
    for name, mapping in (
        (("headline", headline),) if ctx.quick else (("headline", headline), ("airspace", airspace))
    ):
        labels = pd.concat(
            [
                google.map_nih_to_google(nl, mapping=mapping),
                g[g.study_id.isin(ids) & g.finding.isin(list(mapping.targets))].drop(columns="split"),
            ],
            ignore_index=True,
        )
        scores = nh.combine_findings(p, dict(mapping.targets), how="max")
        groups = {m: groups_of[m.split("_")[0]] for m in scores.model.unique()}
        auc = evaluate_auc(
            scores, labels, model_groups=groups, n_resamples=n_resamples, rng=ctx.seed, studies="each"
        )
        rs = compare_rankings(auc, dataset="NIH-Google")
        head = (
            f"{name} ({mapping.note}): 10 models on the {len(ids)} images with both references "
            f"({nl.patient_id.nunique()} patients), {n_resamples} replicates"
        )
        fig.frame(f"{head}: AUC [95% CI]", _wide_auc(auc))
        c = rs.correlations[rs.correlations.group == ALL_MODELS]
        c = c[["finding", "method", "statistic", "boot_mean", "boot_sd", "ci_low", "ci_high"]]
        fig.frame(f"{name}: rank correlation nih_textmined vs google_expert (all 10 models)", c, decimals=3)
        for r in c.itertuples():
            fig.checked[f"{name} | {r.finding} | {r.method}"] = f"{r.statistic:.4f}"
        a = auc.table[auc.table.group != "summary"]
        for r in a.itertuples():
            fig.checked[f"{name} | {r.model} | {r.finding} | {r.reference} | auc"] = f"{r.auc:.4f}"
        fig.checked[f"{name} | counts"] = str(int(auc.counts.select_dtypes("number").to_numpy().sum()))
    return fig


def chexpert_test(ctx: Context) -> Figures:
    root = SHARED / "chexpert_test"
    why = missing(root)
    if why:
        return Figures(unavailable=why)
    from cxreval.classification import evaluate_auc
    from cxreval.datasets import chexpert
    from cxreval.ranking import compare_rankings

    n_resamples = ctx.size(200, 1000)
    lab = chexpert.load_labels(root)
    pr = chexpert.load_predictions(root)
    auc = evaluate_auc(pr.table, lab.table, n_resamples=n_resamples, rng=ctx.seed, studies="each")
    rs = compare_rankings(auc, dataset="CheXpert-test")
    fig = Figures()
    t = auc.table[(auc.table.finding == "macro") & (auc.table.group != "summary")]
    wide = t.pivot(index="model", columns="reference", values="auc")[list(auc.references)]
    fig.frame(
        f"CheXpert test set: macro AUC (5 competition findings) of 10 leaderboard models under "
        f"{len(auc.references)} references, 500 patients, {n_resamples} replicates",
        wide,
        decimals=3,
        index=True,
    )
    ranks = rs.rankings[(rs.rankings.finding == "macro")].pivot(
        index="model", columns="reference", values="rank"
    )
    ranks = ranks[list(auc.references)].sort_values("consensus")
    fig.frame("Rank of each model by macro AUC under each reference", ranks, index=True)
    c = rs.correlations
    c = c[((c.reference_a == "consensus") | (c.reference_b == "consensus")) & (c.finding == "macro")]
    c = c.assign(other=[b if a == "consensus" else a for a, b in zip(c.reference_a, c.reference_b)])
    fig.frame(
        "Rank correlation of the consensus ranking with each other reference's (macro)",
        c[["other", "method", "statistic", "boot_mean", "boot_sd", "ci_low", "ci_high"]],
        decimals=3,
    )
    for r in t.itertuples():
        fig.checked[f"{r.model} | {r.reference} | macro auc"] = f"{r.auc:.4f}"
    for r in c.itertuples():
        fig.checked[f"consensus vs {r.other} | {r.method}"] = f"{r.statistic:.4f}"
    fig.tables[0].notes += [n for n in lab.report.notes if "identical" in n]
    return fig


PARTS = (
    Part(
        "kendall_large_n",
        "Kendall's tau-b with ties at n = 50,000 (quick) / 200,000 (full): value, time and "
        "peak traced memory of cxreval's O(n log n) path beside scipy.stats.kendalltau.",
        kendall_large_n,
    ),
    Part(
        "bootstrap_replicates",
        "Rank correlations of 34 models over 300 (quick) / 1000 bootstrap replicates: "
        "cxreval's vectorised tau-a/tau-b/SRCC beside a loop of scipy.stats.kendalltau / spearmanr.",
        bootstrap_replicates,
    ),
    Part(
        "xqa_published",
        "The XQA paper's published AUCs (Tables 16-25) re-ranked under the paper's formulas and "
        "SciPy's, against the paper's bootstrap means (Tables 26-29).",
        xqa_published,
    ),
    Part(
        "nih_vs_google",
        "Ranking stability of the 10 NIH models under NIH text-mined vs Google expert labels "
        "(shared data + `cxreval data fetch`; the headline findings and 100 replicates quick, with Airspace Opacity and "
        "1000 full).",
        nih_vs_google,
    ),
    Part(
        "chexpert_test",
        "Ranking stability of the 10 CheXpert leaderboard models under the consensus, each "
        "radiologist and the report labelers (shared data; 200 replicates quick, 1000 full).",
        chexpert_test,
    ),
)
