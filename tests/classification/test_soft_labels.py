"""Soft labels (``p_positive``) as a reference of classify/rank: the pair-weighted AUC of latent_auc_score, its
meaning (a ratio of expectations over label draws), the checks on the column, and both commands on a fuse output."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.stats import rankdata
from sklearn.metrics import roc_auc_score

from cxreval.classification import compare_auc, evaluate_auc
from cxreval.cli.main import main
from cxreval.exceptions import InvalidParameterError, SchemaError
from cxreval.findings import VocabularyMapping
from cxreval.latent import latent_auc_score
from cxreval.stats import prepare_from_files
from cxreval.stats._auc_kernel import BlockInputs, _soft_block, auc_block
from cxreval.stats._soft_labels import SOFT_AUC_MEANING

FINDINGS = ("Edema", "Effusion")


def soft_tables(n=120, seed=0, models=4, ties=True):
    """Predictions of ``models`` models and a label table of one soft source ``soft`` (p_positive, state its
    argmax) and one hard source ``hard``; two studies per patient."""
    rng = np.random.default_rng(seed)
    sid = [f"s{i:04d}" for i in range(n)]
    pid = [f"p{i // 2:04d}" for i in range(n)]
    labs, preds = [], []
    for f in FINDINGS:
        t = rng.random(n) < 0.35
        p = np.clip(np.where(t, rng.beta(5, 2, n), rng.beta(2, 5, n)), 0, 1)
        p[:6] = 0.0
        p[6:10] = 1.0
        labs.append(
            pd.DataFrame(
                {
                    "study_id": sid,
                    "patient_id": pid,
                    "finding": f,
                    "source": "soft",
                    "state": np.where(p >= 0.5, "positive", "negative"),
                    "p_positive": p,
                }
            )
        )
        labs.append(
            pd.DataFrame(
                {
                    "study_id": sid,
                    "patient_id": pid,
                    "finding": f,
                    "source": "hard",
                    "state": np.where(t, "positive", "negative"),
                    "p_positive": np.nan,
                }
            )
        )
        for m in range(models):
            s = rng.normal(size=n) + (0.5 + 0.5 * m) * t
            preds.append(
                pd.DataFrame(
                    {"study_id": sid, "model": f"m{m}", "finding": f, "score": np.round(s, 1) if ties else s}
                )
            )
    return pd.concat(preds, ignore_index=True), pd.concat(labs, ignore_index=True)


def _arrays(preds, labs, model, finding):
    lab = labs[(labs["source"] == "soft") & (labs["finding"] == finding)].sort_values("study_id")
    pr = preds[(preds["model"] == model) & (preds["finding"] == finding)].set_index("study_id")
    return pr.loc[lab["study_id"], "score"].to_numpy(), lab["p_positive"].to_numpy()


def test_equals_latent_auc_score_point_and_every_replicate():
    preds, labs = soft_tables()
    res = evaluate_auc(preds, labs, references=["soft"], n_resamples=40, rng=3)
    assert res.soft_references == ("soft",) and res.to_dict()["soft_references"] == ["soft"]
    k = res.references.index("soft")
    w_all = res.plan.counts[:, res.plan.study_patient]  # (replicate, study), studies sorted like the labels
    for i, m in enumerate(res.models):
        for j, f in enumerate(FINDINGS):
            s, p = _arrays(preds, labs, m, f)
            assert res.point[i, j, k] == pytest.approx(latent_auc_score(s, p), abs=1e-12)
            want = [latent_auc_score(s, p, sample_weight=w) for w in w_all]
            np.testing.assert_allclose(res.distribution[i, j, k], want, rtol=0, atol=1e-12)
        macro = res.findings.index("macro")
        assert res.point[i, macro, k] == pytest.approx(res.point[i, :2, k].mean(), abs=1e-12)
        micro = res.findings.index("micro")
        ss, pp = zip(*(_arrays(preds, labs, m, f) for f in FINDINGS))
        assert res.point[i, micro, k] == pytest.approx(
            latent_auc_score(np.concatenate(ss), np.concatenate(pp)), abs=1e-12
        )


def test_jackknife_and_executor_on_a_soft_reference():
    preds, labs = soft_tables(n=60, seed=7)
    res = evaluate_auc(preds, labs, references=["soft"], findings=["Edema"], n_resamples=20, rng=2)
    s, p = _arrays(preds, labs, "m1", "Edema")
    sp = res.plan.study_patient
    want = [latent_auc_score(s, p, sample_weight=(sp != q).astype(float)) for q in range(res.plan.n_patients)]
    np.testing.assert_allclose(res.jackknife("m1", "Edema", "soft"), want, rtol=0, atol=1e-12)
    ci = res.bootstrap("m1", "Edema", "soft", ci_method="bca").confidence_interval
    assert ci.low <= res.point[1, 0, 0] <= ci.high
    procs = evaluate_auc(
        preds, labs, references=["soft"], findings=["Edema"], n_resamples=20, rng=2, executor="process:2"
    )
    np.testing.assert_array_equal(procs.distribution, res.distribution)


def test_delong_on_a_soft_reference_refused():
    preds, labs = soft_tables(n=60)
    res = evaluate_auc(preds, labs, references=["soft"], n_resamples=10, rng=0)
    with pytest.raises(InvalidParameterError, match="needs 0/1 labels; reference 'soft' has soft labels"):
        compare_auc(
            res,
            ("m0", "Edema", "soft"),
            ("m1", "Edema", "soft"),
            method="delong",
            predictions=preds,
            labels=labs,
        )


def test_zero_one_probabilities_give_the_ordinary_auc_on_both_paths():
    """The soft path (pairs i != j, bootstrap copies of a study never paired) on 0/1 labels equals the integer
    kernel and sklearn's weighted AUC, point and replicates."""
    preds, labs = soft_tables(n=90, seed=5)
    hard = labs[labs["source"] == "hard"]
    res = evaluate_auc(preds, hard, n_resamples=30, rng=1)
    inputs = res._inputs
    shards = res.plan.count_shards(16)
    full = BlockInputs(
        inputs.scores,
        inputs.labels,
        res.plan.study_patient,
        shards=shards,
        wpos=np.zeros((2, 1, shards.shape[0] * 16), np.int64),
        n_resamples=30,
        n_patients=res.plan.n_patients,
        ct_max=int(res.plan.counts.max()),
    )
    w_all = res.plan.counts[:, res.plan.study_patient]
    for i in range(len(res.models)):
        for j in range(len(FINDINGS)):
            y = np.asarray(inputs.labels[j, 0])
            ok = np.flatnonzero(np.isfinite(y))
            s = np.asarray(inputs.scores[i, j])
            pt, dist = _soft_block(full, (ok, s[ok], y[ok]), res.plan.study_patient, 30)
            assert pt == pytest.approx(roc_auc_score(y[ok], s[ok]), abs=1e-12)
            assert pt == pytest.approx(res.point[i, j, 0], abs=1e-12)
            np.testing.assert_allclose(dist, res.distribution[i, j, 0], rtol=0, atol=1e-12)
            want = [roc_auc_score(y[ok], s[ok], sample_weight=w[ok]) for w in w_all]
            np.testing.assert_allclose(dist, want, rtol=0, atol=1e-12)
    # a soft table whose probabilities are all 0/1 is the hard reference
    as_soft = hard.assign(source="soft", p_positive=(hard["state"] == "positive").astype(float))
    soft = evaluate_auc(preds, as_soft, n_resamples=30, rng=1)
    np.testing.assert_allclose(soft.point, res.point, rtol=0, atol=1e-12)
    np.testing.assert_allclose(soft.distribution, res.distribution, rtol=0, atol=1e-12)
    _, point, _ = auc_block(BlockInputs(inputs.scores, inputs.labels), (0, 0))
    assert point[0] == pytest.approx(res.point[0, 0, 0], abs=1e-12)


