"""The AUC against the latent truth of several noisy readers (cxreval.latent): a simulation with a known truth,
and the CheXpert test set, where four references none of which is in the 5-radiologist consensus are the readers.
"""

from __future__ import annotations

import subprocess

import numpy as np
import pandas as pd

from suites._common import ROOT, SHARED, Context, Figures, Part, bench_module, fmt, missing

TITLE = "Latent truth: the AUC against the truth that noisy readers approximate"

__all__ = ["PARTS", "TITLE"]


def simulation(ctx: Context) -> Figures:
    sim = bench_module("latent_simulation")
    n_sets, n_res = ctx.size((6, 50), (200, 100))
    m = sim.measure(n_sets, n_res, seed=ctx.seed)
    s = sim.summarise(m)
    fig = Figures()
    strata = [label for label, _ in s["strata"]]
    t = fig.table(
        f"{n_sets} simulated study sets x 5 models = {s['cells']} cells: estimate - true-label AUC",
        [
            "method",
            "mean |bias|, design cells",
            "max |bias|, design cells",
            *(f"mean |error|, {label} ({k})" for label, k in s["strata"]),
            "mean error, all cells",
        ],
    )
    for row in s["table"]:
        t.add(
            row["method"],
            fmt(row["mean |bias|"]),
            fmt(row["max |bias|"]),
            *(fmt(row[f"mean |error| {label}"]) for label in strata),
            fmt(row["mean error all cells"], "+.4f"),
        )
        fig.checked[f"{row['method']} | mean |bias|"] = fmt(row["mean |bias|"])
        fig.checked[f"{row['method']} | mean |error|"] = fmt(row["mean |error| all cells"])
        fig.checked[f"{row['method']} | mean error"] = fmt(row["mean error all cells"], "+.4f")
    cov = ", ".join(f"{label} {v:.1%}" for label, v in s["coverage_by_stratum"])
    n_design = s["table"][0]["design cells"]
    t.notes += [
        f"bias = systematic error: the mean signed error over the simulated sets of one design cell, {sim.DESIGN} "
        f"({n_design} design cells with a set); 'mean |bias|' averages its absolute value over the design cells "
        "(the target: <= 0.01), 'mean |error|' the absolute error of single cells (bias + set-to-set noise).",
        f"95% interval of the latent-truth AUC (patient bootstrap, {n_res} replicates, each refitting the model) "
        f"covers the true-label AUC in {s['coverage']:.1%} of cells ({cov}); mean width {s['mean_ci_width']:.3f}; "
        f"{s['not_converged']} replicate fits stopped at max_iter; 'latent' (score_model='auto') chose the "
        f"score-dependent model in {s['auto_dependent_share']:.1%} of cells.",
        "error = estimate - the AUC of the same scores against the simulated truth of the same studies; "
        "'oracle posterior' weights pairs with the posteriors of the true parameters and score densities: the "
        "floor of any posterior-weighted estimate's error (sampling of the truth given the data).",
        f"{m['seconds']:.0f} s in all, {m['latent_seconds']:.0f} s of them in bootstrap_latent_class.",
    ]
    fig.checked["coverage"] = f"{s['coverage']:.4f}"
    n_dep = ctx.size(3, 40)
    md = sim.measure(n_dep, 0, seed=ctx.seed, reader_slope=1.0)
    sd = sim.summarise(md)
    t2 = fig.table(
        f"{n_dep} simulated study sets x 5 models with score-dependent reader errors: estimate - "
        "true-label AUC",
        ["method", "mean |bias|, design cells", "mean |error|, all cells", "mean error, all cells"],
    )
    for row in sd["table"]:
        if row["method"] == "oracle posterior":
            continue
        t2.add(
            row["method"],
            fmt(row["mean |bias|"]),
            fmt(row["mean |error| all cells"]),
            fmt(row["mean error all cells"], "+.4f"),
        )
        fig.checked[f"score-dependent | {row['method']} | mean error"] = fmt(
            row["mean error all cells"], "+.4f"
        )
    t2.notes += [
        "as the table above, but each reader's logit sensitivity rises by 1.0 x U(0.5, 1.5) per unit of a study's "
        "latent difficulty (standard normal) and its logit specificity falls by half as much; every model's "
        "score shares that latent part (correlation 0.7): hard positives are missed by the readers and scored "
        "low by the models (simulate_set(reader_slope=1.0)); point estimates only. 'latent, dependent' is "
        "score_model='dependent' (each reader's accuracy logistic in the score's normal score within the class).",
        f"'latent' (score_model='auto') chose the score-dependent model in {sd['auto_dependent_share']:.1%} of cells; "
        f"{md['seconds']:.0f} s.",
    ]
    return fig


