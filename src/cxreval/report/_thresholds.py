"""The thresholds behind the report's plain-language verdicts, stated once and configurable.

Two scales are used:

- **rank correlation (SRCC)** between the model rankings under two references: at least 0.9 *stable*,
  0.7 to 0.9 *moderately stable*, below 0.7 *unstable* (defaults; each band is a lower bound);
- **Cohen's κ** (the weighted κ of label agreement and fusion): the bands of Landis & Koch (1977,
  Biometrics 33:159-174), *poor* below 0, *slight* 0-0.20, *fair* 0.21-0.40, *moderate* 0.41-0.60,
  *substantial* 0.61-0.80, *almost perfect* 0.81-1.

A value gets the band with the highest lower bound that it reaches (``value >= bound``).

A thresholds file (JSON) may replace either scale, e.g.::

    {"srcc": {"stable": 0.95, "moderately stable": 0.8, "unstable": -1},
     "kappa": {"poor": -1, "slight": 0, "fair": 0.21, "moderate": 0.41, "substantial": 0.61,
               "almost perfect": 0.81},
     "kappa_name": "Landis & Koch (1977)"}

>>> t = Thresholds()
>>> t.srcc_band(0.29), t.srcc_band(0.9), t.kappa_band(0.41)
('unstable', 'stable', 'moderate')
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from ..exceptions import InvalidParameterError

__all__ = ["Thresholds", "SRCC_BANDS", "LANDIS_KOCH", "load_thresholds"]

SRCC_BANDS: tuple[tuple[str, float], ...] = (("stable", 0.9), ("moderately stable", 0.7), ("unstable", -1.0))
"""Default SRCC bands, ``(label, lower bound)``, highest first."""

LANDIS_KOCH: tuple[tuple[str, float], ...] = (
    ("almost perfect", 0.81),
    ("substantial", 0.61),
    ("moderate", 0.41),
    ("fair", 0.21),
    ("slight", 0.0),
    ("poor", -1.0),
)
"""The κ bands of Landis & Koch (1977), ``(label, lower bound)``, highest first."""


def _bands(obj: object, *, what: str, source: str) -> tuple[tuple[str, float], ...]:
    if not isinstance(obj, Mapping) or not obj:
        raise InvalidParameterError(
            f"{source}: {what!r} must be an object of label: lower bound, e.g. "
            f'{{"stable": 0.9, "moderately stable": 0.7, "unstable": -1}}. Got {obj!r}.'
        )
    out = []
    for label, bound in obj.items():
        if (
            isinstance(bound, bool)
            or not isinstance(bound, (int, float))
            or not math.isfinite(bound)
            or not -1 <= bound <= 1
        ):
            raise InvalidParameterError(
                f"{source}: the lower bound of {what} band {label!r} must be a number in "
                f"[-1, 1]. Got {bound!r}."
            )
        out.append((str(label), float(bound)))
    out.sort(key=lambda b: -b[1])
    if out[-1][1] > -1:
        raise InvalidParameterError(
            f"{source}: the lowest {what} band ({out[-1][0]!r}, {out[-1][1]}) must start at "
            "-1 so that every value gets a band."
        )
    if len({b for _, b in out}) != len(out):
        raise InvalidParameterError(f"{source}: two {what} bands share a lower bound: {dict(out)}.")
    return tuple(out)


@dataclass(frozen=True)
class Thresholds:
    """Verdict thresholds: ``(label, lower bound)`` bands, highest first.

    Attributes
    ----------
    srcc : tuple of (str, float)
        Bands of the rank correlation between two references' model rankings.
    kappa : tuple of (str, float)
        Bands of Cohen's (weighted) κ.
    kappa_name : str
        Who the κ bands are after (named in the report).
    source : str
        Where the thresholds came from ('defaults' or the file).
    """

    srcc: tuple[tuple[str, float], ...] = SRCC_BANDS
    kappa: tuple[tuple[str, float], ...] = LANDIS_KOCH
    kappa_name: str = "Landis & Koch (1977)"
    source: str = "defaults"

    @staticmethod
    def _band(value: float, bands: tuple[tuple[str, float], ...]) -> str:
        for label, bound in bands:
            if value >= bound:
                return label
        return bands[-1][0]

    def srcc_band(self, value: float) -> str:
        """The SRCC band of ``value``."""
        return self._band(value, self.srcc)

    def srcc_level(self, value: float) -> int:
        """0 for the top SRCC band, ``len(srcc) - 1`` for the bottom one."""
        return [b for b, _ in self.srcc].index(self.srcc_band(value))

    def kappa_band(self, value: float) -> str:
        """The κ band of ``value``."""
        return self._band(value, self.kappa)

    @staticmethod
    def _describe(bands: tuple[tuple[str, float], ...]) -> str:
        parts = []
        for i, (label, lo) in enumerate(bands):
            if i == 0:
                parts.append(f"≥ {lo:g} {label}")
            elif i == len(bands) - 1:
                parts.append(f"below {bands[i - 1][1]:g} {label}")
            else:
                parts.append(f"{lo:g} to {bands[i - 1][1]:g} {label}")
        return ", ".join(parts)

    def describe(self) -> str:
        """One sentence stating every threshold (the report prints it once)."""
        return (
            f"Rank correlation (SRCC) between two references' model rankings: {self._describe(self.srcc)}. "
            f"Cohen's κ: {self._describe(self.kappa)} (bands after {self.kappa_name})."
        )

    def to_dict(self) -> dict[str, object]:
        return {
            "srcc": dict(self.srcc),
            "kappa": dict(self.kappa),
            "kappa_name": self.kappa_name,
            "source": self.source,
        }


def load_thresholds(path: str | Path | None = None) -> Thresholds:
    """Thresholds from a JSON file (keys ``srcc``, ``kappa``, ``kappa_name``; each optional), or the defaults.

    Raises
    ------
    InvalidParameterError
        If the file cannot be read or a band is malformed; the message names the file and the key.
    """
    if path is None:
        return Thresholds()
    p = Path(path)
    try:
        obj = json.loads(p.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InvalidParameterError(f"thresholds={str(p)!r}: cannot read it as JSON ({exc}).") from None
    if not isinstance(obj, dict):
        raise InvalidParameterError(
            f"thresholds={str(p)!r}: expected a JSON object with keys srcc, kappa, kappa_name."
        )
    unknown = sorted(set(obj) - {"srcc", "kappa", "kappa_name"})
    if unknown:
        raise InvalidParameterError(
            f"thresholds={str(p)!r}: unknown key(s) {unknown}; expected srcc, kappa, kappa_name."
        )
    src = str(p)
    default = Thresholds()
    kappa = _bands(obj["kappa"], what="kappa", source=src) if "kappa" in obj else default.kappa
    name = str(obj.get("kappa_name", default.kappa_name if "kappa" not in obj else f"{p.name}"))
    return Thresholds(
        srcc=_bands(obj["srcc"], what="srcc", source=src) if "srcc" in obj else default.srcc,
        kappa=kappa,
        kappa_name=name,
        source=src,
    )
