"""The field's worked examples as arrays: Van Dyke (1995) and Franken (1992) from ../shared/data/mrmc (skipped
visibly when absent), and a check that a value equals a published one to its printed digits."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path

import numpy as np
import pandas as pd
import pytest


@dataclass(frozen=True)
class Study:
    """Ratings (modality, reader, case), NaN = not read; truth (case,); the labels in sorted order."""

    ratings: np.ndarray
    truth: np.ndarray
    modalities: tuple[str, ...]
    readers: tuple[str, ...]


def read_study(path: Path) -> Study:
    d = pd.read_csv(path)
    mods = sorted(d["treatment"].unique(), key=str)
    rdrs = sorted(d["reader"].unique(), key=str)
    cases = sorted(d["case"].unique())
    x = np.full((len(mods), len(rdrs), len(cases)), np.nan)
    mi = {m: i for i, m in enumerate(mods)}
    ri = {r: i for i, r in enumerate(rdrs)}
    ci = {c: i for i, c in enumerate(cases)}
    x[d["treatment"].map(mi), d["reader"].map(ri), d["case"].map(ci)] = d["rating"]
    truth = d.drop_duplicates("case").set_index("case")["truth"].reindex(cases).to_numpy()
    return Study(x, truth, tuple(map(str, mods)), tuple(map(str, rdrs)))


@pytest.fixture(scope="session")
def vandyke(shared_data: Path) -> Study:
    """Van Dyke et al. (1995): 2 modalities x 5 readers x 114 cases (45 diseased)."""
    return read_study(shared_data / "mrmc" / "vandyke.csv")


@pytest.fixture(scope="session")
def franken(shared_data: Path) -> Study:
    """Franken et al. (1992): 2 modalities x 4 readers x 100 cases (67 diseased)."""
    return read_study(shared_data / "mrmc" / "franken.csv")


def _as_printed(value: float, printed: str) -> bool:
    """Whether ``value`` rounds to ``printed`` (a published number as printed): |value - printed| is at most half
    a unit of its last printed digit."""
    d = Decimal(printed)
    half_unit = float(Decimal(1).scaleb(d.as_tuple().exponent)) / 2  # type: ignore[arg-type]
    return abs(value - float(d)) <= half_unit * (1 + 1e-9)


def _check_published(pairs: list[tuple[float, str]]) -> None:
    bad = [(float(v), p) for v, p in pairs if not _as_printed(float(v), p)]
    assert not bad, f"(ours, published) off the printed digits: {bad}"


@pytest.fixture(scope="session")
def published():
    """``published([(value, "printed"), ...])`` asserts that every value equals its published number to the
    printed digits (within half a unit of the last digit)."""
    return _check_published


# a 2 x 2 x 6 toy: 2 modalities, 2 readers, 6 cases (tests/mrmc/test_or_toy.py computes its analysis by hand)
TOY_TRUTH = [0, 0, 0, 1, 1, 1]
TOY = np.array(
    [
        [
            [1, 2, 3, 2, 4, 5],  # modality 1, reader 1
            [1, 3, 2, 3, 3, 4],
        ],  # modality 1, reader 2
        [
            [2, 1, 1, 3, 2, 4],  # modality 2, reader 1
            [1, 1, 4, 2, 5, 3],
        ],
    ],
    dtype=float,
)
