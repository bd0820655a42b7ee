"""Shared boundary checks. Each raises a :class:`~cxreval.exceptions.CxrevalError` subclass whose
message names the parameter, file, column or value and what was expected."""

from __future__ import annotations

import difflib
import os
from collections.abc import Iterable, Sequence, Sized
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np

from ._typing import PathLike, RNGLike
from .exceptions import InvalidParameterError, SchemaError

if TYPE_CHECKING:
    from typing_extensions import TypeIs

_T = TypeVar("_T")

__all__ = [
    "check_consistent_length",
    "check_confidence_level",
    "check_unit_interval",
    "check_positive_int",
    "check_choice",
    "is_number",
    "is_str_sequence",
    "float_array",
    "normalize_rng",
    "check_path",
    "did_you_mean",
    "cell_location",
    "physical_memory",
    "check_memory",
    "check_paths",
    "split_list",
    "check_inputs",
    "check_folder",
    "refuse_options",
]


def normalize_rng(rng: RNGLike) -> np.random.Generator:
    """``np.random.default_rng(rng)`` with a clear error for values it cannot use."""
    try:
        return np.random.default_rng(rng)
    except (TypeError, ValueError) as exc:
        raise InvalidParameterError(
            f"The 'rng' parameter must be None, a non-negative int seed or a numpy Generator. Got {rng!r} "
            "instead."
        ) from exc


def check_consistent_length(*arrays: Sized, names: Sequence[str] | None = None) -> None:
    lengths = [len(a) for a in arrays]
    if len(set(lengths)) > 1:
        named = ", ".join(
            f"{n}={m}" for n, m in zip(names or [f"arg{i}" for i in range(len(arrays))], lengths)
        )
        raise InvalidParameterError(f"Found input variables with inconsistent numbers of samples: {named}.")


def check_unit_interval(value: object, *, name: str, func: str) -> float:
    """A float strictly between 0 and 1 (a level, a probability), else :class:`InvalidParameterError` naming
    ``name``."""
    if not is_number(value) or not 0 < float(value) < 1:
        raise InvalidParameterError(
            f"The '{name}' parameter of {func} must be a float in (0, 1). Got {value!r} instead."
        )
    return float(value)


def check_confidence_level(value: object, *, func: str) -> float:
    return check_unit_interval(value, name="confidence_level", func=func)


def check_positive_int(value: object, *, name: str, func: str, minimum: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or int(value) < minimum:
        raise InvalidParameterError(
            f"The '{name}' parameter of {func} must be an int >= {minimum}. Got {value!r} instead."
        )
    return int(value)


def check_choice(value: _T, choices: Iterable[object], *, name: str, func: str) -> _T:
    """Return ``value`` unchanged if it is one of ``choices``, else raise naming the parameter."""
    choices = tuple(choices)
    if value not in choices:
        raise InvalidParameterError(
            f"The '{name}' parameter of {func} must be one of {list(choices)}. Got {value!r} instead."
        )
    return value


def is_number(value: object) -> TypeIs[int | float | np.integer | np.floating]:
    """Whether ``value`` is a real number (Python or NumPy int or float), never a bool."""
    return not isinstance(value, bool) and isinstance(value, (int, float, np.integer, np.floating))


def is_str_sequence(value: object) -> TypeIs[Sequence[str] | np.ndarray]:
    """Whether ``value`` is a sequence (or array) of str, not a str itself."""
    return (
        not isinstance(value, str)
        and isinstance(value, (Sequence, np.ndarray))
        and all(isinstance(v, str) for v in value)
    )


def float_array(value: object, error: Exception) -> np.ndarray:
    """``value`` as a float64 array; ``error`` (naming the parameter) when it cannot be one."""
    try:
        return np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise error from exc


def check_path(value: object, *, name: str, func: str, allow_none: bool = True) -> Path | None:
    """``Path(value)``, or an :class:`InvalidParameterError` naming the parameter when it is not a path."""
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, (str, os.PathLike)):
        none = " or None" if allow_none else ""
        raise InvalidParameterError(
            f"The '{name}' parameter of {func} must be a path (str or os.PathLike){none}. "
            f"Got {value!r} instead."
        )
    return Path(value)


def did_you_mean(name: str, choices: Iterable[str], *, n: int = 3, cutoff: float = 0.6) -> str:
    """``" Did you mean 'a', 'b'?"`` for the close matches of ``name`` among ``choices``, else ``""``."""
    close = difflib.get_close_matches(name, list(choices), n=n, cutoff=cutoff)
    return f" Did you mean {', '.join(map(repr, close))}?" if close else ""


