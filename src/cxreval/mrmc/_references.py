"""The truth of a reader study under each named reference: a label source, or the latent truth of several.

A reference is a source of the label table (``consensus``, ``chexpert_labeler``), binarised by the label policy,
or ``latent``: the Dawid–Skene posterior of the sources named as its readers (``latent_sources``), a study
positive when the posterior of the positive state exceeds that of the negative one. A reader of the study is
never judged against itself: when a reference is also one of the study's readers, that reader is left out of the
analyses under that reference (leave-one-reader-out), and the result says so.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from ..exceptions import InvalidParameterError, SchemaError
from ..schema import FINDING, PATIENT_ID, SOURCE, STATE, STUDY_ID, binarize

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["LATENT", "reference_truths"]

LATENT = "latent"
"""The reference name of the latent truth of ``latent_sources`` (Dawid–Skene, hard at the larger posterior)."""


def _latent_truth(labels: pd.DataFrame, sources: Sequence[str], policy: str) -> pd.DataFrame:
    """Dawid–Skene over the binarised labels of ``sources``, one model per finding (the defaults of
    :class:`cxreval.fusion.DawidSkene`): one 0/1 truth per (study_id, finding), 1 where the posterior of the
    positive state exceeds that of the negative one."""
    import pandas as pd

    from ..stats._dawid_skene import fit_dawid_skene

    part = labels[labels[SOURCE].isin(list(sources))]
    y = binarize(part[STATE], policy=policy)
    keep = ~np.isnan(y)
    if not keep.any():
        raise SchemaError(
            "the annotation table passed to DawidSkene.fit is empty; at least one annotation is needed."
        )
    state = np.where(y[keep] == 1.0, 2, 0).astype("int64")
    # studies, findings and readers coded by their sorted values, annotations sorted by (item, reader)
    reader, readers = pd.factorize(pd.Series(part[SOURCE].to_numpy()[keep]).astype(str), sort=True)
    study, studies = pd.factorize(pd.Series(part[STUDY_ID].to_numpy()[keep]).astype(str), sort=True)
    finding, findings = pd.factorize(pd.Series(part[FINDING].to_numpy()[keep]).astype(str), sort=True)
    pairs, item = np.unique(study.astype(np.int64) * len(findings) + finding, return_inverse=True)
    item = item.reshape(-1)
    order = np.argsort(item.astype(np.int64) * len(readers) + reader, kind="stable")
    item, reader, state = item[order].astype(np.int64), reader[order].astype(np.int64), state[order]
    item_finding = pairs % len(findings)
    proba = np.zeros((len(pairs), 3))
    for c in range(len(findings)):
        items = np.flatnonzero(item_finding == c)
        if not len(items):
            continue
        pos = np.full(len(pairs), -1)
        pos[items] = np.arange(len(items))
        sub = pos[item] >= 0
        fit = fit_dawid_skene(pos[item[sub]], reader[sub], state[sub], len(items), len(readers))
        proba[np.ix_(items, fit.classes)] = fit.proba
    return pd.DataFrame(
        {
            STUDY_ID: np.asarray(studies, dtype=object)[pairs // len(findings)],
            FINDING: np.asarray(findings, dtype=object)[item_finding],
            "truth": (proba[:, 2] > proba[:, 0]).astype(float),
            SOURCE: LATENT,
        }
    )


def reference_truths(
    labels: pd.DataFrame,
    references: Sequence[str],
    *,
    policy: str = "exclude",
    latent_sources: Sequence[str] | None = None,
) -> pd.DataFrame:
    """The 0/1 truth of every study and finding under each reference.

    Parameters
    ----------
    labels : DataFrame
        A validated long label table.
    references : sequence of str
        Sources of ``labels``, or ``'latent'``.
    policy : {'exclude', 'zeros', 'ones'}, default='exclude'
        What an uncertain label becomes; an excluded or missing label gives no truth.
    latent_sources : sequence of str, optional
        The sources the latent truth is fitted on (at least three); required when ``references`` holds
        ``'latent'``.

    Returns
    -------
    truths : DataFrame
        Columns ``source`` (the reference), ``study_id``, ``patient_id``, ``finding``, ``truth`` (0.0 or 1.0).
    """
    import pandas as pd

    if not references:
        raise InvalidParameterError("The 'references' parameter must name at least one reference. Got none.")
    known = set(labels[SOURCE].astype(str).unique())
    for r in references:
        if r != LATENT and r not in known:
            from .._validation import did_you_mean

            raise SchemaError(
                f"reference {r!r} is not a source of the labels{did_you_mean(r, known)}; sources "
                f"present: {sorted(known)} (or 'latent')."
            )
    patients = labels.drop_duplicates(STUDY_ID).set_index(STUDY_ID)[PATIENT_ID]
    parts = []
    for r in dict.fromkeys(references):
        if r == LATENT:
            srcs = list(latent_sources or ())
            if len(srcs) < 3:
                raise InvalidParameterError(
                    "The 'latent_sources' parameter must name at least three label sources "
                    f"for the 'latent' reference. Got {srcs}."
                )
            bad = [s for s in srcs if s not in known]
            if bad:
                raise SchemaError(
                    f"latent source {bad[0]!r} is not a source of the labels; sources present: "
                    f"{sorted(known)}."
                )
            part = _latent_truth(labels, srcs, policy)
        else:
            rows = labels[labels[SOURCE] == r]
            y = binarize(rows[STATE], policy=policy)
            keep = ~np.isnan(y)
            part = pd.DataFrame(
                {
                    SOURCE: r,
                    STUDY_ID: rows[STUDY_ID].to_numpy()[keep],
                    FINDING: rows[FINDING].to_numpy()[keep],
                    "truth": y[keep],
                }
            )
        part[PATIENT_ID] = part[STUDY_ID].map(patients).astype(str)
        parts.append(part[[SOURCE, STUDY_ID, PATIENT_ID, FINDING, "truth"]])
    return pd.concat(parts, ignore_index=True)
