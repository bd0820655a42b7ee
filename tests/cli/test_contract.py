"""The command line's contract, on every command: ``--help`` shows an example and help for every option, one
flag vocabulary (lower case, ``-o`` beside ``--out``, ``--seed``), ``--version`` imports no command; a CxrevalError or
a usage error is one line on stderr and exit 2, never a traceback; old spellings and library parameter names are
answered with the flag; warnings are summarised once, one line each; progress bars appear only on a terminal.

How every command that writes a folder ends (interrupted, killed, concurrent, disk full, bad ``--out``) is checked by
the run matrix beside this file (test_run_matrix.py).
"""

from __future__ import annotations

import json
import subprocess
import sys

import pandas as pd
import pytest
import typer

import cxreval
from cxreval.cli.main import app, main

from .conftest import command_args, one_error_line

# --- every command: --version, --help with its vocabulary and example ------------------------------------------


def _commands():
    """Every command path of the app, e.g. ('data', 'audit'), found by walking the click tree."""
    root = typer.main.get_command(app)
    out = [()]

    def walk(cmd, path):
        if hasattr(cmd, "list_commands"):  # the root group loads command modules lazily
            for name in cmd.list_commands(None):
                out.append((*path, name))
                walk(cmd.get_command(None, name), (*path, name))

    walk(root, ())
    return out


COMMANDS = _commands()


def test_version(capsys):
    assert main(["--version"]) == 0
    assert capsys.readouterr().out.strip() == f"cxreval {cxreval.__version__}"


def test_known_commands_are_registered():
    assert {("data",), ("data", "fetch"), ("data", "audit"), ("data", "list")} <= set(COMMANDS)


@pytest.mark.parametrize("path", COMMANDS, ids=lambda p: " ".join(p) or "cxreval")
def test_help_on_every_command(path, capsys):
    assert main([*path, "--help"]) == 0
    out = capsys.readouterr().out
    assert "Usage:" in out and ("cxreval " + " ".join(path)).strip() in " ".join(out.split())


def test_cxreval_error_is_one_line_and_exit_2(tmp_path, capsys):
    rc = main(
        [
            "data",
            "audit",
            "chestxray14",
            "--data-entry",
            str(tmp_path / "missing.csv"),
            "--bbox-list",
            str(tmp_path / "missing_bbox.csv"),
        ]
    )
    assert rc == 2
    cap = capsys.readouterr()
    lines = cap.err.strip().splitlines()
    assert len(lines) == 1 and cap.out == ""
    assert lines[0] == f"cxreval: error: File '{tmp_path / 'missing.csv'}' does not exist."


def test_usage_error_exit_code(capsys):
    assert main(["data", "audit"]) == 2  # click usage error: missing argument
    assert "Missing argument" in capsys.readouterr().err
    assert main(["no-such-command"]) == 2


def _all_commands():
    root = typer.main.get_command(app)
    out = []

    def walk(cmd, path):
        if hasattr(cmd, "list_commands"):
            for name in cmd.list_commands(None):
                walk(cmd.get_command(None, name), (*path, name))
        else:
            out.append((path, cmd))

    walk(root, ())
    return out


ALL = _all_commands()


@pytest.mark.parametrize("path, cmd", ALL, ids=[" ".join(p) for p, _ in ALL])
def test_help_vocabulary_and_example(path, cmd, capsys):
    opts = [o for p in cmd.params for o in getattr(p, "opts", [])]
    for p in cmd.params:
        if getattr(p, "param_type_name", "") == "option":
            assert p.help, f"{' '.join(path)} {p.opts} has no help text"
            assert all(o == o.lower() for o in p.opts if o.startswith("--")), p.opts
    if "--out" in opts:
        assert "-o" in opts, f"{' '.join(path)}: --out without -o"
    if "--seed" in opts or any(getattr(p, "name", "") == "seed" for p in cmd.params):
        assert "--seed" in opts
    assert main([*path, "--help"]) == 0
    text = capsys.readouterr().out
    assert "<bool>" not in text
    if path[-1] not in ("list",) and path != ("report",):  # `report` is owned by another change
        assert "Example:" in text, f"{' '.join(path)} --help has no example"


@pytest.mark.parametrize("path, cmd", ALL, ids=[" ".join(p) for p, _ in ALL])
def test_help_text_is_shown_verbatim(path, cmd, capsys):
    """No markup eats text such as '[patient_id,]' or '[0, 255]': every option's help appears in --help."""
    assert main([*path, "--help"]) == 0
    shown = "".join(capsys.readouterr().out.split())
    for p in cmd.params:
        if getattr(p, "help", None):
            assert "".join(p.help.split()) in shown, (path, p.help)


