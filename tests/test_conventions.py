"""One convention each, over every public signature (the functions and the public methods of the classes in
the ``__all__`` of public modules, the command modules aside) and every command of the command line:

- randomness is ``rng: RNGLike`` (never ``seed``; a dataclass field recording a seed may stay);
- ``executor: ExecutorLike`` (an Executor, anything with ``map``, a spec string such as ``'process:2'``, None);
- ``progress: Progress | None``; no ``on_batch``, ``on_epoch``, ``on_item`` parameter (the ``Executor.map``
  protocol and the executors' ``map`` aside);
- ``studies: Studies`` (``'each'``, ``'common'``, ``'same'``; a function may accept a subset);
- ``epochs``, never ``max_epochs``;
- on the command line, an option has the same default in every command that has it, or its help says
  "default" where it differs.

Annotations are read as the strings ``from __future__ import annotations`` leaves, resolved with
``typing.get_type_hints`` where a string is not the alias's name. ``PENDING`` lists the packages not yet
converted; it may only shrink (``test_pending_packages_still_fail``).
"""

from __future__ import annotations

import dataclasses
import inspect
import re
import typing
from collections import defaultdict

import pytest
import typer

from _public_modules import exported, package_of, public_modules
from cxreval._typing import RNGLike, Studies
from cxreval.executor import ExecutorLike
from cxreval.progress import Progress

PENDING: tuple[str, ...] = ()
PENDING_COMMANDS: tuple[str, ...] = ()
"""Commands (their first word) whose options' defaults differ silently; may only shrink."""

# parameter name -> (the annotation strings accepted, the resolved type accepted)
ANNOTATIONS: dict[str, tuple[frozenset[str], object]] = {
    "rng": (frozenset({"RNGLike"}), RNGLike),
    "executor": (frozenset({"ExecutorLike"}), ExecutorLike),
    "progress": (
        frozenset({"Progress | None", "None | Progress", "Optional[Progress]"}),
        typing.Optional[Progress],
    ),
    "studies": (frozenset({"Studies"}), Studies),
}
REFUSED: dict[str, str] = {
    "seed": "rng: RNGLike",
    "max_epochs": "epochs",
    "on_batch": "progress: Progress | None",
    "on_epoch": "progress: Progress | None",
    "on_item": "progress: Progress | None",
}
# the Executor.map(func, items, on_item=) protocol and its implementations
ON_ITEM_ALLOWED = re.compile(r"^cxreval\.executor\.(_\w+\.)?\w+\.map$")
# the normalisers of what a parameter accepts (as get_executor normalises an ExecutorLike)
NORMALISERS: frozenset[str] = frozenset({"cxreval.progress.as_progress"})


def _signatures():
    """``(qualified name, package, callable)`` of every public function and public method, each once."""
    seen: set[int] = set()
    for mod_name, mod in public_modules().items():
        if mod_name.startswith("cxreval.cli."):
            continue  # the commands' functions: their options are checked by test_one_default_per_option
        for name in exported(mod):
            obj = getattr(mod, name)
            if inspect.isfunction(obj) and id(obj) not in seen:
                seen.add(id(obj))
                yield f"{obj.__module__}.{obj.__qualname__}", package_of(obj.__module__), obj
            elif inspect.isclass(obj) and id(obj) not in seen and obj.__module__.startswith("cxreval."):
                seen.add(id(obj))
                members = [(n, m) for n, m in vars(obj).items() if not n.startswith("_")]
                if not dataclasses.is_dataclass(obj) and "__init__" in vars(obj):
                    members.append(("__init__", vars(obj)["__init__"]))
                for member_name, member in members:
                    func = member.__func__ if isinstance(member, (classmethod, staticmethod)) else member
                    if inspect.isfunction(func):
                        yield (
                            f"{obj.__module__}.{obj.__qualname__}.{member_name}",
                            package_of(obj.__module__),
                            func,
                        )


def _annotation_ok(func, param: inspect.Parameter, accepted: frozenset[str], resolved: object) -> bool:
    ann = param.annotation
    if isinstance(ann, str):
        if " ".join(ann.split()) in accepted:
            return True
        try:
            ann = typing.get_type_hints(func)[param.name]
        except Exception:  # a name only imported under TYPE_CHECKING: the string decides
            return False
    return ann == resolved


