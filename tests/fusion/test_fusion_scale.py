"""Fusion at scale: answer patterns, the stated stopping rule, fused-only output and ``fuse --executor``."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from cxreval.cli.main import main
from cxreval.executor import open_executor
from cxreval.fusion import MACE, DawidSkene, fuse_labels
from cxreval.fusion._base import encode_annotations
from cxreval.fusion._mace import mace_fit, mace_starts
from cxreval.labels import read_labels
from cxreval.stats._answer_patterns import answer_patterns
from cxreval.stats._dawid_skene import dawid_skene_em

METHODS = "mv,or,and,ds,mace"
CONFUSION = np.array(
    [  # reader x true x observed
        [[0.90, 0.05, 0.05], [0.20, 0.60, 0.20], [0.05, 0.10, 0.85]],
        [[0.80, 0.15, 0.05], [0.30, 0.50, 0.20], [0.10, 0.10, 0.80]],
        [[0.70, 0.10, 0.20], [0.10, 0.70, 0.20], [0.20, 0.10, 0.70]],
        [[0.95, 0.04, 0.01], [0.40, 0.40, 0.20], [0.30, 0.10, 0.60]],
        [[0.60, 0.20, 0.20], [0.20, 0.60, 0.20], [0.10, 0.20, 0.70]],
    ]
)
NAMES = {0: "negative", 1: "uncertain", 2: "positive"}


def simulate_ds(n_items, seed, p_missing=0.0, prior=(0.55, 0.15, 0.30)):
    """5 readers with known confusion matrices (as in test_dawid_skene.py)."""
    rng = np.random.default_rng(seed)
    z = rng.choice(3, size=n_items, p=prior)
    cum = np.cumsum(CONFUSION, axis=2)
    u = rng.random((n_items, 5))
    labels = (u[:, :, None] > cum[np.arange(5)[None, :], z[:, None], :]).sum(axis=2)
    ii, jj = np.nonzero(rng.random((n_items, 5)) >= p_missing)
    return pd.DataFrame(
        {"study_id": [f"s{i:05d}" for i in ii], "source": [f"r{j}" for j in jj], "state": labels[ii, jj]}
    ), z


def make_table(n, seed):
    """A long label table: reference CR and readers Rep1, Rep2 on 3 findings (as in test_fuse_cli.py)."""
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(n):
        for f in ("Atelectasis", "Effusion", "Edema"):
            t = int(rng.choice(3, p=[0.5, 0.2, 0.3]))
            rows.append((f"s{i:03d}", f"p{i // 2:03d}", f, "CR", NAMES[t]))
            for r, acc in (("Rep1", 0.8), ("Rep2", 0.7)):
                lab = t if rng.random() < acc else int(rng.integers(0, 3))
                rows.append((f"s{i:03d}", f"p{i // 2:03d}", f, r, NAMES[lab]))
    return pd.DataFrame(rows, columns=["study_id", "patient_id", "finding", "source", "state"])


@pytest.fixture(scope="module")
def sparse():
    """5 readers, 3 states, 30 % of the labels missing: patterns of 1-5 readers."""
    return simulate_ds(n_items=3000, seed=2, p_missing=0.3)[0]


def test_answer_patterns_group_equal_items(sparse):
    ann = encode_annotations(sparse, func="test")
    pat = answer_patterns(ann.item, ann.reader, ann.label, ann.n_items, ann.n_readers, 3)
    assert pat.n_patterns <= 4**5 - 1 and pat.weight.sum() == ann.n_items
    # independent check: the sorted (reader, label) tuple of every item, grouped with pandas
    key = pd.Series(list(zip(ann.reader, ann.label))).groupby(ann.item).agg(tuple)
    assert key.nunique() == pat.n_patterns
    rep = pd.Series(list(zip(pat.reader, pat.label))).groupby(pat.item).agg(tuple)
    np.testing.assert_array_equal(rep.to_numpy()[pat.inverse], key.to_numpy())
    # too many readers for a 63-bit code: every item is its own pattern
    wide = answer_patterns(ann.item, ann.reader, ann.label, ann.n_items, 40, 3)
    assert wide.n_patterns == ann.n_items and (wide.weight == 1).all()


def test_pattern_fits_equal_item_by_item_fits(sparse):
    """The weighted EM on patterns gives the item-by-item EM's results (to rounding)."""
    ann = encode_annotations(sparse, func="test")
    init = np.bincount(ann.item * 3 + ann.label, minlength=ann.n_items * 3).reshape(-1, 3) + 0.01
    init = init / init.sum(axis=1, keepdims=True)
    T, prior, err, hist, conv = dawid_skene_em(
        ann.item, ann.reader, ann.label, ann.n_items, ann.n_readers, 3, init, n_iter=500, tol=1e-9
    )
    ds = DawidSkene().fit(sparse)
    np.testing.assert_allclose(ds.probas_.to_numpy(), T, rtol=0, atol=1e-9)
    np.testing.assert_allclose(ds.log_likelihood_history_["*"], hist, rtol=1e-12)
    assert ds.fit_info_["n_iter"].item() == len(hist) and ds.fit_info_["converged"].item() == conv
    assert ds.fit_info_["n_patterns"].item() < ann.n_items / 3

    starts = mace_starts(np.random.default_rng(5), 3, ann.n_readers, 3)
    post, spam, strategy, lls, *_ = mace_fit(
        ann.item,
        ann.reader,
        ann.label,
        ann.n_items,
        ann.n_readers,
        3,
        n_restarts=3,
        n_iter=20,
        method="vb",
        alpha=0.5,
        beta=0.5,
        smoothing=0.01 / 3,
        starts=starts,
    )
    m = MACE(n_restarts=3, n_iter=20, rng=5).fit(sparse)
    np.testing.assert_allclose(m.probas_.to_numpy(), post, rtol=0, atol=1e-9)
    np.testing.assert_allclose(m.log_likelihoods_["*"], lls, rtol=1e-12)
    np.testing.assert_allclose(m.competence_["competence"].to_numpy(), spam[:, 1], rtol=1e-10)


