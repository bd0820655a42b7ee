"""The report labeller: accuracy on OpenI against the human MeSH codes and on hand-written reports in six
institutional styles, and throughput on one core beside medspacy's ConText pipeline.

The peer (medspacy 1.3.1, not a cxreval dependency; ``bench/requirements-medspacy.txt``) runs in its own
interpreter, given with ``--peer-python`` (``bench/_medspacy_peer.py`` labels the texts there).
"""

from __future__ import annotations

import importlib.util
import itertools
import json
import os
import subprocess
import time
from pathlib import Path

import pandas as pd

from suites._common import BENCH, ROOT, Context, Figures, Part, Peer, bench_module, peer_unavailable

TITLE = "Report labeller"

__all__ = ["PARTS", "TITLE"]

STYLE_CASES = ROOT / "tests" / "labeller" / "style_cases.py"
PRF = ["finding", "n_pos", "TP", "FP", "FN", "precision", "recall", "f1", "f1_low", "f1_high"]


def _one_core() -> None:
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})


def _openi_or_why():
    from cxreval.datasets.openi import read_openi_reports

    try:
        return read_openi_reports().table, None
    except Exception as exc:
        return None, f"data unavailable: {exc} (run `cxreval data fetch`)"


def _phrases(rules) -> dict[str, list[str]]:
    from cxreval.findings import CHESTXRAY8

    out: dict[str, list[str]] = {}
    for r in rules.mentions:
        if r.kind == "phrase" and r.finding in CHESTXRAY8:
            out.setdefault(r.finding, []).append(r.text)
    return out


