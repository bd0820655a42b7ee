"""The ``findings`` argument of the label-table analyses: finding names and vocabularies, expanded."""

from __future__ import annotations

from collections.abc import Sequence
from typing import overload

from .._typing import FindingsLike
from ..findings import VOCABULARIES, canonical_finding

__all__ = ["expand_findings"]


@overload
def expand_findings(findings: None) -> None: ...
@overload
def expand_findings(findings: Sequence[str] | str) -> list[str]: ...
def expand_findings(findings: FindingsLike) -> list[str] | None:
    """``findings`` as canonical finding names, a vocabulary name (``'chexpert'``) expanded to its findings, in
    order and without repeats; None stays None (every finding of the table)."""
    if findings is None:
        return None
    items = [findings] if isinstance(findings, str) else list(findings)
    out: list[str] = []
    for f in items:
        key = str(f).strip()
        if key.lower() in VOCABULARIES:
            out.extend(VOCABULARIES[key.lower()])
        else:
            out.append(canonical_finding(key, where="the 'findings' parameter"))
    return list(dict.fromkeys(out))
