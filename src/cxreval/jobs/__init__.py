"""The jobs: one function per command, above the analyses.

A job takes what a user has (DataFrames, or paths to files), checks it before any long computation, runs the
analyses and returns one Result that owns every file the command writes: ``cxreval X ... -o out`` is
``job(...).save(out)``, byte for byte (``run.json`` aside). The command-line shells in ``cxreval.cli`` parse
options, call one job, save and print; the analyses below never import a job.
"""

from __future__ import annotations

__all__: list[str] = []
