"""The cxreval report labeller on hand-written reports in six institutional styles: accuracy per style and category.

The cases (``tests/reports/style_cases.yaml``, written for cxreval from clinical phrasing) are reports in the
styles of a US academic centre (MIMIC-like), CheXpert-like upper-case numbered impressions, British NHS
reports, terse emergency-department preliminary reads, templated normals and long ICU reports, each with the
expected report-level state of some findings (the ``report`` source). A finding labelled by both
vocabularies (Effusion, Pneumothorax, ...) is checked under both; a state that depends on the labelling
convention ("No definite X", "No new X") is checked under each convention. Accuracy is the share of
(case, finding, vocabulary, convention) checks whose state is the expected one; the printed tables give it
overall, per style, per category and per expected state (the uncertain cases are those expected
``uncertain``), and the failing checks.

Run::

    PYTHONPATH=src .venv/bin/python bench/labeller_styles.py [--cases FILE] [--failures]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pandas as pd
import yaml

from cxreval.labeller import CONVENTIONS, DEFAULT_CONVENTIONS, label_reports, load_rules
from cxreval.labels import STATE_NAMES

CASES = Path(__file__).resolve().parent.parent / "tests" / "reports" / "style_cases.yaml"
STATES = {v: k for k, v in STATE_NAMES.items()}  # code -> name


def load_cases(path: Path = CASES) -> list[dict[str, object]]:
    """The cases of ``path`` (a YAML list of {id, style, category, text, expect})."""
    cases = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    ids = [c["id"] for c in cases]
    if len(set(ids)) != len(ids):
        raise ValueError(f"{path}: repeated case ids")
    for c in cases:
        for f, st in c["expect"].items():
            for s in (st.values() if isinstance(st, dict) else [st]):
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
                    rows.append({"id": c["id"], "style": c["style"], "category": c["category"], "finding": f,
                                 "vocabulary": vocabulary, "conventions": conv, "expected": exp, "got": name,
                                 "correct": name == exp})
    return pd.DataFrame(rows)


def accuracy_tables(checks: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """Accuracy and counts overall, per style, per category, per expected state and per vocabulary."""
    out = {}
    for by in ("style", "category", "expected", "vocabulary"):
        g = checks.groupby(by)["correct"]
        out[by] = pd.DataFrame({"n": g.size(), "correct": g.sum(), "accuracy": g.mean().round(3)}).reset_index()
    out["overall"] = pd.DataFrame({"n": [len(checks)], "correct": [int(checks["correct"].sum())],
                                   "accuracy": [round(float(checks["correct"].mean()), 3)],
                                   "report_x_finding": [len(checks[["id", "finding"]].drop_duplicates())]})
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", type=Path, default=CASES)
    ap.add_argument("--failures", action="store_true", help="Print every failing check.")
    args = ap.parse_args(argv)
    cases = load_cases(args.cases)
    checks = score_cases(cases)
    for name, t in accuracy_tables(checks).items():
        print(f"\n## {name}\n\n{t.to_string(index=False)}")
    if args.failures:
        bad = checks[~checks["correct"]]
        print(f"\n## failing checks ({len(bad)})\n\n{bad.to_string(index=False)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
