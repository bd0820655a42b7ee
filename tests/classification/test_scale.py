"""The AUC engine at scale: blocks of (model, finding) streamed one at a time, count shards sized from
the problem, int16 products, off-process tasks that carry block ids and .npy paths. Every figure must equal the
serial, one-shard result exactly, and scikit-learn's on resampled indices."""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import roc_auc_score as sk_auc

from _factories import AUC_FINDINGS, auc_inputs
from cxreval.bootstrap import draw_plan, shard_size_for
from cxreval.classification import evaluate_auc
from cxreval.cli.main import main
from cxreval.labels import write_labels
from cxreval.labels._long import write_predictions
from cxreval.stats._auc_kernel import AUCIndex, BlockInputs, auc_block, positive_weights, spill_inputs


def _children() -> set[int]:
    import psutil

    return {p.pid for p in psutil.Process().children(recursive=True)}


def test_table_and_distribution_do_not_depend_on_shard_size():
    preds, labels = auc_inputs(n_models=3, n_studies=150)
    ref = evaluate_auc(preds, labels, n_resamples=37, rng=3, shard_size=37)
    for size in (1, 4, 16, None):
        res = evaluate_auc(preds, labels, n_resamples=37, rng=3, shard_size=size)
        assert np.array_equal(res.distribution, ref.distribution, equal_nan=True), size
        pd.testing.assert_frame_equal(res.table, ref.table)


def test_replicates_equal_sklearn_on_resampled_indices():
    preds, labels = auc_inputs(n_models=2, n_studies=90, rng=4)
    res = evaluate_auc(preds, labels, n_resamples=12, rng=9, shard_size=5, micro=False, macro=False)
    plan = res.plan
    studies = np.asarray(plan.study_ids)
    lab = labels[labels.source == "R1"].set_index(["finding", "study_id"])["state"]
    sc = preds.set_index(["model", "finding", "study_id"])["score"]
    for f in AUC_FINDINGS:
        st = lab.loc[f].reindex(studies).to_numpy()
        keep = np.isin(st, ["positive", "negative"])
        y = (st == "positive").astype(int)
        s = sc.loc[("M1", f)].reindex(studies).to_numpy()
        j = res.findings.index(f)
        for b in range(plan.n_resamples):
            idx = plan.study_indices(b)
            idx = idx[keep[idx]]
            assert res.distribution[1, j, 1, b] == pytest.approx(sk_auc(y[idx], s[idx]), abs=1e-12)


def test_int16_int32_and_int64_counts_give_the_same_aucs():
    g = np.random.default_rng(0)
    n, n_pat = 400, 130
    y = g.random(n) < 0.3
    s = np.round(g.normal(size=n) + y, 1)  # ties
    group = g.integers(0, n_pat, n)
    ct = g.integers(0, 5, size=(n_pat, 24))
    idx = AUCIndex(y, s)
    a16 = idx.auc_grouped(ct.astype(np.int16), group)
    a32 = idx.auc_grouped(ct.astype(np.int32), group)
    a64 = idx.auc_grouped(ct.astype(np.int64), group)
    big = idx.auc_grouped(ct.astype(np.int16) * 3000, group)  # rows past 2**15: the int32 product
    assert np.array_equal(a16, a32) and np.array_equal(a16, a64)
    w = ct[group]
    for b in range(ct.shape[1]):
        rep = np.repeat(np.arange(n), w[:, b])
        assert a16[b] == pytest.approx(sk_auc(y[rep], s[rep]), abs=1e-12)
        assert big[b] == pytest.approx(a16[b], abs=1e-12)


def test_int16_product_bound_counts_both_breaks_of_tied_positives():
    # one negative at 0.5; 6,000 positives tied with it (they read break 0 and break 1) and 6,000 above it (break
    # 1 twice): row 1 of the product sums 18,000 counts, past 2**15 - 1 at weight 2, though no break holds more
    # than 6,000 positives' lo
    a = 6_000
    y = np.r_[False, np.ones(2 * a, dtype=bool)]
    s = np.r_[0.5, np.full(a, 0.5), np.full(a, 0.7)]
    ct = np.full((y.size, 3), 2, dtype=np.int16)
    ct[0] = [1, 2, 1]
    got = AUCIndex(y, s).auc_grouped(ct, None)
    for b in range(3):
        assert got[b] == pytest.approx(sk_auc(y, s, sample_weight=ct[:, b]), abs=1e-12)


def test_spilled_block_equals_in_memory_block(tmp_path):
    g = np.random.default_rng(1)
    n, n_f = 200, 3
    pat = g.integers(0, 60, n)
    plan = draw_plan(pat, n_resamples=21, rng=0)
    S = np.round(g.random((2, n_f, n)), 2)
    Y = (g.random((n_f, 2, n)) < 0.3).astype(float)
    Y[g.random(Y.shape) < 0.05] = np.nan
    shards = plan.count_shards(8)
    assert shards.shape == (3, plan.n_patients, 8) and shards.dtype == np.int16
    assert np.array_equal(shards.transpose(0, 2, 1).reshape(-1, plan.n_patients)[:21], plan.counts)
    inp = BlockInputs(
        S,
        Y,
        plan.study_patient,
        shards,
        positive_weights(Y, plan.study_patient, shards),
        plan.n_resamples,
        plan.n_patients,
        int(plan.counts.max()),
    )
    spilled = spill_inputs(inp, tmp_path)
    assert isinstance(spilled.scores, str) and Path(spilled.shards).exists()
    for block in [(0, 0), (1, 2), (1, n_f)]:  # (1, n_f): the micro average
        a, b = auc_block(inp, block), auc_block(spilled, block)
        assert a[0] == b[0] == block
        assert np.array_equal(a[1], b[1], equal_nan=True) and np.array_equal(a[2], b[2], equal_nan=True)
        assert a[2].shape == (2, 21)


