"""What makes the latent-truth bootstrap fast without changing it: EM on score bins equals EM on the cells,
models with identical scores share one column of the joint fit, and the progress counts every finding and
replicate."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.special import expit, logit

from cxreval.latent import _em, evaluate_latent_auc
from cxreval.latent._fitting import ReaderData, check_inputs, fit_rows
from cxreval.progress import NoProgress


def simulate(n, seed, slope=1.0):
    """3 readers whose accuracy rises with the score's distance from its class mean, and the score."""
    rng = np.random.default_rng(seed)
    t = rng.random(n) < 0.3
    x = np.where(t, rng.normal(1.5, 1.0, n), rng.normal(0.0, 1.0, n))
    dev = (x - 1.5 * t)[:, None]
    se = expit(logit(np.array([0.85, 0.8, 0.75]))[None] + slope * dev)
    sp = expit(logit(np.array([0.85, 0.9, 0.8]))[None] - 0.5 * slope * dev)
    y = np.where(t[:, None], rng.random((n, 3)) < se, rng.random((n, 3)) > sp).astype(float)
    return y, x


def tables(n, seed):
    """Long label (3 readers) and prediction (2 models) tables of 2 findings; 2 studies per patient."""
    rng = np.random.default_rng(seed)
    sid, pid = [f"s{i:04d}" for i in range(n)], [f"p{i // 2:04d}" for i in range(n)]
    labs, preds = [], []
    for f in ("Edema", "Effusion"):
        t = rng.random(n) < 0.3
        for k, r in enumerate(("r1", "r2", "r3")):
            y = np.where(t, rng.random(n) < 0.9 - 0.05 * k, rng.random(n) > 0.85 + 0.03 * k)
            state = np.where(y, "positive", "negative")
            labs.append(
                pd.DataFrame({"study_id": sid, "patient_id": pid, "finding": f, "source": r, "state": state})
            )
        for m, d in (("m1", 1.0), ("m2", 2.0)):
            preds.append(
                pd.DataFrame({"study_id": sid, "model": m, "finding": f, "score": rng.normal(size=n) + d * t})
            )
    return pd.concat(preds, ignore_index=True), pd.concat(labs, ignore_index=True)


def _cell_level_log_ratio(cells, se, sp, a, b):
    """The readers' log-likelihoods computed cell by cell (each cell's own sensitivity at its score)."""
    z = cells.bin_basis[cells.bin, 1][None, :, None]
    se_c = np.clip(expit(logit(se)[:, None] + a[:, None] * z), _em.EPS, 1 - _em.EPS)
    sp_c = np.clip(expit(logit(sp)[:, None] + b[:, None] * z), _em.EPS, 1 - _em.EPS)
    pos, neg = cells.positive[None], cells.negative[None]
    r1 = (np.log(se_c) * pos + np.log1p(-se_c) * neg).sum(axis=2)
    r0 = (np.log1p(-sp_c) * pos + np.log(sp_c) * neg).sum(axis=2)
    return r1, r0


def test_bin_level_reader_terms_equal_the_cell_level_ones():
    y, x = simulate(800, 4)
    inputs = check_inputs(ReaderData(y, x, None, None, None), None, 0.5, score_model="dependent")
    cells, st = fit_rows(inputs, inputs.weight[None, :], score_prior=0.5, max_iter=2000, tol=1e-10)
    assert (np.diff(cells.bin) >= 0).all() and cells.per_bin.sum() == cells.n_cells
    args = (st.sensitivity, st.specificity, st.se_slope, st.sp_slope)
    for got, want in zip(_em.reader_log_ratio(cells, *args), _cell_level_log_ratio(cells, *args)):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def test_models_with_identical_scores_get_identical_rows():
    preds, labs = tables(n=300, seed=5)
    copy = preds[preds["model"] == "m1"].assign(model="m1_copy")
    res = evaluate_latent_auc(
        pd.concat([preds, copy]), labs, readers=["r1", "r2", "r3"], n_resamples=20, rng=0
    )
    t = res.table.set_index(["model", "finding"])
    cols = ["auc", "ci_low", "ci_high", "n_pos", "n_neg"]
    pd.testing.assert_frame_equal(
        t.loc["m1", cols], t.loc["m1_copy", cols], check_names=False, check_exact=True
    )
    alone = evaluate_latent_auc(preds, labs, readers=["r1", "r2", "r3"], n_resamples=20, rng=0)
    a = alone.table.set_index(["model", "finding"])
    pd.testing.assert_frame_equal(a.loc["m1", cols], t.loc["m1", cols], check_exact=True)


class _Recorded(NoProgress):
    def __init__(self):
        self.names, self.counts, self.finished = {}, {}, set()

    def add(self, description, total=None):
        k = len(self.names) + 1
        self.names[k], self.counts[k] = (description, total), []
        return k

    def advance(self, task, n=1):
        self.counts[task].append(n)

    def done(self, task):
        self.finished.add(task)


@pytest.mark.parametrize("n_resamples", [0, 15])
def test_progress_counts_each_finding_and_replicate(n_resamples):
    preds, labs = tables(n=200, seed=6)
    p = _Recorded()
    evaluate_latent_auc(preds, labs, readers=["r1", "r2", "r3"], n_resamples=n_resamples, rng=0, progress=p)
    n_fits = 2  # one joint fit of the readers and both models per finding
    by_name = {d: (k, total) for k, (d, total) in p.names.items()}
    k, total = by_name["joint latent-class fits (finding)"]
    assert total == n_fits and sum(p.counts[k]) == n_fits and k in p.finished
    if n_resamples:
        k, total = by_name["bootstrap replicates refitted"]
        assert total == n_fits * n_resamples and p.counts[k] == [n_resamples] * n_fits and k in p.finished
    else:
        assert "bootstrap replicates refitted" not in by_name


def test_process_executor_gives_the_serial_result():
    preds, labs = tables(n=200, seed=7)
    kw = {"readers": ["r1", "r2", "r3"], "n_resamples": 10, "rng": 0}
    serial = evaluate_latent_auc(preds, labs, **kw)
    p = _Recorded()
    proc = evaluate_latent_auc(preds, labs, executor="process:2", progress=p, **kw)
    pd.testing.assert_frame_equal(serial.table, proc.table, check_exact=True)
    np.testing.assert_array_equal(serial.distribution, proc.distribution)
    k = next(k for k, (d, _) in p.names.items() if d == "bootstrap replicates refitted")
    assert sum(p.counts[k]) == p.names[k][1]
