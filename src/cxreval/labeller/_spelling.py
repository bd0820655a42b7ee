"""Correction of misspelt finding words: a word one edit away from exactly one finding word reads as that word.

One edit is a substitution, insertion, deletion or transposition of adjacent letters (optimal string
alignment distance 1): ``pnuemothorax``, ``effussion``, ``pnemonia``, ``atelectsis``. The lookup is a
symmetric-delete index (every finding word and its one-letter deletions), so checking a word costs one
dictionary probe per letter, and only words not already known to the rules (and at least ``min_length``
letters long) are checked, once per distinct word of a batch. A word within one edit of two finding words,
or listed in ``exclude`` (real words one edit from a finding word: "injection", "lessons"), is left alone.

Examples
--------
>>> sp = Speller(["pneumothorax", "effusion"], known=["no"], min_length=7)
>>> sorted(sp.corrections(["no", "pnuemothorax", "effussion", "infusion"]).items())
[('effussion', 'effusion'), ('pnuemothorax', 'pneumothorax')]
"""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["Speller", "osa_distance"]


def _deletes(w: str) -> set[str]:
    return {w[:i] + w[i + 1 :] for i in range(len(w))}


def osa_distance(a: str, b: str) -> int:
    """Optimal string alignment distance (Levenshtein plus adjacent transpositions, each substring edited once).

    Examples
    --------
    >>> osa_distance("pnuemothorax", "pneumothorax"), osa_distance("effusion", "infusion")
    (1, 2)
    """
    la, lb = len(a), len(b)
    prev2: list[int] = []
    prev = list(range(lb + 1))
    for i in range(1, la + 1):
        cur = [i] + [0] * lb
        for j in range(1, lb + 1):
            cost = a[i - 1] != b[j - 1]
            cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost)
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                cur[j] = min(cur[j], prev2[j - 2] + 1)
        prev2, prev = prev, cur
    return prev[lb]


class Speller:
    """Maps misspelt words to the one finding word (``targets``) they are one edit from.

    Parameters
    ----------
    targets : iterable of str
        Finding words (lower case) to correct towards; those shorter than ``min_length`` are not used.
    known : iterable of str
        Words never corrected (every word of the rules; they are spelt as intended).
    min_length : int
        Shortest word checked (and shortest target); short words have too many real neighbours.
    exclude : iterable of str, optional
        Further words never corrected.
    """

    def __init__(
        self, targets: Iterable[str], *, known: Iterable[str], min_length: int, exclude: Iterable[str] = ()
    ) -> None:
        self.min_length = min_length
        self.targets = frozenset(t for t in targets if len(t) >= min_length and t.isalpha())
        self.known = frozenset(known) | frozenset(exclude) | self.targets
        self._index: dict[str, set[str]] = {}
        for t in self.targets:
            for d in (t, *_deletes(t)):
                self._index.setdefault(d, set()).add(t)
        self._cache: dict[str, str | None] = {}

    def correct(self, word: str) -> str | None:
        """The finding word ``word`` is a misspelling of, or None."""
        hit = self._cache.get(word, ...)
        if hit is not ...:
            return hit
        out = None
        if len(word) >= self.min_length and word.isalpha() and word not in self.known:
            cand: set[str] = set()
            for d in (word, *_deletes(word)):
                cand |= self._index.get(d, set())
            cand = {c for c in cand if osa_distance(word, c) == 1}
            out = next(iter(cand)) if len(cand) == 1 else None
        if len(self._cache) < 200_000:
            self._cache[word] = out
        return out

    def corrections(self, words: Iterable[str]) -> dict[str, str]:
        """``{word: finding word}`` for the misspelt ones among ``words``."""
        out = {}
        for w in set(words):
            c = self.correct(w)
            if c is not None:
                out[w] = c
        return out
