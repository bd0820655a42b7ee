"""Multi-reader multi-case ROC analysis (cxreval.mrmc): the OR test's size and power on Roe and Metz simulations,
the power and sample size of a reader study from a pilot (against RJafroc's documented values and against
simulation), the published Van Dyke outputs, the CheXpert models against its radiologists under three references,
and the speed of the OR analysis at chest X-ray scale.
"""

from __future__ import annotations

import time

from suites._common import SHARED, Context, Figures, Part, bench_module, fmt, missing

TITLE = "MRMC: the Obuchowski-Rockette test on simulated studies, reader-study sizes, speed"

__all__ = ["PARTS", "TITLE"]

# RJafroc's documented OR components of dataset02 (Van Dyke; jackknife; SsPowerGivenJK example 4A)
VAN_DYKE_PILOT = {
    "var_modality_reader": 0.00020040252,
    "error_variance": 0.00080228827,
    "cov1": 0.00034661371,
    "cov2": 0.00034407483,
    "cov3": 0.00023902837,
    "n_cases": 114,
}
VAN_DYKE_EFFECT = -0.043800322
# RJafroc tests/testthat/test-SsSampleSizeRoc.R (OR method, Wilcoxon AUC): (readers, cases, analysis, power)
RJAFROC_POWER = (
    (10, 165, "RRRC", "0.80541995"),
    (10, 131, "FRRC", "0.80091813"),
    (10, 53, "RRFC", "0.80496663"),
    (6, 111, "RRRC", "0.5526116"),
)


def _cases(value: object) -> str:
    """A number of cases of ``minimum_cases`` (nullable) as printed: 'none' where no number suffices."""
    import pandas as pd

    return "none" if pd.isna(value) else str(int(value))


def _ci(r: dict[str, float]) -> str:
    return f"{r['rate']:.4f} [{r['low']:.4f}, {r['high']:.4f}]"


def type_i_error(ctx: Context) -> Figures:
    sim = bench_module("mrmc_simulation")
    n_null, n_alt = ctx.size((400, 200), (10_000, 2_000))
    t0 = time.perf_counter()
    m = sim.size_and_power(n_null, n_alt, seed=ctx.seed)
    fig = Figures()
    t = fig.table(
        f"OR RRRC test (Hillis ddf) at alpha = 0.05 on Roe and Metz studies ({m['setting']}: AUC "
        f"{m['auc']:.3f}; 5 readers, 50 + 50 cases): {n_null:,} null studies, {n_alt:,} with an AUC "
        f"difference of {m['effect']}",
        [
            "covariance",
            "type I error [95% CI]",
            "in [0.04, 0.06]",
            "power [95% CI]",
            "predicted power",
            "ms per study",
        ],
    )
    for cov in sim.COVARIANCES:
        r = m[cov]
        ok = 0.04 <= r["size"]["rate"] <= 0.06
        t.add(
            cov,
            _ci(r["size"]),
            "yes" if ok else "NO",
            _ci(r["power"]),
            fmt(r["predicted_power"]),
            f"{1000 * r['seconds_per_study']:.1f}",
        )
        fig.checked[f"{cov} | type I error"] = fmt(r["size"]["rate"])
        fig.checked[f"{cov} | power"] = fmt(r["power"]["rate"])
    total = time.perf_counter() - t0
    t.notes += [
        "each study: 2 modalities x 5 readers x 100 cases simulated by simulate_roe_metz_studies (all at once), "
        "then or_analysis(ratings, truth, covariance=...) per study; rejected when the RRRC p-value < 0.05. The "
        "null studies share every parameter between the modalities; the others shift the diseased mean of the "
        "second modality (RoeMetzParameters.shift_for_auc) so that its expected AUC is 0.05 higher.",
        "predicted power: mrmc_sample_size (Hillis, Obuchowski and Berbaum 2011) with the mean of the null "
        "studies' OR component estimates as the pilot, for the same design. A null pilot overstates the variance "
        "of the AUCs of the better modality, so it predicts a little less power than the test has (the part "
        "power_check sizes from pilots with the effect).",
        f"simulation {m['simulate_seconds']:.2f} s for {n_null + n_alt:,} studies; {total:.0f} s in all "
        f"({(n_null + n_alt) * len(sim.COVARIANCES) / total:.0f} analysed studies per second).",
    ]
    return fig


