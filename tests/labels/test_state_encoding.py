"""--state-encoding: numeric label states are read one declared way, the same from CSV and Parquet.

CheXpert-style 1/0/-1 are not cxreval's codes (read as cxreval codes, every positive would become uncertain):
without an encoding, ambiguous codes are refused naming both readings, from CSV and Parquet alike; with an
encoding, CSV and Parquet read identically; CheXpert-encoded long tables read with
'chexpert' give exactly the wide CheXpert reader's long table (property test).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cxreval.cli.main import main
from cxreval.exceptions import SchemaError
from cxreval.labels import read_labels, read_wide_labels
from cxreval.labels._files import read_label_tables
from cxreval.schema._states import decode_states

FINDINGS = ["Atelectasis", "Cardiomegaly", "Consolidation", "Edema", "Pleural Effusion"]


def _long(states, *, dtype=None):
    n = len(states)
    df = pd.DataFrame(
        {
            "study_id": [f"s{i}" for i in range(n)],
            "patient_id": [f"p{i}" for i in range(n)],
            "finding": "Edema",
            "source": "rad",
            "state": states,
        }
    )
    if dtype is not None:
        df["state"] = df["state"].astype(dtype)
    return df


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_ambiguous_numeric_states_are_refused_naming_both_readings(tmp_path, fmt):
    p = tmp_path / f"l.{fmt}"
    df = _long([1, 0, -1, 1])
    df.to_csv(p, index=False) if fmt == "csv" else df.to_parquet(p, index=False)
    with pytest.raises(SchemaError) as e:
        read_labels(p)
    msg = str(e.value)
    assert "can be read two ways" in msg and "1 = uncertain" in msg and "1 = positive" in msg
    assert "state_encoding=" in msg and str(p) in msg


@pytest.mark.parametrize("fmt", ["csv", "parquet", "parquet-Int8", "parquet-str"])
@pytest.mark.parametrize(
    "encoding, expected",
    [
        ("chexpert", [2, 0, 1, 2, -1]),  # 1 positive, 0 negative, -1 uncertain, blank not mentioned
        ("cxreval", [1, 0, -1, 1, None]),  # 1 uncertain, -1 not mentioned, blank missing
    ],
)
def test_csv_and_parquet_read_identically(tmp_path, fmt, encoding, expected):
    states = [1, 0, -1, 1, None]
    p = tmp_path / ("l.csv" if fmt == "csv" else "l.parquet")
    if fmt == "csv":
        _long(states).to_csv(p, index=False)
    elif fmt == "parquet":
        _long(states).to_parquet(p, index=False)  # float64 with NaN
    elif fmt == "parquet-Int8":
        _long(states, dtype="Int8").to_parquet(p, index=False)
    else:
        _long([None if s is None else str(s) for s in states]).to_parquet(p, index=False)
    got = read_labels(p, state_encoding=encoding).table["state"]
    assert [None if pd.isna(v) else int(v) for v in got] == expected


def test_binary_encoding_and_its_domain(tmp_path):
    p = tmp_path / "l.csv"
    _long([1, 0, 1]).to_csv(p, index=False)
    assert read_labels(p, state_encoding="binary").table["state"].tolist() == [2, 0, 2]
    _long([1, 0, -1]).to_csv(p, index=False)
    with pytest.raises(SchemaError, match=r"State '-1' outside the domain .* row 2.*state_encoding='binary'"):
        read_labels(p, state_encoding="binary")
    _long([2, 0]).to_csv(p, index=False)
    with pytest.raises(SchemaError, match=r"State '2' outside the domain .*chexpert"):
        read_labels(p, state_encoding="chexpert")


def test_names_read_the_same_under_every_encoding_and_0_2_codes_are_unambiguous(tmp_path):
    p = tmp_path / "l.csv"
    _long(["positive", "uncertain", "negative", "not_mentioned"]).to_csv(p, index=False)
    for enc in (None, "cxreval", "chexpert", "binary"):
        assert read_labels(p, state_encoding=enc).table["state"].tolist() == [2, 1, 0, -1]
    _long([2, 0, 0]).to_parquet(tmp_path / "l.parquet", index=False)  # only cxreval has a code 2
    assert read_labels(tmp_path / "l.parquet").table["state"].tolist() == [2, 0, 0]


def test_decode_states_rejects_unknown_text_and_encoding():
    with pytest.raises(SchemaError, match=r"State 'maybe' outside the domain in t, row 1"):
        decode_states(pd.Series(["positive", "maybe"]), where="t")
    from cxreval.exceptions import InvalidParameterError

    with pytest.raises(InvalidParameterError, match="state_encoding"):
        decode_states(pd.Series(["1"]), encoding="ones")


def _wide_and_long(tmp_path, cells, findings, n):
    """A wide CheXpert CSV and the same labels as a long table with CheXpert codes (blank = NaN)."""
    ids = [f"CheXpert-v1.0/valid/patient{i // 2:05d}/study{i % 2 + 1}/view1_frontal.jpg" for i in range(n)]
    wide = pd.DataFrame({"Path": ids})
    for j, f in enumerate(findings):
        wide[f] = [cells[i][j] for i in range(n)]
    wide_path = tmp_path / "wide.csv"
    wide.to_csv(wide_path, index=False)
    rows = [
        {
            "study_id": ids[i],
            "patient_id": f"patient{i // 2:05d}",
            "finding": f,
            "source": "rad",
            "state": cells[i][j],
        }
        for i in range(n)
        for j, f in enumerate(findings)
    ]
    return wide_path, pd.DataFrame(rows)


def _canon(t):
    cols = ["study_id", "patient_id", "finding", "source", "state"]
    out = t[cols].astype({"study_id": str, "patient_id": str, "finding": str, "source": str})
    return out.sort_values(["study_id", "finding"]).reset_index(drop=True)


_cell = st.sampled_from([1.0, 0.0, -1.0, None])


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    data=st.data(),
    n=st.integers(1, 6),
    k=st.integers(1, len(FINDINGS)),
    writer=st.sampled_from(
        ["csv", "csv-int-text", "parquet-float", "parquet-Int8", "parquet-text", "csv-shuffled"]
    ),
)
def test_chexpert_long_table_through_every_entry_point_equals_the_wide_reader(
    tmp_path_factory, data, n, k, writer
):
    tmp_path = tmp_path_factory.mktemp("enc")
    findings = FINDINGS[:k]
    cells = [[data.draw(_cell) for _ in findings] for _ in range(n)]
    wide_path, long = _wide_and_long(tmp_path, cells, findings, n)
    reference = _canon(read_wide_labels(wide_path, source="rad").table)

    if writer == "csv-shuffled":
        long = long.sample(frac=1.0, random_state=data.draw(st.integers(0, 99)))
    if writer.startswith("csv"):
        p = tmp_path / "long.csv"
        out = long.copy()
        if writer == "csv-int-text":  # '1' rather than '1.0', as a hand-written file has it
            out["state"] = out["state"].map(lambda v: "" if v is None or pd.isna(v) else str(int(v)))
        out.to_csv(p, index=False)
    else:
        p = tmp_path / "long.parquet"
        out = long.copy()
        if writer == "parquet-float":
            out["state"] = out["state"].astype(float)
        elif writer == "parquet-Int8":
            out["state"] = out["state"].astype(float).astype("Int8")
        else:
            out["state"] = out["state"].map(lambda v: None if v is None or pd.isna(v) else f"{int(v)}")
        out.to_parquet(p, index=False)

    lib = _canon(read_labels(p, state_encoding="chexpert").table)
    pd.testing.assert_frame_equal(lib, reference)
    cli, _ = read_label_tables([p], state_encoding="chexpert")  # what every command's --labels goes through
    pd.testing.assert_frame_equal(_canon(cli), reference)


def _chexpert_coded_labels(tmp_path):
    rng = np.random.default_rng(0)
    rows = []
    for i in range(30):
        for src in ("A", "B"):
            rows.append(
                {
                    "study_id": f"s{i}",
                    "patient_id": f"p{i}",
                    "finding": "Edema",
                    "source": src,
                    "state": int(rng.choice([1, 0, -1])),
                }
            )
    p = tmp_path / "labels.parquet"
    pd.DataFrame(rows).to_parquet(p, index=False)
    preds = pd.DataFrame(
        {"study_id": [f"s{i}" for i in range(30)], "model": "m", "finding": "Edema", "score": rng.random(30)}
    )
    pp = tmp_path / "preds.csv"
    preds.to_csv(pp, index=False)
    return p, pp


@pytest.mark.parametrize("command", ["classify", "rank", "agree", "fuse"])
def test_every_label_reading_command_refuses_ambiguity_and_takes_the_flag(tmp_path, capsys, command):
    lp, pp = _chexpert_coded_labels(tmp_path)
    args = {
        "classify": ["classify", "-p", str(pp), "-l", str(lp), "--n-resamples", "5"],
        "rank": ["rank", "-p", str(pp), "-l", str(lp), "--n-resamples", "5", "--min-models", "1"],
        "agree": ["agree", "-l", str(lp), "--pairs", "A:B"],
        "fuse": ["fuse", "-l", str(lp), "--readers", "A,B", "--methods", "mv", "--write-inputs"],
    }[command]
    assert main([*args, "-o", str(tmp_path / "o1")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "can be read two ways" in err[0]
    assert not (tmp_path / "o1").exists()
    assert main([*args, "-o", str(tmp_path / "o2"), "--state-encoding", "chexpert"]) == 0, (
        capsys.readouterr().err
    )
    if command == "fuse":  # CheXpert 1 is written back as positive, -1 as uncertain
        fused = pd.read_csv(tmp_path / "o2" / "fused_labels.csv")
        raw = pd.read_parquet(lp)
        a = fused[fused.source == "A"].set_index("study_id")["state"]
        want = (
            raw[raw.source == "A"]
            .set_index("study_id")["state"]
            .map({1: "positive", 0: "negative", -1: "uncertain"})
        )
        assert (a.sort_index() == want.sort_index()).all()
