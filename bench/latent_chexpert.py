"""CheXpert test set: the 10 leaderboard models' latent-truth AUCs beside their AUCs against single readers,
fused labels and the 5-radiologist consensus.

Readers: bc4, bc6, bc8 (three benchmark radiologists) and chexpert_labeler (the report labeller), none of whom is
among the 5 radiologists of ``consensus``. On the 5 competition findings, on the studies every compared reference
labels (``studies='common'``), without resampling: each reference's AUC, the hard ``fused_mv`` and ``fused_ds`` of
the four readers (``cxreval fuse --methods mv,ds``), the readers-only soft AUC, and the latent-truth AUC
(``evaluate_latent_auc``: its default ``score_model='auto'``, and the spline, dependent and bins models); mean |ΔAUC| and mean ΔAUC to the consensus.

:func:`timing` runs what ``cxreval classify --latent-truth --readers bc4,bc6,bc8,chexpert_labeler`` runs (the
help's example: every study, every finding the models predict, 1,000 replicates by default) and reports its wall
and CPU seconds beside the machine's load average.

Usage: python bench/latent_chexpert.py CHEXPERT_TEST_FOLDER [timing N_RESAMPLES]
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
from cxreval.latent import evaluate_latent_auc, fit_latent_class, latent_auc_score, select_score_model
from cxreval.stats import prepare_inputs

__all__ = ["READERS", "FINDINGS", "measure", "timing"]

READERS = ("bc4", "bc6", "bc8", "chexpert_labeler")
FINDINGS = ("Atelectasis", "Cardiomegaly", "Consolidation", "Edema", "Effusion")


def _read(folder: Path) -> tuple[pd.DataFrame, pd.DataFrame]:
    """What ``cxreval data export chexpert_test`` and ``chexpert_test_predictions`` write, as tables."""
    (lab,) = export_dataset("chexpert_test", path=folder).tables().values()
    (pr,) = export_dataset("chexpert_test_predictions", path=folder).tables().values()
    return pr, lab


def measure(folder: Path, n_resamples: int = 0) -> dict[str, object]:
    t0 = time.perf_counter()
    preds, labels = _read(Path(folder))
    labels = labels[labels["finding"].isin(FINDINGS)]
    preds = preds[preds["finding"].isin(FINDINGS)]
    # the studies every compared reference labels, per finding
    refs = ["consensus", *READERS]
    fused = fuse_labels(labels, list(READERS), ["mv", "ds"], rng=0).table
    fused = fused[fused["source"].isin(["fused_mv", "fused_ds"])]
    pid = labels.drop_duplicates("study_id").set_index("study_id")["patient_id"]
    fused = fused.assign(patient_id=fused["study_id"].map(pid))[list(labels.columns)]
    both = pd.concat([labels, fused], ignore_index=True)
    table = evaluate_auc(
        preds, both, references=[*refs, "fused_mv", "fused_ds"], n_resamples=0, studies="common"
    ).table
    table = table[table["finding"].isin(FINDINGS) & (table["model"] != "Mean")]
    wide = table.pivot_table(index=["model", "finding"], columns="reference", values="auc")
    # the latent truth on the same studies: those labelled by every compared reference
    common = set.intersection(
        *(set(both.loc[(both["source"] == r), "study_id"]) for r in [*refs, "fused_mv", "fused_ds"])
    )
    lab_c = labels[labels["study_id"].isin(common)]
    pr_c = preds[preds["study_id"].isin(common)]
    t1 = time.perf_counter()
    lat = evaluate_latent_auc(pr_c, lab_c, readers=list(READERS), n_resamples=n_resamples, rng=0)
    latent_s = time.perf_counter() - t1
    wide["latent"] = lat.table.set_index(["model", "finding"])["auc"]
    bins = evaluate_latent_auc(pr_c, lab_c, readers=list(READERS), n_resamples=0, score_model="bins")
    wide["latent, bins"] = bins.table.set_index(["model", "finding"])["auc"]
    dep = evaluate_latent_auc(pr_c, lab_c, readers=list(READERS), n_resamples=0, score_model="dependent")
    wide["latent, dependent"] = dep.table.set_index(["model", "finding"])["auc"]
    spline = evaluate_latent_auc(pr_c, lab_c, readers=list(READERS), n_resamples=0, score_model="spline")
    wide["latent, spline"] = spline.table.set_index(["model", "finding"])["auc"]
    # the readers-only soft AUC (pairs weighted by reader-only posteriors)
    prep = prepare_inputs(pr_c, lab_c, references=list(READERS), studies="each")
    soft = {}
    auto_dependent = n_comb = 0  # (model, finding) combinations where score_model='auto' chose 'dependent'
    for f, finding in enumerate(prep.findings):
        y = prep.Y[f].T
        keep = (~np.isnan(y)).any(axis=1)
        post = np.full(y.shape[0], np.nan)
        post[keep] = fit_latent_class(y[keep]).posterior
        for m, model in enumerate(prep.models):
            s = prep.S[m, f]
            ok = keep & np.isfinite(s)
            soft[(model, finding)] = latent_auc_score(s[ok], post[ok])
            auto_dependent += (
                select_score_model(y[ok], s[ok], None, None, None, None, max_iter=2000, tol=1e-10)
                == "dependent"
            )
            n_comb += 1
    wide["reader-only soft"] = pd.Series(soft)
    cols = [
        *READERS,
        "fused_mv",
        "fused_ds",
        "reader-only soft",
        "latent, bins",
        "latent, spline",
        "latent, dependent",
        "latent",
    ]
    delta = wide[cols].sub(wide["consensus"], axis=0)
    summary = pd.DataFrame(
        {
            "reference": cols,
            "mean |ΔAUC|": delta.abs().mean().to_numpy(),
            "mean ΔAUC": delta.mean().to_numpy(),
            "max |ΔAUC|": delta.abs().max().to_numpy(),
        }
    )
    per_finding = delta.abs().groupby(level="finding").mean()
    return {
        "wide": wide[["consensus", *cols]].reset_index(),
        "summary": summary,
        "per_finding": per_finding,
        "latent": lat,
        "spline": spline,
        "auto_dependent": auto_dependent,
        "n_combinations": n_comb,
        "n_studies": len(common),
        "seconds": time.perf_counter() - t0,
        "latent_seconds": latent_s,
    }


def timing(folder: Path, n_resamples: int = 1000, seed: int = 0) -> dict[str, object]:
    """Wall and CPU seconds of the help's example of ``classify --latent-truth`` (on the exported tables, read
    by ``evaluate_classifiers_files``, the command's job), with the 1-minute load average before and after."""
    import os
    import tempfile

    from cxreval.jobs import evaluate_classifiers_files
    from cxreval.options import Resampling

    preds, labels = _read(Path(folder))
    with tempfile.TemporaryDirectory() as tmp:
        pp, lp = Path(tmp) / "predictions.parquet", Path(tmp) / "labels.parquet"
        preds.to_parquet(pp)
        labels.to_parquet(lp)
        load_before = os.getloadavg()[0]
        t0, c0 = time.perf_counter(), time.process_time()
        res = evaluate_classifiers_files(
            pp, lp, latent_truth=True, readers=list(READERS), resampling=Resampling(n_resamples, rng=seed)
        ).auc
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    return {
        "result": res,
        "wall_seconds": wall,
        "cpu_seconds": cpu,
        "load_before": load_before,
        "load_after": os.getloadavg()[0],
        "n_models": len(res.models),
        "n_findings": len(res.findings),
        "n_studies": int(labels["study_id"].nunique()),
    }


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[2] == "timing":
        t = timing(Path(sys.argv[1]), int(sys.argv[3]) if len(sys.argv) > 3 else 1000)
        print({k: v for k, v in t.items() if k != "result"})
        sys.exit(0)
    m = measure(Path(sys.argv[1]))
    print(m["summary"].round(4).to_string(index=False))
