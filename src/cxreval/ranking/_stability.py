"""Ranking stability: do the model rankings that different references induce agree?

For every finding (and the macro and micro averages), every model group and every pair of references, the
rankings of the models by AUC are compared with Spearman's rho (SRCC) and Kendall's tau (KRCC):
point values from the AUC estimates and, when bootstrap distributions are available (an
:class:`~cxreval.stats.AUCResult`), the distribution of the correlation over the same
patient-bootstrap replicates: mean ± sd and percentile CI, as in the XQA paper's Tables 26–29.

Ranks: 1 is the highest AUC; tied AUCs share the average rank and are flagged, with the range of
ranks a tie-break could give (``rank_min``, ``rank_max``: published AUCs rounded to 2 decimals tie
often).

With ties the XQA-Chest paper's formulas and scipy's differ (:mod:`cxreval.stats`); the variant is
an option and is written on every output row (column ``variant``). By default both are the paper's (section 2.3):
SRCC by ``1 - 6 sum d² / (n (n² - 1))`` on average ranks (``spearman='formula'``; ``'pearson'`` = the Pearson
correlation of average ranks, ``scipy.stats.spearmanr``) and KRCC ``= (C - D) / (n (n - 1) / 2)``, tau-a
(``kendall='tau-a'``; ``'tau-b'`` = ``scipy.stats.kendalltau``). All are vectorised over replicates.

Examples
--------
>>> import numpy as np
>>> from cxreval.stats import kendall_tau_a, kendall_tau_b, spearman_rho, spearman_rho_d2
>>> x = np.array([0.9, 0.8, 0.8, 0.7]); y = np.array([0.85, 0.86, 0.7, 0.6])
>>> round(float(spearman_rho(x, y)), 4), round(float(kendall_tau_b(x, y)), 4)
(0.6325, 0.5477)
>>> round(float(spearman_rho_d2(x, y)), 4), round(float(kendall_tau_a(x, y)), 4)
(0.65, 0.5)
>>> rank_desc(x).tolist()
[1.0, 2.5, 2.5, 4.0]
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from itertools import combinations

import numpy as np
import pandas as pd

from .._validation import check_choice, check_confidence_level
from ..bootstrap import summarize_distribution
from ..exceptions import CxrevalWarning, InvalidParameterError, SchemaError
from ..schema._columns import check_columns
from ..stats import AUCResult
from ..stats._auc_result import DEFAULT_GROUP, MEAN_MODEL
from ..stats._rank_correlation import KENDALL_VARIANTS, SPEARMAN_VARIANTS, correlation_function
from ._correlation import DEFAULT_KENDALL, DEFAULT_SPEARMAN
from ._stability_result import (
    ALL_MODELS,
    CORRELATION_COLUMNS,
    METHODS,
    RANKING_COLUMNS,
    TOP_COLUMNS,
    RankingStabilityResult,
)

__all__ = [
    "rank_desc",
    "RankingStabilityResult",
    "compare_rankings",
    "compare_table_rankings",
    "check_ranking_options",
    "ALL_MODELS",
    "CORRELATION_COLUMNS",
    "RANKING_COLUMNS",
    "TOP_COLUMNS",
]


def rank_desc(values: np.ndarray, *, axis: int = -1) -> np.ndarray:
    """Ranks with 1 for the highest value; ties get the average rank; NaN stays NaN."""
    from scipy.stats import rankdata

    v = np.asarray(values, dtype=float)
    return rankdata(-v, method="average", axis=axis, nan_policy="propagate") if v.size else v.copy()


def _n_tied(v: np.ndarray) -> int:
    """Number of models whose AUC equals another model's."""
    _, inv, cnt = np.unique(v, return_inverse=True, return_counts=True)
    return int((cnt[inv] > 1).sum())


# (dataset, finding, models, references, model -> group, point (models x references), bootstrap cube or None)
_Cube = tuple[str, str, list[str], list[str], dict[str, str], np.ndarray, "np.ndarray | None"]


def _cubes_from_result(res: AUCResult, dataset: str) -> list[_Cube]:
    out: list[_Cube] = []
    for j, f in enumerate(res.findings):
        out.append(
            (
                dataset,
                f,
                list(res.models),
                list(res.references),
                dict(res.groups),
                res.point[:, j, :],
                res.distribution[:, j, :, :],
            )
        )
    return out