def null_sweep(ctx: Context) -> Figures:
    sim = bench_module("mrmc_simulation")
    n = ctx.size(100, 2_000)
    t0 = time.perf_counter()
    rows = sim.null_sweep(n, seed=ctx.seed)
    fig = Figures()
    t = fig.table(
        f"Type I error of the OR RRRC test (jackknife, Hillis ddf) in each Roe and Metz setting: {n:,} "
        "null studies of 5 readers x (50 + 50) cases each",
        ["setting", "AUC", "type I error [95% CI]"],
    )
    for r in rows:
        t.add(r["setting"], f"{r['auc']:.3f}", _ci(r))
        fig.checked[f"{r['setting']} | type I error"] = fmt(r["rate"])
    t.notes += [
        "setting: data correlation (H: var_case = var_modality_case = 0.3, var_reader_case = var_error = 0.2; "
        "L: 0.1, 0.1, 0.2, 0.6), reader variability (L: var_reader = var_modality_reader = 0.0055; H: 0.011, "
        "0.03, 0.056 for mu = 0.75, 1.5, 2.5), mu (Roe and Metz 1997; iMRMC's RMconfigurations).",
        "The test is known to be conservative at high AUC with few cases (Hillis 2007, 2012), as the AUC 0.95-0.96 "
        f"rows show. {time.perf_counter() - t0:.0f} s.",
    ]
    return fig


def power_check(ctx: Context) -> Figures:
    sim = bench_module("mrmc_simulation")
    n_pilots, n_studies = ctx.size((40, 100), (300, 2_000))
    t0 = time.perf_counter()
    m = sim.predicted_vs_simulated(n_pilots, n_studies, seed=ctx.seed)
    fig = Figures()
    t = fig.table(
        f"Predicted power (mrmc_sample_size) vs the rejection rate of {n_studies:,} simulated studies "
        f"per size ({m['setting']}, AUC difference {m['effect']}, 6 readers)",
        ["cases", "predicted power", "simulated power [95% CI]", "simulated - predicted"],
    )
    for r in m["rows"]:
        t.add(r["n_cases"], fmt(r["predicted"]), _ci(r), f"{r['rate'] - r['predicted']:+.4f}")
        fig.checked[f"{r['n_cases']} cases | simulated power"] = fmt(r["rate"])
    mc = m["minimum_cases"].iloc[0]
    p = m["pilot"]
    t.notes += [
        f"pilot: the mean OR components (jackknife) of {n_pilots} simulated pilots of 5 readers x (50 + 50) cases "
        f"with the same effect: var_TR {p.var_modality_reader:.3g}, Var {p.error_variance:.3g}, Cov1 {p.cov1:.3g}, "
        f"Cov2 {p.cov2:.3g}, Cov3 {p.cov3:.3g} (N* = 100). The planned studies: 6 readers, half the cases diseased.",
        f"fewest cases for power 0.8 with 6 readers: {_cases(mc['n_cases'])} (predicted power {mc['power']:.3f}).",
        "The method is an approximation (the pilot's variances stand for the planned study's, and the OR test is a "
        "little conservative): at 2,000 studies per size the simulated power lies within 0.025 of the prediction. "
        f"{time.perf_counter() - t0:.0f} s.",
    ]
    return fig


