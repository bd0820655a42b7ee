"""One default per option, and named results, over every public signature (the functions and public methods of
the classes in the ``__all__`` of public modules, as ``test_conventions`` walks them) and every command:

- a parameter name with a default in several public signatures has the same default in each, unless its
  meaning is the function's own (``DISTINCT``: a metric's published constant, a message's wording...); the
  functions that resolve what the others' options mean (``RESOLVERS``: ``LabelPolicy.of``) are left out;
- a command's option has the default of the library parameter of its name (``--n-resamples`` is
  ``n_resamples``), spelled as the command line spells it (``'a,b'`` for ``('a', 'b')``, ``'serial'`` for the
  executor ``None``);
- no public function returns a bare tuple: an annotation ``tuple[A, B]`` (fixed length; ``tuple[str, ...]`` is a
  sequence of one kind) or an unannotated ``return a, b``; it returns a named result (a NamedTuple or a frozen
  dataclass) instead.

``PENDING_DEFAULTS``, ``PENDING_COMMAND_DEFAULTS`` and ``PENDING_TUPLES`` list today's exceptions; they may only
shrink (each has a test that fails once an entry is fixed).
"""

from __future__ import annotations

import ast
import enum
import inspect
import textwrap
from collections import defaultdict
from pathlib import PurePath
from typing import NamedTuple

from test_conventions import _commands, _signatures

DISTINCT: dict[str, str] = {
    # a metric's or an estimator's published constant
    **dict.fromkeys(
        ("alpha", "beta", "c", "c1", "c2", "c3", "k", "orientations", "sigma_f", "sigma_nsq", "block_size"),
        "a metric's or estimator's constant, from its paper",
    ),
    **dict.fromkeys(("downsample", "normalize", "pooling"), "a metric's or network's own variant"),
    **dict.fromkeys(
        ("n_iter", "max_iter", "tol", "epochs", "chunks_per_worker", "batch_size", "workers", "timeout"),
        "sized to the work of its function",
    ),
    **dict.fromkeys(("decimals", "digits"), "the rounding of one table"),
    **dict.fromkeys(
        ("func", "name", "where", "title", "origin", "unit"), "the wording of a message or heading"
    ),
    "dtype": "read: inferred; written: the image's bit depth",
    "error": "the reader's own message",
    "finding": "one finding: every one (a plan) or the simulated one",
    "fractions": "a two-way or three-way split",
    "kind": "the kind of dataset, of output path or of MeSH term",
    "labels": "the states a kappa counts or the models a comparison keeps",
    "mapping": "a vocabulary map of its dataset",
    "method": "a different method in each function",
    "methods": "fusion methods or rank correlations",
    "metrics": "the IQA metrics of a job, of a demo section or of a comparison",
    "missing": "a missing state's code or a table's blank",
    "mode": "a network's mode or a box count's rounding",
    "model": "a different model in each function",
    "out": "each command's own output path",
    "pattern": "the files a folder lists",
    "scale": "a rating scale or an augmentation's scale",
    "sections": "the report sections labelled, or the demo's",
    "source": "the name a dataset's labels carry",
    "thresholds": "heat-map thresholds or the report's",
    "threshold": "one heat-map threshold or the command's list of them",
    "rule": "one overlap rule or the command's list of them",
    "rules": "the localization protocol's overlap rules or a labeller's rules file",
    "url": "a database or a server",
    "weights": "kappa weights, MS-SSIM scale weights or a network's",
    "image_shape": "the image size boxes are checked against, when known, or the NIH images' size",
    "id_column": "the study column read, or the one written",
    **dict.fromkeys(
        ("kendall", "spearman"),
        "the variant of each comparison's reference: with ties of metric scores (IQA), or as AUC rankings are "
        "published",
    ),
    "labels_format": "the format a fusion job writes, or save's override of the result's own (None: keep it)",
    "loss": "a linear probe's loss, or fine-tuning's (None: the loss of its mode)",
    "weight_decay": "a linear probe's penalty, or fine-tuning's (None: the penalty of its mode)",
    "score_model": "chosen per finding by evaluate_latent_auc ('auto'), or the one model a fit uses",
}
"""Parameter names whose default is the function's own: what they mean differs from function to function."""