def _cubes_from_table(df: pd.DataFrame, exclude_models: Sequence[str]) -> list[_Cube]:
    check_columns(df, ("model", "finding", "reference", "auc"), where="AUC table")
    t = df.copy()
    if "group" not in t.columns:
        t["group"] = DEFAULT_GROUP
    if "dataset" not in t.columns:
        t["dataset"] = ""
    t = t[~t["model"].astype(str).isin(list(exclude_models)) & (t["group"].astype(str) != "summary")]
    auc = pd.to_numeric(t["auc"], errors="coerce")
    bad = auc.isna() & t["auc"].notna() & (t["auc"].astype(str).str.strip().str.lower() != "nan")
    if bad.any():  # NaN (an undefined AUC, as classify writes it) is kept and left out of the rankings
        i = int(np.flatnonzero(bad.to_numpy())[0])
        raise SchemaError(f"AUC table row {i}: 'auc' {t['auc'].iloc[i]!r} is not a number.")
    outside = ~auc.between(0.0, 1.0) & auc.notna()
    if outside.any():
        i = int(np.flatnonzero(outside.to_numpy())[0])
        raise SchemaError(
            f"AUC table row {i}: 'auc' {float(auc.iloc[i]):g} is outside [0, 1] (model "
            f"{str(t['model'].iloc[i])!r}, finding {str(t['finding'].iloc[i])!r})."
        )
    t["auc"] = auc.astype(float)
    out: list[_Cube] = []
    for (ds, f), sub in t.groupby(["dataset", "finding"], sort=False):
        dup = sub.duplicated(["model", "reference"], keep=False)
        if dup.any():
            r = sub[dup].iloc[0]
            raise SchemaError(
                f"AUC table has duplicate rows for dataset {ds!r}, finding {f!r}, model {r['model']!r}, "
                f"reference {r['reference']!r}."
            )
        wide = sub.pivot(index="model", columns="reference", values="auc")
        models = list(pd.unique(sub["model"]))
        refs = list(pd.unique(sub["reference"]))
        wide = wide.reindex(index=models, columns=refs)  # a missing row is an undefined AUC (NaN, not ranked)
        groups = dict(zip(sub["model"].astype(str), sub["group"].astype(str)))
        out.append(
            (
                str(ds),
                str(f),
                [str(m) for m in models],
                [str(r) for r in refs],
                groups,
                wide.to_numpy(dtype=float),
                None,
            )
        )
    return out


def check_ranking_options(
    *, kendall: str = DEFAULT_KENDALL, spearman: str = DEFAULT_SPEARMAN, min_models: int = 3
) -> None:
    """Check the options of :func:`compare_rankings` that need no data (its first step; ``cxreval rank`` calls it
    before computing any AUC)."""
    check_choice(kendall, KENDALL_VARIANTS, name="kendall", func="compare_rankings")
    check_choice(spearman, SPEARMAN_VARIANTS, name="spearman", func="compare_rankings")
    if isinstance(min_models, bool) or not isinstance(min_models, (int, np.integer)) or min_models < 1:
        raise InvalidParameterError(
            f"min_models= must be a positive integer (the fewest models a group needs to "
            f"be ranked); got {min_models!r}."
        )


def compare_rankings(
    auc: AUCResult,
    *,
    methods: Sequence[str] = METHODS,
    pairs: Sequence[tuple[str, str]] | None = None,
    groups: str = "all",
    confidence_level: float = 0.95,
    dataset: str = "",
    min_models: int = 3,
    kendall: str = DEFAULT_KENDALL,
    spearman: str = DEFAULT_SPEARMAN,
) -> RankingStabilityResult:
    """Rank correlations between the model rankings each reference induces, per finding and group, with
    bootstrap intervals from the AUC result's replicates.

    Parameters
    ----------
    auc : AUCResult
        An :func:`~cxreval.classification.evaluate_auc` result (point + bootstrap). A point AUC table (a
        DataFrame, e.g. a published one) goes to :func:`compare_table_rankings`.
    dataset : str, default=''
        The ``dataset`` written in the tables' ``dataset`` column.
    methods, pairs, groups, confidence_level, min_models, kendall, spearman
        As :func:`compare_table_rankings`.

    Returns
    -------
    res : RankingStabilityResult
    """
    if not isinstance(auc, AUCResult):
        raise InvalidParameterError(
            f"The 'auc' parameter of compare_rankings must be an AUCResult (evaluate_auc); "
            f"got {type(auc).__name__}. A point AUC table goes to "
            f"compare_table_rankings(table, ...)."
        )
    return _rankings(
        auc,
        methods=methods,
        pairs=pairs,
        groups=groups,
        confidence_level=confidence_level,
        dataset=dataset,
        exclude_models=(),
        min_models=min_models,
        kendall=kendall,
        spearman=spearman,
        func="compare_rankings",
    )


