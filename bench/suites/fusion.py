"""Label fusion (majority vote, Dawid-Skene, MACE): accuracy on simulated readers, and cxreval beside crowd-kit.

Both parts compare with crowd-kit (not a cxreval dependency) when an interpreter given with ``--peer-python``
imports ``crowdkit``; without it the simulation measures cxreval alone and the VinDr-CXR part records the peer
as unavailable.
"""

from __future__ import annotations

from suites._common import (
    SHARED,
    Context,
    Figures,
    Part,
    Peer,
    bench_module,
    fmt,
    module_version,
    peer_unavailable,
)

TITLE = "Fusion: majority vote, Dawid-Skene and MACE"

__all__ = ["PARTS", "TITLE"]


def _crowdkit() -> Peer | None:
    v = module_version("crowdkit", "crowd-kit")
    return Peer("crowd-kit", v) if v else None


def simulation(ctx: Context) -> Figures:
    sim = bench_module("fusion_mace_simulation")
    n = ctx.size(100_000, 1_000_000)
    peer = _crowdkit()
    m = sim.measure(n, prevalence=0.1, seed=ctx.seed, crowdkit=peer is not None)
    fig = Figures(peer=peer or peer_unavailable("crowd-kit", "crowdkit"))
    t = fig.table(
        f"{n:,} items x {len(sim.CONFUSIONS)} simulated readers, prevalence 0.1",
        [
            "method",
            "accuracy",
            "fused to UNC",
            "sensitivity",
            "specificity",
            "largest share ratio (state)",
            "s",
        ],
    )
    for r in m["rows"]:
        t.add(
            r["method"],
            fmt(r["accuracy"]),
            fmt(r["fused_unc"]),
            fmt(r["sensitivity"]),
            fmt(r["specificity"]),
            r["max_ratio"],
            r["seconds"],
        )
        for k in ("accuracy", "fused_unc", "sensitivity", "specificity", "max_ratio"):
            fig.checked[f"{r['method']} | {k}"] = fmt(r[k])
    shares = fig.table("readers' answer shares", ["reader", "NEG", "UNC", "POS"])
    for reader, row in m["shares"].iterrows():
        shares.add(reader, *(f"{v:.3f}" for v in row.to_numpy()))
        fig.checked[f"answer shares | {reader}"] = " ".join(f"{v:.3f}" for v in row.to_numpy())
    if m["same_mace"] is not None:
        t.notes.append(f"cxreval MACE == crowd-kit MACE on {m['same_mace']:.4%} of items")
        sec = {r["method"]: r["seconds"] for r in m["rows"]}
        for name in ("DS", "MACE"):
            if sec.get(f"cxreval {name}"):
                fig.ratios[f"crowd-kit {name} s / cxreval {name} s"] = sec[f"crowd-kit {name}"] / max(
                    sec[f"cxreval {name}"], 0.05
                )
    return fig


def vindr_crowdkit(ctx: Context) -> Figures:
    peer = _crowdkit()
    if peer is None:
        p = peer_unavailable("crowd-kit", "crowdkit")
        return Figures(peer=p, unavailable=p.unavailable)
    fusion = bench_module("fusion")
    findings = ["Cardiomegaly"] if ctx.quick else None
    try:
        per, s = fusion.measure(findings, "Cardiomegaly")
    except FileNotFoundError as exc:
        return Figures(peer=peer, unavailable=f"data unavailable: {exc} (run `cxreval data fetch`)")
    tot, agr = s["seconds"], s["agreement"]
    fig = Figures(peer=Peer("crowd-kit", s["crowdkit_version"]))
    t = fig.table(
        f"VinDr-CXR, {len(s['findings'])} finding(s), {s['n_items']:,} (image, finding) items",
        ["method", "cxreval s", "crowd-kit s", "crowd-kit / cxreval", "label agreement"],
    )
    for what, ours, theirs, key in (
        ("Dawid-Skene vs crowd-kit converged", "ds", "ck_ds_conv", "ds_conv"),
        ("Dawid-Skene vs crowd-kit defaults", "ds", "ck_ds_default", "ds_ours_vs_ck_default"),
        ("MACE, crowd-kit on reader-sorted input", "mace", "ck_mace", "mace"),
        ("majority vote", "mv", "ck_mv", "mv"),
    ):
        ratio = tot[theirs] / max(tot[ours], 1e-9)
        t.add(what, round(tot[ours], 2), round(tot[theirs], 2), round(ratio, 1), f"{agr[key]:.4%}")
        fig.ratios[what] = ratio
        fig.checked[f"{what} | label agreement"] = f"{agr[key]:.4%}"
    d = s["defects"]
    t.notes += [
        f"crowd-kit MACE, 10 restarts vs 1: max |diff proba| "
        f"{d['ck_mace_10_restarts_equal_1_restart_max_abs_diff']:.1e}; sorted vs shuffled rows: "
        f"{d['ck_mace_sorted_vs_shuffled_label_agreement']:.4%} label agreement",
        f"cxreval MACE sorted vs shuffled identical: {d['cxreval_mace_sorted_vs_shuffled_identical']}",
    ]
    return fig


PARTS = (
    Part(
        "simulation",
        "Accuracy, sensitivity, specificity and share of items fused to 'uncertain' of cxreval's "
        "MV, DS and MACE (and crowd-kit's DS and MACE) on simulated readers with known confusions "
        "(100,000 items quick, 1,000,000 full).",
        simulation,
        python_for="crowdkit",
    ),
    Part(
        "vindr_crowdkit",
        f"cxreval vs crowd-kit 1.4.2 on VinDr-CXR ({SHARED.name}/metadata cache; one finding "
        "quick, the 14 local findings full): wall time, label agreement, crowd-kit's MACE restart and row-order "
        "defects.",
        vindr_crowdkit,
        python_for="crowdkit",
    ),
)
