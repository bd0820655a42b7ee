"""cxreval's HTML templates: Jinja2 templates shipped as package data in a package's ``templates/`` folder
(``*.html.j2``): the report's (``cxreval.report``: the page, its sections, tables and provenance) and a result's
summary in Jupyter (``cxreval``: ``TableResult._repr_html_`` of :mod:`cxreval.results`).

Every value a template writes is escaped (``autoescape``), with :func:`html.escape`'s rules (``&``, ``<``,
``>``, ``"`` and ``'``), so that a title, a file name or a cell of a table never becomes markup; HTML that the
report builds itself (a rendered table, a Plotly figure, the inlined scripts) is passed as
:class:`markupsafe.Markup` and written as it is. ``report.css`` and ``report.js`` are read as text and inlined
by the page template. :class:`Templates` of a package renders its templates; the environment (jinja2 imported
on first use) is made once per package.
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

__all__ = ["Markup", "Templates"]


def _escaped(value: object) -> object:
    """A value as a template writes it: ``Markup`` unchanged, anything else escaped as ``html.escape`` does."""
    if hasattr(value, "__html__"):
        return value
    return Markup(html.escape(str(value)))


@cache
def _environment(package: str) -> jinja2.Environment:
    import jinja2

    return jinja2.Environment(
        loader=jinja2.PackageLoader(package, "templates"),
        autoescape=True,
        finalize=_escaped,
        trim_blocks=True,
        undefined=jinja2.StrictUndefined,
    )


class Templates:
    """The templates of ``package`` (its ``templates/`` folder)."""

    def __init__(self, package: str) -> None:
        self.package = package

    def render(self, template: str, /, **context: object) -> str:
        """The template ``templates/<template>`` rendered with ``context``, as a plain string."""
        return str(_environment(self.package).get_template(template).render(**context))

    def macro(self, name: str) -> Callable[..., str]:
        """The macro ``name`` of ``templates/fragments.html.j2`` (a small piece of markup: a heading, a block
        of preformatted text), returning its HTML as a plain string."""
        fn = getattr(_environment(self.package).get_template("fragments.html.j2").module, name)

        def call(*args: object) -> str:
            return str(fn(*args))

        return call

    def static_text(self, name: str) -> str:
        """The text of ``templates/<name>`` (a style sheet, a script), inlined as it is."""
        folder = resources.files(self.package).joinpath("templates")
        return folder.joinpath(name).read_text(encoding="utf-8")
