"""Diagnostics of fused labels: states a method fuses to far more often than any reader uses them.

MACE assumes the true label uniform over every state used (no class prior) and lets a reader's uncertain
answers be "knowing" answers. On readers who never see an uncertain truth but all answer "uncertain" now and
then, it can fuse many items to *uncertain* -- far more than any reader says it (see
:class:`cxreval.fusion.MACE`). :func:`state_share_ratios` measures this, :func:`overfused_states` turns it into
warnings that :func:`~cxreval.fusion.fuse_labels` and ``cxreval fuse`` report.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..exceptions import InvalidParameterError
from ..schema import SOURCE, STATE
from ..schema._columns import check_columns

__all__: list[str] = []

RULE_METHODS: tuple[str, ...] = ("or", "and")
"""Fusion rules that over-fuse a state by design; :func:`overfused_states` does not flag them."""

OVERFUSED_FACTOR = 1.5
"""A state is *over-fused* when its fused share exceeds this many times the largest share any reader gives it."""
OVERFUSED_MIN_SHARE = 0.01
"""... and is at least this share of the items (rare states are not flagged)."""


def state_share_ratios(annotations: pd.DataFrame, fused: pd.Series) -> pd.DataFrame:
    """Share of items fused to each state next to the largest share any single reader gives that state.

    Parameters
    ----------
    annotations : pandas.DataFrame
        The annotation table (``study_id, source, state`` and optionally ``finding``; states as codes 0, 1, 2).
    fused : pandas.Series
        The fused label of each item (an estimator's ``labels_`` / ``fit_predict`` output).

    Returns
    -------
    table : pandas.DataFrame
        ``state, fused_share, reader_max_share, ratio`` (one row per state fused or used; ``ratio`` is
        ``fused_share / reader_max_share``, ``inf`` for a state no reader uses).

    Examples
    --------
    >>> import pandas as pd
    >>> ann = pd.DataFrame({"study_id": ["a", "a", "b", "b"], "source": ["r1", "r2"] * 2, "state": [0, 1, 2, 2]})
    >>> state_share_ratios(ann, pd.Series([1, 2], index=["a", "b"])).to_dict("records")[1]
    {'state': 1, 'fused_share': 0.5, 'reader_max_share': 0.5, 'ratio': 1.0}
    """
    if not isinstance(annotations, pd.DataFrame):
        raise InvalidParameterError(
            f"state_share_ratios: 'annotations' must be a DataFrame with columns {SOURCE!r} and "
            f"{STATE!r}. Got {type(annotations).__name__}."
        )
    check_columns(annotations, (SOURCE, STATE), where="the annotation table passed to state_share_ratios")
    if len(fused) == 0:
        raise InvalidParameterError("state_share_ratios: no fused labels.")
    use = annotations.groupby(SOURCE)[STATE].value_counts(normalize=True).unstack(fill_value=0.0)
    fshare = pd.Series(np.asarray(fused)).value_counts(normalize=True)
    states = sorted(set(int(s) for s in use.columns) | set(int(s) for s in fshare.index))
    rows = []
    for s in states:
        f = float(fshare.get(s, 0.0))
        r = float(use[s].max()) if s in use.columns else 0.0
        rows.append((s, f, r, f / r if r > 0 else (np.inf if f > 0 else 0.0)))
    return pd.DataFrame(rows, columns=["state", "fused_share", "reader_max_share", "ratio"])


def overfused_states(
    annotations: pd.DataFrame,
    fused: pd.Series,
    *,
    method: str = "",
    factor: float = OVERFUSED_FACTOR,
    min_share: float = OVERFUSED_MIN_SHARE,
) -> list[str]:
    """Warnings for the states fused more than ``factor`` times as often as any reader uses them.

    Parameters
    ----------
    annotations, fused
        As :func:`state_share_ratios`.
    method : str, default=''
        Named in the warnings.
    factor : float, default=2.0
    min_share : float, default=0.01
        States fused on fewer items than this share are not flagged.

    Returns
    -------
    warnings : list of str
        One line per over-fused state (empty when none). Always empty for ``method`` ``'or'`` and ``'and'``:
        FUSE_OR / FUSE_AND fuse to the largest / smallest state by definition, so their shares exceed every
        reader's whenever readers disagree (on the CheXpert test set FUSE_OR gives 43 % positive Edema against
        at most 24 % for a reader).
    """
    from ..schema._states import state_names

    if method in RULE_METHODS:
        return []
    table = state_share_ratios(annotations, fused)
    out = []
    for r in table.itertuples():
        if r.fused_share >= min_share and r.ratio > factor:
            name = state_names(pd.Series([r.state], dtype="Int8")).iloc[0]
            how = (
                "a state no reader gives any item"
                if not np.isfinite(r.ratio)
                else f"{r.ratio:.1f}x the largest share any reader gives it ({r.reader_max_share:.1%})"
            )
            out.append(
                f"{method + ': ' if method else ''}{r.fused_share:.1%} of items fused to {name}, {how}"
                + (
                    "; MACE has no class prior (true state uniform over the states used), see its docstring"
                    if method == "mace"
                    else ""
                )
            )
    return out
