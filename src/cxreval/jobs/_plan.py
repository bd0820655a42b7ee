"""The jobs of ``cxreval plan``, on files: an expert's relabelling (:func:`plan_relabelling_files`, the analysis
:func:`cxreval.planning.plan_relabelling`) and a reader study sized from a pilot (:func:`plan_reader_study_files`,
:func:`~cxreval.jobs.plan_reader_study`). Each reads the tables the command names, checks the options given as
on the command line (comma-separated counts) and returns the Result whose ``save`` writes the command's files."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from .._typing import PathLike, RNGLike
from ..exceptions import InvalidParameterError
from ..executor import ExecutorLike
from ..planning import RelabelPlanResult
from ..progress import Progress
from ._reader_study_plan import ReaderStudyPlanResult, plan_reader_study

__all__ = ["plan_relabelling_files", "plan_reader_study_files"]


def _counts(value: str | Sequence[int] | None, *, name: str, func: str) -> list[int] | None:
    """Whole numbers given as ``'4,6,8'`` (the command line's form) or as a sequence; None when not given."""
    if value is None:
        return None
    if not isinstance(value, str):
        return [int(v) for v in value]
    items = list(dict.fromkeys(x.strip() for x in value.split(",") if x.strip()))
    if not items:
        raise InvalidParameterError(
            f"The '{name}' parameter of {func} needs a comma-separated list. Got {value!r}."
        )
    bad = [i for i in items if not (i.isascii() and i.isdigit())]  # ('²'.isdigit() is True, int('²') fails)
    if bad:
        raise InvalidParameterError(
            f"The '{name}' parameter of {func} must be whole numbers (digits 0-9), comma-separated. Got "
            f"{value!r}: {bad[0]!r} is not one."
        )
    return [int(i) for i in items]


def plan_relabelling_files(
    predictions: Sequence[str | Path] | None,
    labels: Sequence[str | Path],
    *,
    reference: str,
    budget: int | None,
    readers: Sequence[str] | None = None,
    anchor: str | None = None,
    anchor_studies: PathLike | None = None,
    findings: Sequence[str] | None = None,
    budgets: str | Sequence[int] | None = None,
    n_draws: int = 200,
    confidence_level: float = 0.95,
    target_power: float = 0.8,
    uniform_floor: float = 0.2,
    images: PathLike | None = None,
    state_encoding: str | None = None,
    blank_state: str | None = None,
    rng: RNGLike = None,
    executor: ExecutorLike = None,
    progress: Progress | None = None,
) -> RelabelPlanResult:
    """:func:`cxreval.planning.plan_relabelling` of prediction and label files: what ``cxreval plan`` runs.

    Parameters
    ----------
    predictions, labels : sequence of path
        Long prediction and label tables (CSV/Parquet), each list read as one table
        (:func:`~cxreval.labels.read_prediction_tables`, :func:`~cxreval.labels.read_label_tables` with
        ``state_encoding`` and ``blank_state``). ``predictions`` is required (None is refused, naming it).
    budget : int
        Required (None or 0 is refused, naming it).
    anchor_studies : path, optional
        A table with a ``study_id`` column (e.g. an earlier plan's ``relabel.csv``, whose
        ``inclusion_probability`` makes it the design of the anchor's labels), read as text.
    budgets : str or sequence of int, optional
        The budgets of ``power.csv``, comma-separated (``'0,10,20'``) or as numbers.
    reference, readers, anchor, findings, n_draws, confidence_level, target_power, uniform_floor, images, rng
    executor, progress
        As for :func:`cxreval.planning.plan_relabelling`.

    Returns
    -------
    res : RelabelPlanResult
    """
    from ..io import read_table
    from ..labels._files import read_label_tables, read_prediction_tables
    from ..planning import plan_relabelling  # looked up at the call: what the command-line tests watch

    func = "plan_relabelling_files"
    for name, value in (("predictions", predictions), ("budget", budget)):
        if not value:
            raise InvalidParameterError(
                f"Missing option {name}=: a relabelling plan needs predictions= and budget= (or plan a reader "
                "study with pilot=)."
            )
    assert predictions is not None and budget is not None  # checked above
    grid = _counts(budgets, name="budgets", func=func)
    return plan_relabelling(
        read_prediction_tables(list(predictions))[0],
        read_label_tables(list(labels), state_encoding=state_encoding, blank_state=blank_state)[0],
        reference=reference,
        budget=budget,
        readers=readers,
        anchor=anchor,
        anchor_studies=None if anchor_studies is None else read_table(Path(anchor_studies), text=True),
        findings=findings,
        budgets=grid,
        n_draws=n_draws,
        confidence_level=confidence_level,
        target_power=target_power,
        uniform_floor=uniform_floor,
        images=images,
        rng=rng,
        executor=executor,
        progress=progress,
    )


def plan_reader_study_files(
    pilot: PathLike,
    labels: Sequence[str | Path],
    *,
    reference: str,
    findings: Sequence[str] | None = None,
    effect: float | None = None,
    target_power: float = 0.8,
    n_readers: str | Sequence[int] = (4, 6, 8, 10, 12),
    alpha: float = 0.05,
    analysis: str = "RRRC",
    washout_days: float = 28,
    images: PathLike | None = None,
    latent_sources: Sequence[str] | None = None,
    state_encoding: str | None = None,
    blank_state: str | None = None,
    rng: RNGLike = None,
) -> ReaderStudyPlanResult:
    """:func:`~cxreval.jobs.plan_reader_study` of a pilot's ratings file and label files: what ``cxreval plan
    --pilot`` runs.

    Parameters
    ----------
    pilot : path
        The pilot's ratings table (CSV/Parquet; :func:`cxreval.mrmc.read_ratings`).
    labels : sequence of path
        Long label tables, read as one (:func:`~cxreval.labels.read_label_tables` with ``state_encoding`` and
        ``blank_state``).
    findings : sequence of str, optional
        The one finding to plan for (at most one).
    n_readers : str or sequence of int, default=(4, 6, 8, 10, 12)
        Reader counts to size, comma-separated (``'4,6,8'``) or as numbers.
    reference, effect, target_power, alpha, analysis, washout_days, images, latent_sources, rng
        As for :func:`~cxreval.jobs.plan_reader_study`.

    Returns
    -------
    res : ReaderStudyPlanResult
    """
    from ..labels._files import read_label_tables
    from ..mrmc._ratings import read_ratings

    func = "plan_reader_study_files"
    wanted = list(findings or [])
    if len(wanted) > 1:
        raise InvalidParameterError(f"pilot= plans one finding; findings= names {len(wanted)}: {wanted}.")
    counts = _counts(n_readers, name="n_readers", func=func)
    return plan_reader_study(
        read_ratings(Path(pilot)),
        read_label_tables(list(labels), state_encoding=state_encoding, blank_state=blank_state)[0],
        reference=reference,
        finding=wanted[0] if wanted else None,
        effect=effect,
        target_power=target_power,
        n_readers=counts or [],
        alpha=alpha,
        analysis=analysis,
        washout_days=washout_days,
        images=images,
        latent_sources=latent_sources,
        rng=rng,
    )
