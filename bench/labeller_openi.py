"""The cxreval report labeller on OpenI, against the human MeSH major codes, beside the NIH labeller.

What it does (one run, ``OMP_NUM_THREADS=1``):

1. Reads the OpenI reports (``cxreval data fetch``) and the human MeSH major codes as the label source
   ``openi_mesh`` (:func:`cxreval.datasets.openi.openi_mesh_labels`), keeping reports with images and
   usable codes. Splits them with ``--seed`` into a development half (rules were tuned on it only) and an
   evaluation half (held out).
2. Labels every report with :func:`cxreval.labeller.label_reports` (ChestX-ray14 vocabulary; the report
   text is the FINDINGS and IMPRESSION sections, the sections the NIH labeller read).
3. Per finding (the eight ChestX-ray8 findings, and all fourteen MeSH-mapped findings): precision,
   recall, F1 with report-level bootstrap 95% CIs (``--n-resamples``), micro and macro; uncertain ->
   negative (primary; the MeSH coders code definite findings) and uncertain -> positive (sensitivity),
   applied to both sides (MeSH ``borderline`` codes are the uncertain ones); not mentioned -> negative.
   The NIH labeller's published figures (Wang et al. 2017, seed 000) are printed beside them.
4. Findings vs Impression on the OpenI reports that have both sections (CheXpert vocabulary, as in the
   XQA paper): kappa_w, Low/High kappa, F1, prevalence and omission flows, beside the paper's MIMIC-CXR
   Table 13 values.
5. Speed on one core: whole-report labelling of all OpenI reports (best of ``--repeats``), and the peer
   (medspacy's ConText pipeline, per report, in the separate venv ``--peer-python``) on the same texts,
   with its F1 on the development half; printed as reports/s and a ratio.

``--errors FINDING`` prints the false positives/negatives of the development half (never the evaluation
half) for rule tuning. ``--markdown FILE`` writes the tables as a bench/RESULTS.md section.

Peer venv (not a cxreval dependency)::

    python3 -m venv PEER_VENV
    PEER_VENV/bin/pip install -U pip wheel setuptools
    PEER_VENV/bin/pip install medspacy==1.3.1     # spaCy 3.7, PyRuSH; no model download

Run::

    OMP_NUM_THREADS=1 .venv/bin/python bench/labeller_openi.py --peer-python PEER_VENV/bin/python
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

from cxreval.agreement import compute_agreement, compute_flows, compute_omissions, compute_prevalence
from cxreval.datasets.openi import (
    OPENI_TUNING_SEED,
    openi_mesh_labels,
    openi_tuning_split,
    read_openi_reports,
)
from cxreval.findings import CHESTXRAY8, CHESTXRAY14, XQA, XQA_SELECTED
from cxreval.io import markdown_table
from cxreval.labeller import compute_precision_recall, label_reports, load_rules, prf_markdown

HERE = Path(__file__).resolve().parent
# XQA paper, Table 13 (MIMIC-CXR, report Findings vs Impressions): kappa_w, kappa_low, kappa_high, F1
XQA_T13 = {
    "Atelectasis": (0.20, 0.11, 0.27, 0.72),
    "Consolidation": (0.45, 0.34, 0.51, 0.91),
    "Lung Opacity": (0.38, 0.38, 0.38, 0.79),
    "Effusion": (0.33, 0.26, 0.38, 0.72),
    "macro (4 selected)": (0.34, 0.27, 0.39, 0.78),
    "macro (12)": (0.33, 0.25, 0.40, 0.84),
    "micro (12)": (0.36, 0.27, 0.42, 0.84),
}


def load_openi(seed: int) -> tuple[pd.DataFrame, pd.DataFrame, np.ndarray, np.ndarray]:
    """Reports (text table), MeSH labels, and the dev/eval report ids (sorted)."""
    rep = read_openi_reports().table
    mesh = openi_mesh_labels(reports=rep).table
    kept = set(mesh["study_id"])
    with_img = set(rep.loc[rep["n_images"] > 0, "report_id"])
    dev, ev = openi_tuning_split(sorted(kept & with_img), rng=seed)
    table = pd.DataFrame(
        {
            "study_id": rep["report_id"],
            "findings": rep["findings"].fillna(""),
            "impression": rep["impression"].fillna(""),
        }
    )
    return table, mesh, dev, ev


def state_matrix(labels: pd.DataFrame, source: str, ids: np.ndarray, findings: tuple[str, ...]) -> np.ndarray:
    t = labels[(labels["source"] == source) & labels["finding"].isin(findings)]
    w = t.pivot(index="study_id", columns="finding", values="state").reindex(
        index=ids, columns=list(findings)
    )
    return w.to_numpy(dtype=float, na_value=np.nan)


def binary(states: np.ndarray, uncertain: str) -> np.ndarray:
    pos = states == 2
    if uncertain == "positive":
        pos |= states == 1
    return pos


def evaluate(
    labels: pd.DataFrame,
    mesh: pd.DataFrame,
    ids: np.ndarray,
    findings: tuple[str, ...],
    *,
    source: str,
    uncertain: str,
    n_resamples: int,
    seed: int,
) -> pd.DataFrame:
    """cxreval.labeller.compute_precision_recall of ``source`` against the MeSH codes on the reports ``ids``."""
    keep = set(ids)
    both = pd.concat(
        [
            mesh[mesh["study_id"].isin(keep)],
            labels[(labels["source"] == source) & labels["study_id"].isin(keep)],
        ],
        ignore_index=True,
    )
    both = both.assign(patient_id=both["study_id"])  # OpenI: one report = one patient
    return compute_precision_recall(
        both,
        reference="openi_mesh",
        predicted=source,
        findings=findings,
        uncertain=uncertain,
        n_resamples=n_resamples,
        rng=seed,
    ).table


def print_errors(
    labels: pd.DataFrame,
    mesh: pd.DataFrame,
    table: pd.DataFrame,
    mentions: pd.DataFrame,
    dev: np.ndarray,
    finding: str,
    source: str,
    limit: int,
) -> None:
    gold = binary(state_matrix(mesh, "openi_mesh", dev, (finding,)), "negative")[:, 0]
    st = state_matrix(labels, source, dev, (finding,))[:, 0]
    pred = binary(st[:, None], "negative")[:, 0]
    txt = table.set_index("study_id")
    codes = read_openi_reports().table.set_index("report_id")["mesh_major"]
    for kind, sel in (("FALSE POSITIVE", ~gold & pred), ("FALSE NEGATIVE", gold & ~pred)):
        ids = dev[sel]
        print(f"\n===== {finding}: {kind} ({len(ids)}) =====")
        for sid in ids[:limit]:
            mm = mentions[(mentions.study_id == sid) & (mentions.finding == finding)]
            print(f"--- {sid} state={st[dev == sid][0]} mesh={codes[sid]}")
            print("   F:", txt.loc[sid, "findings"], "\n   I:", txt.loc[sid, "impression"])
            for r in mm.itertuples():
                print(f"   > [{r.state}] {r.phrase!r} by {r.state_rule}")


def findings_vs_impression(
    table: pd.DataFrame, *, seed: int
) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    both = table[(table["findings"].str.strip() != "") & (table["impression"].str.strip() != "")]
    res = label_reports(both, sections=("findings", "impression"), vocabulary="chexpert")
    lab = res.labels
    pair = [("report_findings", "report_impression")]
    agr = compute_agreement(
        lab,
        pair,
        findings=list(XQA),
        finding_sets={"selected": list(XQA_SELECTED), "all": list(XQA)},
        studies="same",
    ).table
    prev = compute_prevalence(lab, sources=["report_findings", "report_impression"], findings=list(XQA)).table
    om = compute_omissions(compute_flows(lab, pair, findings=list(XQA), studies="same").table).table
    return agr, prev, om


def peer(peer_python: str, texts: list[str], rules_phrases: dict[str, list[str]]) -> dict[str, object]:
    with tempfile.TemporaryDirectory() as d:
        inp, out = Path(d) / "in.json", Path(d) / "out.json"
        inp.write_text(json.dumps({"texts": texts, "phrases": rules_phrases}))
        env = {**os.environ, "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
        subprocess.run(
            [peer_python, str(HERE / "_medspacy_peer.py"), str(inp), str(out)], check=True, env=env
        )
        return json.loads(out.read_text())


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--seed",
        type=int,
        default=OPENI_TUNING_SEED,
        help="Seed of the dev/eval split and the "
        "bootstrap (the packaged rules were tuned on the development half of the default seed's split).",
    )
    ap.add_argument("--n-resamples", type=int, default=2000)
    ap.add_argument("--repeats", type=int, default=5, help="Timing repeats (best is reported).")
    ap.add_argument("--errors", default=None, help="Print dev-half errors of this finding and stop.")
    ap.add_argument("--limit", type=int, default=25)
    ap.add_argument("--rules", default=None, help="A rules YAML merged over the packaged rules.")
    ap.add_argument("--dev-only", action="store_true", help="Report the development half only (tuning).")
    ap.add_argument(
        "--peer-python", default=None, help="Python of the medspacy venv (speed + F1 of the peer)."
    )
    ap.add_argument("--markdown", default=None, help="Write the tables to this markdown file.")
    args = ap.parse_args(argv)
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})  # one core
    table, mesh, dev, ev = load_openi(args.seed)
    rules = load_rules(args.rules, vocabulary="chestxray14")
    res = label_reports(table, sections=("whole",), rules=rules)
    labels = res.labels
    if args.errors:
        print_errors(labels, mesh, table, res.mentions, dev, args.errors, "report", args.limit)
        return 0
    md: list[str] = []

    def show(title: str, t: pd.DataFrame) -> None:
        print(f"\n## {title}\n")
        s = prf_markdown(t)
        print(s)
        md.extend([f"**{title}**", "", s, ""])

    halves = (
        [("development half (in-sample: the rules were tuned on it)", dev)]
        if args.dev_only
        else [
            ("evaluation half (held out)", ev),
            ("development half (in-sample: the rules were tuned on it)", dev),
            ("all reports (half in-sample)", np.sort(np.concatenate([dev, ev]))),
        ]
    )
    summary = {}
    for name, ids in halves:
        for unc in ("negative", "positive"):
            for fs, fname in ((CHESTXRAY8, "8 ChestX-ray8 findings"), (CHESTXRAY14, "14 mapped findings")):
                if fs is CHESTXRAY14 and (unc == "positive" or name.startswith("development half")):
                    continue
                t = evaluate(
                    labels,
                    mesh,
                    ids,
                    fs,
                    source="report",
                    uncertain=unc,
                    n_resamples=args.n_resamples,
                    seed=args.seed,
                )
                show(f"OpenI {name}, n={len(ids)} reports, {fname}, uncertain -> {unc}", t)
                summary[(name, unc, fname)] = t
    if args.dev_only:
        return 0
    # Findings vs Impression
    agr, prev, om = findings_vs_impression(table, seed=args.seed)
    a = agr[agr["finding"].isin([*XQA_SELECTED, "macro", "micro"])].copy()
    a["xqa_mimic_kappa_w / low / high / F1"] = [
        " / ".join(
            f"{x:.2f}"
            for x in XQA_T13.get(
                f if f not in ("macro", "micro") else f"{f} ({'4 selected' if s == 'selected' else '12'})", ()
            )
        )
        for f, s in zip(a["finding"], a["finding_set"])
    ]
    cols = [
        "finding",
        "finding_set",
        "kappa_w",
        "kappa_low",
        "kappa_high",
        "f1_w",
        "n",
        "xqa_mimic_kappa_w / low / high / F1",
    ]
    cols = [c for c in cols if c in a.columns]
    print("\n## Findings vs Impression on OpenI (CheXpert vocabulary)\n")
    print(a[cols].to_string(index=False))
    print(om.to_string(index=False))
    omc = ["finding", "pos_a", "pos_b", "pos_a_neg_b", "rate_a_not_b", "pos_b_neg_a", "rate_b_not_a"]
    pv = prev[prev["finding"].isin(XQA)] if "finding" in prev.columns else prev
    md += [
        "**Findings vs Impression, OpenI reports with both sections (CheXpert vocabulary, XQA's 12 findings)**",
        "",
        markdown_table(a[cols].fillna(""), decimals=3),
        "",
        "Positive counts and omission flows (A = report_findings, B = report_impression; pos_a/pos_b: positive labels in each section; pos_a_neg_b: positive in Findings, negative or not mentioned in Impression):",
        "",
        markdown_table(om[[c for c in omc if c in om.columns]], decimals=3),
        "",
    ]
    del pv
    # Speed: whole-report labelling of every OpenI report on one core
    full = read_openi_reports().table
    whole = pd.DataFrame(
        {
            "study_id": full["report_id"],
            "text": [
                ("\n\n".join(x for x in row if isinstance(x, str) and x))
                for row in full[["comparison", "indication", "findings", "impression"]].itertuples(
                    index=False
                )
            ],
        }
    )
    best = np.inf
    for _ in range(args.repeats):
        t0 = time.perf_counter()
        label_reports(whole, sections=("whole",), rules=rules)
        best = min(best, time.perf_counter() - t0)
    ours = len(whole) / best
    line = f"cxreval label-reports (whole report, {len(whole)} OpenI reports, 1 core): {ours:,.0f} reports/s"
    print("\n" + line)
    md += [f"- {line} (best of {args.repeats})"]
    if args.peer_python:
        phrases: dict[str, list[str]] = {}
        for r in rules.mentions:
            if r.kind == "phrase" and r.finding in CHESTXRAY8:
                phrases.setdefault(r.finding, []).append(r.text)
        out = peer(args.peer_python, whole["text"].tolist(), phrases)
        rate = len(whole) / float(out["seconds"])  # type: ignore[arg-type]
        line = (
            f"medspacy {out['version']} ConText pipeline (per report, nlp(text), same 8-finding phrases, "
            f"1 core): {rate:,.1f} reports/s; ratio cxreval/medspacy = {ours / rate:,.0f}x"
        )
        print(line)
        md += [f"- {line}"]
        # the peer's F1 on the development half, same protocol
        peer_lab = pd.DataFrame(
            {
                "study_id": np.repeat(whole["study_id"].to_numpy(), len(CHESTXRAY8)),
                "finding": np.tile(list(CHESTXRAY8), len(whole)),
                "source": "medspacy_context",
                "state": np.stack([out["states"][f] for f in CHESTXRAY8], 1).ravel(),
            }
        )  # type: ignore
        t = evaluate(
            peer_lab.assign(patient_id=peer_lab["study_id"]),
            mesh,
            dev,
            CHESTXRAY8,
            source="medspacy_context",
            uncertain="negative",
            n_resamples=args.n_resamples,
            seed=args.seed,
        )
        show(
            f"medspacy ConText (peer) on the development half, n={len(dev)}, uncertain -> negative (in-sample "
            f"for cxreval's rules, out-of-sample for the peer)",
            t,
        )
        wl = label_reports(whole, sections=("whole",), rules=rules).labels
        ours_t = evaluate(
            wl,
            mesh,
            dev,
            CHESTXRAY8,
            source="report",
            uncertain="negative",
            n_resamples=args.n_resamples,
            seed=args.seed,
        )
        ln = (
            f"dev-half (in-sample for cxreval) micro F1 on the same whole-report texts (all four sections), 8 "
            f"findings: cxreval rules "
            f"{ours_t.set_index('finding').loc['micro', 'f1']:.3f} (macro {ours_t.set_index('finding').loc['macro', 'f1']:.3f})"
            f" vs medspacy ConText {t.set_index('finding').loc['micro', 'f1']:.3f} (macro "
            f"{t.set_index('finding').loc['macro', 'f1']:.3f})"
        )
        print(ln)
        md += [f"- {ln}"]
    if args.markdown:
        Path(args.markdown).write_text("\n".join(md) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
