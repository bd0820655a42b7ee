"""What every job checks first: its input paths exist, its output folder can be written, and its lists of names
given as comma-separated text.

The messages name the job's parameters (``labels=/x does not exist.``); the command line shows them as its options
(``--labels /x does not exist.``: :func:`cxreval.cli.main.user_message`).
"""

from __future__ import annotations

from collections.abc import Sequence

from .._typing import PathLike
from .._validation import check_inputs, split_list

__all__ = ["check_input_paths", "check_out", "split_names"]


def check_input_paths(*named: tuple[str, PathLike | None], kind: str = "any") -> None:
    """Check, before any work, that each ``(parameter, path)`` exists (``None`` skipped); ``kind='file'``: and is
    a file."""
    check_inputs(*named, kind=kind, sep="=")


def check_out(out: PathLike | None, *, overwrite: bool, inputs: Sequence[PathLike | None]) -> None:
    """A bad ``out`` (None: no output) is refused before any reading or computation (nothing is written here)."""
    if out is not None:
        from ..outputs._folder import check_output_path

        check_output_path(out, overwrite=overwrite, inputs=[p for p in inputs if p])


def split_names(values: str | Sequence[str] | None, *, name: str, unique: bool = True) -> list[str] | None:
    """``'A,B'`` or ``['A,B', 'C']`` -> ``['A', 'B', 'C']`` (None when not given; repeats dropped when
    ``unique``); a value without any name is refused, naming the parameter."""
    return split_list(values, option=f"{name}=", unique=unique)
