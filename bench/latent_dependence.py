"""The latent-truth AUC when its assumption holds and when it does not: simulated cases with a known truth.

Written apart from cxreval's own latent-class code: the study sets, the truth, the readers' labels and the
models' scores come from numpy alone (:func:`simulate_set`); cxreval is called only through its public
:func:`cxreval.latent.evaluate_latent_auc`, as ``classify --latent-truth`` runs it by default (``score_model``
left at its default, a patient bootstrap of ``n_resamples`` replicates); the true-label AUCs are scikit-learn's
``roc_auc_score`` of each model's scores against the simulated truth of the same studies. The comparators are
computed here: hard Dawid-Skene labels (an EM of the readers alone, :func:`dawid_skene_posterior`, thresholded at
0.5), the hard majority vote (ties left out) and the best single reader (the reader with the highest
sensitivity + specificity against the simulated truth of the set: an oracle's pick).

Every set: ``n`` studies (500-2,000), ``T ~ Bernoulli(prevalence)``, four models of known true-label AUC
(:data:`MODEL_AUCS`: binormal with unit within-class variance, the positives' mean ``sqrt(2) Phi^-1(AUC)``; the
second model's score is ``exp`` of its binormal score, the same AUC), readers with a sensitivity and a specificity
each. The cases (:data:`CASES`):

- ``independent``: 3-5 readers, sensitivity and specificity from U(0.70, 0.92), prevalence U(0.10, 0.30), errors
  independent given the truth: the latent-class model holds.
- ``dependent pair, declared`` / ``dependent pair, not declared``: as ``independent``, but the second reader copies
  the first reader's label with probability U(0.3, 0.6) (else labels on its own): two labellers of one report. The
  declared case draws 4-5 readers: a declared pair among three leaves two independent readers, which the library
  refuses as not identified (tested in tests/latent), so three-reader sets would only thin the comparison. In
  the declared case the pair is passed as ``dependent=[(first, second)]`` when the installed
  ``evaluate_latent_auc`` takes that parameter (found with :func:`inspect.signature`); otherwise the case reports
  "not available in this version".
- ``hard cases, strong`` / ``hard cases, mild``: a latent per-study difficulty ``D ~ N(0, 1)`` raises every
  reader's error (logit of the chance of a correct label minus ``gamma D``) and moves every model's score toward
  the other class (within-class score ``mean + rho (+-D) + sqrt(1 - rho^2) e``, the sign against the class, so
  the within-class variance and the true AUC stay those of :data:`MODEL_AUCS`); strong ``rho = 0.6, gamma = 1.2``,
  mild ``rho = 0.3, gamma = 0.5``.
- ``prevalence 0.02-0.05``: as ``independent`` at prevalence U(0.02, 0.05).
- ``one expert, two weak readers``: three readers, the expert's sensitivity and specificity U(0.93, 0.97), the
  others' U(0.62, 0.72).

Per case and method: mean bias (estimate - true-label AUC over every set x model), mean |bias| (the absolute
mean error per model, averaged over the four models), RMSE, coverage of the 95% interval (the latent estimate's
own; the hard references' a percentile bootstrap with their labels held fixed, as ``classify`` treats a fixed
reference, on the same number of replicates), the share of sets whose highest estimate is the model with the
highest true-label AUC, and for the latent estimate the share of sets whose output flags the assumption
(:func:`assumption_flags`) and the share it refuses as not identified (``NotIdentifiedError``, e.g. a declared
pair among three readers leaves two independent ones); a refused set is left out of every method's figures.

Usage: python bench/latent_dependence.py [--quick] [--sets N] [--resamples B] [--seed S] [--case NAME ...]
"""

from __future__ import annotations

import argparse
import inspect
import sys
import time
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.stats import norm
from sklearn.metrics import roc_auc_score

from cxreval.latent import NotIdentifiedError, evaluate_latent_auc

__all__ = [
    "CASES",
    "METHODS",
    "MODEL_AUCS",
    "Case",
    "acceptance",
    "assumption_flags",
    "dawid_skene_posterior",
    "declares_dependence",
    "measure",
    "simulate_set",
    "summarise",
]

