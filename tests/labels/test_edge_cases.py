"""Bad input to cxreval.labels: every message names the file, the row/column and the value."""

from __future__ import annotations

import re

import pandas as pd
import pytest

from cxreval.exceptions import CxrevalError, InvalidParameterError, SchemaError
from cxreval.labels import (
    read_labels,
    read_predictions,
    read_wide_labels,
    validate_label_table,
    validate_predictions,
)
from cxreval.labels._long import label_matrix, validate_model_groups
from cxreval.labels._wide import to_wide
from cxreval.schema import binarize
from cxreval.schema._states import parse_states

HEADER = "study_id,patient_id,finding,source,state\n"


def _write(tmp_path, text, name="labels.csv"):
    p = tmp_path / name
    p.write_text(text)
    return p


def test_unknown_finding_name_in_long_csv(tmp_path):
    p = _write(tmp_path, HEADER + "s1,p1,Effusion,CR,positive\ns2,p1,Cardiomeagly,CR,negative\n")
    msg = (
        rf"Unknown finding name 'Cardiomeagly' in file '{re.escape(str(p))}', row 1, column 'finding'.*"
        r"Did you mean 'Cardiomegaly'"
    )
    with pytest.raises(SchemaError, match=msg):
        read_labels(p)


def test_unknown_finding_column_in_wide_csv_given_explicitly(tmp_path):
    p = _write(tmp_path, "Study,Edema,Foo\nstudy/patient1/s1,1.0,0.0\n", "wide.csv")
    with pytest.raises(
        SchemaError, match=rf"Unknown finding name 'Foo' in file '{re.escape(str(p))}', column 'Foo'"
    ):
        read_wide_labels(p, source="x", findings=["Edema", "Foo"])


def test_missing_finding_name(tmp_path):
    p = _write(tmp_path, HEADER + "s1,p1,,CR,positive\n")
    with pytest.raises(
        SchemaError,
        match=rf"Missing finding name in file '{re.escape(str(p))}', row 0, "
        r"column 'finding'",
    ):
        read_labels(p)


def test_state_outside_domain_in_long_csv(tmp_path):
    p = _write(tmp_path, HEADER + "s1,p1,Edema,CR,positive\ns2,p2,Edema,CR,probable\n")
    with pytest.raises(
        SchemaError,
        match=rf"State 'probable' outside the domain in file '{re.escape(str(p))}', "
        r"row 1, column 'state'; expected one of \['negative'",
    ):
        read_labels(p)


def test_state_outside_domain_in_wide_csv(tmp_path):
    p = _write(tmp_path, "Study,Edema,Cardiomegaly\nx/patient1/s1,1.0,0.0\nx/patient2/s1,0.0,2\n", "wide.csv")
    with pytest.raises(
        SchemaError,
        match=rf"State '2' outside the domain in file '{re.escape(str(p))}', row 1, "
        r"column 'Cardiomegaly'; expected 1, 0, -1 or blank",
    ):
        read_wide_labels(p, source="x")


@pytest.mark.parametrize("value", [3, 0.5, "yes", True])
def test_state_outside_domain_in_frame(value):
    df = pd.DataFrame(
        {
            "study_id": ["a"],
            "patient_id": ["p"],
            "finding": ["Edema"],
            "source": ["s"],
            "state": pd.Series([value], dtype=object),
        }
    )
    with pytest.raises(
        SchemaError,
        match=rf"State {re.escape(repr(value))} outside the domain in label table, "
        r"row 0, column 'state'",
    ):
        validate_label_table(df)


def test_out_of_range_int8_code():
    df = pd.DataFrame(
        {
            "study_id": ["a", "b"],
            "patient_id": ["p", "p"],
            "finding": ["Edema"] * 2,
            "source": ["s"] * 2,
            "state": pd.array([2, 5], dtype="Int8"),
        }
    )
    with pytest.raises(
        SchemaError, match=r"State 5 outside the domain in label table, row 1, column 'state'"
    ):
        validate_label_table(df)


