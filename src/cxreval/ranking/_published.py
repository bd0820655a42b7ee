"""Published results shipped with cxreval: the XQA paper's AUC and rank-correlation tables.

The appendix of the XQA-Chest paper (*Rethinking Clinical Relevance in Chest X-ray Machine Learning:
How Evaluation References Define Performance*) gives, for XQA-RR and MIMIC-CXR, the ROC-AUC of every
model against every reference (Tables 16–25) and the SRCC/KRCC between the rankings the references
induce, as bootstrap mean ± sd (Tables 26–29). They are package data (``cxreval/data/xqa``, with a
README and CITATION.cff) so that ``cxreval rank --auc-table`` can put its point rank correlations beside
the paper's.

Every one of the 168 published correlation rows appears in :func:`compare_with_published`'s output. The 8 "Micro
Avg." rows of Table 28 have no recomputed value there: the paper publishes per-model macro AUCs (Tables 20 and
25) but no per-model micro-average AUCs, and a micro AUC needs the pooled scores (``cxreval rank
--predictions ... --labels ...`` computes it, :data:`~cxreval.schema.MICRO`); their ``note`` says so.

Examples
--------
>>> auc = load_xqa_auc_table()
>>> sorted(auc["dataset"].unique())
['MIMIC-CXR', 'XQA-RR']
>>> sorted(auc.loc[auc.dataset == "XQA-RR", "finding"].unique())
['Atelectasis', 'Consolidation', 'Effusion', 'Lung Opacity', 'macro']
>>> rc = load_xqa_rank_correlations()
>>> r = rc.iloc[0]
>>> (r.finding, r.reference_a, r.reference_b, r.method, r.group, float(r.paper_mean), float(r.paper_sd))
('Atelectasis', 'CR', 'Rep1', 'SRCC', 'All Models', 0.8, 0.07)
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from importlib import resources
from os import PathLike
from pathlib import Path

import numpy as np
import pandas as pd

from .._validation import check_path
from ..exceptions import InvalidParameterError, SchemaError
from ..findings import canonical_finding
from ..io import read_table
from ..schema import MACRO, MICRO
from ..stats import AUCTableResult
from ._correlation import DEFAULT_KENDALL, DEFAULT_SPEARMAN
from ._stability import RankingStabilityResult, compare_table_rankings

__all__ = [
    "XQA_CITATION",
    "table_finding",
    "load_xqa_auc_table",
    "load_xqa_rank_correlations",
    "compare_with_published",
    "read_auc_table",
    "auc_table_file",
    "rank_auc_table",
    "PAIR_REFERENCES",
    "XQA_AUC_TABLES",
]

XQA_CITATION = (
    "Rethinking Clinical Relevance in Chest X-ray Machine Learning: How Evaluation References Define "
    "Performance (XQA-Chest; University of Cambridge). Appendix Tables 16-29."
)

XQA_AUC_TABLES = "xqa"
"""The name that :func:`read_auc_table` (``cxreval rank --auc-table xqa``) reads as the packaged Tables 16-25."""

PAIR_REFERENCES = {"Find.": "Findings", "Impr.": "Impression"}
"""Abbreviations the rank-correlation tables use for references."""

_MACRO_NAMES = {"macro average", "macro avg.", "macro avg", MACRO}
_MICRO_NAMES = {"micro average", "micro avg.", "micro avg", MICRO}


def table_finding(name: str) -> str:
    """A finding name as published AUC tables spell it -> the canonical name, or ``macro`` / ``micro`` for the
    average rows (``'Macro avg.'``, ``'micro average'``...); other names go through
    :func:`~cxreval.findings.canonical_finding`."""
    key = str(name).strip().lower()
    if key in _MACRO_NAMES:
        return MACRO
    if key in _MICRO_NAMES:
        return MICRO
    return canonical_finding(name, where="XQA table")


def _read(name: str) -> pd.DataFrame:
    with resources.files("cxreval").joinpath("data").joinpath("xqa").joinpath(name).open("rb") as fh:
        return pd.read_csv(fh)


def load_xqa_auc_table(*, include_mean: bool = True) -> pd.DataFrame:
    """Tables 16–25: ``table, dataset, finding, model, group, reference, auc, ci_low, ci_high``.

    Findings are canonical (``Effusion``, ``Lung Opacity``; ``macro`` for Tables 20 and 25); the
    paper's ``Mean`` rows have group ``summary`` (dropped with ``include_mean=False``; Table 24 prints its
    Mean row as "Macro Avg.", renamed ``Mean`` here).
    """
    t = _read("xqa_auc_tables_16_25.csv")
    t["finding"] = t["finding"].map(table_finding)
    # the XQA-Chest paper prints Table 24's mean-over-models row as "Macro Avg."; it is the "Mean" row
    t.loc[(t["group"] == "summary") & (t["model"] == "Macro Avg."), "model"] = "Mean"
    if not include_mean:
        t = t[t["group"] != "summary"].reset_index(drop=True)
    return t


def load_xqa_rank_correlations() -> pd.DataFrame:
    """Tables 26–29 as ``table, dataset, method, finding, group, reference_a, reference_b, paper_mean, paper_sd``."""
    t = _read("xqa_rank_correlation_tables_26_29.csv")
    parts = t["pair"].str.split(" vs ", n=1, expand=True)
    return pd.DataFrame(
        {
            "table": t["table"],
            "dataset": t["dataset"],
            "method": t["method"],
            "finding": t["target"].map(table_finding),
            "group": t["group"],
            "reference_a": parts[0].map(lambda r: PAIR_REFERENCES.get(r, r)),
            "reference_b": parts[1].map(lambda r: PAIR_REFERENCES.get(r, r)),
            "paper_mean": t["mean"].astype(float),
            "paper_sd": t["sd"].astype(float),
        }
    )


def _published_columns(
    result: RankingStabilityResult | pd.DataFrame,
    published: pd.DataFrame | None = None,
    *,
    keep_unmatched: bool = True,
) -> pd.DataFrame:
    """Add ``paper_mean`` and ``paper_sd`` to rank-correlation rows that the paper reports.

    Rows are matched on ``dataset, finding, group, method`` and the reference pair in either order;
    rows without a published value get NaN. With ``keep_unmatched`` (default) every published row of a dataset
    of the result without a recomputed counterpart is appended (``statistic`` NaN, ``n_models`` 0) with a ``note`` saying why, so that the
    output covers every published value (all 168 of Tables 26-29); ``note`` is empty on matched rows.
    """
    corr = result.correlations if isinstance(result, RankingStabilityResult) else result
    pub = load_xqa_rank_correlations() if published is None else published
    for c in (
        "dataset",
        "finding",
        "group",
        "method",
        "reference_a",
        "reference_b",
        "paper_mean",
        "paper_sd",
    ):
        if c not in pub.columns:
            raise SchemaError(f"Published rank-correlation table lacks column {c!r}.")
    fwd = pub.set_index(["dataset", "finding", "group", "method", "reference_a", "reference_b"])[
        ["paper_mean", "paper_sd"]
    ]
    rev = fwd.copy()
    rev.index = rev.index.set_names(["dataset", "finding", "group", "method", "reference_b", "reference_a"])
    rev = rev.reorder_levels(["dataset", "finding", "group", "method", "reference_a", "reference_b"])
    both = pd.concat([fwd, rev[~rev.index.isin(fwd.index)]])
    both = both[~both.index.duplicated()]
    key = pd.MultiIndex.from_frame(
        corr[["dataset", "finding", "group", "method", "reference_a", "reference_b"]]
    )
    vals = both.reindex(key)
    out = corr.copy()
    out["paper_mean"] = vals["paper_mean"].to_numpy(dtype=float)
    out["paper_sd"] = vals["paper_sd"].to_numpy(dtype=float)
    if keep_unmatched:
        out = pd.concat([out.assign(note=""), _unmatched(out, pub, result)], ignore_index=True)
    with np.errstate(invalid="ignore"):
        out["diff_vs_paper"] = out["statistic"] - out["paper_mean"]
    return out


def _unmatched(
    out: pd.DataFrame, pub: pd.DataFrame, result: RankingStabilityResult | pd.DataFrame
) -> pd.DataFrame:
    """Published rows with no recomputed row (pair in either order), with the reason in ``note``."""
    keys = ["dataset", "finding", "group", "method"]
    have = set(map(tuple, out[keys + ["reference_a", "reference_b"]].astype(str).to_numpy()))
    have |= {(*k[:4], k[5], k[4]) for k in have}
    rows = pub[
        [tuple(map(str, r)) not in have for r in pub[keys + ["reference_a", "reference_b"]].to_numpy()]
    ]
    rows = rows[
        rows["dataset"].astype(str).isin(set(out["dataset"].astype(str)))
    ]  # datasets of the result only
    findings = set(map(tuple, out[["dataset", "finding"]].astype(str).to_numpy()))
    variants: dict[str, str] = {}
    if isinstance(result, RankingStabilityResult):
        variants = {"SRCC": result.spearman, "KRCC": result.kendall}
    elif "variant" in out.columns:
        variants = dict(zip(out["method"].astype(str), out["variant"].astype(str)))
    extra = pd.DataFrame(
        {c: rows[c].to_numpy() for c in keys + ["reference_a", "reference_b", "paper_mean", "paper_sd"]}
    )
    extra["variant"] = [variants.get(m, "") for m in extra["method"]]
    extra["statistic"] = np.nan
    for c in ("boot_mean", "boot_sd", "ci_low", "ci_high"):
        extra[c] = np.nan
    for c in ("n_undefined", "n_models", "n_tied_a", "n_tied_b"):
        extra[c] = 0

    def why(ds: str, f: str) -> str:
        if (ds, f) in findings:
            return "no recomputed counterpart: this model group or reference pair is not in the AUC table"
        if f == MICRO:
            return (
                "not recomputable from AUC tables: the paper publishes no per-model micro-average AUC; "
                "compute it from predictions and labels (cxreval rank --predictions ... --labels ...)"
            )
        return f"not recomputable: the AUC table has no {f!r} AUCs for dataset {ds!r}"

    extra["note"] = [why(str(d), str(f)) for d, f in zip(extra["dataset"], extra["finding"])]
    return extra[[c for c in out.columns if c in extra.columns] + ["note"]]


def compare_with_published(
    result: RankingStabilityResult, published: pd.DataFrame | None = None, *, keep_unmatched: bool = True
) -> RankingStabilityResult:
    """``result`` with its rank correlations compared with the paper's: its ``correlations`` gain the columns
    ``paper_mean``, ``paper_sd``, ``note`` and ``diff_vs_paper`` (rows matched on dataset, finding, group, method
    and the reference pair in either order; NaN where the paper reports none) and, with ``keep_unmatched``
    (default), every published row of the result's datasets without a recomputed counterpart, its ``note``
    saying why. ``published`` defaults to the packaged XQA Tables 26-29 (:func:`load_xqa_rank_correlations`)."""
    if not isinstance(result, RankingStabilityResult):
        raise InvalidParameterError(
            f"compare_with_published takes a RankingStabilityResult (compare_rankings, "
            f"compare_table_rankings); got {type(result).__name__}."
        )
    return dataclasses.replace(
        result, correlations=_published_columns(result, published, keep_unmatched=keep_unmatched)
    )


def read_auc_table(spec: str | PathLike[str]) -> AUCTableResult:
    """A table of point AUCs: ``'xqa'`` (:data:`XQA_AUC_TABLES`) -> the packaged XQA Tables 16-25
    (:func:`load_xqa_auc_table`); otherwise a CSV or Parquet file, its findings read with :func:`table_finding`.

    Raises
    ------
    SchemaError
        The file does not exist or cannot be read; a finding name is unknown.
    """
    p = check_path(spec, name="spec", func="read_auc_table", allow_none=False)
    assert p is not None
    if str(spec).lower() == XQA_AUC_TABLES:
        return AUCTableResult(load_xqa_auc_table(), "XQA Tables 16-25 (packaged)", published=True)
    if not p.exists():
        raise SchemaError(
            f"AUC table {str(spec)!r} does not exist (give a CSV/Parquet file, or "
            f"{XQA_AUC_TABLES!r} for the packaged XQA tables)."
        )
    df = read_table(p, error=lambda _, exc: f"Could not read AUC table {str(spec)!r}: {exc}")
    if "finding" in df.columns:
        df["finding"] = df["finding"].astype(str).map(table_finding)
    return AUCTableResult(df, str(spec))


def auc_table_file(spec: str | PathLike[str] | None, *, option: str = "auc_table") -> Path | None:
    """The file of an AUC-table ``spec`` (:func:`read_auc_table`), checked to exist before any work; None for
    the packaged tables (:data:`XQA_AUC_TABLES`) or without a spec. ``option`` names the spec in the error.

    Raises
    ------
    SchemaError
        The file does not exist.
    """
    from .._validation import check_inputs

    path = check_path(spec, name="spec", func="auc_table_file")
    if path is None or str(spec).lower() == XQA_AUC_TABLES:
        return None
    check_inputs((option, path))
    return path


def rank_auc_table(
    auc: AUCTableResult,
    *,
    pairs: Sequence[tuple[str, str]] | None = None,
    groups: str = "all",
    min_models: int = 3,
    kendall: str = DEFAULT_KENDALL,
    spearman: str = DEFAULT_SPEARMAN,
) -> RankingStabilityResult:
    """Ranking stability of a point AUC table (:func:`~cxreval.ranking.compare_table_rankings`): ``cxreval rank
    --auc-table``. The packaged XQA tables, or a table with rows of the XQA datasets, get their correlations beside
    the XQA paper's bootstrap mean ± sd (:func:`compare_with_published`: columns ``paper_mean``, ``paper_sd``,
    ``note``, ``diff_vs_paper``); any other table is ranked on its own, without those columns.

    Parameters
    ----------
    auc : AUCTableResult
        From :func:`read_auc_table`.
    pairs, groups, min_models, kendall, spearman
        As for :func:`~cxreval.ranking.compare_table_rankings`.

    Returns
    -------
    res : RankingStabilityResult
        ``source`` names the table.
    """
    if not isinstance(auc, AUCTableResult):
        raise InvalidParameterError(
            f"The 'auc' parameter of rank_auc_table must be an AUCTableResult (from "
            f"read_auc_table). Got {auc!r} instead."
        )
    res = compare_table_rankings(
        auc.table, pairs=pairs, groups=groups, min_models=min_models, kendall=kendall, spearman=spearman
    )
    source = res.source.replace("From an AUC table:", f"From the AUC table {auc.name}:", 1).replace(
        "tied AUCs share the average rank.",
        "tied AUCs share the average rank (rank_min/rank_max give the range).",
        1,
    )
    xqa = set(load_xqa_auc_table()["dataset"].astype(str))
    datasets = set(auc.table["dataset"].astype(str)) if "dataset" in auc.table.columns else set()
    if not (auc.published or datasets & xqa):  # a user's own table: nothing of the paper's to set beside it
        return dataclasses.replace(res, source=source)
    source += (
        " The XQA AUCs are printed to 2 decimals, so ties are frequent. `paper` = the XQA paper's bootstrap "
        "mean ± sd (Tables 26-29), beside the rows of its datasets "
        f"({', '.join(sorted(xqa))})."
    )
    return dataclasses.replace(compare_with_published(res), source=source)