RESOLVERS: dict[str, str] = {
    "cxreval.schema._states.LabelPolicy.of": "None is 'not given', told apart from a contradicting policy",
    "cxreval.schema._states.binarize": "None is the policy's own not_mentioned, told apart from a contradicting one",
}
"""The functions that resolve what the others' options mean (their ``None``: not given); left out of the check."""

PENDING_DEFAULTS: frozenset[str] = frozenset()
"""Parameter names with several defaults across the library; may only shrink."""

PENDING_COMMAND_DEFAULTS: frozenset[tuple[str, str]] = frozenset()
"""``(command, parameter)`` whose option's default is not the library's; may only shrink."""

PENDING_TUPLES: frozenset[str] = frozenset()
"""Public functions that still return a bare tuple; may only shrink."""

# how the command line spells a library default that is not text
CLI_SPELLINGS: dict[str, dict[object, object]] = {"executor": {None: "serial"}}


def library_defaults() -> dict[str, dict[str, list[str]]]:
    """``{parameter: {repr(default): [qualified names]}}`` over every public signature."""
    out: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    for qualname, _, func in _signatures():
        if qualname in RESOLVERS:
            continue
        try:
            params = inspect.signature(func).parameters.values()
        except (TypeError, ValueError):
            continue
        for p in params:
            if p.default is not inspect.Parameter.empty and p.kind is not p.VAR_KEYWORD:
                out[p.name][repr(p.default)].append(qualname)
    return out


def default_differences() -> dict[str, str]:
    """``{parameter: message}`` for every parameter name with several defaults, ``DISTINCT`` aside."""
    out = {}
    for name, defaults in sorted(library_defaults().items()):
        if len(defaults) > 1 and name not in DISTINCT:
            uses = "; ".join(f"{d} in {', '.join(sorted(q)[:3])}" for d, q in sorted(defaults.items()))
            out[name] = f"{name}= has {len(defaults)} defaults: {uses}"
    return out


def _cli_spelling(name: str, value: object) -> object:
    """A library default as the command line spells it."""
    value = CLI_SPELLINGS.get(name, {}).get(value, value) if isinstance(value, (str, type(None))) else value
    if isinstance(value, (tuple, list)) and all(isinstance(v, (str, int, float)) for v in value):
        return ",".join(str(v) for v in value)
    return value


def _cli_value(value: object) -> object:
    if isinstance(value, enum.Enum):
        value = value.value
    if isinstance(value, PurePath):
        value = str(value)
    if isinstance(value, (tuple, list)) and all(isinstance(v, (str, int, float)) for v in value):
        return ",".join(str(v) for v in value)
    return value


def command_default_differences() -> dict[tuple[str, str], str]:
    """``{(command, parameter): message}`` where an option's default is not the library's one default."""
    lib = library_defaults()
    out = {}
    for path, cmd in _commands():
        for p in cmd.params:
            if getattr(p, "param_type_name", "") != "option" or p.required or p.name in DISTINCT:
                continue
            defaults = lib.get(p.name or "")
            if not defaults or len(defaults) > 1:
                continue  # not a library parameter, or several defaults there (default_differences)
            (lib_repr, qualnames), *_ = defaults.items()
            func = next(f for q, _, f in _signatures() if q == qualnames[0])
            lib_value = inspect.signature(func).parameters[p.name or ""].default
            if _cli_value(p.default) != _cli_spelling(p.name or "", lib_value):
                out[(path.split()[0], p.name or "")] = (
                    f"cxreval {path} {max(p.opts, key=len)}: default {p.default!r}, "
                    f"the library's {p.name}={lib_repr} ({qualnames[0]})"
                )
    return out