def sample_size(ctx: Context) -> Figures:
    from cxreval.mrmc import PilotVarianceComponents, mrmc_sample_size, or_analysis

    fig = Figures()
    t = fig.table(
        "Power of a Van Dyke-based study (RJafroc dataset02 OR components, effect -0.0438): ours vs "
        "RJafroc's documented values",
        ["readers", "cases", "analysis", "ours", "RJafroc", "|difference|"],
    )
    pilot = PilotVarianceComponents(**VAN_DYKE_PILOT, effect=VAN_DYKE_EFFECT)
    for j, k, analysis, published in RJAFROC_POWER:
        ours = mrmc_sample_size(pilot, n_readers=j, n_cases=k, analysis=analysis).power_at(j, k)
        t.add(j, k, analysis, f"{ours:.8f}", published, f"{abs(ours - float(published)):.1e}")
        fig.checked[f"power {j} x {k} {analysis}"] = f"{ours:.8f}"
    six = mrmc_sample_size(pilot, n_readers=6, n_cases=100).minimum_cases.iloc[0]
    t.add(
        6, int(six["n_cases"]), "RRRC, fewest cases for 0.8", f"{six['power']:.3f}", "251 cases, 0.801", "-"
    )
    fig.checked["fewest cases 6 readers"] = _cases(six["n_cases"])
    t.notes.append(
        "RJafroc: tests/testthat/test-SsSampleSizeRoc.R (SsPowerGivenJK, SsSampleSizeKGivenJ, "
        "SsPowerTable on dataset02, method 'OR', FOM 'Wilcoxon')."
    )
    grid = mrmc_sample_size(pilot, effect=0.05, n_readers=[4, 6, 8, 10, 15], n_cases=[100, 200, 400])
    wide = grid.power.pivot(index="n_readers", columns="n_cases", values="power").round(3)
    wide.columns = [f"{c} cases" for c in wide.columns]
    g = fig.frame(
        "RRRC power for an AUC difference of 0.05 from the Van Dyke pilot", wide, decimals=3, index=True
    )
    mins = grid.minimum_cases
    g.notes.append(
        "fewest cases for power 0.8: "
        + ", ".join(
            f"{r.n_readers} readers {_cases(r.n_cases)} (power limit {r.power_limit:.2f})"
            for r in mins.itertuples(index=False)
        )
    )
    gone = missing(SHARED / "mrmc" / "franken.csv", SHARED / "mrmc" / "vandyke.csv")
    if gone is None:
        vd = _read(SHARED / "mrmc" / "vandyke.csv")
        fr = _read(SHARED / "mrmc" / "franken.csv")
        from_or = mrmc_sample_size(or_analysis(*vd), pilot_cases=114, n_readers=10, n_cases=165).power_at(
            10, 165
        )
        franken = mrmc_sample_size(
            or_analysis(*fr), pilot_cases=100, effect=0.05, n_readers=6, n_cases=100
        ).minimum_cases.iloc[0]
        s = fig.table(
            "From the ratings (shared data): or_analysis as the pilot",
            ["pilot", "question", "ours", "RJafroc"],
        )
        s.add("Van Dyke (114 cases)", "RRRC power, 10 readers x 165 cases", f"{from_or:.8f}", "0.80541995")
        s.add(
            "Franken (100 cases)",
            "effect 0.05, 6 readers: fewest cases, power",
            f"{_cases(franken['n_cases'])}, {franken['power']:.7f}",
            "power 0.8004469",
        )
        fig.checked["franken fewest cases"] = _cases(franken["n_cases"])
    else:
        t.notes.append(gone)
    return fig


def _read(path):
    import numpy as np
    import pandas as pd

    d = pd.read_csv(path)
    mods, rdrs, cases = (sorted(d[c].unique(), key=str) for c in ("treatment", "reader", "case"))
    x = np.full((len(mods), len(rdrs), len(cases)), np.nan)
    x[
        d["treatment"].map({m: i for i, m in enumerate(mods)}),
        d["reader"].map({r: i for i, r in enumerate(rdrs)}),
        d["case"].map({c: i for i, c in enumerate(cases)}),
    ] = d["rating"]
    truth = d.drop_duplicates("case").set_index("case")["truth"].reindex(cases).to_numpy()
    return x, truth