def compare_table_rankings(
    table: pd.DataFrame,
    *,
    methods: Sequence[str] = METHODS,
    pairs: Sequence[tuple[str, str]] | None = None,
    groups: str = "all",
    confidence_level: float = 0.95,
    exclude_models: Sequence[str] = (MEAN_MODEL,),
    min_models: int = 3,
    kendall: str = DEFAULT_KENDALL,
    spearman: str = DEFAULT_SPEARMAN,
) -> RankingStabilityResult:
    """Rank correlations between the model rankings each reference induces in a point AUC table (no bootstrap),
    per dataset, finding and group.

    Parameters
    ----------
    table : pandas.DataFrame
        Columns ``model, finding, reference, auc`` and optionally ``group``, ``dataset`` (e.g. the XQA paper's
        tables, :func:`~cxreval.ranking.load_xqa_auc_table`).
    exclude_models : sequence of str, default=('Mean',)
        Rows that are not models (the mean over models) left out of the rankings.
    methods : sequence of {'SRCC', 'KRCC'}
    pairs : sequence of (reference_a, reference_b), optional
        Default: every pair of references, in their order.
    groups : {'all', 'overall', 'per-group'}, default='all'
        ``'overall'``: all models together (group ``'All Models'``); ``'per-group'``: within each model
        group; ``'all'``: both (per-group only when there is more than one group).
    confidence_level : float, default=0.95
    min_models : int, default=3
        Groups with fewer models are skipped.
    kendall : {'tau-a', 'tau-b'}, default='tau-a'
        KRCC variant: the XQA-Chest paper's ``(C - D) / (n (n - 1) / 2)`` (:func:`~cxreval.stats.kendall_tau_a`), or tau-b
        (:func:`~cxreval.stats.kendall_tau_b`, ``scipy.stats.kendalltau``).
    spearman : {'formula', 'pearson'}, default='formula'
        SRCC variant: the XQA-Chest paper's ``1 - 6 sum d² / (n (n² - 1))`` on average ranks
        (:func:`~cxreval.stats.spearman_rho_d2`), or the Pearson correlation of average ranks (:func:`~cxreval.stats.spearman_rho`,
        ``scipy.stats.spearmanr``). Equal without ties.

    Returns
    -------
    res : RankingStabilityResult
    """
    if not isinstance(table, pd.DataFrame):
        raise InvalidParameterError(
            f"The 'table' parameter of compare_table_rankings must be a point AUC table "
            f"(a DataFrame with model, finding, reference, auc); got {type(table).__name__}. "
            f"An AUCResult goes to compare_rankings(auc, ...)."
        )
    return _rankings(
        table,
        methods=methods,
        pairs=pairs,
        groups=groups,
        confidence_level=confidence_level,
        dataset="",
        exclude_models=exclude_models,
        min_models=min_models,
        kendall=kendall,
        spearman=spearman,
        func="compare_table_rankings",
    )


