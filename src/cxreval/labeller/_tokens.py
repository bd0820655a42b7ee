"""Tokens and sentences of the labelling engine's corpus.

A token is a run of letters/digits or one punctuation character; spaces and hyphens separate tokens, so
``plate-like`` reads as ``plate like``. Sentence boundaries (``.``/``!`` before a space, a blank line, a line
break before a bullet, a list number or a capitalised word) come from the same character classes
(:func:`tokenize`, :func:`split_sentences`).
"""

from __future__ import annotations

import re
from typing import NamedTuple

import numpy as np

from ..exceptions import InvalidParameterError

__all__ = ["Tokens", "tokenize", "split_sentences", "SHORT_LINE_CHARS", "JOINING_WORDS"]


_NO_BREAK_BEFORE_DOT = frozenset(
    {"vs", "dr", "mr", "ms", "mrs", "st", "approx", "e", "g", "i", "fig", "prof"}
)
# a full stop between two words without a space ("normal.No"); the word before it is group 1
_NO_SPACE_DOT = re.compile(r"(?<![a-z0-9.])([a-z]{2,})\.(?=[a-z]{2})")
# a line that starts with a bullet, a list number or a capitalised word (case of the original text)
_LINE_MARK = re.compile(r"\n[ \t]*(?=[-*\u2022\u00b7\u2013]|\d{1,2}[.)]|[A-Z][a-z])")
SHORT_LINE_CHARS = 32
"""Default of ``short_line_chars`` in :func:`split_sentences` (the packaged rules' ``segmentation`` value)."""
JOINING_WORDS = frozenset(
    {
        "no",
        "not",
        "without",
        "of",
        "the",
        "a",
        "an",
        "and",
        "or",
        "with",
        "in",
        "at",
        "to",
        "for",
        "is",
        "are",
        "was",
        "were",
        "by",
        "from",
        "on",
        "as",
    }
)
"""Words :func:`split_sentences` reads as continuing onto the next line (the packaged rules' value)."""
# character classes of the lower-cased text (code points; anything >= 128 that is not a space is a letter)
_CLASS = np.full(128, 2, dtype=np.int8)  # 0 space, 1 letter/digit, 2 punctuation, 3 hyphen (a separator)
_CLASS[[9, 10, 11, 12, 13, 32]] = 0
_CLASS[ord("0") : ord("9") + 1] = 1
_CLASS[ord("a") : ord("z") + 1] = 1
_CLASS[ord("A") : ord("Z") + 1] = 1
_CLASS[ord("-")] = 3
_UNICODE_SPACE = np.array(
    [0x85, 0xA0, 0x1680, 0x2028, 0x2029, 0x202F, 0x205F, 0x3000, *range(0x2000, 0x200B)], dtype=np.uint32
)


def _classes(text: str) -> np.ndarray:
    codes = np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32)
    cls = np.ones(len(codes), dtype=np.int8)
    low = codes < 128
    cls[low] = _CLASS[codes[low]]
    if not low.all():
        cls[np.isin(codes, _UNICODE_SPACE)] = 0
    return cls


class Tokens(NamedTuple):
    """What :func:`tokenize` returns: the tokens, their start and end offsets, and whether each is a word."""

    tokens: list[str]
    start: np.ndarray
    end: np.ndarray
    is_word: np.ndarray


def tokenize(text: str) -> Tokens:
    """Tokens of ``text``: ``(tokens, start, end, is_word)``; a token is a letter/digit run or one punctuation mark.

    Examples
    --------
    >>> tokenize("No plate-like opacity; x-XXXX.")[0]
    ['No', 'plate', 'like', 'opacity', ';', 'x', 'XXXX', '.']
    """
    if not isinstance(text, str):
        raise InvalidParameterError(f"The 'text' parameter of tokenize must be a str. Got {text!r} instead.")
    return Tokens(*_tokenize(text, _classes(text)))


