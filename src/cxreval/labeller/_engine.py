"""The labelling engine: sentences, finding mentions and their scoped negation/uncertainty, over a corpus.

All segments of a batch of reports (a section body, or a whole text) are lower-cased and joined into one
corpus string with blank lines between them. The corpus is tokenised once with numpy (a token is a run of
letters/digits or one punctuation character; spaces and hyphens separate tokens, so ``plate-like`` reads
as ``plate like``), and sentence boundaries (``.``/``!`` before a space, a blank line) come from the same
character classes. Phrases (finding mentions; triggers, pseudo-triggers and clause boundaries) are token
sequences looked up in a first-token index, leftmost-longest: ``not excluded`` is read as one
uncertainty trigger, never as the negation ``not``, and ``subcutaneous emphysema`` (an ``ignore`` rule)
hides ``emphysema``. Regular-expression rules run as regexes over the corpus and join the same
leftmost-longest selection. The scope test is vectorised over the mentions with ``numpy.searchsorted``:

* for each trigger category (:data:`~cxreval.labeller.CATEGORIES`) and side, the nearest trigger
  before the mention (ending at or before its first token) or after it (starting at or after its end);
* it applies when it is in the same sentence, within ``before_words`` / ``after_words`` words, and no
  clause boundary (``termination``) lies between it and the mention.

Nearest suffices: a boundary between the nearest trigger and the mention also separates every farther
one, and a farther trigger is also farther in words. The state of a mention is that of the first
category that applies (uncertain_pre_negation -> uncertain, negation -> negative, uncertain ->
uncertain), otherwise positive; ``normal`` mentions ("heart size is normal") are negative and
``uncertain`` mentions ("heart is borderline enlarged") uncertain, whatever their context.

Examples
--------
>>> from cxreval.labeller import load_rules
>>> eng = Engine(load_rules())
>>> m = eng.run(["No pleural effusion or pneumothorax. Mild cardiomegaly."])
>>> [(eng.findings[f], int(s)) for f, s in zip(m.finding, m.state)]
[('Effusion', 0), ('Pneumothorax', 0), ('Cardiomegaly', 2)]
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import NamedTuple

import numpy as np

from ..exceptions import InvalidParameterError
from ..schema import LabelState
from ._rules import CATEGORIES, RuleSet
from ._spelling import Speller

__all__ = ["MentionArrays", "Engine", "get_engine", "Tokens", "tokenize", "split_sentences"]

_SEP = "\n\n"  # joins segments: always a sentence boundary
_R = r"(?![a-z0-9])"
_STATE = {
    "uncertain_pre_negation": int(LabelState.UNC),
    "negation": int(LabelState.NEG),
    "uncertain": int(LabelState.UNC),
}
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


@dataclass(frozen=True)
class MentionArrays:
    """Mentions found in a batch of segments, as parallel arrays (one element per mention).

    Attributes
    ----------
    segment : ndarray of int64
        Index of the segment (in the order given to :meth:`Engine.run`).
    start, end : ndarray of int64
        Character span in the segment's text.
    sentence : ndarray of int64
        Sentence index within the segment (0-based).
    sentence_start, sentence_end : ndarray of int64
        Span of that sentence in the segment's text.
    finding : ndarray of int64
        Index into :attr:`Engine.findings`.
    state : ndarray of int8
        0 negative, 1 uncertain, 2 positive.
    mention_rule : ndarray of int64
        Index into :attr:`Engine.mention_rules`.
    context_rule : ndarray of int64
        Index into :attr:`Engine.trigger_rules` of the trigger that decided the state, -1 when none.
    """

    segment: np.ndarray
    start: np.ndarray
    end: np.ndarray
    sentence: np.ndarray
    sentence_start: np.ndarray
    sentence_end: np.ndarray
    finding: np.ndarray
    state: np.ndarray
    mention_rule: np.ndarray
    context_rule: np.ndarray

    def __len__(self) -> int:
        return len(self.segment)


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


def _word_matches(rx: re.Pattern[str], text: str) -> list[tuple[int, int]]:
    """Spans of the matches of ``rx`` that start at a word start (not after a letter or digit), left to right."""
    out: list[tuple[int, int]] = []
    pos = 0
    search = rx.search
    while True:
        m = search(text, pos)
        if m is None:
            return out
        a = m.start()
        if a and (text[a - 1].isalnum() and text[a - 1].isascii()):
            pos = a + 1
            continue
        out.append((a, m.end()))
        pos = max(m.end(), a + 1)


class _PhraseIndex:
    """Leftmost-longest lookup of token-sequence phrases (first-token index), plus regex rules."""

    def __init__(self, items: Sequence[tuple[str, bool]]) -> None:
        # first token -> [(length, {tokens: item})], longest first; of equal phrases the first item
        by_first: dict[str, dict[int, dict[tuple[str, ...], int]]] = {}
        rx = []
        for k, (text, is_rx) in enumerate(items):
            if is_rx:
                # no leading look-behind: it would disable the regex engine's first-character scan (several
                # times slower); a match that starts inside a word is skipped in _word_matches instead
                rx.append((k, re.compile("(?:" + text + ")" + _R)))
                continue
            toks = tuple(tokenize(text)[0])
            if toks:
                by_first.setdefault(toks[0], {}).setdefault(len(toks), {}).setdefault(toks, k)
        self.first: dict[str, list[tuple[int, dict[tuple[str, ...], int]]]] = {
            t: sorted(lengths.items(), key=lambda x: -x[0]) for t, lengths in by_first.items()
        }
        self.regexes = rx

    def find(
        self, corpus: str, toks: list[str], tok_start: np.ndarray, tok_end: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(first token, end token (exclusive), item)`` of every match, leftmost-longest, not overlapping."""
        first = self.first
        cand = np.flatnonzero(
            np.fromiter(map(first.__contains__, toks), dtype=bool, count=len(toks))
        ).tolist()
        out_s: list[int] = []
        out_e: list[int] = []
        out_k: list[int] = []
        nxt = 0
        for i in cand:
            if i < nxt:
                continue
            for ln, phrases in first[toks[i]]:  # one look-up per phrase length, longest first
                item = phrases.get(tuple(toks[i : i + ln]))
                if item is not None:
                    out_s.append(i)
                    out_e.append(i + ln)
                    out_k.append(item)
                    nxt = i + ln
                    break
        s, e, k = (np.asarray(x, dtype=np.int64) for x in (out_s, out_e, out_k))
        if not self.regexes:
            return s, e, k
        rs, re_, rk = [s], [e], [k]
        for item, rx in self.regexes:
            spans = _word_matches(rx, corpus)
            if spans:
                a = np.asarray(spans, dtype=np.int64)
                rs.append(np.searchsorted(tok_start, a[:, 0], side="left"))
                re_.append(np.searchsorted(tok_end, a[:, 1], side="left") + 1)
                rk.append(np.full(len(a), item, dtype=np.int64))
        if len(rs) == 1:
            return s, e, k
        # leftmost-longest over phrase and regex matches. The phrase matches are disjoint and in order, so only
        # those overlapping a regex match can lose; the greedy pass runs on them and the regex matches alone
        xs, xe, xk = np.concatenate(rs[1:]), np.concatenate(re_[1:]), np.concatenate(rk[1:])
        lo = np.searchsorted(e, xs, side="right")  # first phrase match ending after the regex match's start
        hi = np.searchsorted(s, xe, side="left")  # first phrase match starting at or after its end
        near = np.zeros(len(s), dtype=bool)
        for a, b in zip(lo.tolist(), hi.tolist()):
            near[a:b] = True
        cs, ce, ck = (
            np.concatenate([s[near], xs]),
            np.concatenate([e[near], xe]),
            np.concatenate([k[near], xk]),
        )
        order = np.lexsort((-(ce - cs), cs))
        keep, last = [], -1
        for j in order.tolist():
            if cs[j] >= last:
                keep.append(j)
                last = int(ce[j])
        idx = np.asarray(keep, dtype=np.int64)
        s, e, k = (
            np.concatenate([s[~near], cs[idx]]),
            np.concatenate([e[~near], ce[idx]]),
            np.concatenate([k[~near], ck[idx]]),
        )
        order = np.lexsort((-(e - s), s))
        return s[order], e[order], k[order]


