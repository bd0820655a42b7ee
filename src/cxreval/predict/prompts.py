"""Prompt files for zero-shot scoring: per finding, positive and negative prompts (YAML).

Format::

    temperature: null            # optional: a number replaces the model's learned logit_scale.exp()
    findings:
      Atelectasis:               # any cxreval finding name or alias (cxreval.findings)
        positive: [atelectasis, chest x-ray showing atelectasis]
        negative: [no atelectasis, chest x-ray with no atelectasis]

Built-in files (``--prompts chestxray14`` or ``--prompts chexpert``; the default is ``chestxray14``) follow
CheXzero (Tiu et al., 2022): the positive prompt is the finding's name, the negative ``"no <finding>"``, here
with a second, sentence-shaped pair of each for the prompt ensemble. They lie in ``cxreval/data/prompts/``.

Examples
--------
>>> ps = load_prompts("chexpert")
>>> ps.findings[:2], ps.positive[0][0], ps.negative[0][0]
(('Enlarged Cardiomediastinum', 'Cardiomegaly'), 'enlarged cardiomediastinum', 'no enlarged cardiomediastinum')
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from .._typing import PathLike
from .._validation import read_yaml_file
from ..exceptions import SchemaError
from ..findings import canonical_finding

__all__ = ["PROMPT_SETS", "PromptSet", "load_prompts", "prompt_file"]

PROMPT_SETS: tuple[str, ...] = ("chestxray14", "chexpert")
"""The built-in prompt files."""


@dataclass(frozen=True)
class PromptSet:
    """Prompts per finding, in file order; ``temperature`` None: the model's own."""

    findings: tuple[str, ...]
    positive: tuple[tuple[str, ...], ...]
    negative: tuple[tuple[str, ...], ...]
    temperature: float | None
    source: str

    def to_dict(self) -> dict[str, object]:
        return {f: {"positive": list(p), "negative": list(n)}
                for f, p, n in zip(self.findings, self.positive, self.negative)}


def prompt_file(name: str) -> Path:
    """The path of a built-in prompt file."""
    return Path(__file__).resolve().parents[1] / "data" / "prompts" / f"{name}.yaml"


def _texts(v: object, *, where: str) -> tuple[str, ...]:
    items = [v] if isinstance(v, str) else v
    if not isinstance(items, list) or not items or not all(isinstance(t, str) and t.strip() for t in items):
        raise SchemaError(f"{where}: expected a prompt or a non-empty list of prompts (text); got {v!r}.")
    return tuple(t.strip() for t in items)


def load_prompts(prompts: PathLike | None = None) -> PromptSet:
    """Read a prompt file: a built-in name (:data:`PROMPT_SETS`, default ``chestxray14``) or a YAML path.

    Raises
    ------
    SchemaError
        A missing or malformed file, an unknown finding name, a finding given twice, or no finding.
    """
    name = "chestxray14" if prompts is None else prompts
    path = prompt_file(str(name)) if isinstance(name, str) and name in PROMPT_SETS else Path(name).expanduser()
    where = f"prompt file {path}"
    if not path.is_file():
        raise SchemaError(f"prompts={str(name)!r}: not a built-in prompt set {list(PROMPT_SETS)} and no such file.")
    cfg = read_yaml_file(path, what="Prompt file")
    if not isinstance(cfg, Mapping) or not isinstance(cfg.get("findings"), Mapping) or not cfg["findings"]:
        raise SchemaError(f"{where}: expected a mapping with 'findings: {{FINDING: {{positive: [...], "
                          "negative: [...]}}}}'.")
    unknown = set(cfg) - {"findings", "temperature"}
    if unknown:
        raise SchemaError(f"{where}: unknown key(s) {sorted(unknown)}; expected findings and temperature.")
    t = cfg.get("temperature")
    if t is not None and (isinstance(t, bool) or not isinstance(t, (int, float)) or not t > 0):
        raise SchemaError(f"{where}: 'temperature' must be a number > 0 or null; got {t!r}.")
    findings, pos, neg = [], [], []
    for raw, entry in cfg["findings"].items():
        f = canonical_finding(str(raw), where=where)
        if f in findings:
            raise SchemaError(f"{where}: the finding {f!r} is given twice ({raw!r}).")
        if not isinstance(entry, Mapping) or set(entry) != {"positive", "negative"}:
            raise SchemaError(f"{where}: finding {raw!r} needs exactly 'positive' and 'negative' prompts.")
        findings.append(f)
        pos.append(_texts(entry["positive"], where=f"{where}, {raw} positive"))
        neg.append(_texts(entry["negative"], where=f"{where}, {raw} negative"))
    return PromptSet(tuple(findings), tuple(pos), tuple(neg), None if t is None else float(t), str(path))
