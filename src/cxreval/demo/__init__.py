"""``cxreval demo``: the main job end to end on real public data, into one HTML report.

:func:`run_demo` (:mod:`cxreval.demo.runner`) runs the declared :data:`SECTIONS` (:mod:`cxreval.demo.sections`)
on the data :mod:`cxreval.demo.data` loads (the IQA section's images: :mod:`cxreval.demo.images`) and renders
``OUT/report.html`` from the files they save.
"""

from .data import (
    CHEXPERT_BENCH_READERS,
    CHEXPERT_COMPETITION,
    CHEXPERT_GT_READERS,
    CHEXPERT_MODELS,
    NIH_MODELS,
    DemoContext,
    NotBuilt,
    rerun_command,
)
from .runner import DemoResult, DemoSection, run_demo
from .sections import SECTIONS, DemoSpec

__all__ = ["DemoContext", "DemoSection", "DemoResult", "DemoSpec", "SECTIONS", "run_demo", "NotBuilt", "rerun_command",
           "NIH_MODELS", "CHEXPERT_MODELS", "CHEXPERT_GT_READERS", "CHEXPERT_BENCH_READERS", "CHEXPERT_COMPETITION"]