def violations() -> list[tuple[str, str]]:
    """``(package, message)`` for every public parameter off the conventions."""
    out = []
    for qualname, pkg, func in _signatures():
        if qualname in NORMALISERS:
            continue
        try:
            params = inspect.signature(func).parameters.values()
        except (TypeError, ValueError):
            continue
        for p in params:
            if p.name in REFUSED and not (p.name == "on_item" and ON_ITEM_ALLOWED.match(qualname)):
                out.append((pkg, f"{qualname}({p.name}=): use {REFUSED[p.name]}"))
            elif p.name in ANNOTATIONS:
                accepted, resolved = ANNOTATIONS[p.name]
                if not _annotation_ok(func, p, accepted, resolved):
                    out.append(
                        (pkg, f"{qualname}({p.name}: {p.annotation}): annotate it {sorted(accepted)[0]}")
                    )
    return out


def _commands():
    """``(command path, click command)`` of every command of ``cxreval``."""
    from cxreval.cli.main import app

    out = []

    def walk(cmd, path):
        if hasattr(cmd, "list_commands"):
            for name in cmd.list_commands(None):
                walk(cmd.get_command(None, name), (*path, name))
        else:
            out.append((" ".join(path), cmd))

    walk(typer.main.get_command(app), ())
    return out


def option_default_differences() -> list[tuple[str, str]]:
    """``(command, message)`` where an option's default differs from another command's and its help is silent."""
    seen: dict[str, dict[str, list[tuple[str, str]]]] = defaultdict(lambda: defaultdict(list))
    for path, cmd in _commands():
        for p in cmd.params:
            if getattr(p, "param_type_name", "") != "option" or not p.opts or p.required:
                continue  # a required option has no default
            flag = max(p.opts, key=len)
            default = repr(p.default)
            seen[flag][default].append((path, p.help or ""))
    out = []
    for flag, defaults in sorted(seen.items()):
        if len(defaults) < 2:
            continue
        for default, uses in sorted(defaults.items()):
            for path, help_text in uses:
                if "default" not in help_text.lower():
                    others = sorted(d for d in defaults if d != default)
                    out.append(
                        (
                            path,
                            f"cxreval {path} {flag}: default {default}, elsewhere {', '.join(others)}; "
                            "say the default in its help",
                        )
                    )
    return out


def test_public_signatures_follow_the_conventions():
    bad = [msg for pkg, msg in violations() if pkg not in PENDING]
    assert bad == [], "\n".join(bad)


def test_one_default_per_option_across_commands():
    bad = [msg for path, msg in option_default_differences() if path.split()[0] not in PENDING_COMMANDS]
    assert bad == [], "\n".join(bad)


def test_pending_commands_still_differ():
    differing = {path.split()[0] for path, _ in option_default_differences()}
    fixed = [c for c in PENDING_COMMANDS if c not in differing]
    assert fixed == [], f"take {fixed} out of PENDING_COMMANDS: their defaults agree or are stated now"


def test_pending_packages_still_fail():
    fixed = [pkg for pkg in PENDING if pkg not in {p for p, _ in violations()}]
    assert fixed == [], f"take {fixed} out of PENDING: their signatures follow the conventions now"


def test_the_check_sees_a_seed_and_a_loose_annotation():
    def draw(n: int, *, seed: int = 0) -> None: ...

    def run(*, executor: object = None, progress: typing.Callable[[str], None] | None = None) -> None: ...

    assert [p.name for p in inspect.signature(draw).parameters.values() if p.name in REFUSED] == ["seed"]
    params = inspect.signature(run).parameters
    assert not _annotation_ok(run, params["executor"], *ANNOTATIONS["executor"])
    assert not _annotation_ok(run, params["progress"], *ANNOTATIONS["progress"])

    def good(
        *, rng: RNGLike = None, executor: ExecutorLike = None, progress: Progress | None = None
    ) -> None: ...

    params = inspect.signature(good).parameters
    for name in ("rng", "executor", "progress"):
        assert _annotation_ok(good, params[name], *ANNOTATIONS[name]), name


@pytest.mark.parametrize("flag", ["--seed", "--overwrite", "--json"])
def test_common_flags_share_one_default(flag):
    from cxreval.cli.main import app

    assert app is not None
    defaults = {
        repr(p.default)
        for _, cmd in _commands()
        for p in cmd.params
        if getattr(p, "param_type_name", "") == "option" and flag in p.opts
    }
    assert len(defaults) == 1, (flag, defaults)
