"""Every analysis checks its DataFrame inputs as the CLI does: state names and codes give the same result, and a
bad table raises a CxrevalError naming the column or value (never a raw pandas/pyarrow error)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from cxreval.agreement import (
    compare_sources,
    compute_agreement,
    compute_flows,
    compute_omissions,
    compute_prevalence,
)
from cxreval.exceptions import CxrevalError, SchemaError
from cxreval.fusion import fuse_labels
from cxreval.fusion._label_table import annotations_from_labels
from cxreval.jobs import fuse_and_compare
from cxreval.labels import validate_label_table

STATES = np.array(["negative", "uncertain", "positive", "not_mentioned"], dtype=object)


def _labels() -> pd.DataFrame:
    rng = np.random.default_rng(5)
    return pd.DataFrame(
        [
            {
                "study_id": f"s{i}",
                "patient_id": f"p{i // 2}",
                "finding": f,
                "source": src,
                "state": STATES[rng.integers(0, 3 if src == "CR" else 4)],
            }
            for src in ("CR", "Rep1", "Rep2")
            for i in range(20)
            for f in ("Edema", "Atelectasis")
        ]
    )


ANALYSES = {
    "compute_agreement": lambda t: compute_agreement(t, "CR:Rep1"),
    "compute_prevalence": compute_prevalence,
    "compute_flows": lambda t: compute_flows(t, "CR:Rep1"),
    "compare_sources": lambda t: compare_sources(t, "CR:Rep1"),
    "fuse_labels": lambda t: fuse_labels(t, ["Rep1", "Rep2"], ["mv", "ds"], rng=0),
    "fuse_and_compare": lambda t: fuse_and_compare(
        t, ["Rep1", "Rep2"], ["mv", "or"], adjudicated="CR", rng=0
    ),
    "annotations_from_labels": lambda t: annotations_from_labels(t, ["Rep1", "Rep2"]),
}


def _tables(res) -> dict[str, pd.DataFrame]:
    return res.tables() if hasattr(res, "tables") else {"annotations": res[0]}


@pytest.mark.parametrize("name", sorted(ANALYSES))
def test_state_names_and_codes_give_the_same_result(name):
    names = _labels()
    by_name, by_code = _tables(ANALYSES[name](names)), _tables(ANALYSES[name](validate_label_table(names)))
    assert by_name.keys() == by_code.keys()
    for key in by_name:
        pd.testing.assert_frame_equal(by_name[key], by_code[key])


@pytest.mark.parametrize("name", sorted(ANALYSES))
def test_a_bad_table_names_the_row_column_and_value(name):
    bad = _labels()
    bad.loc[7, "state"] = "maybe"
    with pytest.raises(
        SchemaError, match=r"State 'maybe' outside the domain in label table, row 7, column 'state'"
    ):
        ANALYSES[name](bad)
    with pytest.raises(
        SchemaError,
        match=r"missing required column\(s\) \['source'\].*Column 'reader': did you mean "
        r"'source'",
    ):
        ANALYSES[name](_labels().rename(columns={"source": "reader"}))
    dup = pd.concat([_labels(), _labels().iloc[[3]]], ignore_index=True)
    with pytest.raises(
        SchemaError, match=r"Duplicate \(study_id, finding, source\) rows in label table: rows \[3, 120\]"
    ):
        ANALYSES[name](dup)
    with pytest.raises(
        CxrevalError, match="must be a (pandas )?DataFrame"
    ):  # a job takes a list of tables too
        ANALYSES[name]([1, 2, 3])


def test_fusion_with_state_names_fuses_what_it_would_from_codes():
    res = fuse_labels(_labels(), ["Rep1", "Rep2"], ["mv"], rng=0)
    assert str(res.labels["state"].dtype) == "Int8" and set(res.labels["source"]) == {"fused_mv"}
    assert res.fused_labels()["state"].isin(STATES).all()


@pytest.mark.parametrize("flows", [None, [1, 2], "flows.csv"])
def test_omissions_refuse_what_is_not_a_flows_table(flows):
    with pytest.raises(
        CxrevalError, match="'flows' parameter of compute_omissions must be a FlowsResult or a flows table"
    ):
        compute_omissions(flows)


def test_the_ranking_functions_take_one_type_each():
    from cxreval.exceptions import InvalidParameterError
    from cxreval.ranking import compare_rankings, compare_table_rankings

    table = pd.DataFrame(
        {
            "model": list("ABC") * 2,
            "finding": "Edema",
            "reference": ["R1"] * 3 + ["R2"] * 3,
            "auc": [0.9, 0.8, 0.7, 0.85, 0.7, 0.75],
        }
    )
    with pytest.raises(
        InvalidParameterError, match=r"compare_rankings must be an AUCResult.*compare_table_rankings"
    ):
        compare_rankings(table)
    with pytest.raises(
        InvalidParameterError,
        match=r"compare_table_rankings must be a point AUC table.*"
        r"compare_rankings\(auc",
    ):
        compare_table_rankings([1, 2])
    row = compare_table_rankings(table).table.query("method == 'SRCC'").iloc[0]
    assert row.statistic == pytest.approx(0.5)  # ranks (1, 2, 3) vs (1, 3, 2): 1 - 6 * 2 / 24
