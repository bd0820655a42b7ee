"""Entry point of the ``cxreval`` command line.

Sub-commands live one per module in :mod:`cxreval.cli`; every module with a ``register(app)``
function is registered, in alphabetical order. A :class:`~cxreval.exceptions.CxrevalError` becomes a
one-line message on stderr and exit code 2.
"""

from __future__ import annotations

import importlib
import logging
import os
import pkgutil
import sys
from collections.abc import Sequence
from pathlib import Path

import typer

from .. import __version__
from ..exceptions import CxrevalError

__all__ = ["app", "main", "run"]

app = typer.Typer(name="cxreval", no_args_is_help=True, add_completion=False, pretty_exceptions_enable=False,
                  help="Clinically grounded evaluation of chest X-ray machine learning.")


def _version(value: bool) -> None:
    if value:
        typer.echo(f"cxreval {__version__}")
        raise typer.Exit()


@app.callback()
def _root(version: bool = typer.Option(False, "--version", callback=_version, is_eager=True,
                                       help="Print the version and exit."),
          verbose: bool = typer.Option(False, "--verbose", "-v", help="Log progress to stderr.")) -> None:
    """cxreval: does a conclusion survive a change of evaluation reference?"""
    logging.basicConfig(level=logging.INFO if verbose else logging.WARNING, format="%(message)s")


def _register_all() -> None:
    from .. import cli as pkg

    for mod in sorted(pkgutil.iter_modules(pkg.__path__), key=lambda m: m.name):
        if mod.name in ("main",) or mod.name.startswith("_"):
            continue
        module = importlib.import_module(f"{pkg.__name__}.{mod.name}")
        register = getattr(module, "register", None)
        if register is not None:
            register(app)


_register_all()


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


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line with ``argv`` (default ``sys.argv[1:]``); return the exit code.

    Exit codes: 0 success, 2 bad input (a :class:`~cxreval.exceptions.CxrevalError`, or a usage error),
    130 interrupted (Ctrl-C / SIGINT), 1 a bug (a short message and the path of the saved traceback).
    """
    args = list(sys.argv[1:] if argv is None else argv)
    try:
        rv = app(args=args, prog_name="cxreval", standalone_mode=False)
    except CxrevalError as exc:
        typer.echo(f"cxreval: error: {exc}", err=True)
        return 2
    except typer.Exit as exc:
        return int(exc.exit_code or 0)
    except (KeyboardInterrupt, typer.Abort):
        typer.echo("cxreval: interrupted; no output was written.", err=True)
        return 130
    except Exception as exc:
        # usage errors: click's ClickException (typer >= 0.29 vendors click, older typer depends on it)
        show, exit_code = getattr(exc, "show", None), getattr(exc, "exit_code", None)
        if callable(show) and isinstance(exit_code, int):
            show()
            return int(exit_code)
        saved = _save_traceback()
        where = f"; traceback saved to {saved}" if saved else ""
        typer.echo(f"cxreval: internal error ({type(exc).__name__}: {exc}){where}. Please report it.", err=True)
        return 1
    return int(rv) if isinstance(rv, int) else 0


def run() -> None:
    """Console-script entry point."""
    sys.exit(main())
