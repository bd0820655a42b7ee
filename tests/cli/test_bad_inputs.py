"""A sweep of bad inputs over every command, as a new user would give them: files that are absent, folders,
empty, header-only, binary, truncated ``.gz`` or not UTF-8; a required column missing or a cell blank; option
values out of range or of the wrong type; an ``--out`` that is an input or a folder cxreval did not write.

Every case runs the command in process (``main(argv)``) on small inputs made in its own folder
(tests/cli/conftest.py) and checks the run contract:

* no traceback: the exit code is 0 or 2, never 1 ("internal error"); an exit 2 is one line
  ``cxreval: error: ...`` (or click's usage block for a malformed command line);
* nothing lost: every input file is byte for byte as before, whatever the exit code;
* nothing partial: a refused run leaves no ``--out`` and no hidden temporary folder or lock;
* no silent drop: the cases marked ``must_refuse`` (a missing required column, a blank id or state, an
  unreadable or empty table, a value out of range) exit 2.

:func:`test_sweep_size` keeps the sweep at 300 cases or more. The header of a label or prediction table is
checked before any of its data is read (tests/cli/test_table_headers.py).
"""

from __future__ import annotations

import gzip
import hashlib
from collections.abc import Callable
from pathlib import Path

import pandas as pd
import pytest

from cxreval.cli.main import _command_options, main

from ._bad_input_cases import HONEST_CASES, Case, _bare_cases, _out_cases
from .conftest import _replace, _table, command_args

ACCEPTED = {
    ("classify", "--n-resamples", "0"),
    ("rank", "--n-resamples", "0"),
    ("rank", "--min-models", "0"),
    ("rank", "--min-models", "-1"),
}
"""Option values that are valid (0 replicates: point estimates only; a --min-models below 2 skips no group)."""


# ----------------------------------------------------------------------------------------- table mutations
def _absent(name: str):
    def m(args, d):
        _table(args, name).unlink()
        return args

    return m


def _folder(name: str):
    def m(args, d):
        t = _table(args, name)
        t.unlink()
        t.mkdir()
        return args

    return m


def _content(name: str, data: bytes | Callable[[bytes], bytes]):
    def m(args, d):
        t = _table(args, name)
        t.write_bytes(data(t.read_bytes()) if callable(data) else data)
        return args

    return m


def _header_only(raw: bytes) -> bytes:
    return raw.splitlines(keepends=True)[0]


