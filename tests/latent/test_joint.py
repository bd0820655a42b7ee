"""One latent truth per finding: the joint model of the readers and every model's score, on simulations with
known truth (independent readers; a pair of readers sharing errors, declared or not), the score models averaged,
the identification check, and the shared-effect likelihood of the sensitivity analysis."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import roc_auc_score

from cxreval.latent import NotIdentifiedError, evaluate_latent_auc, latent_auc_score
from cxreval.latent._em import make_cells
from cxreval.latent._joint import fit_finding
from cxreval.latent._result import hard_label_verdict
from cxreval.latent._shared_effect import shared_effect_log_lik

SE = np.array([0.85, 0.8, 0.75, 0.8])
SP = np.array([0.9, 0.85, 0.9, 0.8])
SHIFT = np.array([0.8, 1.2, 1.6, 2.0])


def simulate(n, seed, copy=0.0):
    """4 readers (reader 1 copies reader 0's label with probability ``copy``), 4 models of rising AUC whose
    scores share a study effect, prevalence 0.3."""
    rng = np.random.default_rng(seed)
    t = rng.random(n) < 0.3
    y = np.where(t[:, None], rng.random((n, 4)) < SE, rng.random((n, 4)) > SP).astype(float)
    c = rng.random(n) < copy
    y[c, 1] = y[c, 0]
    s = t[:, None] * SHIFT + 0.6 * rng.normal(size=n)[:, None] + 0.8 * rng.normal(size=(n, 4))
    return t, y, s


def mean_bias(copy, groups, n_sets=8, n=1000):
    bias = []
    for seed in range(n_sets):
        t, y, s = simulate(n, seed, copy)
        fit = fit_finding(y, s, None, groups=groups, score_model="spline")
        bias.append(fit.auc - [roc_auc_score(t, s[:, m]) for m in range(4)])
    return np.mean(bias, axis=0)


def test_independent_readers_are_unbiased():
    assert np.abs(mean_bias(0.0, ())).max() <= 0.01


def test_a_declared_dependent_pair_stays_unbiased_where_undeclared_is_biased():
    undeclared = mean_bias(0.5, ())
    declared = mean_bias(0.5, ((0, 1),))
    assert undeclared.mean() < -0.015
    assert np.abs(declared).max() <= 0.01


def test_every_model_is_scored_against_one_posterior():
    t, y, s = simulate(600, 3)
    fit = fit_finding(y, s, None, score_model="auto")
    assert fit.posterior.shape == (600,) and fit.candidates == ("spline", "dependent")
    assert fit.weights.sum() == pytest.approx(1.0)
    for m in range(4):
        assert fit.auc[m] == pytest.approx(latent_auc_score(s[:, m], fit.posterior), abs=1e-12)
    # the averaged posterior is the weighted mean of the candidates'; the AUC follows it, not the candidates'
    lo, hi = fit.candidate_auc.min(axis=0), fit.candidate_auc.max(axis=0)
    assert ((fit.auc >= lo - 1e-9) & (fit.auc <= hi + 1e-9)).all()


def test_one_model_is_the_single_score_spline_model():
    from cxreval.latent import fit_latent_class

    t, y, s = simulate(800, 4)
    joint = fit_finding(y, s[:, :1], None, score_model="spline")
    single = fit_latent_class(y, s[:, 0], n_bins=800)
    assert joint.auc[0] == pytest.approx(latent_auc_score(s[:, 0], single.posterior), abs=2e-3)


@pytest.mark.parametrize("rho", [0.0, 0.2, 0.5])
def test_the_shared_effect_likelihood_is_a_distribution(rho):
    patterns = np.array(np.meshgrid(*[[0.0, 1.0]] * 4)).reshape(4, -1).T  # all 16 label patterns
    cells = make_cells(patterns, np.zeros(16, dtype=np.intp), np.full(16, np.nan), 1)
    p = np.array([[0.9, 0.8, 0.3, 0.05]])
    ll = shared_effect_log_lik(cells, p, rho) if rho else None
    if rho:
        assert np.exp(ll).sum() == pytest.approx(1.0, abs=1e-10)
        # the marginals are kept: P(reader r positive) = p_r
        marg = np.exp(ll)[0] @ cells.positive
        np.testing.assert_allclose(marg, p[0], atol=1e-8)


def _long(t, y, s, readers=("r1", "r2", "r3", "r4"), finding="Edema"):
    n = len(t)
    sid = [f"s{i:04d}" for i in range(n)]
    labs = [
        pd.DataFrame(
            {
                "study_id": sid,
                "patient_id": sid,
                "finding": finding,
                "source": r,
                "state": np.where(y[:, k] == 1, "positive", "negative"),
            }
        )
        for k, r in enumerate(readers)
    ]
    preds = [
        pd.DataFrame({"study_id": sid, "model": f"m{m}", "finding": finding, "score": s[:, m]})
        for m in range(s.shape[1])
    ]
    return pd.concat(preds, ignore_index=True), pd.concat(labs, ignore_index=True)


def test_declared_dependence_in_the_tables_and_the_refusal():
    t, y, s = simulate(500, 5, copy=0.5)
    preds, labs = _long(t, y, s)
    res = evaluate_latent_auc(
        preds, labs, readers=["r1", "r2", "r3", "r4"], dependent=[("r1", "r2")], n_resamples=0
    )
    rows = res.table[res.table["finding"] == "Edema"]
    assert set(rows["dependent"]) == {"r1+r2"} and res.dependent == (("r1", "r2"),)
    assert set(rows["score_model"]) <= {"average", "spline", "dependent"}
    # the pair r1-r2 is modelled, not checked; the other pairs are
    assert set(rows["pair_check"]) == {"0 of 5 pairs flagged"}
    three = evaluate_latent_auc(preds, labs, readers=["r2", "r3", "r4"], n_resamples=0)
    # three readers: the readers-only model is saturated, the score-aware check is left (and said to be weak)
    assert set(three.table["pair_check"]) == {"0 of 3 pairs flagged (score-aware check only)", "per finding"}
    assert three.reader_agreement["z_both_positive"].isna().all()
    assert three.reader_agreement["z_agreement_joint"].notna().all()
    assert "only the score-aware pair check is possible" in three.summary()
    with pytest.raises(
        NotIdentifiedError, match=r"\(r3, r1\+r2 \(declared dependent, one reader\)\)\. A declared group"
    ):
        evaluate_latent_auc(
            preds,
            labs[labs["source"] != "r4"],
            readers=["r1", "r2", "r3"],
            dependent=["r1,r2"],
            n_resamples=0,
        )
    with pytest.raises(ValueError, match="not one of the readers"):
        evaluate_latent_auc(
            preds, labs, readers=["r1", "r2", "r3", "r4"], dependent=[("r1", "x")], n_resamples=0
        )


def test_sensitivity_and_comparators_tables():
    t, y, s = simulate(500, 6)
    preds, labs = _long(t, y, s)
    res = evaluate_latent_auc(preds, labs, readers=["r1", "r2", "r3", "r4"], n_resamples=0)
    sens = res.sensitivity
    assert set(sens["analysis"]) == {"leave_one_reader_out", "score_model", "reader_correlation"}
    assert set(sens.loc[sens["analysis"] == "leave_one_reader_out", "setting"]) == {"r1", "r2", "r3", "r4"}
    rho = sens[sens["analysis"] == "reader_correlation"]
    assert sorted(set(rho["setting"].astype(float))) == [0.0, 0.1, 0.2, 0.3, 0.4, 0.5]
    head = res.table.set_index(["model", "finding"])["auc"]
    zero = rho[rho["setting"] == "0"].set_index(["model", "finding"])["auc"]
    np.testing.assert_allclose(zero.to_numpy(), head.loc[zero.index].to_numpy())
    assert set(sens["rank"].dropna()) <= {1.0, 2.0, 3.0, 4.0}
    comp = res.comparators.pivot_table(index="model", columns="reference", values="auc")
    assert set(comp.columns) == {
        "latent",
        "dawid_skene_hard",
        "dawid_skene_soft",
        "majority_vote",
        "best_reader",
    }
    vote = (y.mean(axis=1) > 0.5).astype(float)
    tie = y.mean(axis=1) == 0.5
    for m in range(4):
        want = roc_auc_score(vote[~tie], s[~tie, m])
        assert comp.loc[f"m{m}", "majority_vote"] == pytest.approx(want, abs=1e-12)
    assert "**Assumed:**" in res.summary() and "0 of 6 reader pairs" in res.summary().replace(
        "1 of 6", "0 of 6"
    )
    # readers independent given the truth: hard labels dilute every AUC by more than the latent AUCs move
    # when a reader is left out or the score model changes
    verdict = res.against_hard_labels()
    assert verdict["distinguishable"].tolist() == [True]
    assert "## Against hard labels" in res.summary()
    assert "depart from the hard-label AUCs by more than that spread" in res.assumptions()


def test_hard_label_verdict_compares_the_gap_with_the_spread():
    def comp(finding, latent, hard):
        return pd.DataFrame(
            {
                "model": ["a", "b", "a", "b"],
                "finding": finding,
                "reference": ["latent", "latent", "dawid_skene_hard", "dawid_skene_hard"],
                "auc": [*latent, *hard],
            }
        )

    comparators = pd.concat([comp("F", [0.80, 0.70], [0.79, 0.70]), comp("G", [0.80, 0.70], [0.70, 0.60])])
    # F: the AUCs move by 0.05 when a reader is left out, more than they differ from hard labels (0.005);
    # G: they move by 0.01, less than the gap (0.1); the reader-correlation settings do not count
    sensitivity = pd.DataFrame(
        {
            "model": ["a", "b", "a", "b", "a"],
            "finding": ["F", "F", "G", "G", "G"],
            "analysis": ["leave_one_reader_out"] * 4 + ["reader_correlation"],
            "auc": [0.85, 0.75, 0.81, 0.71, 0.5],
        }
    )
    v = hard_label_verdict(sensitivity, comparators).set_index("finding")
    assert v.loc["F", "gap"] == pytest.approx(0.005) and v.loc["F", "spread"] == pytest.approx(0.05)
    assert v.loc["G", "gap"] == pytest.approx(0.1) and v.loc["G", "spread"] == pytest.approx(0.01)
    assert v["distinguishable"].tolist() == [False, True]
    assert hard_label_verdict(sensitivity.iloc[:0], comparators).empty


def test_the_score_aware_pair_check_sees_a_copied_pair_the_readers_alone_miss():
    """Where the truth is known: four readers, the second copying the first with probability 0.5. The
    readers-only check stays below its flag (the fitted accuracies take the shared errors in); the score-aware
    check of ``joint_agreement`` flags the pair. Under independence neither flags, with three readers or four."""
    from cxreval.latent._diagnostics import FLAG_Z, joint_agreement, reader_agreement_rows

    for seed in range(3):
        for copy, n_readers in ((0.0, 3), (0.0, 4), (0.5, 4)):
            t, y, s = simulate(2000, seed, copy)
            y = y[:, :n_readers]
            joint = joint_agreement(y, fit_finding(y, s, None, score_model="spline").fits[0])
            z = {pair: v[2] for pair, v in joint.items()}
            alone = reader_agreement_rows(
                "Edema", list("abcd"[:n_readers]), y, fit_finding(y, None, None).fits[0]
            )
            assert len(z) == len(alone) == n_readers * (n_readers - 1) // 2
            if n_readers == 4:
                assert max(abs(r["z_both_positive"]) for r in alone) < FLAG_Z
            if copy:
                assert z[(0, 1)] >= FLAG_Z, (seed, z)
            else:
                assert max(abs(v) for v in z.values()) < FLAG_Z, (seed, z)


def test_dependent_flagged_groups_the_copied_pair_and_nothing_else():
    """Where the truth is known: by default (``dependent='flagged'``) the pair the score-aware check flags
    (reader 2 copying reader 1 with probability 0.5) is grouped before the reported fit, which removes the
    undeclared pair's bias as declaring it does, where ``'none'`` (every reader independent) keeps it; with
    independent readers nothing is flagged and the AUCs are those of ``'none'`` to the last digit."""
    readers = ["r1", "r2", "r3", "r4"]
    errors = {"none": [], "flagged": [], "default": [], "declared": []}
    for seed in range(4):
        t, y, s = simulate(2000, seed, copy=0.5)
        preds, labs = _long(t, y, s)
        truth = np.array([roc_auc_score(t, s[:, m]) for m in range(4)])
        for name, dep in (
            ("none", "none"),
            ("flagged", "flagged"),
            ("default", None),
            ("declared", [("r1", "r2")]),
        ):
            res = evaluate_latent_auc(
                preds, labs, readers=readers, dependent=dep, n_resamples=0, score_model="spline"
            )
            rows = res.table[res.table["finding"] == "Edema"].sort_values("model")
            errors[name].append(rows["auc"].to_numpy() - truth)
            if name == "flagged":
                assert res.flagged_pairs == (("Edema", "r1", "r2", True),)
                assert set(rows["dependent"]) == {"r1+r2"}
                assert "grouped per finding because the pair checks flagged them" in res.summary()
                assert res.to_dict()["flagged_pairs"] == [
                    {"finding": "Edema", "source_a": "r1", "source_b": "r2", "modelled": True}
                ]
                assert set(rows["pair_check"].str.split("; ").str[1]) == {
                    "flagged on the first fit and grouped: r1 + r2"
                }
            if name == "none":
                assert res.flagged_pairs is None
                assert "declare them (e.g. --dependent r1,r2) or refit with --dependent flagged" in (
                    res.assumptions()
                )
    bias = {k: np.mean(v) for k, v in errors.items()}
    assert bias["none"] < -0.015
    assert abs(bias["flagged"]) <= 0.01 and bias["flagged"] == pytest.approx(bias["declared"], abs=1e-9)
    assert bias["default"] == bias["flagged"]
    t, y, s = simulate(1500, 9)
    preds, labs = _long(t, y, s)
    plain = evaluate_latent_auc(preds, labs, readers=readers, n_resamples=0, dependent="none")
    flagged = evaluate_latent_auc(preds, labs, readers=readers, n_resamples=0)
    assert flagged.flagged_pairs == () and plain.flagged_pairs is None
    pd.testing.assert_series_equal(plain.table["auc"], flagged.table["auc"])
    assert "no flagged pair to group" in flagged.assumptions()


def test_dependent_flagged_groups_the_strongest_pair_while_three_readers_remain():
    """Two copied pairs among four readers: grouping both would leave two independent readers (not identified),
    so the pair with the larger flag is grouped and the other left independent (named in the key finding)."""
    t, y, s = simulate(2000, 0, copy=0.6)
    c = np.random.default_rng(100).random(2000) < 0.6
    y[c, 3] = y[c, 2]
    preds, labs = _long(t, y, s)
    res = evaluate_latent_auc(
        preds, labs, readers=["r1", "r2", "r3", "r4"], n_resamples=0, dependent=["flagged"]
    )
    pairs = {(a, b): m for _, a, b, m in res.flagged_pairs}
    assert set(pairs) == {("r1", "r2"), ("r3", "r4")} and sorted(pairs.values()) == [False, True]
    grouped = next("+".join(p) for p, m in pairs.items() if m)
    assert set(res.table["dependent"]) == {grouped}
    assert "flagged but left independent (too few readers would remain)" in res.assumptions()
    with pytest.raises(ValueError, match="must be 'flagged' \\(the default\\), 'none' or a sequence"):
        evaluate_latent_auc(preds, labs, readers=["r1", "r2", "r3", "r4"], dependent="flaged", n_resamples=0)
    with pytest.raises(ValueError, match="'none' .* cannot stand beside"):
        evaluate_latent_auc(
            preds, labs, readers=["r1", "r2", "r3", "r4"], dependent=["none", "flagged"], n_resamples=0
        )
