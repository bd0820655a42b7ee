"""CheXpert test set: the 10 leaderboard models' latent-truth AUCs beside their comparators and the
5-radiologist consensus.

Readers: bc4, bc6, bc8 (three benchmark radiologists) and chexpert_labeler (the report labeller), none of whom is
among the 5 radiologists of ``consensus``. On the 5 competition findings and two designs (every study some reader
labels; only the studies every reader labels, an uncertain label excluding the study), :func:`measure` runs ``evaluate_latent_auc``
(what ``classify --latent-truth`` runs) and reads its ``latent_comparators.csv`` (hard and soft Dawid–Skene,
majority vote, the best single reader), beside the consensus AUC on the same studies: mean |ΔAUC|, mean ΔAUC and
the distance of the models' order from the consensus order.

:func:`timing` runs what ``cxreval classify --latent-truth --readers bc4,bc6,bc8,chexpert_labeler`` runs (the
help's example: every study, every finding the models predict, 1,000 replicates by default) and reports its wall
and CPU seconds beside the machine's load average.

Usage: python bench/latent_chexpert.py CHEXPERT_TEST_FOLDER [timing N_RESAMPLES | dependent GROUP ...]
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

from cxreval.classification import evaluate_auc
from cxreval.datasets import export_dataset
from cxreval.latent import evaluate_latent_auc

__all__ = ["READERS", "FINDINGS", "measure", "timing"]

READERS = ("bc4", "bc6", "bc8", "chexpert_labeler")
FINDINGS = ("Atelectasis", "Cardiomegaly", "Consolidation", "Edema", "Effusion")


#: ``dependent=`` of the fit that takes every reader as independent given the truth, and its row's name.
INDEPENDENT = "none"
INDEPENDENT_ROW = "latent, dependent='none'"


def _read(folder: Path) -> tuple[pd.DataFrame, pd.DataFrame]:
    """What ``cxreval data export chexpert_test`` and ``chexpert_test_predictions`` write, as tables."""
    (lab,) = export_dataset("chexpert_test", path=folder).tables().values()
    (pr,) = export_dataset("chexpert_test_predictions", path=folder).tables().values()
    return pr, lab


def _every_reader(labels: pd.DataFrame) -> pd.DataFrame:
    """The label rows of the studies every reader labels, per finding (an uncertain label excludes the study, as
    the independent audit did; not mentioned is negative, as ``classify``); the consensus kept there."""
    binary = labels[
        labels["source"].isin(READERS) & labels["state"].isin(["positive", "negative", "not_mentioned"])
    ]
    n = binary.groupby(["finding", "study_id"], observed=True)["source"].nunique()
    keep = n[n == len(READERS)].index
    idx = pd.MultiIndex.from_frame(labels[["finding", "study_id"]])
    return labels[idx.isin(keep)]


def _design(
    preds: pd.DataFrame, labels: pd.DataFrame, n_resamples: int, dependent: object
) -> dict[str, object]:
    """The latent estimate and its comparators (``latent_comparators.csv``) beside the consensus AUC on the same
    studies (those some reader labels), each model and finding."""
    lat = evaluate_latent_auc(
        preds,
        labels,
        readers=list(READERS),
        n_resamples=n_resamples,
        rng=0,
        dependent=dependent,
        unlabeled="drop",
    )
    comp = lat.comparators.pivot_table(index=["model", "finding"], columns="reference", values="auc")
    studied = labels[labels["source"].isin(READERS)][["finding", "study_id"]].drop_duplicates()
    cons = labels[labels["source"] == "consensus"].merge(studied, on=["finding", "study_id"])
    truth = evaluate_auc(preds, cons, references=["consensus"], n_resamples=0, unlabeled="drop").table
    truth = truth[truth["finding"].isin(FINDINGS) & (truth["model"] != "Mean")]
    comp["consensus"] = truth.set_index(["model", "finding"])["auc"]
    return {"result": lat, "wide": comp, "n_studies": int(studied.groupby("finding").size().min())}


def _order_distance(wide: pd.DataFrame, column: str) -> float:
    """Mean over the findings of Kendall's tau distance (share of discordant model pairs) between the models'
    order under ``column`` and under the consensus."""
    from scipy.stats import kendalltau

    taus = [kendalltau(g[column], g["consensus"]).statistic for _, g in wide.groupby(level="finding")]
    return float(np.mean([(1 - t) / 2 for t in taus]))


def measure(folder: Path, n_resamples: int = 0, dependent: object = None) -> dict[str, object]:
    """Mean |ΔAUC| to the 5-radiologist consensus and the models' order distance to the consensus order, of the
    latent estimate and its comparators, on both designs: every study some reader labels (``all``) and only the
    studies every reader labels (``every_reader``); without ``dependent`` (the default, ``'flagged'``: the pairs
    the checks flag grouped), also the fit with ``dependent='none'``, every reader independent given the truth."""
    t0 = time.perf_counter()
    preds, labels = _read(Path(folder))
    labels = labels[labels["finding"].isin(FINDINGS)]
    preds = preds[preds["finding"].isin(FINDINGS)]
    designs = {"all": labels, "every_reader": _every_reader(labels)}
    rows, out, verdicts = [], {}, []
    for name, lab in designs.items():
        d = _design(preds, lab, n_resamples, dependent)
        out[name] = d
        wide = d["wide"]
        refs = ["latent", "dawid_skene_hard", "dawid_skene_soft", "majority_vote", "best_reader"]
        verdicts.append(_verdict(name, d))
        if dependent is None:
            # every reader independent given the truth, whatever the checks say
            independent = _design(preds, lab, n_resamples, INDEPENDENT)
            out[f"{name}, {INDEPENDENT_ROW}"] = independent
            wide[INDEPENDENT_ROW] = independent["wide"]["latent"]
            refs.insert(1, INDEPENDENT_ROW)
            verdicts.append(_verdict(f"{name}, {INDEPENDENT_ROW}", independent))
        for ref in refs:
            delta = wide[ref] - wide["consensus"]
            rows.append(
                {
                    "design": name,
                    "reference": ref,
                    "mean |ΔAUC|": float(delta.abs().mean()),
                    "mean ΔAUC": float(delta.mean()),
                    "order distance": _order_distance(wide, ref),
                    "min studies per finding": d["n_studies"],
                }
            )
    return {
        "summary": pd.DataFrame(rows),
        "verdict": pd.DataFrame(verdicts),
        "designs": out,
        "seconds": time.perf_counter() - t0,
    }


def _verdict(design: str, d: dict[str, object]) -> dict[str, object]:
    """What the output says against hard labels (summary.md's key finding: the findings where the latent AUCs
    differ from the hard Dawid–Skene AUCs by less than their own spread across leaving out a reader and the score
    models), and the mean |ΔAUC| to the consensus of the latent and hard Dawid–Skene AUCs on the findings it calls
    distinguishable and on the others."""
    v = d["result"].against_hard_labels()
    wide = d["wide"]
    err = wide[["latent", "dawid_skene_hard"]].sub(wide["consensus"], axis=0).abs()
    err = err.groupby(level="finding").mean()
    apart = v.loc[v["distinguishable"], "finding"].tolist()
    same = v.loc[~v["distinguishable"], "finding"].tolist()
    return {
        "design": design,
        "called distinguishable": ", ".join(apart) or "none",
        "latent there": float(err.loc[apart, "latent"].mean()) if apart else float("nan"),
        "hard DS there": float(err.loc[apart, "dawid_skene_hard"].mean()) if apart else float("nan"),
        "called no better than hard labels": ", ".join(same) or "none",
        "latent elsewhere": float(err.loc[same, "latent"].mean()) if same else float("nan"),
        "hard DS elsewhere": float(err.loc[same, "dawid_skene_hard"].mean()) if same else float("nan"),
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
    dep = (
        [tuple(g.split(",")) for g in sys.argv[3:]]
        if len(sys.argv) > 2 and sys.argv[2] == "dependent"
        else None
    )
    m = measure(Path(sys.argv[1]), dependent=dep)
    print(m["summary"].round(4).to_string(index=False))
    print(m["verdict"].round(4).to_string(index=False))
    print(f"{m['seconds']:.0f} s")
