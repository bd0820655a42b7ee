"""``import cxreval`` stays cheap and side-effect free; the lazy top-level names resolve to the real objects."""

from __future__ import annotations

import importlib
import subprocess
import sys

import cxreval


def test_import_loads_no_heavy_dependency():
    code = ("import sys, cxreval; "
            "print(','.join(m for m in ('pandas', 'scipy', 'plotly', 'torch', 'skimage', 'pyarrow') "
            "if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""
    assert out.stderr == ""


def test_all_is_unique_and_resolves():
    assert len(cxreval.__all__) == len(set(cxreval.__all__))
    for name in cxreval.__all__:
        assert hasattr(cxreval, name), name
    assert set(cxreval.__all__) <= set(dir(cxreval))


def test_lazy_names_are_the_submodule_objects():
    for name, module in cxreval._LAZY_ATTRS.items():
        mod = importlib.import_module(f"cxreval.{module}")
        assert name in mod.__all__, (module, name)
        assert getattr(cxreval, name) is getattr(mod, name), name
    for module in cxreval._SUBMODULES:
        assert getattr(cxreval, module) is importlib.import_module(f"cxreval.{module}")


def test_unknown_attribute_raises_attribute_error():
    try:
        cxreval.no_such_name  # noqa: B018
    except AttributeError as exc:
        assert "no_such_name" in str(exc)
    else:
        raise AssertionError("expected AttributeError")