def test_is_the_ratio_of_expected_numerator_and_denominator_over_label_draws():
    """Monte Carlo: T_i ~ Bernoulli(p_i) independently; E[sum_{i != j} T_i (1 - T_j) H_ij] / E[sum T_i (1 - T_j)]
    equals the soft AUC (and differs from the mean of the per-draw AUCs, which it does not claim to be)."""
    preds, labs = soft_tables(n=40, seed=2)
    res = evaluate_auc(preds, labs, references=["soft"], findings=["Edema"], n_resamples=0)
    s, p = _arrays(preds, labs, "m0", "Edema")
    rng = np.random.default_rng(11)
    T = rng.random((100_000, s.size)) < p  # label draws
    r = rankdata(s)  # mid-ranks: U = sum of the positives' ranks - n1 (n1 + 1) / 2 counts ties as 1/2
    n1 = T.sum(axis=1)
    num = T @ r - n1 * (n1 + 1) / 2
    den = n1 * (s.size - n1)
    ratio = num.mean() / den.mean()
    assert res.point[0, 0, 0] == pytest.approx(ratio, abs=2e-3)  # MC standard error here is about 5e-4
    exact_num = sum(
        p[i] * (1 - p[j]) * ((s[i] > s[j]) + 0.5 * (s[i] == s[j]))
        for i in range(s.size)
        for j in range(s.size)
        if i != j
    )
    exact_den = sum(p[i] * (1 - p[j]) for i in range(s.size) for j in range(s.size) if i != j)
    assert res.point[0, 0, 0] == pytest.approx(exact_num / exact_den, abs=1e-12)
    assert num.mean() == pytest.approx(exact_num, rel=5e-3) and den.mean() == pytest.approx(
        exact_den, rel=5e-3
    )


