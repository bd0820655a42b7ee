"""Every registry answers an unknown name with a :class:`CxrevalError` (also a ``KeyError``) that suggests the
close names, and never guesses: an unregistered IQA metric has no direction (issue 13)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from cxreval.exceptions import CxrevalError, InvalidParameterError, UnknownNameError
from cxreval.fusion import fuse_label_table, get_fusion
from cxreval.iqa import get_metric, oriented_scores
from cxreval.iqa._image import box_downsample, imfilter
from cxreval.iqa.expert import metric_agreement, zscores


def test_unknown_name_error_is_a_cxreval_error_and_a_key_error_with_a_plain_message():
    err = UnknownNameError("Unknown thing 'x'.")
    assert isinstance(err, CxrevalError) and isinstance(err, KeyError) and isinstance(err, InvalidParameterError)
    assert str(err) == "Unknown thing 'x'."  # not KeyError's quoted repr


@pytest.mark.parametrize(("call", "hint"), [
    (lambda: get_fusion("mvv"), "Did you mean 'mv'"),
    (lambda: get_fusion("mace_"), "Did you mean 'mace'"),
    (lambda: get_metric("msssim"), "Did you mean 'ms_ssim'"),
    (lambda: get_metric("gmds"), "Did you mean .*'gmsd'"),
])
def test_registries_raise_unknown_name_error_with_did_you_mean(call, hint):
    with pytest.raises(UnknownNameError, match=hint):
        call()


def _labels() -> pd.DataFrame:
    rows = [{"study_id": f"s{i}", "finding": "Effusion", "source": r, "state": int((i + k) % 3 == 0) * 2}
            for i in range(6) for k, r in enumerate(("r1", "r2", "r3"))]
    return pd.DataFrame(rows)


def test_fuse_label_table_unknown_method_suggests_the_close_name():
    with pytest.raises(UnknownNameError, match=r"Unknown fusion method\(s\) \['mvv'\].*Did you mean 'mv'"):
        fuse_label_table(_labels(), ["r1", "r2", "r3"], ["mvv"])


def test_oriented_scores_refuses_an_unregistered_metric():
    scores = pd.DataFrame({"metric": ["ssim", "my_metric"], "value": [0.9, 3.0]})
    with pytest.raises(UnknownNameError, match="direction of metric 'my_metric' is unknown"):
        oriented_scores(scores)
    assert oriented_scores(pd.DataFrame({"metric": ["ssim", "gmsd"], "value": [0.9, 0.1]})).tolist() == [0.9, -0.1]


def _expert_inputs(metric: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    rng = np.random.default_rng(0)
    tests = [f"r{i}_t{k}" for i in range(3) for k in range(3)]
    scores = pd.DataFrame({"reference": [t.split("_")[0] for t in tests], "test": tests, "metric": metric,
                           "value": rng.normal(size=len(tests))})
    ratings = pd.DataFrame([{"image": t, "rater": r, "rating": int(rng.integers(1, 5))} for t in tests
                            for r in ("A", "B")])
    return scores, zscores(ratings).zmos


def test_metric_agreement_refuses_an_unregistered_metric_instead_of_assuming_higher_is_better():
    scores, zm = _expert_inputs("my_metric")
    with pytest.raises(UnknownNameError, match="direction of metric 'my_metric' is unknown.*orient=False"):
        metric_agreement(scores, zm, n_resamples=5, rng=0)
    table, _ = metric_agreement(scores, zm, n_resamples=5, rng=0, orient=False)  # as the values are
    assert table["orientation"].tolist() == [1]
    low, _ = metric_agreement(scores.assign(metric="gmsd"), zm, n_resamples=5, rng=0)  # lower is better
    assert low["orientation"].tolist() == [-1] and low["srcc"].iloc[0] == pytest.approx(-table["srcc"].iloc[0])


def test_image_helpers_refuse_an_unknown_option_as_a_cxreval_error():
    x = np.zeros((4, 4))
    with pytest.raises(InvalidParameterError, match="'mode' parameter of imfilter"):
        imfilter(x, np.ones((3, 3)), mode="bogus")
    with pytest.raises(InvalidParameterError, match="'convention' parameter of box_downsample"):
        box_downsample(x, 2, convention="bogus")
