"""Type aliases of cxreval's public signatures (re-exported as ``cxreval.RNGLike``, ...).

- :data:`RNGLike`: what every ``rng=`` parameter accepts, normalised with :func:`numpy.random.default_rng`
  (``None``: fresh entropy; an int or a :class:`~numpy.random.SeedSequence`: a seed; a
  :class:`~numpy.random.Generator`: drawn from as it is).
- :data:`PathLike`: a file or folder, as text or an :class:`os.PathLike` (:class:`pathlib.Path`).
- :data:`FindingsLike`: a choice of findings, as ``"Atelectasis,Edema"`` or a sequence of names; ``None`` for
  every finding of the input.
- :data:`Studies`: the one vocabulary of ``studies=`` (which studies a comparison of several sources uses):
  ``'each'``: each comparison on the studies its own inputs share (an AUC on the studies its reference
  labels; an agreement pair on the studies both sources label); ``'common'``: only the studies every
  source labels, for every comparison; ``'same'``: the sources must label the same studies, otherwise a
  :class:`~cxreval.exceptions.SchemaError`. A function may accept a subset, refusing the others by name.
- :class:`SupportsMap`: any object with ``map(func, items)`` returning the results in item order (a
  ``concurrent.futures`` executor, a ``multiprocessing`` pool), which ``executor=`` accepts beside an
  :class:`~cxreval.executor.Executor`, a spec string or ``None``.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence
from typing import Any, Literal, Protocol, TypeAlias, Union

import numpy as np

__all__ = ["RNGLike", "PathLike", "FindingsLike", "Studies", "SupportsMap"]

RNGLike: TypeAlias = Union[int, np.integer, np.random.SeedSequence, np.random.Generator, None]
"""A seed or generator for ``rng=`` (``np.random.default_rng(rng)`` accepts each)."""

PathLike: TypeAlias = Union[str, os.PathLike[str]]
"""A path as text or an ``os.PathLike`` object."""

FindingsLike: TypeAlias = Union[str, Sequence[str], None]
"""Findings as a comma-separated string or a sequence of names; ``None``: all of them."""

Studies: TypeAlias = Literal["each", "common", "same"]
"""Which studies a comparison of several sources uses (module docstring): ``'each'``, ``'common'``, ``'same'``."""


class SupportsMap(Protocol):
    """An object with ``map(func, items)`` returning ``func``'s results in item order."""

    def map(self, func: Callable[[Any], Any], items: Iterable[Any]) -> Iterable[Any]: ...
