"""The one Markdown table renderer (:func:`markdown_table`), shared by the CLI, the demo and the bench scripts.

Examples
--------
>>> import pandas as pd
>>> print(markdown_table(pd.DataFrame({"finding": ["Mass"], "auc": [0.8125]})))
| finding | auc |
|---|---|
| Mass | 0.81 |
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..exceptions import InvalidParameterError

__all__ = ["markdown_table"]


def markdown_table(
    df: Any,
    *,
    decimals: int = 2,
    floatfmt: str | None = None,
    nan: str = "nan",
    missing: str | None = "",
    right: Sequence[str] = (),
) -> str:
    """A GitHub-flavoured Markdown table of ``df``'s columns (the index is not shown; ``reset_index()`` first).

    Parameters
    ----------
    df : pandas.DataFrame
    decimals : int, default=2
        Digits after the point for float cells (``floatfmt`` overrides it).
    floatfmt : str, optional
        A ``str.format`` pattern for float cells, e.g. ``"{:.0f}"`` for counts.
    nan : str, default='nan'
        What a NaN float cell shows.
    missing : str or None, default=''
        What ``None`` / ``pd.NA`` cells show; ``None``: their ``str()`` (``'None'``, ``'<NA>'``).
    right : sequence of str, default=()
        Columns aligned right (separator ``---:``, e.g. counts); the others have the plain ``---``.

    Returns
    -------
    table : str
        Header, ``|---|`` separator and one line per row, joined by newlines (no trailing newline).
    """
    import pandas as pd

    fmt = floatfmt if floatfmt is not None else "{:." + str(int(decimals)) + "f}"

    def cell(v: object) -> str:
        if isinstance(v, (float, np.floating)):
            return nan if math.isnan(v) else fmt.format(v)
        if missing is not None and (v is None or v is pd.NA):
            return missing
        return str(v)

    cols = [str(c) for c in df.columns]
    unknown = [c for c in right if str(c) not in cols]
    if unknown:
        raise InvalidParameterError(
            f"The 'right' parameter of markdown_table names column(s) {unknown} that the "
            f"table does not have; it has {cols}."
        )
    rset = {str(c) for c in right}
    lines = [
        "| " + " | ".join(cols) + " |",
        "|" + "|".join("---:" if c in rset else "---" for c in cols) + "|",
    ]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in df.itertuples(index=False)]
    return "\n".join(lines)