def test_help_texts_that_describe_their_values(capsys):
    from cxreval.demo.sections import SECTIONS

    assert main(["iqa", "degrade", "--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "degradations:" in text and "gaussian_blur" in text and "output_dtype" in text
    assert main(["demo", "--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    for key in (s.key for s in SECTIONS):
        assert key in text


def test_every_command_is_listed_in_root_help(capsys):
    assert main(["--help"]) == 0
    text = capsys.readouterr().out
    for cmd in ("agree", "classify", "data", "demo", "fuse", "iqa", "localize", "rank", "report", "synth"):
        assert f"  {cmd}" in text


def test_root_help_lists_every_command_without_importing_one():
    # the one-line help of each command comes from main's table, equal to the command's own help
    import click
    import typer

    from cxreval.cli import main as cli_main

    group = typer.main.get_command(cli_main.app)
    ctx = click.Context(group)
    names = group.list_commands(ctx)
    assert sorted(cli_main._SUMMARIES) == names
    for name in names:
        cmd = group.get_command(ctx, name)
        for limit in (30, 45, 200):
            assert click.Command(name, help=cli_main._SUMMARIES[name]).get_short_help_str(
                limit
            ) == cmd.get_short_help_str(limit), name
    code = (
        "import sys; from cxreval.cli.main import main; rc = main(['--help']); "
        "heavy = [m for m in sys.modules if m.split('.')[0] in ('pandas', 'numpy', 'scipy', 'pyarrow') "
        "or (m.startswith('cxreval.cli.') and m not in ('cxreval.cli.main',))]; print(rc, heavy)"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert r.stdout.strip().splitlines()[-1] == "0 []", r.stdout + r.stderr


def test_version_imports_no_command_module():
    code = (
        "import sys; from cxreval.cli.main import main; rc = main(['--version']); "
        "heavy = [m for m in ('pandas', 'numpy', 'scipy', 'cxreval.cli.classify', 'cxreval.cli.iqa') "
        "if m in sys.modules]; print(rc, heavy)"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert r.stdout.strip().splitlines()[-1] == "0 []", r.stdout + r.stderr


# --- errors: one line and exit 2, never a traceback ------------------------------------------------------------


@pytest.mark.parametrize(
    "cmd",
    [
        ["data", "fetch"],
        ["data", "audit", "chestxray14"],
        ["data", "split", "chestxray14", "-o", "{tmp}/o"],
        ["demo", "--offline", "-o", "{tmp}/o"],
    ],
)
@pytest.mark.parametrize("where", ["file", "under-file"])
def test_cache_dir_file_is_one_line(tmp_path, capsys, cmd, where):
    f = tmp_path / "f"
    f.write_text("x")
    cache = f if where == "file" else f / "sub"
    args = [a.replace("{tmp}", str(tmp_path)) for a in cmd]
    assert main([*args, "--cache-dir", str(cache)]) == 2
    line = one_error_line(capsys)
    assert str(f) in line and ("--cache-dir" in line or "is a file" in line)
    assert not (tmp_path / "o").exists()


def test_library_parameter_names_become_flags(tmp_path, capsys):
    args = command_args("classify", tmp_path)
    assert main([*args, "--confidence-level", "1.5", "-o", str(tmp_path / "o")]) == 2
    line = one_error_line(capsys)
    assert line.startswith("cxreval: error: --confidence-level must be") and "evaluate_auc" not in line


# --- options shared by commands --------------------------------------------------------------------------------


def test_findings_comma_separated_equals_repeated_and_labels_repeatable(tmp_path, capsys):
    args = command_args("classify", tmp_path)
    assert main([*args, "--findings", "Edema,Effusion", "-o", str(tmp_path / "a"), "--json"]) == 0
    a = json.loads(capsys.readouterr().out)["auc"]
    assert main([*args, "-f", "Edema", "-f", "Effusion", "-o", str(tmp_path / "b"), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["auc"] == a
    lab = pd.read_csv(args[args.index("-l") + 1])
    lab[lab.source == "CR"].to_csv(tmp_path / "cr.csv", index=False)
    lab[lab.source != "CR"].to_csv(tmp_path / "readers.csv", index=False)
    for cmd in (
        ["agree", "--pairs", "CR:Rep1"],
        ["fuse", "--readers", "Rep1,Rep2", "--methods", "mv", "--adjudicated", "CR"],
    ):
        assert (
            main(
                [
                    *cmd,
                    "-l",
                    str(tmp_path / "cr.csv"),
                    "-l",
                    str(tmp_path / "readers.csv"),
                    "-o",
                    str(tmp_path / cmd[0]),
                ]
            )
            == 0
        ), capsys.readouterr().err


# --- what a run prints: warnings once, one line each; progress only on a terminal ------------------------------


def test_warnings_are_summarised_one_line_each(tmp_path, capsys):
    args = command_args("classify", tmp_path)
    labels = pd.read_csv(args[args.index("-l") + 1])
    labels.loc[labels.finding == "Effusion", "state"] = "negative"  # AUC undefined for every model
    labels.to_csv(args[args.index("-l") + 1], index=False)
    assert main([*args, "-o", str(tmp_path / "o")]) == 0
    err = capsys.readouterr().err.strip().splitlines()
    warn = [ln for ln in err if ln.startswith("cxreval: warning: ")]
    assert warn and len(warn) == len(set(warn)) == len(err)  # nothing but the summary lines, each once
    assert all(ln.endswith("[UndefinedMetricWarning]") for ln in warn)


def test_no_progress_output_when_stderr_is_not_a_terminal(tmp_path):
    args = command_args("fuse", tmp_path)
    r = subprocess.run(
        [sys.executable, "-m", "cxreval", *args, "-o", str(tmp_path / "o")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    # only the once-per-run warning summary (e.g. fusion's over-fused states) may appear: no progress output
    assert r.returncode == 0, r.stderr
    assert all(ln.startswith("cxreval: warning: ") for ln in r.stderr.splitlines()), r.stderr


def test_progress_bars_render_on_a_terminal(monkeypatch):
    import io

    import rich.console

    from cxreval.cli import _common
    from cxreval.executor._local import SerialExecutor

    buf = io.StringIO()
    monkeypatch.setenv("FORCE_COLOR", "1")  # stderr is a pipe here: a forced terminal, as rich reads it
    real = rich.console.Console
    monkeypatch.setattr(rich.console, "Console", lambda **k: real(file=buf, force_terminal=True, width=100))
    with _common.progress() as prog:
        task = prog.add("shards", total=3)
        out = SerialExecutor().map(lambda x: x * 2, [1, 2, 3], on_item=lambda _: prog.advance(task))
    assert out == [2, 4, 6]
    assert "shards" in buf.getvalue() and "3/3" in buf.getvalue()
