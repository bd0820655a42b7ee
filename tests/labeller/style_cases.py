"""The hand-written report cases in six institutional styles (``style_cases.yaml``) and their scoring.

:func:`load_cases` reads a case file (a YAML list of ``{id, style, category, text, expect}``) and
:func:`score_cases` labels every case under both vocabularies and every labelling convention, one row per check
(expected vs got state). The labeller's tests assert on the accuracy; ``python bench/run.py labeller`` reports it.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import yaml

from cxreval.labeller import label_reports, load_rules
from cxreval.labeller._rules import CONVENTIONS, DEFAULT_CONVENTIONS
from cxreval.schema._states import STATE_NAMES

CASES = Path(__file__).resolve().parent / "style_cases.yaml"
STATES = {v: k for k, v in STATE_NAMES.items()}  # code -> name


def load_cases(path: Path = CASES) -> list[dict[str, object]]:
    """The cases of ``path`` (a YAML list of {id, style, category, text, expect})."""
    cases = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    ids = [c["id"] for c in cases]
    if len(set(ids)) != len(ids):
        raise ValueError(f"{path}: repeated case ids")
    for c in cases:
        for f, st in c["expect"].items():
            for s in st.values() if isinstance(st, dict) else [st]:
                if s not in STATE_NAMES:
                    raise ValueError(f"{path}: case {c['id']}: {f}: unknown state {s!r}")
    return cases


def score_cases(cases: list[dict[str, object]]) -> pd.DataFrame:
    """One row per check: id, style, category, finding, vocabulary, conventions, expected, got, correct."""
    table = pd.DataFrame({"study_id": [c["id"] for c in cases], "text": [c["text"] for c in cases]})
    rows = []
    for vocabulary in ("chestxray14", "chexpert"):
        for conv in CONVENTIONS:
            rs = load_rules(vocabulary=vocabulary, conventions=conv)
            lab = label_reports(table, sections=("whole",), rules=rs).labels
            got = lab.set_index(["study_id", "finding"])["state"]
            for c in cases:
                for f, st in c["expect"].items():
                    if f not in rs.findings:
                        continue
                    if isinstance(st, dict):
                        exp = st[conv]
                    elif conv != DEFAULT_CONVENTIONS:
                        continue  # a convention-free state is checked once per vocabulary
                    else:
                        exp = st
                    g = got.get((c["id"], f))
                    name = "missing" if g is None or pd.isna(g) else STATES[int(g)]
                    rows.append(
                        {
                            "id": c["id"],
                            "style": c["style"],
                            "category": c["category"],
                            "finding": f,
                            "vocabulary": vocabulary,
                            "conventions": conv,
                            "expected": exp,
                            "got": name,
                            "correct": name == exp,
                        }
                    )
    return pd.DataFrame(rows)


__all__ = ["CASES", "load_cases", "score_cases"]
