"""The base of the results whose table is ``localization.csv``: its figure, Acc. and AFP against T."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..results import TableResult

if TYPE_CHECKING:
    import pandas as pd

__all__: list[str] = []


class _LocalizationTableResult(TableResult):
    """A :class:`~cxreval.results.TableResult` whose ``table`` is ``localization.csv``."""

    @classmethod
    def figure(cls, table: pd.DataFrame) -> Any:
        """Acc. (left) and AFP (right) against the overlap threshold T, one line per finding, a menu switching
        localizer and variant (the report's figure of ``localization.csv``)."""
        from .._plots.analyses import localization_curves

        return localization_curves(table)
