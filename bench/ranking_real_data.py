"""Ranking stability on real data: the NIH models under text-mined vs expert labels, and the CheXpert
leaderboard models under the consensus, each radiologist and the report labelers.

Usage::

    python bench/ranking_real_data.py --out /tmp/cxreval_real [--n-resamples 1000] [--seed 0]

Needs ../shared/data (nih_fold_predictions, chexpert_test) and the metadata cache (`cxreval data fetch`).
Writes, per study, the files of ``cxreval rank`` (auc, counts, dropped, rank_correlation, rankings, top_changes as
CSV + Parquet, through the results' ``save``) and summary.md (``RankingStabilityResult.summary``) under --out,
and prints the headline tables (Markdown).

Choices for NIH vs Google (935 images with both references):
- Pneumothorax: NIH Pneumothorax vs Google Pneumothorax; model score = prob_Pneumothorax.
- Nodule or Mass: NIH label = Nodule OR Mass; model score = max(prob_Nodule, prob_Mass).
- Airspace Opacity has no single NIH counterpart: it is left out of the headline and reported separately
  as a sensitivity analysis with NIH label = Consolidation OR Pneumonia OR Infiltration and model score =
  the max of those three probabilities (cxreval.datasets.google.NIH_TO_GOOGLE).
- Fracture has no NIH counterpart and is not evaluated.
"""

from __future__ import annotations

import argparse
import dataclasses
import time
from pathlib import Path

import pandas as pd

from cxreval.classification import evaluate_auc
from cxreval.classification import markdown_auc_table as md_table
from cxreval.datasets import chexpert, google, nih
from cxreval.datasets import nih_predictions as nh
from cxreval.findings import VocabularyMapping
from cxreval.io import write_summary
from cxreval.ranking import ALL_MODELS, ranking_stability

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "data"

HEADLINE = VocabularyMapping("nih_to_google_headline", {"Pneumothorax": ("Pneumothorax",),
                                                        "Nodule or Mass": ("Nodule", "Mass")},
                             note="Pneumothorax directly; Nodule or Mass = NIH Nodule OR Mass.")
AIRSPACE = VocabularyMapping("nih_to_google_airspace",
                             {"Airspace Opacity": ("Consolidation", "Pneumonia", "Infiltration")},
                             note="sensitivity analysis: no single NIH counterpart.")


def _write(out: Path, auc, rs, source: str) -> None:
    out.mkdir(parents=True, exist_ok=True)
    auc.save(out)
    rs.save(out)
    write_summary(out, dataclasses.replace(rs, source=source).summary("cxreval rank"))


def _group(model: str) -> str:
    return {"dd": "derrick-daniel", "hy": "haooyuee", "jrzech": "jrzech"}[model.split("_")[0]]


def nih_vs_google(out: Path, n_resamples: int, seed: int) -> str:
    t0 = time.perf_counter()
    d = SHARED / "nih_fold_predictions"
    preds = nh.load_predictions(d)
    g = google.load_labels().table
    ids = set(preds.table.study_id) & set(g.study_id)
    nl = nih.load_labels().table
    nl = nl[nl.study_id.isin(ids)]
    lines = [f"### NIH text-mined vs Google expert labels: 10 models on the {len(ids)} images with both "
             f"({nl.patient_id.nunique()} patients), {n_resamples} patient-bootstrap replicates (seed {seed})", ""]
    p = preds.table[preds.table.study_id.isin(ids)]
    for name, mapping in (("headline", HEADLINE), ("airspace", AIRSPACE)):
        labels = pd.concat([google.map_nih_to_google(nl, mapping=mapping),
                            g[g.study_id.isin(ids) & g.finding.isin(list(mapping.targets))].drop(columns="split")],
                           ignore_index=True)
        scores = nh.combine_findings(p, {k: v for k, v in mapping.targets.items()}, how="max")
        groups = {m: _group(m) for m in scores.model.unique()}
        auc = evaluate_auc(scores, labels, model_groups=groups, n_resamples=n_resamples, rng=seed)
        rs = ranking_stability(auc, dataset="NIH-Google")
        _write(out / f"nih_google_{name}", auc, rs, f"NIH vs Google ({mapping.note})")
        t = auc.table[auc.table.group != "summary"]
        wide = t.assign(v=t.auc.map("{:.3f}".format) + " [" + t.ci_low.map("{:.3f}".format) + ", "
                        + t.ci_high.map("{:.3f}".format) + "]")
        wide = wide.pivot(index="model", columns=["finding", "reference"], values="v")
        wide.columns = [f"{f} / {r}" for f, r in wide.columns]
        c = rs.correlations[rs.correlations.group == ALL_MODELS]
        c = c[["finding", "method", "statistic", "boot_mean", "boot_sd", "ci_low", "ci_high"]]
        cnt = auc.counts
        lines += [f"#### {name}: {mapping.note}", "", "AUC [95% CI]:", "", md_table(wide.reset_index()), "",
                  "Counts:", "", md_table(cnt, floatfmt="{:.0f}"), "",
                  "Rank correlation nih_textmined vs google_expert (all 10 models):", "", md_table(c), ""]
        top = rs.top_changes[(rs.top_changes.group == ALL_MODELS) & (rs.top_changes.reference != rs.top_changes.best_under)]
        lines += ["Top-rank changes (best under one reference → rank under the other, P(best) from the bootstrap):",
                  "", md_table(top[["finding", "best_under", "model", "reference", "rank", "prob_best"]]), ""]
    lines.append(f"({time.perf_counter() - t0:.1f} s)")
    return "\n".join(lines)


