"""Soft labels (``p_positive``) as a reference on the CheXpert test set (shared data): the 10 leaderboard models'
AUCs against the Dawid–Skene posteriors of four readers none of which is in the 5-radiologist consensus, beside
the hard ``fused_ds`` labels (the same fusion, without ``p_positive``) and the consensus; and the soft path
checked cell by cell against :func:`cxreval.latent.latent_auc_score` on the same studies.

Run: ``python bench/run.py soft:chexpert`` (or ``python bench/soft_labels_chexpert.py FOLDER``).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

from cxreval.classification import evaluate_auc
from cxreval.datasets import export_dataset
from cxreval.fusion import fuse_labels
from cxreval.latent import latent_auc_score
from cxreval.stats import prepare_inputs

__all__ = ["READERS", "FINDINGS", "measure"]

READERS = ("bc4", "bc6", "bc8", "chexpert_labeler")
FINDINGS = ("Atelectasis", "Cardiomegaly", "Consolidation", "Edema", "Effusion")


def measure(folder: Path, n_resamples: int = 0, seed: int = 0) -> dict[str, object]:
    (labels,) = export_dataset("chexpert_test", path=folder).tables().values()
    (preds,) = export_dataset("chexpert_test_predictions", path=folder).tables().values()
    labels = labels[labels["finding"].isin(FINDINGS)]
    preds = preds[preds["finding"].isin(FINDINGS)]
    fused = fuse_labels(labels, list(READERS), ["ds"], rng=0).table
    pid = labels.drop_duplicates("study_id").set_index("study_id")["patient_id"]
    soft = fused[fused["source"] == "fused_ds"].assign(patient_id=lambda d: d["study_id"].map(pid))
    hard = soft.drop(columns="p_positive").assign(source="fused_ds_hard")
    both = pd.concat(
        [labels.assign(p_positive=np.nan), soft, hard.assign(p_positive=np.nan)], ignore_index=True
    )
    refs = ["consensus", "fused_ds", "fused_ds_hard"]
    t0 = time.perf_counter()
    res = evaluate_auc(preds, both, references=refs, studies="common", n_resamples=n_resamples, rng=seed)
    seconds = time.perf_counter() - t0
    assert res.soft_references == ("fused_ds",)
    t = res.table[res.table["finding"].isin(FINDINGS) & (res.table["model"] != "Mean")]
    wide = t.pivot_table(index=["model", "finding"], columns="reference", values="auc")[refs]
    # the soft AUCs again, from latent_auc_score on the studies the evaluation kept
    prep = prepare_inputs(preds, both, references=refs, studies="common")
    k = prep.references.index("fused_ds")
    check = {}
    for j, f in enumerate(prep.findings):
        y = prep.Y[j, k]
        ok = np.isfinite(y)
        for i, m in enumerate(prep.models):
            check[(m, f)] = latent_auc_score(prep.S[i, j][ok], y[ok])
    ref = pd.Series(check).rename_axis(["model", "finding"]).reindex(wide.index)
    max_diff = float((wide["fused_ds"] - ref).abs().max())
    delta = wide[["fused_ds", "fused_ds_hard"]].sub(wide["consensus"], axis=0)
    width = (t["ci_high"] - t["ci_low"]).groupby(t["reference"]).mean() if n_resamples else None
    summary = pd.DataFrame(
        {
            "reference": ["fused_ds (soft, p_positive)", "fused_ds (hard states)"],
            "mean |ΔAUC|": delta.abs().mean().to_numpy(),
            "mean ΔAUC": delta.mean().to_numpy(),
            "mean CI width": (
                [float(width["fused_ds"]), float(width["fused_ds_hard"])]
                if width is not None
                else [np.nan, np.nan]
            ),
        }
    )
    counts = (
        res.counts[res.counts["reference"].isin(refs)]
        .groupby("reference")[["n_pos", "n_neg", "n_dropped"]]
        .sum()
    )
    return {
        "summary": summary,
        "wide": wide.reset_index(),
        "max_diff": max_diff,
        "seconds": seconds,
        "consensus_width": None if width is None else float(width["consensus"]),
        "counts": counts,
        "n_cells": len(wide),
    }


if __name__ == "__main__":
    m = measure(Path(sys.argv[1]))
    print(
        m["summary"].round(4).to_string(index=False), f"\nmax |soft - latent_auc_score| {m['max_diff']:.2e}"
    )