#: The four models' true-label AUCs (binormal, unit within-class variance).
MODEL_AUCS = (0.72, 0.78, 0.84, 0.88)
MODELS = tuple(f"model_{k + 1}" for k in range(len(MODEL_AUCS)))
METHODS = ("latent (default)", "Dawid-Skene (hard)", "majority vote (hard)", "best single reader")
#: The latent estimate with every reader independent given the truth (only in cases with ``independent_row``).
INDEPENDENT = "latent (dependent='none')"
#: A reader pair whose |z| of the both-positive share is at least this is read as flagged (the library's own
#: threshold of its score-association check, documented in cxreval.latent's diagnostics).
PAIR_FLAG_Z = 3.0
FINDING = "Effusion"
CHECKS = ("pair check", "score check", "auc.csv")
NOT_AVAILABLE = "not available in this version (evaluate_latent_auc takes no dependent=)"


@dataclass(frozen=True)
class Case:
    """One simulated case: readers, accuracies, prevalence, shared errors and difficulty."""

    name: str
    readers: tuple[int, int] = (3, 5)
    accuracy: tuple[float, float] = (0.70, 0.92)
    prevalence: tuple[float, float] = (0.10, 0.30)
    copy: tuple[float, float] | None = None
    declared: bool = False
    rho: float = 0.0
    gamma: float = 0.0
    expert: bool = False
    rule: str = "modelled"
    independent_row: bool = (
        False  # also run dependent='none' (every reader independent, whatever the checks say)
    )


CASES = (
    Case("independent", rule="independent"),
    Case("dependent pair, declared", readers=(4, 5), copy=(0.3, 0.6), declared=True),
    Case("dependent pair, not declared", copy=(0.3, 0.6), rule="not identified", independent_row=True),
    Case("hard cases, strong", rho=0.6, gamma=1.2, rule="not identified"),
    Case("hard cases, mild", rho=0.3, gamma=0.5, rule="not identified"),
    Case("prevalence 0.02-0.05", prevalence=(0.02, 0.05)),
    Case("one expert, two weak readers", readers=(3, 3), expert=True),
)


def simulate_set(case: Case, rng: np.random.Generator, n_range: tuple[int, int] = (500, 2000)) -> dict:
    """One study set of ``case``: truth, readers' 0/1 labels (n, R), the models' scores (M, n)."""
    n = int(rng.integers(n_range[0], n_range[1] + 1))
    r = int(rng.integers(case.readers[0], case.readers[1] + 1))
    prev = float(rng.uniform(*case.prevalence))
    truth = rng.random(n) < prev
    while truth.sum() < 5 or (~truth).sum() < 5:
        truth = rng.random(n) < prev
    if case.expert:
        se = np.r_[rng.uniform(0.93, 0.97), rng.uniform(0.62, 0.72, r - 1)]
        sp = np.r_[rng.uniform(0.93, 0.97), rng.uniform(0.62, 0.72, r - 1)]
    else:
        se, sp = rng.uniform(*case.accuracy, r), rng.uniform(*case.accuracy, r)
    difficulty = rng.normal(size=n) if case.gamma or case.rho else np.zeros(n)
    acc = np.where(truth[:, None], se[None], sp[None])
    logit = np.log(acc / (1 - acc)) - case.gamma * difficulty[:, None]
    correct = rng.random((n, r)) < 1 / (1 + np.exp(-logit))
    labels = np.where(correct, truth[:, None], ~truth[:, None]).astype(int)
    copy = float(rng.uniform(*case.copy)) if case.copy else 0.0
    if copy:
        copied = rng.random(n) < copy
        labels[copied, 1] = labels[copied, 0]
    toward_other = np.where(truth, -1.0, 1.0) * difficulty
    scores = np.empty((len(MODEL_AUCS), n))
    for k, auc in enumerate(MODEL_AUCS):
        x = np.sqrt(2) * norm.ppf(auc) * truth
        x = x + case.rho * toward_other + np.sqrt(1 - case.rho**2) * rng.normal(size=n)
        scores[k] = np.exp(x) if k == 1 else x
    return {"truth": truth, "labels": labels, "scores": scores, "copy": copy, "prevalence": prev}


