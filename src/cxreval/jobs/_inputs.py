"""What every job checks first: its input paths exist, and its lists of names given as comma-separated text.

The messages name the job's parameters (``labels=/x does not exist.``); the command line shows them as its options
(``--labels /x does not exist.``: :func:`cxreval.cli.main.user_message`).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from .._typing import PathLike
from ..exceptions import InvalidParameterError, SchemaError

__all__ = ["check_input_paths", "split_names"]


def check_input_paths(*named: tuple[str, PathLike | None], kind: str = "any") -> None:
    """Check, before any work, that each ``(parameter, path)`` exists (``None`` skipped); ``kind='file'``: and is
    a file."""
    for name, p in named:
        if p is None:
            continue
        p = Path(p)
        if not p.exists():
            raise SchemaError(f"{name}={p} does not exist.")
        if kind == "file" and not p.is_file():
            raise SchemaError(f"{name}={p} is a folder; a file is expected.")


def split_names(values: str | Sequence[str] | None, *, name: str, unique: bool = True) -> list[str] | None:
    """``'A,B'`` or ``['A,B', 'C']`` -> ``['A', 'B', 'C']`` (None when not given; repeats dropped when
    ``unique``); a value without any name is refused, naming the parameter."""
    if values is None or (not isinstance(values, str) and len(values) == 0):
        return None
    raw = [values] if isinstance(values, str) else [str(v) for v in values]
    items = [x.strip() for v in raw for x in v.split(",") if x.strip()]
    if not items:
        raise InvalidParameterError(f"{name}= needs a comma-separated list. Got {','.join(raw)!r}.")
    return list(dict.fromkeys(items)) if unique else items
