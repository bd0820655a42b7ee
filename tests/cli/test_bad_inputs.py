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
checked before any of its data is read (:func:`test_header_is_checked_before_any_data_block`).
"""

from __future__ import annotations

import gzip
import hashlib
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd
import pytest

from cxreval.cli.main import _command_options, main

from .conftest import command_args


@dataclass(frozen=True)
class Case:
    id: str
    command: str  # a name of tests/cli/conftest.py's command_args, or a bare command line (args)
    mutate: Callable[[list[str], Path], list[str]] | None = (
        None  # (args, folder) -> new args (may edit files)
    )
    extra: tuple[str, ...] = ()
    must_refuse: bool = True
    args: tuple[str, ...] = field(default=())  # a command line of its own (no command_args)
    says: str = ""  # a refusal's one line contains this (the option or value at fault)
    must_accept: bool = False  # a valid input that must run (exit 0)
    warns: str = ""  # a legitimate empty result: exit 0, this warning on stderr and in summary.md


ACCEPTED = {
    ("classify", "--n-resamples", "0"),
    ("rank", "--n-resamples", "0"),
    ("rank", "--min-models", "0"),
    ("rank", "--min-models", "-1"),
}
"""Option values that are valid (0 replicates: point estimates only; a --min-models below 2 skips no group)."""


# ----------------------------------------------------------------------------------------- table mutations
def _table(args: list[str], name: str) -> Path:
    return next(Path(a) for a in args if Path(a).name == name)


def _replace(args: list[str], old: Path, new: Path | str) -> list[str]:
    return [str(new) if a == str(old) else a for a in args]


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


# ----------------------------------------------------------------------------------------------- --out
def _out_input_file(args, d):
    table = next((a for a in args if Path(a).is_file()), None)
    return [*args, "-o", table] if table else [*args, "-o", str(d)]


def _out_cases() -> list[Case]:
    from .conftest import WRITING_COMMANDS

    cases = []
    for cmd in WRITING_COMMANDS:
        if cmd == "predict":
            continue  # its small run needs torch (its --out cases: tests/cli/test_run_matrix.py)
        if cmd not in ("synth", "demo"):  # (these two read no input file)
            cases += [
                Case(f"{cmd}-out-is-an-input-file", cmd, _out_input_file),
                Case(f"{cmd}-out-is-the-input-folder", cmd, lambda a, d: [*a, "-o", str(d), "--overwrite"]),
            ]
        cases += [
            Case(f"{cmd}-out-is-a-user-folder", cmd, _user_folder_out),
            Case(f"{cmd}-out-under-a-file", cmd, _under_file_out),
        ]
    return cases


def _user_folder_out(args, d):
    user = d / "thesis"
    user.mkdir()
    (user / "notes.txt").write_text("mine")
    return [*args, "-o", str(user), "--overwrite"]


def _under_file_out(args, d):
    (d / "a-file").write_text("x")
    return [*args, "-o", str(d / "a-file" / "res")]


# ------------------------------------------------------------------------------ commands with bad arguments
BARE = [
    ("predict-unknown-kind", ("predict", "--images", "{d}", "--model", "keras:foo")),
    ("predict-no-kind", ("predict", "--images", "{d}", "--model", "foo")),
    ("predict-unknown-xrv", ("predict", "--images", "{d}", "--model", "xrv:nonsense")),
    ("predict-absent-images", ("predict", "--images", "{d}/none", "--model", "xrv:nonsense")),
    ("report-absent-folder", ("report", "{d}/none", "-o", "{d}/r.html")),
    ("report-empty-folder", ("report", "{d}", "-o", "{d}/r.html")),
    (
        "reader-init-absent-study",
        ("reader", "init", "--study", "{d}/none.yaml", "--db", "sqlite:///{d}/s.db"),
    ),
    ("reader-init-bad-yaml", ("reader", "init", "--study", "{d}/bad.yaml", "--db", "sqlite:///{d}/s.db")),
    ("reader-status-absent-db", ("reader", "status", "--db", "sqlite:///{d}/none/s.db")),
    ("data-audit-unknown-dataset", ("data", "audit", "nosuchdataset")),
    ("data-split-unknown-dataset", ("data", "split", "nosuchdataset", "-o", "{d}/o")),
    ("data-export-unknown-dataset", ("data", "export", "nosuchdataset", "-o", "{d}/o")),
    ("iqa-list-bad-reference", ("iqa", "list", "--reference", "bogus")),
    ("unknown-command", ("nosuchcommand",)),
    ("unknown-option", ("synth", "--no-such-option", "1", "-o", "{d}/o")),
]


def _bare_cases() -> list[Case]:
    return [Case(i, "", args=a) for i, a in BARE]


# ------------------------------------------------------------- empty results, silent choices, unclear messages
def _auc_table(models: dict[str, float], references: tuple[str, ...] = ("CR", "Rep1")):
    """A point AUC table of ``models`` (name -> AUC, NaN for an undefined one) on Edema and Effusion."""

    def m(args, d):
        rows = [
            {"model": name, "group": "g", "finding": f, "reference": r, "auc": auc + 0.01 * k}
            for name, auc in models.items()
            for k, r in enumerate(references)
            for f in ("Edema", "Effusion")
        ]
        pd.DataFrame(rows).to_csv(d / "auc.csv", index=False)
        return ["rank", "--auc-table", str(d / "auc.csv")]

    return m


def _unlabelled_predictions(args, d):
    t = _table(args, "preds.csv")
    df = pd.read_csv(t, dtype=str)
    df.assign(study_id="x" + df["study_id"]).to_csv(t, index=False)
    return [*args, "--unlabeled", "drop"]


def _two_score_columns(args, d):
    t = _table(args, "preds.csv")
    lines = t.read_text().splitlines()
    t.write_text("\n".join([lines[0] + ",score", *(ln + ",0.5" for ln in lines[1:])]) + "\n")
    return args


def _finding_map_all(args, d):
    (d / "map.yaml").write_text("findings:\n  Edema: all(Edema, Effusion)\nscore: max\n")
    return [*args, "--finding-map", str(d / "map.yaml")]


def _out_symlink_loop(args, d):
    (d / "loop").symlink_to("loop")
    return [*args, "-o", str(d / "loop")]


def _gzip_reports(args, d):
    t = _table(args, "reports.csv")
    z = t.with_name("reports.csv.gz")
    z.write_bytes(gzip.compress(t.read_bytes()))
    t.unlink()
    return _replace(args, t, z)


HONEST_CASES = [
    Case(
        "rank-auc-table-undefined-auc-below-min-models",
        "rank",
        _auc_table({"a": 0.7, "b": 0.75, "c": float("nan")}),
        says="fewer than --min-models 3 models",
    ),
    Case("rank-auc-table-two-models", "rank", _auc_table({"a": 0.7, "b": 0.75}), says="--min-models"),
    Case(
        "rank-auc-table-one-reference",
        "rank",
        _auc_table({"a": 0.7, "b": 0.75, "c": 0.8}, ("CR",)),
        must_refuse=False,
        warns="the AUCs have one (['CR'])",
    ),
    Case(
        "rank-one-reference",
        "rank",
        extra=("-r", "CR"),
        must_refuse=False,
        warns="the AUCs have one (['CR'])",
    ),
    Case(
        "rank-auc-table-with-references",
        "rank",
        lambda a, d: [*_auc_table({"a": 0.7, "b": 0.75, "c": 0.8})(a, d), "-r", "CR"],
        says="--references",
    ),
    Case(
        "classify-unlabeled-drop-leaves-nothing",
        "classify",
        _unlabelled_predictions,
        extra=("--n-resamples", "0"),
        says="--unlabeled drop would leave nothing",
    ),
    Case(
        "classify-unlabeled-drop-leaves-nothing-bootstrap",
        "classify",
        _unlabelled_predictions,
        says="--unlabeled drop would leave nothing",
    ),
    Case(
        "rank-unlabeled-drop-leaves-nothing",
        "rank",
        _unlabelled_predictions,
        says="--unlabeled drop would leave nothing",
    ),
    Case(
        "classify-preds.csv-two-score-columns", "classify", _two_score_columns, says="2 columns named 'score'"
    ),
    Case(
        "agree-pair-twice", "agree", extra=("--pairs", "CR:Rep1,CR:Rep1"), says="--pairs lists CR:Rep1 twice"
    ),
    Case(
        "agree-flow-pair-twice",
        "agree",
        extra=("--flow-pairs", "Rep1:Rep2,Rep1:Rep2"),
        says="--flow-pairs lists Rep1:Rep2 twice",
    ),
    Case("classify-finding-map-all", "classify", _finding_map_all, says="the form supported is any(A, B)"),
    Case("classify-out-symlink-loop", "classify", _out_symlink_loop, says="is a symbolic link that loops"),
    Case("label-reports-reports.csv.gz", "label-reports", _gzip_reports, must_refuse=False, must_accept=True),
]
"""Inputs that gave an empty result reported as success, a silent choice or a message not saying what is wrong:
each is now refused with one line naming the option or value (``says``), or, when valid, accepted."""

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


# ------------------------------------------------------------------------------ header before data
@pytest.mark.parametrize("name", ["classify", "rank", "agree", "fuse"])
@pytest.mark.parametrize("fault", ["no-state", "source-renamed", "no-score"])
def test_header_is_checked_before_any_data_block(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, name: str, fault: str
) -> None:
    """A missing or renamed column is refused from the header alone: no data block of any table is read."""
    import cxreval.labels._common as common
    import cxreval.labels._files as files
    import cxreval.labels._streaming as streaming

    args = command_args(name, tmp_path / "in")
    if fault == "no-score" and "-p" not in args:
        pytest.skip(f"{name} reads no predictions")
    table = _table(args, "preds.csv" if fault == "no-score" else "labels.csv")
    df = pd.read_csv(table, dtype=str)
    df = {
        "no-state": lambda: df.drop(columns=["state"]),
        "source-renamed": lambda: df.rename(columns={"source": "reader"}),
        "no-score": lambda: df.drop(columns=["score"]),
    }[fault]()
    df.to_csv(table, index=False)

    def no_data(*a: object, **k: object) -> None:
        raise AssertionError("a data block was read before the header check")

    for mod, attr in ((streaming, "_blocks"), (files, "_read_table"), (common, "_read_table")):
        monkeypatch.setattr(mod, attr, no_data)
    capsys.readouterr()
    assert main([*args, "-o", str(tmp_path / "out")]) == 2
    line = capsys.readouterr().err.strip()
    column = {"no-state": "state", "source-renamed": "source", "no-score": "score"}[fault]
    assert f"missing required column(s) ['{column}']" in line and str(table) in line, line
    if fault == "source-renamed":
        assert "Column 'reader': did you mean 'source'?" in line


@pytest.mark.slow
def test_header_error_on_a_large_input_comes_before_the_run(tmp_path: Path) -> None:
    """On a large input (2 M prediction rows) the header error takes a fraction of the run's time (the figures:
    `python bench/run.py cli:header_check`)."""
    import time

    import numpy as np

    rng = np.random.default_rng(0)
    n_studies, models, findings = (
        50_000,
        [f"m{k}" for k in range(8)],
        ["Edema", "Effusion", "Atelectasis", "Cardiomegaly", "Pneumonia"],
    )
    studies = np.array([f"s{k}" for k in range(n_studies)])
    preds = pd.DataFrame(
        {
            "study_id": np.tile(np.repeat(studies, len(findings)), len(models)),
            "model": np.repeat(models, n_studies * len(findings)),
            "finding": np.tile(findings, n_studies * len(models)),
            "score": rng.random(n_studies * len(findings) * len(models)).round(4),
        }
    )
    preds.to_csv(tmp_path / "preds.csv", index=False)
    labels = pd.DataFrame(
        {
            "study_id": np.repeat(studies, len(findings)),
            "patient_id": np.repeat([f"p{k // 2}" for k in range(n_studies)], len(findings)),
            "finding": np.tile(findings, n_studies),
            "source": "CR",
            "state": rng.choice(["positive", "negative"], n_studies * len(findings)),
        }
    )
    labels.to_csv(tmp_path / "labels.csv", index=False)
    labels.drop(columns=["state"]).to_csv(tmp_path / "no_state.csv", index=False)
    base = ["classify", "-p", str(tmp_path / "preds.csv"), "--n-resamples", "50"]
    t0 = time.perf_counter()
    assert main([*base, "-l", str(tmp_path / "no_state.csv"), "-o", str(tmp_path / "bad")]) == 2
    t_error = time.perf_counter() - t0
    t0 = time.perf_counter()
    assert main([*base, "-l", str(tmp_path / "labels.csv"), "-o", str(tmp_path / "good")]) == 0
    t_run = time.perf_counter() - t0
    assert t_error < t_run / 10, (t_error, t_run)
    shutil.rmtree(tmp_path / "good")


@pytest.mark.parametrize("name", ["classify", "agree", "fuse"])
def test_folder_of_parts_with_different_columns_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str
) -> None:
    args = command_args(name, tmp_path / "in")
    lab = _table(args, "labels.csv")
    df = pd.read_csv(lab, dtype=str)
    parts = tmp_path / "in" / "parts"
    parts.mkdir()
    df.iloc[:40].to_csv(parts / "part-0.csv", index=False)
    df.iloc[40:].assign(comment="x").to_csv(parts / "part-1.csv", index=False)
    capsys.readouterr()
    assert main([*_replace(args, lab, parts), "-o", str(tmp_path / "out")]) == 2
    line = capsys.readouterr().err.strip()
    assert f"The parts of folder {str(parts)!r} have different columns" in line and "part-1.csv" in line, line