def van_dyke(ctx: Context) -> Figures:
    gone = missing(SHARED / "mrmc" / "vandyke.csv")
    if gone:
        return Figures(unavailable=gone)
    from cxreval.mrmc import or_analysis

    ratings, truth = _read(SHARED / "mrmc" / "vandyke.csv")
    fig = Figures()
    t = fig.table(
        "Van Dyke et al. (1995), 2 modalities x 5 readers x 114 cases: OR RRRC ours vs published",
        ["covariance", "figure", "ours", "published", "source"],
    )
    published = {  # printed digits of the anchors
        "jackknife": (
            "OR-DBM MRMC (Iowa), RJafroc",
            {
                "AUC modality 1": "0.89703704",
                "AUC modality 2": "0.94083736",
                "F": "4.456",
                "ddf": "15.26",
                "p": "0.0517",
            },
        ),
        "delong": (
            "MRMCaov (JSS paper)",
            {
                "AUC modality 1": "0.8970370",
                "AUC modality 2": "0.9408374",
                "F": "4.484854",
                "ddf": "15.06611",
                "p": "0.05123303",
            },
        ),
    }
    for cov, (source, values) in published.items():
        res = or_analysis(ratings, truth, covariance=cov)
        test = res.rrrc.test
        ours = {
            "AUC modality 1": res.modality_aucs[0],
            "AUC modality 2": res.modality_aucs[1],
            "F": test.statistic,
            "ddf": test.ddf,
            "p": test.p_value,
        }
        for name, printed in values.items():
            digits = len(printed.split(".")[1])
            value = f"{ours[name]:.{digits}f}"
            t.add(cov, name, value, printed, source)
            fig.checked[f"{cov} | {name}"] = value
    t.notes.append("ours rounded to the published digits; every pair agrees.")
    return fig


def speed(ctx: Context) -> Figures:
    import numpy as np

    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # pragma: no cover - threadpoolctl comes with scikit-learn
        threadpool_limits = None
    t0 = time.perf_counter()
    from cxreval.mrmc import or_analysis, simulate_roe_metz_studies

    import_s = time.perf_counter() - t0
    n_findings, n_readers, n_neg, n_pos = 14, 10, 4000, 1000
    sims = simulate_roe_metz_studies(
        n_findings,
        n_readers=n_readers,
        n_cases_negative=n_neg,
        n_cases_positive=n_pos,
        parameters="HL-1.5",
        rng=ctx.seed,
    )
    limiter = threadpool_limits(1) if threadpool_limits else None
    try:
        times = []
        for _ in range(4):  # the first pass cold: SciPy's modules are imported by the first analysis
            t1 = time.perf_counter()
            res = [or_analysis(s.ratings, s.truth) for s in sims]
            times.append(time.perf_counter() - t1)
    finally:
        if limiter is not None:
            limiter.unregister()
    fig = Figures()
    t = fig.table(
        f"OR analysis, jackknife covariance: {n_readers} readers x 2 modalities x {n_neg + n_pos:,} cases "
        f"({n_pos:,} diseased) x {n_findings} findings, each its own analysis, one core",
        ["what", "seconds", "target"],
    )
    t.add(
        f"{n_findings} analyses, cold (the first analysis imports SciPy's modules)", f"{times[0]:.2f}", "<= 2"
    )
    t.add(f"{n_findings} analyses, warm (best of 3)", f"{min(times[1:]):.2f}", "<= 2")
    t.add("one analysis, warm", f"{min(times[1:]) / n_findings:.3f}", "")
    t.add("import cxreval.mrmc", f"{import_s:.2f}", "")
    t.notes += [
        f"ratings simulated by Roe and Metz (HL-1.5); BLAS limited to one thread (threadpoolctl"
        f"{'' if threadpool_limits else ': unavailable'}). Peak RSS: in the header line (the part's own process).",
        f"p-values of the {n_findings} RRRC tests: median {np.median([r.rrrc.test.p_value for r in res]):.3f} "
        "(null studies).",
    ]
    fig.checked["first RRRC F"] = f"{res[0].rrrc.test.statistic:.6f}"
    return fig


