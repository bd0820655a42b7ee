"""Entry point of the ``cxreval`` command line.

Sub-commands live one per module in :mod:`cxreval.cli`; every module with a ``register(app)``
function is registered, in alphabetical order. A :class:`~cxreval.exceptions.CxrevalError` becomes a
one-line message on stderr and exit code 2.
"""

from __future__ import annotations

import errno
import importlib
import logging
import os
import pkgutil
import re
import signal
import sys
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

os.environ.setdefault(
    "TYPER_USE_RICH", "0"
)  # plain click help: no '<bool>' metavars, no markup eating '[x,]'

import typer  # noqa: E402
from typer.core import TyperGroup  # noqa: E402

from .._version import __version__  # noqa: E402
from ..exceptions import CxrevalError  # noqa: E402

__all__ = [
    "main",
]

_ARGS: list[list[str]] = []  # the command line of the run in progress (read by run.json)
_LOADED: dict[str, object] = {}  # command name -> click command, filled as command modules are imported
_IMPORTED: set[str] = set()


_SUMMARIES: dict[str, str] = {
    "agree": (
        "Weighted kappa, Low/High kappa and weighted F1 per finding (+ macro, micro), prevalence"
        " and omission flows."
    ),
    "classify": (
        "Per-finding ROC-AUC of every model against every reference, with patient-level bootstrap CIs."
    ),
    "data": "Obtain public metadata and audit datasets and splits.",
    "demo": "Fetch what is needed, run the analyses on real public data, write OUT/report.html.",
    "finetune": (
        "Fine-tune a model on your labels (patient-level train/validation split, early "
        "stopping on validation AUC)."
    ),
    "fuse": (
        "Fuse readers' labels with MV, FUSE_OR, FUSE_AND, Dawid-Skene, MACE, NN Fusion (PS) into new sources."
    ),
    "iqa": "Image quality: degradations, metrics, metric-vs-expert analysis.",
    "label-reports": (
        "Label findings in report text per section; write labels.csv/.parquet, "
        "mentions.csv, notes.csv, summary.json."
    ),
    "localize": "Heatmaps -> boxes -> IoU / IoBB -> Acc and AFP per finding, threshold, rule and T.",
    "mrmc": (
        "Is the model radiologist-level? Readers' AUCs, OR and DBM analyses, and the model against the "
        "readers, under every reference."
    ),
    "plan": "Plan an expert's relabelling (a sample drawn with known probabilities, favouring the studies whose "
    "labels sharpen the models' AUCs most), or a reader study.",
    "predict": (
        "Run models on radiographs: predictions.csv (study_id, model, finding, score) and optional heatmaps."
    ),
    "rank": (
        "SRCC/KRCC between the model rankings each reference induces, per finding, macro average "
        "and model group."
    ),
    "reader": "Reader study: label, rate and adjudicate in the browser; export into cxreval tables.",
    "report": (
        "Write one self-contained HTML page (key findings first, Plotly inlined, CSV downloads)"
        " from result folders."
    ),
    "subgroups": (
        "Per-subgroup AUC, sensitivity, specificity and FNR, gaps with patient-bootstrap CIs and Holm, under"
        " every reference; calibration."
    ),
    "synth": (
        "Run the synthetic localization study: Part A (exact boxes), checks, Part B (Acc/AFP), "
        "Part C (the published ChestX-ray8 accuracies), then a short legend of its terms (on "
        "stderr)."
    ),
}
"""Each command's name and the first paragraph of its help, the one source of both: the root ``--help`` lists
the commands from here without importing a command module, and a command module gives typer
:func:`command_help` (``tests/cli/test_contract.py`` checks it against every command's own help)."""


def command_help(name: str, details: str | None = None) -> str:
    """The help of the command ``name``: its line of :data:`_SUMMARIES`, then ``details`` (a docstring: the
    paragraphs after the first)."""
    import inspect

    return _SUMMARIES[name] + (f"\n\n{inspect.cleandoc(details)}" if details else "")


def command_group(help: str, **settings: Any) -> typer.Typer:
    """A group of commands (``cxreval`` itself, ``cxreval data``, ``iqa``, ``reader``): its help when called
    without a command, help text as written (no markup); ``settings``: typer's other settings of the group."""
    return typer.Typer(no_args_is_help=True, rich_markup_mode=None, help=help, **settings)


def _command_modules() -> list[str]:
    from .. import cli as pkg

    return sorted(
        m.name for m in pkgutil.iter_modules(pkg.__path__) if m.name != "main" and not m.name.startswith("_")
    )


