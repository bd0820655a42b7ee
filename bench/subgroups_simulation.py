"""Subgroup gaps with a known truth, and the subgroup bootstrap beside a Fairlearn loop.

- :func:`measure`: ``n_sets`` simulated sets (:func:`cxreval.subgroups.simulate_subgroup_set`) of one model that scores a finding equally well in groups A and B
  (no gap) and a labeller whose sensitivity is 0.15 lower in B (0.75 against 0.9; specificity 0.98); each set
  evaluated by :func:`cxreval.subgroups.evaluate_subgroups` under the truth and under the labeller. The share of
  sets where B's AUC gap is flagged (Holm-adjusted, 0.05) under each: the test's size under the truth (the target
  <= 0.05) and its power under the labeller.
- :func:`speed`: the patient bootstrap of every model x finding x group (``n_groups`` groups of one attribute)
  by cxreval, beside a loop of Fairlearn ``MetricFrame`` (AUC, recall, selection rate) over explicit resampled
  study indices, timed on ``n_peer`` replicates and scaled to ``n_resamples``.

Usage: python bench/subgroups_simulation.py [N_SETS]
"""

from __future__ import annotations

import sys
import time

import numpy as np
import pandas as pd
from scipy.stats import binomtest

from cxreval.bootstrap import draw_plan
from cxreval.options import Resampling
from cxreval.subgroups import evaluate_subgroups, simulate_subgroup_set

__all__ = ["measure", "speed"]


def _rate(flags: list[bool]) -> dict[str, float]:
    k, n = int(sum(flags)), len(flags)
    ci = binomtest(k, n).proportion_ci(0.95)
    return {"rate": k / n, "low": float(ci.low), "high": float(ci.high), "n": n}


def measure(n_sets: int, n_resamples: int, *, n_studies: int = 5000, seed: int = 0) -> dict[str, object]:
    """The share of sets whose group-B gap is flagged, per reference and metric (AUC, specificity, FNR)."""
    rng = np.random.default_rng(seed)
    flags: dict[tuple[str, str], list[bool]] = {}
    verdicts: list[str] = []
    t0 = time.perf_counter()
    for k in range(n_sets):
        sim = simulate_subgroup_set(n_studies, rng=rng)
        res = evaluate_subgroups(
            sim.predictions,
            sim.labels,
            sim.metadata,
            by=["group"],
            resampling=Resampling(n_resamples=n_resamples, rng=seed + k),
            calibration=False,
        )
        b = res.table[res.table["group"] == "B"]
        for row in b.itertuples():
            if row.metric in ("auc", "specificity", "fnr"):
                flags.setdefault((row.reference, row.metric), []).append(bool(row.significant))
        v = res.verdicts[(res.verdicts["group"] == "B") & (res.verdicts["metric"] == "auc")]
        verdicts.append(str(v["verdict"].iloc[0]))
    return {
        "rates": {key: _rate(f) for key, f in sorted(flags.items())},
        "verdicts": pd.Series(verdicts).value_counts().to_dict(),
        "seconds": time.perf_counter() - t0,
    }


def _speed_tables(rng: np.random.Generator, n: int, n_models: int, n_findings: int, n_groups: int):
    ids = [f"s{i}" for i in range(n)]
    patients = [f"p{i // 2}" for i in range(n)]
    from cxreval.findings import ALL_FINDINGS

    findings = list(ALL_FINDINGS[:n_findings])
    truth = rng.random((n_findings, n)) < 0.2
    preds = pd.DataFrame(
        {
            "study_id": np.tile(np.repeat(ids, n_findings), n_models),
            "model": np.repeat([f"m{k}" for k in range(n_models)], n * n_findings),
            "finding": np.tile(findings, n * n_models),
            "score": np.concatenate(
                [
                    1 / (1 + np.exp(-rng.normal(truth.T.astype(float) * 1.5 - 0.75, 1.0))).ravel()
                    for _ in range(n_models)
                ]
            ),
        }
    )
    labels = pd.DataFrame(
        {
            "study_id": np.repeat(ids, n_findings),
            "patient_id": np.repeat(patients, n_findings),
            "finding": np.tile(findings, n),
            "source": "truth",
            "state": np.where(truth.T.ravel(), "positive", "negative"),
        }
    )
    meta = pd.DataFrame({"study_id": ids, "group": [f"g{i % n_groups}" for i in range(n)]})
    return preds, labels, meta


def speed(
    n_studies: int,
    n_models: int,
    n_findings: int,
    n_groups: int,
    n_resamples: int,
    n_peer: int,
    *,
    seed: int = 0,
) -> dict[str, float]:
    """Seconds of cxreval's subgroup bootstrap and of a Fairlearn loop (scaled from ``n_peer`` replicates)."""
    from fairlearn.metrics import MetricFrame, selection_rate
    from sklearn.metrics import recall_score, roc_auc_score

    rng = np.random.default_rng(seed)
    preds, labels, meta = _speed_tables(rng, n_studies, n_models, n_findings, n_groups)
    t0 = time.perf_counter()
    evaluate_subgroups(
        preds,
        labels,
        meta,
        by=["group"],
        operating_point="threshold=0.5",
        resampling=Resampling(n_resamples=n_resamples, rng=seed),
        calibration=False,
    )
    ours = time.perf_counter() - t0
    wide = preds.pivot_table(index="study_id", columns=["model", "finding"], values="score").sort_index()
    y = (
        labels.pivot_table(index="study_id", columns="finding", values="state", aggfunc="first").sort_index()
        == "positive"
    )
    groups = meta.set_index("study_id").loc[wide.index, "group"].to_numpy()
    plan = draw_plan(
        labels.drop_duplicates("study_id").set_index("study_id").loc[wide.index, "patient_id"].to_numpy(),
        n_resamples=n_peer,
        rng=seed,
    )
    metrics = {
        "auc": roc_auc_score,
        "recall": lambda t, p: recall_score(t, p >= 0.5),
        "selection_rate": lambda t, p: selection_rate(t, p >= 0.5),
    }
    t0 = time.perf_counter()
    for b in range(n_peer):
        idx = plan.study_indices(b)
        for (_model, finding), s in wide.items():
            _ = MetricFrame(
                metrics=metrics,
                y_true=y[finding].to_numpy()[idx],
                y_pred=s.to_numpy()[idx],
                sensitive_features=groups[idx],
            ).by_group
    peer = (time.perf_counter() - t0) / n_peer * n_resamples
    return {"cxreval_s": ours, "fairlearn_s": peer, "ratio": peer / ours}


if __name__ == "__main__":
    out = measure(int(sys.argv[1]) if len(sys.argv) > 1 else 100, 200)
    for key, r in out["rates"].items():
        print(key, f"{r['rate']:.3f} [{r['low']:.3f}, {r['high']:.3f}] of {r['n']}")
    print(out["verdicts"], f"{out['seconds']:.0f} s")