def dawid_skene_posterior(labels: np.ndarray, *, max_iter: int = 500, tol: float = 1e-8) -> np.ndarray:
    """P(T = 1 | labels) of a two-class Dawid-Skene model of the readers alone (EM from the majority vote)."""
    y = labels.astype(float)
    p = y.mean(axis=1)
    for _ in range(max_iter):
        pi = np.clip(p.mean(), 1e-6, 1 - 1e-6)
        se = np.clip((p @ y) / p.sum(), 1e-6, 1 - 1e-6)
        sp = np.clip(((1 - p) @ (1 - y)) / (1 - p).sum(), 1e-6, 1 - 1e-6)
        l1 = np.log(pi) + y @ np.log(se) + (1 - y) @ np.log1p(-se)
        l0 = np.log1p(-pi) + y @ np.log1p(-sp) + (1 - y) @ np.log(sp)
        new = 1 / (1 + np.exp(l0 - l1))
        if np.max(np.abs(new - p)) < tol:
            return new
        p = new
    return p


def _weighted_auc(y: np.ndarray, s: np.ndarray, w: np.ndarray) -> float:
    """Mann-Whitney AUC of 0/1 ``y`` with case weights ``w`` (bootstrap multiplicities); ties count 1/2."""
    u, inv = np.unique(s, return_inverse=True)
    pos = np.bincount(inv, weights=w * y, minlength=u.size)
    neg = np.bincount(inv, weights=w * (1 - y), minlength=u.size)
    below = np.cumsum(neg) - neg
    tot = pos.sum() * neg.sum()
    return float((pos * (below + 0.5 * neg)).sum() / tot) if tot > 0 else float("nan")


def _hard_estimates(y: np.ndarray, s: np.ndarray, counts: np.ndarray) -> tuple[float, float, float]:
    """AUC against hard labels ``y`` (NaN: left out) and its percentile 95% interval over ``counts`` (B, n)."""
    keep = ~np.isnan(y)
    yk, sk = y[keep], s[keep]
    if yk.min(initial=1) == yk.max(initial=0):
        return float("nan"), float("nan"), float("nan")
    reps = np.array([_weighted_auc(yk, sk, c[keep].astype(float)) for c in counts])
    reps = reps[np.isfinite(reps)]
    lo, hi = np.quantile(reps, [0.025, 0.975]) if reps.size else (np.nan, np.nan)
    return float(roc_auc_score(yk.astype(int), sk)), float(lo), float(hi)


def declares_dependence() -> bool:
    """Whether the installed :func:`evaluate_latent_auc` takes ``dependent=`` (reader groups sharing errors)."""
    return "dependent" in inspect.signature(evaluate_latent_auc).parameters


def assumption_flags(res) -> dict[str, bool]:
    """What the latent result's output says about its assumption, per check: a reader pair agreeing more than
    the model allows (|z_both_positive| or, where the output has it, |z_agreement_joint| >= :data:`PAIR_FLAG_Z`;
    or, with ``dependent='flagged'``, a pair of ``flagged_pairs``), a flagged score-reader association, and any
    column of ``auc.csv`` whose name holds ``flag`` or ``verdict`` (set, nonzero, or a verdict other than ok)."""
    agreement = res.reader_agreement
    z = [c for c in ("z_both_positive", "z_agreement_joint") if c in agreement]
    pair = bool(z) and agreement[z].abs().ge(PAIR_FLAG_Z).any(axis=None)
    pair |= bool(getattr(res, "flagged_pairs", None))  # pairs flagged on the first fit (grouped or left)
    score = bool(res.score_association["flagged"].any())
    cols = [c for c in res.table.columns if "flag" in c.lower() or "verdict" in c.lower()]
    table = False
    for c in cols:
        v = res.table[c].dropna()
        if v.dtype == object:
            table |= bool(
                v.astype(str)
                .str.strip()
                .str.lower()
                .isin(["", "ok", "none", "holds", "false", "0"])
                .eq(False)
                .any()
            )
        else:
            table |= bool(v.astype(float).ne(0).any())
    return {"pair check": bool(pair), "score check": score, "auc.csv": table}


