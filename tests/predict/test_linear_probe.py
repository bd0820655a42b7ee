"""The linear probe's convex fit on cached features (cxreval.predict.fit_linear_probe) against scikit-learn, and the
features cache of ``finetune --mode linear-probe``.

References: scikit-learn's ``LogisticRegression`` (lbfgs, tol 1e-12) on the same features: ``C = 1 / (N *
weight_decay)`` for ``bce`` (``N`` labelled entries) and, for ``wcel``, ``C = 1 / weight_decay`` with the W-CEL
weights of each entry as ``sample_weight``.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import yaml

from cxreval.cli.main import main
from cxreval.exceptions import InvalidParameterError, SchemaError
from cxreval.predict import fit_linear_probe
from cxreval.predict._probe import entry_weights

from .conftest import ARCH
from .test_finetune import square_images


def _features(n=31, d=512, k=4, rng=0):
    g = np.random.default_rng(rng)
    x = g.normal(size=(n, d)).astype(np.float32)
    y = (x[:, :k] @ np.eye(k) * 2 + g.normal(size=(n, k)) > 0).astype(float)
    y[[2, 9], 1] = np.nan  # excluded labels
    return x, y


@pytest.mark.parametrize("wd", [1e-1, 1e-3])
def test_bce_probe_equals_logistic_regression_on_31x512x4(wd):
    from sklearn.linear_model import LogisticRegression

    x, y = _features()
    fit = fit_linear_probe(x, y, loss="bce", weight_decay=wd)
    assert all(fit.converged)
    n_lab = int((~np.isnan(y)).sum())
    for j in range(y.shape[1]):
        k = ~np.isnan(y[:, j])
        lr = LogisticRegression(C=1 / (n_lab * wd), tol=1e-12, max_iter=100000).fit(
            x[k].astype(float), y[k, j]
        )
        np.testing.assert_allclose(fit.weight[j], lr.coef_[0], atol=1e-5)
        assert fit.bias[j] == pytest.approx(lr.intercept_[0], abs=1e-5)
    # the reported loss is the mean BCE over the labelled entries (without the penalty)
    z = x.astype(float) @ fit.weight.T + fit.bias
    k = ~np.isnan(y)
    bce = np.logaddexp(0, z[k]) - y[k] * z[k]
    assert fit.loss == pytest.approx(bce.mean(), rel=1e-10)


def test_wcel_probe_equals_weighted_logistic_regression():
    from sklearn.linear_model import LogisticRegression

    x, y = _features(n=40, d=12, k=3, rng=4)
    wd = 1e-2
    w = entry_weights(y, "wcel")
    n_p, n_n = int((y == 1).sum()), int((y == 0).sum())
    assert w[y == 1][0] == pytest.approx((n_p + n_n) / (n_p * 40)) and (w[np.isnan(y)] == 0).all()
    fit = fit_linear_probe(x, y, loss="wcel", weight_decay=wd)
    for j in range(3):
        k = ~np.isnan(y[:, j])
        lr = LogisticRegression(C=1 / wd, tol=1e-12, max_iter=100000).fit(
            x[k].astype(float), y[k, j], sample_weight=w[k, j]
        )
        np.testing.assert_allclose(fit.weight[j], lr.coef_[0], atol=1e-5)
        assert fit.bias[j] == pytest.approx(lr.intercept_[0], abs=1e-5)


def test_probe_checks_and_one_class_finding():
    x, y = _features(n=20, d=5, k=2)
    with pytest.raises(InvalidParameterError, match="penalty > 0"):
        fit_linear_probe(x, y, weight_decay=0.0)
    with pytest.raises(InvalidParameterError, match="values other than 0, 1 and NaN"):
        fit_linear_probe(x, y * 2, weight_decay=1.0)
    with pytest.raises(InvalidParameterError, match="the same n"):
        fit_linear_probe(x[:3], y, weight_decay=1.0)
    y1 = y.copy()
    y1[:, 1] = 0.0  # one class only: the bias has no finite optimum
    fit = fit_linear_probe(x, y1, weight_decay=1.0, max_iter=30)
    assert fit.converged == (True, False) and fit.bias[1] < -5


@pytest.fixture()
def task(tmp_path, torch_mod):
    import torch

    square_images(tmp_path / "imgs", 40, rng=2).to_csv(tmp_path / "labels.csv", index=False)
    (tmp_path / "arch.py").write_text(ARCH)
    spec = __import__("importlib.util").util.spec_from_file_location("probe_arch", tmp_path / "arch.py")
    mod = __import__("importlib.util").util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    torch.manual_seed(0)
    torch.save(mod.build(3).state_dict(), tmp_path / "base.pt")
    (tmp_path / "base.yaml").write_text(
        yaml.safe_dump(
            {
                "name": "base",
                "checkpoint": "base.pt",
                "architecture": "arch.py:build",
                "architecture_kwargs": {"n_out": 3},
                "input": {"size": 32, "channels": 1, "normalization": "xrv"},
                "findings": ["Atelectasis", "Nodule", "Mass"],
            }
        )
    )
    return tmp_path


def test_finetune_caches_features_and_reuses_them(task, monkeypatch):
    import torch

    from cxreval.predict import _finetune as ft
    from cxreval.predict import finetune

    spec = f"torch:{task / 'base.yaml'}"
    a = finetune(
        task / "imgs",
        task / "labels.csv",
        out=task / "a",
        model=spec,
        mode="linear-probe",
        weight_decay=1e-2,
        rng=0,
    )
    with np.load(task / "a" / "features.npz") as z:
        assert z["features"].shape == (40, 16) and z["features"].dtype == np.float32
        assert sorted(z["study_id"].tolist()) == sorted(pd.read_csv(task / "a" / "split.csv").study_id)
    assert "Newton" in a.stopped

    def no_images(*args, **kwargs):
        raise AssertionError("images read although cached features were given")

    monkeypatch.setattr(ft, "_Images", no_images)
    b = finetune(
        task / "imgs",
        task / "labels.csv",
        out=task / "b",
        model=spec,
        mode="linear-probe",
        weight_decay=1e-2,
        features=task / "a" / "features.npz",
        rng=0,
    )
    sa, sb = (torch.load(task / x / "model.pt", weights_only=True) for x in ("a", "b"))
    assert all(torch.equal(sa[k], sb[k]) for k in sa)
    pd.testing.assert_frame_equal(a.val_predictions, b.val_predictions)
    assert a.best_val_auc == b.best_val_auc
    with pytest.raises(
        SchemaError, match=r"other settings \(\['dicom_window'\]: \['none'\], this run \['voi'\]"
    ):
        finetune(
            task / "imgs",
            task / "labels.csv",
            out=task / "c",
            model=spec,
            mode="linear-probe",
            features=task / "a" / "features.npz",
            dicom_window="voi",
        )
    with pytest.raises(InvalidParameterError, match="mode='linear-probe' only"):
        finetune(
            task / "imgs",
            task / "labels.csv",
            out=task / "c",
            model=spec,
            mode="full",
            features=task / "a" / "features.npz",
        )
    (task / "imgs" / "im000.png").write_bytes((task / "imgs" / "im000.png").read_bytes() + b"\0")
    with pytest.raises(SchemaError, match=r"1 image file\(s\) changed"):
        finetune(
            task / "imgs",
            task / "labels.csv",
            out=task / "c",
            model=spec,
            mode="linear-probe",
            features=task / "a" / "features.npz",
        )
    assert not (task / "c").exists()
    (task / "junk.npz").write_bytes(b"not a zip")
    with pytest.raises(SchemaError, match="not the features.npz of a linear probe"):
        finetune(
            task / "imgs",
            task / "labels.csv",
            out=task / "c",
            model=spec,
            mode="linear-probe",
            features=task / "junk.npz",
        )
    # the CLI's --features (the images as they were when the cache was written: b's own cache)
    monkeypatch.undo()
    base = [
        "finetune",
        "--images",
        str(task / "imgs"),
        "--labels",
        str(task / "labels.csv"),
        "--model",
        spec,
        "--mode",
        "linear-probe",
        "--no-progress",
    ]
    assert main([*base, "--out", str(task / "d")]) == 0
    assert main([*base, "--features", str(task / "d" / "features.npz"), "--out", str(task / "e")]) == 0
    sd, se = (torch.load(task / x / "model.pt", weights_only=True) for x in ("d", "e"))
    assert all(torch.equal(sd[k], se[k]) for k in sd)
