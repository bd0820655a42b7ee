"""evaluate_operating_points: every operating point equals scikit-learn's ``roc_curve``/``confusion_matrix`` (on
synthetic tables and on the CheXpert test set), its intervals are the percentiles of the rule chosen again in each
replicate of the AUCs' patient plan, a ``from=`` file carries thresholds to another set, net benefit equals the
hand formula and the ``dcurves`` package, and bad input is refused before computing."""

from __future__ import annotations

import json
import os
import subprocess
import textwrap

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import confusion_matrix, roc_curve

from _factories import auc_inputs
from cxreval.bootstrap import draw_plan
from cxreval.classification import OperatingPointResult, evaluate_operating_points
from cxreval.classification._operating_points import (
    DECISION_CURVE_COLUMNS,
    _net_benefit,
    decision_thresholds,
)
from cxreval.exceptions import CxrevalError
from cxreval.stats import prepare_inputs

POINTS = ["spec=0.9", "sens=0.9", "youden", "threshold=0.5"]


def _probabilities(
    n_models: int = 3, n_studies: int = 150, seed: int = 0
) -> tuple[pd.DataFrame, pd.DataFrame]:
    preds, labs = auc_inputs(n_models=n_models, n_studies=n_studies, rng=seed)
    preds["score"] = np.round(1 / (1 + np.exp(-preds["score"])), 2)  # probabilities, with ties
    return preds, labs


def _sklearn_row(label: str, y: np.ndarray, s: np.ndarray) -> dict[str, float]:
    """The operating point by scikit-learn: the ROC point the rule picks, and the rates of ``confusion_matrix``."""
    fpr, tpr, thr = roc_curve(y, s, drop_intermediate=False)
    kind, _, value = label.partition("=")
    if kind == "specificity":
        t = thr[np.flatnonzero(1 - fpr >= float(value) - 1e-12)[-1]]
    elif kind == "sensitivity":
        t = thr[np.flatnonzero(tpr >= float(value) - 1e-12)[0]]
    elif kind == "youden":
        t = thr[np.argmax(tpr - fpr)]
    else:
        t = float(value)
    tn, fp, fn, tp = confusion_matrix(y, s >= t, labels=[False, True]).ravel()
    nan = float("nan")
    return {
        "threshold": float(t),
        "tp": tp,
        "fp": fp,
        "tn": tn,
        "fn": fn,
        "sensitivity": tp / (tp + fn),
        "specificity": tn / (tn + fp),
        "ppv": tp / (tp + fp) if tp + fp else nan,
        "npv": tn / (tn + fn) if tn + fn else nan,
    }


def _arrays(preds: pd.DataFrame, labs: pd.DataFrame, **selection):
    prep = prepare_inputs(preds, labs, **selection)
    out = {}
    for f, finding in enumerate(prep.findings):
        for r, ref in enumerate(prep.references):
            ok = np.isfinite(prep.Y[f, r])
            for m, model in enumerate(prep.models):
                out[(model, finding, ref)] = (prep.Y[f, r, ok] == 1, prep.S[m, f, ok], ok)
    return prep, out


def _assert_equals_sklearn(res: OperatingPointResult, arrays: dict) -> int:
    checked = 0
    for row in res.table.itertuples(index=False):
        y, s, _ = arrays[(row.model, row.finding, row.reference)]
        want = _sklearn_row(row.operating_point, y, s)
        for k in ("tp", "fp", "tn", "fn", "sensitivity", "specificity", "ppv", "npv"):
            np.testing.assert_allclose(getattr(row, k), want[k], rtol=0, atol=1e-9, err_msg=f"{row} {k}")
        if row.operating_point.startswith("specificity"):  # the smallest threshold of that confusion matrix
            assert want["threshold"] >= row.threshold > np.max(s[s < want["threshold"]], initial=-np.inf)
        elif np.isfinite(want["threshold"]):
            assert row.threshold == want["threshold"]
        checked += 1
    return checked


def test_operating_points_equal_sklearn_on_synthetic_tables():
    preds, labs = _probabilities()
    res = evaluate_operating_points(preds, labs, operating_points=POINTS, n_resamples=0)
    _, arrays = _arrays(preds, labs)
    assert _assert_equals_sklearn(res, arrays) == len(arrays) * len(POINTS)
    assert list(res.table.columns) == list(OperatingPointResult.COLUMNS)
    assert (
        res.table[["threshold_ci_low", "sensitivity_ci_low"]].isna().all().all()
    )  # no replicates, no interval


