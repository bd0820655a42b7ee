"""Label states: the ordinal codes, their names in files, numeric state encodings and binarisation policies.

Label states are ordinal, ``NEG = 0 < UNC = 1 < POS = 2``; report-derived sources add
``NOT_MENTIONED = -1``, and a missing label is ``<NA>``. In files a state is written ``negative``,
``uncertain``, ``positive`` or ``not_mentioned``, or as a numeric code read under an explicit encoding
(:data:`STATE_ENCODINGS`, :func:`decode_states`).
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from .._validation import cell_location as _where
from .._validation import check_choice
from ..exceptions import InvalidParameterError, SchemaError
from ._columns import first_true

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "LabelState",
    "STATE_NAMES",
    "ORDINAL_STATES",
    "REPORT_STATES",
    "POLICIES",
    "NOT_MENTIONED_POLICIES",
    "STATE_ENCODINGS",
    "NUMERIC_CODES",
    "BLANK_STATES",
    "MISSING_NAME",
    "LabelPolicy",
    "parse_states",
    "decode_states",
    "state_names",
    "binarize",
    "ResolvedStates",
    "resolve_not_mentioned",
]


NUMERIC_CODES: dict[str, dict[float, int]] = {
    "cxreval": {-1.0: -1, 0.0: 0, 1.0: 1, 2.0: 2},
    "chexpert": {1.0: 2, 0.0: 0, -1.0: 1},
    "binary": {1.0: 2, 0.0: 0},
}
"""The code each numeric state reads as under each of :data:`STATE_ENCODINGS` (``chexpert``: the wide
CheXpert-style files, ``1`` positive, ``0`` negative, ``-1`` uncertain)."""
_READING_TEXT = {
    "cxreval": "-1 = not_mentioned, 0 = negative, 1 = uncertain, 2 = positive, blank = missing",
    "chexpert": "1 = positive, 0 = negative, -1 = uncertain, blank = not_mentioned",
    "binary": "1 = positive, 0 = negative, blank = missing",
}


def _as_number(v: object) -> float | None:
    if isinstance(v, bool):
        return None
    if isinstance(v, (int, np.integer, float, np.floating)):
        return float(v)
    try:
        return float(str(v).strip())
    except ValueError:
        return None


class LabelState(enum.IntEnum):
    """Ordinal label states; ``NOT_MENTIONED`` is only produced by report-derived sources."""

    NOT_MENTIONED = -1
    NEG = 0
    UNC = 1
    POS = 2


STATE_NAMES: dict[str, int] = {"negative": 0, "uncertain": 1, "positive": 2, "not_mentioned": -1}
_NAME_OF = {v: k for k, v in STATE_NAMES.items()}
ORDINAL_STATES: tuple[str, ...] = tuple(
    _NAME_OF[int(c)] for c in (LabelState.NEG, LabelState.UNC, LabelState.POS)
)
"""The names of the three ordinal states, index = code (``negative, uncertain, positive``)."""
REPORT_STATES: tuple[str, ...] = (*ORDINAL_STATES, _NAME_OF[int(LabelState.NOT_MENTIONED)])
"""The names a report-derived source may give (the ordinal states and ``not_mentioned``)."""
POLICIES: tuple[str, ...] = ("exclude", "zeros", "ones")
"""What an uncertain label becomes when states are binarised: dropped, 0 or 1 (:func:`binarize`)."""
NOT_MENTIONED_POLICIES: tuple[str, ...] = ("negative", "exclude")
"""What a ``NOT_MENTIONED`` label becomes: negative (CheXpert practice for report labelers) or dropped."""
STATE_ENCODINGS: tuple[str, ...] = ("cxreval", "chexpert", "binary")
"""How numeric states in a file are read (:func:`decode_states`); state names read the same under all three."""
MISSING_NAME = "missing"
"""How a missing label (``<NA>``) is written in a file, and read back under every encoding (never a blank)."""
BLANK_STATES: tuple[str, ...] = ("refuse", "missing")
"""What a blank state cell in a file is (:func:`decode_states`): refused (naming its file, row and column), or
a missing label (``<NA>``). Without either, a blank is what the numeric encoding says, and refused without one."""


def _state_series(lut: np.ndarray, codes: np.ndarray, values: object, column: str) -> pd.Series:
    """Each cell's state, ``lut`` at its code (``codes == -1``, a NaN cell, picks the last slot; -99 is a missing
    label), as an ``Int8`` series named ``column``, on the index of ``values`` when it is a Series."""
    import pandas as pd

    out = lut[codes]
    missing = out == -99
    res = pd.array(np.where(missing, 0, out).astype(np.int8), dtype="Int8")
    res[missing] = pd.NA
    return pd.Series(res, index=values.index if isinstance(values, pd.Series) else None, name=column)


def parse_states(values: Iterable[object], *, where: str = "label table", column: str = "state") -> pd.Series:
    """Parse state names (or their integer codes) into an ``Int8`` series; blank/NaN become ``<NA>``.

    Parsing is vectorised over the distinct values, so a table of millions of rows is fast.

    Raises
    ------
    SchemaError
        Naming the row and value of the first state outside the domain.
    """
    import pandas as pd

    if isinstance(values, pd.Series):
        s = values.reset_index(drop=True)
    else:
        try:
            s = pd.Series(list(values), dtype=object)
        except TypeError:
            raise InvalidParameterError(
                f"The 'values' parameter of parse_states must be an iterable of label states. "
                f"Got {values!r} instead."
            ) from None
    codes, uniq = pd.factorize(s.astype(object), use_na_sentinel=True)
    lut = np.full(len(uniq) + 1, -99, dtype=np.int16)  # last slot: missing
    bad: list[int] = []
    for k, v in enumerate(uniq):
        if isinstance(v, str):
            key = v.strip().lower()
            code = -99 if key in ("", MISSING_NAME) else STATE_NAMES.get(key)
        elif (
            isinstance(v, (int, np.integer, float, np.floating))
            and not isinstance(v, bool)
            and float(v) in (-1.0, 0.0, 1.0, 2.0)
        ):
            code = int(v)
        else:
            code = None
        if code is None:
            bad.append(k)
        else:
            lut[k] = code
    if bad:
        i = int(np.flatnonzero(np.isin(codes, bad))[0])
        raise SchemaError(
            f"State {s.iloc[i]!r} outside the domain in {_where(where, i, column)}; expected one of "
            f"{list(STATE_NAMES)} (or the codes -1, 0, 1, 2)."
        )
    return _state_series(lut, codes, values, column)


def decode_states(
    values: pd.Series,
    *,
    encoding: str | None = None,
    where: str = "label table",
    column: str = "state",
    blank_state: str | None = None,
) -> pd.Series:
    """Read a file's state column (names or numeric codes) into ``Int8`` states under an explicit encoding.

    State names (``positive``, ``uncertain``, ``negative``, ``not_mentioned``, and ``missing`` for a missing
    label, as cxreval writes one) mean the same under every encoding. Numeric codes (numbers, or numeric text as in a CSV) are read by ``encoding``:

    * ``'cxreval'``: -1 = not_mentioned, 0 = negative, 1 = uncertain, 2 = positive, blank = missing;
    * ``'chexpert'``: 1 = positive, 0 = negative, -1 = uncertain, blank = not_mentioned (as the wide
      CheXpert reader :func:`read_wide_labels` reads a cell);
    * ``'binary'``: 1 = positive, 0 = negative, blank = missing;
    * ``None`` (default): numeric codes are refused when they can be read two ways (1 or -1 present),
      with a message naming both readings; codes 0 and 2 alone can only be cxreval codes and are accepted.
      A blank cell (empty text, NaN or null) is refused, naming its row: without an encoding a blank has no
      documented meaning, so it is never dropped silently.

    ``blank_state='missing'`` reads every blank cell as a missing label (``<NA>``), under any encoding;
    ``'refuse'`` refuses blanks under any encoding.

    Parameters
    ----------
    values : pandas.Series
        The state column as read (object, string, integer, float or ``Int8``).
    encoding : {'cxreval', 'chexpert', 'binary'} or None, default=None
    where, column : str
        Named in error messages.
    blank_state : {'refuse', 'missing'} or None, default=None
        What a blank cell is; None: the encoding's reading (refused without an encoding).

    Returns
    -------
    states : pandas.Series of Int8

    Raises
    ------
    SchemaError
        An ambiguous numeric column without ``encoding``, or a value outside the encoding's domain (naming
        the row and value).

    Examples
    --------
    >>> import pandas as pd
    >>> decode_states(pd.Series(["1", "0", "-1", ""]), encoding="chexpert").tolist()
    [2, 0, 1, -1]
    >>> decode_states(pd.Series([1, 0, -1]), encoding="cxreval").tolist()
    [1, 0, -1]
    """
    import pandas as pd

    if encoding is not None:
        check_choice(encoding, STATE_ENCODINGS, name="state_encoding", func="decode_states")
    if blank_state is not None:
        check_choice(blank_state, BLANK_STATES, name="blank_state", func="decode_states")
    s = pd.Series(values).reset_index(drop=True)
    codes, uniq = pd.factorize(s.astype(object), use_na_sentinel=True)
    kinds: list[
        tuple[str, float | None]
    ] = []  # ("name", code) | ("num", float) | ("blank", None) | ("bad", None)
    for v in uniq:
        if isinstance(v, str) and v.strip() == "":
            kinds.append(("blank", None))
        elif isinstance(v, str) and v.strip().lower() == MISSING_NAME:
            kinds.append(("missing", None))
        elif isinstance(v, str) and v.strip().lower() in STATE_NAMES:
            kinds.append(("name", STATE_NAMES[v.strip().lower()]))
        else:
            x = _as_number(v)
            kinds.append(("bad", None) if x is None or not np.isfinite(x) else ("num", x))

    def first_row(ks: list[int]) -> int:
        return int(np.flatnonzero(np.isin(codes, ks))[0])

    bad = [k for k, (kind, _) in enumerate(kinds) if kind == "bad"]
    if bad:
        i = first_row(bad)
        raise SchemaError(
            f"State {s.iloc[i]!r} outside the domain in {_where(where, i, column)}; expected one of "
            f"{list(STATE_NAMES)}, or numeric codes read by an explicit state_encoding= "
            f"(one of {', '.join(STATE_ENCODINGS)})."
        )
    nums = sorted({float(x) for kind, x in kinds if kind == "num" and x is not None})
    enc = encoding
    if enc is None and nums:
        if set(nums) <= {0.0, 2.0}:
            enc = "cxreval"
        else:
            shown = ", ".join(f"{x:g}" for x in nums)
            raise SchemaError(
                f"The states in {_where(where, None, column)} are numeric codes ({shown}) that can be read two ways: "
                f"as cxreval codes ({_READING_TEXT['cxreval']}) or as CheXpert codes ({_READING_TEXT['chexpert']}). "
                f"Pass a state_encoding= (cxreval, chexpert or binary), or write state names."
            )
    reading = NUMERIC_CODES.get(enc or "cxreval", {})
    outside = [k for k, (kind, x) in enumerate(kinds) if kind == "num" and x not in reading]
    if outside:
        i = first_row(outside)
        v = s.iloc[i]
        raise SchemaError(
            f"State {(v.item() if isinstance(v, np.generic) else v)!r} outside the domain in "
            f"{_where(where, i, column)} under state_encoding={enc!r} ({_READING_TEXT[enc or 'cxreval']})."
        )
    blank = blank_state or ("refuse" if encoding is None else "encoding")
    if blank == "refuse":
        blanks = [k for k, (kind, _) in enumerate(kinds) if kind == "blank"]
        blank_cells = (codes < 0) | np.isin(codes, blanks)
        if (row := first_true(blank_cells)) is not None:
            raise SchemaError(
                f"Blank state in {_where(where, row, column)} ({int(blank_cells.sum())} blank state cell(s)); a "
                f"blank is read only under a numeric state_encoding=, or as a "
                f"missing label with blank_state='missing'."
            )
    blank_code = -1 if enc == "chexpert" and blank == "encoding" else -99
    lut = np.full(len(uniq) + 1, blank_code, dtype=np.int16)  # last slot: NaN / None
    for k, (kind, x) in enumerate(kinds):
        if kind == "missing":
            lut[k] = -99
        elif kind == "name" and x is not None:
            lut[k] = int(x)
        elif kind == "num" and x is not None:
            lut[k] = reading[float(x)]
    return _state_series(lut, codes, values, column)


def state_names(states: pd.Series) -> pd.Series:
    """The file spelling of each state (a missing state becomes ``'missing'``, never a blank: a blank cell is
    refused when read back without ``blank_state='missing'``)."""
    import pandas as pd

    s = states if isinstance(states, pd.Series) and str(states.dtype) == "Int8" else parse_states(states)
    codes = s.to_numpy(dtype=float, na_value=np.nan)
    out = np.full(len(codes), MISSING_NAME, dtype=object)
    for code, name in _NAME_OF.items():
        out[codes == code] = name
    return pd.Series(out, index=s.index, name=s.name, dtype=object)


def binarize(
    states: Sequence[object] | pd.Series,
    *,
    policy: str | LabelPolicy = "exclude",
    not_mentioned: str | None = None,
) -> np.ndarray:
    """Turn label states into 0/1 floats for a metric; excluded labels become NaN.

    Parameters
    ----------
    states : array-like of label states (``Int8`` codes or state names)
    policy : {'exclude', 'zeros', 'ones'} or LabelPolicy, default='exclude'
        What an uncertain label becomes: dropped (NaN), 0 or 1. Missing labels are always NaN. A
        :class:`LabelPolicy` gives both choices.
    not_mentioned : {'negative', 'exclude'} or None, default=None
        What ``NOT_MENTIONED`` becomes: 0 (CheXpert practice for report labelers) or NaN; None means
        ``'negative'`` (or the ``not_mentioned`` of a :class:`LabelPolicy` given as ``policy``).

    Returns
    -------
    y : ndarray of float, shape (n,)
        1.0, 0.0 or NaN.
    """
    import pandas as pd

    pol = LabelPolicy.of(policy, not_mentioned=not_mentioned, func="binarize")
    s = states if isinstance(states, pd.Series) and str(states.dtype) == "Int8" else parse_states(states)
    codes = s.to_numpy(dtype=float, na_value=np.nan)
    y = np.full(codes.shape, np.nan)
    y[codes == 2] = 1.0
    y[codes == 0] = 0.0
    if pol.uncertain != "exclude":
        y[codes == 1] = 0.0 if pol.uncertain == "zeros" else 1.0
    if pol.not_mentioned == "negative":
        y[codes == -1] = 0.0
    return y


class ResolvedStates(NamedTuple):
    """What :func:`resolve_not_mentioned` returns: the codes after the policy and where the input was
    ``NOT_MENTIONED``."""

    codes: np.ndarray
    not_mentioned_mask: np.ndarray


def resolve_not_mentioned(
    codes: np.ndarray, *, not_mentioned: str = "negative", func: str = "resolve_not_mentioned"
) -> ResolvedStates:
    """Apply the not-mentioned policy to float state codes, keeping the three ordinal states.

    Parameters
    ----------
    codes : ndarray of float
        State codes ``-1, 0, 1, 2`` (NaN = missing).
    not_mentioned : {'negative', 'exclude'}, default='negative'
        ``'negative'``: ``NOT_MENTIONED`` becomes ``NEG`` (code 0); ``'exclude'``: codes are returned unchanged and
        the caller drops the rows flagged in the mask.
    func : str
        Named in the error message for a bad ``not_mentioned``.

    Returns
    -------
    codes : ndarray of float
        The codes after the policy (a new array when anything changed).
    not_mentioned_mask : ndarray of bool
        Where the input was ``NOT_MENTIONED``.
    """
    check_choice(not_mentioned, NOT_MENTIONED_POLICIES, name="not_mentioned", func=func)
    nm = codes == LabelState.NOT_MENTIONED
    if not_mentioned == "negative":
        codes = np.where(nm, float(LabelState.NEG), codes)
    return ResolvedStates(codes, nm)


@dataclass(frozen=True)
class LabelPolicy:
    """The one policy for uncertain and not-mentioned labels, accepted by AUC, agreement, flows and fusion.

    Parameters
    ----------
    uncertain : {'exclude', 'zeros', 'ones'}, default='exclude'
        What an uncertain label becomes when states are binarised (:data:`POLICIES`).
    not_mentioned : {'negative', 'exclude'}, default='negative'
        What a ``NOT_MENTIONED`` label becomes (:data:`NOT_MENTIONED_POLICIES`).

    Examples
    --------
    >>> LabelPolicy(uncertain="ones").binarize(["positive", "uncertain", "not_mentioned"]).tolist()
    [1.0, 1.0, 0.0]
    >>> LabelPolicy(not_mentioned="exclude").binarize(["not_mentioned", "negative"]).tolist()
    [nan, 0.0]
    """

    uncertain: str = "exclude"
    not_mentioned: str = "negative"

    def __post_init__(self) -> None:
        check_choice(self.uncertain, POLICIES, name="uncertain", func="LabelPolicy")
        check_choice(self.not_mentioned, NOT_MENTIONED_POLICIES, name="not_mentioned", func="LabelPolicy")

    @classmethod
    def of(
        cls,
        policy: LabelPolicy | str | None = None,
        *,
        not_mentioned: LabelPolicy | str | None = None,
        func: str = "LabelPolicy",
    ) -> LabelPolicy:
        """The policy meant by a function's ``policy=`` / ``not_mentioned=`` arguments.

        ``policy`` is a :class:`LabelPolicy` (returned as is; ``not_mentioned`` must then be None or agree
        with it) or the uncertain policy as a string; ``not_mentioned`` is a string or a :class:`LabelPolicy`
        (whose ``not_mentioned`` is used). None means the default.
        """
        if isinstance(not_mentioned, LabelPolicy):
            if policy is not None and not isinstance(policy, LabelPolicy):
                return cls(policy, not_mentioned.not_mentioned)
            if isinstance(policy, LabelPolicy) and policy != not_mentioned:
                raise InvalidParameterError(
                    f"{func}: two different label policies given ({policy} and {not_mentioned}); pass one."
                )
            return not_mentioned if policy is None else policy
        if isinstance(policy, LabelPolicy):
            if not_mentioned is not None and not_mentioned != policy.not_mentioned:
                raise InvalidParameterError(
                    f"{func}: not_mentioned={not_mentioned!r} contradicts {policy}; pass one of them."
                )
            return policy
        uncertain = "exclude" if policy is None else policy
        nm = "negative" if not_mentioned is None else not_mentioned
        check_choice(uncertain, POLICIES, name="policy", func=func)
        check_choice(nm, NOT_MENTIONED_POLICIES, name="not_mentioned", func=func)
        return cls(uncertain, nm)

    def binarize(self, states: Sequence[object] | pd.Series) -> np.ndarray:
        """:func:`binarize` under this policy: 1.0, 0.0 or NaN (excluded or missing)."""
        return binarize(states, policy=self.uncertain, not_mentioned=self.not_mentioned)

    def resolve_not_mentioned(
        self, codes: np.ndarray, *, func: str = "LabelPolicy.resolve_not_mentioned"
    ) -> ResolvedStates:
        """:func:`resolve_not_mentioned` under this policy's ``not_mentioned``."""
        return resolve_not_mentioned(codes, not_mentioned=self.not_mentioned, func=func)
