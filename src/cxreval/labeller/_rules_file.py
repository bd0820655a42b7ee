"""The typed model of the labeller's rules (:func:`cxreval.labeller.load_rules`), pydantic v2.

The rules are the packaged YAML files with a user's file merged over them (``_rules.py``); this model checks
the merged mapping. Its fields are the keys, in the order they are checked: the scope widths, the line
segmentation and spelling settings, the context triggers (with the chosen labelling convention's triggers added,
the validation context's ``conventions``), the clause boundaries, the findings with their phrases and patterns
(in ``order``), ignored phrases, ``no_finding`` and the word lists. Every refusal is one
:class:`~cxreval.exceptions.SchemaError` ("rules ...", prefixed with the user's file by ``load_rules``), raised
through :func:`cxreval._config.validate_config`.
"""

from __future__ import annotations

import re
from typing import Annotated, Any

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationInfo,
    field_validator,
    model_validator,
)

from ..exceptions import SchemaError
from ..findings import canonical_finding
from ._rules import CATEGORIES, DEFAULT_CONVENTIONS, MentionRule, RuleSet, TriggerRule

__all__ = ["RulesFile", "Scope", "Segmentation", "Spelling", "FindingRules", "KEYS"]

KEYS = (
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
)
"""The top-level keys of the rules."""

_CONFIG = ConfigDict(frozen=True, extra="ignore", arbitrary_types_allowed=True)
_MENTION_KEYS = (
    "phrases",
    "patterns",
    "normal",
    "normal_patterns",
    "uncertain",
    "uncertain_patterns",
    "hedged",
)


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


def _words(value: object, name: str) -> int:
    """A scope width or a length: an int in [0, 100]."""
    if not isinstance(value, int) or isinstance(value, bool) or value < 0 or value > 100:
        raise SchemaError(f"rules scope.{name} must be an integer in [0, 100]. Got {value!r}.")
    return value


def _phrases(node: object, key: str) -> tuple[str, ...]:
    """The literal phrases of a word list (its patterns are checked, then dropped)."""
    return tuple(t for t, r in _entries(node, key) if not r)


_Words = Annotated[int, BeforeValidator(lambda v, info: _words(v, str(info.field_name)))]
"""A field holding a scope width or a length, checked by :func:`_words` under its own name."""
_Phrases = Annotated[tuple[str, ...], BeforeValidator(lambda v, info: _phrases(v, str(info.field_name)))]
"""A field holding a word list, read by :func:`_phrases` under its own name."""


class Scope(BaseModel):
    """``scope``: how many words before and after a mention a trigger reaches; how far a hedge looks ahead."""

    model_config = _CONFIG

    before_words: _Words = 8
    after_words: _Words = 5
    hedge_object_words: _Words = 0

    @model_validator(mode="before")
    @classmethod
    def _mapping(cls, value: Any) -> Any:
        value = value or {}
        if not isinstance(value, dict):
            raise SchemaError(
                f"rules scope must be a mapping with before_words and after_words. Got {value!r}."
            )
        return value


def _settings(value: Any) -> Any:
    value = value or {}
    if not isinstance(value, dict):
        raise SchemaError(
            "rules segmentation and spelling must be mappings (short_line_chars; min_length, exclude)."
        )
    return value


class _Settings(BaseModel):
    """A settings mapping of the rules (``segmentation``, ``spelling``): absent is empty."""

    model_config = _CONFIG

    _mapping = model_validator(mode="before")(_settings)


class Segmentation(_Settings):
    """``segmentation``: when a line break ends a sentence (``short_line_chars``, ``joining_words``)."""

    short_line_chars: _Words = 0
    joining_words: _Phrases = ()


class Spelling(_Settings):
    """``spelling``: the shortest word corrected (``min_length``) and the words never corrected (``exclude``)."""

    min_length: _Words = 0
    exclude: _Phrases = ()


class FindingRules(BaseModel):
    """``findings`` (in ``order``): the canonical findings and the mention rules of each."""

    model_config = _CONFIG

    names: tuple[str, ...]
    mentions: tuple[MentionRule, ...]


