"""Age bands of the metadata readers: the 20-year bands of the subgroup literature on chest X-ray classifiers.

Seyyed-Kalantari et al. (Nat Med 2021, doi:10.1038/s41591-021-01595-0) report under-diagnosis by age in the bands
0-20, 20-40, 40-60, 60-80 and 80+; a metadata reader adds ``age_band`` beside ``age`` so that ``cxreval subgroups
--by age_band`` works on its export (an integer age has too many values for a subgroup).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

__all__ = ["AGE_BANDS", "age_band"]

AGE_BANDS: tuple[tuple[str, int], ...] = (
    ("0-19", 20),
    ("20-39", 40),
    ("40-59", 60),
    ("60-79", 80),
    ("80+", 10**9),
)
"""``(label, upper bound, exclusive)``, in order: an age ``a`` (years) falls in the first band with ``a < upper``."""


def age_band(age: pd.Series) -> np.ndarray:
    """The band label of each age in years (:data:`AGE_BANDS`); missing or negative ages have no band (None)."""
    a = pd.to_numeric(age, errors="coerce").to_numpy(dtype=float, na_value=np.nan)
    uppers = np.array([u for _, u in AGE_BANDS], dtype=float)
    k = np.searchsorted(uppers, a, side="right")
    labels = np.array([b for b, _ in AGE_BANDS] + [None], dtype=object)
    ok = np.isfinite(a) & (a >= 0)
    out = labels[np.minimum(k, len(AGE_BANDS))]
    out[~ok] = None
    return out
