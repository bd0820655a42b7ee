"""Soft labels (``p_positive``) as a reference of classify/rank: the expected AUC over label draws, on real data."""

from __future__ import annotations

from suites._common import SHARED, Context, Figures, Part, bench_module, fmt, missing

TITLE = "Soft labels: the expected AUC over label draws against p_positive references"

__all__ = ["PARTS", "TITLE"]


def chexpert(ctx: Context) -> Figures:
    folder = SHARED / "chexpert_test"
    gone = missing(folder / "groundtruth.csv")
    if gone:
        return Figures(unavailable=gone)
    m = bench_module("soft_labels_chexpert").measure(folder, n_resamples=ctx.size(200, 1000), seed=ctx.seed)
    fig = Figures()
    t = fig.table(
        f"CheXpert test set, 10 models x 5 findings ({m['n_cells']} cells), studies common: AUC - AUC "
        "against the 5-radiologist consensus",
        ["reference", "mean |ΔAUC|", "mean ΔAUC", "mean CI width"],
    )
    for row in m["summary"].itertuples(index=False):
        t.add(row[0], fmt(float(row[1])), fmt(float(row[2]), "+.4f"), fmt(float(row[3])))
        fig.checked[f"{row[0]} | mean |ΔAUC|"] = fmt(float(row[1]))
    fig.checked["max |soft - latent_auc_score|"] = f"{m['max_diff']:.1e}"
    c = m["counts"]
    t.notes += [
        "fused_ds: `cxreval fuse --methods ds` of bc4, bc6, bc8, chexpert_labeler (none in the consensus); soft: its "
        "p_positive as the reference (pairs weighted by p_i (1 - p_j): the expected AUC over label draws, not an "
        "estimate of the AUC against the truth); hard: the same rows' argmax states. The default policy excludes "
        f"the studies fused to `uncertain` from both ({int(c.loc['fused_ds', 'n_dropped'])} (study, finding) pairs).",
        f"The soft AUCs equal latent_auc_score on the same studies to {m['max_diff']:.1e} (every cell). "
        f"{ctx.size(200, 1000)} patient-bootstrap replicates; consensus mean CI width {m['consensus_width']:.4f}. "
        f"evaluate_auc with the three references: {m['seconds']:.1f} s.",
    ]
    fig.frame("per model and finding: AUC under each reference", m["wide"], decimals=4)
    return fig


PARTS = (
    Part(
        "chexpert",
        "CheXpert test set (shared data): the 10 leaderboard models' AUCs against the Dawid-Skene "
        "p_positive of four readers (soft), the same fusion's hard states and the 5-radiologist consensus; mean "
        "|ΔAUC| to the consensus and CI widths (200 bootstrap replicates quick, 1000 full); soft AUCs checked "
        "against latent_auc_score.",
        chexpert,
    ),
)
