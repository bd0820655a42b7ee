"""CheXpert test set: the 10 leaderboard models against the three benchmark radiologists (bc4, bc6, bc8), read as
binary readers, under three references — the 5-radiologist consensus, the CheXpert labeler, and the latent truth
of the sources that are neither readers nor the consensus (bc1, bc2, bc3, bc5, bc7, chexpert_labeler, chexbert).

What ``cxreval data export chexpert_test`` / ``chexpert_test_predictions`` and then ``cxreval mrmc --readers
bc4,bc6,bc8 -r consensus,chexpert_labeler,latent ...`` compute (the library job :func:`evaluate_reader_study`),
reduced to one row per model and finding: how many readers lie below the model's ROC curve, and the model's
sensitivity minus the panel's at the panel's specificity (paired patient bootstrap CI), per reference.

Usage: python bench/mrmc_chexpert.py CHEXPERT_TEST_FOLDER [N_RESAMPLES]
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pandas as pd

from cxreval.datasets import export_dataset
from cxreval.jobs import evaluate_reader_study
from cxreval.mrmc import labels_to_ratings

__all__ = ["FINDINGS", "LATENT_SOURCES", "READERS", "REFERENCES", "command", "measure"]

READERS = ("bc4", "bc6", "bc8")
REFERENCES = ("consensus", "chexpert_labeler", "latent")
LATENT_SOURCES = ("bc1", "bc2", "bc3", "bc5", "bc7", "chexpert_labeler", "chexbert")
FINDINGS = ("Atelectasis", "Cardiomegaly", "Consolidation", "Edema", "Effusion")
MARGIN = 0.05


def command(n_resamples: int, seed: int) -> list[str]:
    """The command lines that compute the same tables."""
    return [
        "cxreval data export chexpert_test --path CHEXPERT_TEST -o chexpert",
        "cxreval data export chexpert_test_predictions --path CHEXPERT_TEST -o chexpert_predictions",
        f"cxreval mrmc -l chexpert/labels.parquet --readers {','.join(READERS)} -p "
        f"chexpert_predictions/predictions.parquet -r {','.join(REFERENCES)} --latent-sources "
        f"{','.join(LATENT_SOURCES)} -f {','.join(FINDINGS)} --margin {MARGIN} --n-resamples {n_resamples} "
        f"--seed {seed} -o chexpert_reader_study",
    ]


def measure(folder: Path, *, n_resamples: int, seed: int) -> dict[str, object]:
    t0 = time.perf_counter()
    (labels,) = export_dataset("chexpert_test", path=folder).tables().values()
    (preds,) = export_dataset("chexpert_test_predictions", path=folder).tables().values()
    res = evaluate_reader_study(
        labels_to_ratings(labels, sources=list(READERS)),
        labels,
        references=list(REFERENCES),
        predictions=preds,
        findings=list(FINDINGS),
        latent_sources=list(LATENT_SOURCES),
        margin=MARGIN,
        n_resamples=n_resamples,
        rng=seed,
    )
    seconds = time.perf_counter() - t0
    keys = ["reference", "finding", "model"]
    below = res.below_count[res.below_count["observed"]].set_index(keys)["n_readers_below"]
    verdicts = res.verdict_table.set_index(keys)
    per_model = verdicts[["difference", "ci_low", "ci_high", "non_inferior"]].join(below.rename("below"))
    per_model = per_model.reset_index()
    counts = res.counts.set_index(["reference", "finding"])
    summary = []
    for (ref, finding), g in per_model.groupby(["reference", "finding"], sort=False):
        c = counts.loc[(ref, finding)]
        summary.append(
            {
                "reference": ref,
                "finding": finding,
                "cases": int(c["cases"]),
                "positives": int(c["positives"]),
                "non_inferior": int(g["non_inferior"].sum()),
                "superior": int((g["ci_low"] > 0).sum()),
                "mean_below": float(g["below"].mean()),
                "all_below": int((g["below"] == len(READERS)).sum()),
                "median_difference": float(g["difference"].median()),
            }
        )
    summary_df = pd.DataFrame(summary)
    wide = per_model.pivot_table(
        index=["finding", "model"], columns="reference", values="non_inferior", aggfunc="first"
    )
    depends = int((wide.nunique(axis=1) > 1).sum())
    return {
        "result": res,
        "per_model": per_model,
        "summary": summary_df,
        "depends": depends,
        "n_pairs": len(wide),
        "seconds": seconds,
    }


if __name__ == "__main__":  # pragma: no cover - a script
    m = measure(Path(sys.argv[1]), n_resamples=int(sys.argv[2]) if len(sys.argv) > 2 else 1000, seed=0)
    print(m["summary"].to_string(index=False))
    print(
        f"verdict depends on the reference: {m['depends']} of {m['n_pairs']} (model, finding); {m['seconds']:.0f} s"
    )