def test_draw_plan_in_chunks_is_the_one_shot_stream(monkeypatch):
    import cxreval.bootstrap as bs

    pat = np.random.default_rng(0).integers(0, 301, 900)
    whole = draw_plan(pat, n_resamples=50, rng=11)
    monkeypatch.setattr(bs, "_DRAW_CHUNK", 301 * 3 + 5)  # 3 replicates per chunk
    chunked = draw_plan(pat, n_resamples=50, rng=11)
    assert np.array_equal(whole.counts, chunked.counts)
    # the original formula: one (B, n) draw
    n = whole.n_patients
    draws = np.random.default_rng(11).integers(0, n, size=(50, n))
    old = np.bincount((draws + n * np.arange(50)[:, None]).ravel(), minlength=50 * n).reshape(50, n)
    assert np.array_equal(whole.counts, old)


def test_shard_size_for_grows_as_the_problem_shrinks():
    assert shard_size_for(65_000, 228_000, 1000) == 32
    assert shard_size_for(100, 300, 1000) == 512
    assert shard_size_for(100, 300, 40) == 40
    assert shard_size_for(10**7, 10**8, 1000) == 8


def test_jackknife_and_bca_rebuild_indices_on_demand():
    preds, labels = auc_inputs(n_models=2, n_studies=60)
    res = evaluate_auc(preds, labels, n_resamples=30, rng=1)
    jk = res.jackknife("M0", "Effusion", "R0")
    assert jk.shape == (res.plan.n_patients,) and np.isfinite(jk).all()
    assert np.isfinite(res.jackknife("M1", "micro", "R1")).all()
    assert res.bootstrap("M0", "macro", "R0", ci_method="bca").method == "BCa"


# ----------------------------------------------------------------------- CLI: executors


def _write(tmp_path: Path) -> tuple[Path, Path]:
    preds, labels = auc_inputs(n_models=3, n_studies=120, rng=5)
    lp, pp = tmp_path / "labels.csv", tmp_path / "preds.csv"
    write_labels(labels, lp)
    write_predictions(preds, pp)
    return pp, lp


def _same_outputs(a: Path, b: Path) -> None:
    names = sorted(p.name for p in a.iterdir() if p.name != "run.json")
    assert names == sorted(p.name for p in b.iterdir() if p.name != "run.json")
    assert not [n for n in names if n.startswith("cxreval-spill")]
    for name in names:
        assert (a / name).read_bytes() == (b / name).read_bytes(), name


def _no_children_left(before: set[int]) -> None:
    deadline = time.monotonic() + 10
    while _children() - before and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _children() - before, "worker processes left behind"


@pytest.mark.parametrize("command", ["classify", "rank"])
def test_cli_process_executor_equals_serial_byte_for_byte(tmp_path, command):
    pp, lp = _write(tmp_path)
    before = _children()
    extra = ["--min-models", "2"] if command == "rank" else []
    for ex in ("serial", "process:2"):
        assert (
            main(
                [
                    command,
                    "-p",
                    str(pp),
                    "-l",
                    str(lp),
                    "--n-resamples",
                    "30",
                    "--seed",
                    "3",
                    *extra,
                    "--executor",
                    ex,
                    "-o",
                    str(tmp_path / ex.replace(":", "_")),
                ]
            )
            == 0
        )
    _no_children_left(before)
    _same_outputs(tmp_path / "serial", tmp_path / "process_2")


@pytest.mark.parametrize("command", ["classify", "rank"])
def test_cli_dask_cluster_equals_serial_byte_for_byte(tmp_path, dask_cluster, command):
    pp, lp = _write(tmp_path)
    extra = ["--min-models", "2"] if command == "rank" else []
    for ex in ("serial", dask_cluster.replace("tcp://", "dask://")):
        assert (
            main(
                [
                    command,
                    "-p",
                    str(pp),
                    "-l",
                    str(lp),
                    "--n-resamples",
                    "30",
                    "--seed",
                    "3",
                    *extra,
                    "--executor",
                    ex,
                    "-o",
                    str(tmp_path / ("serial" if ex == "serial" else "dask")),
                ]
            )
            == 0
        )
    _same_outputs(tmp_path / "serial", tmp_path / "dask")


@pytest.mark.slow
def test_cli_dask_local_leaves_no_process(tmp_path):
    pytest.importorskip("dask.distributed", reason="dask[distributed] (test extra) is not installed")
    pp, lp = _write(tmp_path)
    before = _children()
    for ex in ("serial", "dask:local:2"):
        assert (
            main(
                [
                    "classify",
                    "-p",
                    str(pp),
                    "-l",
                    str(lp),
                    "--n-resamples",
                    "20",
                    "--seed",
                    "1",
                    "--executor",
                    ex,
                    "-o",
                    str(tmp_path / ex.replace(":", "_")),
                ]
            )
            == 0
        )
    _no_children_left(before)
    _same_outputs(tmp_path / "serial", tmp_path / "dask_local_2")
