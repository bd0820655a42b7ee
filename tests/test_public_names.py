"""Every public name has one home: one public module lists it in its ``__all__`` (the top-level ``cxreval``,
which re-exports the jobs lazily, aside), and a package that re-exports its modules' names has made those
modules private (``pkg/_name.py``), so ``from cxreval.pkg import name`` is the one way to import them.

A name in the ``__all__`` of two public modules fails when both mean the same object and at least one of them
imports it (two modules that each define their own ``load_labels`` are two homes of two things). Schema
constants live in ``cxreval.schema`` only.

``PENDING`` lists the packages not yet restructured; it may only shrink (a package in it without a violation
fails ``test_pending_packages_still_fail``: take it out).
"""

from __future__ import annotations

import inspect
from collections import defaultdict
from pathlib import Path

from _public_modules import defined_names, exported, package_of, public_modules

PENDING: tuple[str, ...] = ()


def _defines_privately(module: str, name: str) -> bool:
    """Whether a package defines ``name`` in one of its private modules (``pkg/_x.py``), which it re-exports."""
    mod = public_modules()[module]
    for path in getattr(mod, "__path__", ()):
        for file in Path(path).glob("_*.py"):
            if file.stem != "__init__" and name in defined_names(f"{module}.{file.stem}"):
                return True
    return False


def _owner(name: str, obj: object, modules: list[str]) -> str | None:
    """The module of ``modules`` that is the home of ``obj``: the one defining it (itself or in a private module
    of its package), else the one it came from."""
    privately = [m for m in modules if _defines_privately(m, name)]
    defining = [m for m in modules if name in defined_names(m)]
    for found in (privately, defining):
        if len(found) == 1:
            return found[0]
    origin = getattr(obj, "__module__", None) if inspect.isclass(obj) or callable(obj) else None
    return origin if origin in modules else None


def two_homes() -> list[tuple[str, str, tuple[str, ...]]]:
    """``(package to fix, name, the public modules exporting it)`` for every name with more than one home."""
    groups: dict[tuple[str, int], list[str]] = defaultdict(list)
    objects: dict[tuple[str, int], object] = {}
    for mod_name, mod in public_modules().items():
        for name in exported(mod):
            obj = getattr(mod, name)
            groups[(name, id(obj))].append(mod_name)
            objects[(name, id(obj))] = obj
    out = []
    for (name, key), modules in sorted(groups.items()):
        if len(modules) < 2 or all(name in defined_names(m) for m in modules):
            continue
        owner = _owner(name, objects[(name, key)], modules)
        for pkg in sorted({package_of(m) for m in modules if m != owner}):
            out.append((pkg, name, tuple(modules)))
    return out


def reexported_public_modules() -> list[tuple[str, str, str]]:
    """``(package, name, public submodule)`` where a package's ``__init__`` re-exports a public submodule's name."""
    mods = public_modules()
    out = []
    for pkg_name, pkg in mods.items():
        if not hasattr(pkg, "__path__"):
            continue
        subs = [m for m in mods if m.startswith(pkg_name + ".")]
        for name in exported(pkg):
            obj = getattr(pkg, name)
            origin = (
                getattr(obj, "__module__", None) if inspect.isclass(obj) or inspect.isfunction(obj) else None
            )
            for sub in subs:
                if origin == sub or (name in exported(mods[sub]) and getattr(mods[sub], name) is obj):
                    out.append((pkg_name, name, sub))
                    break
    return out


def test_every_public_name_has_one_home():
    bad = [
        f"{name!r} is in the __all__ of {' and '.join(modules)}"
        for pkg, name, modules in two_homes()
        if pkg not in PENDING
    ]
    assert bad == [], (
        "one home per public name (import it from one module, export it from one):\n" + "\n".join(bad)
    )


def test_no_package_reexports_a_public_submodule():
    bad = [
        f"{pkg} re-exports {name!r} from the public module {sub}: make it {sub.rsplit('.', 1)[0]}._"
        f"{sub.rsplit('.', 1)[1]}"
        for pkg, name, sub in reexported_public_modules()
        if package_of(pkg) not in PENDING
    ]
    assert bad == [], "\n".join(bad)


def test_schema_constants_are_exported_by_the_schema_only():
    import cxreval.schema as schema

    constants = {n for n in exported(schema) if n.isupper()}
    assert {"MACRO", "STUDY_ID", "SOURCE", "STATE"} <= constants
    bad = [
        f"{m} exports {n}"
        for m, mod in public_modules().items()
        if package_of(m) not in ("schema", *PENDING)
        for n in exported(mod)
        if n in constants and getattr(mod, n) is getattr(schema, n)
    ]
    assert bad == [], "import schema constants from cxreval.schema; do not re-export them:\n" + "\n".join(bad)


def test_pending_packages_still_fail():
    failing = {pkg for pkg, _, _ in two_homes()} | {
        package_of(pkg) for pkg, _, _ in reexported_public_modules()
    }
    fixed = [pkg for pkg in PENDING if pkg not in failing]
    assert fixed == [], f"take {fixed} out of PENDING: they have one home per name now"


def test_the_check_sees_a_second_home(monkeypatch):
    import cxreval.io as io
    import cxreval.schema as schema

    monkeypatch.setattr(io, "__all__", [*io.__all__, "MACRO"])
    monkeypatch.setattr(io, "MACRO", schema.MACRO, raising=False)
    found = [(pkg, modules) for pkg, name, modules in two_homes() if name == "MACRO"]
    assert [pkg for pkg, _ in found if pkg == "io"] == ["io"]
    assert {"cxreval.io", "cxreval.schema"} <= set(next(m for p, m in found if p == "io"))
