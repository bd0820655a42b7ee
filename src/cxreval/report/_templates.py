"""The report's templates, ``report/templates/*.html.j2`` (rendered by :class:`cxreval._templates.Templates`)."""

from __future__ import annotations

from .._templates import Markup, Templates

__all__ = ["REPORT", "Markup"]

REPORT = Templates("cxreval.report")
"""The report's templates: the page, its sections, tables, key findings and provenance."""
