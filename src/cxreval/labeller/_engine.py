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

import numpy as np

from .._validation import is_str_sequence
from ..exceptions import InvalidParameterError
from ..schema import LabelState
from ._rules import CATEGORIES, RuleSet
from ._spelling import Speller
from ._tokens import (
    Tokens,
    _break_starts,
    _classes,
    _fold,
    _sentence_starts,
    _tokenize,
    split_sentences,
    tokenize,
)

__all__ = ["MentionArrays", "Engine", "get_engine", "Tokens", "tokenize", "split_sentences"]

_SEP = "\n\n"  # joins segments: always a sentence boundary
_R = r"(?![a-z0-9])"
_STATE = {
    "uncertain_pre_negation": int(LabelState.UNC),
    "negation": int(LabelState.NEG),
    "uncertain": int(LabelState.UNC),
}


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
        if not is_str_sequence(texts):
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
