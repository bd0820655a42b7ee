"""The report's HTML templates: Jinja2 templates shipped as package data in ``templates/`` (``*.html.j2``).

Every value a template writes is escaped (``autoescape``), with :func:`html.escape`'s rules (``&``, ``<``,
``>``, ``"`` and ``'``), so that a title, a file name or a cell of a table never becomes markup; HTML that the
report builds itself (a rendered table, a Plotly figure, the inlined scripts) is passed as
:class:`markupsafe.Markup` and written as it is. ``report.css`` and ``report.js`` are read as text and inlined
by the page template.
"""

from __future__ import annotations

import html
from collections.abc import Callable
from functools import cache
from importlib import resources
from typing import TYPE_CHECKING

from markupsafe import Markup

if TYPE_CHECKING:
    import jinja2

__all__ = ["Markup", "render", "macro", "static_text"]


def _escaped(value: object) -> object:
    """A value as a template writes it: ``Markup`` unchanged, anything else escaped as ``html.escape`` does."""
    if hasattr(value, "__html__"):
        return value
    return Markup(html.escape(str(value)))


@cache
def _environment() -> jinja2.Environment:
    import jinja2

    return jinja2.Environment(
        loader=jinja2.PackageLoader("cxreval.report", "templates"),
        autoescape=True,
        finalize=_escaped,
        trim_blocks=True,
        undefined=jinja2.StrictUndefined,
    )


def render(name: str, **context: object) -> str:
    """The template ``templates/<name>`` rendered with ``context``, as a plain string."""
    return str(_environment().get_template(name).render(**context))


def macro(name: str) -> Callable[..., str]:
    """The macro ``name`` of ``templates/fragments.html.j2`` (a small piece of markup: a heading, a block of
    preformatted text), returning its HTML as a plain string."""
    fn = getattr(_environment().get_template("fragments.html.j2").module, name)

    def call(*args: object) -> str:
        return str(fn(*args))

    return call


def static_text(name: str) -> str:
    """The text of ``templates/<name>`` (the page's style sheet and script), inlined as it is."""
    return resources.files("cxreval.report").joinpath("templates").joinpath(name).read_text(encoding="utf-8")