def _tokenize(text: str, cls: np.ndarray) -> tuple[list[str], np.ndarray, np.ndarray, np.ndarray]:
    word = cls == 1
    prev = np.concatenate([[False], word[:-1]])
    nxt = np.concatenate([word[1:], [False]])
    ws = np.flatnonzero(word & ~prev)
    we = np.flatnonzero(word & ~nxt) + 1
    ps = np.flatnonzero(cls == 2)
    start = np.concatenate([ws, ps])
    end = np.concatenate([we, ps + 1])
    is_word = np.concatenate([np.ones(len(ws), bool), np.zeros(len(ps), bool)])
    order = np.argsort(start, kind="stable")
    start, end, is_word = start[order], end[order], is_word[order]
    return [text[a:b] for a, b in zip(start.tolist(), end.tolist())], start, end, is_word


def _fold(text: str) -> str:
    """Lower case with the same length as ``text`` (spans index both), and line ends as ``\n``.

    ``str.lower`` lengthens U+0130 (İ -> i + combining dot), which would shift every later span; such
    characters are lower-cased one by one, keeping the character when its lower case is longer. A CRLF
    becomes `` \n`` and a lone CR ``\n``, so Windows and old Mac line ends read like Unix ones.
    """
    low = text.lower()
    if len(low) != len(text):
        low = "".join(c.lower() if len(c.lower()) == 1 else c for c in text)
    if "\r" in low:
        low = low.replace("\r\n", " \n").replace("\r", "\n")
    return low


def _sentence_starts(
    text: str, cls: np.ndarray, toks: list[str], tok_start: np.ndarray, tok_end: np.ndarray, extra: np.ndarray
) -> np.ndarray:
    """Sorted distinct sentence starts: 0, ``extra``, after '.'/'!' followed by a space, after a blank line."""
    n = len(text)
    starts = [np.zeros(1, np.int64), np.asarray(extra, dtype=np.int64)]
    nt = len(toks)
    if nt:
        space_after = (tok_end >= n) | (cls[np.minimum(tok_end, n - 1)] == 0)
        chars = np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32)
        first = chars[np.minimum(tok_start, n - 1)]
        dot = (
            ((tok_end - tok_start) == 1) & ((first == ord(".")) | (first == ord("!"))) & space_after
        )  # "." "!"
        j = np.flatnonzero(dot)
        if len(j):
            prev_ok = np.fromiter(
                (i == 0 or toks[i - 1].lower() not in _NO_BREAK_BEFORE_DOT for i in j.tolist()),
                dtype=bool,
                count=len(j),
            )
            j = j[prev_ok]
            # a list number ("2. No effusion"): the item starts at the number, not after its full stop
            num = np.fromiter(
                (i > 0 and len(toks[i - 1]) <= 2 and toks[i - 1].isdigit() for i in j.tolist()),
                dtype=bool,
                count=len(j),
            )
            if num.any():
                ns = tok_start[j[num] - 1]
                num[num] = (ns == 0) | (cls[np.maximum(ns - 1, 0)] == 0)
            starts.append(np.where(num, tok_start[np.maximum(j - 1, 0)], tok_end[j]))
        nl = np.flatnonzero(chars == 10)
        if len(nl) > 1:
            # a blank line: two newlines with only spaces between them
            nonspace = np.concatenate([[0], np.cumsum(cls != 0)])
            blank = nonspace[nl[1:]] == nonspace[nl[:-1] + 1]
            starts.append(nl[1:][blank] + 1)
    ss = np.unique(np.concatenate(starts))
    return ss[ss < max(n, 1)]