def test_stopping_rule_converges_early_and_says_so():
    d, _ = simulate_ds(n_items=2000, seed=6)
    ds = DawidSkene(tol=1e-6).fit(d)
    info = ds.fit_info_.iloc[0]
    hist = ds.log_likelihood_history_["*"]
    assert info["converged"] and info["n_iter"] < 500 and info["n_iter"] == len(hist)
    assert 0 <= info["final_change"] < 1e-6
    assert info["final_change"] == pytest.approx((hist[-1] - hist[-2]) / 2000, rel=1e-12)
    assert (np.diff(hist)[:-1] / 2000 >= 1e-6).all()  # it did not stop before the rise fell below tol


def test_stopping_rule_stops_at_max_iter_and_says_so():
    d, _ = simulate_ds(n_items=2000, seed=6)
    ds = DawidSkene(n_iter=3, tol=1e-9).fit(d)
    info = ds.fit_info_.iloc[0]
    assert not info["converged"] and info["n_iter"] == 3 and info["final_change"] > 1e-9
    m = MACE(n_restarts=2, n_iter=4, rng=0).fit(d)  # default: no tolerance, n_iter iterations
    assert m.fit_info_["n_iter"].item() == 4 and not m.fit_info_["converged"].item()
    m = MACE(n_restarts=2, n_iter=500, tol=1e-6, rng=0).fit(d)
    info = m.fit_info_.iloc[0]
    assert info["converged"] and info["n_iter"] < 500 and abs(info["final_change"]) < 1e-6
    with pytest.raises(Exception, match="'tol' parameter of MACE"):
        MACE(tol=-1).fit(d)


@pytest.fixture()
def labels_csv(tmp_path):
    p = tmp_path / "labels.csv"
    make_table(n=80, seed=3).to_csv(p, index=False)
    return p


def _fuse(labels_csv, out, *extra):
    return main(
        [
            "fuse",
            "--labels",
            str(labels_csv),
            "--readers",
            "Rep1,Rep2",
            "--methods",
            METHODS,
            "--adjudicated",
            "CR",
            "--seed",
            "4",
            "--out",
            str(out),
            *extra,
        ]
    )