def test_operating_points_equal_sklearn_on_the_chexpert_test_set(shared_data):
    """The 10 leaderboard models on the 500 CheXpert test studies against the radiologists' consensus (some
    scores exceed 1: operating points take any score)."""
    from cxreval.datasets.chexpert import load_labels, load_predictions

    root = shared_data / "chexpert_test"
    preds, labs = load_predictions(root).table, load_labels(root, sources=["consensus"]).table
    res = evaluate_operating_points(preds, labs, operating_points=POINTS, n_resamples=0)
    _, arrays = _arrays(preds, labs)
    assert len(arrays) == 50  # 10 models x 5 findings
    assert _assert_equals_sklearn(res, arrays) == 200


def test_intervals_are_percentiles_of_the_rule_chosen_again_in_each_replicate():
    """With the seed of the AUCs, the plan is theirs; a replicate's rates are scikit-learn's on the explicit
    resample with the threshold chosen on it (threshold= held fixed), and the interval their percentiles."""
    preds, labs = _probabilities(n_models=2, n_studies=90, seed=3)
    res = evaluate_operating_points(
        preds, labs, operating_points=POINTS, findings=["Effusion"], n_resamples=40, rng=5
    )
    prep, arrays = _arrays(preds, labs, findings=["Effusion"])
    plan = draw_plan(prep.patient_of.to_numpy(), n_resamples=40, rng=5, study_ids=list(prep.studies))
    for row in res.table.itertuples(index=False):
        y, s, ok = arrays[(row.model, row.finding, row.reference)]
        pos = np.flatnonzero(ok)
        reps = []
        for b in range(plan.n_resamples):
            idx = np.repeat(np.arange(pos.size), plan.counts[b][plan.study_patient[pos]])
            reps.append(_sklearn_row(row.operating_point, y[idx], s[idx]))
        for k in ("sensitivity", "specificity", "ppv", "npv"):
            v = np.array([r[k] for r in reps], dtype=float)
            lo, hi = np.nanpercentile(v, [2.5, 97.5])
            np.testing.assert_allclose(
                [getattr(row, f"{k}_ci_low"), getattr(row, f"{k}_ci_high")], [lo, hi], atol=1e-9
            )
        if row.operating_point == "threshold=0.5":
            assert row.threshold_ci_low == row.threshold_ci_high == 0.5  # held fixed


def test_a_threshold_fixed_on_one_set_is_applied_to_another(tmp_path):
    """from=FILE: on the set it was chosen on, the file's thresholds give the same counts; on another set, the
    counts of that fixed threshold (scikit-learn's confusion matrix)."""
    preds, labs = _probabilities(seed=1)
    first = evaluate_operating_points(preds, labs, operating_points=["spec=0.9", "youden"], n_resamples=0)
    first.save(tmp_path)
    ops = tmp_path / "operating_points.csv"
    again = evaluate_operating_points(preds, labs, operating_points=[f"from={ops}"], n_resamples=0)
    assert len(again.table) == len(first.table) * 2  # each threshold of R0 and of R1, under R0 and under R1
    key = ["model", "finding", "reference"]
    for (op, ref), g in first.table.groupby(["operating_point", "reference"]):
        label = f"from=operating_points.csv: {op} under {ref}"
        carried = again.table[(again.table.operating_point == label) & (again.table.reference == ref)]
        pd.testing.assert_frame_equal(
            carried[key + ["tp", "fp", "tn", "fn"]].reset_index(drop=True),
            g[key + ["tp", "fp", "tn", "fn"]].reset_index(drop=True),
        )
    preds2, labs2 = _probabilities(seed=2)  # another set: the same models and findings
    other = evaluate_operating_points(preds2, labs2, operating_points=[f"from={ops}"], n_resamples=0)
    _, arrays = _arrays(preds2, labs2)
    fixed = first.table.set_index(key + ["operating_point"])["threshold"]
    for row in other.table.itertuples(index=False):
        op, src = row.operating_point.split(": ", 1)[1].split(" under ")
        t = fixed[(row.model, row.finding, src, op)]
        y, s, _ = arrays[(row.model, row.finding, row.reference)]
        tn, fp, fn, tp = confusion_matrix(y, s >= t, labels=[False, True]).ravel()
        assert (row.threshold, row.tp, row.fp, row.tn, row.fn) == (t, tp, fp, tn, fn)


