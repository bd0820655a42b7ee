"""Rule-based fusion: majority vote (ties → uncertain), FUSE_OR and FUSE_AND on the ordinal states.

The XQA paper (seed 2, section 2.1.3) fuses the 3-state labels ``NEG=0 < UNC=1 < POS=2`` of several
readers per item with three fixed rules. The exact rules, for any number of readers:

**Majority vote** (:class:`MajorityVote`): the state given by strictly more readers than any other
state; when two or more states tie for the most votes the item is **uncertain**.
With two readers: ``(a, a) → a``; every disagreement ``(NEG, UNC)``, ``(NEG, POS)``, ``(UNC, POS)`` → UNC.
With three readers: ``(NEG, NEG, POS) → NEG``; ``(NEG, UNC, POS) → UNC`` (three-way tie).
crowd-kit 1.4.2's ``MajorityVote`` breaks ties to the smallest label instead (``(NEG, POS) → NEG``),
which silently turns every disagreement into a negative.

**FUSE_OR** (:class:`FuseOr`): the largest state — positive if any reader says positive, else
uncertain if any reader says uncertain, else negative. ``(NEG, UNC) → UNC``, ``(UNC, POS) → POS``,
``(NEG, POS) → POS``.

**FUSE_AND** (:class:`FuseAnd`): the smallest state — positive only if every reader says positive;
negative if any reader says negative; otherwise uncertain. ``(POS, UNC) → UNC``, ``(NEG, UNC) → NEG``,
``(NEG, POS) → NEG``.

An item labelled by one reader only keeps that reader's state under all three rules.
``probas_`` holds the share of readers voting each state (majority vote) or the one-hot fused state
(FUSE_OR / FUSE_AND).

Examples
--------
>>> import pandas as pd
>>> d = pd.DataFrame({"study_id": ["s1", "s1", "s2", "s2", "s3", "s3"],
...                   "source": ["A", "B"] * 3, "state": [0, 2, 1, 2, 0, 0]})
>>> MajorityVote().fit_predict(d).tolist()
[1, 1, 0]
>>> FuseOr().fit_predict(d).tolist()
[2, 2, 0]
>>> FuseAnd().fit_predict(d).tolist()
[0, 1, 0]
"""

from __future__ import annotations

import numpy as np

from ._base import N_STATES, Annotations, BaseFusion, label_series, proba_frame, register_fusion

__all__ = ["MajorityVote", "FuseOr", "FuseAnd", "vote_counts"]


def vote_counts(ann: Annotations) -> np.ndarray:
    """``(n_items, 3)`` matrix of the number of readers giving each state to each item."""
    return (
        np.bincount(ann.item * N_STATES + ann.label, minlength=ann.n_items * N_STATES)
        .reshape(ann.n_items, N_STATES)
        .astype(np.float64)
    )


@register_fusion("mv")
class MajorityVote(BaseFusion):
    """Majority vote over readers; a tie for the most votes gives UNC (see the module docstring).

    Attributes
    ----------
    labels_ : pandas.Series
        Fused state per item.
    probas_ : pandas.DataFrame
        Share of readers voting each state, items × ``[0, 1, 2]``.
    n_ties_ : int
        Number of items whose top vote was tied (fused to UNC).
    """

    def _fit(self, ann: Annotations) -> None:
        counts = vote_counts(ann)
        top = counts.max(axis=1, keepdims=True)
        is_top = counts == top
        tie = is_top.sum(axis=1) > 1
        labels = np.where(tie, 1, counts.argmax(axis=1))
        self.n_ties_ = int(tie.sum())
        self.labels_ = label_series(ann.items, labels)
        self.probas_ = proba_frame(ann.items, counts / counts.sum(axis=1, keepdims=True))


class _ExtremeRule(BaseFusion):
    """The largest (FUSE_OR) or smallest (FUSE_AND) state among an item's readers.

    Attributes
    ----------
    labels_ : pandas.Series
        Fused state per item.
    probas_ : pandas.DataFrame
        One-hot fused state, items × ``[0, 1, 2]``.
    """

    _reduce = staticmethod(np.maximum)

    def _fit(self, ann: Annotations) -> None:
        init = -1 if self._reduce is np.maximum else N_STATES
        out = np.full(ann.n_items, init, dtype=np.int64)
        self._reduce.at(out, ann.item, ann.label)  # type: ignore[attr-defined]
        self.labels_ = label_series(ann.items, out)
        self.probas_ = proba_frame(ann.items, np.eye(N_STATES)[out])


@register_fusion("or")
class FuseOr(_ExtremeRule):
    """FUSE_OR: the largest state among the readers (any positive → positive); ``labels_`` and the one-hot
    ``probas_`` as for every rule (see the module docstring)."""

    _reduce = staticmethod(np.maximum)


@register_fusion("and")
class FuseAnd(_ExtremeRule):
    """FUSE_AND: the smallest state among the readers (positive only if all are positive); ``labels_`` and
    the one-hot ``probas_`` as for every rule (see the module docstring)."""

    _reduce = staticmethod(np.minimum)
