"""Prompt files for zero-shot scoring: per finding, positive and (optionally) negative prompts (YAML).

Format::

    temperature: null            # optional: a number replaces the model's learned logit_scale.exp()
    findings:
      Atelectasis:               # any cxreval finding name or alias (cxreval.findings)
        positive: [atelectasis, chest x-ray showing atelectasis]
        negative: [no atelectasis, chest x-ray with no atelectasis]   # optional

Negative prompts are needed by the ``softmax`` rule (CheXzero's) and unused by the ``max-cosine`` rule (XQA's);
see :mod:`cxreval.predict.clip`. A finding without them has ``negative == ()``.

Built-in files (``--prompts NAME``, the default ``chestxray14``; they lie in ``cxreval/data/prompts/``):

``chestxray14``, ``chexpert``
    CheXzero (Tiu et al., 2022): the positive prompt is the finding's name, the negative ``"no <finding>"``,
    here with a second, sentence-shaped pair of each for the prompt ensemble.
``xqa``
    The 12 pathologies of XQA (its CheXpert/MIMIC-CXR schema without No Finding and Support Devices), positive
    prompts only, for the ``max-cosine`` rule. XQA gives the rule and example prompts ("mild subsegmental
    atelectasis", "persistent atelectasis") but not its prompt list; these are report-style phrases composed
    like the severity x subtype prompts of MedCLIP (Wang et al., 2022) that BenchX's zero-shot evaluation uses,
    with the finding's own name always among them (Pleural Other: MedCLIP's "pleural lesion").

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

PROMPT_SETS: tuple[str, ...] = ("chestxray14", "chexpert", "xqa")
"""The built-in prompt files."""


@dataclass(frozen=True)
class PromptSet:
    """Prompts per finding, in file order (``negative[k]`` empty: none given); ``temperature`` None: the model's own."""

    findings: tuple[str, ...]
    positive: tuple[tuple[str, ...], ...]
    negative: tuple[tuple[str, ...], ...]
    temperature: float | None
    source: str

    def to_dict(self) -> dict[str, object]:
        return {
            f: {"positive": list(p), "negative": list(n)}
            for f, p, n in zip(self.findings, self.positive, self.negative)
        }

    def without_negatives(self) -> tuple[str, ...]:
        """The findings given no negative prompt."""
        return tuple(f for f, n in zip(self.findings, self.negative) if not n)


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
    path = (
        prompt_file(str(name)) if isinstance(name, str) and name in PROMPT_SETS else Path(name).expanduser()
    )
    where = f"prompt file {path}"
    if not path.is_file():
        raise SchemaError(
            f"prompts={str(name)!r}: not a built-in prompt set {list(PROMPT_SETS)} and no such file."
        )
    cfg = read_yaml_file(path, what="Prompt file")
    if not isinstance(cfg, Mapping) or not isinstance(cfg.get("findings"), Mapping) or not cfg["findings"]:
        raise SchemaError(
            f"{where}: expected a mapping with 'findings: {{FINDING: {{positive: [...], "
            "negative: [...]}}}}' (negative optional)."
        )
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
        if (
            not isinstance(entry, Mapping)
            or "positive" not in entry
            or not set(entry) <= {"positive", "negative"}
        ):
            got = sorted(entry) if isinstance(entry, Mapping) else entry
            raise SchemaError(
                f"{where}: finding {raw!r} needs 'positive' prompts and optionally 'negative' ones "
                f"(nothing else); got {got!r}."
            )
        findings.append(f)
        pos.append(_texts(entry["positive"], where=f"{where}, {raw} positive"))
        neg.append(_texts(entry["negative"], where=f"{where}, {raw} negative") if "negative" in entry else ())
    return PromptSet(tuple(findings), tuple(pos), tuple(neg), None if t is None else float(t), str(path))