def _load_module(name: str) -> None:
    """Import ``cxreval.cli.<name>`` and collect the commands its ``register(app)`` adds."""
    if name in _IMPORTED:
        return
    _IMPORTED.add(name)
    module = importlib.import_module(f"{__package__}.{name}")
    register = getattr(module, "register", None)
    if register is None:
        return
    sub = typer.Typer(rich_markup_mode=None, add_completion=False)
    sub.callback()(lambda: None)  # force a group, so every registered command is a named sub-command
    register(sub)
    for cmd_name, cmd in typer.main.get_group(sub).commands.items():
        _tidy_metavars(cmd)
        _LOADED.setdefault(cmd_name, cmd)


def _tidy_metavars(cmd: Any) -> None:
    """Repeatable options show their value's type (``<path>``), not typer's ``<list[Path]>``."""
    for p in getattr(cmd, "params", []):
        if getattr(p, "multiple", False) and getattr(p, "metavar", "") is None:
            try:
                m = re.fullmatch(r"<list\[(\w+)\]>", str(p.display_type(None)))
            except Exception:  # a typer without display_type: leave its metavar
                m = None
            if m:
                p.metavar = f"<{m.group(1).lower()}>"
    for sub in getattr(cmd, "commands", {}).values():
        _tidy_metavars(sub)


class LazyGroup(TyperGroup):
    """The root group: a command's module is imported only when that command is run or help lists them all."""

    def list_commands(self, ctx: object) -> list[str]:
        for m in _command_modules():
            _load_module(m)
        return sorted(set(self.commands) | set(_LOADED))

    def format_commands(self, ctx: Any, formatter: Any) -> None:
        """The commands and their one-line help from :data:`_SUMMARIES` (no command module imported)."""
        # typer's own command class: typer >= 0.26 vendors click and no longer installs it
        from typer.core import TyperCommand

        names = sorted(set(self.commands) | set(_SUMMARIES))
        limit = formatter.width - 6 - max(len(n) for n in names)
        rows = [
            (
                n,
                (
                    self.commands[n] if n in self.commands else TyperCommand(n, help=_SUMMARIES[n])
                ).get_short_help_str(limit),
            )
            for n in names
        ]
        with formatter.section("Commands"):
            formatter.write_dl(rows)

    def get_command(self, ctx: object, cmd_name: str) -> object:  # type: ignore[override]
        if cmd_name in self.commands:
            return self.commands[cmd_name]
        guess = cmd_name.replace("-", "_")
        if cmd_name not in _LOADED and guess in _command_modules():
            _load_module(guess)
        if cmd_name not in _LOADED:
            for m in _command_modules():
                _load_module(m)
        return _LOADED.get(cmd_name)


app = command_group(
    "Clinically grounded evaluation of chest X-ray machine learning.",
    name="cxreval",
    cls=LazyGroup,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _version(ctx: typer.Context, value: bool) -> None:
    if value:
        typer.echo(f"cxreval {__version__}")
        ctx.exit()  # click's way out of an eager option, as its own --version does


@app.callback()
def _root(
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Print the version and exit."
    ),
    verbose: bool = typer.Option(False, "--verbose", "-v", help="Log progress to stderr."),
) -> None:
    """cxreval: does a conclusion survive a change of evaluation reference?

    Every command writing a folder writes it atomically (-o/--out, --overwrite) with a run.json record.
    Exit codes: 0 success, 2 bad input, 130 interrupted, 1 a bug (traceback saved to a file).
    """
    logging.basicConfig(level=logging.INFO if verbose else logging.WARNING, format="%(message)s")


_SIGTERMS: list[int] = []


def _on_sigterm(signum: int, frame: Any) -> None:
    """SIGTERM is handled as Ctrl-C (Python's own SIGINT handler raises KeyboardInterrupt), so that output
    folders are cleaned up; it is recorded for the exit code and message."""
    _SIGTERMS.append(signum)
    signal.default_int_handler(signum, frame)


def _interrupted() -> int:
    if _SIGTERMS:
        _SIGTERMS.clear()
        typer.echo("cxreval: terminated (SIGTERM).", err=True)
        return 143
    typer.echo("cxreval: interrupted.", err=True)
    return 130


def _summarise_warnings(caught: list[warnings.WarningMessage]) -> None:
    """One line per distinct warning, with a count, once per run."""
    counts: dict[tuple[str, str], int] = {}
    for w in caught:
        text = str(w.message).strip().splitlines()[0] if str(w.message).strip() else type(w.message).__name__
        key = (w.category.__name__, text)
        counts[key] = counts.get(key, 0) + 1
    for (cat, text), n in counts.items():
        typer.echo(f"cxreval: warning: {text}" + (f" ({n} times)" if n > 1 else "") + f" [{cat}]", err=True)


