"""Scoring image pairs with chosen metrics.

:func:`score_pairs` reads ``(reference, test)`` image files, compares each pair in the reference's data range
with every chosen metric and returns the tidy table ``reference, test, metric, value`` that
``cxreval iqa score`` writes and :func:`cxreval.iqa.compare_with_experts` reads. :func:`select_metrics`
resolves a selection (``'all'``, ``'full'``, ``'no'`` or names) to registry names. How far the metrics rank
the images alike (metric vs metric) is :func:`cxreval.iqa.metric_rank_agreement`.
"""

from __future__ import annotations

import functools
import itertools
import logging
import os
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
import pandas as pd

from .._typing import PathLike
from .._validation import check_positive_int
from ..exceptions import CxrevalError, InvalidParameterError, SchemaError
from ..io.images import LoadedImage, image_size, read_image
from ..results import ReadResult, TableResult, as_table
from ..schema._columns import check_columns
from ._image import check_data_range
from ._metric_selection import MetricSelection, select_metrics
from ._registry import get_metric

if TYPE_CHECKING:
    from ..executor import ExecutorLike
    from ..progress import Progress
    from ._no_reference import NIQEModel

__all__ = [
    "select_metrics",
    "score_pairs",
    "score_pair_batches",
    "MetricSelection",
    "ScoresResult",
    "SCORE_COLUMNS",
]

log = logging.getLogger(__name__)

SCORE_COLUMNS: tuple[str, ...] = ("reference", "test", "metric", "value")
"""Columns of every score table; the other columns of a pairs table are carried (``metric, value`` follow ``test``)."""


def _carried(pairs: object) -> tuple[pd.DataFrame | None, list[str]]:
    """The columns of a pairs table carried onto its score rows, and the score table's column order."""
    if not isinstance(pairs, pd.DataFrame):
        return None, list(SCORE_COLUMNS)
    cols = [str(c) for c in pairs.columns]
    clash = [c for c in ("metric", "value") if c in cols]
    if clash:
        raise SchemaError(f"pairs: column(s) {clash} would be overwritten by the scores; rename them.")
    extra = [c for c in cols if c not in ("reference", "test")]
    if not extra:
        return None, list(SCORE_COLUMNS)
    i = cols.index("test")
    return pairs[extra].reset_index(drop=True), cols[: i + 1] + ["metric", "value"] + cols[i + 1 :]


def _pair_items(pairs: object) -> list[tuple[object, object]]:
    if isinstance(pairs, pd.DataFrame):
        check_columns(pairs, ["reference", "test"], where="pairs")
        return list(zip(pairs["reference"].tolist(), pairs["test"].tolist()))
    if isinstance(pairs, (str, bytes, os.PathLike, Mapping)) or not isinstance(pairs, Sequence):
        raise InvalidParameterError(
            "The 'pairs' parameter of score_pairs must be a DataFrame with columns 'reference' "
            f"and 'test' or a sequence of (reference, test) paths. Got {type(pairs).__name__}."
        )
    items = []
    for i, p in enumerate(pairs):
        if isinstance(p, (str, bytes, os.PathLike)) or not isinstance(p, Sequence) or len(p) != 2:
            raise SchemaError(f"pairs: item {i} must be a (reference, test) pair of image paths. Got {p!r}.")
        items.append((p[0], p[1]))
    return items


def _image_path(path: object, base_dir: Path | None, i: int, role: str) -> Path:
    if not isinstance(path, (str, os.PathLike)) or (isinstance(path, str) and not path.strip()):
        raise SchemaError(f"pairs: pair {i} has no {role} image path (got {path!r}).")
    p = Path(path)
    return base_dir / p if base_dir is not None and not p.is_absolute() else p


def _read(path: object, base_dir: Path | None, i: int, role: str) -> LoadedImage:
    p = _image_path(path, base_dir, i, role)
    try:
        return read_image(p)
    except CxrevalError as exc:
        raise type(exc)(f"pairs: pair {i}, {role} image: {exc}") from exc


def _check_pair_files(items: Sequence[tuple[object, object]], base_dir: Path | None) -> None:
    """Every image exists, has a readable image header, and each pair's two images have one size.

    Reads headers only (:func:`image_size`), so a bad file of pair 199 fails before pair 0 is scored.
    """
    sizes: dict[Path, tuple[int, int]] = {}
    for i, (ref_path, test_path) in enumerate(items):
        got = []
        for path, role in ((ref_path, "reference"), (test_path, "test")):
            p = _image_path(path, base_dir, i, role)
            if p not in sizes:
                try:
                    size = image_size(p)
                    sizes[p] = (size.height, size.width)  # a plain tuple, as messages print it
                except CxrevalError as exc:
                    raise type(exc)(f"pairs: pair {i}, {role} image: {exc}") from exc
            got.append((p, sizes[p]))
        (rp, rs), (tp, ts) = got
        if rs != ts:
            raise SchemaError(f"pairs: pair {i}: reference {rp} {rs} and test {tp} {ts} differ in shape.")


