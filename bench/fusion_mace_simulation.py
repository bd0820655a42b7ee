"""MACE on simulated readers: model property or defect? cxreval vs crowd-kit 1.4.2.

Simulation (:func:`simulate`): ``n`` binary items (truth NEG=0 / POS=2, prevalence ``prevalence``), each read by
all 5 readers; reader ``j`` answers NEG / UNC / POS with a known confusion matrix (rows: truth NEG, POS),
every reader sometimes answering "uncertain" (UNC=1), never the truth.

Fused by cxreval's ``MajorityVote``, ``DawidSkene`` and ``MACE`` (defaults) and by crowd-kit's ``MACE`` and
``DawidSkene`` (defaults; input sorted by worker, as crowd-kit's MACE needs) on the same annotation table.
Reported per method: accuracy against the binary truth, share of items fused to UNC, sensitivity and
specificity (UNC counts as wrong), the largest ratio "share fused to a state / largest share any reader
gives it" (the warning cxreval's fusion now raises), and the agreement of cxreval's and crowd-kit's MACE.

crowd-kit is *not* a cxreval dependency; run with a separate environment holding both::

    python3 -m venv PEER_VENV
    PEER_VENV/bin/pip install crowd-kit==1.4.2 -e .
    OMP_NUM_THREADS=1 PEER_VENV/bin/python bench/fusion_mace_simulation.py --n 100000
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd

from cxreval.fusion import MACE, DawidSkene, MajorityVote
from cxreval.fusion.diagnostics import state_share_ratios
from cxreval.io import markdown_table

# P(answer NEG, UNC, POS | truth); rows truth NEG, truth POS
CONFUSIONS = {
    "R1": [[0.90, 0.07, 0.03], [0.08, 0.12, 0.80]],
    "R2": [[0.85, 0.10, 0.05], [0.10, 0.15, 0.75]],
    "R3": [[0.80, 0.12, 0.08], [0.15, 0.20, 0.65]],
    "R4": [[0.92, 0.05, 0.03], [0.05, 0.10, 0.85]],
    "R5": [[0.70, 0.20, 0.10], [0.20, 0.25, 0.55]],
}


def simulate(n: int, *, prevalence: float = 0.3, rng: object = 0) -> tuple[pd.DataFrame, pd.Series]:
    """The annotation table (``study_id, source, state``) and the binary truth (0/2) of ``n`` items."""
    gen = np.random.default_rng(rng)
    truth = np.where(gen.random(n) < prevalence, 2, 0)
    ids = np.array([f"s{i:07d}" for i in range(n)])
    frames = []
    for r, conf in CONFUSIONS.items():
        conf = np.asarray(conf)
        p = conf[(truth == 2).astype(int)]
        lab = (gen.random(n)[:, None] > np.cumsum(p, axis=1)).sum(axis=1)
        frames.append(pd.DataFrame({"study_id": ids, "source": r, "state": lab}))
    ann = pd.concat(frames, ignore_index=True)
    return ann, pd.Series(truth, index=pd.Index(ids, name="study_id"))


def summary(
    name: str, fused: pd.Series, truth: pd.Series, ann: pd.DataFrame, seconds: float
) -> dict[str, object]:
    f = fused.reindex(truth.index).to_numpy()
    t = truth.to_numpy()
    ratio = state_share_ratios(ann, fused)
    worst = ratio.loc[ratio["ratio"].idxmax()]
    return {
        "method": name,
        "accuracy": float(np.mean(f == t)),
        "fused_unc": float(np.mean(f == 1)),
        "sensitivity": float(np.mean(f[t == 2] == 2)),
        "specificity": float(np.mean(f[t == 0] == 0)),
        "max_ratio": f"{worst['ratio']:.1f} (state {int(worst['state'])})",
        "seconds": round(seconds, 1),
    }


def measure(n: int, *, prevalence: float = 0.1, seed: int = 0, crowdkit: bool = True) -> dict[str, object]:
    """Fit every method on one simulation: rows of :func:`summary`, the readers' answer shares, the MACE match."""
    ann, truth = simulate(n, prevalence=prevalence, rng=seed)
    rows, fused = [], {}
    for name, est in (
        ("MV", MajorityVote()),
        ("DS", DawidSkene()),
        ("MACE", MACE(rng=0)),
        ("MACE em", MACE(rng=0, method="em")),
    ):
        t0 = time.perf_counter()
        fused[name] = est.fit_predict(ann)
        rows.append(summary(f"cxreval {name}", fused[name], truth, ann, time.perf_counter() - t0))
    if crowdkit:
        from crowdkit.aggregation import MACE as CKMACE
        from crowdkit.aggregation import DawidSkene as CKDawidSkene

        ck = ann.rename(columns={"study_id": "task", "source": "worker", "state": "label"}).sort_values(
            ["worker", "label", "task"]
        )
        for name, est in (("DS", CKDawidSkene()), ("MACE", CKMACE())):
            t0 = time.perf_counter()
            got = est.fit_predict(ck)
            got.index.name = "study_id"
            fused[f"ck {name}"] = got
            rows.append(summary(f"crowd-kit {name}", got, truth, ann, time.perf_counter() - t0))
    shares = ann.groupby("source")["state"].value_counts(normalize=True).unstack(fill_value=0.0)
    same = None
    if "ck MACE" in fused:
        same = float(
            np.mean(
                fused["MACE"].reindex(truth.index).to_numpy()
                == fused["ck MACE"].reindex(truth.index).to_numpy()
            )
        )
    return {"rows": rows, "shares": shares, "same_mace": same}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=100_000, help="items (default 100000)")
    ap.add_argument("--prevalence", type=float, default=0.1, help="share of positive items (default 0.1)")
    ap.add_argument("--seed", type=int, default=0, help="simulation seed")
    ap.add_argument("--no-crowdkit", action="store_true", help="cxreval only")
    a = ap.parse_args()
    m = measure(a.n, prevalence=a.prevalence, seed=a.seed, crowdkit=not a.no_crowdkit)
    print(f"n = {a.n} items x {len(CONFUSIONS)} readers, prevalence {a.prevalence}, seed {a.seed}")
    print("\nreaders' answer shares (NEG, UNC, POS):\n" + m["shares"].round(3).to_string())
    table = pd.DataFrame(m["rows"])
    for c in ("accuracy", "fused_unc", "sensitivity", "specificity"):
        table[c] = table[c].map(lambda v: f"{v:.4f}")
    print("\n" + markdown_table(table))
    if m["same_mace"] is not None:
        print(f"\ncxreval MACE == crowd-kit MACE on {m['same_mace']:.4%} of items")


if __name__ == "__main__":
    main()