def _is_bare_tuple(annotation: str) -> bool:
    """Whether an annotation string names a fixed-length tuple (``tuple[A, B]``, maybe ``| None``)."""
    try:
        tree = ast.parse(annotation, mode="eval").body
    except SyntaxError:
        return False
    parts = [tree]
    while parts and isinstance(parts[-1], ast.BinOp):  # A | B | None
        node = parts.pop()
        parts += [node.left, node.right]  # type: ignore[attr-defined]
    for node in parts:
        if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name):
            if node.value.id in ("tuple", "Tuple"):
                elts = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
                if not (len(elts) == 2 and isinstance(elts[1], ast.Constant) and elts[1].value is ...):
                    return True
    return False


def _returns_a_tuple_display(func: object) -> bool:
    """Whether an unannotated function has a ``return a, b``."""
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(func)))  # type: ignore[arg-type]
    except (OSError, TypeError, SyntaxError):
        return False
    body = tree.body[0]
    nested = {
        id(n)
        for child in ast.iter_child_nodes(body)
        for n in ast.walk(child)
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef))
        for n in ast.walk(n)
        if isinstance(n, ast.Return)
    }
    return any(
        isinstance(n, ast.Return) and isinstance(n.value, ast.Tuple) and id(n) not in nested
        for n in ast.walk(body)
    )


def bare_tuple_returns() -> list[str]:
    """The qualified names of the public functions that return a bare tuple."""
    out = []
    for qualname, _, func in _signatures():
        returns = getattr(func, "__annotations__", {}).get("return", inspect.Signature.empty)
        if returns is inspect.Signature.empty:
            if _returns_a_tuple_display(func):
                out.append(qualname)
        elif _is_bare_tuple(returns if isinstance(returns, str) else repr(returns).replace("typing.", "")):
            out.append(qualname)
    return sorted(set(out))


def test_one_default_per_parameter_name():
    bad = [msg for name, msg in default_differences().items() if name not in PENDING_DEFAULTS]
    assert bad == [], "\n".join(bad)


def test_commands_take_the_library_defaults():
    bad = [msg for key, msg in command_default_differences().items() if key not in PENDING_COMMAND_DEFAULTS]
    assert bad == [], "\n".join(bad)


def test_no_public_function_returns_a_bare_tuple():
    bad = [q for q in bare_tuple_returns() if q not in PENDING_TUPLES]
    assert bad == [], "return a named result (a NamedTuple or a frozen dataclass):\n" + "\n".join(bad)


def test_pending_lists_only_shrink():
    fixed = sorted(PENDING_DEFAULTS - set(default_differences()))
    assert fixed == [], f"take {fixed} out of PENDING_DEFAULTS: one default each now"
    fixed_cmd = sorted(PENDING_COMMAND_DEFAULTS - set(command_default_differences()))
    assert fixed_cmd == [], f"take {fixed_cmd} out of PENDING_COMMAND_DEFAULTS: the library's default now"
    fixed_tuples = sorted(PENDING_TUPLES - set(bare_tuple_returns()))
    assert fixed_tuples == [], f"take {fixed_tuples} out of PENDING_TUPLES: a named result now"
    assert not set(DISTINCT) & PENDING_DEFAULTS


class _Pair(NamedTuple):
    low: float
    high: float


def test_the_checks_see_a_bare_tuple_and_a_named_one():
    assert _is_bare_tuple("tuple[np.ndarray, np.ndarray]")
    assert _is_bare_tuple("tuple[str, Path] | None")
    assert _is_bare_tuple("tuple[int]")
    assert not _is_bare_tuple("tuple[str, ...]")
    assert not _is_bare_tuple("_Pair")

    def unannotated(x):
        def inner():
            return 1, 2

        return x

    def pair(x):
        return x, x

    assert not _returns_a_tuple_display(unannotated)
    assert _returns_a_tuple_display(pair)
    assert _cli_spelling("executor", None) == "serial"
    assert _cli_spelling("sections", ("a", "b")) == _cli_value(["a", "b"]) == "a,b"