def _score_pair(
    item: tuple[int, object, object],
    *,
    names: Sequence[str],
    data_range: float | None,
    base_dir: Path | None,
    options: Mapping[str, Mapping[str, Any]],
    n_pairs: int,
) -> list[dict[str, object]]:
    """All metrics on one pair (module level, so a process or Dask executor can run it).

    A task carries only the pair's index and paths, the metric names and their small options; the worker
    opens the two images itself (so the images must be on storage every worker sees at the same path).
    """
    i, ref_path, test_path = item
    ref, tst = _read(ref_path, base_dir, i, "reference"), _read(test_path, base_dir, i, "test")
    if ref.image.shape != tst.image.shape:
        raise SchemaError(
            f"pairs: pair {i}: reference {ref.path} {ref.image.shape} and test {tst.path} "
            f"{tst.image.shape} differ in shape."
        )
    if (
        data_range is None
    ):  # the test image in the reference's range (another bit depth is rescaled, no rounding)
        dr = ref.data_range
        test = tst.image * (dr / tst.data_range) if tst.data_range != dr else tst.image
    else:
        dr, test = data_range, tst.image
    rows: list[dict[str, object]] = []
    for n in names:
        spec = get_metric(n)
        try:
            v = (
                spec(ref.image, test, data_range=dr, **options.get(n, {}))
                if spec.reference == "full"
                else spec(test, data_range=dr, **options.get(n, {}))
            )
        except CxrevalError as exc:
            raise type(exc)(f"pairs: pair {i} ({ref.path}, {tst.path}): {exc}") from exc
        rows.append({"reference": str(ref_path), "test": str(test_path), "metric": n, "value": float(v)})
    log.info("scored pair %d/%d", i + 1, n_pairs)
    return rows


def _blocks(
    pairs: object,
    metrics: str | Sequence[str],
    *,
    data_range: float | None,
    base_dir: object,
    metric_options: object,
    executor: ExecutorLike,
    batch_size: int,
    check_files: bool,
    func: str,
) -> Iterator[pd.DataFrame]:
    """Check everything now; return the iterator of blocks (see :func:`score_pair_batches`)."""
    items = _pair_items(pairs)
    extra, order = _carried(pairs)
    selection = select_metrics(metrics, func=func)
    names, skipped = selection.names, selection.skipped
    if skipped:
        log.info("%s: left out metrics needing downloaded weights: %s", func, ", ".join(skipped))
    dr = None if data_range is None else check_data_range(data_range, func=func)
    if base_dir is not None and not isinstance(base_dir, (str, os.PathLike)):
        raise InvalidParameterError(
            f"The 'base_dir' parameter of {func} must be a folder path or None. Got {base_dir!r} instead."
        )
    if metric_options is not None and (
        not isinstance(metric_options, Mapping)
        or not all(isinstance(k, str) and isinstance(v, Mapping) for k, v in metric_options.items())
    ):
        raise InvalidParameterError(
            f"The 'metric_options' parameter of {func} must map metric names to keyword "
            f"mappings, e.g. {{'fsim': {{'downsample': 'pool'}}}}. Got {metric_options!r} instead."
        )
    options = {k.lower(): v for k, v in (metric_options or {}).items()}  # registry names are lower case
    unused = sorted(set(options) - set(names))
    if unused:
        raise InvalidParameterError(
            f"The 'metric_options' parameter of {func} has options for {unused}, which are not "
            f"among the chosen metrics {names}."
        )
    batch_size = check_positive_int(batch_size, name="batch_size", func=func)
    base = Path(base_dir if base_dir is not None else ".").absolute()
    if check_files:
        _check_pair_files(items, base)
    from ..executor import get_executor

    ex = get_executor(executor)
    run = functools.partial(
        _score_pair, names=tuple(names), data_range=dr, base_dir=base, options=options, n_pairs=len(items)
    )

    def blocks() -> Iterator[pd.DataFrame]:
        for start in range(0, len(items), batch_size):
            batch = [(i, r, t) for i, (r, t) in enumerate(items[start : start + batch_size], start)]
            rows = ex.map(run, batch)
            block = pd.DataFrame(list(itertools.chain.from_iterable(rows)), columns=list(SCORE_COLUMNS))
            if extra is not None:  # each pair gave one row per metric, in pair order
                part = extra.iloc[np.repeat(np.arange(start, start + len(batch)), len(names))]
                block = pd.concat([block, part.reset_index(drop=True)], axis=1)[order]
            yield block

    return blocks()


