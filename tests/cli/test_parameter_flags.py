"""Library errors name the library's parameters (``out=``, ``state_encoding=``, ``url=``); the command line
shows the same message with its own options, mapped in one place (:func:`cxreval.cli.main.user_message`)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pandas as pd
import pytest

from cxreval.cli.main import main, user_message
from cxreval.exceptions import InvalidParameterError, SchemaError
from cxreval.outputs._errors import OutputError

SRC = Path(__file__).resolve().parents[2] / "src" / "cxreval"


def _err_line(capsys: pytest.CaptureFixture[str]) -> str:
    cap = capsys.readouterr()
    lines = cap.err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in cap.err, cap.err
    return lines[0]


@pytest.mark.parametrize(
    "args, msg, shown",
    [
        (
            ["classify"],
            "out='/tmp/r' is a file; pass overwrite=True to replace it.",
            "--out /tmp/r is a file; pass --overwrite to replace it.",
        ),
        (["classify"], "out='/tmp/my results' is a file.", "--out '/tmp/my results' is a file."),
        (
            ["synth"],
            "pass synthetic=False (with real_boxes=) and out=.",
            "pass --no-synthetic (with --real-boxes) and --out.",
        ),
        (
            ["agree"],
            "Pass a state_encoding= (cxreval, chexpert or binary), or blank_state='missing'.",
            "Pass a --state-encoding (cxreval, chexpert or binary), or --blank-state missing.",
        ),
        (
            ["agree"],
            "Pass studies='each' to compare them on the studies both label.",
            "Pass --intersect to compare them on the studies both label.",
        ),
        (
            ["reader", "status"],
            "url='sqlite:///s.db?mode=ro&uri=true': the SQLite file s.db does not exist.",
            "--db sqlite:///s.db?mode=ro&uri=true: the SQLite file s.db does not exist.",
        ),
        (
            ["reader", "init"],
            "url='sqlite://': the reader study needs an SQLite file, not memory.",
            "--db sqlite://: the reader study needs an SQLite file, not memory.",
        ),  # not its --url (the links' base)
        (
            ["data", "split", "chestxray14"],
            "The 'rng' parameter of patient_split must be an int.",
            "--seed must be an int.",
        ),
        (
            ["classify"],
            "The 'n_resamples' parameter of evaluate_auc must be > 0.",
            "--n-resamples must be > 0.",
        ),
        (
            ["classify"],
            "ddof=1 and mode='fast' are not options of classify.",
            "ddof=1 and mode='fast' are not options of classify.",
        ),
        (["nosuchcommand"], "out='/tmp/r' is a file.", "out='/tmp/r' is a file."),
    ],
)
def test_parameters_become_the_commands_options(args, msg, shown):
    assert user_message(msg, args) == shown


# ---- end to end: the library's message, then the command's one line ------------------------------------


def _labels(d: Path, states: list[object]) -> Path:
    p = d / "labels.csv"
    pd.DataFrame(
        {
            "study_id": [f"s{i}" for i in range(len(states))] * 2,
            "patient_id": "p1",
            "finding": "Edema",
            "source": ["CR"] * len(states) + ["Rep1"] * len(states),
            "state": states * 2,
        }
    ).to_csv(p, index=False)
    return p


def test_out_is_named_as_out_by_the_library_and_as_the_flag_by_the_cli(tmp_path, capsys):
    from cxreval.outputs._folder import check_output_path

    f = tmp_path / "taken"
    f.write_text("x")
    with pytest.raises(OutputError, match=re.escape(f"out={str(f)!r} is a file")):
        check_output_path(f)
    labels = _labels(tmp_path, ["positive", "negative", "uncertain"])
    assert main(["agree", "-l", str(labels), "--pairs", "CR:Rep1", "-o", str(f)]) == 2
    assert _err_line(capsys).startswith(f"cxreval: error: --out {f} is a file; an output folder is expected.")


def test_state_encoding_is_named_as_the_flag_by_the_cli(tmp_path, capsys):
    from cxreval.labels import read_labels

    labels = _labels(tmp_path, [1, 0, -1])
    with pytest.raises(SchemaError, match=r"Pass a state_encoding= \(cxreval, chexpert or binary\)"):
        read_labels(labels)
    assert main(["agree", "-l", str(labels), "--pairs", "CR:Rep1", "-o", str(tmp_path / "o")]) == 2
    line = _err_line(capsys)
    assert "Pass a --state-encoding (cxreval, chexpert or binary), or write state names." in line, line
    assert "state_encoding=" not in line


def test_thresholds_is_named_as_the_flag_by_the_cli(tmp_path, capsys):
    from cxreval.report._thresholds import load_thresholds

    bad = tmp_path / "thresholds.json"
    bad.write_text("{not json")
    with pytest.raises(
        InvalidParameterError, match=re.escape(f"thresholds={str(bad)!r}: cannot read it as JSON")
    ):
        load_thresholds(bad)
    assert main(["report", str(tmp_path), "--thresholds", str(bad), "-o", str(tmp_path / "r.html")]) == 2
    assert _err_line(capsys).startswith(f"cxreval: error: --thresholds {bad}: cannot read it as JSON")


def test_db_is_named_as_the_flag_by_the_cli(tmp_path, capsys):
    pytest.importorskip("sqlalchemy")
    from cxreval.reader.db import make_engine

    with pytest.raises(
        InvalidParameterError, match=r"url='sqlite://': the reader study needs an SQLite file"
    ):
        make_engine("sqlite://")
    url = f"sqlite:///{tmp_path / 'none.db'}"
    assert main(["reader", "status", "--db", url]) == 2
    line = _err_line(capsys)
    assert line.startswith(f"cxreval: error: --db {url}: the SQLite file "), line


# ---- the library names no command-line option in its errors ---------------------------------------------


def _error_texts(tree: ast.AST) -> list[tuple[int, str]]:
    """(line, text) of every string inside a call of something named ``...Error``."""
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            f = node.func
            name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""
            if name.endswith("Error"):
                out += [
                    (c.lineno, c.value)
                    for c in ast.walk(node)
                    if isinstance(c, ast.Constant) and isinstance(c.value, str)
                ]
    return out


def test_library_errors_name_parameters_not_options():
    """Outside ``cli/`` an error names a parameter (``out=``), never an option (``--out``); a suggested command
    in backquotes (```cxreval data fetch --from-wheel PATH```) is a command to run, not an option."""
    bad = []
    for p in sorted(SRC.rglob("*.py")):
        if p.relative_to(SRC).parts[0] == "cli":
            continue
        for line, text in _error_texts(ast.parse(p.read_text(), str(p))):
            text = re.sub(r"`cxreval [^`]*`", "", text)
            bad += [f"{p.relative_to(SRC)}:{line}: {o}" for o in re.findall(r"(?<![\w-])--[a-z][\w-]*", text)]
    assert not bad, "\n".join(bad)
