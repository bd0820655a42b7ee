"""The labeller's mentions as tables: report-level states per label source (the highest state of a finding's
mentions in the source; ``No Finding`` from the others; a missing state and a note for a source whose section
the report lacks) and the mention table (:data:`MENTION_COLUMNS`)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..schema._states import ORDINAL_STATES
from ._engine import MentionArrays
from ._rules import RuleSet

__all__ = ["SOURCE_NAMES", "MENTION_COLUMNS", "SENTENCE_TEXT_MAX"]


SOURCE_NAMES: dict[str, str] = {
    "findings": "report_findings",
    "impression": "report_impression",
    "whole": "report",
}
MENTION_COLUMNS: tuple[str, ...] = (
    "study_id",
    "section",
    "field",
    "sentence",
    "start",
    "end",
    "phrase",
    "finding",
    "state",
    "mention_rule",
    "state_rule",
    "sentence_text",
)
SENTENCE_TEXT_MAX = 400
"""Longest ``sentence_text`` written whole in the mention table; longer sentences are cut around the mention."""
_NAME_OF = np.array(ORDINAL_STATES, dtype=object)  # indexed by state code 0, 1, 2


def _aggregate(
    rs: RuleSet,
    table: pd.DataFrame,
    secs: tuple[str, ...],
    m: MentionArrays,
    seg_row: np.ndarray,
    seg_sec: list[str],
    any_text: np.ndarray,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    n, k = len(table), len(rs.findings)
    sec_arr = np.asarray(seg_sec, dtype=object)
    m_row = seg_row[m.segment] if len(m) else np.zeros(0, np.int64)
    m_sec = sec_arr[m.segment] if len(m) else np.zeros(0, object)
    blocks, note_rows = [], []
    ids = table["study_id"].to_numpy(dtype=object)
    has_text = np.zeros(n, dtype=bool)
    has_text[seg_row] = True
    nf = rs.findings.index("No Finding") if "No Finding" in rs.findings else -1
    counted = np.array([f in rs.no_finding for f in rs.findings]) if nf >= 0 else None
    for s in secs:
        src = SOURCE_NAMES[s]
        st = np.full((n, k), -1, dtype=np.int8)
        sel = np.ones(len(m), dtype=bool) if s == "whole" else (m_sec == s)
        np.maximum.at(st, (m_row[sel], m.finding[sel]), m.state[sel])
        present = has_text.copy() if s == "whole" else np.zeros(n, dtype=bool)
        if s != "whole":
            present[seg_row[sec_arr == s] if len(seg_row) else []] = True
        if nf >= 0 and counted is not None:
            any_pos = (st[:, counted] >= 1).any(axis=1)
            st[:, nf] = np.where(any_pos, 0, 2)
        for i in np.flatnonzero(~present).tolist():
            note = (
                "empty report text"
                if not any_text[i]
                else "only clinical context (indication/history/comparison/technique)"
                if not has_text[i]
                else f"no {s} section"
            )
            note_rows.append((ids[i], src, note))
        state = pd.array(st.ravel(), dtype="Int8")
        state[np.repeat(~present, k)] = pd.NA
        blocks.append(
            pd.DataFrame(
                {
                    "study_id": np.repeat(ids, k),
                    "patient_id": np.repeat(table["patient_id"].to_numpy(dtype=object), k),
                    "finding": np.tile(np.asarray(rs.findings, dtype=object), n),
                    "source": src,
                    "state": state,
                }
            )
        )
    labels = pd.concat(blocks, ignore_index=True)
    for c in ("study_id", "patient_id", "finding", "source"):
        labels[c] = labels[c].astype("str")
    notes = pd.DataFrame(note_rows, columns=["study_id", "source", "note"]).astype("str")
    return labels, notes


def _sentence_text(text: str, a: int, b: int, ms: int, me: int) -> str:
    """The sentence ``text[a:b]``; a longer one than :data:`SENTENCE_TEXT_MAX` as a window around the mention.

    A text without sentence ends (one run-on "sentence" of thousands of mentions) would otherwise repeat the
    whole text in every mention row (gigabytes for a long report); the span columns stay exact.
    """
    if b - a <= SENTENCE_TEXT_MAX:
        return text[a:b].strip()
    half = max(0, (SENTENCE_TEXT_MAX - (me - ms)) // 2)
    lo, hi = max(a, ms - half), min(b, me + half)
    return ("..." if lo > a else "") + text[lo:hi].strip() + ("..." if hi < b else "")


def _mention_table(
    rs: RuleSet,
    table: pd.DataFrame,
    texts: list[str],
    m: MentionArrays,
    seg_row: np.ndarray,
    seg_sec: list[str],
    seg_field: list[str],
    seg_off: list[int],
) -> pd.DataFrame:
    if not len(m):
        return pd.DataFrame(
            {
                c: pd.Series(dtype="int64" if c in ("sentence", "start", "end") else "str")
                for c in MENTION_COLUMNS
            }
        )
    off = np.asarray(seg_off, dtype=np.int64)[m.segment]
    seg = m.segment.tolist()
    phrase = [texts[g][a:b] for g, a, b in zip(seg, m.start.tolist(), m.end.tolist())]
    sent = [
        _sentence_text(texts[g], a, b, ms, me)
        for g, a, b, ms, me in zip(
            seg, m.sentence_start.tolist(), m.sentence_end.tolist(), m.start.tolist(), m.end.tolist()
        )
    ]
    m_names = np.asarray([r.name for r in rs.mentions], dtype=object)
    t_names = np.asarray([r.name for r in rs.triggers] + ["no trigger: positive"], dtype=object)
    state_rule = t_names[np.where(m.context_rule >= 0, m.context_rule, len(rs.triggers))]
    is_normal = np.asarray([r.kind in ("normal", "uncertain") for r in rs.mentions])[m.mention_rule]
    # a hedged sign no trigger decided is uncertain by its own rule ("hedged:vascular congestion")
    is_normal |= np.asarray([r.kind == "hedged" for r in rs.mentions])[m.mention_rule] & (m.context_rule < 0)
    state_rule = np.where(is_normal, m_names[m.mention_rule], state_rule)
    return pd.DataFrame(
        {
            "study_id": table["study_id"].to_numpy(dtype=object)[seg_row[m.segment]],
            "section": np.asarray(seg_sec, dtype=object)[m.segment],
            "field": np.asarray(seg_field, dtype=object)[m.segment],
            "sentence": m.sentence.astype(np.int64),
            "start": m.start + off,
            "end": m.end + off,
            "phrase": phrase,
            "finding": np.asarray(rs.findings, dtype=object)[m.finding],
            "state": _NAME_OF[m.state.astype(np.int64)],
            "mention_rule": m_names[m.mention_rule],
            "state_rule": state_rule,
            "sentence_text": sent,
        }
    )