def test_duplicate_study_finding_source_rows(tmp_path):
    p = _write(
        tmp_path, HEADER + "s1,p1,Edema,CR,positive\ns1,p1,Effusion,CR,negative\ns1,p1,edema,CR,negative\n"
    )
    msg = (
        rf"Duplicate \(study_id, finding, source\) rows in file '{re.escape(str(p))}': rows \[0, 2\] repeat "
        r"\('s1', 'Edema', 'CR'\)"
    )
    with pytest.raises(SchemaError, match=msg):
        read_labels(p)


def test_same_study_finding_in_two_sources_is_fine(tmp_path):
    p = _write(tmp_path, HEADER + "s1,p1,Edema,CR,positive\ns1,p1,Edema,Rep1,negative\n")
    assert len(read_labels(p).table) == 2


def test_duplicate_study_in_wide_csv(tmp_path):
    p = _write(tmp_path, "Study,Edema\nx/patient1/s1,1.0\nx/patient1/s1,0.0\n", "wide.csv")
    with pytest.raises(
        SchemaError,
        match=rf"Duplicate study id 'x/patient1/s1' in file '{re.escape(str(p))}', "
        r"column 'Study'",
    ):
        read_wide_labels(p, source="x")


def test_missing_patient_id_in_long_csv(tmp_path):
    p = _write(tmp_path, HEADER + "s1,p1,Edema,CR,positive\ns2,,Edema,CR,negative\n")
    with pytest.raises(
        SchemaError,
        match=rf"Missing patient id in file '{re.escape(str(p))}', row 1, column "
        r"'patient_id' \(study 's2', value nan\)",
    ):
        read_labels(p)
    # allowed when patient ids are not required
    t = read_labels(p, require_patient=False).table
    assert t["patient_id"].isna().tolist() == [False, True]


def test_blank_patient_id_in_frame_is_missing():
    df = pd.DataFrame(
        {
            "study_id": ["a"],
            "patient_id": ["  "],
            "finding": ["Edema"],
            "source": ["s"],
            "state": ["positive"],
        }
    )
    with pytest.raises(
        SchemaError,
        match=r"Missing patient id in label table, row 0, column 'patient_id' "
        r"\(study 'a', value '  '\)",
    ):
        validate_label_table(df)


def test_missing_patient_id_in_wide_csv(tmp_path):
    p = _write(tmp_path, "Study,Edema\nx/patient1/s1,1.0\nx/unknown/s1,0.0\n", "wide.csv")
    with pytest.raises(
        SchemaError,
        match=rf"Missing patient id in file '{re.escape(str(p))}', row 1, column "
        r"'Study': 'x/unknown/s1' has no patient id",
    ):
        read_wide_labels(p, source="x")
    t = read_wide_labels(p, source="x", require_patient=False).table
    assert t["patient_id"].isna().sum() == 1


def test_missing_patient_column_when_required():
    df = pd.DataFrame({"study_id": ["a"], "finding": ["Edema"], "source": ["s"], "state": ["positive"]})
    with pytest.raises(SchemaError, match=r"label table is missing required column\(s\) \['patient_id'\]"):
        validate_label_table(df)
    assert validate_label_table(df, require_patient=False)["patient_id"].isna().all()


def test_study_with_two_patients():
    df = pd.DataFrame(
        {
            "study_id": ["a", "a"],
            "patient_id": ["p1", "p2"],
            "finding": ["Edema", "Effusion"],
            "source": ["s", "s"],
            "state": ["positive", "negative"],
        }
    )
    with pytest.raises(
        SchemaError, match=r"Study 'a' in label table has more than one patient id \['p1', 'p2'\]"
    ):
        validate_label_table(df)


def test_missing_study_id(tmp_path):
    p = _write(tmp_path, HEADER + ",p1,Edema,CR,positive\n")
    with pytest.raises(
        SchemaError,
        match=rf"Missing study id in file '{re.escape(str(p))}', row 0, "
        r"column 'study_id'",
    ):
        read_labels(p)