def _convention(conv: object, name: str) -> dict[str, Any]:
    """The triggers the labelling convention ``name`` adds (``conventions.<name>``), checked."""
    conv = conv or {}
    if not isinstance(conv, dict):
        raise SchemaError(
            f"rules conventions must be a mapping {{name: {{category: {{before: [...]}}}}}}. Got {conv!r}."
        )
    node = conv.get(name)
    if node is None:
        raise SchemaError(f"rules conventions has no entry {name!r}; it has {sorted(conv)}.")
    if not isinstance(node, dict):
        raise SchemaError(f"rules conventions.{name} must be a mapping of trigger categories. Got {node!r}.")
    for cat, sides in node.items():
        if cat not in CATEGORIES or not isinstance(sides, dict) or set(sides) - {"before", "after"}:
            raise SchemaError(
                f"rules conventions.{name}.{cat}: expected one of {list(CATEGORIES)} with "
                f"'before' and/or 'after' lists."
            )
        for side, lst in sides.items():
            if not isinstance(lst, list):
                raise SchemaError(f"rules conventions.{name}.{cat}.{side} must be a list of phrases.")
    return node


def _with_convention(trig: dict[str, Any], node: dict[str, Any]) -> dict[str, Any]:
    """``trig`` with the convention's trigger lists appended to its categories' lists."""
    trig = {k: (dict(v) if isinstance(v, dict) else v) for k, v in trig.items()}
    for cat, sides in node.items():
        if trig.get(cat) and not isinstance(trig[cat], dict):
            continue  # refused as it is: "rules triggers.<cat> must be a mapping ..."
        cur = dict(trig.get(cat) or {})
        for side, lst in sides.items():
            base = cur.get(side) or []
            cur[side] = (
                {**base, "phrases": [*(base.get("phrases") or []), *lst]}
                if isinstance(base, dict)
                else [*base, *lst]
            )
        trig[cat] = cur
    return trig


