"""The AUC against the latent truth of several noisy readers (cxreval.latent): a simulation with a known truth,
and the CheXpert test set, where four references none of which is in the 5-radiologist consensus are the readers.
"""

from __future__ import annotations

from suites._common import Context, Figures, Part, bench_module, fmt

TITLE = "Latent truth: the AUC against the truth that noisy readers approximate"

__all__ = ["PARTS", "TITLE"]


def simulation(ctx: Context) -> Figures:
    sim = bench_module("latent_simulation")
    n_sets, n_res = ctx.size((6, 50), (200, 100))
    m = sim.measure(n_sets, n_res, seed=ctx.seed)
    s = sim.summarise(m)
    fig = Figures()
    strata = [label for label, _ in s["strata"]]
    t = fig.table(f"{n_sets} simulated study sets x 5 models = {s['cells']} cells: estimate - true-label AUC",
                  ["method", *(f"mean |error|, {label} ({k})" for label, k in s["strata"]), "mean error, all cells"])
    for row in s["table"]:
        t.add(row["method"], *(fmt(row[f"mean |error| {label}"]) for label in strata),
              fmt(row["mean error all cells"], "+.4f"))
        fig.checked[f"{row['method']} | mean |error|"] = fmt(row["mean |error| all cells"])
        fig.checked[f"{row['method']} | mean error"] = fmt(row["mean error all cells"], "+.4f")
    cov = ", ".join(f"{label} {v:.1%}" for label, v in s["coverage_by_stratum"])
    t.notes += [
        f"95% interval of the latent-truth AUC (patient bootstrap, {n_res} replicates, each refitting the model) "
        f"covers the true-label AUC in {s['coverage']:.1%} of cells ({cov}); mean width {s['mean_ci_width']:.3f}; "
        f"{s['not_converged']} replicate fits stopped at max_iter.",
        "error = estimate - the AUC of the same scores against the simulated truth of the same studies; "
        "'oracle posterior' weights pairs with the posteriors of the true parameters and score densities: the "
        "floor of any posterior-weighted estimate's error (sampling of the truth given the data).",
        f"{m['seconds']:.0f} s in all, {m['latent_seconds']:.0f} s of them in bootstrap_latent_class.",
    ]
    fig.checked["coverage"] = f"{s['coverage']:.4f}"
    return fig


PARTS = (
    Part("simulation", "Simulated study sets (300-2,000 studies; 3-5 conditionally independent readers with "
         "sensitivity and specificity in [0.65, 0.95]; prevalence 0.05-0.4; 5 models): error of the latent-truth "
         "AUC against the true-label AUC and coverage of its 95% interval, beside hard majority-vote and "
         "Dawid-Skene labels, the reader-only soft AUC and the oracle posterior (6 sets x 50 replicates quick, "
         "200 x 100 full).", simulation),
)
