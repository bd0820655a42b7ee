"""PSNR, RMSE, UQI, AMBE, the SSIM family and VIF: definitions, invariances, errors; every full-reference
metric sees a 16-bit change below 1/255."""

from __future__ import annotations

import numpy as np
import pytest

from cxreval.exceptions import InvalidParameterError
from cxreval.iqa import get_metric, list_metrics, ms_ssim, psnr, ssim
from cxreval.iqa._full_reference import ambe, rmse, uqi
from cxreval.iqa._structural_similarity import cw_ssim, iw_ssim
from cxreval.iqa._visual_information import vif, vifp

RNG = np.random.default_rng(0)
X = np.cumsum(np.cumsum(RNG.random((192, 192)), 0), 1)
X = X / X.max() * 0.8 + 0.1 * RNG.random((192, 192))
Y = np.clip(X + RNG.normal(0, 0.03, X.shape), 0, 1)


def _uqi_bruteforce(x, y, b=8):
    vals = []
    for i in range(x.shape[0] - b + 1):
        for j in range(x.shape[1] - b + 1):
            a, c = x[i : i + b, j : j + b].ravel(), y[i : i + b, j : j + b].ravel()
            ma, mc = a.mean(), c.mean()
            va, vc = a.var(ddof=1), c.var(ddof=1)
            cov = np.sum((a - ma) * (c - mc)) / (b * b - 1)
            vals.append(4 * cov * ma * mc / ((va + vc) * (ma**2 + mc**2)))
    return np.mean(vals)


def test_pixel_metrics_definitions():
    mse = np.mean((X - Y) ** 2)
    assert psnr(X, Y, data_range=1.0) == pytest.approx(10 * np.log10(1 / mse), rel=1e-12)
    assert psnr(X * 65535, Y * 65535, data_range=65535) == pytest.approx(
        psnr(X, Y, data_range=1.0), rel=1e-12
    )
    assert psnr(X, X, data_range=1.0) == np.inf
    assert rmse(X * 255, Y * 255, data_range=255) == pytest.approx(np.sqrt(mse), rel=1e-12)
    assert rmse(X * 255, Y * 255, data_range=255, normalize=False) == pytest.approx(
        255 * np.sqrt(mse), rel=1e-12
    )
    assert ambe(X, Y, data_range=1.0) == pytest.approx(abs(X.mean() - Y.mean()), rel=1e-12)


def test_uqi_against_bruteforce_and_scale_invariance():
    x, y = X[:40, :40], Y[:40, :40]
    assert uqi(x, y, data_range=1.0) == pytest.approx(_uqi_bruteforce(x, y), rel=1e-10)
    assert uqi(x * 1000, y * 1000, data_range=1000.0) == pytest.approx(uqi(x, y, data_range=1.0), rel=1e-9)
    flat = np.full((16, 16), 0.5)
    assert uqi(flat, flat, data_range=1.0) == 1.0


def test_ssim_against_skimage():
    from skimage.metrics import structural_similarity

    ref = structural_similarity(
        X, Y, data_range=1.0, gaussian_weights=True, sigma=1.5, use_sample_covariance=False, full=True
    )[1]
    # skimage pads and reports the mean over the interior (crop 5 px); the 'valid' map is that interior
    assert ssim(X, Y, data_range=1.0) == pytest.approx(ref[5:-5, 5:-5].mean(), rel=1e-9)


def test_identity_and_ranges():
    for f in (ssim, ms_ssim, iw_ssim, cw_ssim, vifp, vif):
        assert f(X, X, data_range=1.0) == pytest.approx(1.0, abs=1e-9), f.__name__
    assert ssim(X, Y, data_range=1.0) < 1 and ms_ssim(X, Y, data_range=1.0) < 1
    # 192 px: f = round(192 / 256) = 1, so downsampling is a no-op
    assert ssim(X, Y, data_range=1.0, downsample=True) == ssim(X, Y, data_range=1.0)


FULL_REFERENCE = [m for m in list_metrics(reference="full") if not get_metric(m).needs_weights]


@pytest.mark.parametrize("metric", FULL_REFERENCE)
def test_sixteen_bit_change_below_one_over_255_is_seen(metric):
    x16 = np.rint(X * 65535)
    y16 = x16.copy()
    y16[50:90, 50:90] += 120  # 120/65535 < 1/255
    spec = get_metric(metric)
    assert spec(x16, y16, data_range=65535.0) != spec(x16, x16, data_range=65535.0)
    # after 8-bit rounding most of the change disappears
    assert np.sum(np.rint(x16 / 257) != np.rint(y16 / 257)) < 0.7 * np.sum(x16 != y16)


def test_registry_metadata():
    names = list_metrics(reference="full")
    assert {"psnr", "rmse", "uqi", "ambe", "ssim", "ms_ssim", "iw_ssim", "cw_ssim", "vif", "vifp"} <= set(
        names
    )
    spec = get_metric("rmse")
    assert spec.reference == "full" and spec.higher_is_better is False
    with pytest.raises(KeyError, match="Did you mean 'ms_ssim'"):
        get_metric("msssim")


def test_errors():
    with pytest.raises(InvalidParameterError, match="at least 176x176"):
        ms_ssim(X[:100, :100], Y[:100, :100], data_range=1.0)
    with pytest.raises(InvalidParameterError, match="at least 11x11"):
        ssim(X[:5, :5], Y[:5, :5], data_range=1.0)
    with pytest.raises(InvalidParameterError, match="decomposition"):
        vif(X, Y, data_range=1.0, decomposition="haar")
    with pytest.raises(InvalidParameterError, match="same shape"):
        psnr(X, Y[:10], data_range=1.0)
    bad = Y.copy()
    bad[3, 4] = np.inf
    with pytest.raises(InvalidParameterError, match="'image_test' must be finite; it has 1 NaN/inf"):
        psnr(X, bad, data_range=1.0)
    with pytest.raises(InvalidParameterError, match="'image_true' must be finite"):
        psnr(bad, bad, data_range=1.0)  # inf - inf is NaN: caught although the difference is not inf


def test_vif_options():
    default = vif(X, Y, data_range=1.0)
    assert default == vif(X, Y, data_range=1.0, decomposition="sp5")
    assert abs(vif(X, Y, data_range=1.0, decomposition="sf") - default) > 1e-3  # a different pyramid
    rounded = vif(X, Y, data_range=1.0, round_8bit=True)
    assert rounded == vif(np.rint(X * 255), np.rint(Y * 255), data_range=255.0)
    assert rounded != default


def test_metric_functions_have_modules_of_other_names():
    import importlib
    import pkgutil

    import cxreval.iqa as iqa

    for name, module in (
        ("fsim", "feature_similarity"),
        ("ssim", "structural_similarity"),
        ("vif", "visual_information"),
    ):
        mod = importlib.import_module(f"cxreval.iqa._{module}")
        assert callable(getattr(mod, name)) and iqa.get_metric(name).func is getattr(mod, name)
        assert name in mod.__all__
    modules = {m.name for m in pkgutil.iter_modules(iqa.__path__)}
    assert not modules & set(iqa.__all__), "an exported name is also a module of cxreval.iqa (it shadows it)"
