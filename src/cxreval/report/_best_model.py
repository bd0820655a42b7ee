"""The report's best-model statements: which model is best under each reference and whether it is separable
from the runner-up and from the best under the other references, read from ``auc_comparison.csv``
(:class:`~cxreval.classification.SeparabilityResult`); the classification line of the key findings."""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd

from ..classification import SeparabilityResult
from ..schema import MACRO, MEAN, MICRO
from ..stats import AUCResult, AUCTableResult
from ._key_finding_base import _SUMMARY, KeyFinding, _ci, _load, _num, _str, confidence_level, fmt
from ._thresholds import Thresholds
from .result_files import find_result_file

__all__ = ["SEPARABILITY_NOTE", "classification_finding", "separability"]


def _separability_rows(folder: Path) -> pd.DataFrame | None:
    """``auc_comparison.csv`` (:class:`~cxreval.classification.SeparabilityResult`) of ``folder``, or None."""
    sep = _load(
        folder,
        SeparabilityResult.FILES["auc_comparison"],
        ("finding", "reference", "model_a", "model_b", "comparison", "difference", "ci_low", "ci_high"),
    )
    return (
        None
        if sep is None
        else sep.assign(_d=_num(sep, "difference"), _lo=_num(sep, "ci_low"), _hi=_num(sep, "ci_high"))
    )


def _delta(row: pd.Series, level: float) -> str:
    """'ΔAUC 0.004, 95% CI −0.010 to 0.020' of one comparison row."""
    if not (math.isfinite(row["_lo"]) and math.isfinite(row["_hi"])):
        return f"ΔAUC {fmt(row['_d'], 3)}, no interval"
    return f"ΔAUC {fmt(row['_d'], 3)}, {level * 100:g}% CI {fmt(row['_lo'], 3)} to {fmt(row['_hi'], 3)}"


def separability(
    folder: Path, finding: str, reference: str, model: str, *, versus: str = "", subject: str = ""
) -> str:
    """One clause saying whether ``model`` (the best under ``reference`` for ``finding``) is separable from the
    runner-up (``versus=''``) or from the best model under reference ``versus``, both scored under ``reference``,
    read from ``auc_comparison.csv``; '' when the folder has no such comparison. ``subject`` names the model in
    the clause (default: its name)."""
    sep = _separability_rows(folder)
    if sep is None:
        return ""
    keep = (
        (_str(sep, "finding") == finding)
        & (_str(sep, "reference") == reference)
        & (_str(sep, "model_a") == model)
    )
    wanted = "runner-up" if not versus else f"best under {versus}"
    rows = sep[keep & _str(sep, "comparison").str.split("; ").map(lambda w: wanted in w)]
    if rows.empty:
        return ""
    r = rows.iloc[0]
    who = subject or model
    other = f"the runner-up {r['model_b']}" if not versus else f"{r['model_b']} (the best under {versus})"
    level, _ = confidence_level(folder)
    if not (math.isfinite(r["_lo"]) and math.isfinite(r["_hi"])):
        return f"whether {who} and {other} are separable was not assessed ({_str(rows, 'method').iloc[0]})"
    if r["_lo"] > 0 or r["_hi"] < 0:
        return f"{who} is separable from {other} ({_delta(r, level)})"
    return f"{who} and {other} are not separable ({_delta(r, level)})"


SEPARABILITY_NOTE = (
    "ΔAUC is the difference between two models' AUCs under the same reference, computed on the same "
    "bootstrap resamples of patients (DeLong's test where there are no resamples); the intervals of "
    "one finding are simultaneous (Bonferroni over its comparisons), and two models are called "
    "not separable when the interval covers 0."
)
"""How the report's separability statements are made (stated once on the page)."""


def _what(finding: str, n_findings: int) -> str:
    """What an AUC row summarises, in words: 'macro AUC (mean of the 4 per-finding AUCs)' or 'X alone'."""
    if finding == MACRO:
        return f"macro AUC (the mean of the {n_findings} per-finding AUCs)"
    if finding == MICRO:
        return f"micro AUC (all {n_findings} findings' cases pooled)"
    return f"{finding} alone (one finding, not the macro average)"


def _comparison_row(
    sep: pd.DataFrame | None,
    finding: str,
    reference: str,
    model_a: str,
    model_b: str = "",
    runner_up: bool = False,
) -> pd.Series | None:
    """The ``auc_comparison.csv`` row of ``model_a`` against ``model_b`` (or against the runner-up) under
    ``reference``, or None."""
    if sep is None:
        return None
    keep = (
        (_str(sep, "finding") == finding)
        & (_str(sep, "reference") == reference)
        & (_str(sep, "model_a") == model_a)
    )
    if runner_up:
        keep &= _str(sep, "comparison").str.split("; ").map(lambda w: "runner-up" in w)
    else:
        keep &= _str(sep, "model_b") == model_b
    rows = sep[keep]
    return None if rows.empty else rows.iloc[0]


def _separable(row: pd.Series | None) -> bool | None:
    """True / False when the comparison was assessed, None when not (or absent)."""
    if row is None or not (math.isfinite(row["_lo"]) and math.isfinite(row["_hi"])):
        return None
    return bool(row["_lo"] > 0 or row["_hi"] < 0)


def _under(refs: list[str]) -> str:
    """'A', 'A and B', 'A, B and C'."""
    return refs[0] if len(refs) == 1 else ", ".join(refs[:-1]) + f" and {refs[-1]}"


