"""``import cxreval`` stays cheap and side-effect free; the lazy top-level names resolve to the real objects."""

from __future__ import annotations

import importlib
import json
import os
import pkgutil
import subprocess
import sys

import pytest

import cxreval


def test_import_loads_no_heavy_dependency():
    code = (
        "import sys, cxreval; "
        "print(','.join(m for m in ('pandas', 'scipy', 'plotly', 'torch', 'skimage', 'pyarrow') "
        "if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""
    assert out.stderr == ""


# imported by a module's functions when they run, never by importing the package (the report draws with plotly)
HEAVY = (
    "scipy.stats",
    "scipy.ndimage",
    "scipy.sparse",
    "scipy.optimize",
    "scipy.special",
    "scipy.fft",
    "skimage",
    "sklearn",
    "plotly",
    "torch",
    "matplotlib",
    "dask",
)
NEEDED_AT_IMPORT = {"report": {"plotly"}}

# each package imported in a fresh child of one interpreter that holds numpy and pandas (which every package uses)
_EACH_PACKAGE = """
import json, os, sys
import numpy, pandas
heavy, found = json.loads(sys.argv[1]), {}
for name in json.loads(sys.argv[2]):
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        __import__("cxreval." + name)
        os.write(w, json.dumps([h for h in heavy if h in sys.modules]).encode())
        os._exit(0)
    os.close(w)
    with os.fdopen(r) as f:
        out = f.read()
    _, status = os.waitpid(pid, 0)
    found[name] = json.loads(out) if status == 0 else ["import failed"]
print(json.dumps(found))
"""


@pytest.mark.skipif(not hasattr(os, "fork"), reason="the check forks one child per package")
def test_each_package_imports_heavy_dependencies_only_where_used():
    names = sorted(m.name for m in pkgutil.iter_modules(cxreval.__path__) if m.name != "__main__")
    assert {"localization", "classification", "iqa", "fusion", "report"} <= set(names)
    out = subprocess.run(
        [sys.executable, "-c", _EACH_PACKAGE, json.dumps(HEAVY), json.dumps(names)],
        capture_output=True,
        text=True,
        check=True,
        timeout=600,
    )
    found = json.loads(out.stdout)
    assert sorted(found) == names
    extra = {n: sorted(set(h) - NEEDED_AT_IMPORT.get(n, set())) for n, h in found.items()}
    assert {n: h for n, h in extra.items() if h} == {}
    assert found["report"] == ["plotly"]  # the check sees what a package imports


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
