"""plan_relabelling: priorities against a brute-force recomputation, the result's files, the reader study it lays
out, and its refusals."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from cxreval.exceptions import CxrevalError, InvalidParameterError, SchemaError, UnknownNameError
from cxreval.planning import RelabelPlanResult, plan_relabelling, simulate_study_set
from cxreval.planning._inputs import prepare_inputs
from cxreval.planning._plan_result import POWER_COLUMNS, RELABEL_COLUMNS
from cxreval.planning._planner import fit_finding


def _set(n: int = 40, seed: int = 0, **kw):
    opts = {"auc": [0.85, 0.8, 0.7], "sensitivity": [0.8], "specificity": [0.85], "prevalence": 0.3}
    opts.update(kw)
    return simulate_study_set(n, rng=seed, **opts)


def _cheap(ss):
    return ss.labels[ss.labels["source"] != "truth"]


def _brute_auc(w: np.ndarray, s: np.ndarray) -> float:
    """The posterior-weighted Mann-Whitney AUC by its double sum over pairs i != j."""
    num = den = 0.0
    for i in range(len(s)):
        for j in range(len(s)):
            if i != j:
                h = 1.0 if s[i] > s[j] else 0.5 if s[i] == s[j] else 0.0
                num += w[i] * (1 - w[j]) * h
                den += w[i] * (1 - w[j])
    return num / den


def test_priorities_equal_a_brute_force_reveal_of_every_study():
    ss = _set(30, seed=3)
    preds = ss.predictions.copy()
    preds.loc[preds["model"] == "m1", "score"] = preds.loc[preds["model"] == "m1", "score"].round(1)  # ties
    inputs = prepare_inputs(preds, _cheap(ss), reference="ref0", readers=None, anchor=None, findings=None)
    ff = fit_finding(inputs.findings[0])
    a, b = ff.best, ff.runner_up
    sa, sb = ff.data.scores[a], ff.data.scores[b]
    w = ff.posterior
    delta = _brute_auc(w, sa) - _brute_auc(w, sb)
    assert delta == pytest.approx(ff.delta, abs=1e-12)
    expected = []
    for i in range(len(w)):
        out = []
        for v in (1.0, 0.0):
            wv = w.copy()
            wv[i] = v
            out.append(_brute_auc(wv, sa) - _brute_auc(wv, sb))
        expected.append(w[i] * abs(out[0] - delta) + (1 - w[i]) * abs(out[1] - delta))
    np.testing.assert_allclose(ff.change, expected, rtol=1e-9, atol=1e-14)
    # the sample's inclusion probabilities follow the sampling score (with the uniform floor); budget 12 of 30
    res = plan_relabelling(preds, _cheap(ss), reference="ref0", budget=12, n_draws=20, rng=0)
    pos = {s: i for i, s in enumerate(inputs.study_ids[ff.data.index])}
    got = np.array([expected[pos[s]] for s in res.table["study_id"]])
    np.testing.assert_allclose(res.table["expected_change"], got, rtol=1e-9, atol=1e-14)
    p = ff.prediction
    score = [math.sqrt(p[i] / sum(p) ** 2 + (1 - p[i]) / sum(1 - p) ** 2) for i in range(len(p))]
    got = np.array([score[pos[s]] for s in res.table["study_id"]])
    np.testing.assert_allclose(res.table["sampling_score"], got, rtol=1e-9)
    share = 0.8 * got / np.sum(score) + 0.2 / 30
    pi = res.table["inclusion_probability"].to_numpy()
    uncapped = pi < 1
    np.testing.assert_allclose(pi[uncapped] / share[uncapped], (pi[uncapped] / share[uncapped])[0], rtol=1e-9)
    assert list(res.table["priority"]) == list(range(1, 13)) and res.table["study_id"].is_unique


def test_plan_tables_columns_and_reasons():
    ss = _set(60, seed=1)
    res = plan_relabelling(ss.predictions, _cheap(ss), reference="ref0", budget=20, n_draws=30, rng=0)
    assert isinstance(res, RelabelPlanResult)
    assert tuple(res.table.columns) == RELABEL_COLUMNS and len(res.table) == 20
    assert tuple(res.power.columns) == POWER_COLUMNS
    assert list(res.power["budget"]) == [0, 5, 10, 15, 20]
    assert res.power["p_right"].between(0, 1).all() and res.power["p_separable"].between(0, 1).all()
    assert res.table["inclusion_probability"].between(0, 1, inclusive="right").all()
    assert all(r.startswith("Effusion: ref0 ") and "posterior" in r for r in res.table["reason"])
    assert set(res.estimate.table["model"]) == {"m0", "m1", "m2"}
    text = res.summary()
    assert "inclusion_probability" in text and "whatever the latent model" in text
    # no image folder: the init line names the folder to copy the images from
    assert "`cxreval reader init --study study.yaml --images IMAGES --db sqlite:///relabel.db`" in text
    assert res.plot().data


def test_same_seed_same_plan_another_seed_another_sample_with_the_same_probabilities():
    ss = _set(80, seed=2)
    one = plan_relabelling(ss.predictions, _cheap(ss), reference="ref0", budget=30, n_draws=50, rng=7)
    two = plan_relabelling(ss.predictions, _cheap(ss), reference="ref0", budget=30, n_draws=50, rng=7)
    other = plan_relabelling(ss.predictions, _cheap(ss), reference="ref0", budget=30, n_draws=50, rng=8)
    pd.testing.assert_frame_equal(one.power, two.power)
    pd.testing.assert_frame_equal(one.table, two.table)
    assert set(one.table["study_id"]) != set(other.table["study_id"])
    pi = dict(zip(one.table["study_id"], one.table["inclusion_probability"]))
    for s, p in zip(other.table["study_id"], other.table["inclusion_probability"]):
        assert s not in pi or pi[s] == pytest.approx(p)


def test_a_study_already_relabelled_is_not_planned_again():
    ss = _set(50, seed=4)
    first = plan_relabelling(ss.predictions, _cheap(ss), reference="ref0", budget=10, n_draws=10, rng=0)
    done = set(first.table["study_id"])
    expert = ss.labels[(ss.labels["source"] == "truth") & ss.labels["study_id"].isin(done)].assign(
        source="expert"
    )
    second = plan_relabelling(
        ss.predictions,
        pd.concat([_cheap(ss), expert]),
        reference="ref0",
        anchor="expert",
        budget=10,
        n_draws=10,
        rng=0,
    )
    assert not done & set(second.table["study_id"])
    assert (second.estimate.table["n_anchored"] == 10).all()
    with pytest.raises(
        InvalidParameterError,
        match="'budget' parameter .* at most the number of studies not yet "
        r"relabelled \(40\)",
    ):
        plan_relabelling(
            ss.predictions, pd.concat([_cheap(ss), expert]), reference="ref0", anchor="expert", budget=41
        )


def test_save_writes_the_tables_the_study_and_the_images(tmp_path):
    from PIL import Image

    ss = _set(30, seed=5)
    imgs = tmp_path / "imgs"
    imgs.mkdir()
    for i, sid in enumerate(ss.truth.index):
        if i % 2:  # a study folder of views (CheXpert's layout), else <study_id>.png
            (imgs / sid).mkdir()
            Image.new("L", (8, 8), 10).save(imgs / sid / "view2_lateral.png")
            Image.new("L", (8, 8), 20).save(imgs / sid / "view1_frontal.png")
        else:
            Image.new("L", (8, 8), 30).save(imgs / f"{sid}.png")
    res = plan_relabelling(
        ss.predictions, _cheap(ss), reference="ref0", budget=6, n_draws=10, images=imgs, rng=0
    )
    out = tmp_path / "out"
    out.mkdir()
    written = res.save(out)
    names = {p.name for p in out.iterdir()}
    assert names == (
        {
            *res.FILES.values(),
            *(f.replace(".csv", ".parquet") for f in res.FILES.values()),
            "study.yaml",
            "images",
            "summary.md",
        }
    )
    assert set(written) == {*res.FILES, "study"}
    for name, file in res.FILES.items():
        assert tuple(pd.read_csv(out / file).columns) == tuple(res.tables()[name].columns)
    copied = sorted(p.relative_to(out / "images").as_posix() for p in (out / "images").rglob("*.png"))
    assert copied == sorted(f"{s}.png" for s in res.table["study_id"])
    for sid in res.table["study_id"]:  # the frontal view of a study folder, the study's own file otherwise
        src = imgs / sid / "view1_frontal.png" if (imgs / sid).is_dir() else imgs / f"{sid}.png"
        assert (out / "images" / f"{sid}.png").read_bytes() == src.read_bytes()
    assert "cxreval reader init --study study.yaml" in res.summary()


def test_reader_init_reads_the_planned_study(tmp_path):
    pytest.importorskip("sqlalchemy")
    from PIL import Image

    from cxreval.cli.main import main
    from cxreval.reader.study import load_study, study_items

    ss = _set(20, seed=6)
    imgs = tmp_path / "imgs"
    imgs.mkdir()
    for sid in ss.truth.index:
        Image.new("L", (16, 12), 40).save(imgs / f"{sid}.png")
    res = plan_relabelling(
        ss.predictions, _cheap(ss), reference="ref0", budget=5, n_draws=10, images=imgs, rng=0
    )
    out = tmp_path / "plan"
    out.mkdir()
    res.save(out)
    spec = load_study(out / "study.yaml")
    items = study_items(spec)
    assert spec.tasks == ("image",) and spec.findings == ("Effusion",)
    assert sorted(i.key for i in items) == sorted(res.table["study_id"])
    assert {i.payload["patient_id"] for i in items} == set(res.table["patient_id"])
    assert (
        main(["reader", "init", "--study", str(out / "study.yaml"), "--db", f"sqlite:///{tmp_path / 's.db'}"])
        == 0
    )


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        (
            {"reference": "ref9"},
            UnknownNameError,
            "'reference' parameter .* 'ref9' is not one. Did you mean 'ref0'",
        ),
        ({"readers": ["nobody"]}, UnknownNameError, "'readers' parameter"),
        ({"readers": ["ref0"]}, InvalidParameterError, "other than the reference"),
        ({"anchor": "ref0"}, InvalidParameterError, "'anchor' parameter"),
        ({"budget": 41}, InvalidParameterError, r"'budget' parameter .* at most .* \(40\)"),
        ({"budget": 0}, InvalidParameterError, "'budget' parameter .* int >= 1"),
        ({"n_draws": 0}, InvalidParameterError, "'n_draws' parameter"),
        ({"findings": ["Edema"]}, InvalidParameterError, "'findings' parameter .* 'Edema'"),
        ({"images": "/no/such/folder"}, InvalidParameterError, "'images' parameter"),
    ],
)
def test_bad_inputs_are_refused_naming_the_parameter(kwargs, error, match):
    ss = _set(40, seed=7)
    args = {"reference": "ref0", "budget": 5, **kwargs}
    with pytest.raises(error, match=match):
        plan_relabelling(ss.predictions, _cheap(ss), **args)


def test_one_model_or_no_predictions_is_refused():
    ss = _set(40, seed=8)
    one = ss.predictions[ss.predictions["model"] == "m0"]
    with pytest.raises(InvalidParameterError, match="1 model.*at least two"):
        plan_relabelling(one, _cheap(ss), reference="ref0", budget=5)
    with pytest.raises(SchemaError, match="'predictions' parameter .* no rows"):
        plan_relabelling(one.iloc[:0], _cheap(ss), reference="ref0", budget=5)


def test_a_study_without_an_image_is_refused(tmp_path):
    ss = _set(20, seed=9)
    (tmp_path / "imgs").mkdir()
    with pytest.raises(CxrevalError, match="'images' parameter .* holds no image of 3 selected studies"):
        plan_relabelling(ss.predictions, _cheap(ss), reference="ref0", budget=3, images=tmp_path / "imgs")


def test_anchor_studies_count_the_anchor_on_those_studies_only():
    ss = _set(50, seed=10)
    truth = ss.labels[ss.labels["source"] == "truth"].assign(source="expert")
    labels = pd.concat([_cheap(ss), truth])  # the expert labels every study; only 12 of them count
    chosen = list(ss.truth.index[:12])
    res = plan_relabelling(
        ss.predictions,
        labels,
        reference="ref0",
        anchor="expert",
        anchor_studies=chosen,
        budget=10,
        n_draws=10,
        rng=0,
    )
    assert (res.estimate.table["n_anchored"] == 12).all() and not set(chosen) & set(res.table["study_id"])
    with pytest.raises(InvalidParameterError, match="'anchor_studies' parameter .* needs an anchor"):
        plan_relabelling(ss.predictions, labels, reference="ref0", anchor_studies=chosen, budget=5)
    with pytest.raises(InvalidParameterError, match="'anchor_studies' parameter .* 1 studies that are not"):
        plan_relabelling(
            ss.predictions, labels, reference="ref0", anchor="expert", anchor_studies=["nope"], budget=5
        )


def test_models_with_identical_scores_are_one_model_and_the_summary_says_so():
    ss = _set(60, seed=11)
    copy = ss.predictions[ss.predictions["model"] == "m1"].assign(model="m1copy")
    preds = pd.concat([ss.predictions, copy], ignore_index=True)
    res = plan_relabelling(preds, _cheap(ss), reference="ref0", budget=10, n_draws=20, rng=0)
    assert set(res.estimate.table["model"]) == {"m0", "m1", "m2"}  # the copy is merged into m1
    assert set(res.estimate.table["rank"]) == {1, 2, 3}
    assert list(res.needed["same_scores"]) == ["m1 = m1copy"]
    assert "m1 = m1copy on Effusion" in res.summary() and "2 of the 4 models" in res.summary()
    alone = plan_relabelling(ss.predictions, _cheap(ss), reference="ref0", budget=10, n_draws=20, rng=0)
    pd.testing.assert_frame_equal(res.table, alone.table)  # the copy changes nothing else
    pd.testing.assert_frame_equal(res.power, alone.power)


def test_budget_reaching_the_target_power_is_the_first_crossing_of_the_curve():
    from cxreval.planning._planner import DesignGrid, power_curve, sampling_score

    ss = _set(200, seed=3, auc=[0.95, 0.8, 0.7], sensitivity=[0.9], specificity=[0.9])
    res = plan_relabelling(ss.predictions, _cheap(ss), reference="ref0", budget=10, n_draws=40, rng=3)
    row = res.needed.iloc[0]
    need = int(row["budget_needed"])
    assert 1 <= need <= 200 and row["p_right"] >= 0.8 and f"relabelling {need} studies" in row["verdict"]
    assert (
        res.headline()
        == f"budget for power 0.8 (lower bounds: the predicted power runs high): Effusion {need}"
    )
    assert "read the budget as a lower bound" in row["verdict"]
    # the same draws (the finding's child seed): below the target one study before, at it on the budget found
    inputs = prepare_inputs(
        ss.predictions, _cheap(ss), reference="ref0", readers=None, anchor=None, findings=None
    )
    ff = fit_finding(inputs.findings[0])
    grid = DesignGrid(sampling_score([ff], 200), np.ones(200, dtype=bool), 0.2, np.arange(200))
    child = np.random.default_rng(3).spawn(2)[1]
    pc = power_curve(ff, grid, [need - 1, need], n_draws=40, confidence_level=0.95, rng=child, n_all=200)
    assert pc.points[1][0] >= 0.8 and (need == 1 or pc.points[0][0] < 0.8)


def test_when_no_budget_reaches_the_power_the_verdict_says_why():
    ss = _set(100, seed=2, auc=[0.92, 0.8, 0.7], sensitivity=[0.7], specificity=[0.7])
    res = plan_relabelling(ss.predictions, _cheap(ss), reference="ref0", budget=10, n_draws=40, rng=3)
    row = res.needed.iloc[0]
    assert pd.isna(row["budget_needed"]) and row["p_all"] < 0.8 and row["n_studies"] == 100
    assert row["resolvable_delta"] > row["half_width_all"] > 0
    assert (
        "relabelling cannot separate" in row["verdict"]
        and "with all 100 studies relabelled" in row["verdict"]
    )
    assert (
        row["verdict"] in res.summary() and "cannot separate the leading models of Effusion" in res.headline()
    )
    with pytest.raises(
        InvalidParameterError, match="'target_power' parameter of plan_relabelling must be a float"
    ):
        plan_relabelling(ss.predictions, _cheap(ss), reference="ref0", budget=5, target_power=1.0)


def test_the_power_figure_draws_two_monte_carlo_errors():
    ss = _set(60, seed=1)
    res = plan_relabelling(ss.predictions, _cheap(ss), reference="ref0", budget=20, n_draws=30, rng=0)
    fig = res.plot()
    assert "Monte Carlo" in fig.layout.title.text
    np.testing.assert_allclose(fig.data[0].error_y.array, 2 * res.power["mc_se"].to_numpy())


def test_a_prediction_fit_that_does_not_converge_is_named_in_the_notes(monkeypatch):
    """Both latent fits of a finding (the joint posterior and the one-dimensional prediction) count for
    ``converged``: a prediction fit that stops before its tolerance is not silent."""
    import cxreval.planning._planner as planner

    fit_joint = planner.fit_joint

    def one_dimension_stops_early(references, x, *, anchor):
        w, converged = fit_joint(references, x, anchor=anchor)
        return w, converged and x.shape[1] > 1

    ss = _set(40, seed=1)
    inputs = prepare_inputs(
        ss.predictions, _cheap(ss), reference="ref0", readers=None, anchor=None, findings=None
    )
    assert fit_finding(inputs.findings[0]).converged
    monkeypatch.setattr(planner, "fit_joint", one_dimension_stops_early)
    assert not fit_finding(inputs.findings[0]).converged
    res = plan_relabelling(ss.predictions, _cheap(ss), reference="ref0", budget=10, n_draws=20, rng=0)
    assert any("did not converge" in note for note in res.notes)
