"""Agreement between label sources: NIH text-mined vs Google expert labels, VinDr-CXR reader pairs beside a
scikit-learn loop, and the XQA paper's agreement cases (Table 30, the "all 12" findings).
"""

from __future__ import annotations

import time
import warnings

import numpy as np
import pandas as pd

from suites._common import SHARED, Context, Figures, Part, Peer, missing, module_version

TITLE = "Agreement: label sources and readers"

__all__ = ["PARTS", "TITLE"]

COLS = ["pair", "finding", "kappa_w", "kappa_low", "kappa_high", "f1_w", "f1_low", "f1_high", "n"]
OCOLS = ["finding", "n", "pos_a", "pos_a_neg_b", "rate_a_not_b", "pos_b", "pos_b_neg_a", "rate_b_not_a"]


def nih_vs_google(ctx: Context) -> Figures:
    lists = SHARED / "chestxray14"
    why = missing(lists / "official_test_list.txt")
    if why:
        return Figures(unavailable=why)
    from cxreval.agreement import (
        compute_agreement,
        compute_flows,
        compute_omissions,
        compute_prevalence,
        positive_prevalence,
    )
    from cxreval.datasets import google, nih
    from cxreval.findings import VocabularyMapping

    try:
        g = google.load_labels().table
        n_all = nih.load_labels().table
    except Exception as exc:
        return Figures(unavailable=f"data unavailable: {exc} (run `cxreval data fetch`)")
    ids = set(g["study_id"])
    n_sub = n_all[n_all["study_id"].isin(ids)]
    labels = pd.concat([g.drop(columns="split"), google.map_nih_to_google(n_sub)], ignore_index=True)
    fig = Figures()
    fig.frame(
        f"Positive prevalence, {len(ids)} images ({g['patient_id'].nunique()} patients)",
        positive_prevalence(compute_prevalence(labels).table),
        index=True,
    )
    test_list = set((lists / "official_test_list.txt").read_text().split())
    trainval_list = set((lists / "official_train_val_list.txt").read_text().split())
    split = g.drop_duplicates("study_id").set_index("study_id")["split"]
    subsets = {
        "all": ids,
        "google_test": set(split.index[split == "test"]),
        "google_val": set(split.index[split == "val"]),
        "nih_official_test": ids & test_list,
        "nih_official_train_val": ids & trainval_list,
    }
    for name, keep in subsets.items():
        sub = labels[labels["study_id"].isin(keep)]
        agr = compute_agreement(sub, "google_expert:nih_textmined", studies="same").table
        fig.frame(f"Subset {name}: {len(keep)} images, agreement", agr[COLS])
        fig.frame(
            f"Subset {name}: omissions",
            compute_omissions(compute_flows(sub, "google_expert:nih_textmined", studies="same").table).table[
                OCOLS
            ],
        )
        for r in agr.itertuples():
            fig.checked[f"{name} | {r.finding} | kappa_w f1_w n"] = f"{r.kappa_w:.4f} {r.f1_w:.4f} {r.n}"
    variants = {
        "Cons+Pneu+Infil (NIH_TO_GOOGLE)": ("Consolidation", "Pneumonia", "Infiltration"),
        "Cons+Pneu+Infil+Edema": ("Consolidation", "Pneumonia", "Infiltration", "Edema"),
        "Cons+Pneu": ("Consolidation", "Pneumonia"),
        "Infiltration only": ("Infiltration",),
    }
    t = fig.table(
        "Airspace Opacity: alternative NIH mappings (all images)",
        ["NIH findings OR-ed", "kappa", "f1_w", "pos_nih", "rate_google_not_nih", "rate_nih_not_google"],
    )
    for vname, srcs in variants.items():
        m = VocabularyMapping(name=vname, targets={"Airspace Opacity": srcs}, combine="any")
        lab = pd.concat(
            [
                g[g["finding"] == "Airspace Opacity"].drop(columns="split"),
                google.map_nih_to_google(n_sub, mapping=m),
            ],
            ignore_index=True,
        )
        a = compute_agreement(lab, "google_expert:nih_textmined", studies="same").table.iloc[0]
        o = compute_omissions(
            compute_flows(lab, "google_expert:nih_textmined", studies="same").table
        ).table.iloc[0]
        t.add(
            vname,
            round(a["kappa_w"], 3),
            round(a["f1_w"], 3),
            int(o["pos_b"]),
            round(o["rate_a_not_b"], 3),
            round(o["rate_b_not_a"], 3),
        )
        fig.checked[f"airspace | {vname} | kappa"] = f"{a['kappa_w']:.4f}"
    return fig


