"""compute_precision_recall against scikit-learn, and its bootstrap CIs."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import precision_recall_fscore_support

from cxreval.exceptions import SchemaError
from cxreval.labeller import compute_precision_recall
from cxreval.labeller._validation import NIH_LABELLER_OPENI, PRF_COLUMNS


def _tables(n=300, k=3, rng=0):
    g = np.random.default_rng(rng)
    fs = ["Atelectasis", "Mass", "Effusion"][:k]
    gold = g.choice([-1, 0, 1, 2], size=(n, k), p=[0.3, 0.4, 0.1, 0.2])
    pred = np.where(g.random((n, k)) < 0.8, gold, g.choice([-1, 0, 1, 2], size=(n, k)))
    rows = []
    for src, st in (("gold", gold), ("lab", pred)):
        rows.append(
            pd.DataFrame(
                {
                    "study_id": np.repeat([f"s{i}" for i in range(n)], k),
                    "patient_id": np.repeat([f"p{i // 3}" for i in range(n)], k),
                    "finding": np.tile(fs, n),
                    "source": src,
                    "state": st.ravel(),
                }
            )
        )
    return pd.concat(rows, ignore_index=True), gold, pred, fs


@pytest.mark.parametrize("uncertain", ["negative", "positive"])
def test_point_estimates_match_sklearn(uncertain):
    t, gold, pred, fs = _tables()
    res = compute_precision_recall(
        t, reference="gold", predicted="lab", uncertain=uncertain, n_resamples=200, rng=1
    ).table
    assert list(res.columns) == list(PRF_COLUMNS) and res.finding.tolist() == [*fs, "micro", "macro"]
    thr = 1 if uncertain == "positive" else 2
    yt, yp = gold >= thr, pred >= thr
    p, r, f, _ = precision_recall_fscore_support(yt, yp, average=None, zero_division=0)
    np.testing.assert_allclose(res.precision[:3], p)
    np.testing.assert_allclose(res.recall[:3], r)
    np.testing.assert_allclose(res.f1[:3], f)
    for avg in ("micro", "macro"):
        p, r, f, _ = precision_recall_fscore_support(yt, yp, average=avg, zero_division=0)
        row = res.set_index("finding").loc[avg]
        np.testing.assert_allclose([row.precision, row.recall, row.f1], [p, r, f])
    assert res.TP[:3].sum() == res.TP.iloc[3] and res.n_pos.iloc[3] == int(yt.sum())
    assert (res.f1_low <= res.f1 + 1e-12).all() and (res.f1 <= res.f1_high + 1e-12).all()


def test_ci_is_seeded_and_patient_level():
    t, *_ = _tables()
    a = compute_precision_recall(t, reference="gold", predicted="lab", n_resamples=100, rng=5).table
    b = compute_precision_recall(t, reference="gold", predicted="lab", n_resamples=100, rng=5).table
    pd.testing.assert_frame_equal(a, b)
    # one patient -> no variation at all
    t1 = t.assign(patient_id="p")
    c = compute_precision_recall(t1, reference="gold", predicted="lab", n_resamples=50, rng=5).table
    np.testing.assert_allclose(c.f1_low, c.f1)
    np.testing.assert_allclose(c.f1_high, c.f1)


def test_nih_figures_and_errors():
    assert NIH_LABELLER_OPENI[("micro", "f1")] == 0.90 and NIH_LABELLER_OPENI[("Mass", "recall")] == 0.40
    t, *_ = _tables()
    res = compute_precision_recall(t, reference="gold", predicted="lab", n_resamples=10, rng=0).table
    assert res.set_index("finding").loc["Mass", "nih_f1"] == 0.52
    with pytest.raises(SchemaError, match="Source 'x'"):
        compute_precision_recall(t, reference="gold", predicted="x")
    with pytest.raises(SchemaError, match="lacks 1 studies"):
        compute_precision_recall(
            t[~((t.source == "lab") & (t.study_id == "s0"))], reference="gold", predicted="lab"
        )
