"""Labelling rules as data: the finding phrases and the context triggers, read from YAML.

The packaged rules live in ``cxreval/labeller/rules/``: ``common.yaml`` (negation and uncertainty
triggers, pseudo-triggers, clause boundaries, scope widths) and one mention file per vocabulary
(``chestxray14.yaml``, ``chexpert.yaml``). A user file passed as ``rules=`` (``--rules FILE``) is
merged over them key by key: a key it sets replaces the packaged value (a finding's entry replaces
that finding's entry), keys it leaves out keep the packaged values. So a radiologist can review the
YAML, copy it, change a list and run with it, without touching code.

Examples
--------
>>> rs = load_rules(vocabulary="chestxray14")
>>> rs.findings[:3]
('Atelectasis', 'Cardiomegaly', 'Effusion')
>>> sorted({t.category for t in rs.triggers})[:3]
['negation', 'pseudo', 'termination']
"""

from __future__ import annotations

import copy
import os
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

from .._typing import PathLike
from .._validation import read_yaml_file
from ..exceptions import InvalidParameterError, SchemaError

__all__ = [
    "VOCABULARIES",
    "CATEGORIES",
    "CONVENTIONS",
    "DEFAULT_CONVENTIONS",
    "MentionRule",
    "TriggerRule",
    "RuleSet",
    "load_rules",
    "packaged_rules_text",
]

VOCABULARIES: tuple[str, ...] = ("chestxray14", "chexpert")
"""Vocabularies with a packaged mention file."""

CONVENTIONS: tuple[str, ...] = ("cxreval", "chexpert")
"""Named labelling conventions (``common.yaml`` key ``conventions``) for phrasings labellers read differently.

``cxreval`` (the default): "No definite X" is uncertain (the reader doubts, without excluding X) and "No new X"
is negative (no X is reported). ``chexpert``: as the CheXpert labeller [1]_, "No definite X" is negative and
"No new X" uncertain (an X may persist from before).

.. [1] Irvin J. et al. CheXpert: a large chest radiograph dataset with uncertainty labels and expert
   comparison. AAAI 2019. https://doi.org/10.1609/aaai.v33i01.3301590
"""

DEFAULT_CONVENTIONS = "cxreval"

CATEGORIES: tuple[str, ...] = ("uncertain_pre_negation", "negation", "uncertain")
"""Trigger categories in the order they are applied: the first that applies to a mention decides it."""

_OTHER = ("pseudo", "termination")
_KINDS = ("phrase", "pattern", "normal", "uncertain", "hedged", "ignore")


@dataclass(frozen=True)
class MentionRule:
    """One way a finding is mentioned.

    Attributes
    ----------
    finding : str
        Canonical finding name ('' for an ``ignore`` rule).
    text : str
        The literal phrase (lower case, single spaces) or the regular expression.
    kind : {'phrase', 'pattern', 'normal', 'uncertain', 'ignore'}
        ``phrase``/``pattern``: a mention whose state the context decides; ``normal``: a statement that
        the finding is absent (negative); ``uncertain``: a hedged statement of the finding
        ("heart is borderline enlarged"); ``hedged``: a sign that suggests the finding without stating it
        ("vascular congestion" for Edema): negative when negated, otherwise uncertain; ``ignore``: matched and
        dropped (it still counts as the object of a hedge, "nodule, likely a granuloma").
    regex : bool
        Whether ``text`` is a regular expression.
    """

    finding: str
    text: str
    kind: str
    regex: bool = False

    @property
    def name(self) -> str:
        """The rule as written in ``mentions.csv`` (``phrase:pleural effusion``)."""
        return f"{self.kind}:{self.text}"