def vindr_readers(ctx: Context) -> Figures:
    from sklearn.metrics import cohen_kappa_score, f1_score

    from cxreval.agreement import compute_agreement, uncertainty_mapping
    from cxreval.datasets.vindr import read_vindr
    from cxreval.exceptions import UndefinedMetricWarning

    try:
        t = read_vindr().table
    except Exception as exc:
        return Figures(unavailable=f"data unavailable: {exc} (run `cxreval data fetch`)")
    readers = sorted(pd.unique(t["source"]), key=lambda r: int(r[1:]))
    img = {r: set(t.loc[t["source"] == r, "study_id"]) for r in readers}
    pairs = [(a, b) for i, a in enumerate(readers) for b in readers[i + 1 :] if len(img[a] & img[b]) >= 100]
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMetricWarning)
        agr = compute_agreement(t, pairs, studies="each").table
    t_lib = time.perf_counter() - t0
    fig = Figures(peer=Peer("scikit-learn cohen_kappa_score / f1_score loop", module_version("scikit-learn")))
    big = agr[agr["pair"].isin(["R8:R9", "R8:R10", "R9:R10"])]
    wide = big.pivot(index="finding", columns="pair", values="kappa_w")
    wide = wide.join(big.pivot(index="finding", columns="pair", values="n").add_prefix("n "))
    order = [f for f in pd.unique(agr["finding"]) if f not in ("macro", "micro")] + ["macro", "micro"]
    fig.frame(
        "kappa of the three big reader pairs (binary labels: kappa_w = kappa_low = kappa_high)",
        wide.reindex(order),
        index=True,
    )
    summ = agr[agr["finding"].isin(["macro", "micro"])][["pair", "finding", "kappa_w", "f1_w", "n"]]
    fig.frame(
        f"Macro / micro over the VinDr findings, every pair with >= 100 common images ({len(pairs)})", summ
    )
    for r in summ.itertuples():
        fig.checked[f"{r.pair} | {r.finding}"] = f"{r.kappa_w:.4f} {r.f1_w:.4f} {r.n}"
    use = pairs[: ctx.size(3, len(pairs))]  # the loop is timed on the first pairs (quick) or all of them
    t0 = time.perf_counter()
    ref = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for a, b in use:
            sub = t[t["source"].isin([a, b])]
            w = sub.pivot_table(
                index=["study_id", "finding"], columns="source", values="state", aggfunc="first"
            ).dropna()
            for f, g in w.groupby(level="finding", sort=False):
                x, y = g[a].to_numpy(int), g[b].to_numpy(int)
                row = {
                    "pair": f"{a}:{b}",
                    "finding": f,
                    "kappa_w": cohen_kappa_score(x, y, weights="quadratic", labels=[0, 1, 2]),
                }
                for mp in ("pessimistic", "optimistic"):
                    ya, yb, sw = uncertainty_mapping(x, y, mapping=mp)
                    row[f"k_{mp}"] = cohen_kappa_score(ya, yb, sample_weight=sw, labels=[0, 1])
                    row[f"f_{mp}"] = f1_score(ya, yb, sample_weight=sw, average="weighted", zero_division=0)
                row["f1_w"] = f1_score(x, y, average="weighted", labels=[0, 1, 2], zero_division=0)
                ref.append(row)
    t_sk = (time.perf_counter() - t0) * len(pairs) / len(use)
    ref = pd.DataFrame(ref).merge(agr, on=["pair", "finding"], suffixes=("_sk", ""))
    diff = float(np.nanmax(np.abs(ref["kappa_w_sk"] - ref["kappa_w"])))
    diff_f = float(np.nanmax(np.abs(ref["f1_w_sk"] - ref["f1_w"])))
    same_nan = bool((ref["kappa_w_sk"].isna() == ref["kappa_w"].isna()).all())
    sp = fig.table(
        "Speed: compute_agreement on every pair vs a scikit-learn loop",
        [
            "pairs",
            "pair-findings compared",
            "cxreval s",
            "loop s (scaled to all pairs)",
            "loop / cxreval",
            "max kappa diff",
            "max F1 diff",
            "same NaN",
        ],
    )
    sp.add(
        len(pairs),
        len(ref),
        round(t_lib, 2),
        round(t_sk, 2),
        round(t_sk / t_lib, 1),
        f"{diff:.1e}",
        f"{diff_f:.1e}",
        same_nan,
    )
    sp.notes.append(f"the loop ran on {len(use)} of the {len(pairs)} pairs, its time scaled linearly")
    fig.ratios["scikit-learn loop s / cxreval s"] = t_sk / t_lib
    fig.checked["equal to the loop to 1e-12, same NaN"] = str(diff <= 1e-12 and diff_f <= 1e-12 and same_nan)
    return fig


