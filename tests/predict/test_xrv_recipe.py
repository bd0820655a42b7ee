"""``finetune --recipe xrv``: torchxrayvision's training defaults (task-weighted BCE, Adam with amsgrad, lr 1e-3,
weight decay 1e-5, batch 64, random affine augmentation), each checked against a hand computation or the
written settings."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest
import yaml

from cxreval.exceptions import InvalidParameterError

from .test_finetune import square_images


def test_xrv_task_weights_and_loss_equal_hand_computation(torch_mod):
    import torch

    from cxreval.predict.losses import loss_function, xrv_task_weights

    y = np.array([[1, 0, np.nan], [1, 1, 0], [0, np.nan, 0], [1, 0, 1]], dtype=float)
    # positives per finding P = (3, 1, 1); max P - P + mean P = (5/3, 11/3, 11/3); / its max
    np.testing.assert_allclose(xrv_task_weights(y), [5 / 11, 1.0, 1.0], rtol=1e-12)
    z = torch.tensor(
        [[0.5, -1.0, 2.0], [1.5, 0.0, -0.5], [-2.0, 1.0, 0.25], [0.1, 0.2, 0.3]], dtype=torch.float64
    )
    ls = lambda v: math.log(1 / (1 + math.exp(-v)))  # noqa: E731   log sigmoid
    f0 = -(ls(0.5) + ls(1.5) + ls(2.0) + ls(0.1)) / 4
    f1 = -(ls(1.0) + ls(0.0) + ls(-0.2)) / 3
    f2 = -(ls(0.5) + ls(-0.25) + ls(0.3)) / 3
    want = 5 / 11 * f0 + f1 + f2
    got = loss_function("xrv", task_weights=xrv_task_weights(y))(z, torch.tensor(y))
    assert float(got) == pytest.approx(want, rel=1e-12)


def test_xrv_loss_linear_probe_equals_weighted_logistic_regression():
    from sklearn.linear_model import LogisticRegression

    from cxreval.predict import fit_linear_probe
    from cxreval.predict.losses import xrv_task_weights

    g = np.random.default_rng(8)
    x = g.normal(size=(50, 6))
    y = (x[:, :3] + g.normal(size=(50, 3)) > 0.8).astype(float)
    y[:5, 2] = np.nan
    fit = fit_linear_probe(x, y, loss="xrv", weight_decay=0.05)
    tw = xrv_task_weights(y)
    for j in range(3):
        k = ~np.isnan(y[:, j])
        lr = LogisticRegression(C=tw[j] / (k.sum() * 0.05), tol=1e-12, max_iter=100000).fit(x[k], y[k, j])
        np.testing.assert_allclose(fit.weight[j], lr.coef_[0], atol=1e-5)


def test_random_affine(torch_mod):
    import torch

    from cxreval.predict.recipes import random_affine

    x = torch.zeros(3, 1, 32, 32)
    x[:, :, 14:18, 14:18] = 1000.0
    same = random_affine(x, np.random.default_rng(0), degrees=0, translate=0, scale=0)
    assert torch.equal(same, x)  # no movement: the identity
    a = random_affine(x, np.random.default_rng(1))
    b = random_affine(x, np.random.default_rng(1))
    assert torch.equal(a, b) and not torch.equal(a, x)  # reproducible from the generator
    assert set(torch.unique(a).tolist()) <= {0.0, 1000.0}  # nearest neighbour, fill 0
    for i in range(3):  # the square stays near the centre
        r, c = np.nonzero(a[i, 0].numpy())
        assert abs(r.mean() - 15.5) <= 0.15 * 32 + 1 and abs(c.mean() - 15.5) <= 0.15 * 32 + 1


@pytest.mark.slow
def test_xrv_recipe_densenet(tmp_path, xrv_weights, xrv, one_torch_thread):
    from cxreval.predict import finetune, predict

    square_images(tmp_path / "imgs", 10, rng=4).to_csv(tmp_path / "labels.csv", index=False)
    with pytest.raises(InvalidParameterError, match="recipe='xrv' goes with model="):
        finetune(tmp_path / "imgs", tmp_path / "labels.csv", out=tmp_path / "x", recipe="xrv")
    res = finetune(
        tmp_path / "imgs",
        tmp_path / "labels.csv",
        out=tmp_path / "x",
        recipe="xrv",
        model="xrv:densenet121-res224-all",
        weights_dir=xrv_weights,
        download=False,
        epochs=1,
        val_fraction=0.4,
        rng=0,
    )
    js = json.loads((tmp_path / "x" / "finetune.json").read_text())
    assert (
        js["recipe"],
        js["loss"],
        js["lr"],
        js["weight_decay"],
        js["batch_size"],
        js["optimizer"],
        js["mode"],
    ) == ("xrv", "xrv", 1e-3, 1e-5, 64, "Adam(amsgrad=True)", "full")
    assert js["augmentation"] == {"rotation_degrees": 45, "translate": 0.15, "scale": 0.15}
    assert set(js["task_weights"]) == {"Mass", "Effusion"} and max(js["task_weights"].values()) == 1.0
    cfg = yaml.safe_load((tmp_path / "x" / "model.yaml").read_text())
    assert cfg["architecture_kwargs"]["architecture"] == "torchxrayvision.models:DenseNet"
    p = predict(tmp_path / "imgs", [f"torch:{tmp_path / 'x' / 'model.yaml'}"], out=tmp_path / "p").predictions
    vp = pd.read_csv(tmp_path / "x" / "val_predictions.csv")
    m = vp.merge(p, on=["study_id", "model", "finding"], suffixes=("_logged", ""))
    assert len(m) == len(vp) > 0 and res.best_epoch == 1
    np.testing.assert_allclose(m.score, m.score_logged, atol=1e-6)
