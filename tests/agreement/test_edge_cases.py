"""cxreval.agreement edge cases and bad input; the ``cxreval agree`` command."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pandas as pd
import pytest

from cxreval.agreement import agreement_scores, cohen_kappa, compute_agreement
from cxreval.agreement._omissions import FLOW_COLUMNS
from cxreval.agreement._pairs import pair_states, parse_pairs
from cxreval.agreement._prevalence import PREVALENCE_COLUMNS
from cxreval.agreement._scores import uncertainty_mapping
from cxreval.cli.main import main
from cxreval.exceptions import CxrevalError, InvalidParameterError, SchemaError, UndefinedMetricWarning
from cxreval.schema._result_columns import AGREEMENT_COLUMNS


def _labels():
    return pd.DataFrame(
        {
            "study_id": ["s1", "s2", "s3"] * 2,
            "patient_id": ["p1", "p1", "p2"] * 2,
            "finding": "Pleural Effusion",
            "source": ["CR"] * 3 + ["Rep1"] * 3,
            "state": ["positive", "negative", "uncertain", "positive", "not_mentioned", "negative"],
        }
    )


# --- bad input ---------------------------------------------------------------------------------------


def test_unknown_state_names_position_and_value():
    with pytest.raises(SchemaError, match=r"Unknown state 'maybe' at position 1 of 'states_b'"):
        agreement_scores(["positive", "negative"], ["positive", "maybe"])
    with pytest.raises(SchemaError, match=r"Unknown state 3 at position 0 of 'states_a'"):
        agreement_scores([3, 0], [0, 0])
    with pytest.raises(
        SchemaError, match=r"Value 5 at position 2 of 'y_b' in cohen_kappa is not one of the labels"
    ):
        cohen_kappa([0, 1, 2], [0, 1, 5])


def test_unknown_state_in_label_table_names_row():
    t = _labels()
    t.loc[4, "state"] = "probable"
    with pytest.raises(SchemaError, match=r"State 'probable' outside the domain .*row 4"):
        compute_agreement(t, "CR:Rep1")


def test_inconsistent_lengths_and_bad_options():
    with pytest.raises(
        InvalidParameterError, match="inconsistent numbers of samples: states_a=2, states_b=3"
    ):
        agreement_scores([0, 1], [0, 1, 2])
    with pytest.raises(InvalidParameterError, match="'weights' parameter of cohen_kappa must be one of"):
        cohen_kappa([0, 1], [0, 1], weights="cubic")
    with pytest.raises(InvalidParameterError, match="'not_mentioned' parameter of agreement_scores"):
        agreement_scores([0, 1], [0, 1], not_mentioned="zero")
    with pytest.raises(InvalidParameterError, match="'mapping' parameter of uncertainty_mapping"):
        uncertainty_mapping([0], [1], mapping="neutral")
    with pytest.raises(InvalidParameterError, match="at least 2 distinct categories"):
        cohen_kappa([0], [0], labels=(0, 0))


def test_pair_naming_absent_source():
    with pytest.raises(
        SchemaError,
        match=r"The pair 'CR:Rep9' names source 'Rep9', which is not in the label "
        r"table; sources present: \['CR', 'Rep1'\]",
    ):
        compute_agreement(_labels(), "CR:Rep9")


def test_sources_of_different_studies():
    t = _labels()
    t.loc[5, "study_id"] = "s9"
    with pytest.raises(
        SchemaError,
        match=r"Sources 'CR' and 'Rep1' label different studies: 1 only in 'CR' "
        r"\(e.g. \['s3'\]\), 1 only in 'Rep1' \(e.g. \['s9'\]\); 2 in common. "
        r"Pass studies='each'",
    ):
        compute_agreement(t, "CR:Rep1", studies="same")
    out = compute_agreement(t, "CR:Rep1", studies="each").table
    assert out.loc[0, "n"] == 2


def test_no_common_study_and_no_common_finding():
    t = _labels()
    t.loc[3:, "study_id"] = ["x1", "x2", "x3"]
    with pytest.raises(SchemaError, match="no study in common"):
        compute_agreement(t, "CR:Rep1", studies="each")
    t = _labels()
    t.loc[3:, "finding"] = "Edema"
    with pytest.raises(SchemaError, match="label no finding in common"):
        compute_agreement(t, "CR:Rep1")
    with pytest.raises(SchemaError, match=r"Source 'CR' has no labels for finding\(s\) \['Edema'\]"):
        compute_agreement(t, "CR:Rep1", findings=["Edema"])


def test_unknown_finding_and_finding_set():
    with pytest.raises(
        SchemaError, match="Unknown finding name 'Pleural Efusion' in the 'findings' parameter"
    ):
        compute_agreement(_labels(), "CR:Rep1", findings=["Pleural Efusion"])
    with pytest.raises(SchemaError, match=r"Finding set 'sel' names finding\(s\) \['Edema'\] not compared"):
        compute_agreement(_labels(), "CR:Rep1", finding_sets={"sel": ["Edema"]})


@pytest.mark.parametrize("bad", ["CR", "CR:CR", "CR:", ":Rep1", "", [("CR",)], [123]])
def test_bad_pairs(bad):
    with pytest.raises(InvalidParameterError, match="pair"):
        parse_pairs(bad)


def test_parse_pairs_forms():
    assert parse_pairs("A:B, C:D") == [("A", "B"), ("C", "D")]
    assert parse_pairs(("A", "B")) == [("A", "B")]
    assert parse_pairs(["A:B", ("C", "D")]) == [("A", "B"), ("C", "D")]


def test_not_a_dataframe():
    with pytest.raises(SchemaError, match="must be a pandas DataFrame"):
        compute_agreement([1, 2, 3], "A:B")


# --- degenerate data ---------------------------------------------------------------------------------


def test_all_missing_gives_nan_and_warns():
    with pytest.warns(UndefinedMetricWarning, match="undefined"):
        res = agreement_scores([None, None], ["positive", None])
    assert res.n == 0 and res.n_missing == 2
    assert all(np.isnan(getattr(res, k)) for k in ("kappa_w", "kappa_low", "kappa_high", "f1_w"))


def test_only_uncertain_pairs():
    # every pair (UNC, UNC): perfect agreement split over both classes under both mappings (default), or
    # under the optimistic one only (both_uncertain='disagree': pessimistic -> none)
    with pytest.warns(UndefinedMetricWarning, match="kappa_w undefined"):
        res = agreement_scores(["uncertain"] * 4, ["uncertain"] * 4)
    assert res.kappa_high == pytest.approx(1.0) and res.kappa_low == pytest.approx(1.0)
    assert res.f1_high == pytest.approx(1.0) and res.f1_low == pytest.approx(1.0)
    with pytest.warns(UndefinedMetricWarning, match="kappa_w undefined"):
        res = agreement_scores(["uncertain"] * 4, ["uncertain"] * 4, both_uncertain="disagree")
    assert res.kappa_high == pytest.approx(1.0)
    assert res.kappa_low == pytest.approx(-1.0)
    assert res.f1_high == pytest.approx(1.0) and res.f1_low == pytest.approx(0.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMetricWarning)
        assert np.isnan(agreement_scores(["uncertain"] * 4, ["uncertain"] * 4, weights=None).kappa_w)


def test_result_is_frozen_and_serialisable():
    res = agreement_scores([2, 0, 1], [2, 0, 0])
    with pytest.raises(AttributeError):
        res.kappa_w = 0.0  # type: ignore[misc]
    with pytest.raises(ValueError):
        res.confusion[0, 0] = 5
    d = res.to_dict()
    json.dumps(d)
    assert d["confusion"] == [[1, 0, 0], [1, 0, 0], [0, 0, 1]]


def test_pair_states_arrays_are_read_only():
    ps = pair_states(_labels(), "CR", "Rep1")
    assert not ps.states_a.flags.writeable
    assert ps.pair == "CR:Rep1"


# --- the command line --------------------------------------------------------------------------------


def test_cli_agree_writes_contract_tables(tmp_path, capsys):
    rng = np.random.default_rng(0)
    rows = []
    for i in range(30):
        for f in ("Atelectasis", "Consolidation", "Lung Opacity", "Pleural Effusion", "Edema"):
            base = int(rng.integers(0, 3))
            for s in ("CR", "Rep1", "Rep2"):
                v = base if rng.random() < 0.7 else int(rng.integers(-1 if s != "CR" else 0, 3))
                rows.append(
                    {
                        "study_id": f"s{i}",
                        "patient_id": f"p{i}",
                        "finding": f,
                        "source": s,
                        "state": {-1: "not_mentioned", 0: "negative", 1: "uncertain", 2: "positive"}[v],
                    }
                )
    path = tmp_path / "labels.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    out = tmp_path / "out"
    code = main(
        [
            "agree",
            "--labels",
            str(path),
            "--pairs",
            "CR:Rep1,CR:Rep2",
            "--out",
            str(out),
            "--finding-set",
            "selected=xqa_selected",
            "--finding-set",
            "five=xqa_selected,Edema",
            "--not-mentioned",
            "exclude",
            "--json",
        ]
    )
    assert code == 0
    printed = json.loads(capsys.readouterr().out)
    agr = pd.read_csv(out / "agreement.csv")
    assert tuple(agr.columns) == AGREEMENT_COLUMNS
    assert len(agr) == 2 * (5 + 4)
    assert set(agr.loc[agr.finding.isin(["macro", "micro"]), "finding_set"]) == {"selected", "five"}
    assert len(printed["agreement"]) == len(agr)
    assert tuple(pd.read_csv(out / "prevalence.csv").columns) == PREVALENCE_COLUMNS
    assert tuple(pd.read_csv(out / "flows.csv").columns) == FLOW_COLUMNS
    om = pd.read_csv(out / "omissions.csv")
    assert list(om.columns[:8]) == [
        "source_a",
        "source_b",
        "finding",
        "n",
        "pos_a_neg_b",
        "rate_a_not_b",
        "pos_b_neg_a",
        "rate_b_not_a",
    ]
    assert (out / "agreement.parquet").exists()
    summary = (out / "summary.md").read_text()
    assert "not_mentioned: exclude" in summary and "| CR:Rep1 | Atelectasis |" in summary
    # the library on the same file gives the same numbers
    lib = compute_agreement(
        pd.DataFrame(rows),
        "CR:Rep1,CR:Rep2",
        not_mentioned="exclude",
        finding_sets={"selected": "xqa_selected", "five": ["xqa_selected", "Edema"]},
    ).table
    np.testing.assert_allclose(agr["kappa_w"].to_numpy(), lib["kappa_w"].to_numpy(), equal_nan=True)
    np.testing.assert_allclose(agr["kappa_low"].to_numpy(), lib["kappa_low"].to_numpy(), equal_nan=True)
    assert "both-uncertain pairs: agree" in summary
    # --both-uncertain disagree: the earlier rule, through to the library option
    out2 = tmp_path / "out2"
    assert (
        main(
            [
                "agree",
                "--labels",
                str(path),
                "--pairs",
                "CR:Rep1,CR:Rep2",
                "--out",
                str(out2),
                "--not-mentioned",
                "exclude",
                "--both-uncertain",
                "disagree",
            ]
        )
        == 0
    )
    old = pd.read_csv(out2 / "agreement.csv")
    ref = compute_agreement(
        pd.DataFrame(rows), "CR:Rep1,CR:Rep2", not_mentioned="exclude", both_uncertain="disagree"
    ).table
    np.testing.assert_allclose(old["kappa_low"].to_numpy(), ref["kappa_low"].to_numpy(), equal_nan=True)
    default = compute_agreement(pd.DataFrame(rows), "CR:Rep1,CR:Rep2", not_mentioned="exclude").table
    assert not np.allclose(old["kappa_low"], default["kappa_low"])  # the data hold (UNC, UNC) pairs
    np.testing.assert_allclose(old["kappa_high"], default["kappa_high"])  # the optimistic mapping is the same
    assert "both-uncertain pairs: disagree" in (out2 / "summary.md").read_text()
    assert (
        main(
            [
                "agree",
                "--labels",
                str(path),
                "--pairs",
                "CR:Rep1",
                "--out",
                str(tmp_path / "o3"),
                "--both-uncertain",
                "maybe",
            ]
        )
        == 2
    )


def test_cli_agree_errors_exit_2(tmp_path, capsys):
    path = tmp_path / "labels.csv"
    _labels().to_csv(path, index=False)
    assert main(["agree", "--labels", str(path), "--pairs", "CR:Rep7", "--out", str(tmp_path / "o")]) == 2
    assert "names source 'Rep7'" in capsys.readouterr().err
    assert (
        main(
            [
                "agree",
                "--labels",
                str(path),
                "--pairs",
                "CR:Rep1",
                "--out",
                str(tmp_path / "o"),
                "--weights",
                "cubic",
            ]
        )
        == 2
    )
    assert (
        main(
            [
                "agree",
                "--labels",
                str(path),
                "--pairs",
                "CR:Rep1",
                "--out",
                str(tmp_path / "o"),
                "--finding-set",
                "oops",
            ]
        )
        == 2
    )
    assert "--finding-set must be NAME=F1,F2" in capsys.readouterr().err
    assert (
        main(
            [
                "agree",
                "--labels",
                str(tmp_path / "nope.csv"),
                "--pairs",
                "CR:Rep1",
                "--out",
                str(tmp_path / "o"),
            ]
        )
        == 2
    )


def test_errors_are_cxreval_errors():
    assert issubclass(SchemaError, CxrevalError) and issubclass(InvalidParameterError, CxrevalError)


def test_numeric_fast_path_and_shape_errors():
    a = np.array([0.0, 1.0, 2.0, np.nan, -1.0])
    b = np.array([0, 1, 2, 2, 0])
    res = agreement_scores(a, b)
    assert (res.n, res.n_missing) == (4, 1)
    assert (
        res.to_dict()
        == agreement_scores(
            ["negative", "uncertain", "positive", None, "not_mentioned"],
            ["negative", "uncertain", "positive", "positive", "negative"],
        ).to_dict()
    )
    with pytest.raises(
        InvalidParameterError, match="'states_a' parameter of agreement_scores must be 1-dimensional"
    ):
        agreement_scores(np.zeros((2, 2)), np.zeros((2, 2)))
    with pytest.raises(SchemaError, match=r"Unknown state 1.5 at position 0 of 'states_b'"):
        agreement_scores(np.array([0.0]), np.array([1.5]))
