"""``cxreval demo``: the main job end to end on real public data, into one HTML report.

:func:`run_demo` (``demo/_runner.py``) runs the declared :data:`cxreval.demo.sections.SECTIONS`
on the data :mod:`cxreval.demo.data` loads (the IQA section's images: :mod:`cxreval.demo.images`) and renders
``OUT/report.html`` from the files they save.
"""

from ._runner import DemoResult, run_demo

__all__ = [
    "DemoResult",
    "run_demo",
]
