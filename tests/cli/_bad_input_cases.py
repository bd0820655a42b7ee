"""The cases of the bad-input sweep (tests/cli/test_bad_inputs.py) beyond table faults and option values: an
``--out`` that is an input or not cxreval's, commands with bad arguments, and empty results, silent choices and
unclear messages."""

from __future__ import annotations

import gzip
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from .conftest import _replace, _table


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