def chexpert(ctx: Context) -> Figures:
    folder = SHARED / "chexpert_test"
    gone = missing(folder / "groundtruth.csv")
    if gone:
        return Figures(unavailable=gone)
    cx = bench_module("latent_chexpert")
    m = cx.measure(folder, n_resamples=ctx.size(0, 200))
    fig = Figures()
    s = m["summary"]
    t = fig.table(
        "CheXpert test set, 10 models x 5 findings, readers bc4, bc6, bc8, chexpert_labeler: AUC - AUC against "
        "the 5-radiologist consensus on the same studies, and the models' order against the consensus order",
        ["design", "reference", "mean |ΔAUC|", "mean ΔAUC", "order distance", "min studies per finding"],
    )
    for row in s.itertuples(index=False):
        t.add(
            row[0], row[1], fmt(float(row[2])), fmt(float(row[3]), "+.4f"), fmt(float(row[4]), ".3f"), row[5]
        )
        fig.checked[f"{row[0]} | {row[1]} | mean |ΔAUC|"] = fmt(float(row[2]))
    t.notes += [
        "latent: `classify --latent-truth --readers bc4,bc6,bc8,chexpert_labeler` (one joint model per finding, "
        "score models averaged by BIC weights); the other rows are its latent_comparators.csv (hard and soft "
        "Dawid-Skene, majority vote with ties left out, the reader with the highest fitted sensitivity + "
        "specificity). Designs: all = every study some reader labels; every_reader = only the studies every "
        "reader labels (an uncertain label excludes the study). Order distance: the share of model pairs ordered "
        "unlike the consensus, mean over the findings.",
        "latent runs with its default dependent='flagged' (each pair either pair check flags on a first fit is "
        "grouped as one reader, per finding, where three independent readers remain); "
        f"{cx.INDEPENDENT_ROW}: `classify --latent-truth --readers bc4,bc6,bc8,chexpert_labeler --dependent none`, "
        "every reader independent given the truth whatever the checks say.",
        _chexpert_acceptance(s, m["verdict"]),
        f"{m['seconds']:.0f} s in all ({ctx.size(0, 200)} bootstrap replicates).",
    ]
    t2 = fig.table(
        "What the output says against hard labels (summary.md's key finding), and mean |ΔAUC| to the consensus "
        "on the findings it calls distinguishable from hard Dawid-Skene labels and on the others",
        [
            "design",
            "called distinguishable",
            "latent there",
            "hard DS there",
            "called no better than hard labels",
            "latent elsewhere",
            "hard DS elsewhere",
        ],
    )
    for v in m["verdict"].to_dict("records"):
        t2.add(
            v["design"],
            v["called distinguishable"],
            fmt(v["latent there"]),
            fmt(v["hard DS there"]),
            v["called no better than hard labels"],
            fmt(v["latent elsewhere"]),
            fmt(v["hard DS elsewhere"]),
        )
        fig.checked[f"{v['design']} | called distinguishable"] = v["called distinguishable"]
    t2.notes += [
        "a finding is called distinguishable when the median over the models of |latent AUC - hard Dawid-Skene "
        "AUC| exceeds the median range of each model's latent AUC across the headline, leaving out each reader "
        "and each score model (latent_sensitivity.csv); elsewhere summary.md says the readers cannot support a "
        "better reference than hard labels. The consensus is not used for the call."
    ]
    return fig


def speed(ctx: Context) -> Figures:
    folder = SHARED / "chexpert_test"
    gone = missing(folder / "groundtruth.csv")
    if gone:
        return Figures(unavailable=gone)
    cx = bench_module("latent_chexpert")
    n_res = ctx.size(100, 1000)
    m = cx.timing(folder, n_resamples=n_res, seed=ctx.seed)
    fig = Figures()
    t = fig.table(
        f"`cxreval classify --latent-truth --readers {','.join(cx.READERS)}` on the CheXpert test set "
        f"({m['n_models']} models x {m['n_findings']} findings x {m['n_studies']} studies, {n_res} replicates)",
        ["replicates", "wall s", "CPU s", "load average before", "load average after"],
    )
    t.add(
        n_res, fmt(m["wall_seconds"], ".1f"), fmt(m["cpu_seconds"], ".1f"), m["load_before"], m["load_after"]
    )
    t.notes += [
        "one process (the command's default executor), on this machine's 2 cores shared with other work: the load "
        "average says how much; wall time above CPU time is time the process waited for a core.",
        "the target: <= 2 min wall for the help's example (1,000 replicates). Each replicate refits the joint "
        "model of a finding by EM from the fit to the data (a warm start), all replicates of a finding at once, "
        "each score model with weight on the data; the sensitivity analyses are point fits.",
    ]
    auc = m["result"].table
    fig.checked["macro AUC, mean over models"] = fmt(float(auc.loc[auc["finding"] == "macro", "auc"].mean()))
    return fig


