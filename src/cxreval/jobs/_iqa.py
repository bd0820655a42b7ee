"""The jobs of ``cxreval iqa list|degrade|score|compare|agree``: the command's checks and reads of its input
files, then the :mod:`cxreval.iqa` analysis; each returns the Result the command saves."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from .._typing import PathLike, RNGLike
from .._validation import check_inputs, check_paths
from ..exceptions import CxrevalError, InvalidParameterError, SchemaError
from ..iqa._expert import IQA_KENDALL, IQA_SPEARMAN
from ._inputs import check_out

if TYPE_CHECKING:
    import pandas as pd

    from ..executor import ExecutorLike
    from ..iqa import DegradeResult, ExpertAgreementResult, MetricComparisonResult, MetricSpec, ScoresResult
    from ..iqa._degrade import DegradationPlan
    from ..progress import Progress

__all__ = [
    "list_iqa_metrics",
    "degrade_image_folder",
    "score_pairs_file",
    "compare_metrics_file",
    "compare_with_experts_files",
]


def _read_csv(path: PathLike, option: str, columns: tuple[str, ...], dtype: object = None) -> pd.DataFrame:
    """Read a CSV input of an IQA job; an empty file, a header without rows, a missing column or a blank cell
    in one of ``columns`` is a one-line :class:`SchemaError` naming ``option`` and the file."""
    import pandas as pd

    from ..io._read import read_csv_file

    def why(f: Path, exc: BaseException) -> str:
        if isinstance(exc, pd.errors.EmptyDataError):
            return f"{option} file {f} is empty; expected a header with columns {', '.join(columns)} and at least one row."
        return f"{option} file {f} cannot be read as CSV: {exc}"

    df = read_csv_file(path, error=why, dtype=dtype)
    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise SchemaError(f"{option} file {path} has no column(s) {missing}; columns are {list(df.columns)}.")
    if len(df) == 0:
        raise SchemaError(f"{option} file {path} has no rows.")
    for c in columns:  # a blank cell in a required column is refused, never read as the text 'nan'
        blank = df[c].isna().to_numpy() | (df[c].astype(str).str.strip() == "").to_numpy()
        if blank.any():
            i = int(np.flatnonzero(blank)[0])
            raise SchemaError(
                f"{option} file {path}: blank cell in row {i}, column {c!r} ({int(blank.sum())} "
                f"such rows); every row needs a {c}."
            )
    return df


def list_iqa_metrics(reference: str | None = None) -> list[MetricSpec]:
    """The registered IQA metrics' specs, sorted by name (``cxreval iqa list``).

    Parameters
    ----------
    reference : {'full', 'no'} or None, default=None
        Only the full-reference or the no-reference metrics; ``None``: all.

    Returns
    -------
    specs : list of MetricSpec
    """
    from ..iqa import get_metric, list_metrics

    if reference not in (None, "full", "no"):
        raise InvalidParameterError(f"reference= must be 'full' or 'no'. Got {reference!r}.")
    return [get_metric(n) for n in list_metrics(reference=reference)]  # type: ignore[arg-type]


def degrade_image_folder(
    images: PathLike,
    plan: DegradationPlan | str | Path,
    out: PathLike,
    *,
    sample: int | None = None,
    max_size: int | None = None,
) -> DegradeResult:
    """Degrade the images of the folder ``images`` into ``out`` (``cxreval iqa degrade``): ``images`` must be
    a folder, then :func:`cxreval.iqa.degrade_folder` writes ``out/references/`` and ``out/images/``.

    Returns
    -------
    res : DegradeResult
        ``res.save(out)`` writes the tables and ``summary.md`` beside the images.
    """
    from ..iqa import degrade_folder

    check_paths("degrade_image_folder", ("images", "out"), images=images, out=out)
    if not Path(images).is_dir():
        raise SchemaError(f"images= {images} is not a folder.")
    return degrade_folder(images, plan, out, sample=sample, max_size=max_size)


def score_pairs_file(
    pairs: PathLike,
    metrics: str = "all",
    *,
    niqe_model: PathLike | None = None,
    executor: ExecutorLike = None,
    progress: Progress | None = None,
    out: PathLike | None = None,
    overwrite: bool = False,
) -> ScoresResult:
    """Score the image pairs listed in the CSV file ``pairs`` (``cxreval iqa score``).

    The file (and ``niqe_model``) must exist; ``pairs`` needs columns ``reference`` and ``test`` without a
    blank cell, its relative image paths are relative to its folder; ``out``, when given, is checked before
    any image is read. Then :func:`cxreval.iqa.score_pairs`; its errors are prefixed with the pairs file.

    Returns
    -------
    res : ScoresResult
    """
    from ..iqa import score_pairs

    check_paths("score_pairs_file", ("pairs",), pairs=pairs, niqe_model=niqe_model, out=out)
    check_inputs(("--pairs", pairs), ("--niqe-model", niqe_model), kind="file")
    table = _read_csv(pairs, "--pairs", ("reference", "test"), dtype=str)
    check_out(out, overwrite=overwrite, inputs=[pairs, niqe_model])
    try:  # every image header is checked before the first pair is scored
        return score_pairs(
            table,
            metrics,
            base_dir=Path(pairs).parent,
            niqe_model=niqe_model,
            executor=executor,
            progress=progress,
        )
    except CxrevalError as exc:  # name the file: the library names the pair
        raise type(exc)(f"{pairs}: {exc}") from exc


def compare_metrics_file(
    scores: PathLike, *, out: PathLike | None = None, overwrite: bool = False
) -> MetricComparisonResult:
    """Metric vs metric on the file ``scores`` (``scores.csv`` of ``cxreval iqa score`` on pairs that carry
    their degradation; ``cxreval iqa compare``): :func:`cxreval.iqa.compare_metrics`.

    Returns
    -------
    res : MetricComparisonResult
    """
    from ..iqa import compare_metrics

    check_paths("compare_metrics_file", ("scores",), scores=scores, out=out)
    check_inputs(("--scores", scores), kind="file")
    scores_df = _read_csv(
        scores,
        "--scores",
        ("test", "metric", "value", "degradation"),
        dtype={"reference": str, "test": str, "metric": str, "degradation": str, "image": str},
    )
    check_out(out, overwrite=overwrite, inputs=[scores])  # a bad out is refused before computing
    return compare_metrics(scores_df)


def compare_with_experts_files(
    scores: PathLike,
    ratings: PathLike,
    *,
    scale_min: float = 1,
    scale_max: float = 4,
    unscored: str = "keep",
    n_resamples: int = 1000,
    confidence_level: float = 0.95,
    rng: RNGLike = None,
    ddof: int = 0,
    spearman: str = IQA_SPEARMAN,
    kendall: str = IQA_KENDALL,
    out: PathLike | None = None,
    overwrite: bool = False,
) -> ExpertAgreementResult:
    """Metric vs experts from the files ``scores`` (``scores.csv`` of ``cxreval iqa score``) and ``ratings``
    (``image, rater, rating``; ``cxreval iqa agree``): :func:`cxreval.iqa.compare_with_experts` on the scale
    ``[scale_min, scale_max]``.

    Returns
    -------
    res : ExpertAgreementResult
    """
    from ..iqa import compare_with_experts

    check_paths("compare_with_experts_files", ("scores", "ratings"), scores=scores, ratings=ratings, out=out)
    check_inputs(("--scores", scores), ("--ratings", ratings), kind="file")
    if not (np.isfinite(scale_min) and np.isfinite(scale_max) and scale_min < scale_max):
        raise InvalidParameterError(
            f"scale_min= and scale_max= must be finite with scale_min= < scale_max=. "
            f"Got {scale_min} and {scale_max}."
        )
    ratings_df = _read_csv(ratings, "--ratings", ("image", "rater", "rating"))
    scores_df = _read_csv(scores, "--scores", ("reference", "test", "metric", "value"))
    check_out(out, overwrite=overwrite, inputs=[scores, ratings])  # a bad out: refused before computing
    return compare_with_experts(
        ratings_df,
        scores_df,
        unscored=unscored,
        scale=(scale_min, scale_max),
        n_resamples=n_resamples,
        confidence_level=confidence_level,
        rng=rng,
        ddof=ddof,
        spearman=spearman,
        kendall=kendall,
    )
