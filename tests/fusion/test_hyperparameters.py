"""Every fusion estimator keeps its constructor arguments as attributes of the same names, in signature order,
as given (scikit-learn's and crowd-kit's rule): ``repr`` and the worker-side rebuild (``fusion._spill``) read them."""

from __future__ import annotations

import inspect

import pytest

from cxreval.fusion import get_fusion, list_fusion
from cxreval.fusion._spill import _params


def _public_attributes(est: object) -> dict[str, object]:
    return {k: v for k, v in vars(est).items() if not k.startswith("_") and not k.endswith("_")}


@pytest.mark.parametrize("name", list_fusion())
def test_attributes_are_the_constructor_arguments_in_order(name: str) -> None:
    cls = get_fusion(name)
    signature = inspect.signature(cls)
    est = cls()
    attrs = _public_attributes(est)
    assert list(attrs) == list(signature.parameters)
    for k, p in signature.parameters.items():
        expected = tuple(p.default) if k == "selection_findings" else p.default
        assert attrs[k] == expected, k


def test_values_are_kept_as_given_and_shown_by_repr() -> None:
    ds = get_fusion("ds")(n_iter=7, tol=0.5, pooling="joint", init_smoothing=0.25)
    assert (ds.n_iter, ds.tol, ds.pooling, ds.init_smoothing) == (7, 0.5, "joint", 0.25)
    assert repr(ds) == "DawidSkene(n_iter=7, tol=0.5, pooling='joint', init_smoothing=0.25)"
    mace = get_fusion("mace")(n_restarts=3, method="em", smoothing=0.1, rng=5)
    assert repr(mace) == (
        "MACE(n_restarts=3, n_iter=50, method='em', alpha=0.5, beta=0.5, smoothing=0.1, "
        "pooling='finding', tol=None, rng=5)"
    )
    nn = get_fusion("nn")(hidden=4, selection_findings=["Edema"], rng=1)
    assert (nn.hidden, nn.selection_findings, nn.rng) == (4, ("Edema",), 1)


def test_worker_rebuild_gives_the_same_parameters() -> None:
    mace = get_fusion("mace")(n_restarts=2, n_iter=9, alpha=0.3, tol=1e-6, rng=11)
    params = _params(mace)
    assert "rng" not in params
    rebuilt = get_fusion("mace")(**params)
    assert _public_attributes(rebuilt) == {**_public_attributes(mace), "rng": None}
