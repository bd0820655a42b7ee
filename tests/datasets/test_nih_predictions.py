"""Tests of cxreval.datasets.nih_predictions; the published-AUC check runs on the real predictions."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import roc_auc_score as sk_auc

from cxreval.classification import evaluate_auc
from cxreval.datasets import nih_predictions as nh
from cxreval.exceptions import DataUnavailableError, InvalidParameterError, SchemaError


def _write(d, name, cols, rows):
    pd.DataFrame(rows, columns=cols).to_csv(d / f"{name}.csv", index=False)


def test_wide_files_column_order_and_logits(tmp_path):
    _write(
        tmp_path,
        "a",
        ["Image Index", "prob_Mass", "prob_Nodule", "prob_Pleural_Thickening"],
        [["x1.png", 0.1, 0.2, 0.3], ["x2.png", 0.4, 0.5, 0.6]],
    )
    _write(
        tmp_path,
        "b_logits",
        ["Image Index", "prob_Nodule", "prob_Pleural_Thickening", "prob_Mass"],
        [["x1.png", -1.0, 2.0, 0.0], ["x2.png", 1.0, -2.0, 3.0]],
    )
    res = nh.load_predictions(tmp_path)
    t = res.table
    assert nh.list_models(tmp_path) == ["a", "b_logits"]
    assert set(t.finding) == {"Mass", "Nodule", "Pleural Thickening"}
    assert t[(t.model == "b_logits") & (t.study_id == "x2.png") & (t.finding == "Mass")].score.iloc[0] == 3.0
    assert any("column order differs" in n for n in res.report.notes)
    assert any("b_logits: scores are logits" in n for n in res.report.notes)
    s = nh.load_predictions(tmp_path, logits="sigmoid").table
    v = s[(s.model == "b_logits") & (s.study_id == "x2.png") & (s.finding == "Mass")].score.iloc[0]
    assert v == pytest.approx(1 / (1 + np.exp(-3.0)))
    comb = nh.combine_findings(t, {"Nodule or Mass": ("Nodule", "Mass")})
    assert comb[(comb.model == "a") & (comb.study_id == "x1.png")].score.iloc[0] == 0.2
    assert set(comb.finding) == {"Nodule or Mass"}


def test_errors(tmp_path):
    with pytest.raises(DataUnavailableError, match="does not exist"):
        nh.load_predictions(tmp_path / "nope")
    with pytest.raises(DataUnavailableError, match="No '\\*.csv' prediction file"):
        nh.load_predictions(tmp_path)
    _write(tmp_path, "a", ["Image Index", "prob_Mass"], [["x1.png", np.nan]])
    with pytest.raises(SchemaError, match="Non-finite or non-numeric score"):
        nh.load_predictions(tmp_path)
    with pytest.raises(InvalidParameterError, match="Unknown model 'zz'"):
        nh.load_predictions(tmp_path, models=["zz"])
    with pytest.raises(InvalidParameterError, match="No published AUCs are known for model 'a'"):
        nh.load_published_aucs(tmp_path, "a")


@pytest.mark.slow
def test_jrzech_aucs_equal_published_values(shared_data, metadata_dir):
    """Acceptance: jrzech/reproduce-chexnet's published per-finding AUCs, to 1e-12."""
    from cxreval.datasets import nih

    d = shared_data / "nih_fold_predictions"
    preds = nh.load_predictions(d, models=["jrzech_densenet121"]).table
    labels = nih.load_labels().table
    labels = labels[labels.study_id.isin(set(preds.study_id))]
    res = evaluate_auc(preds, labels, n_resamples=0)
    pub = nh.load_published_aucs(d, "jrzech_densenet121")
    got = res.table[~res.table.finding.isin(["macro", "micro"])].set_index("finding").auc
    assert len(got) == 14
    assert np.max(np.abs(got - pub.reindex(got.index))) < 1e-12
    # and equal to sklearn on the same arrays
    y = labels[labels.finding == "Hernia"].set_index("study_id").state.astype(int) // 2
    s = preds[preds.finding == "Hernia"].set_index("study_id").score.reindex(y.index)
    assert abs(got["Hernia"] - sk_auc(y, s)) < 1e-12