def _medspacy(py: str, texts: list[str], phrases: dict[str, list[str]], tmp: Path) -> dict[str, object]:
    inp, out = tmp / "peer_in.json", tmp / "peer_out.json"
    inp.write_text(json.dumps({"texts": texts, "phrases": phrases}))
    env = {**os.environ, "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    subprocess.run([py, str(BENCH / "_medspacy_peer.py"), str(inp), str(out)], check=True, env=env)
    return json.loads(out.read_text())


def openi_accuracy(ctx: Context) -> Figures:
    rep, why = _openi_or_why()
    if why:
        return Figures(unavailable=why)
    _one_core()
    lo = bench_module("labeller_openi")
    from cxreval.datasets.openi import OPENI_TUNING_SEED
    from cxreval.findings import CHESTXRAY8, CHESTXRAY14, XQA_SELECTED
    from cxreval.labeller import label_reports, load_rules

    seed = OPENI_TUNING_SEED  # the split the packaged rules were tuned on (development half only)
    n_resamples = ctx.size(200, 2000)
    table, mesh, dev, ev = lo.load_openi(seed)
    rules = load_rules(vocabulary="chestxray14")
    labels = label_reports(table, sections=("whole",), rules=rules).labels
    fig = Figures()
    for fs, fname in ((CHESTXRAY8, "8 ChestX-ray8 findings"), (CHESTXRAY14, "14 MeSH-mapped findings")):
        t = lo.evaluate(
            labels, mesh, ev, fs, source="report", uncertain="negative", n_resamples=n_resamples, seed=seed
        )
        fig.frame(
            f"OpenI evaluation half (held out), n={len(ev)} reports, {fname}, uncertain -> negative",
            t[[c for c in PRF if c in t.columns]],
            decimals=3,
        )
        for r in t.itertuples():
            fig.checked[f"{fname} | {r.finding} | TP FP FN f1"] = f"{r.TP} {r.FP} {r.FN} {r.f1:.4f}"
    fig.tables[0].notes.append(
        f"split seed {seed} (cxreval.datasets.openi.OPENI_TUNING_SEED); {n_resamples} "
        "report-level bootstrap replicates for the CIs"
    )
    agr, _prev, om = lo.findings_vs_impression(table, seed=seed)
    a = agr[agr["finding"].isin([*XQA_SELECTED, "macro", "micro"])].copy()
    a["XQA paper, MIMIC-CXR (Table 13): kappa_w / low / high / F1"] = [
        " / ".join(
            f"{x:.2f}"
            for x in lo.XQA_T13.get(
                f if f not in ("macro", "micro") else f"{f} ({'4 selected' if s == 'selected' else '12'})", ()
            )
        )
        for f, s in zip(a["finding"], a["finding_set"])
    ]
    cols = [
        c
        for c in (
            "finding",
            "finding_set",
            "kappa_w",
            "kappa_low",
            "kappa_high",
            "f1_w",
            "n",
            "XQA paper, MIMIC-CXR (Table 13): kappa_w / low / high / F1",
        )
        if c in a.columns
    ]
    fig.frame(
        "Findings vs Impression, OpenI reports with both sections (CheXpert vocabulary)",
        a[cols].fillna(""),
        decimals=3,
    )
    for r in a.itertuples():
        fig.checked[f"findings vs impression | {r.finding} | {r.finding_set} | kappa_w"] = f"{r.kappa_w:.4f}"
    omc = [
        c
        for c in ("finding", "pos_a", "pos_b", "pos_a_neg_b", "rate_a_not_b", "pos_b_neg_a", "rate_b_not_a")
        if c in om.columns
    ]
    fig.frame("Omission flows (A = report_findings, B = report_impression)", om[omc], decimals=3)
    return fig


def throughput(ctx: Context) -> Figures:
    rep, why = _openi_or_why()
    if why:
        return Figures(unavailable=why)
    _one_core()
    import yaml

    from cxreval.labeller import label_reports, load_rules

    n = ctx.size(5_000, 40_000)
    texts = [
        "\n\n".join(x for x in row if isinstance(x, str) and x)
        for row in rep[["comparison", "indication", "findings", "impression"]].itertuples(index=False)
    ]
    texts += [
        c["text"] for c in yaml.safe_load((ROOT / "tests" / "labeller" / "style_cases.yaml").read_text())
    ]
    table = pd.DataFrame(
        {
            "study_id": [f"r{i:06d}" for i in range(n)],
            "text": list(itertools.islice(itertools.cycle(texts), n)),
        }
    )
    rules = load_rules(vocabulary="chestxray14")
    best, best_cpu, n_mentions = float("inf"), float("inf"), 0
    for _ in range(ctx.size(1, 3)):
        t0, c0 = time.perf_counter(), time.process_time()
        res = label_reports(table, sections=("whole",), rules=rules)
        best = min(best, time.perf_counter() - t0)
        best_cpu = min(best_cpu, time.process_time() - c0)
        n_mentions = len(res.mentions)
        del res
    ours = n / best
    py = ctx.peer_python("medspacy")
    fig = Figures(peer=peer_unavailable("medspacy", "medspacy") if py is None else None)
    t = fig.table(
        f"{n:,} reports (OpenI whole reports and the style cases, cycled), one core",
        ["labeller", "reports", "s", "reports/s", "CPU s", "reports per CPU s"],
    )
    t.add(
        "cxreval label_reports (ChestX-ray14 rules, serial)",
        n,
        round(best, 2),
        round(ours),
        round(best_cpu, 2),
        round(n / best_cpu),
    )
    t.notes.append(
        "Wall time on one core (sched_setaffinity) shares that core with whatever else runs; the CPU "
        "time (time.process_time) is the labeller's own."
    )
    fig.checked["mentions"] = str(n_mentions)
    if py is not None:
        k = ctx.size(300, 2_000)
        out = _medspacy(py, table["text"].tolist()[:k], _phrases(rules), ctx.tmp)
        rate = k / float(out["seconds"])
        fig.peer = Peer("medspacy ConText", str(out["version"]))
        t.add(
            f"medspacy {out['version']} ConText (nlp(text) per report, same ChestX-ray8 phrases)",
            k,
            round(float(out["seconds"]), 2),
            round(rate, 1),
            "",
            "",
        )
        fig.ratios["cxreval reports/s / medspacy reports/s"] = ours / rate
    return fig


def styles(ctx: Context) -> Figures:
    spec = importlib.util.spec_from_file_location("labeller_style_cases", STYLE_CASES)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)  # type: ignore[union-attr]
    fig = Figures()
    for name, path in (
        ("style cases", mod.CASES),
        ("held-out style cases", mod.CASES.parent / "style_cases_holdout.yaml"),
    ):
        checks = mod.score_cases(mod.load_cases(path))
        t = fig.table(
            f"{name} ({path.name}): accuracy of the expected state",
            ["by", "group", "checks", "correct", "accuracy"],
        )
        t.add(
            "overall",
            "",
            len(checks),
            int(checks["correct"].sum()),
            round(float(checks["correct"].mean()), 3),
        )
        fig.checked[f"{name} | overall"] = f"{int(checks['correct'].sum())}/{len(checks)}"
        for by in ("style", "category", "expected", "vocabulary"):
            g = checks.groupby(by)["correct"]
            for key, n, c in zip(g.size().index, g.size(), g.sum()):
                t.add(by, key, int(n), int(c), round(c / n, 3))
                fig.checked[f"{name} | {by} | {key}"] = f"{int(c)}/{int(n)}"
    return fig


PARTS = (
    Part(
        "openi_accuracy",
        "Precision, recall and F1 (report-level bootstrap CIs; 200 replicates quick, 2000 "
        "full) of the labeller against the OpenI MeSH major codes on the held-out half, and Findings vs "
        "Impression agreement beside the XQA paper's MIMIC-CXR Table 13 (`cxreval data fetch`).",
        openi_accuracy,
    ),
    Part(
        "throughput",
        "Reports per second on one core (5,000 reports quick, 40,000 full) beside medspacy's "
        "ConText pipeline on the first 300 / 2,000 of the same texts (--peer-python with medspacy).",
        throughput,
    ),
    Part(
        "styles",
        "Accuracy of the expected report-level states on the hand-written reports in six "
        "institutional styles (tests/labeller/style_cases*.yaml), per style, category, state and vocabulary.",
        styles,
    ),
)
