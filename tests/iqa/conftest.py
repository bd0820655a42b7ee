"""Fixtures of the IQA tests: the pairs, peer values and NIQE test model of make_reference_values_iqa2.py.

That generator (run in a separate venv with piq/pyiqa, never in CI) wrote the peers' values to
tests/iqa/data/reference_values_iqa2.csv; here its pair generators are loaded without importing torch.
The generators (``make_reference_values*.py``) import the peers at their top, so pytest does not collect them.
Arrays handed out by the session-scoped fixtures are read-only, so no test can change another's input.
"""

from __future__ import annotations

import csv
import importlib.util
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
collect_ignore = [
    "make_reference_values.py",
    "make_reference_values_iqa2.py",
    "make_reference_values_sewar.py",
]
IQA2_CSV = Path(__file__).parent / "data" / "reference_values_iqa2.csv"
NIH_IMAGE = (
    Path("images") / "nih" / "00000075_000.png"
)  # the radiograph make_reference_values_iqa2.py degrades


def _frozen(pairs: dict[str, tuple[np.ndarray, np.ndarray]]) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    for ref, test in pairs.values():
        ref.setflags(write=False)
        test.setflags(write=False)
    return pairs


@pytest.fixture(scope="session")
def iqa2_generator() -> ModuleType:
    """make_reference_values_iqa2.py as a module (its ``main`` needs piq/pyiqa; the rest only numpy/scipy)."""
    spec = importlib.util.spec_from_file_location(
        "make_reference_values_iqa2", Path(__file__).parent / "make_reference_values_iqa2.py"
    )
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="session")
def iqa2_values() -> dict[tuple[str, str], float]:
    """Peer values of reference_values_iqa2.csv by ``(metric, pair)``."""
    with open(IQA2_CSV, newline="") as fh:
        return {(r["metric"], r["pair"]): float(r["value"]) for r in csv.DictReader(fh)}


@pytest.fixture(scope="session")
def synthetic_pairs(iqa2_generator: ModuleType) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """The generator's two deterministic 512x512 (reference, test) pairs on the 0..255 scale."""
    return _frozen(iqa2_generator.synthetic_pairs())


@pytest.fixture(scope="session")
def nih_pairs(shared_data: Path, iqa2_generator: ModuleType) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """The generator's degraded NIH radiograph pairs, read from the ``shared_data`` fixture's folder.

    ``nih_pairs()`` of the generator reads its module-level ``NIH`` path (beside the repository); the
    fixture's private copy of the module is pointed at ``shared_data`` instead, so CXREVAL_DATA_MIRROR works.
    """
    path = shared_data / NIH_IMAGE
    if not path.is_file():
        pytest.skip(f"{path} not found in the reference data")
    iqa2_generator.NIH = path
    return _frozen(iqa2_generator.nih_pairs())


@pytest.fixture(scope="session")
def niqe_test_model(iqa2_generator: ModuleType) -> tuple[np.ndarray, np.ndarray]:
    """The generator's made-up (not the published) NIQE model: ``mu`` (36,), SPD ``cov`` (36, 36)."""
    mu, cov = iqa2_generator.niqe_test_model()
    mu.setflags(write=False)
    cov.setflags(write=False)
    return mu, cov


@pytest.fixture(scope="session")
def niqe_model_file(
    niqe_test_model: tuple[np.ndarray, np.ndarray], tmp_path_factory: pytest.TempPathFactory
) -> Path:
    """:func:`niqe_test_model` saved as an ``.npz`` model file (``mu_prisparam``, ``cov_prisparam``)."""
    mu, cov = niqe_test_model
    path = tmp_path_factory.mktemp("niqe") / "niqe_model.npz"
    np.savez(path, mu_prisparam=mu, cov_prisparam=cov)
    return path