def score_pair_batches(
    pairs: pd.DataFrame | Sequence[tuple[object, object]],
    metrics: str | Sequence[str] = "all",
    *,
    data_range: float | None = None,
    base_dir: PathLike | None = None,
    metric_options: Mapping[str, Mapping[str, Any]] | None = None,
    executor: ExecutorLike = None,
    batch_size: int = 32,
    check_files: bool = True,
) -> Iterator[pd.DataFrame]:
    """:func:`score_pairs` streamed: the score table in consecutive blocks of ``batch_size`` pairs.

    Everything is checked when this function is called, before any pair is scored: the parameters and,
    with ``check_files``, every image file (it exists, its header is an image's, and the two images of a
    pair have one size; headers only). The returned iterator then hands ``batch_size`` pairs at a time to
    ``executor.map`` (the executor cuts them into chunks of pairs, one task each: a task carries paths, metric
    names and options, and its worker reads its own images) and yields each block's rows in input order, so
    a caller can write them as they come; memory holds one block's rows, never the images of all pairs.
    Concatenated, the blocks equal :func:`score_pairs` (same parameters), on every executor.

    Parameters
    ----------
    pairs, metrics, data_range, base_dir, metric_options, executor
        As :func:`score_pairs`. Relative paths are made absolute against ``base_dir`` (default: the working
        directory) here, so workers elsewhere read the same files; the table keeps them as given.
    batch_size : int, default=32
        Pairs per ``executor.map`` call (per block).
    check_files : bool, default=True
        Check every image file's header first.

    Returns
    -------
    blocks : iterator of pandas.DataFrame
        ``reference, test, metric, value`` for ``batch_size`` pairs each (the last may be shorter).

    Raises
    ------
    InvalidParameterError, SchemaError, DataUnavailableError
        As :func:`score_pairs`, raised by this call (bad files included, with ``check_files``); a metric
        that fails on a pair raises when its block is scored.
    """
    return _blocks(
        pairs,
        metrics,
        data_range=data_range,
        base_dir=base_dir,
        metric_options=metric_options,
        executor=executor,
        batch_size=batch_size,
        check_files=check_files,
        func="score_pair_batches",
    )


