"""Small synthetic result folders following the analysis commands' output contracts."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

FINDINGS = ["Atelectasis", "Effusion", "Cardiomegaly"]
MODELS = [("m1", "XRV"), ("m2", "XRV"), ("m3", "VLM-0-SHOT"), ("m4", "VLM-FT")]
REFS = ["CR", "Rep1", "Rep2"]


def _classification(d: Path, rng: np.random.Generator) -> None:
    rows = []
    for ref in REFS:
        for model, group in MODELS:
            aucs = []
            for f in FINDINGS:
                a = float(rng.uniform(0.6, 0.95))
                aucs.append(a)
                rows.append((model, group, f, ref, a, a - 0.04, a + 0.03, 40, 160, 2))
            a = float(np.mean(aucs))
            rows.append((model, group, "macro", ref, a, a - 0.02, a + 0.02, 120, 480, 6))
    auc = pd.DataFrame(
        rows,
        columns=[
            "model",
            "group",
            "finding",
            "reference",
            "auc",
            "ci_low",
            "ci_high",
            "n_pos",
            "n_neg",
            "n_dropped",
        ],
    )
    auc.to_csv(d / "auc.csv", index=False)
    rk = auc.copy()
    rk["rank"] = (
        rk.groupby(["finding", "group", "reference"])["auc"].rank(ascending=False, method="min").astype(int)
    )
    rk["tied"] = False
    rk[["finding", "group", "reference", "model", "auc", "rank", "tied"]].to_csv(
        d / "rankings.csv", index=False
    )
    rc = []
    for f in ["macro", *FINDINGS]:
        for group in ["XRV", "VLM-0-SHOT", "all"]:
            for a, b in [("CR", "Rep1"), ("CR", "Rep2")]:
                for method in ["SRCC", "KRCC"]:
                    s = float(rng.uniform(-0.5, 1))
                    rc.append(
                        (f, group, a, b, method, s, s - 0.01, 0.1, s - 0.2, min(s + 0.2, 1.0), s + 0.02, 0.12)
                    )
    pd.DataFrame(
        rc,
        columns=[
            "finding",
            "group",
            "reference_a",
            "reference_b",
            "method",
            "statistic",
            "boot_mean",
            "boot_sd",
            "ci_low",
            "ci_high",
            "paper_mean",
            "paper_sd",
        ],
    ).to_csv(d / "rank_correlation.csv", index=False)
    pd.DataFrame(
        {
            "finding": ["macro"],
            "group": ["XRV"],
            "reference_a": ["CR"],
            "reference_b": ["Rep1"],
            "top_a": ["m1"],
            "top_b": ["m2"],
        }
    ).to_csv(d / "top_changes.csv", index=False)
    (d / "summary.md").write_text("# NIH models vs two references\n\nSynthetic.\n")


def _agreement(d: Path, rng: np.random.Generator) -> None:
    rows = []
    for pair in ["CR vs Rep1", "Rep1 vs Rep2"]:
        for f in [*FINDINGS, "macro", "micro"]:
            k = float(rng.uniform(0.2, 0.9))
            rows.append((pair, f, k, k - 0.15, k + 0.05, k + 0.05, k - 0.1, k + 0.1, 200))
    pd.DataFrame(
        rows,
        columns=["pair", "finding", "kappa_w", "kappa_low", "kappa_high", "f1_w", "f1_low", "f1_high", "n"],
    ).to_csv(d / "agreement.csv", index=False)
    prev, flows = [], []
    states = ["positive", "uncertain", "negative", "not_mentioned"]
    for src in ["CR", "Rep1"]:
        for f in FINDINGS:
            c = rng.integers(5, 100, size=4)
            for s, n in zip(states, c):
                prev.append((src, f, s, int(n), 100 * n / c.sum()))
    pd.DataFrame(prev, columns=["source", "finding", "state", "count", "percent"]).to_csv(
        d / "prevalence.csv", index=False
    )
    for f in [*FINDINGS, "all"]:
        for a in states[:3]:
            for b in states:
                flows.append(("CR", "Rep1", f, a, b, int(rng.integers(0, 60))))
    pd.DataFrame(flows, columns=["source_a", "source_b", "finding", "state_a", "state_b", "count"]).to_csv(
        d / "flows.csv", index=False
    )


def _fusion(d: Path, rng: np.random.Generator) -> None:
    rows = []
    for m in ["MV", "FUSE_OR", "FUSE_AND", "DS", "MACE"]:
        for f in [*FINDINGS, "macro"]:
            k = float(rng.uniform(0.3, 0.9))
            rows.append((m, f, k, k - 0.1, k + 0.05, k, k - 0.1, k + 0.1, 500))
    pd.DataFrame(
        rows,
        columns=["method", "finding", "kappa_w", "kappa_low", "kappa_high", "f1_w", "f1_low", "f1_high", "n"],
    ).to_csv(d / "fusion_agreement.csv", index=False)
    pd.DataFrame(
        {
            "study_id": ["s1", "s2"],
            "finding": ["Effusion"] * 2,
            "method": ["MV"] * 2,
            "state": ["positive", "negative"],
        }
    ).to_csv(d / "fused_labels.csv", index=False)


def _localization(d: Path, rng: np.random.Generator) -> None:
    rows = []
    for thr in [60, 180]:
        for f in FINDINGS:
            for t in [0.1, 0.25, 0.5, 0.75]:
                rows.append(
                    (f, t, thr, "iobb", float(rng.uniform(0, 1) * (1 - t)), float(rng.uniform(0, 2)), 30, 25)
                )
    pd.DataFrame(
        rows, columns=["finding", "T", "threshold", "rule", "acc", "afp", "n_boxes", "n_images"]
    ).to_csv(d / "localization.csv", index=False)
    pd.DataFrame(
        {
            "image": ["a.png"],
            "finding": ["Effusion"],
            "kind": ["reference"],
            "x0": [10],
            "y0": [20],
            "x1": [50],
            "y1": [60],
        }
    ).to_csv(d / "boxes.csv", index=False)
    (d / "synth_output.txt").write_text("Acc at T=0.1: 0.80\nAFP: 0.20\n")


def _iqa(d: Path, rng: np.random.Generator) -> None:
    tests = [f"img{i}_deg{j}" for i in range(4) for j in range(3)]
    rows = [("ref" + t[3], t, m, float(rng.normal())) for t in tests for m in ["psnr", "ssim", "niqe"]]
    pd.DataFrame(rows, columns=["reference", "test", "metric", "value"]).to_csv(d / "scores.csv", index=False)
    pd.DataFrame({"test": tests, "zmos": rng.normal(size=len(tests))}).to_csv(d / "zmos.csv", index=False)
    pd.DataFrame(
        {
            "metric": ["psnr", "ssim", "niqe"],
            "srcc": [0.5, 0.7, -0.2],
            "krcc": [0.4, 0.5, -0.1],
            "srcc_ci_low": [0.3, 0.5, -0.4],
            "srcc_ci_high": [0.7, 0.8, 0.1],
        }
    ).to_csv(d / "metric_agreement.csv", index=False)


def _iqa_metric_vs_metric(d: Path, rng: np.random.Generator) -> None:
    """What ``cxreval demo`` writes for IQA without expert ratings (scores per degradation, rankings, SRCC)."""
    degs = ["blur", "noise", "jpeg"]
    rows = [
        (f"img{i}", f"img{i}.png", f"img{i}__{g}.png", g, m, float(rng.normal()))
        for i in range(2)
        for g in degs
        for m in ["psnr", "ssim", "gmsd"]
    ]
    pd.DataFrame(rows, columns=["image", "reference", "test", "degradation", "metric", "value"]).to_csv(
        d / "scores.csv", index=False
    )
    pd.DataFrame(
        [(m, g, 0.5, 2, float(r)) for m in ["psnr", "ssim", "gmsd"] for r, g in enumerate(degs, 1)],
        columns=["metric", "degradation", "mean_value", "n_images", "rank"],
    ).to_csv(d / "degradation_ranking.csv", index=False)
    pd.DataFrame(
        [
            (a, b, over, 0.5, 0.33, n)
            for over, n in (("degradations", 3), ("test images", 6))
            for a, b in (("psnr", "ssim"), ("psnr", "gmsd"), ("ssim", "gmsd"))
        ],
        columns=["metric_a", "metric_b", "over", "srcc", "krcc", "n"],
    ).to_csv(d / "metric_vs_metric.csv", index=False)


def _overlays(d: Path, rng: np.random.Generator) -> None:
    """A box-overlay folder: two small PNG 'radiographs', boxes in 64-pixel coordinates, coarse maps."""
    from PIL import Image

    (d / "overlays").mkdir()
    rows = []
    for k in range(2):
        Image.fromarray(rng.integers(0, 255, (32, 32), dtype=np.uint8), mode="L").save(
            d / "overlays" / f"im{k}.png"
        )
        for kind, box in (
            ("reference", (10, 12, 30, 40)),
            ("detected (T_h=60)", (8, 10, 33, 44)),
            ("detected (T_h=180)", (12, 14, 28, 36)),
        ):
            rows.append(
                (f"im{k}.png", "Effusion", kind, *box, f"overlays/im{k}.png", 64, f"im{k}.png|Effusion")
            )
    pd.DataFrame(
        rows,
        columns=[
            "study_id",
            "finding",
            "kind",
            "x_min",
            "y_min",
            "x_max",
            "y_max",
            "image_file",
            "image_size",
            "heatmap_key",
        ],
    ).to_csv(d / "overlays.csv", index=False)
    np.savez_compressed(
        d / "overlay_heatmaps.npz",
        keys=np.array(["im0.png|Effusion", "im1.png|Effusion"]),
        maps=rng.random((2, 8, 8)),
    )


def _audit(d: Path) -> None:
    (d / "audit.json").write_text(
        json.dumps(
            {
                "dataset": "chestxray14",
                "n_images": 112120,
                "n_patients": 30805,
                "split": {"train_val": 86524, "test": 25596, "patient_overlap": 0},
                "per_finding": [{"finding": "Effusion", "n": 13317}, {"finding": "Mass", "n": 5782}],
            }
        )
    )


def _report_labels(d: Path, rng: np.random.Generator) -> None:
    """A labeller scored against a reference with :func:`cxreval.labeller.compute_precision_recall`."""
    from cxreval.findings import CHESTXRAY8
    from cxreval.labeller import compute_precision_recall

    rows = []
    for i in range(120):
        for f in CHESTXRAY8:
            ref = rng.random() < 0.2
            pred = ref if rng.random() < 0.9 else not ref
            rows += [
                {
                    "study_id": f"r{i}",
                    "patient_id": f"r{i}",
                    "finding": f,
                    "source": "human",
                    "state": "positive" if ref else "negative",
                },
                {
                    "study_id": f"r{i}",
                    "patient_id": f"r{i}",
                    "finding": f,
                    "source": "report",
                    "state": "positive" if pred else "negative",
                },
            ]
    val = compute_precision_recall(
        pd.DataFrame(rows), reference="human", predicted="report", findings=CHESTXRAY8, n_resamples=50, rng=0
    ).table
    val.to_csv(d / "labeller_validation.csv", index=False)


def _relabelling(d: Path, rng: np.random.Generator) -> None:
    """A relabelling plan (:func:`cxreval.planning.plan_relabelling`) for two simulated findings: close models
    for Effusion, far apart for Edema."""
    from cxreval.planning import plan_relabelling, simulate_study_set

    sets = [
        simulate_study_set(
            300,
            auc=a,
            sensitivity=[0.8],
            specificity=[0.9],
            prevalence=0.3,
            finding=f,
            rng=int(rng.integers(1 << 31)),
        )
        for f, a in (("Effusion", [0.80, 0.78, 0.70]), ("Edema", [0.93, 0.62, 0.60]))
    ]
    preds = pd.concat([s.predictions for s in sets], ignore_index=True)
    labels = pd.concat([s.labels[s.labels["source"] != "truth"] for s in sets], ignore_index=True)
    plan_relabelling(preds, labels, reference="ref0", budget=20, n_draws=20, rng=0).save(d)


def _reader_study(d: Path, rng: np.random.Generator) -> None:
    """A reader study (:func:`cxreval.jobs.evaluate_reader_study`): 3 binary readers and a model under two
    references, one of them noisy."""
    from cxreval.jobs import evaluate_reader_study
    from cxreval.mrmc import labels_to_ratings

    n = 200
    truth = rng.integers(0, 2, n)
    noisy = np.where(rng.random(n) < 0.15, 1 - truth, truth)
    rows = [
        {
            "study_id": f"s{i}",
            "patient_id": f"p{i}",
            "finding": "Edema",
            "source": src,
            "state": "positive" if v else "negative",
        }
        for src, vals in [
            ("consensus", truth),
            ("labeler", noisy),
            *((r, (truth + rng.normal(scale=0.9, size=n) > 0.5).astype(int)) for r in ("r1", "r2", "r3")),
        ]
        for i, v in enumerate(vals)
    ]
    labels = pd.DataFrame(rows)
    preds = pd.DataFrame(
        {
            "study_id": [f"s{i}" for i in range(n)],
            "model": "m1",
            "finding": "Edema",
            "score": truth + rng.normal(size=n),
        }
    )
    evaluate_reader_study(
        labels_to_ratings(labels, sources=["r1", "r2", "r3"]),
        labels,
        references=["consensus", "labeler"],
        predictions=preds,
        n_resamples=100,
        rng=0,
    ).save(d)


def _subgroups(d: Path, rng: np.random.Generator) -> None:
    """10 models' subgroup gaps under two references, with calibration (what ``cxreval subgroups`` writes)."""
    from _factories import subgroup_folder

    del rng  # the simulated set has its own seeds
    subgroup_folder(d, n_models=10)


def make_results(root: Path, seed: int = 0) -> Path:
    """Write one folder per analysis kind under ``root``; return ``root``."""
    rng = np.random.default_rng(seed)
    for name, fn in [
        ("classify", _classification),
        ("agree", _agreement),
        ("fuse", _fusion),
        ("localize", _localization),
        ("iqa", _iqa),
        ("iqa_no_ratings", _iqa_metric_vs_metric),
        ("overlays", _overlays),
        ("report_labels", _report_labels),
        ("plan", _relabelling),
        ("mrmc", _reader_study),
        ("subgroups", _subgroups),
    ]:
        d = root / name
        d.mkdir(parents=True, exist_ok=True)
        fn(d, rng)
    (root / "audit").mkdir(exist_ok=True)
    _audit(root / "audit")
    return root


@pytest.fixture(scope="session")
def synthetic_results(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_results(tmp_path_factory.mktemp("results"))
