"""The report's section and key finding for a subgroup folder (what ``cxreval subgroups`` writes).

The section shows the forest plot of the AUC gaps and of the false-negative-rate gaps (under-diagnosis) by
subgroup and reference, each with a plain sentence; where the folder holds several references, the gaps whose sign
or significance changes with the reference; and, when the folder holds calibration, the reliability diagrams of
the models with their debiased ECE, Brier score, intercept and slope per finding. Its key finding says how many
gaps are significant under each reference, and how many change with the reference.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from .._plots.subgroups import METRIC_WORDS, reliability_diagram, subgroup_forest
from ..subgroups import SubgroupResult
from ..subgroups._result import CALIBRATION_COLUMNS, RELIABILITY_COLUMNS, SUBGROUP_COLUMNS
from ._blocks import Block, load_table, table_block
from ._key_finding_base import KeyFinding, _load, _num, _str, fmt
from ._thresholds import Thresholds
from .html_tables import html_table

__all__ = ["build_subgroups", "subgroups_finding", "gap_sentence", "calibration_sentence"]

_FILES = SubgroupResult.FILES
_GAP_COLUMNS = (*SUBGROUP_COLUMNS[:5], "metric", "gap", "estimable", "significant")
"""The columns of ``subgroups.csv`` the section reads: the row's key, its gap and its flags."""
_CHANGES = ("sign changes", "significance changes")


def _flag(d: pd.DataFrame, col: str) -> pd.Series:
    return _str(d, col).str.lower().isin(["true", "1"])


def gap_sentence(table: pd.DataFrame, metric: str) -> str:
    """One plain sentence per reference on the gaps of ``metric``: how many are estimable and significant, and the
    largest significant one with its interval."""
    d = table[_str(table, "metric") == metric]
    words = METRIC_WORDS.get(metric, metric)
    parts = []
    for ref, g in d.groupby("reference", sort=False):
        est = g[_flag(g, "estimable")]
        sig = est[_flag(est, "significant")]
        text = (
            f"Under {ref}, {len(sig)} of {len(est)} estimable {words} gaps are significant after Holm's "
            f"adjustment ({len(g) - len(est)} rows not estimable: too few cases or no value)"
        )
        if len(sig):
            top = sig.loc[_num(sig, "gap").abs().idxmax()]
            text += (
                f"; the largest: {top['model']}, {top['finding']}, {top['attribute']} = {top['group']}: "
                f"{fmt(float(top['gap']), 3)} [{fmt(float(top['gap_ci_low']), 3)}, "
                f"{fmt(float(top['gap_ci_high']), 3)}]"
            )
        parts.append(text + ".")
    return " ".join(parts)


def _forest_block(folder: Path, table: pd.DataFrame, metric: str, heading: str, with_table: bool) -> Block:
    path = folder / _FILES["subgroups"]
    body = f"<p>{gap_sentence(table, metric)}</p>"
    if with_table:
        shown = table[_str(table, "metric") == metric]
        body += html_table(shown, name=f"subgroups_{metric}", source=path)
    return Block(
        heading,
        subgroup_forest(table, metric=metric),
        body,
        how="Each marker is one model's gap (the group's value minus the rest's) in one subgroup, with its "
        "patient-bootstrap interval, one colour per reference; filled markers are significant after Holm's "
        "adjustment across the attribute's groups, open ones are not. The menu switches finding and attribute; "
        "a gap that is significant under one reference only may be the reference's, not the model's.",
    )


def _verdict_block(folder: Path) -> Block | None:
    df, path, why = load_table(folder, _FILES["verdicts"], ("verdict", "metric"))
    if path is None or df is None or why:
        return None
    refs = [c[len("gap_") :] for c in df.columns if c.startswith("gap_") and not c.startswith("gap_ci")]
    if len(refs) < 2:
        return None
    changed = df[_str(df, "verdict").isin(_CHANGES)]
    counts = ", ".join(
        f"{v}: {int((_str(df, 'verdict') == v).sum())}" for v in pd.unique(_str(df, "verdict"))
    )
    text = (
        f"Of {len(df)} gaps compared under {', '.join(refs)}, {len(changed)} change sign or significance with the "
        f"reference ({counts})."
    )
    return Block(
        "Gaps that change with the reference",
        None,
        f"<p>{text}</p>" + html_table(changed, name="verdicts_changed", source=path),
        how="Each row is one model, finding, subgroup and metric whose gap is significant under some references "
        "and not others, or significant with opposite signs: the rows where the reference, not the model, may "
        "make the gap.",
        shown=True,
    )