def test_fused_only_by_default_inputs_and_parquet_on_request(labels_csv, tmp_path, capsys):
    assert _fuse(labels_csv, tmp_path / "a", "--json") == 0
    payload = json.loads(capsys.readouterr().out)
    fused = read_labels(tmp_path / "a" / "fused_labels.csv").table
    assert set(fused["source"]) == {f"fused_{m}" for m in METHODS.split(",")}
    assert not (tmp_path / "a" / "fused_labels.parquet").exists()
    conv = pd.DataFrame(payload["convergence"])
    assert set(conv["method"]) == {"ds", "mace"} and len(conv) == 6  # 3 findings x 2 methods
    assert conv.loc[conv.method == "ds", "converged"].all()
    summary = (tmp_path / "a" / "summary.md").read_text()
    assert (
        "## Stopping rule" in summary
        and "ds: stops when the log-likelihood per item rises by less than "
        "tol=1e-09, else after n_iter=500 iterations; 3/3 fits converged"
        in summary
    )

    assert _fuse(labels_csv, tmp_path / "b", "--write-inputs", "--labels-format", "parquet") == 0
    both = pd.read_parquet(tmp_path / "b" / "fused_labels.parquet")
    assert not (tmp_path / "b" / "fused_labels.csv").exists()
    assert set(both["source"]) == {"CR", "Rep1", "Rep2"} | set(fused["source"])
    inputs = read_labels(labels_csv).table
    assert (both["source"].isin(["CR", "Rep1", "Rep2"])).sum() == len(inputs)
    pd.testing.assert_frame_equal(
        both[both.source.str.startswith("fused_")].reset_index(drop=True),
        pd.read_csv(tmp_path / "a" / "fused_labels.csv"),
        check_dtype=False,
    )
    assert _fuse(labels_csv, tmp_path / "c", "--labels-format", "xlsx") == 2
    assert "--labels-format must be one of" in capsys.readouterr().err and not (tmp_path / "c").exists()


def _files(folder):
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file() and p.name != "run.json"}


@pytest.fixture()
def serial_run(labels_csv, tmp_path):
    assert _fuse(labels_csv, tmp_path / "serial", "--labels-format", "both") == 0
    return _files(tmp_path / "serial")


def test_fuse_process_executor_equals_serial_byte_for_byte(labels_csv, tmp_path, serial_run):
    assert _fuse(labels_csv, tmp_path / "proc", "--labels-format", "both", "--executor", "process:2") == 0
    got = _files(tmp_path / "proc")
    assert list(got) == list(serial_run) and "fused_labels.parquet" in got
    for name in serial_run:
        assert got[name] == serial_run[name], name
    assert not (tmp_path / "proc" / ".fuse-spill").exists()


def test_fuse_dask_cluster_equals_serial_byte_for_byte(labels_csv, tmp_path, serial_run, dask_cluster):
    assert (
        _fuse(labels_csv, tmp_path / "dask", "--labels-format", "both", "--executor", f"dask:{dask_cluster}")
        == 0
    )
    got = _files(tmp_path / "dask")
    assert list(got) == list(serial_run)
    for name in serial_run:
        assert got[name] == serial_run[name], name


def test_fuse_bad_executor_exits_2_before_work(labels_csv, tmp_path, capsys):
    assert _fuse(labels_csv, tmp_path / "x", "--executor", "cluster:9") == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "cluster:9" in err[0] and not (tmp_path / "x").exists()


def test_fuse_label_table_executor_equals_serial():
    t = make_table(n=40, seed=5)
    t = t.assign(state=t.state.map({"negative": 0, "uncertain": 1, "positive": 2}).astype("Int8"))
    kw = dict(rng=3, params={"mace": {"n_restarts": 3}})
    serial = fuse_labels(t, ["Rep1", "Rep2", "CR"], ["ds", "mace", "mv"], **kw)
    with open_executor("process:2") as ex:
        par = fuse_labels(t, ["Rep1", "Rep2", "CR"], ["ds", "mace", "mv"], executor=ex, **kw)
    pd.testing.assert_frame_equal(par.labels, serial.labels, check_exact=True)
    for m in ("ds", "mace"):
        pd.testing.assert_frame_equal(
            par.estimators[m].probas_, serial.estimators[m].probas_, check_exact=True
        )
    pd.testing.assert_frame_equal(
        par.estimators["ds"].errors_, serial.estimators["ds"].errors_, check_exact=True
    )
    pd.testing.assert_frame_equal(par.convergence, serial.convergence, check_exact=True)
    by_spec = fuse_labels(t, ["Rep1", "Rep2", "CR"], ["ds", "mace", "mv"], executor="process:2", **kw)
    pd.testing.assert_frame_equal(by_spec.labels, serial.labels, check_exact=True)
