"""The job of ``cxreval label-reports``: a report file in, :class:`~cxreval.labeller.ReportLabelsResult` out; and
the packaged rules as text (``--print-rules``)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from .._typing import FindingsLike, PathLike, RNGLike
from ..exceptions import InvalidParameterError, SchemaError
from ..labeller._rules import CONVENTIONS, DEFAULT_CONVENTIONS, VOCABULARIES, packaged_rules_text
from ._inputs import check_input_paths, split_names

if TYPE_CHECKING:
    from ..executor import ExecutorLike
    from ..labeller import ReportLabelsResult
    from ..progress import Progress

__all__ = ["label_reports_file", "label_rules_text"]

_PROGRESS_MIN = 5000  # reports; below this no progress


def _check_vocabulary(vocabulary: str, conventions: str, *, func: str) -> None:
    if vocabulary not in VOCABULARIES:
        raise InvalidParameterError(
            f"The 'vocabulary' parameter of {func} must be one of {list(VOCABULARIES)}. Got {vocabulary!r}."
        )
    if conventions not in CONVENTIONS:
        raise InvalidParameterError(
            f"The 'conventions' parameter of {func} must be one of {list(CONVENTIONS)}. Got {conventions!r}."
        )


def label_rules_text(vocabulary: str = "chestxray14", *, conventions: str = DEFAULT_CONVENTIONS) -> str:
    """The packaged rules of ``vocabulary`` as YAML text (:func:`cxreval.labeller.packaged_rules_text`), a starting
    point for a rules file: what ``cxreval label-reports --print-rules`` prints. ``conventions`` is checked as
    :func:`label_reports_file` checks it."""
    _check_vocabulary(vocabulary, conventions, func="label_rules_text")
    return packaged_rules_text(vocabulary)


def label_reports_file(
    reports: PathLike | None,
    out: PathLike | None,
    *,
    overwrite: bool = False,
    sections: Sequence[str] | str = "findings,impression,whole",
    vocabulary: str = "chestxray14",
    conventions: str = DEFAULT_CONVENTIONS,
    rules: PathLike | None = None,
    reference_labels: PathLike | None = None,
    reference: str | None = None,
    findings: FindingsLike = None,
    uncertain: str = "negative",
    n_resamples: int = 1000,
    rng: RNGLike = None,
    state_encoding: str | None = None,
    blank_state: str | None = None,
    executor: ExecutorLike = None,
    chunk_size: int = 2000,
    progress: Progress | None = None,
) -> ReportLabelsResult:
    """:func:`cxreval.labeller.label_reports` of a report file, optionally scored against a reference label file:
    the job of ``cxreval label-reports`` (``res.save(out)`` writes every file the command writes but ``run.json``).

    Every check comes before any file is read: the options, the inputs' existence, the executor (a spec is
    opened here, and closed at the end) and ``out`` (:func:`cxreval.outputs.check_output_path`), so a run that
    could not be saved fails before it labels a report.

    Parameters
    ----------
    reports : path
        A CSV/Parquet with ``study_id, [patient_id,]`` and ``text`` or one column per section; or the OpenI
        archive ``NLMCXR_reports.tgz`` or a folder of its XML files
        (:func:`cxreval.datasets.report_files.read_report_file`).
    out : path
        The folder the caller saves the result in (not written here; checked, with ``overwrite``).
    sections, vocabulary, conventions, rules, reference, uncertain, n_resamples, rng, chunk_size
        As :func:`~cxreval.labeller.label_reports`.
    reference_labels : path, optional
        A long label table of a reference source (:func:`cxreval.labels.read_label_tables`, with
        ``state_encoding`` and ``blank_state``): the labeller is scored against it (``res.validation``).
    findings : str or sequence of str, optional
        With ``reference_labels``: the findings scored, comma-separated text or a list of it.
    executor : str or Executor, optional
        Where the chunks of reports are labelled (a spec such as ``'process:2'`` is opened here).
    progress : Progress, optional
        Used from 5,000 reports on.

    Returns
    -------
    res : ReportLabelsResult

    Raises
    ------
    InvalidParameterError
        ``reports`` or ``out`` missing; an unknown ``vocabulary`` or ``conventions``.
    SchemaError
        A file does not exist or cannot be read (named).
    OutputError
        ``out`` cannot receive the result.
    """
    _check_vocabulary(vocabulary, conventions, func="label_reports_file")
    if reports is None or out is None:
        missing = [name for name, value in (("reports=", reports), ("out=", out)) if value is None]
        raise InvalidParameterError(
            f"Missing option {' and '.join(missing)} (only print_rules=True runs without them)."
        )
    if not Path(reports).exists():
        raise SchemaError(f"File {str(reports)!r} does not exist.")
    check_input_paths(("reference_labels", reference_labels))
    from ..datasets.report_files import read_report_file
    from ..executor import open_executor
    from ..labeller import label_reports
    from ..labels._files import read_label_tables
    from ..outputs._folder import check_output_path

    with open_executor(executor) as ex:  # a bad executor fails here, before any input is read
        inputs = [str(p) for p in (reports, rules, reference_labels) if p is not None]
        check_output_path(out, overwrite=overwrite, inputs=inputs)
        ref = (
            None
            if reference_labels is None
            else read_label_tables(
                [str(reference_labels)], state_encoding=state_encoding, blank_state=blank_state
            )[0]
        )
        read = read_report_file(reports)
        return label_reports(
            read,
            sections=sections,
            rules=rules,
            vocabulary=vocabulary,
            conventions=conventions,
            executor=ex,
            chunk_size=chunk_size,
            where=f"file {str(reports)!r}",
            progress=progress if len(read.table) >= _PROGRESS_MIN else None,
            reference_labels=ref,
            reference=reference,
            findings=split_names(findings, name="findings"),
            uncertain=uncertain,
            n_resamples=n_resamples,
            rng=rng,
        )