def score_pairs(
    pairs: pd.DataFrame | ReadResult | Sequence[pd.DataFrame | ReadResult | tuple[object, object]],
    metrics: str | Sequence[str] = "all",
    *,
    data_range: float | None = None,
    base_dir: PathLike | None = None,
    metric_options: Mapping[str, Mapping[str, Any]] | None = None,
    niqe_model: PathLike | NIQEModel | None = None,
    executor: ExecutorLike = None,
    progress: Progress | None = None,
) -> ScoresResult:
    """Score ``(reference, test)`` image pairs with the chosen metrics.

    Each image is read with :func:`~cxreval.io.images.read_image` (float64, its stored type's data range). A
    full-reference metric compares ``(reference, test)``; a no-reference metric scores the test image.
    Every image header is checked before the first pair is scored; :func:`score_pair_batches` streams the
    same table block by block.

    Parameters
    ----------
    pairs : pandas.DataFrame, ReadResult, list of them, or sequence of (path, path)
        A table with columns ``reference`` and ``test``, as ``pairs.csv`` of ``cxreval iqa degrade`` (its
        other columns, e.g. ``image`` and ``degradation``, are carried onto each of the pair's score rows), or
        ``(reference, test)`` tuples of image paths.
    metrics : {'all', 'full', 'no'}, str or sequence of str, default='all'
        See :func:`select_metrics`; selectors leave out the metrics that need downloaded weights.
    data_range : float, optional
        ``None``: each pair is compared in the reference file's data range (255, 65535, ...) and a test image
        of another bit depth is rescaled to it (float64, no rounding). A number: both images are used as read,
        with this range (for example 4095 for 12-bit radiographs stored as 16-bit PNG).
    base_dir : path, optional
        Folder that relative image paths are relative to (``cxreval iqa score`` passes the pairs file's
        folder); by default the working directory.
    metric_options : mapping of str to mapping, optional
        Keyword options per metric, e.g. ``{"fsim": {"downsample": "pool"}, "niqe": {"model": path}}``.
    executor : None, str or object with ``map``, optional
        Where the pairs are scored (:func:`cxreval.executor.get_executor`; in this process by default).
        Tasks carry chunks of pairs (paths) and each worker reads its own images: with a process or Dask
        executor the images must be where every worker sees them. The table is the same on every executor.
    niqe_model : path or NIQEModel, optional
        NIQE's pristine model (:func:`cxreval.iqa.load_niqe_model`'s file, read and checked first): with it
        ``'all'`` and ``'no'`` include ``niqe`` (``metrics`` must include it), and the file is named in
        ``summary()``; without it a selector skips ``niqe``, as no model is bundled.
    progress : Progress, optional
        Told of the pairs scored, block by block (:mod:`cxreval.progress`).

    Returns
    -------
    res : ScoresResult
        ``res.table`` is ``reference, test, metric, value``: one row per pair and metric, pairs in input order
        and metrics in the order chosen; ``reference`` and ``test`` are the paths as given. The other columns
        of a pairs table keep their place, with ``metric, value`` right after ``test`` (pairs ``image,
        reference, test, degradation`` give ``image, reference, test, metric, value, degradation``).
        ``res.selection`` holds the metrics scored and those a selector left out; ``res.save(folder)`` writes
        ``scores.csv``.

    Raises
    ------
    InvalidParameterError
        Unknown, repeated or no metric names; options for a metric not chosen; a bad ``data_range``.
    SchemaError
        ``pairs`` without the two columns, an empty path, an unreadable image or a pair whose images differ in
        shape (the message names the pair and file).
    DataUnavailableError
        An image file that does not exist, or a metric's missing weights or model file.

    Examples
    --------
    >>> import tempfile
    >>> import numpy as np
    >>> from cxreval.io.images import write_image
    >>> x = np.random.default_rng(0).uniform(0, 255, (64, 64))
    >>> with tempfile.TemporaryDirectory() as d:
    ...     ref = write_image(Path(d) / "ref.png", x, data_range=255, dtype="uint8")
    ...     test = write_image(Path(d) / "test.png", x * 0.9, data_range=255, dtype="uint8")
    ...     scores = score_pairs([(ref, test)], ["psnr", "gmsd"])
    >>> scores.table[["metric", "value"]].round(3)
      metric   value
    0   psnr  24.819
    1   gmsd   0.001
    """
    from ..executor import open_executor
    from ..progress import as_progress
    from ._no_reference import NIQEModel, load_niqe_model

    func = "score_pairs"
    if isinstance(pairs, ReadResult) or (
        isinstance(pairs, (list, tuple))
        and pairs
        and all(isinstance(p, (pd.DataFrame, ReadResult)) for p in pairs)
    ):
        pairs = as_table(pairs, name="pairs", func=func)
    model = (
        niqe_model if niqe_model is None or isinstance(niqe_model, NIQEModel) else load_niqe_model(niqe_model)
    )
    selection = select_metrics(metrics, supplied=("niqe",) if model is not None else (), func=func)
    notes: tuple[str, ...] = ()
    if model is not None:
        if "niqe" not in selection.names:
            raise InvalidParameterError(
                f"niqe_model={str(niqe_model)!r} is given but metrics={metrics!r} does not "
                "include niqe; add niqe to metrics or leave out niqe_model."
            )
        metric_options = {
            **(metric_options or {}),
            "niqe": {**(metric_options or {}).get("niqe", {}), "model": model},
        }
        notes = (f"NIQE pristine model: {niqe_model}",)
    prog = as_progress(progress, func=func)
    with open_executor(executor) as ex:
        scored = _blocks(
            pairs,
            list(selection.names),
            data_range=data_range,
            base_dir=base_dir,  # checks now
            metric_options=metric_options,
            executor=ex,
            batch_size=32,
            check_files=True,
            func=func,
        )
        n_pairs = len(_pair_items(pairs))
        task = prog.add(f"scoring pairs ({len(selection.names)} metrics)", total=n_pairs)
        blocks = []
        for block in scored:
            blocks.append(block)
            prog.advance(task, len(block) // len(selection.names))
        prog.done(task)
    if not blocks:
        return ScoresResult(pd.DataFrame(columns=_carried(pairs)[1]), selection, 0, notes)
    table = pd.concat(blocks, ignore_index=True) if len(blocks) > 1 else blocks[0]
    return ScoresResult(table, selection, n_pairs, notes)


@dataclass(frozen=True)
class ScoresResult(TableResult):
    """The scores of image pairs: the table ``cxreval iqa score`` writes as ``scores.csv``.

    Attributes
    ----------
    table : pandas.DataFrame
        :data:`SCORE_COLUMNS` and the columns carried from the pairs table (see :func:`score_pairs`).
    selection : MetricSelection
        The metrics scored and those a selector left out.
    n_pairs : int
        Pairs scored.
    notes : tuple of str
        Listed after the metrics in ``summary()`` (the NIQE model file used).
    """

    FILES: ClassVar[Mapping[str, str]] = MappingProxyType({"scores": "scores.csv"})
    COLUMNS: ClassVar[tuple[str, ...]] = SCORE_COLUMNS

    table: pd.DataFrame
    selection: MetricSelection
    n_pairs: int
    notes: tuple[str, ...] = ()

    def save(self, folder: PathLike) -> dict[str, Path]:
        """Write ``scores`` (CSV + Parquet) and ``summary.md`` (what ``cxreval iqa score`` writes)."""
        from ..io._write import write_summary

        paths = super().save(folder)
        write_summary(Path(folder), self.summary())
        return paths

    def summary(self, title: str = "cxreval iqa score") -> str:
        """Pairs, metrics and skipped metrics, as Markdown (``summary.md`` of ``cxreval iqa score``)."""
        return self.describe(self.n_pairs, self.selection, title=title, notes=self.notes)

    @staticmethod
    def describe(
        n_pairs: int,
        selection: MetricSelection,
        *,
        title: str = "cxreval iqa score",
        notes: Sequence[str] = (),
    ) -> str:
        """:meth:`summary` of a score table written by :meth:`save_batches` (never held in memory); ``notes``
        (e.g. the NIQE model file used) are listed after the metrics."""
        extra = "".join(f"\n- {n}" for n in notes)
        return (
            f"# {title}\n\n{n_pairs} pair(s) x {len(selection.names)} metric(s): {', '.join(selection.names)}."
            f"\n\nSkipped (need downloaded weights): {list(selection.skipped) or 'none'}.\n{extra}"
            + ("\n" if extra else "")
        )

    @classmethod
    def save_batches(
        cls,
        folder: PathLike,
        blocks: Iterable[pd.DataFrame],
        *,
        on_block: Callable[[pd.DataFrame], object] | None = None,
    ) -> int:
        """Write the blocks of :func:`score_pair_batches` into ``folder`` as they come (the same files as
        :meth:`save` of the whole table); call ``on_block(block)`` after each. Returns the rows written."""
        from ..io._write import TableWriter

        with TableWriter(Path(folder), Path(cls.FILES["scores"]).stem) as writer:
            for block in blocks:
                writer.write(block)
                if on_block is not None:
                    on_block(block)
        return int(writer.n_rows)

    def to_dict(self) -> dict[str, object]:
        return {"n_pairs": int(self.n_pairs), "n_scores": int(len(self.table)), **self.selection.to_dict()}

    @classmethod
    def figure(cls, table: pd.DataFrame) -> Any:
        """Each degradation's scores over the test images, a menu switching metric (the report's figure of
        ``scores.csv`` without expert ratings); without a ``degradation`` column, one box per metric."""
        from .._plots.analyses import iqa_by_degradation

        if "degradation" in table.columns and len(table):
            return iqa_by_degradation(table)
        return _metric_boxes(table)


def _metric_boxes(t: pd.DataFrame) -> Any:
    """Each metric's scores in a panel of its own (metrics have their own scales), one box per degradation
    (one box per metric without a ``degradation`` column)."""
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    from .._plots import bars

    if t.empty:
        return bars(t, x="metric", y="value", title="IQA scores")
    metrics = list(dict.fromkeys(t["metric"].astype(str)))
    fig = make_subplots(
        rows=len(metrics),
        cols=1,
        shared_xaxes=True,
        subplot_titles=metrics,
        vertical_spacing=min(0.08, 0.5 / len(metrics)),
    )
    for i, metric in enumerate(metrics, start=1):
        g = t[t["metric"].astype(str) == metric]
        x = g["degradation"].astype(str) if "degradation" in g.columns else None
        fig.add_trace(go.Box(x=x, y=g["value"], name=metric, showlegend=False), row=i, col=1)
    fig.update_layout(
        title="IQA scores per metric" + (" and degradation" if "degradation" in t.columns else ""),
        template="plotly_white",
        height=max(360, 220 * len(metrics)),
    )
    return fig
