"""Table 4 arithmetic: which denominators reproduce the Acc. values of ChestX-ray8's Table 4.

Table 4 of Wang et al. (2017) prints each localization accuracy with four decimals. A value ``v`` printed
for ``k`` hits out of ``n`` reference boxes is either ``floor(10^4 k / n) / 10^4`` (truncated) or
``k / n`` rounded half up. :func:`denominators` lists the ``n <= n_max`` for which some ``k`` gives every
printed value of a column; the ChestX-ray14 article found one or two denominators per finding under truncation and
none under rounding (13/79 = 0.16456 is printed 0.1645).

Examples
--------
>>> denominators(TABLE4_ACC["Nodule"], mode="trunc")
[79, 158]
>>> denominators(TABLE4_ACC["Nodule"], mode="round")
[]
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike

from .._validation import check_choice, check_positive_int

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "TABLE4_T",
    "TABLE4_ACC",
    "TABLE4_NODULE_AFP",
    "BBOX_2017_COUNTS",
    "shown_value",
    "denominators",
    "table4_denominators",
    "afp_denominators",
]

TABLE4_T: tuple[str, ...] = ("0.1", "0.25", "0.5", "0.75", "0.9")
"""The T(IoBB) values of Table 4's columns, as decimals."""

TABLE4_ACC: Mapping[str, tuple[float, ...]] = MappingProxyType(
    {
        "Atelectasis": (0.7277, 0.5500, 0.2833, 0.1666, 0.1333),
        "Cardiomegaly": (0.9931, 0.9794, 0.8767, 0.7260, 0.6849),
        "Effusion": (0.7124, 0.5424, 0.3333, 0.2418, 0.2091),
        "Infiltration": (0.7886, 0.5772, 0.4227, 0.3252, 0.2520),
        "Mass": (0.4352, 0.2823, 0.1411, 0.1176, 0.0588),
        "Nodule": (0.1645, 0.0506, 0.0126, 0.0126, 0.0126),
        "Pneumonia": (0.7500, 0.5583, 0.3833, 0.2583, 0.2416),
        "Pneumothorax": (0.4591, 0.3469, 0.1836, 0.1020, 0.0816),
    }
)
"""Acc. of Table 4 (Wang et al., 2017, ResNet-50 maps, IoBB), per finding at T = 0.1 ... 0.9, as printed."""

TABLE4_NODULE_AFP = 0.0772
"""Nodule's AFP in Table 4 from T = 0.5 on, the one AFP the ChestX-ray14 article quotes."""

BBOX_2017_COUNTS: Mapping[str, int] = MappingProxyType({"pairs": 79, "box_images": 880, "boxes": 984})
"""The AFP denominators of each :attr:`~cxreval.localization.LocalizationProtocol.afp_denominator`
choice for Nodule in ``BBox_List_2017.csv``: 79 (image, Nodule) pairs with a box, 880 images with any box,
984 boxes (checked against the file in the tests)."""

MODES: tuple[str, ...] = ("trunc", "round")


def shown_value(k: ArrayLike, n: ArrayLike, *, mode: str = "trunc", digits: int = 4) -> np.ndarray:
    """``k / n`` as printed with ``digits`` decimals, times ``10**digits``, as an integer (vectorised)."""
    check_choice(mode, MODES, name="mode", func="shown_value")
    k = np.asarray(k, dtype=np.int64)
    n = np.asarray(n, dtype=np.int64)
    s = 10**digits
    return (s * k) // n if mode == "trunc" else (2 * s * k + n) // (2 * n)


def denominators(
    values: Sequence[float], *, n_max: int = 200, mode: str = "trunc", digits: int = 4
) -> list[int]:
    """All ``n <= n_max`` for which every printed value is ``k / n`` for some integer ``0 <= k <= n``.

    Parameters
    ----------
    values : sequence of float
        Printed values (e.g. one Table 4 column).
    n_max : int, default=200
    mode : {'trunc', 'round'}, default='trunc'
        How ``k / n`` was printed: truncated, or rounded half up.
    digits : int, default=4

    Returns
    -------
    ns : list of int
    """
    check_choice(mode, MODES, name="mode", func="denominators")
    n_max = check_positive_int(n_max, name="n_max", func="denominators")
    n = np.arange(1, n_max + 1)[:, None]
    k = np.arange(n_max + 1)[None, :]
    shown = np.where(k <= n, shown_value(k, n, mode=mode, digits=digits), -1)
    ok = np.ones(n_max, dtype=bool)
    for v in values:
        t = round(float(v) * 10**digits)
        ok &= (shown == t).any(axis=1)
    return [int(x) for x in np.flatnonzero(ok) + 1]


def table4_denominators(
    table: Mapping[str, Sequence[float]] = TABLE4_ACC,
    *,
    n_max: int = 200,
    box_counts: Mapping[str, int] | None = None,
) -> pd.DataFrame:
    """Per finding, the denominators that reproduce its Acc. column, truncated and rounded.

    Parameters
    ----------
    table : mapping of finding -> values, default=TABLE4_ACC
    n_max : int, default=200
    box_counts : mapping of finding -> int, optional
        For example the number of boxes per finding in ``BBox_List_2017``; adds ``n_boxes`` and whether
        it is among the truncation denominators, and the implied hits ``k`` at that ``n``.

    Returns
    -------
    df : pandas.DataFrame
        Columns ``finding, trunc, n_trunc, round, n_round`` (lists as strings), plus ``n_boxes``,
        ``n_boxes_fits`` and ``hits`` when ``box_counts`` is given.
    """
    import pandas as pd

    rows = []
    for name, vals in table.items():
        tr = denominators(vals, n_max=n_max, mode="trunc")
        ro = denominators(vals, n_max=n_max, mode="round")
        row: dict[str, object] = {
            "finding": name,
            "trunc": str(tr),
            "n_trunc": len(tr),
            "round": str(ro),
            "n_round": len(ro),
        }
        if box_counts is not None:
            nb = int(box_counts.get(name, 0))
            row["n_boxes"] = nb
            row["n_boxes_fits"] = nb in tr
            if nb in tr:
                hits = []
                for v in vals:
                    t = round(float(v) * 10**4)
                    ks = [k for k in range(nb + 1) if int(shown_value(k, nb)) == t]
                    hits.append(ks[0] if len(ks) == 1 else ks)
                row["hits"] = str(hits)
            else:
                row["hits"] = ""
        rows.append(row)
    return pd.DataFrame(rows)


def afp_denominators(
    value: float = TABLE4_NODULE_AFP, counts: Mapping[str, int] = BBOX_2017_COUNTS, *, digits: int = 4
) -> pd.DataFrame:
    """Which AFP denominators can print ``value``: the false-positive counts ``k`` with ``k / n`` shown as
    ``value``, truncated and rounded half up, for each named denominator ``n``.

    Examples
    --------
    >>> afp_denominators().to_dict("list")["k_trunc"]
    ['', '68', '76']
    >>> afp_denominators().to_dict("list")["k_round"]
    ['', '', '76']
    """
    import pandas as pd

    t = round(float(value) * 10**digits)
    rows = []
    for name, n in counts.items():
        k = np.arange(int(n) + 1)
        got = {m: [int(x) for x in k[shown_value(k, int(n), mode=m, digits=digits) == t]] for m in MODES}
        rows.append(
            {
                "afp_denominator": name,
                "n": int(n),
                "value": float(value),
                "k_trunc": ",".join(map(str, got["trunc"])),
                "k_round": ",".join(map(str, got["round"])),
                "fits": bool(got["trunc"] or got["round"]),
            }
        )
    return pd.DataFrame(rows)