def split_plot(ctx: Context) -> Figures:
    sim = bench_module("mrmc_simulation")
    n_null, n_alt = ctx.size((300, 150), (4_000, 1_000))
    m = sim.split_plot(n_null, n_alt, seed=ctx.seed)
    blocks = ", ".join(f"{a} + {b}" for a, b in sim.SPLIT_PLOT_BLOCKS)
    fig = Figures()
    t = fig.table(
        f"OR RRRC (jackknife, Hillis ddf) on split-plot Roe and Metz studies ({m['setting']}: AUC "
        f"{m['auc']:.3f}): {m['n_readers']} readers in pairs, each pair reading its own block of cases "
        f"({blocks} non-diseased + diseased); {n_null:,} null studies, {n_alt:,} with an AUC difference "
        f"of {m['effect']}",
        ["reader weights", "type I error [95% CI]", "in [0.04, 0.06]", "power [95% CI]"],
    )
    for w in ("equal", "case_pairs"):
        size, power = m[f"{w} | size"], m[f"{w} | power"]
        t.add(w, _ci(size), "yes" if 0.04 <= size["rate"] <= 0.06 else "NO", _ci(power))
        fig.checked[f"{w} | type I error"] = fmt(size["rate"])
    t.notes += [
        "equal: every reader's AUC counts the same in the modality mean (the default; MRMCaov, OR-DBM MRMC, "
        "RJafroc); case_pairs: each reader by the diseased x non-diseased pairs it read (iMRMC's reader "
        "average), with the weighted error terms of or_analysis(..., reader_weights='case_pairs').",
        "both hold the size. Case-pair weights put most weight on the readers of the largest block (here an "
        "effective 1/sum(w^2) = 4.0 of 6 readers), so where the reader variance dominates, as in HL-1.5, their "
        f"power is lower; {m['seconds']:.0f} s in all.",
    ]
    return fig


def chexpert_readers(ctx: Context) -> Figures:
    folder = SHARED / "chexpert_test"
    gone = missing(folder / "groundtruth.csv")
    if gone:
        return Figures(unavailable=gone)
    cx = bench_module("mrmc_chexpert")
    n_resamples = ctx.size(200, 1000)
    m = cx.measure(folder, n_resamples=n_resamples, seed=ctx.seed)
    n_readers, n_models = len(cx.READERS), m["per_model"]["model"].nunique()
    fig = Figures()
    t = fig.table(
        f"CheXpert test set: {n_models} models against {n_readers} radiologists "
        f"({', '.join(cx.READERS)}, binary readers) under each reference, per finding",
        [
            "reference",
            "finding",
            "cases (positive)",
            f"non-inferior (of {n_models})",
            f"superior (of {n_models})",
            f"readers below the curve (mean of {n_readers})",
            f"all {n_readers} below (models)",
            "median ΔSe at the panel's Sp",
        ],
    )
    for r in m["summary"].itertuples(index=False):
        t.add(
            r.reference,
            r.finding,
            f"{r.cases} ({r.positives})",
            r.non_inferior,
            r.superior,
            f"{r.mean_below:.1f}",
            r.all_below,
            fmt(r.median_difference, "+.3f"),
        )
        fig.checked[f"{r.reference} | {r.finding} | non-inferior"] = str(r.non_inferior)
        fig.checked[f"{r.reference} | {r.finding} | all below"] = str(r.all_below)
    fig.checked["verdict depends on the reference"] = f"{m['depends']} of {m['n_pairs']}"
    t.notes += [
        f"non-inferior: the lower bound of the {n_resamples}-replicate paired patient-bootstrap 95% CI of ΔSe (the "
        f"model's sensitivity minus the panel's, at the panel's specificity) above -{cx.MARGIN}; superior: above 0. "
        "Readers below the curve: the CheXpert paper's measure, each reader's (1 - Sp, Se) point under the model's "
        "empirical ROC curve. The readers are never part of a reference: the consensus is bc1, bc2, bc3, bc5, bc7; "
        f"latent is the Dawid-Skene truth of {', '.join(cx.LATENT_SOURCES)}.",
        f"the verdict (non-inferior or not) changes with the reference for {m['depends']} of {m['n_pairs']} "
        f"(model, finding) pairs; {m['seconds']:.0f} s in all.",
        "the same tables: " + "; ".join(f"`{c}`" for c in cx.command(n_resamples, ctx.seed)),
    ]
    pm = m["per_model"]
    wide = pm.assign(
        cell=[
            f"{int(b)}/{n_readers}, {d:+.3f} [{lo:+.3f}, {hi:+.3f}]{' NI' if ni else ''}"
            for b, d, lo, hi, ni in pm[
                ["below", "difference", "ci_low", "ci_high", "non_inferior"]
            ].itertuples(index=False)
        ]
    )
    wide = wide.pivot(index=["finding", "model"], columns="reference", values="cell")[list(cx.REFERENCES)]
    fig.frame(
        "per model and finding, under each reference: readers below the curve, ΔSe at the panel's Sp "
        "[95% CI], NI = non-inferior",
        wide,
        index=True,
    )
    return fig