@dataclass(frozen=True)
class TriggerRule:
    """A context phrase: a trigger (with the side of the mention it governs), a pseudo-trigger or a boundary.

    Attributes
    ----------
    category : str
        One of :data:`CATEGORIES`, ``'pseudo'`` or ``'termination'``.
    text : str
        Literal phrase (lower case, single spaces) or regular expression.
    side : {'before', 'after', ''}
        Where the trigger stands relative to the mention it governs ('' for pseudo/termination).
    regex : bool
        Whether ``text`` is a regular expression.
    """

    category: str
    text: str
    side: str = ""
    regex: bool = False

    @property
    def name(self) -> str:
        """The rule as written in ``mentions.csv`` (``negation:before:no``)."""
        return ":".join(x for x in (self.category, self.side, self.text) if x)


@dataclass(frozen=True)
class RuleSet:
    """A complete, validated set of labelling rules for one vocabulary.

    Attributes
    ----------
    vocabulary : str
        ``'chestxray14'`` or ``'chexpert'`` (or the name a user file gives).
    findings : tuple of str
        Canonical findings labelled, in vocabulary order (``No Finding`` included for CheXpert).
    mentions : tuple of MentionRule
    triggers : tuple of TriggerRule
    before_words, after_words : int
        Scope widths in words.
    hedge_object_words : int
        A trailing hedge ("likely") followed within this many words by a mention ("opacity, likely
        atelectasis") is about that mention, not the one before it.
    short_line_chars : int
        A line break after a line with fewer non-space characters than this is a sentence boundary
        (list-like reports); longer lines are read as hard-wrapped text unless the next line starts
        with a bullet, a number or a capitalised word, or the short line ends in one of ``joining_words``.
    joining_words : tuple of str
        Words that continue a sentence onto the next line ("no", "of", "and").
    copulas : tuple of str
        Clause boundaries ("is", "are") that a trailing trigger right after them reaches across
        ("Pneumonia is not ruled out").
    symmetric_hedges : tuple of str
        Trailing hedges that govern the mention before them even when a mention follows ("atelectasis
        versus pneumonia").
    spelling_min_length : int
        Shortest word corrected to a finding word one edit away ("pnuemothorax"); 0 turns correction off.
    spelling_exclude : tuple of str
        Words never corrected (real words one edit from a finding word).
    conventions : str
        The labelling convention applied (:data:`CONVENTIONS`).
    no_finding : tuple of str
        For ``No Finding``: the findings whose positive or uncertain state makes it negative
        (empty: the vocabulary has no ``No Finding``).
    sources : tuple of str
        The files the rules were read from.
    """

    vocabulary: str
    findings: tuple[str, ...]
    mentions: tuple[MentionRule, ...]
    triggers: tuple[TriggerRule, ...]
    before_words: int = 8
    after_words: int = 5
    no_finding: tuple[str, ...] = ()
    sources: tuple[str, ...] = ()
    hedge_object_words: int = 0
    short_line_chars: int = 0
    joining_words: tuple[str, ...] = ()
    copulas: tuple[str, ...] = ()
    symmetric_hedges: tuple[str, ...] = ()
    spelling_min_length: int = 0
    spelling_exclude: tuple[str, ...] = ()
    conventions: str = DEFAULT_CONVENTIONS

    def to_dict(self) -> dict[str, object]:
        return {
            "vocabulary": self.vocabulary,
            "conventions": self.conventions,
            "findings": list(self.findings),
            "n_mention_rules": len(self.mentions),
            "n_trigger_rules": len(self.triggers),
            "before_words": self.before_words,
            "after_words": self.after_words,
            "hedge_object_words": self.hedge_object_words,
            "short_line_chars": self.short_line_chars,
            "spelling_min_length": self.spelling_min_length,
            "no_finding": list(self.no_finding),
            "sources": list(self.sources),
        }


def _packaged(name: str) -> tuple[dict[str, Any], str]:
    res = resources.files("cxreval.labeller").joinpath("rules").joinpath(name)
    return yaml.safe_load(res.read_text(encoding="utf-8")) or {}, f"cxreval/labeller/rules/{name}"