def _latent(sim: dict, ids: list[str], case: Case, n_resamples: int, seed: int, dependent=None):
    n, r = sim["labels"].shape
    readers = [f"R{j + 1}" for j in range(r)]
    labels = pd.DataFrame(
        {
            "study_id": np.tile(ids, r),
            "patient_id": np.tile(ids, r),
            "finding": FINDING,
            "source": np.repeat(readers, n),
            "state": np.where(sim["labels"].T.ravel() == 1, "positive", "negative"),
        }
    )
    preds = pd.DataFrame(
        {
            "study_id": np.tile(ids, len(MODELS)),
            "model": np.repeat(MODELS, n),
            "finding": FINDING,
            "score": sim["scores"].ravel(),
        }
    )
    extra = {"dependent": [(readers[0], readers[1])]} if case.declared else {}
    if dependent is not None:
        extra = {"dependent": dependent}
    res = evaluate_latent_auc(preds, labels, readers=readers, n_resamples=n_resamples, rng=seed, **extra)
    t = res.table[res.table["finding"] == FINDING].set_index("model").loc[list(MODELS)]
    return t["auc"].to_numpy(float), t["ci_low"].to_numpy(float), t["ci_high"].to_numpy(float), res


def measure(case: Case, n_sets: int, n_resamples: int, seed: int = 0, n_range=(500, 2000)) -> dict:
    """Every method's estimate, interval and ranking per simulated set of ``case`` (rows: set x model x method)."""
    if case.declared and not declares_dependence():
        return {"case": case.name, "rows": [], "sets": [], "unavailable": NOT_AVAILABLE, "seconds": 0.0}
    index = next(k for k, c in enumerate(CASES) if c.name == case.name)
    rng = np.random.default_rng([seed, index])
    rows, sets = [], []
    t0 = time.perf_counter()
    latent_s = 0.0
    for k in range(n_sets):
        sim = simulate_set(case, rng, n_range)
        truth, y = sim["truth"], sim["labels"]
        n = truth.size
        ids = [f"s{i:05d}" for i in range(n)]
        true_auc = np.array([roc_auc_score(truth.astype(int), s) for s in sim["scores"]])
        votes = y.mean(axis=1)
        youden = [(y[truth, j].mean() + 1 - y[~truth, j].mean()) for j in range(y.shape[1])]
        hard = {
            "Dawid-Skene (hard)": (dawid_skene_posterior(y) > 0.5).astype(float),
            "majority vote (hard)": np.where(votes > 0.5, 1.0, np.where(votes < 0.5, 0.0, np.nan)),
            "best single reader": y[:, int(np.argmax(youden))].astype(float),
        }
        counts = rng.multinomial(n, np.full(n, 1 / n), size=max(n_resamples, 1))
        f0 = time.perf_counter()
        facts = {"set": k, "n": n, "readers": y.shape[1], "copy": sim["copy"]}
        try:
            auc, lo, hi, res = _latent(sim, ids, case, n_resamples, seed * 1_000_003 + k)
        except NotIdentifiedError:
            # refused as not identified (e.g. a declared pair among three readers): no method is scored on this
            # set, so that every method is compared on the same sets
            sets.append({**facts, "refused": True, **dict.fromkeys(CHECKS, False)})
            continue
        finally:
            latent_s += time.perf_counter() - f0
        est = {"latent (default)": (auc, lo, hi)}
        if case.independent_row:
            f1 = time.perf_counter()
            try:
                est[INDEPENDENT] = _latent(sim, ids, case, n_resamples, seed * 1_000_003 + k, "none")[:3]
            finally:
                latent_s += time.perf_counter() - f1
        for name, lab in hard.items():
            est[name] = tuple(
                np.array(v) for v in zip(*(_hard_estimates(lab, s, counts) for s in sim["scores"]))
            )
        best = int(np.argmax(true_auc))
        for method, (a, lo_, hi_) in est.items():
            first = bool(np.isfinite(a).all() and int(np.nanargmax(a)) == best)
            for m in range(len(MODELS)):
                rows.append(
                    {
                        "set": k,
                        "model": MODELS[m],
                        "method": method,
                        "error": float(a[m] - true_auc[m]),
                        "covered": bool(lo_[m] <= true_auc[m] <= hi_[m]) if np.isfinite(lo_[m]) else None,
                        "best first": first,
                    }
                )
        sets.append({**facts, "refused": False, **assumption_flags(res)})
    return {
        "case": case.name,
        "rows": rows,
        "sets": sets,
        "seconds": time.perf_counter() - t0,
        "latent_s": latent_s,
    }


