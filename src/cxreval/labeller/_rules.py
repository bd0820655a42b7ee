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
import re
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

from .._typing import PathLike
from .._validation import read_yaml_file
from ..exceptions import InvalidParameterError, SchemaError
from ..findings import canonical_finding

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


def _norm_phrase(x: object, where: str) -> str:
    if not isinstance(x, (str, int, float)) or isinstance(x, bool):
        raise SchemaError(f"{where}: every entry must be a phrase (text). Got {x!r}.")
    s = " ".join(str(x).split()).lower()
    if not s:
        raise SchemaError(f"{where}: empty phrase.")
    return s


def _check_regex(x: str, where: str) -> str:
    try:
        rx = re.compile(x)
    except re.error as exc:
        raise SchemaError(f"{where}: invalid regular expression {x!r} ({exc}).") from None
    if rx.groupindex:
        raise SchemaError(f"{where}: regular expression {x!r} has a named group; use (?:...) instead.")
    if rx.match(""):
        raise SchemaError(f"{where}: regular expression {x!r} matches the empty string.")
    return x


def _entries(node: object, where: str) -> list[tuple[str, bool]]:
    """A list of phrases, or a mapping {phrases: [...], patterns: [...]} -> [(text, is_regex)]."""
    if node is None:
        return []
    if isinstance(node, list):
        return [(_norm_phrase(x, where), False) for x in node]
    if isinstance(node, dict):
        unknown = set(node) - {"phrases", "terms", "patterns"}
        if unknown:
            raise SchemaError(
                f"{where}: unknown keys {sorted(unknown)}; expected phrases/terms and patterns."
            )
        out = _entries(node.get("phrases"), where) + _entries(node.get("terms"), where)
        pats = node.get("patterns") or []
        if not isinstance(pats, list):
            raise SchemaError(f"{where}.patterns must be a list of regular expressions. Got {pats!r}.")
        out += [(_check_regex(str(x), f"{where}.patterns"), True) for x in pats]
        return out
    raise SchemaError(f"{where} must be a list of phrases or a mapping of phrases/patterns. Got {node!r}.")


def _check_words(value: object, name: str) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < 0 or value > 100:
        raise SchemaError(f"rules scope.{name} must be an integer in [0, 100]. Got {value!r}.")
    return value


def _phrases(data: dict[str, Any], key: str) -> tuple[str, ...]:
    return tuple(t for t, r in _entries(data.get(key), key) if not r)


def _apply_conventions(data: dict[str, Any], conventions: str) -> dict[str, Any]:
    """``data`` with the triggers of convention ``conventions`` (key ``conventions``) added to ``triggers``."""
    conv = data.get("conventions") or {}
    if not isinstance(conv, dict):
        raise SchemaError(
            f"rules conventions must be a mapping {{name: {{category: {{before: [...]}}}}}}. Got {conv!r}."
        )
    node = conv.get(conventions)
    if node is None:
        raise SchemaError(f"rules conventions has no entry {conventions!r}; it has {sorted(conv)}.")
    if not isinstance(node, dict):
        raise SchemaError(
            f"rules conventions.{conventions} must be a mapping of trigger categories. Got {node!r}."
        )
    out = dict(data)
    trig = {k: (dict(v) if isinstance(v, dict) else v) for k, v in (data.get("triggers") or {}).items()}
    for cat, sides in node.items():
        if cat not in CATEGORIES or not isinstance(sides, dict) or set(sides) - {"before", "after"}:
            raise SchemaError(
                f"rules conventions.{conventions}.{cat}: expected one of {list(CATEGORIES)} with "
                f"'before' and/or 'after' lists."
            )
        cur = dict(trig.get(cat) or {})
        for side, lst in sides.items():
            if not isinstance(lst, list):
                raise SchemaError(f"rules conventions.{conventions}.{cat}.{side} must be a list of phrases.")
            base = cur.get(side) or []
            cur[side] = (
                {**base, "phrases": [*(base.get("phrases") or []), *lst]}
                if isinstance(base, dict)
                else [*base, *lst]
            )
        trig[cat] = cur
    out["triggers"] = trig
    return out