def _save_traceback() -> Path | None:
    """Write the current exception's traceback to a file in the temp folder; return its path."""
    import tempfile
    import traceback

    try:
        fd, name = tempfile.mkstemp(prefix="cxreval-traceback-", suffix=".txt")
        with os.fdopen(fd, "w") as fh:
            fh.write(f"cxreval {__version__}\nargv: {sys.argv!r}\n\n")
            traceback.print_exc(file=fh)
        return Path(name)
    except OSError:
        return None


def main(argv: Sequence[str] | None = None) -> int:  # noqa: C901
    """Run the command line with ``argv`` (default ``sys.argv[1:]``); return the exit code.

    Exit codes: 0 success, 2 bad input (a :class:`~cxreval.exceptions.CxrevalError`, or a usage error),
    130 interrupted (Ctrl-C / SIGINT), 1 a bug (a short message and the path of the saved traceback).
    """
    args = list(sys.argv[1:] if argv is None else argv)
    old_term = None
    try:
        old_term = signal.signal(signal.SIGTERM, _on_sigterm)
    except ValueError:  # not the main thread
        pass
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("default")
            try:
                return _invoke(args)
            finally:
                _summarise_warnings(caught)
    finally:
        if old_term is not None:
            signal.signal(signal.SIGTERM, old_term)


_DISK_ERRNOS = frozenset({errno.ENOSPC, errno.EROFS, errno.EDQUOT, errno.EFBIG})

_PARAM_RE = re.compile(r"The '(\w+)' parameter (?:of [\w.]+ )?")
_NP_REPR_RE = re.compile(r"np\.(?:float|int|uint|bool_)\d*\(([^()]*)\)")
_PARAM_FLAGS = {
    "rng": "--seed",
    "T_values": "--t-value",
    "strict_T": "--inclusive-t",
    "T_iou": "--t-iou",
    "image_shape": "--image-size",
    "url": "--db",
    "reference": "--reference-source",
    "models": "--model",
    "mirror": "--data-mirror",
    "model": "--load-model",
    "reference_labels": "--validate-against",
    "studies='each'": "--intersect",
    "sections": "--section",
}
"""Library parameters (or ``parameter='value'``) whose command-line option is not ``--`` + the parameter name
with dashes."""
_NAMED_PARAM_RE = re.compile(r"(?<![^\s(\[`,;:])([A-Za-z_]\w*)=(?:'([^'\s]*)'|(True|False)\b)?")
"""A parameter named in a library message: ``out=`` (then its value), ``state_encoding='chexpert'``."""


def _invoked_command(args: Sequence[str]) -> Any:
    """The (sub-)command ``args`` invokes (``['data', 'split', ...]`` -> ``data split``); None when a name in
    ``args`` is no command."""
    cmd: Any = typer.main.get_command(app)
    for a in args:
        if a.startswith("-") or not hasattr(cmd, "get_command"):
            break
        cmd = cmd.get_command(None, a)
        if cmd is None:
            return None
    return cmd


def _command_flags(args: Sequence[str]) -> dict[str, tuple[str, str | None, str | None]]:
    """Parameter name -> (option, option when True, option when False) of the (sub-)command ``args`` invokes
    (empty when it cannot be resolved): ``out`` -> ``('--out', None, None)``, a flag ``overwrite`` ->
    ``('--overwrite', '--overwrite', None)``, ``synthetic`` -> ``('--synthetic', '--synthetic', '--no-synthetic')``."""
    flags: dict[str, tuple[str, str | None, str | None]] = {}
    for p in getattr(_invoked_command(args), "params", []):
        opts = [o for o in getattr(p, "opts", []) if o.startswith("--")]
        if not opts or not getattr(p, "name", None):
            continue
        off = [o for o in getattr(p, "secondary_opts", []) if o.startswith("--")]
        is_flag = bool(getattr(p, "is_flag", False))
        flags[p.name] = (opts[0], opts[0] if is_flag else None, off[0] if is_flag and off else None)
    return flags


def _command_options(args: Sequence[str]) -> set[str]:
    """The option strings of the (sub-)command ``args`` invokes (empty when it cannot be resolved)."""
    opts: set[str] = set()
    for p in getattr(_invoked_command(args), "params", []):
        opts.update(getattr(p, "opts", []))
    return opts


_SIZE_OPTIONS = (
    "--n-resamples",
    "--n-draws",
    "--batch-size",
    "--chunk-size",
    "--per-size",
    "--sample",
    "--max-size",
    "--input-size",
)
"""Options that size a run's memory: the ones the command has are named when it runs out of memory."""


def _smaller(args: Sequence[str]) -> str:
    """What to do about a run out of memory: smaller inputs or the command's own sizing options."""
    try:
        have = _command_options(args)
    except Exception:  # never let the advice hide the error itself
        have = set()
    named = [o for o in _SIZE_OPTIONS if o in have]
    options = f"smaller values of {', '.join(named)}" if named else "smaller inputs"
    return f"use {options}{', or smaller inputs' if named else ''}, or a machine with more memory."