def _rankings(
    auc: AUCResult | pd.DataFrame,
    *,
    methods: Sequence[str],
    pairs: Sequence[tuple[str, str]] | None,
    groups: str,
    confidence_level: float | None,
    dataset: str,
    exclude_models: Sequence[str],
    min_models: int,
    kendall: str,
    spearman: str,
    func: str,
) -> RankingStabilityResult:
    """The rank correlations of :func:`compare_rankings` (an AUC result) or :func:`compare_table_rankings`."""
    from scipy.stats import rankdata

    for m in methods:
        check_choice(m, METHODS, name="methods", func=func)
    check_choice(groups, ("all", "overall", "per-group"), name="groups", func=func)
    check_ranking_options(kendall=kendall, spearman=spearman, min_models=min_models)
    variants = {"SRCC": spearman, "KRCC": kendall}
    corr_fn = {m: correlation_function(m, v) for m, v in variants.items()}
    if isinstance(auc, AUCResult):
        cl = auc.confidence_level if confidence_level is None else confidence_level
        cubes = _cubes_from_result(auc, dataset)
        n_res = auc.n_resamples
    else:
        cl = 0.95 if confidence_level is None else confidence_level
        cubes = _cubes_from_table(auc, exclude_models)
        n_res = 0
    cl = check_confidence_level(cl, func=func)
    corr_rows, rank_rows, top_rows = [], [], []
    dists: dict[tuple[str, str, str, str, str, str], np.ndarray] = {}
    notes: list[str] = []
    for ds, f, models, all_refs, gmap, point, dist in cubes:
        if pairs is None:
            prs_all = list(combinations(all_refs, 2))
        else:
            prs_all = [tuple(p) for p in pairs]  # type: ignore[misc]  # lengths are checked below
            for p in prs_all:
                for r in p:
                    if r not in all_refs:
                        raise InvalidParameterError(
                            f"Unknown reference {r!r} in 'pairs'; references of {ds!r} {f!r}: {all_refs}."
                        )
        unranked = [r for r, dead in zip(all_refs, np.asarray(np.isnan(point).all(axis=0))) if dead]
        if unranked:
            notes.append(
                f"{f}{f' ({ds})' if ds else ''}: no AUC under {unranked} (not labelled or undefined); "
                "not ranked there"
            )
        distinct = sorted(set(gmap[m] for m in models))
        sets: list[tuple[str, list[int]]] = []
        if groups in ("all", "overall"):
            sets.append((ALL_MODELS, list(range(len(models)))))
        if groups == "per-group" or (groups == "all" and len(distinct) > 1):
            sets += [(g, [i for i, m in enumerate(models) if gmap[m] == g]) for g in distinct]
        for gname, idx in sets:
            # undefined AUCs: a reference without any AUC for the finding is not ranked on it; a model without an
            # AUC under a ranked reference leaves that finding's ranking (counted in n_excluded)
            Pg = point[idx]
            live = np.asarray(~np.isnan(Pg).all(axis=0)) if len(idx) else np.zeros(len(all_refs), dtype=bool)
            ok_m = np.asarray(np.isfinite(Pg[:, live]).all(axis=1))
            n_excl = int((~ok_m).sum())
            if n_excl:
                notes.append(
                    f"{f}{f' ({ds})' if ds else ''}, {gname}: {n_excl} model(s) without an AUC under "
                    f"every reference excluded from the ranking ({[models[i] for i, o in zip(idx, ok_m) if not o]})"
                )
            refs = [r for r, lv in zip(all_refs, live) if lv]
            idx = [i for i, o in zip(idx, ok_m) if o]
            if len(idx) < min_models or not refs:
                continue
            P = point[idx][:, live]
            D = None if dist is None else dist[idx][:, live]
            ranks = rank_desc(P, axis=0)
            # tied AUCs (e.g. from 2-decimal rounding) can take any rank in [rank_min, rank_max]
            rmin = rankdata(-P, method="min", axis=0)
            rmax = rankdata(-P, method="max", axis=0)
            for k, r in enumerate(refs):
                col = P[:, k]
                _, inv, cnt = np.unique(col, return_inverse=True, return_counts=True)
                for q, i in enumerate(idx):
                    rank_rows.append(
                        (
                            ds,
                            f,
                            gname,
                            r,
                            models[i],
                            col[q],
                            ranks[q, k],
                            bool(cnt[inv[q]] > 1),
                            int(rmin[q, k]),
                            int(rmax[q, k]),
                        )
                    )
            # top-rank table
            if D is not None:
                finite = np.isfinite(D).all(axis=0)  # (refs, B)
                mx = np.nanmax(np.where(np.isfinite(D), D, -np.inf), axis=0)
                is_max = (D == mx[None]) & finite[None]  # type: ignore[index]
                share = is_max / np.maximum(is_max.sum(axis=0, keepdims=True), 1)
                n_ok = finite.sum(axis=-1)  # per ref
                with np.errstate(invalid="ignore", divide="ignore"):
                    prob_best = share.sum(axis=-1) / n_ok[None, :]
            for kb, rb in enumerate(refs):
                colb = P[:, kb]
                if np.isnan(colb).all():
                    continue
                best = np.flatnonzero(colb == np.nanmax(colb))
                for q in best:  # type: ignore[assignment]
                    for k, r in enumerate(refs):
                        pb = float(prob_best[q, k]) if D is not None else float("nan")
                        top_rows.append(
                            (
                                ds,
                                f,
                                gname,
                                rb,
                                models[idx[q]],
                                r,
                                P[q, k],
                                ranks[q, k],
                                int(rmin[q, k]),
                                int(rmax[q, k]),
                                bool(P[q, k] == np.nanmax(P[:, k])),
                                pb,
                            )
                        )
            for ra, rb in prs_all:
                if ra not in refs or rb not in refs:
                    continue
                ka, kb = refs.index(ra), refs.index(rb)
                for m in methods:
                    stat = float(corr_fn[m](P[:, ka], P[:, kb]))
                    if D is not None:
                        d = corr_fn[m](D[:, ka, :], D[:, kb, :], axis=0)
                        s = summarize_distribution(d, confidence_level=cl)
                        vals = [float(s[c]) for c in ("mean", "sd", "ci_low", "ci_high")] + [
                            int(s["n_undefined"])
                        ]
                        dists[(ds, f, gname, ra, rb, m)] = d
                    else:
                        vals = [np.nan] * 4 + [0]
                    corr_rows.append(
                        (
                            ds,
                            f,
                            gname,
                            ra,
                            rb,
                            m,
                            variants[m],
                            stat,
                            *vals,
                            len(idx),
                            _n_tied(P[:, ka]),
                            _n_tied(P[:, kb]),
                            n_excl,
                        )
                    )
    none = ""
    if not corr_rows:  # no ranking at all: refused; rankings without a pair to correlate: said, not silent
        none = _why_no_correlation(cubes, pairs, min_models)
        if not rank_rows:
            raise InvalidParameterError(none)
        warnings.warn(none, CxrevalWarning, stacklevel=3)
    corr = pd.DataFrame(corr_rows, columns=list(CORRELATION_COLUMNS))
    rankings = pd.DataFrame(rank_rows, columns=list(RANKING_COLUMNS))
    top = pd.DataFrame(top_rows, columns=list(TOP_COLUMNS))
    if isinstance(auc, AUCResult):
        source = (
            f"From predictions + labels: {len(auc.models)} models, references {list(auc.references)}, "
            f"{auc.n_resamples} patient-bootstrap replicates (seed {auc.seed}); boot = mean ± sd of the "
            f"replicate correlations, CI = {int(auc.confidence_level * 100)}% percentile. {auc.design()}"
        )
        if not dataset:
            source += (
                " Column `dataset` is blank in every table: no dataset name was given (`dataset=`, the "
                "command's `--dataset NAME`); it tells apart the rows of several datasets in one table."
            )
    else:
        source = "From an AUC table: point estimates (no bootstrap); tied AUCs share the average rank."
    if none:
        source += (
            f" {none.replace('No rank correlation', 'No rank correlation was computed', 1)} The rankings alone "
            "are written."
        )
    return RankingStabilityResult(
        corr, rankings, top, n_res, cl, dists, kendall, spearman, source, tuple(notes)
    )


