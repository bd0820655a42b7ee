"""The public surface fits on a page: at most :data:`MAX_PUBLIC_NAMES` public names, each documented on
``docs/api.md``.

A public name is a name in the ``__all__`` of a public module (``tests/_public_modules.py``) or of the
top-level ``cxreval``; a name the top level re-exports from a public module counts once (it is the same
object). A name is documented by a ``::: cxreval.module.Name`` block on the API page, or by a
``::: cxreval.module`` block (mkdocstrings renders the module's ``__all__``).
"""

from __future__ import annotations

import re
from pathlib import Path

import cxreval
from _public_modules import exported, public_modules

MAX_PUBLIC_NAMES = 300
"""The most public names the library may have; it may only go down."""

API_PAGE = Path(__file__).resolve().parents[1] / "docs" / "api.md"


def public_names() -> set[tuple[str, str]]:
    """``(module, name)`` for every public name, a top-level re-export of a module's public name counted once."""
    names = {(m, n) for m, mod in public_modules().items() for n in exported(mod)}
    homes = {(n, id(getattr(public_modules()[m], n))) for m, n in names}
    for n in cxreval.__all__:
        if (n, id(getattr(cxreval, n))) not in homes:
            names.add(("cxreval", n))
    return names


def documented(page: str) -> set[tuple[str, str]]:
    """``(module, name)`` for every name a ``:::`` block of ``page`` documents."""
    out: set[tuple[str, str]] = set()
    mods = {**public_modules(), "cxreval": cxreval}
    for target in re.findall(r"^::: ([\w.]+)", page, flags=re.M):
        if target in mods:
            out |= {(target, n) for n in exported(mods[target])}
        else:
            module, _, name = target.rpartition(".")
            out.add((module, name))
    return out


def test_the_public_surface_fits_on_a_page():
    names = public_names()
    assert len(names) <= MAX_PUBLIC_NAMES, (
        f"{len(names)} public names, more than {MAX_PUBLIC_NAMES}: make the ones a user of the guide does not "
        "need private (out of __all__, imported from the private module that defines them)"
    )


def test_every_public_name_is_documented():
    missing = sorted(public_names() - documented(API_PAGE.read_text()))
    assert not missing, "document these on docs/api.md (a ::: block):\n" + "\n".join(
        f"{m}.{n}" for m, n in missing
    )


def test_the_check_sees_an_undocumented_name():
    assert ("cxreval.x", "f") not in documented("::: cxreval.x.g\n")
    assert ("cxreval.jobs", "compare_references") in documented("::: cxreval.jobs\n")