def calibration_sentence(cal: pd.DataFrame) -> str:
    """The best- and worst-calibrated model and finding over every study (debiased ECE, with its interval)."""
    c = cal[_str(cal, "attribute") == "all"] if "attribute" in cal.columns else cal
    c = c[_num(c, "ece_l2_debiased").notna()]
    if c.empty:
        return "No model has a debiased ECE."
    e = _num(c, "ece_l2_debiased")
    lo, hi = c.loc[e.idxmin()], c.loc[e.idxmax()]

    def one(r: pd.Series) -> str:
        return (
            f"{r['model']} on {r['finding']} (debiased ECE {fmt(float(r['ece_l2_debiased']), 3)} "
            f"[{fmt(float(r['ece_l2_debiased_ci_low']), 3)}, {fmt(float(r['ece_l2_debiased_ci_high']), 3)}], "
            f"slope {fmt(float(r['slope']), 2)})"
        )

    models = _str(c, "model").nunique()
    return (
        f"Over every study, {models} models × {_str(c, 'finding').nunique()} findings: the best calibrated is "
        f"{one(lo)}, the worst {one(hi)}. A slope below 1 means over-confident scores, an intercept above 0 "
        "scores too low on average."
    )


def _calibration_cells(cal: pd.DataFrame) -> pd.DataFrame:
    c = cal[_str(cal, "attribute") == "all"]

    def cell(col: str) -> list[str]:
        v, a, b = _num(c, col), _num(c, f"{col}_ci_low"), _num(c, f"{col}_ci_high")
        return [f"{x:.3f} [{y:.3f}, {z:.3f}]" for x, y, z in zip(v, a, b)]

    return pd.DataFrame(
        {
            "model": c["model"],
            "finding": c["finding"],
            "reference": c["reference"],
            "n": c["n"],
            "n_pos": c["n_pos"],
            "debiased ECE [CI]": cell("ece_l2_debiased"),
            "Brier [CI]": cell("brier"),
            "intercept": _num(c, "intercept").round(3),
            "slope": _num(c, "slope").round(3),
        }
    )


def _calibration_block(folder: Path) -> Block | None:
    cal, path, why = load_table(folder, _FILES["calibration"], CALIBRATION_COLUMNS)
    if path is None or cal is None or cal.empty:
        return None  # written empty by --no-calibration: nothing to show
    if why:
        return Block("Calibration: reliability diagrams", None, "", why)
    return table_block(
        "Calibration: reliability diagrams",
        folder,
        _FILES["reliability"],
        RELIABILITY_COLUMNS,
        figure=reliability_diagram,
        extra=lambda _d: (
            f"<p>{calibration_sentence(cal)}</p>"
            + html_table(
                _calibration_cells(cal),
                name="calibration_ci",
                caption="Calibration over every study [95% CI]",
            )
        ),
        how="Each line is one model: per bin of its scores, the fraction of studies the reference calls positive "
        "against the mean score; on the dashed diagonal the scores are honest probabilities, below it they are "
        "too high. Marker size grows with the bin's studies. The menu switches finding and reference.",
    )


def build_subgroups(folder: Path) -> list[Block]:
    """The blocks of a subgroup folder: the AUC and FNR forest plots, the verdicts across references, calibration."""
    table, path, why = load_table(folder, _FILES["subgroups"], _GAP_COLUMNS)
    blocks: list[Block | None] = []
    if path is not None and (why or table is None):
        blocks.append(Block("Subgroup gaps", None, "", why))
    elif table is not None:
        blocks.append(_forest_block(folder, table, "auc", "Subgroup gaps of the AUC", True))
        blocks.append(
            _forest_block(folder, table, "fnr", "Under-diagnosis: gaps of the false-negative rate", False)
        )
    blocks += [_verdict_block(folder), _calibration_block(folder)]
    return [b for b in blocks if b]


def subgroups_finding(folder: Path, th: Thresholds) -> KeyFinding | None:
    """How many AUC gaps are significant under each reference, and how many gaps change with the reference."""
    del th  # the verdicts are the Holm-adjusted tests at the folder's level
    t = _load(folder, _FILES["subgroups"], _GAP_COLUMNS)
    if t is None or t.empty:
        return None
    auc = t[(_str(t, "metric") == "auc") & _flag(t, "estimable")]
    per_ref = [
        f"{int(_flag(g, 'significant').sum())}/{len(g)} under {ref}"
        for ref, g in auc.groupby("reference", sort=False)
    ]
    text = "Significant subgroup AUC gaps: " + ", ".join(per_ref)
    verdict = "subgroup gaps" if _flag(auc, "significant").any() else "no subgroup gap"
    v = _load(folder, _FILES["verdicts"], ("verdict",))
    if v is not None and _str(t, "reference").nunique() > 1:
        changed = int(_str(v, "verdict").isin(_CHANGES).sum())
        text += f"; {changed} of {len(v)} gaps change with the reference"
        if changed:
            verdict = "gaps depend on the reference"
    text += "."
    return KeyFinding("subgroups", text, verdict)