def test_net_benefit_by_hand():
    """NB = TP/n - FP/n · pt/(1 - pt): 10 studies, 4 positives."""
    y = np.array([1, 1, 1, 1, 0, 0, 0, 0, 0, 0], dtype=bool)
    s = np.array([0.9, 0.7, 0.4, 0.2, 0.8, 0.5, 0.3, 0.3, 0.1, 0.05])
    nb = _net_benefit(y, s, np.array([0.0, 0.25, 0.5, 0.75]))
    # pt=0: every study positive, 4/10; pt=0.25: TP 3 (0.9, 0.7, 0.4), FP 3 (0.8, 0.5, 0.3, 0.3: 4), ...
    expected = [4 / 10, 3 / 10 - 4 / 10 * (0.25 / 0.75), 2 / 10 - 2 / 10 * 1.0, 1 / 10 - 1 / 10 * 3.0]
    np.testing.assert_allclose(nb["net_benefit"], expected, rtol=0, atol=1e-15)
    assert nb["tp"].tolist() == [4, 3, 2, 1] and nb["fp"].tolist() == [6, 4, 2, 1]


def test_decision_curve_has_the_strategies_and_equals_the_formula():
    preds, labs = _probabilities(n_models=2)
    res = evaluate_operating_points(preds, labs, decision_curve="0.05:0.95:0.05", n_resamples=0)
    dc = res.decision_curve
    assert res.table.empty and dc["threshold"].nunique() == 19
    assert set(dc["model"]) == {"M0", "M1", "treat all", "treat none"}
    for _, g in dc.groupby(["finding", "reference"]):
        prev = g["prevalence"].iloc[0]
        t = g.loc[g.model == "treat all", "threshold"].to_numpy()
        np.testing.assert_allclose(
            g.loc[g.model == "treat all", "net_benefit"], prev - (1 - prev) * t / (1 - t), atol=1e-12
        )
        assert (g.loc[g.model == "treat none", "net_benefit"] == 0).all()
    assert len(res.plot().data) == 4  # a line per model and strategy


DCURVES = textwrap.dedent(
    """
    import json, sys
    import pandas as pd
    from dcurves import dca
    args = json.load(sys.stdin)
    df = pd.DataFrame(args["data"])
    out = dca(data=df, outcome="y", modelnames=args["models"], thresholds=args["thresholds"])
    json.dump(out[["model", "threshold", "net_benefit"]].to_dict(orient="list"), sys.stdout)
    """
)


def test_net_benefit_equals_dcurves():
    """dcurves (which pins pandas < 3, so it lives in a peer interpreter: CXREVAL_DCURVES_PYTHON) on the same
    labels, scores and thresholds, for each model and the treat-all / treat-none strategies."""
    python = os.environ.get("CXREVAL_DCURVES_PYTHON")
    if not python:
        pytest.skip("CXREVAL_DCURVES_PYTHON not set: the interpreter of a venv with dcurves (see .ci/run)")
    preds, labs = _probabilities(n_models=3, n_studies=200, seed=4)
    thresholds = decision_thresholds("0.01:0.99:0.01")
    res = evaluate_operating_points(
        preds, labs, decision_curve="0.01:0.99:0.01", findings=["Effusion"], references=["R0"], n_resamples=0
    )
    _, arrays = _arrays(preds, labs, findings=["Effusion"], references=["R0"])
    models = sorted({k[0] for k in arrays})
    y = arrays[(models[0], "Effusion", "R0")][0]
    data = {"y": y.astype(int).tolist(), **{m: arrays[(m, "Effusion", "R0")][1].tolist() for m in models}}
    payload = json.dumps({"data": data, "models": models, "thresholds": thresholds.tolist()})
    run = subprocess.run([python, "-c", DCURVES], input=payload, capture_output=True, text=True, check=True)
    ref = pd.DataFrame(json.loads(run.stdout)).replace({"model": {"all": "treat all", "none": "treat none"}})
    ours = res.decision_curve[["model", "threshold", "net_benefit"]]
    both = ours.merge(ref, on=["model", "threshold"], suffixes=("", "_dcurves"), validate="one_to_one")
    assert len(both) == len(ours) == (len(models) + 2) * thresholds.size
    np.testing.assert_allclose(both["net_benefit"], both["net_benefit_dcurves"], rtol=0, atol=1e-9)


def _bad_file(tmp_path, drop: str | None = None, keep=None) -> str:
    preds, labs = _probabilities()
    res = evaluate_operating_points(preds, labs, operating_points=["youden"], n_resamples=0)
    t = res.table if keep is None else res.table[keep(res.table)]
    path = tmp_path / "ops.csv"
    (t.drop(columns=[drop]) if drop else t).to_csv(path, index=False)
    return f"from={path}"