PARTS = (
    Part(
        "type_i_error",
        "OR RRRC (Hillis ddf) with the jackknife and DeLong covariances on Roe and Metz studies "
        "(HL-1.5, 5 readers, 50 + 50 cases): type I error at alpha 0.05 on null studies (target [0.04, 0.06]) and "
        "power at an AUC difference of 0.05 beside the predicted power (400 null + 200 quick, 10,000 + 2,000 "
        "full).",
        type_i_error,
    ),
    Part(
        "null_sweep",
        "Type I error of OR RRRC (jackknife) in each of Roe and Metz's twelve settings (100 null "
        "studies each quick, 2,000 full).",
        null_sweep,
    ),
    Part(
        "power_check",
        "mrmc_sample_size's predicted power from simulated pilots vs the rejection rate of Roe and "
        "Metz studies simulated at 120, 200, 300 cases (6 readers; 100 studies per size quick, 2,000 full).",
        power_check,
    ),
    Part(
        "sample_size",
        "Power and fewest cases from the Van Dyke pilot vs RJafroc's documented SsPowerGivenJK / "
        "SsSampleSizeKGivenJ values (RRRC, FRRC, RRFC), a power grid, and or_analysis of the shared Van Dyke and "
        "Franken ratings as pilots.",
        sample_size,
    ),
    Part(
        "van_dyke",
        "OR RRRC on Van Dyke (shared data) with the jackknife and DeLong covariances: modality AUCs, "
        "F, ddf and p beside OR-DBM MRMC's and MRMCaov's published outputs.",
        van_dyke,
    ),
    Part(
        "split_plot",
        "OR RRRC on split-plot Roe and Metz studies (HL-1.5; 3 blocks of 40, 80, 120 cases, 2 "
        "readers each): type I error and power at an AUC difference of 0.05, readers weighted equally and by the "
        "case pairs they read (300 + 150 studies quick, 4,000 + 1,000 full).",
        split_plot,
    ),
    Part(
        "chexpert_readers",
        "CheXpert test set (shared data): the 10 models against the radiologists bc4, bc6, bc8 "
        "(binary readers) under the consensus, the CheXpert labeler and the latent truth: readers below each "
        "model's ROC curve, ΔSe at the panel's specificity with its paired bootstrap CI, non-inferiority at "
        "margin 0.05 (200 replicates quick, 1,000 full).",
        chexpert_readers,
    ),
    Part(
        "speed",
        "OR analysis with the jackknife covariance, 10 readers x 2 modalities x 5,000 cases x 14 findings "
        "(each its own analysis) on one core: seconds (target <= 2) and peak RSS (same size quick and full).",
        speed,
    ),
)