def cell_location(where: str, row: int | None = None, column: str | None = None) -> str:
    """``"WHERE, row R, column 'C'"``: where a bad value sits in a table, for an error message."""
    parts = [where]
    if row is not None:
        parts.append(f"row {row}")
    if column is not None:
        parts.append(f"column {column!r}")
    return ", ".join(parts)


def read_yaml_file(path: PathLike, *, what: str) -> Any:
    """Parse a user's YAML file; every failure is one :class:`SchemaError` line naming ``what`` and the path.

    Missing file, bytes that are not UTF-8 (with the byte offset) and YAML syntax errors (with line and column)
    are refused; the parsed value (``None`` for an empty file) is returned unchecked.
    """
    import yaml

    p = Path(path)
    if not p.is_file():
        raise SchemaError(f"{what} {str(p)!r} does not exist.")
    try:
        return yaml.safe_load(p.read_bytes().decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise SchemaError(f"{what} {str(p)!r} is not UTF-8 text (byte {exc.start}).") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        at = f" (line {mark.line + 1}, column {mark.column + 1})" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise SchemaError(f"{what} {str(p)!r} is not valid YAML{at}: {problem}.") from None


def physical_memory() -> int | None:
    """This machine's physical memory in bytes (None where the system does not say)."""
    try:
        return int(os.sysconf("SC_PHYS_PAGES")) * int(os.sysconf("SC_PAGE_SIZE"))
    except (AttributeError, OSError, ValueError):
        return None


def check_memory(nbytes: float, *, what: str, name: str, func: str) -> None:
    """Refuse, before allocating it, an array that cannot fit in this machine's memory: the message names the
    parameter, the memory needed and the memory there is."""
    total = physical_memory()
    if total is not None and nbytes > total:
        raise InvalidParameterError(
            f"The '{name}' parameter of {func} asks for {what}, which needs "
            f"{nbytes / 2**30:,.1f} GiB of memory; this machine has {total / 2**30:,.1f} GiB. "
            f"Choose a smaller value."
        )


def check_paths(func: str, required: Sequence[str] = (), **named: object) -> None:
    """:func:`check_path` on each of ``named`` (``None`` allowed unless its name is in ``required``)."""
    for name, value in named.items():
        check_path(value, name=name, func=func, allow_none=name not in required)


def split_list(values: str | Sequence[str] | None, *, option: str, unique: bool = True) -> list[str] | None:
    """``--findings A,B --findings C`` -> ``['A', 'B', 'C']`` (None when not given), first occurrences kept in
    order (every item when not ``unique``); a value with no item is refused, naming ``option``."""
    if values is None or (not isinstance(values, str) and len(values) == 0):
        return None
    raw = [values] if isinstance(values, str) else [str(v) for v in values]
    items = [x.strip() for v in raw for x in v.split(",") if x.strip()]
    if not items:
        raise InvalidParameterError(f"{option} needs a comma-separated list. Got {','.join(raw)!r}.")
    return list(dict.fromkeys(items)) if unique else items


def check_inputs(*named: tuple[str, PathLike | None], kind: str = "any", sep: str = " ") -> None:
    """Check that every given input path exists (a file when ``kind='file'``), before any computation:
    ``check_inputs(("--labels", path), ...)``; None paths are skipped. The message names the option and the path
    joined by ``sep`` (``--labels /x``; a job's ``labels=/x`` with ``sep='='``)."""
    for option, path in named:
        if path is None:
            continue
        p = Path(path)
        if not p.exists():
            raise SchemaError(f"{option}{sep}{p} does not exist.")
        if kind == "file" and not p.is_file():
            raise SchemaError(f"{option}{sep}{p} is a folder; a file is expected.")


def check_folder(option: str, path: PathLike | None, *, write: bool = False) -> None:
    """A folder option (``--cache-dir``, ``--data-mirror``) must be a folder, or creatable under a writable
    folder when ``write``; checked before any work, as a one-line error (nothing for None)."""
    if path is None:
        return
    p = Path(path).expanduser()
    if p.exists() and not p.is_dir():
        raise SchemaError(f"{option} {p} is a file; a folder is expected.")
    anc = p
    while not anc.exists() and anc.parent != anc:
        anc = anc.parent
    if not anc.is_dir():
        raise SchemaError(f"{option} {p}: {anc} is a file, so {p} cannot be a folder.")
    if write and not os.access(anc, os.W_OK | os.X_OK):
        raise SchemaError(f"{option} {p}: the folder {anc} is not writable.")


def refuse_options(given: bool, message: str) -> None:
    """A combination of options that does not apply: a :class:`SchemaError` with ``message`` when ``given``."""
    if given:
        raise SchemaError(message)