def _chexpert_acceptance(summary: pd.DataFrame, verdict: pd.DataFrame) -> str:
    """Per design and latent run: the order distance against hard Dawid-Skene's, and the mean |ΔAUC| on the
    findings the output calls distinguishable against hard Dawid-Skene's there (elsewhere the output says the
    readers cannot do better than hard labels)."""
    s = summary.set_index(["design", "reference"])
    words = []
    for v in verdict.to_dict("records"):
        design, _, run = str(v["design"]).partition(", ")
        ref = run or "latent"
        order, ds = (
            float(s.loc[(design, ref), "order distance"]),
            float(s.loc[(design, "dawid_skene_hard"), "order distance"]),
        )
        there = v["latent there"] <= v["hard DS there"] if np.isfinite(v["latent there"]) else True
        words.append(
            f"{design}, {ref}: order {order:.3f} vs hard DS {ds:.3f} ({'pass' if order <= ds else 'fail'}); "
            f"|ΔAUC| where called distinguishable {v['latent there']:.4f} vs hard DS {v['hard DS there']:.4f} "
            f"({'pass' if there else 'fail'})"
        )
    return (
        "acceptance (model order no further from the consensus than hard Dawid-Skene's; |ΔAUC| no larger where "
        "the output does not say the readers cannot do better than hard labels): " + "; ".join(words) + "."
    )


def dependence(ctx: Context) -> Figures:
    sim = bench_module("latent_dependence")
    n_sets, n_res = ctx.size((3, 10), (80, 100))
    n_range = ctx.size((300, 600), (500, 2000))
    fig = Figures()
    t = fig.table(
        f"{n_sets} simulated study sets per case x 4 models: estimate - true-label AUC, interval coverage, "
        "ranking and the output's flags",
        [
            "case",
            "method",
            "mean bias",
            "mean |bias|",
            "RMSE",
            "95% coverage",
            "true best first",
            "sets flagged",
            "sets refused",
            "acceptance",
        ],
    )
    seconds, latent_s, flags, noise = 0.0, 0.0, [], []
    for case in sim.CASES:
        m = sim.measure(case, n_sets, n_res, seed=ctx.seed, n_range=n_range)
        seconds += m["seconds"]
        latent_s += m.get("latent_s", 0.0)
        s = sim.summarise(m)
        verdict = sim.acceptance(case, s)
        if "unavailable" in s.columns:
            t.add(case.name, sim.METHODS[0], s["unavailable"].iloc[0], *([""] * 6), verdict)
            continue
        for k, row in enumerate(s.to_dict("records")):
            first = k == 0
            t.add(
                case.name,
                row["method"],
                fmt(row["mean bias"], "+.4f"),
                fmt(row["mean |bias|"]),
                fmt(row["RMSE"]),
                fmt(row["coverage"], ".1%"),
                fmt(row["best first"], ".0%"),
                fmt(row["flagged"], ".0%") if first else "",
                fmt(row["refused"], ".0%") if first else "",
                verdict if first else "",
            )
            fig.checked[f"{case.name} | {row['method']} | mean bias"] = fmt(row["mean bias"], "+.4f")
        sets = pd.DataFrame(m["sets"])
        checks = ", ".join(f"{c} {sets[c].mean():.0%}" for c in sim.CHECKS)
        three = sets.loc[sets["readers"] == 3, "pair check"]
        flags.append(
            f"{case.name}: {checks}"
            + (f" (pair check with 3 readers: {three.mean():.0%} of {three.size})" if three.size else "")
        )
        noise.append(f"{case.name} {s['bias se'].iloc[0]:.4f}")
    t.notes += [
        f"measured with the library (src/) of commit {_commit()}; {seconds:.0f} s in all, {latent_s:.0f} s of "
        "them in evaluate_latent_auc.",
        f"cases, generator and methods: bench/latent_dependence.py (its own numpy generator and truth; cxreval is "
        f"called only through evaluate_latent_auc with its defaults, {n_res} patient-bootstrap replicates: a "
        "modest count, so the 95% intervals' percentiles are themselves noisy); studies per set "
        f"{n_range[0]}-{n_range[1]}; true-label AUCs by scikit-learn; true AUCs {', '.join(map(str, sim.MODEL_AUCS))}; "
        "the declared case passes dependent=[(R1, R2)] where evaluate_latent_auc takes it; in the not-declared case "
        "the default is dependent='flagged' (each pair the checks flag on a first fit grouped while three "
        "independent readers remain; the choice is not repeated in the replicates); in the not-declared case the "
        f"row {sim.INDEPENDENT!r} is the same sets fitted with dependent='none', every reader independent.",
        "mean bias: the mean of estimate - true-label AUC over all set x model cells; mean |bias|: the absolute mean "
        "error of each model, averaged over the four models; the hard references' intervals are percentile "
        "bootstraps with their labels held fixed; true best first: the share of sets whose highest estimate is "
        "the model with the highest true-label AUC in that set.",
        "sets flagged: the share of sets where the latent output says the assumption is violated: a pair grouped "
        "because the checks flagged it (flagged_pairs), a reader pair with "
        f"|z_both_positive| or |z_agreement_joint| >= {sim.PAIR_FLAG_Z:g} in latent_reader_agreement.csv (the "
        "readers-only and the score-aware checks), a flagged row of "
        "latent_score_association.csv, or a nonzero flag/verdict column of auc.csv. Per check: "
        + "; ".join(flags)
        + ". sets refused: evaluate_latent_auc raised NotIdentifiedError; those sets are left out of every "
        "method's figures.",
        f"Monte-Carlo error with {n_sets} sets: a share near 90% is +-{100 * (0.09 / n_sets) ** 0.5:.0f} points "
        f"(one set = {100 / n_sets:.0f} points); the standard error of the latent mean bias (per-set means): "
        + ", ".join(noise)
        + ".",
        "acceptance (the latent estimate): independent |bias| <= 0.005 and coverage >= 90%; where the assumption "
        "holds or the dependence is declared (prevalence, expert, declared pair) |bias| <= 0.02 and coverage >= 90%; "
        "where the dependence is not identified (pair not declared, hard cases) either that or >= 90% of sets "
        "flagged or refused; in every case the true best first at least as often as by hard Dawid-Skene.",
    ]
    return fig


