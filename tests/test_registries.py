"""Every registry of names raises an UnknownNameError (a CxrevalError and a KeyError) with a did-you-mean for an
unknown name, so the CLI turns it into one line and exit 2."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from cxreval.exceptions import CxrevalError, UnknownNameError


def _dataset(name: str) -> object:
    from cxreval.datasets._registry import get_spec

    return get_spec(name)


def _fusion(name: str) -> object:
    from cxreval.fusion import get_fusion

    return get_fusion(name)


def _metric(name: str) -> object:
    from cxreval.iqa import get_metric

    return get_metric(name)


def _pinned(name: str) -> object:
    from cxreval.datasets.mirror import pinned_file

    return pinned_file(name)


@pytest.mark.parametrize(
    ("lookup", "typo", "suggestion"),
    [
        (_dataset, "goggle2019", "google2019"),
        (_fusion, "macee", "mace"),
        (_metric, "psnrr", "psnr"),
        (_pinned, "chexpert_test/groundtruth.cvs", "chexpert_test/groundtruth.csv"),
    ],
)
def test_unknown_name_is_one_cxreval_error_with_a_hint(
    lookup: Callable[[str], object], typo: str, suggestion: str
) -> None:
    with pytest.raises(UnknownNameError, match=rf"Did you mean .*'{suggestion}'") as exc:
        lookup(typo)
    assert isinstance(exc.value, CxrevalError) and isinstance(exc.value, KeyError)
    assert "\n" not in str(exc.value) and not str(exc.value).startswith(("'", '"'))  # not KeyError's repr


def test_dataset_error_is_an_unknown_name_error() -> None:
    from cxreval.datasets import UnknownDatasetError

    assert issubclass(UnknownDatasetError, UnknownNameError)
