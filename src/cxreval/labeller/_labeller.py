"""Report-level labels from report text: per section, traced to the sentences that decided them.

:func:`label_reports` splits every report into segments (the section columns of the table, or the
sections found in its ``text``), runs the :class:`~cxreval.labeller.Engine` over them in chunks,
and aggregates the mentions per report and label source:

=====================  ===========================================================================
``report_findings``     mentions in the FINDINGS section
``report_impression``   mentions in the IMPRESSION section
``report``              mentions anywhere in the report (every section column, or the whole ``text``)
                        except the clinical-context sections (:data:`CONTEXT_SECTIONS`)
=====================  ===========================================================================

The clinical-context sections (INDICATION, HISTORY, COMPARISON, TECHNIQUE) say why the study was made
("rule out pneumonia", "history of nodules"), not what it shows, so they are not labelled: on OpenI's
held-out half, labelling them too lowers Pneumonia precision from 0.80 to 0.54 and Mass F1 from 0.77 to
0.67. A report with text only in those sections gets missing labels and a note.

A finding's state in a source is the highest state of its mentions there (positive > uncertain >
negative); a finding never mentioned is ``not_mentioned``. A source whose section the report lacks
gets a missing state (``<NA>``) for every finding, and a row in ``notes`` — nothing is dropped. For the
CheXpert vocabulary, ``No Finding`` is positive when no finding other than those excepted by the rules
(Support Devices) is positive or uncertain, and negative otherwise.

Examples
--------
>>> import pandas as pd
>>> t = pd.DataFrame({"study_id": ["s1"], "findings": ["Small left effusion. No pneumothorax."],
...                   "impression": ["Possible pneumonia."]})
>>> res = label_reports(t, sections=("findings", "impression", "whole"))
>>> lab = res.labels.set_index(["source", "finding"])["state"]
>>> int(lab["report_findings", "Effusion"]), int(lab["report_impression", "Pneumonia"]), int(lab["report", "Mass"])
(2, 1, -1)
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from types import MappingProxyType
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from .._typing import FindingsLike, PathLike, RNGLike
from .._validation import check_choice
from ..exceptions import InvalidParameterError
from ..executor import ExecutorLike, get_executor, open_executor
from ..io import markdown_table, write_table
from ..labels._long import LABEL_COLUMNS
from ..progress import Progress, as_progress
from ..results import ReadReport, ReadResult, TableResult, as_table
from ..schema import STATE
from ..schema._states import STATE_NAMES, state_names
from ._aggregation import MENTION_COLUMNS, SENTENCE_TEXT_MAX, SOURCE_NAMES, _aggregate, _mention_table
from ._engine import MentionArrays, get_engine
from ._io import check_report_table
from ._rules import DEFAULT_CONVENTIONS, RuleSet, load_rules
from ._sections import split_sections
from ._validation import LabellerValidationResult, compute_precision_recall, resolve_reference

__all__ = [
    "SECTION_CHOICES",
    "CONTEXT_SECTIONS",
    "SOURCE_NAMES",
    "SENTENCE_TEXT_MAX",
    "ReportLabelsResult",
    "label_reports",
    "MENTION_COLUMNS",
]

SECTION_CHOICES: tuple[str, ...] = ("findings", "impression", "whole")
CONTEXT_SECTIONS: tuple[str, ...] = ("indication", "history", "comparison", "technique")
"""Sections (see :data:`~cxreval.labeller.HEADERS`) that are not labelled: the reason for the study."""


@dataclass(frozen=True)
class ReportLabelsResult(TableResult):
    """Labels read from report text; :meth:`save` writes what ``cxreval label-reports`` writes.

    Files (:data:`FILES`): ``labels.csv`` + ``labels.parquet`` (states by name, so every reader needs no
    ``--state-encoding``), ``mentions.csv`` and ``notes.csv`` (CSV only: the mention table of a large corpus is
    large and is read by people), and ``summary.json`` (:meth:`to_dict`).

    Attributes
    ----------
    labels : pandas.DataFrame
        The long label table ``study_id, patient_id, finding, source, state`` (``state`` Int8, -1 for
        not_mentioned, <NA> where the report lacks the section), reports in input order.
    mentions : pandas.DataFrame
        One row per mention (:data:`MENTION_COLUMNS`): the segment it is in (``section``, ``field``: the
        input column its span indexes), ``sentence`` (0-based in the section), character span
        ``start``/``end`` in that column's text, the matched ``phrase``, ``finding``, ``state``, the rule
        that found it (``mention_rule``), the rule that decided its state (``state_rule``: a trigger, a
        ``normal`` phrase, or ``no trigger: positive``) and the sentence (``sentence_text``; a sentence longer than
        :data:`SENTENCE_TEXT_MAX` characters as a window around the mention with ``...`` at the cut ends).
    notes : pandas.DataFrame
        ``study_id, source, note``: per-report notes (empty text, a requested section missing).
    rules : RuleSet
    n_reports : int
    ignored_columns : tuple of str
        Input columns that are neither ids nor report text (not labelled).
    read : ReadReport or None
        How the report file was read, when the table came from one (recorded in ``summary.json``).
    validation : LabellerValidationResult or None
        The labeller scored against a reference source (``reference_labels=`` of :func:`label_reports`;
        ``labeller_validation.csv``), or None.
    """

    FILES: ClassVar[Mapping[str, str]] = MappingProxyType(
        {"labels": "labels.csv", "mentions": "mentions.csv", "notes": "notes.csv", "summary": "summary.json"}
    )
    COLUMNS: ClassVar[tuple[str, ...]] = LABEL_COLUMNS
    PARQUET: ClassVar[tuple[str, ...]] = ("labels",)
    """The tables also written as Parquet."""

    labels: pd.DataFrame
    mentions: pd.DataFrame
    notes: pd.DataFrame
    rules: RuleSet
    n_reports: int
    ignored_columns: tuple[str, ...] = ()
    read: ReadReport | None = None
    validation: LabellerValidationResult | None = None

    @property
    def table(self) -> pd.DataFrame:
        """The label table (``state`` as codes; :meth:`tables` gives it with state names)."""
        return self.labels

    def tables(self) -> dict[str, pd.DataFrame]:
        """``labels`` (states by name), ``mentions`` and ``notes``: the tables :meth:`save` writes."""
        labels = self.labels.copy()
        labels[STATE] = state_names(labels[STATE])
        return {"labels": labels, "mentions": self.mentions, "notes": self.notes}

    def save(self, folder: PathLike) -> dict[str, Path]:
        """Write every file ``cxreval label-reports`` writes but ``run.json`` into ``folder``: :data:`FILES`
        (``labels`` also as Parquet), with a validation ``labeller_validation`` (CSV + Parquet), and
        ``summary.md`` (:meth:`summary`); return ``{name: path}``."""
        from ..io._write import write_summary

        d = Path(folder)
        out = {
            name: write_table(df, d, Path(self.FILES[name]).stem, parquet=name in self.PARQUET)
            for name, df in self.tables().items()
        }
        out["summary"] = d / self.FILES["summary"]
        out["summary"].write_text(json.dumps(self.to_dict(), indent=2, default=str) + "\n")
        if self.validation is not None:
            out.update(self.validation.save(d))
        out["summary_md"] = write_summary(d, self.summary())
        return out

    def counts(self) -> dict[str, Any]:
        """Reports, mentions, notes (per kind) and states (per name, and missing)."""
        s = self.labels[STATE]
        return {
            "n_reports": self.n_reports,
            "n_mentions": int(len(self.mentions)),
            "n_notes": int(len(self.notes)),
            "notes": self.notes["note"].value_counts().to_dict(),
            "states": {k: int((s == v).sum()) for k, v in STATE_NAMES.items()}
            | {"missing": int(s.isna().sum())},
        }

    def to_dict(self) -> dict[str, object]:
        """``summary.json``: the input file and how it was read, the counts, the rules and the ignored columns."""
        head = {} if self.read is None else {"reports": self.read.source, "read": self.read.to_dict()}
        return {
            **head,
            **self.counts(),
            "rules": self.rules.to_dict(),
            "ignored_columns": list(self.ignored_columns),
        }

    def summary(self) -> str:
        """Markdown: the counts, then the states per source and finding (``summary.md``); with a validation,
        the labeller against the reference source."""
        c = self.counts()
        lines = [
            "# Report-derived labels",
            "",
            f"- reports: {c['n_reports']:,}",
            f"- mentions: {c['n_mentions']:,}",
            f"- notes: {c['n_notes']:,}"
            + (f" ({', '.join(f'{k}: {v}' for k, v in c['notes'].items())})" if c["notes"] else ""),
        ]
        if self.ignored_columns:
            lines.append(
                f"- columns not labelled (neither ids nor report text): {list(self.ignored_columns)}"
            )
        lab = self.tables()["labels"]
        tab = (
            lab.assign(state=lab[STATE].fillna("missing"))
            .groupby(["source", "finding", STATE], sort=False)
            .size()
            .unstack(STATE, fill_value=0)
        )
        cols = [c for c in (*STATE_NAMES, "missing") if c in tab.columns]
        tab = tab[cols].reset_index()
        lines += ["", markdown_table(tab, right=tuple(cols))]
        text = "\n".join(lines) + "\n"
        if self.validation is not None:
            text += f"\n## Against {self.validation.reference}\n\n{self.validation.summary()}\n"
        return text

    def _figure(self) -> Any:
        """Reports per finding and label state (stacked), as the labeller read them."""
        from .._plots import bars
        from ..schema._states import state_names

        named = self.labels.assign(state=state_names(self.labels["state"].astype("Int8")).astype(object))
        named["state"] = named["state"].where(named["state"].notna(), "missing")
        counts = named.groupby(["finding", "state"], sort=False).size().rename("reports").reset_index()
        return bars(
            counts,
            x="finding",
            y="reports",
            color="state",
            barmode="stack",
            title="Report labels per finding and state",
        )


def _run_chunk(rules: RuleSet, chunk: tuple[list[str], list[int]]) -> MentionArrays:
    texts, leads = chunk
    return get_engine(rules).run(texts, leads=leads)


def _check_sections(sections: object) -> tuple[str, ...]:
    if isinstance(sections, str):
        sections = [x.strip() for x in sections.split(",") if x.strip()]
    if not isinstance(sections, Sequence) or not sections or not all(isinstance(x, str) for x in sections):
        raise InvalidParameterError(
            f"The 'sections' parameter of label_reports must be a non-empty sequence of "
            f"{list(SECTION_CHOICES)}. Got {sections!r} instead."
        )
    bad = [x for x in sections if x not in SECTION_CHOICES]
    if bad or len(set(sections)) != len(sections):
        raise InvalidParameterError(
            f"The 'sections' parameter of label_reports must name each of "
            f"{list(SECTION_CHOICES)} at most once. Got {list(sections)!r}."
        )
    return tuple(sections)


def _segments(
    table: pd.DataFrame, text_col: str | None, section_cols: dict[str, str]
) -> tuple[list[str], np.ndarray, list[str], list[str], list[int], np.ndarray, list[int]]:
    """Segments (texts) with their row, section, field and offset in the field's text; rows with any text; and
    per segment the characters before it on its first line (a header on the same line).

    Clinical-context sections (:data:`CONTEXT_SECTIONS`) are left out (they only count as text).
    """
    leads: list[int] = []
    any_text = np.zeros(len(table), dtype=bool)
    texts: list[str] = []
    rows: list[int] = []
    secs: list[str] = []
    fields: list[str] = []
    offs: list[int] = []
    if text_col is not None:
        for i, t in enumerate(table[text_col].tolist()):
            for s in split_sections(t):
                if t[s.start : s.end].strip():
                    any_text[i] = True
                    if s.name in CONTEXT_SECTIONS:
                        continue
                    texts.append(t[s.start : s.end])
                    rows.append(i)
                    secs.append(s.name)
                    fields.append(text_col)
                    offs.append(s.start)
                    leads.append(s.start - (t.rfind("\n", 0, s.start) + 1))
    else:
        cols = list(section_cols)
        vals = [table[c].tolist() for c in cols]
        for i in range(len(table)):
            for c, v in zip(cols, vals):
                if v[i].strip():
                    any_text[i] = True
                    if section_cols[c] in CONTEXT_SECTIONS:
                        continue
                    texts.append(v[i])
                    rows.append(i)
                    secs.append(section_cols[c])
                    fields.append(c)
                    offs.append(0)
                    leads.append(0)
    return texts, np.asarray(rows, dtype=np.int64), secs, fields, offs, any_text, leads


def _concat(parts: list[MentionArrays], sizes: list[int]) -> MentionArrays:
    shift = np.concatenate([[0], np.cumsum(sizes)[:-1]]) if sizes else np.zeros(0, np.int64)
    fields = {}
    for name in MentionArrays.__dataclass_fields__:
        arrs = [getattr(p, name) + (shift[k] if name == "segment" else 0) for k, p in enumerate(parts)]
        fields[name] = np.concatenate(arrs) if arrs else np.zeros(0, np.int64)
    return MentionArrays(**fields)


def label_reports(
    reports: object,
    *,
    sections: Sequence[str] | str = SECTION_CHOICES,
    vocabulary: str = "chestxray14",
    rules: RuleSet | str | os.PathLike[str] | None = None,
    conventions: str = DEFAULT_CONVENTIONS,
    executor: ExecutorLike = None,
    chunk_size: int = 2000,
    progress: Progress | None = None,
    where: str = "report table",
    read: ReadReport | None = None,
    reference_labels: object = None,
    reference: str | None = None,
    findings: FindingsLike = None,
    uncertain: str = "negative",
    n_resamples: int = 1000,
    rng: RNGLike = None,
) -> ReportLabelsResult:
    """Label findings in report text, per section; with ``reference_labels``, also score the labeller against a
    reference source: what ``cxreval label-reports`` runs on the file it reads
    (:func:`cxreval.jobs.label_reports_file`; ``res.save(folder)`` writes every file the command writes but
    ``run.json``).

    Parameters
    ----------
    reports : pandas.DataFrame or ReadResult
        ``study_id``, optional ``patient_id``, and ``text`` or section columns (see :func:`cxreval.labeller.check_report_table`);
        a :class:`~cxreval.results.ReadResult` (:func:`cxreval.datasets.report_files.read_report_file`) gives its
        table and, unless ``read`` is given, its report.
    sections : sequence of {'findings', 'impression', 'whole'}, default all three
        The label sources to produce (``report_findings``, ``report_impression``, ``report``).
    vocabulary : {'chestxray14', 'chexpert'}, default='chestxray14'
    rules : RuleSet or path, optional
        A rule set, or a YAML file merged over the packaged rules of ``vocabulary``.
    conventions : {'cxreval', 'chexpert'}, default='cxreval'
        How "No definite X" (cxreval: uncertain; chexpert: negative) and "No new X" (cxreval: negative;
        chexpert: uncertain) read (:data:`~cxreval.labeller.CONVENTIONS`); a RuleSet carries its own.
    executor : Executor, spec string or object with ``map``, optional
        Where the chunks run (:mod:`cxreval.executor`: ``'process:2'`` is opened here and closed at the end);
        default in this process.
    chunk_size : int, default=2000
        Reports per chunk.
    progress : Progress, optional
        A task counting the reports labelled, advanced as each chunk's labels come in
        (:class:`cxreval.progress.Progress`; e.g. the CLI's progress bars).
    where : str, default='report table'
        How errors name the input (the CLI passes the file).
    read : ReadReport, optional
        How the table was read from its file (:func:`cxreval.datasets.report_files.read_report_file`); kept on
        the result for ``summary.json``.
    reference_labels : DataFrame, ReadResult or list of them, optional
        A long label table of a reference source: the ``'whole'`` source (or the only one of ``sections``) is
        scored against it (:func:`~cxreval.labeller.compute_precision_recall`, on the reference's studies:
        ``res.validation``).
    reference, findings, uncertain, n_resamples, rng
        With ``reference_labels``: as :func:`~cxreval.labeller.compute_precision_recall` (``reference``: the
        reference source, default the table's only one); refused without it.

    Returns
    -------
    ReportLabelsResult

    Raises
    ------
    InvalidParameterError, SchemaError
        Bad parameters, a bad report table or bad rules (before any labelling).
    """
    secs = _check_sections(sections)
    if not isinstance(chunk_size, int) or isinstance(chunk_size, bool) or chunk_size < 1:
        raise InvalidParameterError(
            f"The 'chunk_size' parameter of label_reports must be a positive int. Got {chunk_size!r} instead."
        )
    if (
        executor is not None
        and not isinstance(executor, str)
        and not callable(getattr(executor, "map", None))
    ):
        raise InvalidParameterError(
            f"The 'executor' parameter of label_reports must be an executor spec "
            f"('process:2') or have a map(func, items) method (see cxreval.executor). "
            f"Got {executor!r} instead."
        )
    progress = as_progress(progress, func="label_reports")
    if isinstance(reports, ReadResult) and read is None:
        read = reports.report
    reports = as_table(reports, name="reports", func="label_reports")
    ref, reference, predicted = _validation_inputs(secs, reference_labels, reference, findings, uncertain)
    if read is not None and not isinstance(read, ReadReport):
        raise InvalidParameterError(
            f"The 'read' parameter of label_reports must be a ReadReport or None. Got {read!r} instead."
        )
    if not isinstance(where, str):
        raise InvalidParameterError(
            f"The 'where' parameter of label_reports must be a str. Got {where!r} instead."
        )
    rs = (
        rules
        if isinstance(rules, RuleSet)
        else load_rules(rules, vocabulary=vocabulary, conventions=conventions)
    )
    rt = check_report_table(reports, where=where)
    table = rt.table
    n = len(table)
    texts, seg_row, seg_sec, seg_field, seg_off, any_text, leads = _segments(
        table, rt.text_column, rt.section_columns
    )
    # chunks of whole reports
    bounds = np.searchsorted(seg_row, np.arange(0, n, chunk_size), side="left").tolist() + [len(texts)]
    chunks = [
        (texts[bounds[k] : bounds[k + 1]], leads[bounds[k] : bounds[k + 1]]) for k in range(len(bounds) - 1)
    ]
    func = partial(_run_chunk, rs)
    task = progress.add("labelling reports", total=n)
    labelled = [0]

    def advance(_: object) -> None:  # every chunk but the last holds chunk_size reports
        step = min(chunk_size, n - labelled[0])
        labelled[0] += step
        progress.advance(task, step)

    with contextlib.ExitStack() as stack:  # a spec is opened here and closed at the end
        ex = (
            stack.enter_context(open_executor(executor))
            if isinstance(executor, str)
            else get_executor(executor)
        )
        parts = list(ex.map(func, chunks, on_item=advance))
    m = _concat(parts, [len(c[0]) for c in chunks])
    labels, notes = _aggregate(rs, table, secs, m, seg_row, seg_sec, any_text)
    mentions = _mention_table(rs, table, texts, m, seg_row, seg_sec, seg_field, seg_off)
    val = None
    if ref is not None:
        val = compute_precision_recall(
            labels,
            reference_labels=ref,
            reference=reference,
            predicted=predicted,
            findings=findings if findings is None or isinstance(findings, str) else list(findings),
            uncertain=uncertain,
            n_resamples=n_resamples,
            rng=rng,
        )
    return ReportLabelsResult(labels, mentions, notes, rs, n, rt.ignored_columns, read, val)


def _validation_inputs(
    secs: tuple[str, ...],
    reference_labels: object,
    reference: str | None,
    findings: FindingsLike,
    uncertain: str,
) -> tuple[pd.DataFrame | None, str | None, str]:
    """The reference table, the reference source and the source scored (``predicted``), checked before any
    labelling: the source scored is ``'whole'``'s or the only one of ``sections``."""
    predicted = SOURCE_NAMES["whole" if "whole" in secs or len(secs) > 1 else secs[0]]
    check_choice(uncertain, ("negative", "positive"), name="uncertain", func="label_reports")
    if reference_labels is None:
        if findings is not None or reference is not None:
            raise InvalidParameterError(
                "findings= and reference= choose what reference_labels= scores; give "
                "reference_labels= LABELS too (or leave them out)."
            )
        return None, None, predicted
    if "whole" not in secs and len(secs) > 1:
        raise InvalidParameterError(
            f"reference_labels= scores one source: the 'whole' source, or the only one of "
            f"sections=. Got sections='{','.join(secs)}'; add 'whole' or give one section."
        )
    ref = as_table(reference_labels, name="reference_labels", func="label_reports")
    return ref, resolve_reference(ref, reference, func="label_reports"), predicted
