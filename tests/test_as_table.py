"""``cxreval.results.as_table``: what loaders return, as the one table an analysis takes, nothing filled in."""

from __future__ import annotations

import pandas as pd
import pytest

from cxreval.exceptions import InvalidParameterError, SchemaError
from cxreval.results import ReadReport, ReadResult, as_table


def _labels(source: str) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "study_id": ["s1", "s2"],
            "patient_id": ["p1", "p2"],
            "finding": ["Edema", "Edema"],
            "source": [source, source],
            "state": [2, 0],
        }
    )


def test_a_read_result_and_a_list_give_the_table_and_the_rows_in_order():
    a, b = _labels("a"), _labels("b")
    read = ReadResult(table=a, report=ReadReport(source="labels.csv", n_read=2, n_kept=2))
    assert as_table(read, name="labels", func="f") is a
    both = as_table([read, b], name="labels", func="f")
    assert both["source"].tolist() == ["a", "a", "b", "b"] and both.index.tolist() == [0, 1, 2, 3]


@pytest.mark.parametrize("column, value", [("split", "test"), ("p_positive", 0.9)])
def test_a_column_outside_the_vocabulary_is_carried_blank_where_a_part_lacks_it(column, value):
    """A loader's ``split``; ``p_positive``, whose blank marks a hard reference beside a soft one."""
    both = as_table([_labels("a"), _labels("b").assign(**{column: value})], name="labels", func="f")
    assert both[column].isna().tolist() == [True, True, False, False]


def test_a_vocabulary_column_missing_from_one_part_is_refused_naming_it():
    with pytest.raises(SchemaError, match=r"labels part 1 \(of 2, from 0\) has no column 'patient_id'"):
        as_table([_labels("a"), _labels("b").drop(columns="patient_id")], name="labels", func="evaluate_auc")


@pytest.mark.parametrize("value", [[], "labels.csv", 3])
def test_anything_else_is_refused_naming_the_parameter(value):
    with pytest.raises(InvalidParameterError, match="evaluate_auc: labels must be a DataFrame"):
        as_table(value, name="labels", func="evaluate_auc")
