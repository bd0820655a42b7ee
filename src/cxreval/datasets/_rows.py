"""Row helpers shared by the dataset readers."""

from __future__ import annotations

import numpy as np

__all__ = ["first_row"]


def first_row(mask: object) -> int | None:
    """The position of the first row a boolean mask flags (the row an error names), or None where it flags
    none.

    Examples
    --------
    >>> first_row([False, True, True]), first_row([False])
    (1, None)
    """
    hits = np.flatnonzero(np.asarray(mask))
    return int(hits[0]) if hits.size else None
