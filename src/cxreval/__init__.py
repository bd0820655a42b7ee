"""cxreval: clinically grounded evaluation of chest X-ray machine learning.

Does a conclusion (which model, localizer or image-processing method is best) survive a change of
evaluation reference? cxreval loads every label source into one table and measures how rankings move.

Importing ``cxreval`` is cheap and has no side effects: only the exceptions load eagerly. The jobs
re-exported here (``cxreval.compare_references``, ``cxreval.evaluate_classifiers``, ...), the dataset
loaders and the subpackages (``cxreval.classification``, ``cxreval.report``, ...) are imported on first
access (PEP 562 module ``__getattr__``), so ``import cxreval`` does not pull in pandas, SciPy or plotly.
The analyses' functions and results live in their packages (``from cxreval.fusion import fuse_labels``).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from . import jobs as _jobs
from ._version import __version__ as __version__
from .exceptions import (
    CxrevalError,
    CxrevalWarning,
    DataUnavailableError,
    InvalidParameterError,
    SchemaError,
    UndefinedMetricWarning,
)

# the jobs re-exported here: every public name of cxreval.jobs but its constants and its helpers of a command's
# text (cxreval.jobs is a lazy package: importing it loads no analysis)
_JOBS: tuple[str, ...] = tuple(n for n in _jobs.__all__ if not n.isupper() and n != "label_rules_text")

# public name -> the submodule (relative to cxreval) that defines it; imported on first access
_LAZY_ATTRS: dict[str, str] = {
    # the jobs of the commands and their results (:data:`_JOBS`)
    **dict.fromkeys(_JOBS, "jobs"),
    # data, execution and the type aliases of the public signatures
    "load_dataset": "datasets",
    "list_datasets": "datasets",
    "get_executor": "executor",
    "ExecutorLike": "executor",
    "RNGLike": "_typing",
    "PathLike": "_typing",
    "FindingsLike": "_typing",
    "Studies": "_typing",
    # the option groups of the jobs
    "Design": "options",
    "Resampling": "options",
    "Compute": "options",
}

_SUBMODULES: tuple[str, ...] = (
    "agreement",
    "bootstrap",
    "classification",
    "datasets",
    "exceptions",
    "executor",
    "findings",
    "fusion",
    "iqa",
    "jobs",
    "labels",
    "options",
    "localization",
    "ranking",
    "report",
    "results",
)

__all__ = [
    "CxrevalError",
    "CxrevalWarning",
    "DataUnavailableError",
    "InvalidParameterError",
    "SchemaError",
    "UndefinedMetricWarning",
    *_JOBS,
    "load_dataset",
    "list_datasets",
    "get_executor",
    "ExecutorLike",
    "RNGLike",
    "PathLike",
    "FindingsLike",
    "Studies",
    "Design",
    "Resampling",
    "Compute",
]

if TYPE_CHECKING:  # what the lazy names resolve to, for type checkers and IDEs
    from ._typing import FindingsLike, PathLike, RNGLike, Studies
    from .datasets import list_datasets, load_dataset
    from .executor import ExecutorLike, get_executor
    from .jobs import *  # noqa: F403  (the names of _JOBS)
    from .options import Compute, Design, Resampling


def __getattr__(name: str) -> Any:
    """Import a subpackage or a re-exported entry point on first access (PEP 562)."""
    if name in _LAZY_ATTRS:
        value = getattr(importlib.import_module(f".{_LAZY_ATTRS[name]}", __name__), name)
    elif name in _SUBMODULES:
        value = importlib.import_module(f".{name}", __name__)
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