def _commit() -> str:
    """The last commit that changed src/ (HEAD's library), and whether src/ has uncommitted changes."""
    git = ["git", "-C", str(ROOT)]
    last = subprocess.run([*git, "log", "-1", "--format=%h", "--", "src"], capture_output=True, text=True)
    dirty = subprocess.run([*git, "status", "--porcelain", "src"], capture_output=True, text=True)
    return (last.stdout.strip() or "unknown") + (
        " with uncommitted changes in src" if dirty.stdout.strip() else ""
    )


PARTS = (
    Part(
        "simulation",
        "Simulated study sets (300-2,000 studies; 3-5 conditionally independent readers with "
        "sensitivity and specificity in [0.65, 0.95]; prevalence 0.05-0.4; 5 models): error of the latent-truth "
        "AUC against the true-label AUC and coverage of its 95% interval, beside hard majority-vote and "
        "Dawid-Skene labels, the reader-only soft AUC and the oracle posterior (6 sets x 50 replicates quick, "
        "200 x 100 full).",
        simulation,
    ),
    Part(
        "chexpert",
        "CheXpert test set (shared data): the 10 leaderboard models' latent-truth AUCs (readers bc4, "
        "bc6, bc8, chexpert_labeler) and their comparators (hard and soft Dawid-Skene, majority vote, the best "
        "single reader) against the 5-radiologist consensus, on every study and on the studies every reader "
        "labels; mean |ΔAUC| and order distance (point estimates quick, 200 bootstrap replicates full).",
        chexpert,
    ),
    Part(
        "chexpert-speed",
        "CheXpert test set (shared data): wall and CPU time of the help's example of classify --latent-truth "
        "(4 readers, 10 models x 5 findings x 500 studies; 100 replicates quick, 1,000 full) with the load average.",
        speed,
    ),
    Part(
        "dependence",
        "Simulated cases where the latent model's assumption holds and where it does not (independent readers; a "
        "reader copying another's label with probability 0.3-0.6, declared and not; a latent difficulty raising "
        "readers' errors and the models' within-class overlap, strong and mild; prevalence 0.02-0.05; one expert and "
        "two weak readers): bias, RMSE, coverage and ranking of the default latent estimate beside hard "
        "Dawid-Skene, majority vote and the best single reader, the output's flags, and the acceptance thresholds "
        "(3 sets x 10 replicates per case quick, 80 x 100 full).",
        dependence,
    ),
)