def _verdict_clause(rows: list[tuple[str, pd.Series | None]], what: str, n_refs: int, obj: str = "") -> str:
    """'; it is separable from the runner-up under A, not under B' (``what`` 'it is', ``obj`` ' from the
    runner-up') from (reference, comparison row) pairs."""
    got: dict[str, list[bool | None]] = {}
    for r, row in rows:
        got.setdefault(r, []).append(_separable(row))
    no = [r for r, v in got.items() if False in v]
    yes = [r for r, v in got.items() if r not in no and True in v]
    if not yes and not no:
        return ""
    if not no:
        return f"; {what} separable{obj} under {'every reference' if len(yes) == n_refs > 1 else _under(yes)}"
    if not yes:
        return f"; {what} not separable{obj} under {'any reference' if len(no) == n_refs > 1 else _under(no)}"
    return f"; {what} separable{obj} under {_under(yes)}, not under {_under(no)}"


def classification_finding(folder: Path, th: Thresholds) -> KeyFinding | None:
    """Two sentences: the verdict (which model is best under each reference, whether the differences are
    separable) and its numbers (AUC and ΔAUC with intervals). References are named in sorted order and every
    comparison is read from ``auc_comparison.csv`` by its models, so the text does not depend on the order in
    which the references were given."""
    auc = _load(folder, AUCTableResult.FILES["auc"], AUCTableResult.COLUMNS)
    if auc is None:
        return None
    keep = ~_str(auc, "model").str.lower().isin((MEAN, "average")) & (
        _str(auc, "group").str.lower() != "summary"
    )
    auc = auc[keep].assign(_a=lambda d: _num(d, "auc")).dropna(subset=["_a"])
    ds = ""
    if "dataset" in auc.columns and not auc.empty:
        ds = _str(auc, "dataset").iloc[0]
        auc = auc[_str(auc, "dataset") == ds]
    if auc.empty:
        return None
    findings = list(dict.fromkeys(_str(auc, "finding")))
    finding = next((f for f in _SUMMARY if f in findings), findings[0])
    n_per = len([f for f in findings if f not in _SUMMARY])
    sub = auc[_str(auc, "finding") == finding]
    refs = sorted(dict.fromkeys(_str(sub, "reference")))
    best = {
        r: sub[_str(sub, "reference") == r].sort_values("_a", ascending=False, kind="stable").iloc[0]
        for r in refs
    }
    model = {r: str(best[r]["model"]) for r in refs}
    has_ci = _num(sub, "ci_low").notna().any()
    sep = _separability_rows(folder)
    level, _ = confidence_level(folder)

    def stated(r: str) -> str:
        b = best[r]
        lo, hi = float(_num(sub, "ci_low")[b.name]), float(_num(sub, "ci_high")[b.name])
        interval = f" ({_ci(folder, lo, hi)})" if math.isfinite(lo) and math.isfinite(hi) else ""
        return f"{b['model']} AUC {fmt(b['_a'], 3)}{interval}"

    def delta(row: pd.Series | None) -> str:
        return "" if row is None else f", ΔAUC vs {row['model_b']} {_delta(row, level).removeprefix('ΔAUC ')}"

    where = (f"{ds}, " if ds else "") + _what(finding, n_per)
    where = where[0].upper() + where[1:]
    n_models = sub["model"].nunique()
    distinct = list(dict.fromkeys(model.values()))
    if len(distinct) == 1:
        rows = [(r, _comparison_row(sep, finding, r, model[r], runner_up=True)) for r in refs]
        if len(refs) == 1:
            verdict = "one reference"
            head = f"{where}: the best of {n_models} models under {refs[0]} is {model[refs[0]]}"
        else:
            verdict = "same best model under every reference"
            head = f"{where}: {distinct[0]} is the best of {n_models} models under every reference ({_under(refs)})"
        text = head + _verdict_clause(rows, "it is", len(refs), " from the runner-up") + "."
    else:
        verdict = "best model changes with the reference"
        others = {r: list(dict.fromkeys(model[o] for o in refs if model[o] != model[r])) for r in refs}
        rows = [(r, _comparison_row(sep, finding, r, model[r], m)) for r in refs for m in others[r]]
        rows = [(r, row) for r, row in rows if row is not None] or [(r, None) for r in refs]
        by = "; ".join(f"{m} under {_under([r for r in refs if model[r] == m])}" for m in distinct)
        what = "the two are" if len(distinct) == 2 else "the best models are"
        text = (
            f"{where}: the best of {n_models} models changes with the reference ({by})"
            + _verdict_clause(rows, what, len(refs))
            + "."
        )
    numbers = []
    many = len(refs) > 3  # then each reference's best AUC only; the ΔAUCs are in the section's table
    for r in refs:
        cmp = [] if many else [row for rr, row in rows if rr == r and row is not None]
        numbers.append(f"{r}: {stated(r)}" + "".join(delta(row) for row in cmp[:2]))
    shown = numbers[:3] + ([f"{len(numbers) - 3} more references in the section"] if len(numbers) > 3 else [])
    text += " " + "; ".join(shown) + "."
    if sep is not None:
        pass  # how ΔAUC is computed is stated once, under the key findings (SEPARABILITY_NOTE)
    elif find_result_file(folder, AUCResult.FILES["counts"]) is None:
        text = text[:-1] + " (published or point AUCs: separability cannot be assessed)."
    elif has_ci:
        text = text[:-1] + " (separability not assessed: no auc_comparison.csv in this folder)."
    else:
        text = text[:-1] + " (point AUCs: separability cannot be assessed)."
    return KeyFinding("classification", text, verdict)