def user_message(msg: str, args: Sequence[str]) -> str:
    """A library error in the user's words, the one place parameter names become the command's options.

    The library names its parameters (``out='/x' is a file``, ``pass state_encoding='chexpert'``,
    ``overwrite=True``); each one the command has an option for becomes that option (``--out /x is a file``,
    ``pass --state-encoding chexpert``, ``--overwrite``). ``The 'n_resamples' parameter of evaluate_auc must
    ...`` becomes ``--n-resamples must ...``. NumPy scalar reprs become plain values."""
    msg = _NP_REPR_RE.sub(r"\1", msg)
    try:
        flags = _command_flags(args)
    except Exception:  # never let the rewording hide the error itself
        flags = {}
    by_option = {v[0]: v for v in flags.values()}

    def option_of(name: str) -> tuple[str, str | None, str | None] | None:
        return (
            by_option.get(_PARAM_FLAGS.get(name, ""))
            or flags.get(name)
            or by_option.get("--" + name.replace("_", "-"))
        )

    m = _PARAM_RE.search(msg)
    if m and option_of(m.group(1)):
        msg = msg[: m.start()] + f"{option_of(m.group(1))[0]} " + msg[m.end() :]  # type: ignore[index]

    def flag(m: re.Match[str]) -> str:
        found = option_of(m.group(1))
        if found is None:
            return m.group(0)
        option, on, off = found
        value = m.group(2) if m.group(2) is not None else m.group(3)
        alias = by_option.get(_PARAM_FLAGS.get(f"{m.group(1)}='{value}'", ""))
        if (
            alias is not None and alias[1] is not None
        ):  # a value that is a flag: studies='each' (agree's --intersect)
            return alias[1]
        if m.group(3) is not None and on is not None:  # a flag: overwrite=True -> --overwrite
            return on if value == "True" else off or m.group(0)
        if value is not None:
            return f"{option} {value}"
        return option if m.end() == len(m.string) or m.string[m.end()] in " )],.;:" else f"{option} "

    return _NAMED_PARAM_RE.sub(flag, msg)


def current_args() -> list[str] | None:
    """The arguments of the ``main`` call in progress (None outside one)."""
    return list(_ARGS[-1]) if _ARGS else None


def _invoke(args: list[str]) -> int:
    _ARGS.append(list(args))
    try:
        rv = app(args=args, prog_name="cxreval", standalone_mode=False)
    except CxrevalError as exc:
        text = " ".join(user_message(str(exc), args).split())  # one line, whatever the library's text holds
        typer.echo(f"cxreval: error: {text}", err=True)
        return 2
    except typer.Exit as exc:
        return int(exc.exit_code or 0)
    except (KeyboardInterrupt, typer.Abort) as exc:
        if isinstance(
            exc.__cause__, EOFError
        ):  # click turns EOFError (a truncated .gz) into Abort: not a Ctrl-C
            typer.echo(
                f"cxreval: error: an input ended early ({exc.__cause__ or 'EOFError'}); is a file truncated?",
                err=True,
            )
            return 2
        return _interrupted()
    except Exception as exc:
        # usage errors: click's ClickException (typer >= 0.26 vendors click, older typer depends on it)
        show, exit_code = getattr(exc, "show", None), getattr(exc, "exit_code", None)
        if callable(show) and isinstance(exit_code, int):
            show()
            return int(exit_code)
        if isinstance(exc, OSError) and exc.filename is not None:  # disk full, permission denied mid-run
            typer.echo(f"cxreval: error: {exc.strerror or exc}: {exc.filename}", err=True)
            return 2
        if isinstance(exc, MemoryError):  # a resource limit, not a bug: say what ran out
            typer.echo(
                f"cxreval: error: out of memory ({str(exc)[:160] or 'MemoryError'}); {_smaller(args)}",
                err=True,
            )
            return 2
        if isinstance(exc, OSError) and exc.errno in _DISK_ERRNOS:  # a write error that names no file
            typer.echo(f"cxreval: error: {exc.strerror or exc} (while writing)", err=True)
            return 2
        saved = _save_traceback()
        where = f"; traceback saved to {saved}" if saved else ""
        typer.echo(
            f"cxreval: internal error ({type(exc).__name__}: {exc}){where}. Please report it.", err=True
        )
        return 1
    finally:
        _ARGS.pop()
    if rv == 130:  # typer turns KeyboardInterrupt (Ctrl-C, and SIGTERM here) into a silent return of 130
        return _interrupted()
    return int(rv) if isinstance(rv, int) else 0


def run() -> None:
    """Console-script entry point."""
    sys.exit(main())
