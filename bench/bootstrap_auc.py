"""Benchmark: patient-bootstrap AUC, cxreval vs a loop of sklearn.metrics.roc_auc_score on the same plan.

Usage::

    python bench/bootstrap_auc.py [--loop-replicates 50] [--nih-loop-replicates 10] [--repeats 3] [--skip-nih]
                                  [--full-loop]

1. Synthetic: 35 models x 4 findings x 3 references x 650 studies (of ~200 patients, 1-5 studies each,
   rounded scores so ties occur, ~5% uncertain labels excluded), 1000 replicates.
2. Real: the 10 NIH models' predictions (22,433 images, 6,187 patients, 14 findings) against the
   ChestX-ray14 text-mined labels, 2000 replicates (needs ../shared/data and `cxreval data fetch`).

What is timed (``time.perf_counter``, one process, one thread each):

* cxreval, computation: ``evaluate_auc_prepared(prep, ...)`` on the validated arrays -- drawing the patient-level plan,
  one sort per model x finding, point AUCs, every replicate of every AUC, percentile CIs and the result table.
* cxreval, validation: ``prepare_inputs`` -- validating the prediction and label tables and laying them out as
  arrays (``evaluate_auc(preds, labels)`` is exactly ``prepare_inputs`` followed by ``evaluate_auc_prepared(prep)``);
  reported separately.
* Loop: for each replicate of the *same* plan, ``plan.study_indices(b)`` (the resampled studies), and for every
  reference x finding the resampled labels (uncertain/missing excluded), then ``roc_auc_score`` for every model.
  Its inputs (per model x finding score arrays, per finding x reference 0/1/NaN label arrays, aligned to the
  plan's studies) are built before the clock starts. It is timed on the first ``--loop-replicates`` replicates
  and scaled linearly to the full count (every replicate does the same work); ``--full-loop`` runs all.

cxreval's computation is timed ``--repeats`` times (median reported). On the timed replicates the two must
agree to 1e-12 with the same undefined replicates; with ``--full-loop`` the percentile CIs are compared too.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import time
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.metrics import roc_auc_score

from cxreval.bootstrap import summarize_distribution
from cxreval.classification import evaluate_auc_prepared
from cxreval.schema import binarize
from cxreval.stats import prepare_inputs

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "data"


def synthetic(
    n_models: int = 35, n_findings: int = 4, n_refs: int = 3, n_studies: int = 650, rng: int = 0
) -> tuple[pd.DataFrame, pd.DataFrame]:
    g = np.random.default_rng(rng)
    per = g.integers(1, 6, size=n_studies)  # studies per patient
    pat = np.repeat(np.arange(n_studies), per)[:n_studies]
    studies = [f"s{i:04d}" for i in range(n_studies)]
    findings = ["Atelectasis", "Consolidation", "Lung Opacity", "Effusion"][:n_findings]
    truth = g.random((n_findings, n_studies)) < 0.3
    labs = []
    for r in range(n_refs):
        for j, f in enumerate(findings):
            st = np.where(truth[j] ^ (g.random(n_studies) < 0.1), "positive", "negative").astype(object)
            st[g.random(n_studies) < 0.05] = "uncertain"
            labs.append(
                pd.DataFrame(
                    {
                        "study_id": studies,
                        "patient_id": [f"p{p}" for p in pat],
                        "finding": f,
                        "source": f"R{r}",
                        "state": st,
                    }
                )
            )
    preds = []
    for m in range(n_models):
        for j, f in enumerate(findings):
            preds.append(
                pd.DataFrame(
                    {
                        "study_id": studies,
                        "model": f"M{m:02d}",
                        "finding": f,
                        "score": np.round(truth[j] * g.random() * 1.5 + g.normal(size=n_studies), 2),
                    }
                )
            )
    return pd.concat(preds, ignore_index=True), pd.concat(labs, ignore_index=True)


def sklearn_loop(res, preds: pd.DataFrame, labels: pd.DataFrame, n_rep: int) -> tuple[float, np.ndarray]:
    """roc_auc_score over the first n_rep replicates of res.plan; returns seconds and (models, findings, refs, n_rep)."""
    plan = res.plan
    studies = np.asarray(plan.study_ids)
    fs = [f for f in res.findings if f not in ("macro", "micro")]
    S = {}
    for (m, f), g in preds.groupby(["model", "finding"]):
        S[(m, f)] = g.set_index("study_id")["score"].reindex(studies).to_numpy()
    Y = {}
    for (f, r), g in labels.groupby(["finding", "source"]):
        Y[(f, r)] = (
            pd.Series(binarize(g["state"].to_numpy()), index=g["study_id"].to_numpy())
            .reindex(studies)
            .to_numpy()
        )
    out = np.full((len(res.models), len(fs), len(res.references), n_rep), np.nan)
    t0 = time.perf_counter()
    for b in range(n_rep):
        idx = plan.study_indices(b)
        for k, r in enumerate(res.references):
            for j, f in enumerate(fs):
                y = Y[(f, r)][idx]
                ok = np.isfinite(y)
                yb = y[ok]
                if yb.min() == yb.max():
                    continue
                ii = idx[ok]
                for i, m in enumerate(res.models):
                    out[i, j, k, b] = roc_auc_score(yb, S[(m, f)][ii])
    return time.perf_counter() - t0, out


def run(
    name: str, preds: pd.DataFrame, labels: pd.DataFrame, n_resamples: int, loop_rep: int, repeats: int, **kw
) -> dict:
    load0 = os.getloadavg()[0]
    t0, c0 = time.perf_counter(), time.process_time()
    prep = prepare_inputs(
        preds,
        labels,
        references=None,
        findings=None,
        policy="exclude",
        not_mentioned="negative",
        model_groups=None,
        unlabeled="error",
        studies="each",
    )
    t_prep, c_prep = time.perf_counter() - t0, time.process_time() - c0
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        res = evaluate_auc_prepared(
            prep,
            n_resamples=n_resamples,
            confidence_level=0.95,
            rng=0,
            plan=None,
            shard_size=None,
            executor=None,
            **kw,
        )
        times.append(time.perf_counter() - t0)
    t_comp = statistics.median(times)
    loop_rep = min(loop_rep, n_resamples)
    t_loop, loop = sklearn_loop(res, preds, labels, loop_rep)
    nf = loop.shape[1]
    mine = res.distribution[:, :nf, :, :loop_rep]
    diff = float(np.nanmax(np.abs(mine - loop)))
    same_nan = bool(np.array_equal(np.isnan(mine), np.isnan(loop)))
    t_loop_full = t_loop * n_resamples / loop_rep
    row = {
        "benchmark": name,
        "models": len(res.models),
        "findings": nf,
        "references": len(res.references),
        "studies": res.plan.n_studies,
        "patients": res.plan.n_patients,
        "replicates": n_resamples,
        "auc_per_replicate": int(np.prod(loop.shape[:3])),
        "cxreval_validation_s": t_prep,
        "cxreval_validation_cpu_s": c_prep,
        "cxreval_compute_s": t_comp,
        "cxreval_compute_runs_s": [round(t, 3) for t in times],
        "loop_replicates_timed": loop_rep,
        "loop_s_timed": t_loop,
        "loop_s_full": t_loop_full,
        "speedup_compute": t_loop_full / t_comp,
        "speedup_with_validation": t_loop_full / (t_comp + t_prep),
        "max_abs_diff": diff,
        "same_undefined": same_nan,
        "load_avg_1min": f"{load0:.1f} -> {os.getloadavg()[0]:.1f}",
    }
    if loop_rep == n_resamples:
        a = summarize_distribution(mine)
        b = summarize_distribution(loop)
        row["ci_max_abs_diff"] = float(
            max(np.nanmax(np.abs(a["ci_low"] - b["ci_low"])), np.nanmax(np.abs(a["ci_high"] - b["ci_high"])))
        )
    if not (diff < 1e-12 and same_nan):
        raise SystemExit(
            f"{name}: cxreval and the loop disagree (max abs diff {diff}, same undefined {same_nan})"
        )
    return row


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--loop-replicates", type=int, default=50)
    ap.add_argument("--nih-loop-replicates", type=int, default=10)
    ap.add_argument("--repeats", type=int, default=3, help="timed runs of cxreval's computation (median)")
    ap.add_argument("--full-loop", action="store_true", help="run the sklearn loop over every replicate")
    ap.add_argument("--skip-nih", action="store_true")
    a = ap.parse_args()
    rows = []
    preds, labels = synthetic()
    rows.append(
        run(
            "synthetic 35x4x3x650",
            preds,
            labels,
            1000,
            1000 if a.full_loop else a.loop_replicates,
            a.repeats,
            macro=True,
            micro=False,
            mean_over_models=True,
        )
    )
    print(rows[-1], flush=True)
    if not a.skip_nih:
        from cxreval.datasets import nih
        from cxreval.datasets.nih_predictions import load_predictions

        p = load_predictions(SHARED / "nih_fold_predictions").table
        lab = nih.load_labels().table
        lab = lab[lab.study_id.isin(set(p.study_id))]
        rows.append(
            run(
                "NIH 10 models x 14 findings, 22,433 images",
                p,
                lab,
                2000,
                2000 if a.full_loop else a.nih_loop_replicates,
                a.repeats,
                macro=False,
                micro=False,
                mean_over_models=False,
            )
        )
        print(rows[-1], flush=True)
    df = pd.DataFrame(rows)
    import scipy
    import sklearn

    print(
        f"\nmachine: {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, python "
        f"{platform.python_version()}, numpy {np.__version__}, scipy {scipy.__version__}, "
        f"scikit-learn {sklearn.__version__}"
    )
    cols = [
        "benchmark",
        "replicates",
        "auc_per_replicate",
        "cxreval_validation_s",
        "cxreval_compute_s",
        "loop_replicates_timed",
        "loop_s_timed",
        "loop_s_full",
        "speedup_compute",
        "speedup_with_validation",
        "max_abs_diff",
        "load_avg_1min",
    ]
    print(df[cols].to_string(index=False))


if __name__ == "__main__":
    main()