def _empty(n: int = 0) -> np.ndarray:
    return np.zeros(n, dtype=np.int64)


class Engine:
    """Compiled rules; :meth:`run` labels the mentions of a list of segment texts.

    Parameters
    ----------
    rules : RuleSet
    """

    def __init__(self, rules: RuleSet) -> None:
        if not isinstance(rules, RuleSet):
            raise InvalidParameterError(
                f"The 'rules' parameter of Engine must be a RuleSet (see load_rules). Got {rules!r} instead."
            )
        self.rules = rules
        self.findings: tuple[str, ...] = rules.findings
        self.mention_rules = rules.mentions
        self.trigger_rules = rules.triggers
        f_index = {f: i for i, f in enumerate(self.findings)}
        self._m_finding = np.array([f_index.get(r.finding, -1) for r in self.mention_rules], dtype=np.int64)
        # the fixed state of 'normal' (negative) and 'uncertain' (uncertain) mention rules; -1: context decides
        self._m_fixed = np.array(
            [
                {"normal": int(LabelState.NEG), "uncertain": int(LabelState.UNC)}.get(r.kind, -1)
                for r in self.mention_rules
            ],
            dtype=np.int8,
        )
        self._mentions = _PhraseIndex([(r.text, r.regex) for r in self.mention_rules])
        # one entry per distinct context phrase; a phrase may hold several roles
        texts: dict[tuple[str, bool], int] = {}
        for r in self.trigger_rules:
            texts.setdefault((r.text, r.regex), len(texts))
        self._context = _PhraseIndex(list(texts))
        cols = [(c, s) for c in CATEGORIES for s in ("before", "after")]
        self._cols = cols
        # role[k, c]: the rule index of phrase k in column c (category, side), -1 when it has no such role
        self._role = np.full((max(len(texts), 1), len(cols)), -1, dtype=np.int64)
        self._term = np.zeros(max(len(texts), 1), dtype=bool)
        for i, r in enumerate(self.trigger_rules):
            k = texts[(r.text, r.regex)]
            if r.category == "termination":
                self._term[k] = True
            elif r.category != "pseudo" and self._role[k, cols.index((r.category, r.side))] < 0:
                self._role[k, cols.index((r.category, r.side))] = i
        # boundaries a trailing trigger right after them reaches across ("is" in "X is not ruled out")
        self._copula = np.zeros(max(len(texts), 1), dtype=bool)
        self._symmetric = np.zeros(max(len(texts), 1), dtype=bool)
        for (text, is_rx), k in texts.items():
            self._copula[k] = not is_rx and text in rules.copulas
            self._symmetric[k] = not is_rx and text in rules.symmetric_hedges
        self._joining = frozenset(rules.joining_words)
        self._m_hedged = np.array([r.kind == "hedged" for r in self.mention_rules], dtype=bool)
        self._speller = None
        if rules.spelling_min_length > 0:
            words = {w for r in self.mention_rules if not r.regex for w in tokenize(r.text)[0]}
            targets = {
                w
                for r in self.mention_rules
                if not r.regex and r.kind != "ignore"
                for w in tokenize(r.text)[0]
            }
            words |= {w for r in self.trigger_rules if not r.regex for w in tokenize(r.text)[0]}
            self._speller = Speller(
                targets, known=words, min_length=rules.spelling_min_length, exclude=rules.spelling_exclude
            )

    # ------------------------------------------------------------------------------------------
    def run(self, texts: Sequence[str], *, leads: Sequence[int] | None = None) -> MentionArrays:
        """Find and classify every mention in ``texts`` (segments: section bodies or whole reports).

        ``leads``: per segment, the characters on its first line before it (a section header on the same
        line), so that line's length is judged whole; default 0.
        """
        if (
            isinstance(texts, str)
            or not isinstance(texts, Sequence)
            or not all(isinstance(t, str) for t in texts)
        ):
            raise InvalidParameterError(
                f"The 'texts' parameter of Engine.run must be a sequence of str. Got {texts!r} instead."
            )
        lead = np.zeros(len(texts), np.int64) if leads is None else np.asarray(leads, dtype=np.int64)
        if lead.shape != (len(texts),):
            raise InvalidParameterError(
                f"The 'leads' parameter of Engine.run must give one int per text "
                f"({len(texts)}). Got {len(lead)}."
            )
        if not texts:
            z = _empty()
            return MentionArrays(z, z, z, z, z, z, z, np.zeros(0, np.int8), z, z)
        raw = _SEP.join(texts)
        corpus = _fold(raw)
        if "\r" in raw:
            raw = raw.replace("\r\n", " \n").replace("\r", "\n")
        n = len(corpus)
        lens = np.fromiter((len(t) for t in texts), dtype=np.int64, count=len(texts))
        seg_start = np.concatenate([[0], np.cumsum(lens + len(_SEP))[:-1]])
        cls = _classes(corpus)
        toks, tok_start, tok_end, is_word = _tokenize(corpus, cls)
        extra = _break_starts(
            raw, corpus, cls, seg_start, lead, self.rules.short_line_chars, toks, tok_start, self._joining
        )
        ss = _sentence_starts(corpus, cls, toks, tok_start, tok_end, np.concatenate([seg_start[1:], extra]))
        tok_sent = np.searchsorted(ss, tok_start, side="right") - 1
        wc = np.concatenate([[0], np.cumsum(is_word)])  # words in tokens [a, b): wc[b] - wc[a]
        # mentions (a match must not cross a sentence boundary), misspelt finding words read as spelt
        m_toks = toks
        if self._speller is not None:
            fix = self._speller.corrections(toks)
            if fix:
                m_toks = list(toks)
                for i in np.flatnonzero(
                    np.fromiter(map(fix.__contains__, toks), dtype=bool, count=len(toks))
                ).tolist():
                    m_toks[i] = fix[toks[i]]
        ms, me, mr = self._mentions.find(corpus, m_toks, tok_start, tok_end)
        whole = tok_sent[ms] == tok_sent[me - 1] if len(mr) else np.zeros(0, bool)
        obj_starts = np.sort(ms[whole])  # every mention, ignored ones too: the objects of hedges
        keep = (self._m_finding[mr] >= 0) & whole if len(mr) else np.zeros(0, bool)
        ms, me, mr = ms[keep], me[keep], mr[keep]
        # context phrases
        cs, ce, cp = self._context.find(corpus, toks, tok_start, tok_end)
        if len(cp):
            ok = tok_sent[cs] == tok_sent[ce - 1]
            cs, ce, cp = cs[ok], ce[ok], cp[ok]
        role = self._role[cp]
        term = self._term[cp]
        k_start, k_end, k_copula = cs[term], ce[term], self._copula[cp][term]
        # a trailing hedge followed by a mention is about that mention ("opacity, likely atelectasis")
        stop = np.concatenate([[0], np.cumsum(~is_word)])  # punctuation tokens in [a, b): stop[b] - stop[a]
        has_obj = self._has_object(cs, ce, obj_starts, tok_sent, wc, stop, k_start)
        has_obj &= ~self._symmetric[cp]
        next_obj = (
            obj_starts[np.minimum(np.searchsorted(obj_starts, me, side="left"), max(len(obj_starts) - 1, 0))]
            if len(obj_starts)
            else np.zeros(len(ms), np.int64)
        )
        next_obj = np.where(np.searchsorted(obj_starts, me, side="left") < len(obj_starts), next_obj, n + 1)
        state = np.full(len(ms), 2, dtype=np.int8)
        ctx = np.full(len(ms), -1, dtype=np.int64)
        fixed = self._m_fixed[mr]
        decided = fixed >= 0
        state[decided] = fixed[decided]
        m_sent = tok_sent[ms]
        for c, (cat, side) in enumerate(self._cols):
            sel = role[:, c] >= 0
            hedge_after = cat == "uncertain" and side == "after"
            if hedge_after:
                sel &= ~has_obj
            if not sel.any() or decided.all():
                continue
            hit, rule, tstart = self._scope(
                side, cs[sel], ce[sel], role[sel, c], ms, me, m_sent, tok_sent, wc, k_start, k_end, k_copula
            )
            if hedge_after:  # a trailing hedge governs the nearest mention before it only
                hit &= next_obj >= tstart
            new = hit & ~decided
            state[new], ctx[new] = _STATE[cat], rule[new]
            decided |= new
        # a sign of a finding ('hedged' rules): negative when negated, otherwise uncertain
        hedged = self._m_hedged[mr] & (state == int(LabelState.POS))
        state[hedged] = int(LabelState.UNC)
        # back to segments, characters and sentences
        c_start, c_end = tok_start[ms], tok_end[me - 1]
        seg = np.searchsorted(seg_start, c_start, side="right") - 1
        sent_first = np.searchsorted(ss, seg_start, side="right") - 1
        bounds = np.concatenate([ss, [n]])
        off = seg_start[seg]
        lo = np.clip(bounds[m_sent] - off, 0, lens[seg])
        hi = np.clip(bounds[m_sent + 1] - off, 0, lens[seg])
        return MentionArrays(
            segment=seg,
            start=c_start - off,
            end=c_end - off,
            sentence=m_sent - sent_first[seg],
            sentence_start=lo,
            sentence_end=hi,
            finding=self._m_finding[mr],
            state=state,
            mention_rule=mr,
            context_rule=ctx,
        )

    def _has_object(
        self,
        cs: np.ndarray,
        ce: np.ndarray,
        obj_starts: np.ndarray,
        tok_sent: np.ndarray,
        wc: np.ndarray,
        stop: np.ndarray,
        k_start: np.ndarray,
    ) -> np.ndarray:
        """Per context phrase: a mention starts within ``hedge_object_words`` words after it, in its sentence,
        with no punctuation and no clause boundary between."""
        w = self.rules.hedge_object_words
        if not len(cs) or not len(obj_starts) or w <= 0:
            return np.zeros(len(cs), bool)
        j = np.searchsorted(obj_starts, ce, side="left")
        ok = j < len(obj_starts)
        b = obj_starts[np.minimum(j, len(obj_starts) - 1)]
        b = np.where(ok, b, ce)
        ok &= (tok_sent[np.minimum(b, len(tok_sent) - 1)] == tok_sent[ce - 1]) & (wc[b] - wc[ce] <= w)
        ok &= stop[b] == stop[ce]
        if len(k_start):
            k = np.searchsorted(k_start, ce, side="left")
            ok &= ~((k < len(k_start)) & (k_start[np.minimum(k, len(k_start) - 1)] < b))
        return ok

    def _scope(
        self,
        side: str,
        ts: np.ndarray,
        te: np.ndarray,
        tr: np.ndarray,
        ms: np.ndarray,
        me: np.ndarray,
        m_sent: np.ndarray,
        tok_sent: np.ndarray,
        wc: np.ndarray,
        k_start: np.ndarray,
        k_end: np.ndarray,
        k_copula: np.ndarray,
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Whether the nearest trigger on ``side`` of each mention governs it, that trigger's rule and start.

        Positions are token indices; trigger ``[ts, te)``, mention ``[ms, me)``. A copula boundary that ends
        where a trailing trigger starts does not separate them ("Pneumonia is not ruled out").
        """
        if not len(ts) or not len(ms):
            return np.zeros(len(ms), bool), np.full(len(ms), -1, np.int64), np.zeros(len(ms), np.int64)
        if side == "before":
            order = np.argsort(te, kind="stable")
            ts, te, tr = ts[order], te[order], tr[order]
            j = np.searchsorted(te, ms, side="right") - 1
            ok = j >= 0
            jj = np.where(ok, j, 0)
            a, b = te[jj], ms  # the gap [a, b) between trigger and mention
            ok &= tok_sent[ts[jj]] == m_sent
            ok &= (wc[b] - wc[np.minimum(a, b)]) <= self.rules.before_words
        else:
            j = np.searchsorted(ts, me, side="left")
            ok = j < len(ts)
            jj = np.where(ok, j, 0)
            a, b = me, ts[jj]
            ok &= tok_sent[b] == m_sent
            ok &= (wc[np.maximum(a, b)] - wc[a]) <= self.rules.after_words
        if len(k_start):
            # a clause boundary inside the gap: the first boundary starting at or after a ends at or before b
            k = np.searchsorted(k_start, a, side="left")
            kk = np.minimum(k, len(k_end) - 1)
            inside = (k < len(k_start)) & (k_end[kk] <= b)
            if side == "after":
                inside &= ~(k_copula[kk] & (k_end[kk] == b))
            ok &= ~inside
        return ok, np.where(ok, tr[jj], -1), ts[jj]


@lru_cache(maxsize=8)
def get_engine(rules: RuleSet) -> Engine:
    """A compiled :class:`Engine` for ``rules`` (cached: building the phrase index takes milliseconds)."""
    return Engine(rules)