@pytest.mark.parametrize(
    ("options", "match"),
    [
        ({"operating_points": ["spec=1.5"]}, r"must be in \(0, 1\) for a specificity"),
        ({"operating_points": ["sens=-0.1"]}, r"must be in \(0, 1\) for a sensitivity"),
        ({"operating_points": ["f1"]}, "Got 'f1'"),
        ({"operating_points": ["youden", "youden"]}, "given twice"),
        ({}, "needs operating_points= or decision_curve="),
        ({"decision_curve": "0.5:0.1:0.1"}, "'decision_curve' parameter"),
        ({"decision_curve": [0.2, 1.0]}, "'decision_curve' parameter"),
        ({"operating_points": ["from=/nonexistent/ops.csv"]}, "does not exist"),
    ],
)
def test_bad_options_are_refused_before_reading(options, match):
    with pytest.raises(CxrevalError, match=match):
        evaluate_operating_points(pd.DataFrame(), pd.DataFrame(), **options)  # the tables are never read


def test_a_from_file_lacking_columns_models_or_findings_is_refused(tmp_path):
    preds, labs = _probabilities()
    with pytest.raises(CxrevalError, match=r"lacks the columns \['threshold'\]"):
        evaluate_operating_points(preds, labs, operating_points=[_bad_file(tmp_path, drop="threshold")])
    with pytest.raises(CxrevalError, match="has no threshold for model 'M2', finding"):
        evaluate_operating_points(
            preds, labs, operating_points=[_bad_file(tmp_path, keep=lambda t: t.model != "M2")]
        )
    with pytest.raises(CxrevalError, match="finding 'Effusion'"):
        evaluate_operating_points(
            preds, labs, operating_points=[_bad_file(tmp_path, keep=lambda t: t.finding != "Effusion")]
        )


def test_a_decision_curve_needs_probabilities():
    preds, labs = _probabilities()
    preds.loc[3, "score"] = 1.7
    with pytest.raises(CxrevalError, match="outside \\[0, 1\\].*decision curve"):
        evaluate_operating_points(preds, labs, decision_curve="0.1:0.5:0.1")
    assert len(evaluate_operating_points(preds, labs, operating_points="youden", n_resamples=0).table)


def test_the_result_writes_exactly_its_files_with_their_columns(tmp_path):
    preds, labs = _probabilities(n_models=2)
    res = evaluate_operating_points(
        preds, labs, operating_points=["youden"], decision_curve=[0.1, 0.2], n_resamples=5, rng=0
    )
    written = res.save(tmp_path)
    assert {p.name for p in written.values()} == set(OperatingPointResult.FILES.values())
    assert list(pd.read_csv(written["operating_points"]).columns) == list(OperatingPointResult.COLUMNS)
    assert list(pd.read_csv(written["decision_curve"]).columns) == list(DECISION_CURVE_COLUMNS)
    assert "| youden |" in res.summary() and "## Decision curve" in res.summary()
    assert len(OperatingPointResult.figure(res.table).data) >= 1


@pytest.mark.slow
def test_intervals_cover_the_known_sensitivity_by_simulation():
    """Scores N(0, 1) for negatives and N(1.5, 1) for positives, two studies per patient: the sensitivity at
    threshold 0.5 is 1 - Φ(-1), and at specificity 0.9 it is 1 - Φ(z₀.₉ - 1.5). Over 150 simulated sets the 95%
    intervals (the rule chosen again in each replicate) cover each truth close to 95% of the time."""
    from scipy.stats import norm

    truth = {
        "threshold=0.5": 1 - norm.cdf(0.5 - 1.5),
        "specificity=0.9": 1 - norm.cdf(norm.ppf(0.9) - 1.5),
    }
    rng = np.random.default_rng(11)
    hits = dict.fromkeys(truth, 0)
    n_sets, n = 150, 400
    for _ in range(n_sets):
        y = rng.random(n) < 0.3
        studies = [f"s{i}" for i in range(n)]
        labs = pd.DataFrame(
            {
                "study_id": studies,
                "patient_id": [f"p{i // 2}" for i in range(n)],
                "finding": "Effusion",
                "source": "truth",
                "state": np.where(y, "positive", "negative"),
            }
        )
        preds = pd.DataFrame(
            {"study_id": studies, "model": "m", "finding": "Effusion", "score": rng.normal(size=n) + 1.5 * y}
        )
        res = evaluate_operating_points(
            preds, labs, operating_points=list(truth), n_resamples=200, rng=int(rng.integers(1 << 31))
        )
        for row in res.table.itertuples(index=False):
            hits[row.operating_point] += (
                row.sensitivity_ci_low <= truth[row.operating_point] <= row.sensitivity_ci_high
            )
    for point, k in hits.items():
        assert 0.88 <= k / n_sets <= 0.99, (point, k / n_sets)
