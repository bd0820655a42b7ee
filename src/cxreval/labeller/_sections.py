"""Section splitting of plain-text radiology reports (FINDINGS, IMPRESSION and their header variants).

A header is a known section name at the start of a line (after optional spaces), in any case, with its
letters optionally spaced out (``F I N D I N G S``), followed by ``:``, ``-`` or the end of the line; or a
name in any case with a colon right after a sentence end inside a line (``... effusion. IMPRESSION: ...``,
``Heart normal.Impression: ...``).
The body of a section runs to the next header. Text before the first header is the ``preamble``.
Names map to a canonical section: ``findings`` (FINDING(S), REPORT, FINDINGS AND IMPRESSION...),
``impression`` (IMPRESSION(S), CONCLUSION(S), OPINION, SUMMARY, INTERPRETATION) or a non-labelled one
(``comparison``, ``indication``, ``history``, ``technique``, ``recommendation``, ``other``...).

Examples
--------
>>> t = "INDICATION: cough\\nFindings : No effusion.\\n  i m p r e s s i o n: Normal."
>>> [(s.name, t[s.start:s.end].strip()) for s in split_sections(t)]
[('indication', 'cough'), ('findings', 'No effusion.'), ('impression', 'Normal.')]
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..exceptions import InvalidParameterError

__all__ = ["HEADERS", "Section", "split_sections", "LABELLED_SECTIONS"]

LABELLED_SECTIONS: tuple[str, ...] = ("findings", "impression")
"""The sections that get their own label source (``report_findings``, ``report_impression``)."""

HEADERS: dict[str, tuple[str, ...]] = {
    "findings": (
        "findings",
        "finding",
        "findings and impression",
        "findings and impressions",
        "findings/impression",
        "report",
        "description",
        "observations",
        "prelim",
        "prelim read",
        "preliminary",
        "preliminary read",
        "preliminary report",
    ),
    "impression": (
        "impression",
        "impressions",
        "conclusion",
        "conclusions",
        "opinion",
        "summary",
        "interpretation",
        "final impression",
        "diagnosis",
        "assessment",
    ),
    "comparison": ("comparison", "comparisons", "prior", "priors", "comparison study", "comparison studies"),
    "indication": (
        "indication",
        "indications",
        "reason for exam",
        "reason for examination",
        "reason for study",
        "clinical indication",
        "reason",
        "clinical question",
    ),
    "history": (
        "history",
        "clinical history",
        "clinical information",
        "clinical data",
        "clinical details",
        "clinical notes",
        "medical history",
        "hx",
    ),
    "technique": ("technique", "examination", "exam", "procedure", "study", "views", "type of examination"),
    "recommendation": (
        "recommendation",
        "recommendations",
        "notification",
        "addendum",
        "wet read",
        "signed by",
    ),
}
"""Header spellings (lower case) for each canonical section."""


@dataclass(frozen=True)
class Section:
    """A section of a report: its canonical name, the header as written, and the body span ``[start, end)``."""

    name: str
    header: str
    start: int
    end: int


def _spaced(word: str) -> str:
    return r"[ \t]?".join(re.escape(c) for c in word)


def _header_regex() -> tuple[re.Pattern[str], dict[str, str]]:
    lookup: dict[str, str] = {}
    alts = []
    for canon, names in HEADERS.items():
        for n in names:
            lookup[n] = canon
            alts.append((len(n), r"[ \t]+".join(_spaced(w) for w in n.split())))
    body = "|".join(a for _, a in sorted(alts, key=lambda x: -x[0]))
    # a line ends at \n, \r\n or a lone \r (reports exported on Windows or old Macs)
    rx = re.compile(
        rf"(?im)(?:^|(?<=\r))[ \t]*(?P<h>{body})[ \t]*(?::|-{{1,2}}(?=[ \t])|[ \t]*(?=\r|$))[ \t]*"
    )
    return rx, lookup


def _inline_regex() -> re.Pattern[str]:
    """A header (any case) with a colon after a sentence end, inside a line ("... normal. Impression: ...")."""
    names = sorted((n.upper() for ns in HEADERS.values() for n in ns), key=len, reverse=True)
    body = "|".join(r"[ \t]+".join(re.escape(w) for w in n.split()) for n in names)
    return re.compile(rf"(?i)(?<=[.!?])[ \t]*(?P<h>{body})[ \t]*:[ \t]*")


_HEADER_RX, _LOOKUP = _header_regex()
_INLINE_RX = _inline_regex()


def split_sections(text: str) -> list[Section]:
    """Split a plain-text report into sections at recognised headers.

    Parameters
    ----------
    text : str

    Returns
    -------
    list of Section
        In text order; the text before the first header (if not blank) is a ``preamble`` section. A
        report without any header gives one ``preamble`` section (or nothing, when blank).
    """
    if not isinstance(text, str):
        raise InvalidParameterError(
            f"The 'text' parameter of split_sections must be a str. Got {text!r} instead."
        )
    out: list[Section] = []
    pos, name, header = 0, "preamble", ""
    found = {m.start(): m for m in _INLINE_RX.finditer(text)}
    found.update({m.start(): m for m in _HEADER_RX.finditer(text)})
    for _, m in sorted(found.items()):
        if name != "preamble" or text[pos : m.start()].strip():
            out.append(Section(name, header, pos, m.start()))
        key = " ".join(re.sub(r"(?<=\w)[ \t](?=\w(?:[ \t]|$))", "", m.group("h").lower()).split())
        name = _LOOKUP.get(key) or _LOOKUP.get(key.replace(" ", ""), "other")
        header, pos = m.group("h"), m.end()
    if name != "preamble" or text[pos:].strip():
        out.append(Section(name, header, pos, len(text)))
    return out