def _break_starts(
    raw: str,
    corpus: str,
    cls: np.ndarray,
    seg_start: np.ndarray,
    leads: np.ndarray,
    short_line_chars: int,
    toks: list[str],
    tok_start: np.ndarray,
    joining: frozenset[str] = frozenset(),
) -> np.ndarray:
    """Sentence starts other than at '.'/'!' + space and blank lines (``raw``: the text before lower-casing).

    * after a full stop between two words without a space ("normal.No pneumothorax"), unless the word
      before it is an abbreviation (dr., vs.);
    * at a line that starts with a bullet, a list number ("2.", "3)") or a capitalised word;
    * at a line after a short line (fewer than ``short_line_chars`` non-space characters, the first line
      of a segment counting its ``leads`` characters before the segment) that does not end in a
      ``joining`` word ("no", "of", "and"): a list-like report. Longer lines followed by a lower-case or
      upper-case word read as hard-wrapped text.
    """
    out = [
        np.asarray(
            [m.end() for m in _NO_SPACE_DOT.finditer(corpus) if m.group(1) not in _NO_BREAK_BEFORE_DOT],
            dtype=np.int64,
        )
    ]
    if "\n" not in corpus:
        return out[0]
    out.append(np.asarray([m.start() + 1 for m in _LINE_MARK.finditer(raw)], dtype=np.int64))
    if short_line_chars > 0:
        nl = np.flatnonzero(np.frombuffer(corpus.encode("utf-32-le"), dtype=np.uint32) == 10)
        nonspace = np.concatenate([[0], np.cumsum(cls != 0)])
        line_start = np.concatenate([[0], nl[:-1] + 1])
        count = nonspace[nl] - nonspace[line_start]
        first = np.searchsorted(seg_start, line_start, side="right") - 1
        is_first = (first >= 0) & (seg_start[np.maximum(first, 0)] == line_start)
        count = count + np.where(is_first, leads[np.maximum(first, 0)], 0)
        brk = (count > 0) & (count < short_line_chars)
        if joining and brk.any():
            last = np.searchsorted(tok_start, nl[brk], side="left") - 1
            brk[np.flatnonzero(brk)] = [k < 0 or toks[k] not in joining for k in last.tolist()]
        out.append(nl[brk] + 1)
    return np.concatenate(out)


def split_sentences(text: str, *, short_line_chars: int = SHORT_LINE_CHARS) -> list[tuple[int, int]]:
    """Sentence spans ``[start, end)`` of ``text`` (surrounding spaces excluded; blank sentences dropped).

    A sentence ends at ``.``/``!`` followed by a space (not after ``vs``, ``dr``, ``e``/``i`` as in e.g./i.e.),
    at a full stop between two words without a space, at a blank line, before a line that starts with a
    bullet, a list number or a capitalised word, and after a short line (see :func:`_break_starts`); ``?``
    does not end one (it is an uncertainty trigger: "? pneumonia"). A decimal ("2.5 cm") never does.

    Examples
    --------
    >>> t = "No effusion. A 2.5 cm nodule vs. mass.\\n\\nStable.No pneumothorax\\nSmall effusion"
    >>> [t[a:b] for a, b in split_sentences(t)]
    ['No effusion.', 'A 2.5 cm nodule vs. mass.', 'Stable.', 'No pneumothorax', 'Small effusion']
    """
    if not isinstance(text, str):
        raise InvalidParameterError(
            f"The 'text' parameter of split_sentences must be a str. Got {text!r} instead."
        )
    corpus = _fold(text)
    cls = _classes(corpus)
    toks, tok_start, tok_end, _ = _tokenize(corpus, cls)
    extra = _break_starts(
        text.replace("\r\n", " \n").replace("\r", "\n"),
        corpus,
        cls,
        np.zeros(1, np.int64),
        np.zeros(1, np.int64),
        short_line_chars,
        toks,
        tok_start,
        JOINING_WORDS,
    )
    ss = _sentence_starts(corpus, cls, toks, tok_start, tok_end, extra)
    out = []
    for a, b in zip(ss.tolist(), [*ss[1:].tolist(), len(text)]):
        seg = text[a:b]
        if seg.strip():
            lead = len(seg) - len(seg.lstrip())
            out.append((a + lead, a + len(seg.rstrip())))
    return out
