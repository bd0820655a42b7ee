"""The public modules of cxreval and their ``__all__``, for the surface tests (test_public_names, test_conventions).

A module is public when no component of its dotted path starts with ``_`` (``cxreval.datasets.nih`` is,
``cxreval.labels._codes`` is not); the top-level ``cxreval`` (lazy re-exports of the jobs) is left aside.
"""

from __future__ import annotations

import ast
import importlib
import pkgutil
from functools import cache
from pathlib import Path
from types import ModuleType

import cxreval

SRC = Path(cxreval.__file__).resolve().parent


def is_public(name: str) -> bool:
    return not any(part.startswith("_") for part in name.split("."))


def package_of(module: str) -> str:
    """The top-level package of a module: ``cxreval.datasets.nih`` -> ``datasets``."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


@cache
def public_modules() -> dict[str, ModuleType]:
    """Every public module under ``cxreval`` (the top level aside), imported, by dotted name."""
    out: dict[str, ModuleType] = {}
    for info in pkgutil.walk_packages(cxreval.__path__, "cxreval."):
        if info.name == "cxreval.__main__" or not is_public(info.name):
            continue
        out[info.name] = importlib.import_module(info.name)
    return out


def exported(module: ModuleType) -> tuple[str, ...]:
    return tuple(getattr(module, "__all__", ()))


@cache
def defined_names(module: str) -> frozenset[str]:
    """The names a module binds at its top level by ``def``, ``class`` or assignment (not by an import)."""
    mod = importlib.import_module(module)
    path = Path(mod.__file__ or "")
    names: set[str] = set()
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                names.update(n.id for n in ast.walk(target) if isinstance(n, ast.Name))
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
    return frozenset(names)
