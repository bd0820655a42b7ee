"""The deep-metric adapters are registered with needs_weights and fail clearly when unavailable."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

from cxreval.exceptions import DataUnavailableError, InvalidParameterError
from cxreval.iqa import _adapters as adapters
from cxreval.iqa._registry import _REGISTRY


def test_registered_with_needs_weights():
    for name, ref in (("lpips", "full"), ("dists", "full"), ("paq2piq", "no")):
        spec = _REGISTRY[name]
        assert spec.needs_weights and spec.reference == ref


@pytest.mark.skipif(importlib.util.find_spec("torch") is not None, reason="torch is installed here")
def test_clear_error_without_torch():
    x = np.zeros((32, 32))
    with pytest.raises(DataUnavailableError, match="needs the package 'torch'"):
        adapters.lpips(x, x, data_range=1.0)
    with pytest.raises(DataUnavailableError, match="needs the package 'torch'"):
        adapters.paq2piq(x, data_range=1.0)


def test_clear_error_when_weights_missing(monkeypatch):
    def boom(metric, backend):
        raise DataUnavailableError(f"The network weights of {metric!r} ({backend}) are unavailable")

    monkeypatch.setattr(adapters, "_model", boom)
    x = np.zeros((32, 32))
    with pytest.raises(DataUnavailableError, match="network weights of 'dists'"):
        adapters.dists(x, x, data_range=1.0)


def test_bad_backend_before_loading():
    x = np.zeros((32, 32))
    with pytest.raises(InvalidParameterError, match="'backend' parameter of lpips"):
        adapters.lpips(x, x, data_range=1.0, backend="torchmetrics")


def test_full_reference_adapters_are_named_and_documented():
    import inspect

    for func, title in ((adapters.lpips, "(LPIPS)"), (adapters.dists, "(DISTS)")):
        assert func.__name__ == func.__qualname__ == title[1:-1].lower()
        assert title in func.__doc__ and "DataUnavailableError" in func.__doc__
        assert list(inspect.signature(func).parameters) == [
            "image_true",
            "image_test",
            "data_range",
            "backend",
        ]
