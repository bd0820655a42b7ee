"""Obuchowski–Rockette analysis of other designs (three modalities, missing readings), its tidy tables, and its
input checks."""

from __future__ import annotations

import numpy as np
import pytest

from cxreval.exceptions import CxrevalError, InvalidParameterError
from cxreval.mrmc import or_analysis

from .conftest import TOY, TOY_TRUTH

# --- designs --------------------------------------------------------------------------------------------------------


@pytest.mark.shared_data
def test_three_modalities_report_every_pair_and_one_global_test(vandyke):
    rng = np.random.default_rng(0)
    x = np.concatenate([vandyke.ratings, vandyke.ratings[:1] + rng.integers(0, 2, size=(1, 5, 114))])
    res = or_analysis(x, vandyke.truth, modality_names=["cine", "spin-echo", "noisy"])
    pairs = [(d.modality_a, d.modality_b) for d in res.rrrc.differences]
    assert pairs == [("cine", "spin-echo"), ("cine", "noisy"), ("spin-echo", "noisy")]
    assert res.rrrc.test is not None and res.rrrc.test.df == 2
    tables = res.tables()
    assert len(tables["differences"]) == 9 and len(tables["tests"]) == 3 and len(tables["modalities"]) == 9


@pytest.mark.shared_data
def test_missing_readings_are_left_out_of_that_readers_auc(vandyke):
    x = vandyke.ratings.copy()
    x[1, 2, :30] = np.nan  # reader 3 did not read 30 cases in modality 2
    res = or_analysis(x, vandyke.truth)
    keep = ~np.isnan(x[1, 2])
    sub = or_analysis(x[:, :, keep], vandyke.truth[keep])
    assert res.aucs[1, 2] == pytest.approx(sub.aucs[1, 2], rel=1e-14)
    assert np.isfinite(res.rrrc.test.statistic)  # type: ignore[union-attr]
    with pytest.raises(InvalidParameterError, match="delong"):
        or_analysis(x, vandyke.truth, covariance="delong")
    unbiased = or_analysis(x, vandyke.truth, covariance="unbiased")
    assert unbiased.aucs[1, 2] == res.aucs[1, 2]


@pytest.mark.shared_data
def test_tables_are_tidy(vandyke):
    t = or_analysis(vandyke.ratings, vandyke.truth, covariance="delong").tables()
    assert list(t["tests"].columns) == [
        "analysis",
        "covariance",
        "statistic_name",
        "statistic",
        "df",
        "ddf",
        "p_value",
        "denominator",
    ]
    assert list(t["differences"].columns[:9]) == [
        "analysis",
        "modality_a",
        "modality_b",
        "estimate",
        "standard_error",
        "df",
        "statistic",
        "low",
        "high",
    ]
    assert {"analysis", "modality", "auc", "standard_error", "df", "low", "high"} <= set(
        t["modalities"].columns
    )
    assert list(t["readers"].columns) == ["modality", "reader", "auc", "standard_error", "low", "high"]
    assert list(t["variance_components"].columns) == ["name", "value"]
    assert set(t["tests"]["covariance"]) == {"delong"}


# --- bad input ------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("ratings", "truth", "kwargs", "match"),
    [
        (np.zeros((2, 2, 6)), [0, 0, 0, 1, 1, 2], {}, "'truth'.*binary"),
        (np.zeros((2, 2, 6)), [0, 0, 0, 1, 1], {}, "'truth'.*5 cases.*6"),
        (np.zeros((2, 6)), [0, 0, 0, 1, 1, 1], {}, "'ratings'.*3 dimension"),
        (np.zeros((2, 1, 6)), [0, 0, 0, 1, 1, 1], {}, "at least 2 readers"),
        (TOY, [0, 0, 0, 1, 1, 1], {"covariance": "bootstrap"}, "'covariance'"),
        (TOY, [0, 0, 0, 1, 1, 1], {"confidence_level": 1.5}, "'confidence_level'"),
        (TOY, [0, 0, 0, 1, 1, 1], {"reader_names": ["a"]}, "'reader_names'"),
        (TOY, [0, 0, 0, 1, 1, 1], {"clusters": [1, 2, 3]}, "'clusters'"),
        (TOY, [0, 0, 0, 1, 1, 1], {"fixed_readers_clamp": "yes"}, "'fixed_readers_clamp'"),
        ("not numbers", [0, 1], {}, "'ratings'"),
    ],
)
def test_bad_input_is_refused_naming_the_parameter(ratings, truth, kwargs, match):
    with pytest.raises(InvalidParameterError, match=match):
        or_analysis(ratings, truth, **kwargs)


def test_a_reader_with_one_class_only_is_named():
    x = TOY.copy()
    x[1, 0, 3:] = np.nan  # modality 2, reader 1 read no diseased case
    with pytest.raises(CxrevalError, match=r"modality '2', reader '1' read 0 diseased"):
        or_analysis(x, TOY_TRUTH)


def test_a_modality_read_by_one_reader_is_named():
    x = TOY.copy()
    x[1, 1] = np.nan  # modality 2 read by reader 1 only
    with pytest.raises(InvalidParameterError, match=r"modality '2' is read by 1 reader\(s\) only"):
        or_analysis(x, TOY_TRUTH, modality_names=["1", "2"])
