"""Degradations (cxreval.iqa): the shared fixture reproduced bit for bit, determinism, errors."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from cxreval.exceptions import InvalidParameterError, SchemaError
from cxreval.io.images import read_image
from cxreval.iqa._degrade import TRANSFORMS, apply_degradation, degrade_images, read_plan

PLAN = Path(__file__).parent / "data" / "fixture_plan.yaml"


@pytest.mark.slow
def test_reproduces_shared_fixture(shared_data, tmp_path):
    fx = shared_data / "iqa_fixture"
    src = tmp_path / "src"
    src.mkdir()
    for p in fx.glob("*__reference.png"):
        shutil.copy(p, src / p.name)
    res = degrade_images(sorted(src.iterdir()), PLAN, tmp_path / "out")
    manifest = {f["file"]: f for f in json.loads((fx / "manifest.json").read_text())["files"]}
    assert len(res.manifest) == 16
    for _, r in res.manifest.iterrows():
        stem = Path(r.source).name.replace("__reference.png", "")
        name = f"{stem}__{r.degradation}.png"
        expected = read_image(fx / name).image
        np.testing.assert_array_equal(read_image(r.test).image, expected)
        assert hashlib.sha256((fx / name).read_bytes()).hexdigest()[:16] == manifest[name]["sha256_16"]


def test_deterministic_and_manifest(tmp_path):
    rng = np.random.default_rng(0)
    from PIL import Image

    for i in range(2):
        Image.fromarray((rng.random((40, 40)) * 65535).astype(np.uint16)).save(tmp_path / f"im{i}.png")
    plan = {
        "seed": 3,
        "degradations": [
            {"transform": "gaussian_noise", "params": {"sigma": [0.01, 0.02]}},
            {"transform": "poisson_noise", "params": {"peak": 500}},
            {"transform": "resample", "params": {"factor": 2}},
            {"transform": "window", "params": {"level": 0.5, "width": 0.5}},
        ],
    }
    a = degrade_images([tmp_path / "im0.png", tmp_path / "im1.png"], plan, tmp_path / "a")
    b = degrade_images([tmp_path / "im0.png", tmp_path / "im1.png"], plan, tmp_path / "b")
    assert a.manifest["sha256"].tolist() == b.manifest["sha256"].tolist()
    assert len(a.manifest) == 10 and set(a.manifest["dtype"]) == {"uint16"}
    assert a.manifest.loc[0, "degradation"] == "gaussian_noise_sigma0.01"
    assert a.manifest.loc[0, "seed"] == "[3, 0, 0]"
    assert list(a.pairs().columns) == ["image", "reference", "test", "degradation"]
    assert a.pairs()["image"].tolist()[:5] == ["im0"] * 5


def test_transforms_in_float64_and_range():
    x = np.linspace(0, 1000, 64 * 64).reshape(64, 64)
    for name, params in [
        ("window", {"level": 0.5, "width": 0.5}),
        ("gamma", {"gamma": 2.0}),
        ("unsharp_mask", {"sigma": 1, "amount": 1}),
        ("gaussian_blur", {"sigma": 1}),
        ("gaussian_noise", {"sigma": 0.05}),
        ("poisson_noise", {"peak": 100}),
        ("resample", {"factor": 2}),
        ("jpeg", {"quality": 50}),
        ("contrast_stretch", {"low": 1, "high": 99}),
    ]:
        y = apply_degradation(x, name, params, data_range=1000.0, rng=0)
        assert y.dtype == np.float64 and y.shape == x.shape and y.min() >= 0 and y.max() <= 1000
    assert set(TRANSFORMS) >= {"window", "gamma", "jpeg", "resample"}
    # gamma exactly: R (x/R)^g
    np.testing.assert_allclose(apply_degradation(x, "gamma", {"gamma": 2.0}, data_range=1000.0), x**2 / 1000)
    # window level 0.5 width 0.5 maps [250, 750] linearly onto [0, 1000]
    w = apply_degradation(
        np.array([[250.0, 500.0, 750.0, 900.0]]), "window", {"level": 0.5, "width": 0.5}, data_range=1000.0
    )
    np.testing.assert_allclose(w, [[0.0, 500.0, 1000.0, 1000.0]])


def test_plan_errors(tmp_path):
    with pytest.raises(SchemaError, match="unknown transform 'sharpen'"):
        read_plan({"degradations": [{"transform": "sharpen"}]})
    with pytest.raises(SchemaError, match="non-empty 'degradations'"):
        read_plan({"seed": 1})
    with pytest.raises(SchemaError, match="does not exist"):
        read_plan(tmp_path / "none.yaml")
    with pytest.raises(InvalidParameterError, match="bad parameters"):
        apply_degradation(np.zeros((4, 4)), "gamma", {"gama": 2}, data_range=1.0)
    with pytest.raises(InvalidParameterError, match="'quality' must be in 1..95"):
        apply_degradation(np.zeros((4, 4)), "jpeg", {"quality": 0}, data_range=1.0)