def summarise(m: dict) -> pd.DataFrame:
    """One row per method: mean bias, mean |bias| over the models, RMSE, coverage, best first, flagged."""
    if not m["rows"]:
        why = m.get("unavailable") or "refused as not identified in every set"
        return pd.DataFrame({"method": list(METHODS), "unavailable": why})
    rows = pd.DataFrame(m["rows"])
    sets = pd.DataFrame(m["sets"])
    flagged = sets[list(CHECKS)].any(axis=1)
    says_so = flagged | sets["refused"]
    out = []
    for method in [
        *METHODS[:1],
        *([INDEPENDENT] if INDEPENDENT in set(rows["method"]) else []),
        *METHODS[1:],
    ]:
        r = rows[rows["method"] == method]
        err = r["error"].dropna()
        cov = r["covered"].dropna()
        out.append(
            {
                "method": method,
                "mean bias": float(err.mean()),
                "mean |bias|": float(r.groupby("model")["error"].mean().abs().mean()),
                "bias se": float(r.groupby("set")["error"].mean().std() / np.sqrt(r["set"].nunique())),
                "RMSE": float(np.sqrt((err**2).mean())),
                "coverage": float(cov.astype(float).mean()) if len(cov) else float("nan"),
                "best first": float(r.groupby("set")["best first"].first().mean()),
                "flagged": float(flagged.mean()) if method == METHODS[0] else float("nan"),
                "refused": float(sets["refused"].mean()) if method == METHODS[0] else float("nan"),
                "flagged or refused": float(says_so.mean()) if method == METHODS[0] else float("nan"),
            }
        )
    return pd.DataFrame(out)


def acceptance(case: Case, table: pd.DataFrame) -> str:
    """The issue's thresholds for the latent estimate of one case: 'pass' or 'fail (what is missed)'."""
    if "unavailable" in table.columns:
        return "not available" if table["unavailable"].iloc[0].startswith("not available") else "refused"
    lat = table.set_index("method").loc[METHODS[0]]
    ds_first = float(table.set_index("method").loc["Dawid-Skene (hard)", "best first"])
    limit = 0.005 if case.rule == "independent" else 0.02
    accurate = lat["mean |bias|"] <= limit and lat["coverage"] >= 0.90
    missed = []
    if not accurate:
        what = f"|bias| {lat['mean |bias|']:.3f} (<= {limit}), coverage {lat['coverage']:.0%} (>= 90%)"
        if case.rule != "not identified":
            missed.append(what)
        elif lat["flagged or refused"] < 0.90:
            missed.append(f"{what}, or flagged or refused {lat['flagged or refused']:.0%} (>= 90%)")
    if lat["best first"] < ds_first:
        missed.append(f"best first {lat['best first']:.0%} < Dawid-Skene's {ds_first:.0%}")
    return "pass" if not missed else "fail: " + "; ".join(missed)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="3 sets of 300-600 studies per case, 10 replicates")
    ap.add_argument("--sets", type=int, default=None, help="study sets per case (default 50; quick 3)")
    ap.add_argument(
        "--resamples", type=int, default=None, help="bootstrap replicates (default 100; quick 10)"
    )
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--case", action="append", default=[], help="a case's name (default: all); repeatable")
    args = ap.parse_args(argv)
    n_sets = args.sets or (3 if args.quick else 50)
    n_res = args.resamples or (10 if args.quick else 100)
    n_range = (300, 600) if args.quick else (500, 2000)
    for case in CASES:
        if args.case and case.name not in args.case:
            continue
        m = measure(case, n_sets, n_res, seed=args.seed, n_range=n_range)
        t = summarise(m)
        print(f"== {case.name}: {acceptance(case, t)} ({m['seconds']:.0f} s)")
        print(t.to_string(index=False, float_format=lambda v: f"{v:.4f}"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