def test_missing_file_and_unreadable_parquet(tmp_path):
    with pytest.raises(SchemaError, match=r"File '.*nope.csv' does not exist"):
        read_labels(tmp_path / "nope.csv")
    bad = _write(tmp_path, "not parquet", "x.parquet")
    with pytest.raises(SchemaError, match=r"Could not read '.*x.parquet' as Parquet"):
        read_labels(bad)


def test_not_a_dataframe():
    with pytest.raises(SchemaError, match=r"label table must be a pandas DataFrame .* Got list instead"):
        validate_label_table([1, 2])  # type: ignore[arg-type]
    with pytest.raises(SchemaError, match=r"prediction table must be a pandas DataFrame .* Got dict instead"):
        validate_predictions({})  # type: ignore[arg-type]


def test_wide_csv_without_finding_columns(tmp_path):
    p = _write(tmp_path, "Study,Age\nx/patient1/s1,3\n", "wide.csv")
    with pytest.raises(SchemaError, match=r"has no finding columns; columns are \['Study', 'Age'\]"):
        read_wide_labels(p, source="x")


def test_wide_csv_missing_id_column(tmp_path):
    p = _write(tmp_path, "Edema\n1.0\n", "wide.csv")
    with pytest.raises(SchemaError, match=r"is missing required column\(s\) \['Path'\]"):
        read_wide_labels(p, source="x")


def test_predictions_bad_score_and_duplicates(tmp_path):
    p = _write(tmp_path, "study_id,model,finding,score\na,m,Edema,0.2\nb,m,Edema,high\n", "p.csv")
    with pytest.raises(
        SchemaError,
        match=rf"Non-finite or non-numeric score 'high' in file '{re.escape(str(p))}', "
        r"row 1, column 'score' \(study 'b', model 'm'\)",
    ):
        read_predictions(p)
    p = _write(tmp_path, "study_id,model,finding,score\na,m,Edema,0.2\na,m,edema,0.3\n", "p.csv")
    with pytest.raises(SchemaError, match=r"Duplicate \(study_id, model, finding\) rows .* rows \[0, 1\]"):
        read_predictions(p)


def test_model_groups():
    with pytest.raises(SchemaError, match=r"Model 'm' appears more than once in model group table"):
        validate_model_groups(pd.DataFrame({"model": ["m", "m"], "group": ["a", "b"]}))


def test_binarize_bad_policy_and_state():
    with pytest.raises(
        InvalidParameterError,
        match=r"The 'policy' parameter of binarize must be one of "
        r"\['exclude', 'zeros', 'ones'\]. Got 'pessimistic' instead",
    ):
        binarize(["positive"], policy="pessimistic")
    with pytest.raises(SchemaError, match=r"State 'maybe' outside the domain"):
        binarize(["maybe"])
    with pytest.raises(SchemaError, match=r"State 7 outside the domain in label table, row 1"):
        parse_states([1, 7])


def test_label_matrix_unknown_source_and_to_wide_needs_one_source():
    t = validate_label_table(
        pd.DataFrame(
            {
                "study_id": ["a", "a"],
                "patient_id": ["p", "p"],
                "finding": ["Edema"] * 2,
                "source": ["s1", "s2"],
                "state": ["positive", "negative"],
            }
        )
    )
    with pytest.raises(
        SchemaError, match=r"Source 'zz' is not in the label table; sources present: \['s1', 's2'\]"
    ):
        label_matrix(t, source="zz")
    with pytest.raises(SchemaError, match=r"to_wide needs one source; the table has \['s1', 's2'\]"):
        to_wide(t)
    assert to_wide(t, source="s1")["Edema"].tolist() == [1.0]


def test_errors_are_cxreval_errors():
    assert issubclass(SchemaError, CxrevalError) and issubclass(SchemaError, ValueError)
