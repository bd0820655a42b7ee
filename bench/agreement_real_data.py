"""Real-data agreement, prevalence and omission tables (issue 5).

1. NIH text-mined labels (ChestX-ray14) vs Google's adjudicated expert labels on the 4,376 NIH images,
   in Google's findings (``cxreval.datasets.google.NIH_TO_GOOGLE``), overall, per Google split
   (test / val) and per official NIH split (test / train_val lists in ../shared/data); plus the
   Airspace Opacity mapping alternatives.
2. VinDr-CXR reader-pair agreement per finding (``cxreval.datasets.vindr.read_vindr``).
3. Speed: ``agreement_table`` on every VinDr reader pair vs a scikit-learn loop computing the same numbers.

Run:  .venv/bin/python bench/agreement_real_data.py [--out DIR]   (needs `cxreval data fetch`)
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from cxreval.agreement import (
    agreement_table,
    compute_agreement,
    flows_table,
    omission_table,
    positive_prevalence,
    prevalence_table,
    uncertainty_mapping,
)
from cxreval.datasets import google, nih
from cxreval.datasets.vindr import read_vindr
from cxreval.exceptions import UndefinedMetricWarning
from cxreval.findings import VocabularyMapping
from cxreval.io import markdown_table

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "data" / "chestxray14"
COLS = ["pair", "finding", "kappa_w", "kappa_low", "kappa_high", "f1_w", "f1_low", "f1_high", "n"]
OCOLS = ["finding", "n", "pos_a", "pos_a_neg_b", "rate_a_not_b", "pos_b", "pos_b_neg_a", "rate_b_not_a"]


def nih_vs_google(out: Path | None) -> None:
    g = google.load_labels().table
    n_all = nih.load_labels().table
    ids = set(g["study_id"])
    n_sub = n_all[n_all["study_id"].isin(ids)]
    mapped = google.map_nih_to_google(n_sub)
    labels = pd.concat([g.drop(columns="split"), mapped], ignore_index=True)
    print(f"## NIH text-mined vs Google expert ({len(ids)} images; {g['patient_id'].nunique()} patients)\n")
    print(f"mapping: {google.NIH_TO_GOOGLE.to_dict()}\n")
    prev = prevalence_table(labels)
    print("### Positive prevalence\n")
    print(markdown_table(positive_prevalence(prev).reset_index()), "\n")
    test_list = set((SHARED / "official_test_list.txt").read_text().split())
    trainval_list = set((SHARED / "official_train_val_list.txt").read_text().split())
    split = g.drop_duplicates("study_id").set_index("study_id")["split"]
    subsets = {
        "all": ids,
        "google_test": set(split.index[split == "test"]),
        "google_val": set(split.index[split == "val"]),
        "nih_official_test": ids & test_list,
        "nih_official_train_val": ids & trainval_list,
    }
    agr_all, om_all = [], []
    for name, keep in subsets.items():
        sub = labels[labels["study_id"].isin(keep)]
        res = compute_agreement(sub, "google_expert:nih_textmined")
        agr = res.table
        om = omission_table(flows_table(sub, "google_expert:nih_textmined"))
        print(f"### Subset {name}: {len(keep)} images; findings only in Google: {list(res.pairs[0].findings_only_a)}\n")
        print(markdown_table(agr[COLS]), "\n")
        print(markdown_table(om[OCOLS]), "\n")
        agr_all.append(agr.assign(subset=name))
        om_all.append(om.assign(subset=name))
    # Airspace Opacity alternatives
    variants = {
        "Cons+Pneu+Infil (NIH_TO_GOOGLE)": ("Consolidation", "Pneumonia", "Infiltration"),
        "Cons+Pneu+Infil+Edema": ("Consolidation", "Pneumonia", "Infiltration", "Edema"),
        "Cons+Pneu+Infil+Edema+Atel": ("Consolidation", "Pneumonia", "Infiltration", "Edema", "Atelectasis"),
        "Cons+Pneu": ("Consolidation", "Pneumonia"),
        "Infiltration only": ("Infiltration",),
    }
    rows = []
    for vname, srcs in variants.items():
        m = VocabularyMapping(name=vname, targets={"Airspace Opacity": srcs}, combine="any")
        alt = google.map_nih_to_google(n_sub, mapping=m)
        lab = pd.concat([g[g["finding"] == "Airspace Opacity"].drop(columns="split"), alt], ignore_index=True)
        a = agreement_table(lab, "google_expert:nih_textmined").iloc[0]
        o = omission_table(flows_table(lab, "google_expert:nih_textmined")).iloc[0]
        rows.append({"NIH findings OR-ed": vname, "kappa": a["kappa_w"], "f1_w": a["f1_w"], "pos_nih": o["pos_b"],
                     "rate_google_not_nih": o["rate_a_not_b"], "rate_nih_not_google": o["rate_b_not_a"]})
    print("### Airspace Opacity: alternative NIH mappings (all 4,376 images)\n")
    print(markdown_table(pd.DataFrame(rows), decimals=3), "\n")
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
        pd.concat(agr_all).to_csv(out / "nih_google_agreement.csv", index=False)
        pd.concat(om_all).to_csv(out / "nih_google_omissions.csv", index=False)
        prev.to_csv(out / "nih_google_prevalence.csv", index=False)


def vindr(out: Path | None) -> pd.DataFrame:
    t = read_vindr().table
    readers = sorted(pd.unique(t["source"]), key=lambda r: int(r[1:]))
    img = {r: set(t.loc[t["source"] == r, "study_id"]) for r in readers}
    pairs = [(a, b) for i, a in enumerate(readers) for b in readers[i + 1:] if len(img[a] & img[b]) >= 100]
    print(f"## VinDr-CXR reader pairs with >= 100 common images: {len(pairs)}\n")
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMetricWarning)
        agr = agreement_table(t, pairs, studies="intersection")
    t_lib = time.perf_counter() - t0
    big = agr[agr["pair"].isin(["R8:R9", "R8:R10", "R9:R10"])]
    wide = big.pivot(index="finding", columns="pair", values="kappa_w")
    n = big.pivot(index="finding", columns="pair", values="n")
    wide = wide.join(n.add_prefix("n "))
    order = [f for f in pd.unique(agr["finding"]) if f not in ("macro", "micro")] + ["macro", "micro"]
    print("### kappa (binary labels: kappa_w = kappa_low = kappa_high) for the three big reader pairs\n")
    print(markdown_table(wide.reindex(order).reset_index()), "\n")
    summ = agr[agr["finding"].isin(["macro", "micro"])][["pair", "finding", "kappa_w", "f1_w", "n"]]
    print("### Macro / micro over the 15 VinDr findings, every pair\n")
    print(markdown_table(summ), "\n")
    # scikit-learn loop computing the same kappa_w/low/high and F1 per pair and finding
    from sklearn.metrics import cohen_kappa_score, f1_score

    t0 = time.perf_counter()
    ref = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for a, b in pairs:
            sub = t[t["source"].isin([a, b])]
            w = sub.pivot_table(index=["study_id", "finding"], columns="source", values="state", aggfunc="first")
            w = w.dropna()
            for f, g in w.groupby(level="finding", sort=False):
                x, y = g[a].to_numpy(int), g[b].to_numpy(int)
                row = {"pair": f"{a}:{b}", "finding": f,
                       "kappa_w": cohen_kappa_score(x, y, weights="quadratic", labels=[0, 1, 2])}
                for mp in ("pessimistic", "optimistic"):
                    ya, yb, sw = uncertainty_mapping(x, y, mapping=mp)
                    row[f"k_{mp}"] = cohen_kappa_score(ya, yb, sample_weight=sw, labels=[0, 1])
                    row[f"f_{mp}"] = f1_score(ya, yb, sample_weight=sw, average="weighted", zero_division=0)
                row["f1_w"] = f1_score(x, y, average="weighted", labels=[0, 1, 2], zero_division=0)
                ref.append(row)
    t_sk = time.perf_counter() - t0
    ref = pd.DataFrame(ref).merge(agr, on=["pair", "finding"], suffixes=("_sk", ""))
    diff = np.nanmax(np.abs(ref["kappa_w_sk"] - ref["kappa_w"]))
    diff_f = np.nanmax(np.abs(ref["f1_w_sk"] - ref["f1_w"]))
    same_nan = (ref["kappa_w_sk"].isna() == ref["kappa_w"].isna()).all()
    print(f"### Speed: agreement_table {t_lib:.2f} s vs scikit-learn loop {t_sk:.2f} s "
          f"(x{t_sk / t_lib:.1f}); {len(ref)} pair-findings; max |kappa diff| {diff:.2e}, max |F1 diff| "
          f"{diff_f:.2e}, NaN pattern identical: {same_nan}\n")
    if out is not None:
        agr.to_csv(out / "vindr_reader_agreement.csv", index=False)
    return agr


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--out", type=Path, default=None, help="write the tables as CSV here")
    args = p.parse_args(argv)
    pd.set_option("display.width", 200)
    nih_vs_google(args.out)
    vindr(args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
