"""The command line is a thin shell: over every module of ``src/cxreval/cli``, no ``raise`` statement (the
checks are the library's) and no call that reads a file (the jobs read their inputs).

The one ``raise`` allowed is in :data:`RAISE_ALLOWED`: ``main.py``'s error handler ``_invoke``, which turns
exceptions into exit codes (it raises none today; typer's ``Exit`` is its way to end with a code). ``PENDING``
names the command modules still being made shells; it may only shrink: take a module out once it passes both
checks.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

CLI = Path(__file__).resolve().parents[2] / "src" / "cxreval" / "cli"

RAISE_ALLOWED: frozenset[tuple[str, str]] = frozenset({("main.py", "_invoke")})
"""``(module file, function)`` where a ``raise`` statement may stand: the error handler of ``main``."""

PENDING: frozenset[str] = frozenset()
"""Command modules that still check or read something themselves. Never add to this set."""

_READS = re.compile(r"open|read_text|read_bytes|read_csv\w*|read_table|read_\w+_tables")
"""Names of the functions (or methods) that read a file."""
_MODULE_READS = {"yaml": re.compile(r"\w*load\w*"), "pd": re.compile(r"read_\w+"), "np": re.compile(r"load")}
"""``module.function`` calls that read a file: ``yaml.safe_load``, ``pd.read_parquet``, ``np.load``."""


def _modules() -> list[Path]:
    return sorted(CLI.glob("*.py"))


def _functions(tree: ast.AST) -> dict[ast.AST, str]:
    """Every node inside a function, mapped to the name of the outermost function holding it."""
    owner: dict[ast.AST, str] = {}
    for top in ast.walk(tree):
        if isinstance(top, (ast.FunctionDef, ast.AsyncFunctionDef)) and top not in owner:
            for node in ast.walk(top):
                owner.setdefault(node, top.name)
    return owner


def raises(path: Path) -> list[str]:
    """``file:line`` of every ``raise`` statement outside :data:`RAISE_ALLOWED`."""
    tree = ast.parse(path.read_text(), filename=str(path))
    owner = _functions(tree)
    return [
        f"{path.name}:{node.lineno}"
        for node in ast.walk(tree)
        if isinstance(node, ast.Raise) and (path.name, owner.get(node, "")) not in RAISE_ALLOWED
    ]


def reads(path: Path) -> list[str]:
    """``file:line name`` of every call of a file-reading function."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
        base = func.value.id if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) else ""
        by_module = _MODULE_READS.get(base)
        if _READS.fullmatch(name) or (by_module is not None and by_module.fullmatch(name)):
            found.append(f"{path.name}:{node.lineno} {name}")
    return found


@pytest.mark.parametrize("path", [p for p in _modules() if p.name not in PENDING], ids=lambda p: p.name)
def test_no_raise_statement(path: Path) -> None:
    assert not raises(path), "checks belong to the library (cxreval._validation, the jobs): " + ", ".join(
        raises(path)
    )


@pytest.mark.parametrize("path", [p for p in _modules() if p.name not in PENDING], ids=lambda p: p.name)
def test_no_file_reading(path: Path) -> None:
    assert not reads(path), "the jobs read their inputs: " + ", ".join(reads(path))


def test_pending_names_command_modules() -> None:
    assert PENDING <= {p.name for p in _modules()} - {"main.py", "_common.py", "__init__.py"}


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("def f():\n    raise ValueError('x')\n", ["x.py:2"]),
        ("def _invoke():\n    raise SystemExit(2)\n", []),
        ("import yaml\ndef f(p):\n    return yaml.safe_load(p.read_text())\n", ["yaml", "read_text"]),
        (
            "import pandas as pd\nimport numpy as np\nx = pd.read_parquet('a')\ny = np.load('b')\n",
            ["pd", "np"],
        ),
        ("def f(store, p):\n    return store.open(p), open(p)\n", ["open", "open"]),
        ("def f(p):\n    return p.write_text('a'), read_tables(p)\n", []),
    ],
)
def test_checks_catch_a_deliberate_violation(tmp_path: Path, source: str, expected: list[str]) -> None:
    path = tmp_path / ("main.py" if "_invoke" in source else "x.py")
    path.write_text(source)
    if expected and expected[0].startswith("x.py"):
        assert raises(path) == expected
    else:
        assert not raises(path)
        assert len(reads(path)) == len(expected)
