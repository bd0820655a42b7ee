"""The report's "Key findings": one line per analysis, written from the numbers in its result files.

Each line gives the headline number, its interval and a plain-language verdict whose wording follows
:class:`~cxreval.report.Thresholds` (stated once on the page). Nothing here knows a dataset:
the subjects (findings, references, models) are read from the tables.

>>> import pandas as pd
>>> fmt(-0.4909), ordinal(4)
('−0.49', '4th')
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from pathlib import Path

import pandas as pd

from .._plots.style import ci_columns
from ..agreement import AgreementTableResult
from ..datasets.audit import DatasetAudit
from ..fusion import FusionResult
from ..iqa import MetricAgreementResult, MetricComparisonResult
from ..labeller import LabellerValidationResult
from ..ranking import RankingStabilityResult
from ..schema import MACRO, MICRO
from ._best_model import SEPARABILITY_NOTE, classification_finding, separability
from ._key_finding_base import (
    _SUMMARY,
    KeyFinding,
    _ci,
    _load,
    _num,
    _prefer_all_group,
    _str,
    _where,
    confidence_level,
    fmt,
    named,
    ordinal,
)
from ._reader_study import reader_study_finding
from ._relabelling import relabelling_finding
from ._subgroups import subgroups_finding
from ._thresholds import Thresholds
from .result_files import find_result_file, run_record

__all__ = [
    "KeyFinding",
    "key_finding",
    "confidence_level",
    "fmt",
    "ordinal",
    "separability",
    "SEPARABILITY_NOTE",
    "circular_reference",
    "FINDERS",
]

# ------------------------------------------------------------------------------------------------
# one function per analysis kind: (folder, thresholds) -> KeyFinding | None
# ------------------------------------------------------------------------------------------------


def _rank_of_best(folder: Path, row: pd.Series) -> str:
    """'the best model under B (m) ranks 4th of 10 under A' from rankings.csv, or ''."""
    rk = _load(folder, RankingStabilityResult.FILES["rankings"], ("finding", "reference", "model", "rank"))
    if rk is None:
        return ""
    keep = _str(rk, "finding") == str(row["finding"])
    for col in ("group", "dataset"):
        if col in rk.columns and col in row.index:
            keep &= _str(rk, col) == ("" if pd.isna(row[col]) else str(row[col]))
    rk = rk[keep].assign(_r=_num(rk[keep], "rank"))
    a, b = sorted((str(row["reference_a"]), str(row["reference_b"])))  # the same words in either order
    under_b = rk[_str(rk, "reference") == b].dropna(subset=["_r"])
    under_a = rk[_str(rk, "reference") == a].dropna(subset=["_r"]).set_index("model")["_r"]
    if under_b.empty or under_a.empty:
        return ""
    best = under_b.sort_values("_r", kind="stable").iloc[0]
    model = str(best["model"])
    if model not in under_a.index:
        return ""
    r = under_a[model]
    r = float(r.iloc[0]) if isinstance(r, pd.Series) else float(r)
    if r == 1:
        return f"; the best model under {b}, {model}, is also best under {a}"
    rank = ordinal(int(round(r))) if r == int(r) else f"{r:g}th (tied)"
    return f"; the best model under {b}, {model}, ranks {rank} of {len(under_a)} under {a}"


def ranking_finding(folder: Path, th: Thresholds) -> KeyFinding | None:
    rc = _load(
        folder,
        RankingStabilityResult.FILES["rank_correlation"],
        ("finding", "reference_a", "reference_b", "statistic"),
    )
    if rc is None:
        return None
    if "method" in rc.columns:
        m = _str(rc, "method").str.upper()
        rc = rc[m.str.startswith("SRCC") | m.str.startswith("SPEARMAN")]
    rc = _prefer_all_group(rc).assign(_s=lambda d: _num(d, "statistic")).dropna(subset=["_s"])
    if rc.empty:
        return None
    bands = rc["_s"].map(th.srcc_band)
    worst = rc.loc[rc["_s"].idxmin()]
    level = th.srcc_level(worst["_s"])
    verb = (
        "closely predicts"
        if level == 0
        else "barely predicts"
        if level == len(th.srcc) - 1
        else "partly predicts"
    )
    lo, hi = float(_num(rc, "ci_low")[worst.name]), float(_num(rc, "ci_high")[worst.name])
    pm, psd = float(_num(rc, "paper_mean")[worst.name]), float(_num(rc, "paper_sd")[worst.name])
    if math.isfinite(lo) and math.isfinite(hi):
        interval = _ci(folder, lo, hi)
    elif math.isfinite(pm):
        interval = f"no bootstrap interval here; published bootstrap mean {fmt(pm)}" + (
            f" ± {fmt(psd)}" if math.isfinite(psd) else ""
        )
    else:
        interval = "no interval in the table"
    a, b = sorted((str(worst["reference_a"]), str(worst["reference_b"])))  # the same words in either order
    head, tail = "", ""
    if len(rc) > 1:
        counts = ", ".join(f"{int((bands == label).sum())} {label}" for label, _ in th.srcc)
        head = f"least stable of {len(rc)} comparisons, "
        tail = f"; all {len(rc)}: {counts}"
    what = str(worst["finding"])
    what = (
        f"{_where(worst)} alone (one finding, not the macro average)"
        if what not in _SUMMARY
        else _where(worst)
    )
    # one sentence of verdict, one of numbers
    text = (
        f"{head}{what}: the model ranking under {a} {verb} the ranking under {b}{_rank_of_best(folder, worst)}. "
        f"SRCC {fmt(worst['_s'])} ({interval}){tail}."
    )
    verdict = th.srcc_band(worst["_s"]) + (" at worst" if len(rc) > 1 else "")
    return KeyFinding("ranking", text[0].upper() + text[1:], verdict)


def _kappa_rows(df: pd.DataFrame, key: str) -> tuple[pd.DataFrame, str]:
    f = _str(df, "finding")
    for s in (MICRO, MACRO):
        if (f == s).any():
            rows = df[f == s]
            sets = _str(rows, "finding_set")
            if sets.nunique() > 1:  # one summary row per pair and finding set: keep the set of all findings
                keep = sets == "all"
                if keep.any():
                    return rows[keep], f"{s} over all findings"
                rows = rows.assign(**{key: _str(rows, key) + " (" + sets + ")"})
            return rows, f"{s} over findings"
    return df.groupby(key, sort=False, as_index=False)[
        ["kappa_w", "kappa_low", "kappa_high"]
    ].mean(), "mean over findings"


def _kappa_table(
    folder: Path, name: str, required: tuple[str, ...], key: str
) -> tuple[pd.DataFrame, pd.DataFrame, str, pd.Series, pd.Series] | None:
    """The agreement table ``name`` (``required`` columns; numeric κ, rows without a κ left out), its summary
    rows per ``key``, how they summarise (:func:`_kappa_rows`) and the summary rows of lowest and highest κ;
    None when absent or empty."""
    df = _load(folder, name, required)
    if df is None:
        return None
    df = df.assign(
        kappa_w=_num(df, "kappa_w"), kappa_low=_num(df, "kappa_low"), kappa_high=_num(df, "kappa_high")
    ).dropna(subset=["kappa_w"])
    if df.empty:
        return None
    rows, how = _kappa_rows(df, key)
    return df, rows, how, rows.loc[rows["kappa_w"].idxmin()], rows.loc[rows["kappa_w"].idxmax()]


def _low_high(r: pd.Series, sep: str) -> str:
    """``sep`` + "Low–High κ a to b" for a row with a finite Low–High interval, else ''."""
    return (
        f"{sep}Low–High κ {fmt(r['kappa_low'])} to {fmt(r['kappa_high'])}"
        if math.isfinite(r["kappa_low"]) and math.isfinite(r["kappa_high"])
        else ""
    )


def agreement_finding(folder: Path, th: Thresholds) -> KeyFinding | None:
    got = _kappa_table(
        folder, AgreementTableResult.FILES["agreement"], AgreementTableResult.COLUMNS[:3], "pair"
    )
    if got is None:
        return None
    ag, rows, how, lo_r, hi_r = got

    def one(r: pd.Series) -> str:
        lo, hi, k = r["kappa_low"], r["kappa_high"], r["kappa_w"]
        if math.isfinite(lo) and math.isfinite(hi) and not lo - 5e-3 <= k <= hi + 5e-3:
            # two measures: the weighted κ over 3 states and the binary κ range; say which is which
            return (
                f"{r['pair']}: binary κ {fmt(lo)} to {fmt(hi)} (Low–High: uncertain labels resolved "
                f"pessimistically to optimistically), {th.kappa_band(lo)} agreement at worst; the 3-state "
                f"weighted κ (negative < uncertain < positive), a different measure, is {fmt(k)}"
            )
        return f"{r['pair']}: κ {fmt(k)}, {th.kappa_band(k)} agreement{_low_high(r, '; ')}"

    if len(rows) == 1:
        text = f"Weighted κ ({how}), {one(lo_r)}"
    else:
        text = f"Weighted κ ({how}) across {len(rows)} source pairs from {one(lo_r)}, to {one(hi_r)}"
    per = ag[~_str(ag, "finding").isin(_SUMMARY)]
    if len(per) > 1:
        w = per.loc[per["kappa_w"].idxmin()]
        text += (
            f". Lowest single finding: {w['finding']} ({w['pair']}), κ {fmt(w['kappa_w'])}, "
            f"{th.kappa_band(w['kappa_w'])}"
        )
    verdict = f"{th.kappa_band(lo_r['kappa_w'])} agreement" + (" at worst" if len(rows) > 1 else "")
    return KeyFinding("agreement", text + ".", verdict)


def _fusion_readers_and_reference(folder: Path) -> tuple[list[str], str]:
    """The readers fused and the reference named in the governing ``run.json`` (``readers``/``reference`` of the
    demo, ``--readers``/``--adjudicated`` of ``cxreval fuse``); empty when not recorded."""
    found = run_record(folder)
    if found is None:
        return [], ""
    rec = found[0]
    raw = rec.get("argv")
    argv = [str(a) for a in raw] if isinstance(raw, list) else []

    def opt(name: str) -> str:
        return argv[argv.index(name) + 1] if name in argv[:-1] else ""

    readers = rec.get("readers")
    names = (
        [str(r) for r in readers]
        if isinstance(readers, list)
        else [r for r in opt("--readers").split(",") if r]
    )
    ref = str(rec.get("reference") or opt("--adjudicated") or "")
    return names, ref


def circular_reference(folder: Path) -> str:
    """Why the fusion reference of ``folder`` is built from the fused readers' own labels, or '' when it is not
    seen to be.

    Two signs, either enough: the reference is one of the fused readers (``run.json``), or a fusion method
    reproduces the reference exactly (κ = 1 and F1 = 1 on every finding: the reference is that method's rule
    applied to the same readers, e.g. a consensus that is their majority vote).
    """
    readers, ref = _fusion_readers_and_reference(folder)
    ref_name = ref.split(" (")[0]
    if ref_name and ref_name in readers:
        return f"the reference {ref_name} is one of the fused readers"
    fa = _load(folder, FusionResult.FILES["fusion_agreement"], FusionResult.COLUMNS[:3])
    if fa is None:
        return ""
    per = fa[~_str(fa, "finding").isin(_SUMMARY)].assign(
        _k=lambda d: _num(d, "kappa_w"), _f=lambda d: _num(d, "f1_w")
    )
    if per.empty:
        return ""
    ok = (per["_k"] >= 1 - 1e-9) & (per["_f"].isna() | (per["_f"] >= 1 - 1e-9))
    exact = ok.groupby(_str(per, "method"), sort=False).all()
    hits = [str(m) for m, ok in exact.items() if ok]
    if not hits:
        return ""
    who = f" ({', '.join(readers)})" if readers else ""
    return (
        f"{' and '.join(map(named, hits))} reproduce{'s' if len(hits) == 1 else ''} the reference exactly on every "
        f"finding (κ 1.00), so the reference is {'that rule' if len(hits) == 1 else 'their rule'} applied to the "
        f"same readers{who}"
    )


def fusion_finding(folder: Path, th: Thresholds) -> KeyFinding | None:
    got = _kappa_table(folder, FusionResult.FILES["fusion_agreement"], FusionResult.COLUMNS[:3], "method")
    if got is None:
        return None
    _, rows, how, worst, best = got
    circular = circular_reference(folder)
    iv = _low_high(best, ", ")
    text = (
        f"Against the reference, the best of {len(rows)} fusion method(s) is {named(best['method'])} (κ {how} "
        f"{fmt(best['kappa_w'])}{iv}: {th.kappa_band(best['kappa_w'])} agreement)"
    )
    if len(rows) > 1:
        text += f"; the worst is {named(worst['method'])} (κ {fmt(worst['kappa_w'])}: {th.kappa_band(worst['kappa_w'])})"
    if circular:
        text = (
            f"Circular reference: {circular}. Agreement with it measures closeness to that rule, not accuracy. "
            + text
        )
        return KeyFinding("fusion", text + ".", "circular reference")
    return KeyFinding("fusion", text + ".", f"{th.kappa_band(best['kappa_w'])} agreement at best")


def _fractions(s: pd.Series) -> pd.Series:
    from fractions import Fraction

    def conv(v: object) -> float:
        try:
            return float(Fraction(str(v).strip()))
        except (ValueError, ZeroDivisionError):
            return float("nan")

    return s.map(conv)


def localization_finding(folder: Path, th: Thresholds) -> KeyFinding | None:
    from ..localization import LocalizationResult

    loc = _load(folder, LocalizationResult.FILES["localization"], ("finding", "T", "acc"))
    if loc is None:
        return None
    loc = loc.assign(_t=_fractions(loc["T"]), _acc=_num(loc, "acc"), _afp=_num(loc, "afp")).dropna(
        subset=["_t", "_acc"]
    )
    if loc.empty:
        return None
    t = float(loc["_t"].iloc[(loc["_t"] - 0.5).abs().argmin()])
    at = loc[loc["_t"] == t]
    base = at[_str(at, "localizer").str.lower().str.contains("whole image")]
    cand = at.drop(base.index)
    for col in ("variant", "rule"):  # compare like with like: the baseline's variant and overlap rule first
        if col in cand.columns and not base.empty and _str(cand, col).isin(set(_str(base, col))).any():
            cand = cand[_str(cand, col).isin(set(_str(base, col)))]
    if cand.empty:
        return None
    case = {}
    for col in ("variant", "localizer", "upsampling", "threshold", "rule"):
        if col in cand.columns:
            vals = list(dict.fromkeys(_str(cand, col)))
            pick = next((v for v in vals if "heatmap" in v), vals[0]) if col == "localizer" else vals[0]
            case[col] = pick
            cand = cand[_str(cand, col) == pick]
    desc = ", ".join(
        f"{'threshold ' if k == 'threshold' else ''}{v}" for k, v in case.items() if v not in ("", "-")
    )
    lo, hi = cand.loc[cand["_acc"].idxmin()], cand.loc[cand["_acc"].idxmax()]
    text = f"At overlap threshold T = {t:g}" + (f" ({desc})" if desc else "")
    if len(cand) > 1:
        text += (
            f", accuracy per finding ranges from {fmt(lo['_acc'])} ({lo['finding']}) to {fmt(hi['_acc'])} "
            f"({hi['finding']})"
        )
    else:
        text += f", accuracy is {fmt(lo['_acc'])} ({lo['finding']})"
    if cand["_afp"].notna().any():
        text += f", with {fmt(cand['_afp'].mean())} false positives per image on average"
    for col in ("variant", "rule"):
        if col in case and col in base.columns:
            base = base[_str(base, col) == case[col]]
    base = base[_str(base, "finding").isin(set(_str(cand, "finding")))]
    verdict = "no baseline in the table"
    if not base.empty:
        ours, theirs = float(cand["_acc"].mean()), float(base["_acc"].mean())
        better = ours > theirs
        verdict = "above the whole-image baseline" if better else "no better than the whole-image baseline"
        text += f"; mean accuracy {fmt(ours)} vs {fmt(theirs)} for the whole-image baseline: {verdict}"
    return KeyFinding("localization", text + " (point values; the table holds no interval).", verdict)


def iqa_finding(folder: Path, th: Thresholds) -> KeyFinding | None:
    ma = _load(folder, MetricAgreementResult.FILES["metric_agreement"], ("metric", "srcc"))
    if ma is not None:
        ma = ma.assign(_s=_num(ma, "srcc")).dropna(subset=["_s"])
    if ma is not None and not ma.empty:
        best, worst = ma.loc[ma["_s"].idxmax()], ma.loc[ma["_s"].idxmin()]
        lo_c, hi_c = ci_columns(ma, "srcc")
        iv = ""
        if lo_c and hi_c and math.isfinite(float(_num(ma, lo_c)[best.name])):
            iv = f", {_ci(folder, float(_num(ma, lo_c)[best.name]), float(_num(ma, hi_c)[best.name]))}"
        text = f"Closest to the experts' z-MOS: {best['metric']} (SRCC {fmt(best['_s'])}{iv})"
        if len(ma) > 1:
            text += f"; farthest: {worst['metric']} (SRCC {fmt(worst['_s'])}) of {len(ma)} metrics"
        return KeyFinding("iqa", text + ".", f"best metric {best['metric']}")
    mvm = _load(folder, MetricComparisonResult.FILES["metric_vs_metric"], ("metric_a", "metric_b", "srcc"))
    if mvm is None:
        return None
    mvm = mvm.assign(_s=_num(mvm, "srcc")).dropna(subset=["_s"])
    if "over" in mvm.columns and not mvm.empty:
        first = _str(mvm, "over").iloc[0]
        mvm = mvm[_str(mvm, "over") == first]
        over = f" over the {first}"
    else:
        over = ""
    if mvm.empty:
        return None
    lo, hi = mvm.loc[mvm["_s"].idxmin()], mvm.loc[mvm["_s"].idxmax()]
    n_low = int((mvm["_s"].map(th.srcc_level) > 0).sum())
    top = th.srcc[0]
    text = (
        f"No expert ratings: metrics are compared with each other. Their rankings{over} agree with SRCC from "
        f"{fmt(lo['_s'])} ({lo['metric_a']} vs {lo['metric_b']}) to {fmt(hi['_s'])} "
        f"({hi['metric_a']} vs {hi['metric_b']}); {n_low} of {len(mvm)} metric pairs fall below "
        f"{top[1]:g} ({top[0]})"
    )
    dr = _load(folder, MetricComparisonResult.FILES["degradation_ranking"], ("metric", "degradation", "rank"))
    if dr is not None:
        dr = dr.assign(_r=_num(dr, "rank"))
        firsts = dr[dr["_r"] == dr.groupby("metric")["_r"].transform("min")].drop_duplicates("metric")
        counts = _str(firsts, "degradation").value_counts()
        if len(counts):
            text += (
                f"; {counts.iloc[0]} of {dr['metric'].nunique()} metrics judge {counts.index[0]} "
                "the least harmful degradation"
            )
    verdict = "metrics disagree" if n_low else "metrics agree"
    return KeyFinding("iqa", text + ".", verdict)


def audit_finding(folder: Path, th: Thresholds) -> KeyFinding | None:
    p = find_result_file(folder, DatasetAudit.FILES["audit"])
    if p is None:
        return None
    try:
        a = json.loads(p.read_text())
    except (OSError, json.JSONDecodeError):
        return None
    if not isinstance(a, dict):
        return None
    name = a.get("dataset", "dataset")
    parts = []
    if "n_images" in a:
        parts.append(
            f"{int(a['n_images']):,} images"
            + (f" of {int(a['n_patients']):,} patients" if "n_patients" in a else "")
        )
    boxes = a.get("boxes")
    if isinstance(boxes, dict) and "n_boxes" in boxes:
        parts.append(f"{int(boxes['n_boxes']):,} boxes on {int(boxes.get('n_boxed_images', 0)):,} images")
    split = a.get("split")
    if not isinstance(split, dict):
        verdict = "split and leakage not checked"
        parts.append(
            f'official split: not checked, no split lists were available ({p.name} has "split": null), '
            "so patient leakage between splits is unknown"
        )
    else:
        sizes = split.get("sizes")
        if isinstance(sizes, list) and sizes:
            parts.append(
                "split: "
                + ", ".join(
                    f"{s.get('split')} {int(s.get('n_studies', 0)):,} studies"
                    for s in sizes
                    if isinstance(s, dict)
                )
            )
        shared = split.get("n_shared_patients", split.get("patient_overlap"))
        if shared is None:
            verdict = "leakage not reported"
        elif int(shared) == 0:
            verdict = "no patient leakage"
            parts.append("no patient is in more than one split")
        else:
            verdict = "patient leakage"
            parts.append(f"{int(shared):,} patients are in more than one split (leakage)")
    return KeyFinding("audit", f"{name}: " + "; ".join(parts) + ".", verdict)


def report_labels_finding(folder: Path, th: Thresholds) -> KeyFinding | None:
    """Report labeller against a human-coded reference: micro F1 with its interval, the published
    labeller's figure when the table carries it (``nih_f1``), and the weakest finding."""
    df = _load(folder, LabellerValidationResult.FILES["labeller_validation"], ("finding", "f1"))
    if df is None:
        return None
    f = _str(df, "finding")
    micro = df[f == MICRO]
    per = df[~f.isin(_SUMMARY)].assign(f1=lambda d: _num(d, "f1")).dropna(subset=["f1"])
    if micro.empty or per.empty:
        return None
    m = micro.iloc[0]
    v, lo, hi = (
        float(_num(micro, "f1").iloc[0]),
        float(_num(micro, "f1_low").iloc[0]),
        float(_num(micro, "f1_high").iloc[0]),
    )
    ci = f" ({_ci(folder, lo, hi)})" if math.isfinite(lo) and math.isfinite(hi) else ""
    pub = float(_num(micro, "nih_f1").iloc[0])
    weakest = per.loc[per["f1"].idxmin()]
    text = (
        f"The report labeller on reports its rules were not tuned on (the held-out half), against the "
        f"human-coded reference: micro F1 {fmt(v)}{ci} over {len(per)} findings"
    )
    if math.isfinite(pub):
        if math.isfinite(lo) and lo > pub:
            verdict = "better than the published labeller"
        elif math.isfinite(hi) and hi < pub:
            verdict = "worse than the published labeller"
        else:
            verdict = "comparable to the published labeller"
        text += f"; the published labeller's micro F1 is {fmt(pub)}, so this one is {verdict}"
    else:
        verdict = f"micro F1 {fmt(v)}"
    text += f"; weakest finding {weakest['finding']} (F1 {fmt(weakest['f1'])})"
    del m
    return KeyFinding("report_labels", text + ".", verdict)


FINDERS: dict[str, Callable[[Path, Thresholds], KeyFinding | None]] = {
    "audit": audit_finding,
    "classification": classification_finding,
    "ranking": ranking_finding,
    "agreement": agreement_finding,
    "fusion": fusion_finding,
    "localization": localization_finding,
    "iqa": iqa_finding,
    "report_labels": report_labels_finding,
    "relabelling": relabelling_finding,
    "reader_study": reader_study_finding,
    "subgroups": subgroups_finding,
}
"""The key-finding function of each analysis kind."""


def key_finding(kind: str, folder: str | Path, thresholds: Thresholds | None = None) -> KeyFinding | None:
    """The key finding of one analysis kind in ``folder``, or None when its files do not allow one."""
    fn = FINDERS.get(kind)
    return None if fn is None else fn(Path(folder), thresholds or Thresholds())
