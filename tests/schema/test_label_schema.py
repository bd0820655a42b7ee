"""One owner of the label data model: ``cxreval.labels`` maps state names to codes, holds the
uncertain/not-mentioned policy (:class:`LabelPolicy`), the long tables' column names and the summary-row names.

A source scan fails when a module outside the owner types its own state-name <-> code mapping, a table of the
state names in code order, or the summary-row names ``macro`` / ``micro``; :data:`PENDING` lists the modules
other engineers were changing when the owner landed (they may only shrink).
"""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from cxreval.agreement import agreement_scores, compute_agreement, compute_flows
from cxreval.agreement._grids import SourceGrids
from cxreval.agreement._omissions import omission_rates
from cxreval.agreement._pairs import paired_states, prepare_labels
from cxreval.agreement._scores import confusion_counts
from cxreval.exceptions import InvalidParameterError
from cxreval.fusion import fuse_labels
from cxreval.labels import validate_label_table
from cxreval.labels._long import LABEL_COLUMNS, PREDICTION_COLUMNS
from cxreval.schema import MACRO, MICRO, NOT_MENTIONED_POLICIES, POLICIES, LabelState, binarize
from cxreval.schema._columns import SUMMARY_ROWS
from cxreval.schema._states import (
    ORDINAL_STATES,
    REPORT_STATES,
    STATE_NAMES,
    LabelPolicy,
    resolve_not_mentioned,
)

SRC = Path(__file__).resolve().parents[2] / "src" / "cxreval"
OWNERS = {"schema/_states.py", "schema/_columns.py"}
"""The modules allowed to spell the mapping: the label states and the column names."""

PENDING = {}
"""Modules other engineers were editing when the owner landed: each should import from cxreval.labels."""

_STATES = set(STATE_NAMES)
_SUMMARY = set(SUMMARY_ROWS)


def _is_int(node: ast.AST) -> bool:
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return _is_int(node.operand)
    return isinstance(node, ast.Constant) and type(node.value) in (int, float)


def _is_str(node: ast.AST | None, names: set[str]) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in names


def schema_copies(source: str) -> list[tuple[int, str]]:
    """``(line, what)`` for each copy of the label schema in ``source``."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Dict):
            if any(
                k is not None
                and ((_is_str(k, _STATES) and _is_int(v)) or (_is_int(k) and _is_str(v, _STATES)))
                for k, v in zip(node.keys, node.values)
            ):
                found.append((node.lineno, "state name <-> code mapping"))
        elif isinstance(node, (ast.Tuple, ast.List, ast.Set)):
            if len({e.value for e in node.elts if _is_str(e, _STATES)}) >= 3:  # type: ignore[attr-defined]
                found.append((node.lineno, "table of state names"))
        if _is_str(node, _SUMMARY):
            found.append((node.lineno, "summary-row name typed"))  # type: ignore[attr-defined]
    return found


def test_the_scan_finds_each_kind_of_copy():
    src = """
CODES = {"negative": 0, "positive": 2}
NAMES = {-1: "not_mentioned"}
ORDER = ("negative", "uncertain", "positive")
def f(df):
    return df[df["finding"] != "micro"]
