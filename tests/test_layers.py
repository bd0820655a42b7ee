"""Import layers: a module may import only from its own layer or the layers below it, and never a private
name (``_x()``) of another module; a private module (``pkg/_x.py``) may be imported from another package (the
private home of a name cut from the public surface), its layer permitting. The check is plain ``ast`` over ``src/cxreval``; it runs in CI with the
tests and fails on any violation not listed in :data:`KNOWN_VIOLATIONS` (empty; the
list may only shrink)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "cxreval"

# lowest first; the first component under ``cxreval`` decides the layer
LAYERS: tuple[tuple[str, frozenset[str]], ...] = (
    (
        "core",
        frozenset(
            {
                "_version",
                "_config",
                "_templates",
                "exceptions",
                "_validation",
                "_typing",
                "_plots",
                "schema",
                "io",
                "findings",
                "finding_maps",
                "results",
                "outputs",
                "labels",
                "progress",
                "options",
            }
        ),
    ),
    ("datasets", frozenset({"datasets"})),
    ("engines", frozenset({"bootstrap", "executor", "spill", "stats"})),
    (
        "analyses",
        frozenset(
            {
                "classification",
                "ranking",
                "agreement",
                "fusion",
                "localization",
                "iqa",
                "labeller",
                "latent",
                "planning",
                "mrmc",
                "subgroups",
            }
        ),
    ),
    ("models", frozenset({"predict", "reader"})),
    ("report", frozenset({"report"})),
    ("jobs", frozenset({"jobs"})),
    ("demo", frozenset({"demo"})),
    ("cli", frozenset({"cli", "__main__"})),
)

# (importer, imported name or module) pairs allowed as debt: none. Never add to this list.
KNOWN_VIOLATIONS: frozenset[str] = frozenset()


def _layer(module: str) -> int | None:
    parts = module.split(".")
    if len(parts) < 2:
        return None  # the package root (lazy re-exports) belongs to no layer
    for i, (_, names) in enumerate(LAYERS):
        if parts[1] in names:
            return i
    return None


def _module_name(path: Path, root: Path) -> tuple[str, str]:
    rel = path.relative_to(root.parent).with_suffix("")
    mod = ".".join(rel.parts)
    if path.name == "__init__.py":
        mod = mod.removesuffix(".__init__")
        return mod, mod
    return mod, mod.rsplit(".", 1)[0]


def _imports(path: Path, root: Path):
    """Yield (importer, target module, imported name or None) for every cxreval import in ``path``."""
    mod, pkg = _module_name(path, root)
    top = root.name
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = pkg.split(".")[: len(pkg.split(".")) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target == top or target.startswith(top + "."):
                for alias in node.names:
                    yield mod, target, alias.name
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name == top or alias.name.startswith(top + "."):
                    yield mod, alias.name, None


def _is_module(root: Path, dotted: str) -> bool:
    rel = Path(*dotted.split(".")[1:])
    return (root / rel).with_suffix(".py").is_file() or (root / rel / "__init__.py").is_file()


def layer_violations(root: Path = SRC) -> list[str]:
    """Every layer or private-import violation under the package folder ``root``, as sorted strings."""
    found: set[str] = set()
    for path in sorted(root.rglob("*.py")):
        for importer, target, name in _imports(path, root):
            full = f"{target}.{name}" if name and _is_module(root, f"{target}.{name}") else target
            li, lt = _layer(importer), _layer(full)
            if li is not None and lt is not None and lt > li:
                found.add(f"layer: {importer} -> {full}")
            # a private name (``_x()``, ``_X``) of another module: of a public module from anywhere, of a
            # private module from outside its package; a private module itself (``pkg._x``) may be imported
            # from anywhere inside cxreval, its layer permitting
            if name and name.startswith("_") and not name.startswith("__") and full == target:
                owner = target.rsplit(".", 1)[0]
                private_module = target.rsplit(".", 1)[-1].startswith("_")
                if not private_module or (importer != owner and not importer.startswith(owner + ".")):
                    found.add(f"private: {importer} -> {target}.{name}")
    return sorted(found)


def test_no_new_layer_or_private_import_violation():
    new = [v for v in layer_violations() if v not in KNOWN_VIOLATIONS]
    assert not new, "Import-layer violations (see tests/test_layers.py for the layers):\n" + "\n".join(new)


def test_known_violations_list_only_shrinks():
    gone = sorted(KNOWN_VIOLATIONS - set(layer_violations()))
    assert not gone, "Fixed - remove from KNOWN_VIOLATIONS:\n" + "\n".join(gone)


@pytest.mark.parametrize(
    ("files", "expected"),
    [
        (
            {"findings.py": "from .report import html\n", "report/__init__.py": "", "report/html.py": ""},
            ["layer: pkg.findings -> pkg.report.html"],
        ),
        (
            {"ranking.py": "from .classification import _kernel\n", "classification.py": "_kernel = 1\n"},
            ["private: pkg.ranking -> pkg.classification._kernel"],
        ),
        (
            {
                "cli/__init__.py": "",
                "cli/x.py": "from ..iqa._image import load\n",
                "iqa/__init__.py": "",
                "iqa/_image.py": "def load(): pass\n",
            },
            [],
        ),
        (
            {
                "cli/__init__.py": "",
                "cli/x.py": "from ..iqa._image import _load\n",
                "iqa/__init__.py": "",
                "iqa/_image.py": "def _load(): pass\n",
            },
            ["private: pkg.cli.x -> pkg.iqa._image._load"],
        ),
        (
            {
                "cli/__init__.py": "",
                "cli/x.py": "from ..classification import evaluate_auc\n",
                "classification.py": "def evaluate_auc(): pass\n",
                "iqa/__init__.py": "from ._image import load\n",
                "iqa/_image.py": "def load(): pass\n",
            },
            [],
        ),
    ],
)
def test_checker_catches_a_deliberate_violation(tmp_path, files, expected):
    root = tmp_path / "pkg"
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    (root / "__init__.py").touch()
    assert layer_violations(root) == expected


ANALYSES: frozenset[str] = dict(LAYERS)["analyses"]

# (importer module, imported analysis package) pairs not yet moved below the analyses (into cxreval.stats or
# cxreval.jobs). It may only shrink.
PENDING: frozenset[tuple[str, str]] = frozenset()


def analysis_imports(root: Path = SRC) -> set[tuple[str, str]]:
    """``(importer module, imported package)`` for every import, even a lazy one, of an analysis package by a
    module of another analysis package."""
    found: set[tuple[str, str]] = set()
    for path in sorted(root.rglob("*.py")):
        for importer, target, _ in _imports(path, root):
            a, b = importer.split("."), target.split(".")
            if len(a) > 1 and len(b) > 1 and a[1] in ANALYSES and b[1] in ANALYSES and a[1] != b[1]:
                found.add((importer, b[1]))
    return found


def test_no_analysis_package_imports_another():
    found = analysis_imports()
    new = sorted(found - PENDING)
    assert not new, (
        "An analysis package imports another (share the code through cxreval.stats):\n"
        + "\n".join(f"{importer} -> cxreval.{package}" for importer, package in new)
    )
    gone = sorted(PENDING - found)
    assert not gone, "Fixed - remove from PENDING:\n" + "\n".join(map(str, gone))


def test_analysis_import_check_catches_a_deliberate_import(tmp_path):
    files = {
        "ranking/__init__.py": "",
        "ranking/_x.py": "def f():\n    from ..classification import evaluate_auc\n",
        "classification/__init__.py": "from ..stats import AUCResult\n",
        "stats/__init__.py": "",
    }
    root = tmp_path / "pkg"
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    (root / "__init__.py").touch()
    assert analysis_imports(root) == {("pkg.ranking._x", "classification")}


BENCH = SRC.parents[1] / "bench"

# bench scripts allowed to import the CLI or a private name: none (bench/bootstrap_auc.py uses
# prepare_inputs + evaluate_auc, bench/ranking_real_data.py RankingStabilityResult.summary). Never add to it.
BENCH_PENDING: frozenset[str] = frozenset()


def bench_violations(bench: Path = BENCH) -> list[str]:
    """Imports of ``cxreval.cli`` or of a private cxreval name/module by the scripts and suites in ``bench``."""
    found: set[str] = set()
    for path in sorted([*bench.glob("*.py"), *bench.glob("suites/**/*.py")]):
        rel = path.relative_to(bench.parent).as_posix()
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            if (
                isinstance(node, ast.ImportFrom)
                and not node.level
                and (node.module or "").split(".")[0] == "cxreval"
            ):
                targets = [f"{node.module}.{a.name}" for a in node.names]
            elif isinstance(node, ast.Import):
                targets = [a.name for a in node.names if a.name.split(".")[0] == "cxreval"]
            else:
                continue
            for t in targets:
                parts = t.split(".")
                if len(parts) > 1 and parts[1] == "cli":
                    found.add(f"cli: {rel} -> {t}")
                elif any(p.startswith("_") and not p.startswith("__") for p in parts[1:]):
                    found.add(f"private: {rel} -> {t}")
    return sorted(found)


def test_bench_imports_only_the_public_library():
    new = [v for v in bench_violations() if v not in BENCH_PENDING]
    assert not new, "bench/ may import only the public library (no cxreval.cli, no _private):\n" + "\n".join(
        new
    )
    gone = sorted(BENCH_PENDING - set(bench_violations()))
    assert not gone, "Fixed - remove from BENCH_PENDING:\n" + "\n".join(gone)


def test_bench_check_catches_a_deliberate_violation(tmp_path):
    (tmp_path / "b.py").write_text(
        "from cxreval.cli.rank import rank_summary\nimport cxreval.iqa._image\n"
        "from cxreval.classification import _prepare, evaluate_auc\n"
        "from cxreval.io import markdown_table\nfrom _peer import x\n"
    )
    (tmp_path / "suites").mkdir()
    (tmp_path / "suites" / "s.py").write_text("from cxreval.cli.main import main\n")
    assert bench_violations(tmp_path) == [
        f"cli: {tmp_path.name}/b.py -> cxreval.cli.rank.rank_summary",
        f"cli: {tmp_path.name}/suites/s.py -> cxreval.cli.main.main",
        f"private: {tmp_path.name}/b.py -> cxreval.classification._prepare",
        f"private: {tmp_path.name}/b.py -> cxreval.iqa._image",
    ]


def package_graph(root: Path = SRC) -> dict[str, set[str]]:
    """Top-level package (or module) under ``root`` -> the other top-level ones it imports (anywhere in it)."""
    graph: dict[str, set[str]] = {}
    for path in sorted(root.rglob("*.py")):
        for importer, target, name in _imports(path, root):
            full = f"{target}.{name}" if name and _is_module(root, f"{target}.{name}") else target
            a, b = importer.split("."), full.split(".")
            if len(a) > 1 and len(b) > 1 and a[1] != b[1]:
                graph.setdefault(a[1], set()).add(b[1])
    return graph


def import_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every strongly connected group of more than one package (Tarjan), sorted: the import cycles."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(found)


def test_no_import_cycle_between_packages():
    cycles = import_cycles(package_graph())
    assert not cycles, "Top-level packages importing each other (in a circle):\n" + "\n".join(
        map(str, cycles)
    )


def test_cycle_check_catches_a_deliberate_cycle(tmp_path):
    files = {
        "a/__init__.py": "from ..b import x\n",
        "b/__init__.py": "x = 1\n",
        "b/y.py": "from ..a import z\n",
        "c.py": "from .a import z\n",
    }
    root = tmp_path / "pkg"
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    (root / "__init__.py").touch()
    assert import_cycles(package_graph(root)) == [["a", "b"]]


MAX_FLOORS = 12
"""The most floors of the import graph from the CLI down: ``cli`` on the top floor, each module or package one
floor above the highest it imports (anywhere in it, lazy imports too)."""


def floors(graph: dict[str, set[str]], top: str = "cli") -> list[str]:
    """The longest chain of imports from ``top`` down, top first (the graph has no cycle)."""
    chains: dict[str, list[str]] = {}

    def down(node: str) -> list[str]:
        if node not in chains:
            below = [down(m) for m in sorted(graph.get(node, ()))]
            chains[node] = [node, *max(below, key=len, default=[])]
        return chains[node]

    return down(top)


def test_at_most_twelve_floors_from_the_cli():
    chain = floors(package_graph())
    assert len(chain) <= MAX_FLOORS, f"{len(chain)} floors from the CLI down: " + " -> ".join(chain)


def test_floor_count_follows_the_longest_chain():
    graph = {"cli": {"a", "b"}, "a": {"c"}, "c": {"d"}, "b": {"d"}}
    assert floors(graph) == ["cli", "a", "c", "d"]


def test_every_package_has_a_layer():
    tops = {p.stem for p in SRC.glob("*.py") if p.stem != "__init__"}
    tops |= {p.parent.name for p in SRC.glob("*/__init__.py")}
    placed = set().union(*(names for _, names in LAYERS))
    assert tops <= placed, f"Top-level modules in no layer of LAYERS: {sorted(tops - placed)}"


MAX_MODULE_LINES = 600


def long_modules(root: Path = SRC, limit: int = MAX_MODULE_LINES) -> list[str]:
    """Modules under ``root`` longer than ``limit`` lines, as ``'path: N lines'``."""
    found = []
    for path in sorted(root.rglob("*.py")):
        n = len(path.read_text().splitlines())
        if n > limit:
            found.append(f"{path.relative_to(root)}: {n} lines")
    return found


def test_no_module_longer_than_the_limit():
    assert not long_modules(), f"Modules over {MAX_MODULE_LINES} lines (split them):\n" + "\n".join(
        long_modules()
    )


def test_length_check_catches_a_long_module(tmp_path):
    (tmp_path / "short.py").write_text("x = 1\n" * 3)
    (tmp_path / "long.py").write_text("x = 1\n" * 4)
    assert long_modules(tmp_path, limit=3) == ["long.py: 4 lines"]