def _files(tmp_path, labs, preds):
    lp, pp = tmp_path / "labels.csv", tmp_path / "preds.csv"
    labs.to_csv(lp, index=False)
    preds.to_csv(pp, index=False)
    return pp, lp


@pytest.mark.parametrize("value", ["abc", "1.5", "-0.1", "nan", "inf"])
def test_bad_probability_refused_naming_file_row_and_value(tmp_path, value):
    preds, labs = soft_tables(n=20)
    labs["p_positive"] = labs["p_positive"].astype(object)
    labs.iloc[7, labs.columns.get_loc("p_positive")] = value
    pp, lp = _files(tmp_path, labs, preds)
    with pytest.raises(SchemaError) as err:
        prepare_from_files(pp, lp)
    msg = str(err.value)
    assert (
        str(lp) in msg and "row 7" in msg and "'p_positive'" in msg and repr(value) in msg and "[0, 1]" in msg
    )


def test_blank_probability_only_where_the_label_is_missing(tmp_path):
    preds, labs = soft_tables(n=20)
    blank = labs.copy()
    blank.iloc[3, blank.columns.get_loc("p_positive")] = np.nan
    pp, lp = _files(tmp_path, blank, preds)
    with pytest.raises(
        SchemaError, match=r"row 3, column 'p_positive': blank, but the state labels the finding"
    ):
        prepare_from_files(pp, lp)
    missing = blank.copy()
    missing["state"] = missing["state"].astype(object)
    missing.iloc[3, missing.columns.get_loc("state")] = np.nan
    pp, lp = _files(tmp_path, missing, preds)
    prep = prepare_from_files(pp, lp, blank_state="missing")
    assert prep.soft_references == ("soft",) and np.isnan(prep.Y[0, prep.references.index("soft"), 3])


def test_soft_reference_split_over_a_table_without_the_column_refused(tmp_path):
    preds, labs = soft_tables(n=20)
    soft = labs[labs["source"] == "soft"]
    a, b = tmp_path / "a.csv", tmp_path / "b.csv"
    soft.iloc[:30].to_csv(a, index=False)
    soft.iloc[30:].drop(columns="p_positive").to_csv(b, index=False)
    pp = tmp_path / "preds.csv"
    preds.to_csv(pp, index=False)
    with pytest.raises(SchemaError, match="comes from a table without a p_positive column"):
        prepare_from_files(pp, [a, b])


def test_soft_labels_with_a_finding_map_refused():
    preds, labs = soft_tables(n=20)
    with pytest.raises(InvalidParameterError, match="Soft labels .* with a finding map"):
        evaluate_auc(
            preds,
            labs,
            finding_map=VocabularyMapping("both", {"Edema": ("Edema", "Effusion")}),
            n_resamples=0,
        )


