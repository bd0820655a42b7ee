"""What a plan says in words: the shape of its power curves read from power.csv (noise or the estimate), and the
models merged for identical scores."""

from __future__ import annotations

import pandas as pd

from cxreval.planning._verdict import curve_shape, merged_models


def _power(p: list[float], se: list[float], n_draws: int = 100) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "finding": "Consolidation",
            "budget": [0, 25, 50, 75, 100][: len(p)],
            "p_right": p,
            "mc_se": se,
            "n_draws": n_draws,
            "effective_draws": 7.0,
        }
    )


def test_a_fall_within_two_monte_carlo_errors_is_called_noise():
    text = curve_shape(_power([0.0, 0.35, 0.035, 0.004, 0.007], [0.0, 0.18, 0.069, 0.024, 0.031]))
    assert "draws in effect once weighted (Consolidation 7 of 100)" in text
    assert "falls from 0.35 at 25 studies to 0.00 at 75" in text and "noise" in text


def test_a_fall_beyond_the_noise_is_explained_by_the_estimate():
    text = curve_shape(_power([0.0, 0.6, 0.1], [0.0, 0.02, 0.02], n_draws=600))
    assert "beyond Monte Carlo noise" in text and "residuals" in text


def test_a_rising_curve_needs_no_explanation_beyond_the_draws():
    text = curve_shape(_power([0.0, 0.2, 0.5], [0.0, 0.05, 0.06], n_draws=90))
    assert "falls" not in text and "(Consolidation 7 of 90)" in text


def test_merged_models_group_the_findings_of_each_set():
    text = merged_models(
        {
            "Edema": {"a": ("b", "c")},
            "Effusion": {"a": ("b", "c", "d")},
            "Atelectasis": {"a": ("b", "c", "d")},
        },
        10,
    )
    assert text.startswith("4 of the 10 models give identical scores")
    assert "a = b = c on Edema; a = b = c = d on Atelectasis and Effusion" in text
    assert merged_models({"Edema": {}}, 3) == ""
