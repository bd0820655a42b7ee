"""Result objects shared across cxreval: frozen dataclasses with ``to_dict``."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from ._typing import PathLike

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "ConfidenceInterval",
    "ReadReport",
]


@dataclass(frozen=True, slots=True)
class ConfidenceInterval:
    """A two-sided confidence interval ``(low, high)``."""

    low: float
    high: float

    def to_dict(self) -> dict[str, float]:
        return {"low": float(self.low), "high": float(self.high)}


@dataclass(frozen=True)
class ReadReport:
    """What a reader kept and what it dropped, and why.

    No reader drops a row silently: every row read is either counted in ``n_kept`` or listed in
    ``dropped`` with its reason.

    Attributes
    ----------
    source : str
        The file (or description of the input) that was read.
    n_read : int
        Rows read from the input.
    n_kept : int
        Input rows that contributed to the output table.
    dropped : pandas.DataFrame
        One row per dropped input row: ``row`` (0-based data row, or -1 when not row-specific),
        ``reason`` and ``value``.
    notes : tuple of str
        Other things worth recording (renamed findings, mappings applied).
    """

    source: str
    n_read: int
    n_kept: int
    dropped: pd.DataFrame = field(default_factory=lambda: empty_table(["row", "reason", "value"]))
    notes: tuple[str, ...] = ()

    @property
    def n_dropped(self) -> int:
        return int(len(self.dropped))

    def reasons(self) -> dict[str, int]:
        """Number of dropped rows per reason."""
        if self.dropped.empty:
            return {}
        return {str(k): int(v) for k, v in self.dropped["reason"].value_counts().sort_index().items()}

    def to_dict(self) -> dict[str, object]:
        return {
            "source": self.source,
            "n_read": self.n_read,
            "n_kept": self.n_kept,
            "n_dropped": self.n_dropped,
            "dropped_reasons": self.reasons(),
            "notes": list(self.notes),
        }


def empty_table(columns: list[str] | None = None) -> pd.DataFrame:
    """An empty DataFrame with ``columns`` (the default of a result's table field; pandas loads on first use)."""
    import pandas as pd

    return pd.DataFrame(columns=columns)


def readonly(a: np.ndarray) -> np.ndarray:
    """Return ``a`` marked read-only (for arrays stored on frozen results)."""
    a = np.asarray(a)
    a.setflags(write=False)
    return a


@dataclass(frozen=True)
class ReadResult:
    """A table read from a file, with the :class:`ReadReport` of what was kept and dropped."""

    table: pd.DataFrame
    report: ReadReport
    layout: object | None = None
    """Reader-specific layout needed to write the file back (e.g. :class:`cxreval.labels.WideLayout`)."""


__all__ += ["ReadResult"]


def as_table(value: object, *, name: str, func: str) -> pd.DataFrame:
    """The DataFrame an analysis takes, from what a reader or loader returns.

    ``value`` may be a DataFrame, a :class:`ReadResult` (its ``table``) or a list or tuple of them
    (concatenated in order, with a fresh index). Anything else is an :class:`InvalidParameterError` naming
    ``name`` and ``func``. A vocabulary column (``study_id``, ``patient_id``, ``finding``, ``source``,
    ``state``, ``model``, ``score``) that some parts of a list have and others lack is a
    :class:`~cxreval.exceptions.SchemaError` naming the part, never filled with blanks; other columns are
    carried, blank where a part lacks them: a loader's ``split``, and ``p_positive``, whose blank means "not a
    soft label" (a hard reference beside a soft one). The tables are not changed otherwise.
    """
    import pandas as pd

    from .exceptions import InvalidParameterError, SchemaError
    from .schema import FINDING, MODEL, PATIENT_ID, SCORE, SOURCE, STATE, STUDY_ID

    if isinstance(value, pd.DataFrame):
        return value
    if isinstance(value, ReadResult):
        return value.table
    if isinstance(value, (list, tuple)) and value:
        parts = [as_table(part, name=name, func=func) for part in value]
        if len(parts) == 1:
            return parts[0]
        vocabulary = (STUDY_ID, PATIENT_ID, FINDING, SOURCE, STATE, MODEL, SCORE)
        for column in vocabulary:
            held = [column in part.columns for part in parts]
            if any(held) and not all(held):
                raise SchemaError(
                    f"{func}: {name} part {held.index(False)} (of {len(parts)}, from 0) has no "
                    f"column {column!r}, which part {held.index(True)} has: give every part the "
                    f"same columns."
                )
        return pd.concat(parts, ignore_index=True)
    got = f"an empty {type(value).__name__}" if isinstance(value, (list, tuple)) else type(value).__name__
    raise InvalidParameterError(
        f"{func}: {name} must be a DataFrame, a ReadResult or a list of them; got {got}."
    )


class TableResult:
    """Mixin for a frozen result that owns its files: ``FILES`` and ``COLUMNS`` are class constants.

    A subclass sets ``FILES`` (``{name: "name.csv"}``: what :meth:`save` writes, each with its Parquet twin,
    through :func:`cxreval.io.write_table`) and ``COLUMNS`` (the columns of its ``table``), and implements
    :meth:`tables` (``{name: DataFrame}`` for every name of ``FILES``) and ``summary()`` (Markdown). The CLI
    saves with :meth:`save` and the report reads ``FILES`` and ``COLUMNS``; neither re-types a file or column
    name.
    """

    FILES: ClassVar[Mapping[str, str]] = MappingProxyType({})
    COLUMNS: ClassVar[tuple[str, ...]] = ()

    def tables(self) -> dict[str, pd.DataFrame]:
        """The tables :meth:`save` writes, by the names of ``FILES``: by default the one file of ``FILES``
        holds ``table``; a result with more files overrides this."""
        if len(self.FILES) != 1:
            raise NotImplementedError(
                f"{type(self).__name__} has {len(self.FILES)} files: it defines tables()"
            )
        (name,) = self.FILES
        return {name: self.table}  # type: ignore[attr-defined]

    def save(self, folder: PathLike) -> dict[str, Path]:
        """Write every table of ``FILES`` into ``folder`` (CSV + Parquet; the folder is made when missing); return
        ``{name: csv path}``."""
        from .io import write_table

        tabs = self.tables()
        if set(tabs) != set(self.FILES):
            raise RuntimeError(
                f"{type(self).__name__}.tables() gives {sorted(tabs)}, FILES names {sorted(self.FILES)}"
            )
        Path(folder).mkdir(parents=True, exist_ok=True)
        return {
            name: write_table(tabs[name], Path(folder), Path(file).stem) for name, file in self.FILES.items()
        }

    @classmethod
    def figure(cls, table: pd.DataFrame) -> Any:
        """The figure of a table of this result (its ``table``, or the file :meth:`save` wrote, read back): what
        :meth:`plot` draws and what the HTML report shows for that file."""
        raise NotImplementedError(f"{cls.__name__} draws no figure of a table alone")

    def _figure(self) -> Any:
        """The result's figure (a :class:`plotly.graph_objects.Figure`): by default :meth:`figure` of
        ``table``; a result whose figure needs more than its table overrides this."""
        return type(self).figure(self.table)  # type: ignore[attr-defined]

    def plot(self) -> Any:
        """A Plotly :class:`~plotly.graph_objects.Figure` of the result's main table (at least one trace).

        Call ``.show()`` on it in a notebook, or ``.write_html(path)`` to keep it.
        """
        return self._figure()

    def _repr_html_(self) -> str:
        """Jupyter's view of the result: its title, scalar fields, table sizes and the head of ``table``."""
        return _result_html(self)


__all__ += ["TableResult"]


def _result_html(result: Any, *, n_rows: int = 5) -> str:
    """A compact HTML summary of a result: its title, its scalar fields (``to_dict()``), the size of each table
    it saves and the first ``n_rows`` rows of ``result.table`` (the template ``templates/result.html.j2``)."""
    import pandas as pd
    from markupsafe import Markup

    from ._templates import Templates

    name = type(result).__name__
    title = name
    summary = getattr(result, "summary", None)
    if callable(summary):
        heading = next((ln.lstrip("# ").strip() for ln in summary().splitlines() if ln.startswith("#")), "")
        title = heading or name
    facts: dict[str, object] = {}
    to_dict = getattr(result, "to_dict", None)
    if callable(to_dict):
        facts = {
            k: v
            for k, v in to_dict().items()
            if isinstance(v, (bool, int, float, str, np.integer, np.floating)) and str(v) != ""
        }
    tables = result.tables()
    facts.update({f"rows in {k}": len(t) for k, t in tables.items()})
    table = getattr(result, "table", None)
    if not isinstance(table, pd.DataFrame):
        table = next(iter(tables.values()), None)
    head, n_more = "", 0
    if isinstance(table, pd.DataFrame):
        head = table.head(n_rows).to_html(index=False, border=0, na_rep="—")
        n_more = max(len(table) - n_rows, 0)

    return Templates("cxreval").render(
        "result.html.j2",
        title=title,
        name=name,
        facts=list(facts.items())[:12],
        table=Markup(head),
        n_more=n_more,
    )