def _truncated_gz(name: str):
    def m(args, d):
        t = _table(args, name)
        z = t.with_name(t.name + ".gz")
        data = gzip.compress(t.read_bytes() * 50)
        z.write_bytes(data[: len(data) // 2])
        t.unlink()
        return _replace(args, t, z)

    return m


def _frame_edit(name: str, edit: Callable[[pd.DataFrame], pd.DataFrame]):
    def m(args, d):
        t = _table(args, name)
        df = pd.read_csv(t, dtype=str, keep_default_na=False)
        edit(df).to_csv(t, index=False)
        return args

    return m


def _drop(column: str):
    return lambda df: df.drop(columns=[column])


def _blank(column: str, row: int = 1):
    def e(df):
        df.loc[row, column] = ""
        return df

    return e


def _set(column: str, value: str, row: int = 2):
    def e(df):
        df.loc[row, column] = value
        return df

    return e


def _duplicate_row(df):
    return pd.concat([df, df.iloc[[0]]], ignore_index=True)


TABLES = {  # command -> {table file: (its required columns, the columns whose blank cell must be refused)}
    # (a blank patient_id on one row of a study whose other rows name its patient is read from those rows)
    "classify": {
        "preds.csv": (("study_id", "model", "finding", "score"), ("study_id", "model", "finding", "score")),
        "labels.csv": (
            ("study_id", "patient_id", "finding", "source", "state"),
            ("study_id", "finding", "source", "state"),
        ),
    },
    "rank": {
        "preds.csv": (("study_id", "model", "finding", "score"), ("study_id", "model", "finding", "score")),
        "labels.csv": (
            ("study_id", "patient_id", "finding", "source", "state"),
            ("study_id", "finding", "source", "state"),
        ),
    },
    "agree": {
        "labels.csv": (("study_id", "finding", "source", "state"), ("study_id", "finding", "source", "state"))
    },
    "fuse": {
        "labels.csv": (("study_id", "finding", "source", "state"), ("study_id", "finding", "source", "state"))
    },
    "localize": {"bbox.csv": ((), ())},
    "iqa-score": {"pairs.csv": (("reference", "test"), ())},
    "iqa-agree": {
        "scores.csv": (("reference", "test", "metric", "value"), ()),
        "ratings.csv": (("image", "rater", "rating"), ()),
    },
    "iqa-compare": {"scores.csv": (("test", "metric", "value", "degradation"), ())},
    "data-split": {
        "de.csv": (
            ("Image Index", "Finding Labels", "Patient ID", "View Position"),
            ("Image Index", "Finding Labels", "Patient ID"),
        )
    },
    "data-audit": {
        "de.csv": (
            ("Image Index", "Finding Labels", "Patient ID", "View Position"),
            ("Image Index", "Finding Labels", "Patient ID"),
        ),
        "bbox.csv": ((), ()),
    },
    "data-export": {
        "de.csv": (
            ("Image Index", "Finding Labels", "Patient ID", "View Position"),
            ("Image Index", "Finding Labels", "Patient ID"),
        )
    },
    "label-reports": {"reports.csv": (("study_id",), ("study_id",))},
}
COLUMNS = {
    "preds.csv": ("study_id", "model", "finding", "score"),
    "labels.csv": ("study_id", "patient_id", "finding", "source", "state"),
    "pairs.csv": ("reference", "test"),
    "ratings.csv": ("image", "rater", "rating"),
    "de.csv": (
        "Image Index",
        "Finding Labels",
        "Follow-up #",
        "Patient ID",
        "Patient Age",
        "Patient Gender",
        "View Position",
    ),
    "reports.csv": ("study_id", "findings", "impression"),
}
SCORES_COLUMNS = {
    "iqa-agree": ("reference", "test", "metric", "value"),
    "iqa-compare": ("test", "degradation", "metric", "value"),
}
GZ_READERS = {
    "preds.csv",
    "labels.csv",
    "de.csv",
    "bbox.csv",
    "scores.csv",
    "ratings.csv",
    "reports.csv",
    "pairs.csv",
}


def _table_cases() -> list[Case]:
    cases = []
    for cmd, tables in TABLES.items():
        for name, (required, no_blank) in tables.items():
            k = f"{cmd}-{name}"
            cases += [
                Case(f"{k}-absent", cmd, _absent(name)),
                Case(f"{k}-folder", cmd, _folder(name)),
                Case(f"{k}-empty-file", cmd, _content(name, b"")),
                Case(f"{k}-header-only", cmd, _content(name, _header_only)),
                Case(f"{k}-binary", cmd, _content(name, bytes(range(256)) * 8)),
                Case(
                    f"{k}-not-utf8",
                    cmd,
                    _content(name, lambda raw: raw + b"\xff\xfe\xfa,\xc3\x28\n"),
                    must_refuse=False,
                ),
            ]
            if name in GZ_READERS:
                cases.append(Case(f"{k}-truncated-gz", cmd, _truncated_gz(name)))
            cols = COLUMNS.get(name) or SCORES_COLUMNS.get(cmd) or ()
            for c in cols:
                slug = c.replace(" ", "_").replace("#", "n").lower()
                cases.append(
                    Case(f"{k}-no-{slug}", cmd, _frame_edit(name, _drop(c)), must_refuse=c in required)
                )
                cases.append(
                    Case(f"{k}-blank-{slug}", cmd, _frame_edit(name, _blank(c)), must_refuse=c in no_blank)
                )
            if name in ("preds.csv", "labels.csv"):
                cases.append(Case(f"{k}-duplicate-row", cmd, _frame_edit(name, _duplicate_row)))
                cases.append(
                    Case(f"{k}-unknown-finding", cmd, _frame_edit(name, _set("finding", "Dragon scales")))
                )
            if name == "labels.csv":
                cases += [
                    Case(f"{k}-state-outside", cmd, _frame_edit(name, _set("state", "maybe"))),
                    Case(
                        f"{k}-state-numeric-ambiguous",
                        cmd,
                        _frame_edit(name, lambda df: df.assign(state="1")),
                    ),
                    Case(
                        f"{k}-renamed-source",
                        cmd,
                        _frame_edit(name, lambda df: df.rename(columns={"source": "reader"})),
                    ),
                ]
            if name == "preds.csv":
                cases += [
                    Case(f"{k}-score-text", cmd, _frame_edit(name, _set("score", "high"))),
                    Case(f"{k}-score-nan", cmd, _frame_edit(name, _set("score", "nan"))),
                    Case(f"{k}-score-inf", cmd, _frame_edit(name, _set("score", "inf"))),
                ]
    return cases


# --------------------------------------------------------------------------------------------- options
OPTION_VALUES: dict[str, list[tuple[str, ...]]] = {
    "classify": [
        ("--n-resamples", "0"),
        ("--n-resamples", "-5"),
        ("--n-resamples", "many"),
        ("--n-resamples", "1000000000000"),
        ("--confidence-level", "0"),
        ("--confidence-level", "1"),
        ("--confidence-level", "1.5"),
        ("--confidence-level", "nan"),
        ("--findings", "Dragon"),
        ("--references", "NoSuchSource"),
        ("--executor", "bogus"),
        ("--executor", "process:0"),
        ("--executor", "process:-2"),
        ("--executor", "dask://"),
        ("--state-encoding", "bogus"),
        ("--blank-state", "bogus"),
        ("--policy", "bogus"),
        ("--not-mentioned", "bogus"),
        ("--unlabeled", "bogus"),
        ("--model-groups", "/nonexistent/groups.csv"),
    ],
    "rank": [
        ("--n-resamples", "0"),
        ("--confidence-level", "2"),
        ("--min-models", "0"),
        ("--min-models", "-1"),
        ("--findings", "Dragon"),
        ("--executor", "bogus"),
        ("--policy", "bogus"),
        ("--state-encoding", "x"),
        ("--blank-state", "x"),
        ("--pairs", "CR"),
        ("--auc-table", "/nonexistent/auc.csv"),
    ],
    "agree": [
        ("--pairs", "CR:Nobody"),
        ("--pairs", "CR"),
        ("--pairs", ":"),
        ("--findings", "Dragon"),
        ("--not-mentioned", "bogus"),
        ("--weights", "bogus"),
        ("--state-encoding", "bogus"),
        ("--blank-state", "bogus"),
        ("--finding-set", "bogus"),
    ],
    "fuse": [
        ("--methods", "bogus"),
        ("--readers", "Nobody"),
        ("--adjudicated", "Nobody"),
        ("--findings", "Dragon"),
        ("--executor", "bogus"),
        ("--not-mentioned", "bogus"),
        ("--labels-format", "bogus"),
        ("--load-model", "/nonexistent/model.json"),
        ("--state-encoding", "bogus"),
        ("--blank-state", "bogus"),
    ],
    "localize": [
        ("-t", "2"),
        ("-t", "0"),
        ("-t", "-0.5"),
        ("-t", "x"),
        ("-t", "1/0"),
        ("--image-size", "-8"),
        ("--image-size", "0"),
        ("--t-iou", "0.5", "--t-iou", "0.3"),
        ("--t-iou", "3"),
        ("--threshold", "300"),
        ("--threshold", "-1"),
        ("--connectivity", "5"),
        ("--rule", "bogus"),
        ("--upsampling", "bogus"),
        ("--afp-denominator", "bogus"),
        ("--missing-maps", "bogus"),
        ("--executor", "bogus"),
    ],
    "synth": [
        ("--per-size", "0"),
        ("--per-size", "-1"),
        ("--per-size", "x"),
        ("--real-boxes", "/nonexistent.csv"),
    ],
    "iqa-degrade": [("--images", "/nonexistent/imgs"), ("--plan", "/nonexistent/plan.yaml")],
    "iqa-score": [("--metrics", "bogus"), ("--metrics", ""), ("--executor", "bogus")],
    "iqa-agree": [
        ("--n-resamples", "0"),
        ("--confidence-level", "1"),
        ("--scale-min", "5"),
        ("--scale-min", "nan"),
        ("--unscored", "bogus"),
    ],
    "data-split": [
        ("--fractions", "0.5,0.6"),
        ("--fractions", "a,b"),
        ("--fractions", "-0.5,1.5"),
        ("--by", "bogus"),
        ("--stratify", "Dragon"),
        ("--names", "a"),
        ("--names", "a,a"),
    ],
    "data-audit": [("--split-dir", "/nonexistent/splits"), ("--bbox-list", "/nonexistent/bbox.csv")],
    "data-export": [("--path", "/nonexistent/de.csv")],
    "label-reports": [
        ("--sections", "bogus"),
        ("--vocabulary", "bogus"),
        ("--rules", "/nonexistent/rules.yaml"),
        ("--validate-against", "/nonexistent/labels.csv"),
        ("--chunk-size", "0"),
        ("--uncertain", "bogus"),
        ("--executor", "bogus"),
        ("--findings", "Effusion"),
    ],
    "reader-export": [("--db", "sqlite:////nonexistent/dir/study.db")],
    "demo": [("--section", "bogus"), ("--n-resamples", "0")],
}


def _option_cases() -> list[Case]:
    return [
        Case(
            f"{cmd}-{'-'.join(v.lstrip('-') if v.startswith('--') else (v or 'blank') for v in vals)}",
            cmd,
            extra=vals,
            must_refuse=(cmd, *vals) not in ACCEPTED,
        )
        for cmd, values in OPTION_VALUES.items()
        for vals in values
    ]


CASES = [*_table_cases(), *_option_cases(), *_out_cases(), *_bare_cases(), *HONEST_CASES]


def test_sweep_size() -> None:
    assert len(CASES) >= 300, len(CASES)
    assert len({c.id for c in CASES}) == len(CASES)


def _digest(folder: Path) -> dict[str, str]:
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def _dirs(folder: Path) -> set[str]:
    return {str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_dir()}


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_bad_input(case: Case, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    d = tmp_path / "in"
    if case.args:
        d.mkdir()
        (d / "bad.yaml").write_text("findings: [Effusion\n  images: : :\n")
        argv = [a.replace("{d}", str(d)) for a in case.args]
        out = None
    else:
        args = command_args(case.command, d)
        if case.mutate is not None:
            args = case.mutate(args, d)
        known = _command_options(args)
        flags = [o for o in case.extra if o.startswith("--") or o == "-t"]
        assert all(o in known for o in flags), (case.extra, known)
        argv = [*args, *case.extra]
        out = None
        if "-o" not in argv:
            out = tmp_path / "out"
            argv += ["-o", str(out)]
    before, dirs = _digest(d), _dirs(d)
    capsys.readouterr()
    rc = main(argv)
    cap = capsys.readouterr()
    err = [ln for ln in cap.err.splitlines() if ln.strip() and not ln.startswith("cxreval: warning:")]
    assert rc in (0, 2), (rc, cap.err)
    assert not any("Traceback" in ln or "internal error" in ln for ln in err), cap.err
    assert _digest(d) == before, "an input changed or disappeared"
    if rc == 2:
        if err and err[0].startswith("cxreval: error: "):
            assert len(err) == 1, err
        else:  # click's usage error: Usage / Try / Error
            assert any(ln.startswith("Error: ") for ln in err), err
        if out is not None:
            assert not out.exists()
            assert not [p.name for p in out.parent.iterdir() if p.name.startswith(f".{out.name}.")]
        assert _dirs(d) <= dirs | {"thesis"}, "a refused run left a folder behind"
    if case.must_refuse:
        assert rc == 2, f"accepted: {case.id} (stdout {cap.out[-300:]!r})"
    if case.says:
        assert case.says in err[0], err
    if case.must_accept or case.warns:
        assert rc == 0, cap.err
    if case.warns:
        warned = [ln for ln in cap.err.splitlines() if ln.startswith("cxreval: warning:")]
        assert any(case.warns in ln for ln in warned), cap.err
        out_dir = Path(argv[argv.index("-o") + 1])
        assert case.warns in (out_dir / "summary.md").read_text()