def _why_no_correlation(cubes: list[_Cube], pairs: Sequence[tuple[str, str]] | None, min_models: int) -> str:
    """Why no rank correlation could be computed, in words naming the parameter to change."""
    refs = list(dict.fromkeys(r for c in cubes for r in c[3]))
    live = list(
        dict.fromkeys(
            r for c in cubes for r, dead in zip(c[3], np.asarray(np.isnan(c[5]).all(axis=0))) if not dead
        )
    )
    if len(refs) < 2:
        return (
            f"No rank correlation: it compares the rankings of two references, and the AUCs have one ({refs}). "
            "Give labels of two or more references."
        )
    if len(live) < 2:
        return (
            f"No rank correlation: only {live} of the references {refs} has an AUC (the others label no "
            f"finding with both classes)."
        )
    counts = []
    for ds, f, models, _refs, _, point, _ in cubes:
        ok = ~np.isnan(point).all(axis=0)
        n = int(np.isfinite(point[:, ok]).all(axis=1).sum()) if ok.sum() >= 2 else 0
        counts.append(f"{f}{f' ({ds})' if ds else ''}: {n} of {len(models)}")
    pair_text = "" if pairs is None else f" for the pairs {[f'{a}:{b}' for a, b in pairs]}"
    return (
        f"No rank correlation{pair_text}: every finding has fewer than min_models={min_models} models with an "
        f"AUC under each reference ({'; '.join(counts)}; a model with an undefined AUC leaves the ranking). Lower "
        f"min_models= (at least 2) or give more models."
    )