def chexpert_test(out: Path, n_resamples: int, seed: int) -> str:
    t0 = time.perf_counter()
    root = SHARED / "chexpert_test"
    lab = chexpert.load_labels(root)
    pr = chexpert.load_predictions(root)
    auc = evaluate_auc(pr.table, lab.table, n_resamples=n_resamples, rng=seed)
    rs = ranking_stability(auc, dataset="CheXpert-test")
    _write(out / "chexpert_test", auc, rs, "CheXpert test set: 10 leaderboard models, 11 references")
    t = auc.table[(auc.table.finding == "macro") & (auc.table.group != "summary")]
    wide = t.pivot(index="model", columns="reference", values="auc")[list(auc.references)]
    ranks = rs.rankings[(rs.rankings.finding == "macro")].pivot(index="model", columns="reference", values="rank")
    ranks = ranks[list(auc.references)].sort_values("consensus")
    c = rs.correlations
    c = c[(c.reference_a == "consensus") | (c.reference_b == "consensus")]
    c = c.assign(other=[b if a == "consensus" else a for a, b in zip(c.reference_a, c.reference_b)])
    srcc = c[c.method == "SRCC"].pivot(index="other", columns="finding", values="statistic")
    boot = c[(c.method == "SRCC") & (c.finding == "macro")].set_index("other")
    srcc["macro boot mean±sd"] = [f"{boot.loc[o, 'boot_mean']:.2f} ± {boot.loc[o, 'boot_sd']:.2f}" for o in srcc.index]
    srcc["macro 95% CI"] = [f"[{boot.loc[o, 'ci_low']:.2f}, {boot.loc[o, 'ci_high']:.2f}]" for o in srcc.index]
    kr = c[(c.method == "KRCC") & (c.finding == "macro")].set_index("other")
    srcc["macro KRCC"] = kr.statistic.reindex(srcc.index)
    srcc["macro KRCC boot"] = [f"{kr.loc[o, 'boot_mean']:.2f} ± {kr.loc[o, 'boot_sd']:.2f}" for o in srcc.index]
    top = rs.top_changes[(rs.top_changes.finding == "macro") & (rs.top_changes.reference == "consensus")]
    lines = [f"### CheXpert test set: 10 leaderboard models, {len(auc.references)} references, 500 patients, "
             f"{n_resamples} replicates (seed {seed})", "", "Macro-average AUC (5 competition findings):", "",
             md_table(wide.reset_index()), "", "Rank of each model by macro AUC under each reference:", "",
             md_table(ranks.reset_index(), floatfmt="{:g}"), "",
             "SRCC between the consensus ranking and each other reference's (point; macro with bootstrap):", "",
             md_table(srcc.reset_index()), "",
             "Best model (macro) under each reference, and its rank under the consensus:", "",
             md_table(top[["best_under", "model", "rank", "prob_best"]].rename(columns={"rank": "rank under consensus", "prob_best": "P(best under consensus)"})), "",
             f"Notes: {'; '.join(n for n in lab.report.notes if 'identical' in n)}", "",
             f"({time.perf_counter() - t0:.1f} s)"]
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, default=Path("/tmp/cxreval_real"))
    ap.add_argument("--n-resamples", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--only", choices=["nih", "chexpert"], default=None)
    a = ap.parse_args()
    parts = []
    if a.only in (None, "nih"):
        parts.append(nih_vs_google(a.out, a.n_resamples, a.seed))
    if a.only in (None, "chexpert"):
        parts.append(chexpert_test(a.out, a.n_resamples, a.seed))
    text = "\n\n".join(parts)
    a.out.mkdir(parents=True, exist_ok=True)
    (a.out / "headline.md").write_text(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
