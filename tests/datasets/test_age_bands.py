"""The age bands of the metadata readers: each age in the band whose bounds hold it; no age, no band."""

from __future__ import annotations

import pandas as pd

from cxreval.datasets._age_bands import AGE_BANDS, age_band


def test_each_age_falls_in_its_band() -> None:
    ages = pd.Series([0, 19, 20, 39, 40, 59, 60, 79, 80, 95, 120], dtype="Int64")
    want = ["0-19", "0-19", "20-39", "20-39", "40-59", "40-59", "60-79", "60-79", "80+", "80+", "80+"]
    assert age_band(ages).tolist() == want
    assert [b for b, _ in AGE_BANDS] == ["0-19", "20-39", "40-59", "60-79", "80+"]


def test_a_missing_or_negative_age_has_no_band() -> None:
    assert age_band(pd.Series([None, -3, 45], dtype="Int64")).tolist() == [None, None, "40-59"]
    assert age_band(pd.Series(["", "n/a", "33"])).tolist() == [None, None, "20-39"]
