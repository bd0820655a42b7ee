"""Helpers shared by the modules of :mod:`cxreval.labels` (private to the package)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from .._validation import cell_location as _where
from .._validation import check_path
from ..exceptions import SchemaError
from ..findings import canonical_finding
from ..io import read_table
from ..schema._columns import id_text

__all__: list[str] = []

_WIDE_OF = {2: 1.0, 0: 0.0, 1: -1.0}


def _canonical_column(values: pd.Series, *, where: str) -> pd.Series:
    codes, uniq = pd.factorize(values.reset_index(drop=True), use_na_sentinel=True)
    if (codes < 0).any():
        i = int(np.flatnonzero(codes < 0)[0])
        raise SchemaError(f"Missing finding name in {_where(where, i, 'finding')}.")
    first = np.unique(codes, return_index=True)[1]  # first row of each distinct name
    canon = [canonical_finding(u, where=_where(where, int(first[k]), "finding")) for k, u in enumerate(uniq)]
    return pd.Series(
        np.asarray(canon, dtype=object)[codes] if len(canon) else np.array([], dtype=object), dtype="str"
    )


def _id_column(values: pd.Series | np.ndarray) -> pd.Series:
    """Ids as text; blank and NaN become missing. Float columns of whole numbers (an int column with NaN)
    are written without ``.0``."""
    s = id_text(values)
    return s.where(s.str.strip() != "", np.nan)


def _read_table(path: str | Path, func: str = "read_labels") -> pd.DataFrame:
    check_path(path, name="path", func=func, allow_none=False)
    p = Path(path)
    if not p.exists():
        raise SchemaError(f"File {str(p)!r} does not exist.")
    return read_table(p, text=True)