def packaged_rules_text(vocabulary: str = "chestxray14") -> str:
    """The packaged YAML (``common.yaml`` then the vocabulary file) as text, a starting point for ``--rules``."""
    if vocabulary not in VOCABULARIES:
        raise InvalidParameterError(
            f"The 'vocabulary' parameter of packaged_rules_text must be one of "
            f"{list(VOCABULARIES)}. Got {vocabulary!r} instead."
        )
    base = resources.files("cxreval.labeller").joinpath("rules")
    return "\n".join(
        base.joinpath(n).read_text(encoding="utf-8") for n in ("common.yaml", f"{vocabulary}.yaml")
    )


def _read_user(path: PathLike) -> dict[str, Any]:
    p = Path(path)
    data = read_yaml_file(p, what="Rules file")
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise SchemaError(
            f"Rules file {str(p)!r} must hold a mapping (keys scope, triggers, termination, findings, "
            f"ignore, no_finding). Got a {type(data).__name__}."
        )
    return data


def _merge(base: dict[str, Any], over: Mapping[str, Any]) -> dict[str, Any]:
    """Key-by-key merge: mappings merge recursively, anything else (lists, numbers) replaces."""
    out = copy.deepcopy(base)
    for k, v in over.items():
        if k == "findings" and isinstance(v, Mapping) and isinstance(out.get(k), dict):
            out[k] = {**out[k], **copy.deepcopy(dict(v))}  # a finding's entry replaces the packaged one
        elif isinstance(v, Mapping) and isinstance(out.get(k), dict):
            out[k] = _merge(out[k], v)
        else:
            out[k] = copy.deepcopy(v)
    return out


def _build(data: dict[str, Any], sources: tuple[str, ...], conventions: str) -> RuleSet:
    """The :class:`RuleSet` of the merged rules, checked by their typed model (``_rules_file.py``)."""
    from .._config import validate_config
    from ._rules_file import RulesFile

    rules = validate_config(RulesFile, data, where="rules", context={"conventions": conventions})
    return rules.rule_set(sources, conventions)


def load_rules(
    rules: PathLike | None = None, *, vocabulary: str = "chestxray14", conventions: str = DEFAULT_CONVENTIONS
) -> RuleSet:
    """The packaged rules for ``vocabulary``, with a user YAML file merged over them.

    Parameters
    ----------
    rules : path, optional
        A YAML file with any of the keys ``scope``, ``triggers``, ``termination``, ``findings``,
        ``ignore``, ``no_finding``; each key it sets replaces the packaged value (``findings`` per finding).
    vocabulary : {'chestxray14', 'chexpert'}, default='chestxray14'
    conventions : {'cxreval', 'chexpert'}, default='cxreval'
        How "No definite X" and "No new X" read (:data:`CONVENTIONS`).

    Returns
    -------
    RuleSet

    Raises
    ------
    InvalidParameterError
        Unknown vocabulary.
    SchemaError
        Missing/unreadable file, invalid YAML, an unknown key, finding or category, a bad regular expression.
    """
    if not isinstance(vocabulary, str) or vocabulary not in VOCABULARIES:
        raise InvalidParameterError(
            f"The 'vocabulary' parameter of load_rules must be one of {list(VOCABULARIES)}. "
            f"Got {vocabulary!r} instead."
        )
    if not isinstance(conventions, str) or conventions not in CONVENTIONS:
        raise InvalidParameterError(
            f"The 'conventions' parameter of load_rules must be one of {list(CONVENTIONS)}. "
            f"Got {conventions!r} instead."
        )
    if rules is not None and not isinstance(rules, (str, os.PathLike)):
        raise InvalidParameterError(
            f"The 'rules' parameter of load_rules must be a path to a YAML file or None. "
            f"Got {rules!r} instead."
        )
    common, s1 = _packaged("common.yaml")
    vocab, s2 = _packaged(f"{vocabulary}.yaml")
    data = _merge(common, vocab)
    sources: tuple[str, ...] = (s1, s2)
    if rules is not None:
        user = _read_user(rules)
        try:
            data = _merge(data, user)
            return _build(data, (*sources, str(rules)), conventions)
        except SchemaError as exc:
            raise SchemaError(f"Rules file {str(rules)!r}: {exc}") from None
    return _build(data, sources, conventions)