"""
    assert [w for _, w in schema_copies(src)] == [
        "state name <-> code mapping",
        "state name <-> code mapping",
        "table of state names",
        "summary-row name typed",
    ]
    assert (
        schema_copies('X = {"negative": "#0072B2"}\nY = ("negative", "positive")\nZ = "macro average"\n')
        == []
    )


def test_no_module_outside_the_owner_copies_the_label_schema():
    copies = {}
    for path in sorted(SRC.rglob("*.py")):
        rel = path.relative_to(SRC).as_posix()
        if rel in OWNERS:
            continue
        found = schema_copies(path.read_text(encoding="utf-8"))
        if found:
            copies[rel] = found
    unexpected = {k: v for k, v in copies.items() if k not in PENDING}
    assert not unexpected, (
        f"Import state names/codes, LabelPolicy and MACRO/MICRO/SUMMARY_ROWS from cxreval.labels or cxreval.schema "
        f"instead of typing them: {unexpected}"
    )


def test_owner_constants():
    assert STATE_NAMES == {"negative": 0, "uncertain": 1, "positive": 2, "not_mentioned": -1}
    assert ORDINAL_STATES == ("negative", "uncertain", "positive")
    assert REPORT_STATES == ("negative", "uncertain", "positive", "not_mentioned")
    assert [STATE_NAMES[s] for s in ORDINAL_STATES] == [LabelState.NEG, LabelState.UNC, LabelState.POS]
    assert (MACRO, MICRO) == SUMMARY_ROWS == ("macro", "micro")
    assert LABEL_COLUMNS == ("study_id", "patient_id", "finding", "source", "state")
    assert PREDICTION_COLUMNS == ("study_id", "model", "finding", "score")


STATES = [
    "positive",
    "uncertain",
    "negative",
    "not_mentioned",
    None,
    "uncertain",
    "not_mentioned",
    "positive",
]


@pytest.mark.parametrize("uncertain", POLICIES)
@pytest.mark.parametrize("nm", NOT_MENTIONED_POLICIES)
def test_policy_binarize_equals_the_string_parameters(uncertain, nm):
    want = {"exclude": np.nan, "zeros": 0.0, "ones": 1.0}[uncertain]
    nm_value = 0.0 if nm == "negative" else np.nan
    expected = [1.0, want, 0.0, nm_value, np.nan, want, nm_value, 1.0]  # by hand
    got = LabelPolicy(uncertain=uncertain, not_mentioned=nm).binarize(STATES)
    np.testing.assert_array_equal(got, expected)
    np.testing.assert_array_equal(got, binarize(STATES, policy=uncertain, not_mentioned=nm))
    np.testing.assert_array_equal(got, binarize(STATES, policy=LabelPolicy(uncertain, nm)))


def test_resolve_not_mentioned():
    codes = np.array([-1.0, 0.0, 1.0, 2.0, np.nan])
    neg, mask = resolve_not_mentioned(codes, not_mentioned="negative")
    np.testing.assert_array_equal(neg, [0.0, 0.0, 1.0, 2.0, np.nan])
    np.testing.assert_array_equal(mask, [True, False, False, False, False])
    same, _ = LabelPolicy(not_mentioned="exclude").resolve_not_mentioned(codes)
    np.testing.assert_array_equal(same, codes)


def test_policy_of_and_bad_values():
    assert LabelPolicy.of() == LabelPolicy("exclude", "negative")
    assert LabelPolicy.of("ones", not_mentioned="exclude") == LabelPolicy("ones", "exclude")
    p = LabelPolicy("zeros", "exclude")
    assert LabelPolicy.of(p) is p and LabelPolicy.of(not_mentioned=p) is p
    assert LabelPolicy.of("ones", not_mentioned=p) == LabelPolicy("ones", "exclude")
    with pytest.raises(InvalidParameterError, match="contradicts"):
        LabelPolicy.of(p, not_mentioned="negative")
    with pytest.raises(InvalidParameterError, match="'not_mentioned' parameter of compute_flows"):
        LabelPolicy.of(not_mentioned="drop", func="compute_flows")
    with pytest.raises(InvalidParameterError, match="'uncertain' parameter of LabelPolicy"):
        LabelPolicy(uncertain="maybe")
    with pytest.raises(InvalidParameterError, match="'policy' parameter of binarize"):
        binarize(STATES, policy="drop")
    with pytest.raises(InvalidParameterError, match="contradicts"):
        binarize(STATES, policy=p, not_mentioned="negative")
    with pytest.raises(AttributeError):
        p.uncertain = "ones"  # type: ignore[misc]


def _labels(seed: int = 0, n: int = 120) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    names = np.array(REPORT_STATES + (None,), dtype=object)
    rows = []
    for s in ("CR", "Rep1", "Rep2"):
        st = rng.choice(len(names), size=(n, 3), p=[0.3, 0.2, 0.25, 0.15, 0.1])
        for i in range(n):
            for j, f in enumerate(("Atelectasis", "Edema", "Consolidation")):
                rows.append(
                    {
                        "study_id": f"s{i}",
                        "patient_id": f"p{i // 2}",
                        "finding": f,
                        "source": s,
                        "state": names[st[i, j]],
                    }
                )
    return validate_label_table(pd.DataFrame(rows))


@pytest.mark.parametrize("nm", NOT_MENTIONED_POLICIES)
def test_agreement_and_flows_accept_the_policy_object(nm):
    t = _labels()
    policy = LabelPolicy(not_mentioned=nm)
    a = compute_agreement(t, "CR:Rep1,CR:Rep2", not_mentioned=nm)
    b = compute_agreement(t, "CR:Rep1,CR:Rep2", not_mentioned=policy)
    pd.testing.assert_frame_equal(a.table, b.table)
    assert b.not_mentioned == nm and a.pairs == b.pairs
    pd.testing.assert_frame_equal(
        compute_flows(t, "CR:Rep1", not_mentioned=nm).table,
        compute_flows(t, "CR:Rep1", not_mentioned=policy).table,
    )
    assert compute_flows(t, "CR:Rep1", not_mentioned=policy).not_mentioned == nm
    ps = paired_states(SourceGrids(prepare_labels(t)), "CR", "Rep1", findings=None, studies="same")
    for x, y in zip(ps.confusion(not_mentioned=nm), ps.confusion(not_mentioned=policy)):
        np.testing.assert_array_equal(x, y)
    sa = t[(t.source == "CR") & (t.finding == "Edema")]["state"].to_numpy(dtype=float, na_value=np.nan)
    sb = t[(t.source == "Rep1") & (t.finding == "Edema")]["state"].to_numpy(dtype=float, na_value=np.nan)
    ra, rb = agreement_scores(sa, sb, not_mentioned=nm), agreement_scores(sa, sb, not_mentioned=policy)
    assert (ra.kappa_w, ra.n, ra.n_not_mentioned) == (rb.kappa_w, rb.n, rb.n_not_mentioned)
    assert rb.not_mentioned == nm
    np.testing.assert_array_equal(
        confusion_counts(sa, sb, not_mentioned=nm), confusion_counts(sa, sb, not_mentioned=policy)
    )
    oa, ob = omission_rates(sa, sb, not_mentioned=nm), omission_rates(sa, sb, not_mentioned=policy)
    np.testing.assert_array_equal(oa.transitions, ob.transitions)
    assert (oa.rate_a_not_b, oa.rate_b_not_a) == (ob.rate_a_not_b, ob.rate_b_not_a)
    # by hand: the 'negative' policy turns NOT_MENTIONED into NEG, 'exclude' drops the pair
    keep = ~np.isnan(sa) & ~np.isnan(sb)
    if nm == "exclude":
        keep &= (sa != -1) & (sb != -1)
    ha, hb = np.where(sa == -1, 0, sa)[keep].astype(int), np.where(sb == -1, 0, sb)[keep].astype(int)
    np.testing.assert_array_equal(
        confusion_counts(sa, sb, not_mentioned=policy), np.bincount(ha * 3 + hb, minlength=9).reshape(3, 3)
    )


@pytest.mark.parametrize("nm", NOT_MENTIONED_POLICIES)
def test_fusion_accepts_the_policy_object(nm):
    t = _labels(1, n=40)
    a = fuse_labels(t, ["Rep1", "Rep2"], ["mv", "or"], not_mentioned=nm)
    b = fuse_labels(t, ["Rep1", "Rep2"], ["mv", "or"], not_mentioned=LabelPolicy(not_mentioned=nm))
    pd.testing.assert_frame_equal(a.labels, b.labels)
    assert a.n_dropped == b.n_dropped
    sub = t[t.source.isin(["Rep1", "Rep2"])]
    n_nm = int((sub["state"] == -1).sum())
    assert a.n_dropped == (
        {"missing": int(sub["state"].isna().sum())} | ({"not_mentioned": n_nm} if nm == "exclude" else {})
    )


def test_old_column_spellings_are_refused_with_did_you_mean() -> None:
    """A label table with crowd-kit's / old cxreval's column names is refused naming the vocabulary's name,
    never renamed silently."""
    import pandas as pd
    import pytest

    from cxreval.exceptions import SchemaError
    from cxreval.labels import validate_label_table

    old = pd.DataFrame(
        {"image_id": ["a"], "patient_id": ["p"], "finding": ["Edema"], "reader": ["r1"], "label": [1]}
    )
    with pytest.raises(SchemaError) as exc:
        validate_label_table(old, where="file 'x.csv'")
    msg = str(exc.value)
    for old_name, new_name in (("image_id", "study_id"), ("reader", "source"), ("label", "state")):
        assert f"Column {old_name!r}: did you mean {new_name!r}?" in msg
    assert msg.startswith("file 'x.csv' is missing required column(s)")