def xqa_cases(ctx: Context) -> Figures:
    from cxreval.agreement import agreement_scores, compute_agreement
    from cxreval.findings import CHEXPERT, XQA

    fig = Figures()
    cr = np.repeat([0, 1, 2], [448, 37, 165])
    t = fig.table(
        "Table 30's NN Fusion (PS) vs CR on Atelectasis (identical labels, 37 uncertain)",
        ["both_uncertain", "kappa_w", "kappa_low", "kappa_high", "F1_low", "F1_high"],
    )
    for rule in ("agree", "disagree"):
        r = agreement_scores(cr, cr.copy(), both_uncertain=rule)
        cells = [f"{v:.3f}" for v in (r.kappa_w, r.kappa_low, r.kappa_high, r.f1_low, r.f1_high)]
        t.add(rule + (" (default)" if rule == "agree" else ""), *cells)
        fig.checked[f"Table 30 | {rule}"] = " ".join(cells)
    t.add("the XQA paper, Table 30", "1.00", "1.00", "1.00", "1.00", "1.00")
    g = np.random.default_rng(ctx.seed)
    n, rows = 650, []
    for f in CHEXPERT:
        base = g.choice([0, 1, 2], n, p=[0.75, 0.05, 0.2] if f != "Support Devices" else [0.5, 0.02, 0.48])
        for src, noise in (("CR", 0.0), ("Rep1", 0.25 if f != "Support Devices" else 0.02)):
            st = np.where(g.random(n) < noise, g.choice([0, 1, 2], n), base)
            rows += [{"study_id": i, "finding": f, "source": src, "state": int(v)} for i, v in enumerate(st)]
    tab = pd.DataFrame(rows)
    other = (
        "Atelectasis",
        "Cardiomegaly",
        "Consolidation",
        "Edema",
        "Effusion",
        "Lung Opacity",
        "Pneumothorax",
        "Pneumonia",
        "Fracture",
        "Lung Lesion",
        "Enlarged Cardiomediastinum",
        "Support Devices",
    )
    t2 = fig.table(
        'XQA "all 12" averages, synthetic CR vs Rep1 (650 studies; Support Devices agrees far better)',
        ["vocabulary", "macro kappa_w", "micro kappa_w"],
    )
    for name, voc in (
        ("with Support Devices, without Pleural Other", other),
        ("the paper's 12 (findings.XQA)", XQA),
    ):
        a = compute_agreement(
            tab, "CR:Rep1", findings=list(voc), finding_sets={"all12": list(voc)}, studies="same"
        ).table
        cells = [f"{a[a.finding == k].kappa_w.iloc[0]:.3f}" for k in ("macro", "micro")]
        t2.add(name, *cells)
        fig.checked[f"all 12 | {name}"] = " ".join(cells)
    return fig


PARTS = (
    Part(
        "nih_vs_google",
        "NIH text-mined vs Google's adjudicated expert labels on the 4,376 NIH images: "
        "prevalence, agreement and omissions per subset, alternative Airspace Opacity mappings.",
        nih_vs_google,
    ),
    Part(
        "vindr_readers",
        "VinDr-CXR reader-pair agreement per finding, and compute_agreement's time beside a "
        "scikit-learn loop computing the same kappas and F1 (timed on 3 pairs quick, all full).",
        vindr_readers,
    ),
    Part(
        "xqa_cases",
        "The XQA paper's agreement cases: Table 30's identical label sets under both "
        'both_uncertain rules, and the "all 12" macro/micro kappa under two vocabularies.',
        xqa_cases,
    ),
)