def _build(data: dict[str, Any], sources: tuple[str, ...], conventions: str = DEFAULT_CONVENTIONS) -> RuleSet:
    known = {
        "vocabulary",
        "scope",
        "triggers",
        "termination",
        "findings",
        "ignore",
        "no_finding",
        "order",
        "conventions",
        "copulas",
        "symmetric_hedges",
        "spelling",
        "segmentation",
    }
    unknown = set(data) - known
    if unknown:
        raise SchemaError(f"rules: unknown top-level keys {sorted(unknown)}; expected {sorted(known)}.")
    scope = data.get("scope") or {}
    if not isinstance(scope, dict):
        raise SchemaError(f"rules scope must be a mapping with before_words and after_words. Got {scope!r}.")
    before_words = _check_words(scope.get("before_words", 8), "before_words")
    after_words = _check_words(scope.get("after_words", 5), "after_words")
    hedge_object_words = _check_words(scope.get("hedge_object_words", 0), "hedge_object_words")
    seg = data.get("segmentation") or {}
    spell = data.get("spelling") or {}
    if not isinstance(seg, dict) or not isinstance(spell, dict):
        raise SchemaError(
            "rules segmentation and spelling must be mappings (short_line_chars; min_length, exclude)."
        )
    short_line = _check_words(seg.get("short_line_chars", 0), "short_line_chars")
    spell_min = _check_words(spell.get("min_length", 0), "min_length")
    data = _apply_conventions(data, conventions) if data.get("conventions") is not None else data
    triggers: list[TriggerRule] = []
    trig = data.get("triggers") or {}
    if not isinstance(trig, dict):
        raise SchemaError(f"rules triggers must be a mapping of categories. Got {trig!r}.")
    for cat, node in trig.items():
        if cat == "pseudo":
            triggers += [TriggerRule("pseudo", t, "", r) for t, r in _entries(node, "triggers.pseudo")]
            continue
        if cat not in CATEGORIES:
            raise SchemaError(
                f"rules triggers: unknown category {cat!r}; expected {[*CATEGORIES, 'pseudo']}."
            )
        if not isinstance(node, dict) or set(node) - {"before", "after"}:
            raise SchemaError(f"rules triggers.{cat} must be a mapping with 'before' and/or 'after' lists.")
        for side in ("before", "after"):
            triggers += [
                TriggerRule(cat, t, side, r) for t, r in _entries(node.get(side), f"triggers.{cat}.{side}")
            ]
    triggers += [
        TriggerRule("termination", t, "", r) for t, r in _entries(data.get("termination"), "termination")
    ]
    finds = data.get("findings") or {}
    if not isinstance(finds, dict) or not finds:
        raise SchemaError("rules findings must be a non-empty mapping {finding: {phrases: [...], ...}}.")
    order = data.get("order")
    names = list(order) if isinstance(order, list) else list(finds)
    mentions: list[MentionRule] = []
    findings: list[str] = []
    for raw in names:
        f = canonical_finding(raw, where="the rules' findings")
        node = finds.get(raw)
        if node is None:
            raise SchemaError(f"rules order names {raw!r}, which has no entry under findings.")
        allowed = {
            "phrases",
            "patterns",
            "normal",
            "normal_patterns",
            "uncertain",
            "uncertain_patterns",
            "hedged",
        }
        if not isinstance(node, dict) or set(node) - allowed:
            raise SchemaError(f"rules findings.{raw} must be a mapping with keys among {sorted(allowed)}.")
        findings.append(f)
        where = f"findings.{raw}"
        mentions += [
            MentionRule(f, t, "phrase") for t, _ in _entries(node.get("phrases"), where + ".phrases")
        ]
        for p in node.get("patterns") or []:
            mentions.append(MentionRule(f, _check_regex(str(p), where + ".patterns"), "pattern", True))
        mentions += [MentionRule(f, t, "normal") for t, _ in _entries(node.get("normal"), where + ".normal")]
        for p in node.get("normal_patterns") or []:
            mentions.append(MentionRule(f, _check_regex(str(p), where + ".normal_patterns"), "normal", True))
        mentions += [
            MentionRule(f, t, "uncertain") for t, _ in _entries(node.get("uncertain"), where + ".uncertain")
        ]
        for p in node.get("uncertain_patterns") or []:
            mentions.append(
                MentionRule(f, _check_regex(str(p), where + ".uncertain_patterns"), "uncertain", True)
            )
        mentions += [MentionRule(f, t, "hedged") for t, _ in _entries(node.get("hedged"), where + ".hedged")]
    if len(set(findings)) != len(findings):
        raise SchemaError(f"rules findings repeat a finding after canonicalisation: {findings}.")
    mentions += [MentionRule("", t, "ignore", r) for t, r in _entries(data.get("ignore"), "ignore")]
    nf = data.get("no_finding")
    no_finding: tuple[str, ...] = ()
    if nf is not None:
        if "No Finding" not in findings:
            findings.insert(0, "No Finding")
        exc = nf.get("except", []) if isinstance(nf, dict) else None
        if not isinstance(exc, list):
            raise SchemaError("rules no_finding must be a mapping {except: [findings that do not count]}.")
        ex = {canonical_finding(x, where="rules no_finding.except") for x in exc}
        no_finding = tuple(f for f in findings if f != "No Finding" and f not in ex)
    return RuleSet(
        vocabulary=str(data.get("vocabulary", "custom")),
        findings=tuple(findings),
        mentions=tuple(mentions),
        triggers=tuple(triggers),
        before_words=before_words,
        after_words=after_words,
        no_finding=no_finding,
        sources=sources,
        hedge_object_words=hedge_object_words,
        short_line_chars=short_line,
        joining_words=_phrases(seg, "joining_words"),
        copulas=_phrases(data, "copulas"),
        symmetric_hedges=_phrases(data, "symmetric_hedges"),
        spelling_min_length=spell_min,
        spelling_exclude=_phrases(spell, "exclude"),
        conventions=conventions,
    )


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
