"""Function names follow ARCHITECTURE.md "Function names": every public function returning a Result (a job) is
named by a verb (or is an ``x_to_y`` conversion), and no public function returns the bare table of a Result."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import cxreval
from cxreval.results import TableResult

JOB_VERBS = (
    "evaluate",
    "compare",
    "compute",
    "fuse",
    "label",
    "score",
    "degrade",
    "simulate",
    "overlay",
    "audit",
    "export",
    "read",
    "load",
    "rank",
    "finetune",
    "plan",
    "split",
)
# building blocks of compare_with_experts named, like scipy.stats.zscore, for the statistic they compute
STATISTICS = ("zscores", "zscores_for_scores", "metric_agreement")


def _public_functions():
    for mod in pkgutil.walk_packages(cxreval.__path__, "cxreval."):
        if ".cli" in mod.name or mod.name.startswith(("cxreval.reader.app", "cxreval.reader.server")):
            continue
        try:
            m = importlib.import_module(mod.name)
        except ImportError:  # an optional dependency (torch, fastapi) is missing
            continue
        for name in getattr(m, "__all__", ()):
            f = getattr(m, name, None)
            if inspect.isfunction(f) and f.__module__ == m.__name__:
                yield f


def _returns_result(f) -> bool:
    ret = inspect.signature(f).return_annotation
    text = ret if isinstance(ret, str) else getattr(ret, "__name__", "")
    names = {c.__name__ for c in _all(TableResult)}
    return text.strip("'\"") in names


def _all(cls: type) -> set[type]:
    out: set[type] = set()
    for sub in cls.__subclasses__():
        out |= {sub, *_all(sub)}
    return out


def test_every_job_is_named_by_a_verb():
    jobs = [f for f in _public_functions() if _returns_result(f)]
    assert len(jobs) >= 30, [f.__name__ for f in jobs]
    wrong = [
        f"{f.__module__}.{f.__name__}"
        for f in jobs
        if not (
            f.__name__.split("_")[0] in JOB_VERBS
            or "_to_" in f.__name__
            or f.__name__ in STATISTICS
            or f.__name__.startswith("evaluate_prepared")
        )
    ]
    assert not wrong, f"jobs not named by a verb: {wrong}"


def test_no_public_function_returns_the_bare_table_of_a_result():
    twins = []
    for f in _public_functions():
        src = inspect.getsource(f)
        tail = src[src.rfind("return ") :].strip()  # the last return statement, continuation lines included
        if tail.endswith(").table") and "DataFrame" in str(inspect.signature(f).return_annotation):
            twins.append(f"{f.__module__}.{f.__name__}")
    assert not twins, f"bare-table twins of result functions: {twins}"