def test_cli_bad_probability_exit_2(tmp_path, capsys):
    preds, labs = soft_tables(n=20)
    labs.iloc[2, labs.columns.get_loc("p_positive")] = 2.0
    pp, lp = _files(tmp_path, labs, preds)
    out = tmp_path / "out"
    assert main(["classify", "-p", str(pp), "-l", str(lp), "-o", str(out)]) == 2
    assert not out.exists() and "row 2, column 'p_positive'" in capsys.readouterr().err


def test_classify_and_rank_on_a_fuse_output(tmp_path):
    preds, labs = soft_tables(n=160, seed=4)
    readers = []
    rng = np.random.default_rng(9)
    hard = labs[labs["source"] == "hard"]
    for k in range(3):  # three noisy readers of the hard truth
        flip = rng.random(len(hard)) < 0.1 + 0.05 * k
        pos = (hard["state"] == "positive").to_numpy() ^ flip
        readers.append(hard.assign(source=f"r{k}", state=np.where(pos, "positive", "negative")))
    read = pd.concat(readers, ignore_index=True).drop(columns="p_positive")
    pp, lp = _files(tmp_path, read, preds)
    fused = tmp_path / "fused"
    assert (
        main(
            [
                "fuse",
                "--labels",
                str(lp),
                "--readers",
                "r0,r1,r2",
                "--methods",
                "mv,ds",
                "--seed",
                "0",
                "--out",
                str(fused),
            ]
        )
        == 0
    )
    fl = pd.read_csv(fused / "fused_labels.csv")
    ds = fl[fl["source"] == "fused_ds"]
    assert (
        ds["p_positive"].between(0, 1).all() and fl.loc[fl["source"] == "fused_mv", "p_positive"].isna().all()
    )
    out = tmp_path / "cls"
    assert (
        main(
            [
                "classify",
                "-p",
                str(pp),
                "-l",
                str(fused / "fused_labels.csv"),
                "--studies",
                "each",
                "--n-resamples",
                "20",
                "--seed",
                "1",
                "-o",
                str(out),
            ]
        )
        == 0
    )
    auc = pd.read_csv(out / "auc.csv")
    kept = ds[ds["state"].isin(["positive", "negative"])]  # the default policy excludes an uncertain state
    for m in ("m0", "m3"):
        for f in FINDINGS:
            lab = kept[kept["finding"] == f].sort_values("study_id")
            sc = (
                preds[(preds["model"] == m) & (preds["finding"] == f)]
                .set_index("study_id")
                .loc[lab["study_id"], "score"]
            )
            row = auc[(auc["model"] == m) & (auc["finding"] == f) & (auc["reference"] == "fused_ds")].iloc[0]
            assert row["auc"] == pytest.approx(
                latent_auc_score(sc.to_numpy(), lab["p_positive"].to_numpy()), abs=1e-12
            )
            assert row["ci_low"] <= row["auc"] <= row["ci_high"]
    summary = (out / "summary.md").read_text()
    assert summary.count(SOFT_AUC_MEANING) == 1 and "['fused_ds']" in summary
    rk = tmp_path / "rank"
    assert (
        main(
            [
                "rank",
                "-p",
                str(pp),
                "-l",
                str(fused / "fused_labels.csv"),
                "--n-resamples",
                "20",
                "--seed",
                "1",
                "-o",
                str(rk),
            ]
        )
        == 0
    )
    assert SOFT_AUC_MEANING in (rk / "summary.md").read_text()


def test_a_soft_reader_of_the_latent_truth_refused():
    from cxreval.latent import evaluate_latent_auc

    preds, labs = soft_tables(n=40)
    readers = [labs[labs["source"] == "hard"].assign(source=f"r{k}") for k in range(2)]
    with pytest.raises(InvalidParameterError, match=r"reader\(s\) \['soft'\] have soft labels"):
        evaluate_latent_auc(preds, pd.concat([labs, *readers]), readers=["soft", "r0", "r1"], n_resamples=0)