class RulesFile(BaseModel):
    """The labeller's rules, typed and checked (the YAML format of :mod:`cxreval.labeller`)."""

    model_config = _CONFIG

    scope: Scope = Scope()
    segmentation: Segmentation = Segmentation()
    spelling: Spelling = Spelling()
    conventions: Any = None
    triggers: tuple[TriggerRule, ...] = Field(default=None, validate_default=True)
    termination: tuple[TriggerRule, ...] = ()
    order: Any = None
    findings: FindingRules = Field(default=None, validate_default=True)
    ignore: tuple[MentionRule, ...] = ()
    no_finding: Any = None
    copulas: _Phrases = ()
    symmetric_hedges: _Phrases = ()
    vocabulary: Any = "custom"

    @model_validator(mode="before")
    @classmethod
    def _keys(cls, value: Any) -> Any:
        unknown = set(value) - set(KEYS)
        if unknown:
            raise SchemaError(f"rules: unknown top-level keys {sorted(unknown)}; expected {sorted(KEYS)}.")
        return value

    @field_validator("triggers", mode="before")
    @classmethod
    def _triggers(cls, value: Any, info: ValidationInfo) -> tuple[TriggerRule, ...]:
        conv = info.data.get("conventions")
        node = (
            None
            if conv is None
            else _convention(conv, (info.context or {}).get("conventions", DEFAULT_CONVENTIONS))
        )
        trig = value or {}
        if not isinstance(trig, dict):
            raise SchemaError(f"rules triggers must be a mapping of categories. Got {trig!r}.")
        if node is not None:
            trig = _with_convention(trig, node)
        out: list[TriggerRule] = []
        for cat, sides in trig.items():
            if cat == "pseudo":
                out += [TriggerRule("pseudo", t, "", r) for t, r in _entries(sides, "triggers.pseudo")]
                continue
            if cat not in CATEGORIES:
                raise SchemaError(
                    f"rules triggers: unknown category {cat!r}; expected {[*CATEGORIES, 'pseudo']}."
                )
            if not isinstance(sides, dict) or set(sides) - {"before", "after"}:
                raise SchemaError(
                    f"rules triggers.{cat} must be a mapping with 'before' and/or 'after' lists."
                )
            for side in ("before", "after"):
                out += [
                    TriggerRule(cat, t, side, r)
                    for t, r in _entries(sides.get(side), f"triggers.{cat}.{side}")
                ]
        return tuple(out)

    @field_validator("termination", mode="before")
    @classmethod
    def _termination(cls, value: Any) -> tuple[TriggerRule, ...]:
        return tuple(TriggerRule("termination", t, "", r) for t, r in _entries(value, "termination"))

    @field_validator("findings", mode="before")
    @classmethod
    def _findings(cls, value: Any, info: ValidationInfo) -> FindingRules:
        finds = value or {}
        if not isinstance(finds, dict) or not finds:
            raise SchemaError("rules findings must be a non-empty mapping {finding: {phrases: [...], ...}}.")
        order = info.data.get("order")
        mentions: list[MentionRule] = []
        findings: list[str] = []
        for raw in list(order) if isinstance(order, list) else list(finds):
            f = canonical_finding(raw, where="the rules' findings")
            node = finds.get(raw)
            if node is None:
                raise SchemaError(f"rules order names {raw!r}, which has no entry under findings.")
            if not isinstance(node, dict) or set(node) - set(_MENTION_KEYS):
                raise SchemaError(
                    f"rules findings.{raw} must be a mapping with keys among {sorted(_MENTION_KEYS)}."
                )
            findings.append(f)
            where = f"findings.{raw}"
            for key, kind in (
                ("phrases", "phrase"),
                ("normal", "normal"),
                ("uncertain", "uncertain"),
                ("hedged", "hedged"),
            ):
                mentions += [MentionRule(f, t, kind) for t, _ in _entries(node.get(key), f"{where}.{key}")]
                patterns = f"{'' if key == 'phrases' else key + '_'}patterns"
                if key != "hedged":
                    mentions += [
                        MentionRule(
                            f,
                            _check_regex(str(p), f"{where}.{patterns}"),
                            "pattern" if key == "phrases" else kind,
                            True,
                        )
                        for p in node.get(patterns) or []
                    ]
        if len(set(findings)) != len(findings):
            raise SchemaError(f"rules findings repeat a finding after canonicalisation: {findings}.")
        return FindingRules(names=tuple(findings), mentions=tuple(mentions))

    @field_validator("ignore", mode="before")
    @classmethod
    def _ignore(cls, value: Any) -> tuple[MentionRule, ...]:
        return tuple(MentionRule("", t, "ignore", r) for t, r in _entries(value, "ignore"))

    @field_validator("no_finding", mode="before")
    @classmethod
    def _no_finding(cls, value: Any) -> Any:
        if value is not None:
            exc = value.get("except", []) if isinstance(value, dict) else None
            if not isinstance(exc, list):
                raise SchemaError(
                    "rules no_finding must be a mapping {except: [findings that do not count]}."
                )
            return {"except": [canonical_finding(x, where="rules no_finding.except") for x in exc]}
        return None

    def rule_set(self, sources: tuple[str, ...], conventions: str) -> RuleSet:
        """The :class:`RuleSet` of these rules (``No Finding`` first when ``no_finding`` is given)."""
        findings = list(self.findings.names)
        no_finding: tuple[str, ...] = ()
        if self.no_finding is not None:
            if "No Finding" not in findings:
                findings.insert(0, "No Finding")
            ex = set(self.no_finding["except"])
            no_finding = tuple(f for f in findings if f != "No Finding" and f not in ex)
        return RuleSet(
            vocabulary=str(self.vocabulary),
            findings=tuple(findings),
            mentions=self.findings.mentions + self.ignore,
            triggers=self.triggers + self.termination,
            before_words=self.scope.before_words,
            after_words=self.scope.after_words,
            no_finding=no_finding,
            sources=sources,
            hedge_object_words=self.scope.hedge_object_words,
            short_line_chars=self.segmentation.short_line_chars,
            joining_words=self.segmentation.joining_words,
            copulas=self.copulas,
            symmetric_hedges=self.symmetric_hedges,
            spelling_min_length=self.spelling.min_length,
            spelling_exclude=self.spelling.exclude,
            conventions=conventions,
        )
