"""Each main job of cxreval, done from DataFrames in at most five lines (the functions ``job_*`` below, counted),
and checked against an independent computation (scikit-learn, SciPy, hand-worked values).

Every job returns a Result: ``.table`` (a tidy DataFrame), ``.save(folder)``, ``.summary()`` and ``.plot()``.
"""

from __future__ import annotations

import inspect
from collections import Counter

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import pytest
from scipy.stats import spearmanr
from sklearn.metrics import cohen_kappa_score, roc_auc_score

from cxreval.io.images import write_image
from cxreval.results import TableResult

MAX_LINES = 5
CODES = {"negative": 0, "uncertain": 1, "positive": 2}


# ---------------------------------------------------------------- the jobs (each body: at most five lines)


def job_auc(predictions, labels):
    from cxreval.classification import evaluate_auc

    return evaluate_auc(predictions, labels, references=["radiologist", "report"], n_resamples=200, rng=0)


def job_ranking(predictions, labels):
    from cxreval.classification import evaluate_auc
    from cxreval.ranking import compare_rankings

    return compare_rankings(evaluate_auc(predictions, labels, n_resamples=50, rng=0))


def job_agreement(labels):
    from cxreval.agreement import compare_sources

    return compare_sources(labels, "radiologist:report")


def job_fusion(labels):
    from cxreval.jobs import fuse_and_compare

    return fuse_and_compare(labels, ["R1", "R2", "R3"], ["mv", "ds"], adjudicated="radiologist", rng=0)


def job_report_labels(reports):
    from cxreval.labeller import label_reports

    return label_reports(reports)


def job_localization(maps, boxes):
    from cxreval.localization import LocalizationProtocol, evaluate_heatmaps

    protocol = LocalizationProtocol(upsampling="nearest", image_shape=(64, 64))
    return evaluate_heatmaps(maps, boxes, protocol=protocol)


def job_iqa_scores(pairs):
    from cxreval.iqa import score_pairs

    return score_pairs(pairs, ["psnr", "ssim"])


def job_metric_vs_expert(ratings, scores):
    from cxreval.iqa import compare_with_experts

    return compare_with_experts(ratings, scores, n_resamples=50, rng=0)


JOBS = [
    job_auc,
    job_ranking,
    job_agreement,
    job_fusion,
    job_report_labels,
    job_localization,
    job_iqa_scores,
    job_metric_vs_expert,
]


# ---------------------------------------------------------------- small data


def _labels() -> pd.DataFrame:
    rng = np.random.default_rng(11)
    truth = rng.integers(0, 2, size=(60, 2)) * 2  # negative / positive per (study, finding)
    rows = []
    for i in range(60):
        for j, f in enumerate(("Effusion", "Atelectasis")):
            flip = rng.random(4) < (0.0, 0.15, 0.25, 0.3)
            for src, fl in zip(("radiologist", "report", "R1", "R2"), flip):
                state = 2 - truth[i, j] if fl else truth[i, j]
                rows.append((f"s{i}", f"p{i // 2}", f, src, ["negative", "uncertain", "positive"][state]))
            rows.append(
                (f"s{i}", f"p{i // 2}", f, "R3", ["negative", "uncertain", "positive"][rng.integers(0, 3)])
            )
    return pd.DataFrame(rows, columns=["study_id", "patient_id", "finding", "source", "state"])


def _predictions(labels: pd.DataFrame) -> pd.DataFrame:
    rng = np.random.default_rng(12)
    ref = labels[labels.source == "radiologist"]
    pos = (ref.state == "positive").to_numpy(float)
    return pd.concat(
        [
            pd.DataFrame(
                {
                    "study_id": ref.study_id.to_numpy(),
                    "model": m,
                    "finding": ref.finding.to_numpy(),
                    "score": pos * skill + rng.normal(0, 1, len(ref)),
                }
            )
            for m, skill in (("m1", 2.0), ("m2", 1.0), ("m3", 0.5), ("m4", 0.1))
        ],
        ignore_index=True,
    )


def _lines(func) -> int:
    body = inspect.getsource(func).split(":\n", 1)[1]
    return sum(1 for ln in body.splitlines() if ln.strip() and not ln.strip().startswith("#"))


# ---------------------------------------------------------------- checks


@pytest.mark.parametrize("job", JOBS, ids=lambda f: f.__name__)
def test_each_job_is_at_most_five_lines(job):
    assert _lines(job) <= MAX_LINES


def _check_result(res: TableResult, tmp_path) -> pd.DataFrame:
    assert isinstance(res, TableResult) and isinstance(res.table, pd.DataFrame) and len(res.table)
    assert isinstance(res.plot(), go.Figure) and res.summary().strip()
    tmp_path.mkdir(parents=True, exist_ok=True)
    assert set(res.tables()) <= set(res.save(tmp_path))
    return res.table


def test_auc_with_cis_for_many_models_and_references(tmp_path):
    labels = _labels()
    t = _check_result(job_auc(_predictions(labels), labels), tmp_path)
    assert set(t.model) >= {"m1", "m2", "m3", "m4"} and set(t.reference) == {"radiologist", "report"}
    row = t[(t.model == "m2") & (t.reference == "report") & (t.finding == "Effusion")].iloc[0]
    lab = labels[(labels.source == "report") & (labels.finding == "Effusion")].set_index("study_id").state
    pred = _predictions(labels).query("model == 'm2' and finding == 'Effusion'").set_index("study_id").score
    keep = lab[lab != "uncertain"]  # policy 'exclude': uncertain labels left out
    assert row.auc == pytest.approx(roc_auc_score(keep == "positive", pred.loc[keep.index]))
    assert row.ci_low <= row.auc <= row.ci_high


def test_compare_rankings(tmp_path):
    labels = _labels()
    res = job_ranking(_predictions(labels), labels)
    t = _check_result(res, tmp_path)
    from cxreval.classification import evaluate_auc

    a = evaluate_auc(_predictions(labels), labels, n_resamples=50, rng=0).table
    a = a[(a.finding == "Effusion") & a.model.isin(["m1", "m2", "m3", "m4"])]
    x = a[a.reference == "radiologist"].set_index("model").auc
    y = a[a.reference == "report"].set_index("model").auc.loc[x.index]
    row = t[
        (t.finding == "Effusion")
        & (t.method == "SRCC")
        & (t.reference_a == "radiologist")
        & (t.reference_b == "report")
    ].iloc[0]
    assert row.statistic == pytest.approx(spearmanr(x, y).statistic)


def test_agreement(tmp_path):
    labels = _labels()
    res = job_agreement(labels)
    t = _check_result(res, tmp_path)
    w = labels.pivot(index=["study_id", "finding"], columns="source", values="state").reset_index()
    w = w[w.finding == "Effusion"]
    want = cohen_kappa_score(
        w.radiologist.map(CODES), w.report.map(CODES), weights="quadratic", labels=[0, 1, 2]
    )
    assert t.set_index("finding").loc["Effusion", "kappa_w"] == pytest.approx(want)


def test_fusion(tmp_path):
    labels = _labels()
    res = job_fusion(labels)
    t = _check_result(res, tmp_path)
    assert set(t.method) == {"mv", "ds"}
    readers = labels[labels.source.isin(["R1", "R2", "R3"])].pivot(
        index=["study_id", "finding"], columns="source", values="state"
    )

    def majority(row):
        (top, n), *rest = Counter(row).most_common()
        return 1 if rest and rest[0][1] == n else CODES[top]  # a tie is uncertain

    want = readers.apply(lambda r: majority(r.tolist()), axis=1)
    mv = res.labels[res.labels.source == "fused_mv"].set_index(["study_id", "finding"]).state.astype(int)
    pd.testing.assert_series_equal(mv.loc[want.index], want, check_names=False)


def test_report_labels(tmp_path):
    reports = pd.DataFrame(
        {
            "study_id": ["a", "b", "c"],
            "text": [
                "FINDINGS: Small left pleural effusion. IMPRESSION: Effusion.",
                "FINDINGS: No pleural effusion. IMPRESSION: Normal chest.",
                "IMPRESSION: Cardiomegaly.",
            ],
        }
    )
    res = job_report_labels(reports)
    _check_result(res, tmp_path)
    lab = res.labels
    eff = lab[(lab.finding == "Effusion") & (lab.source == "report")].set_index("study_id").state
    assert eff.astype(int).to_dict() == {"a": 2, "b": 0, "c": -1}  # positive, negative, not mentioned


def test_localization(tmp_path):
    hit, miss = np.zeros((8, 8)), np.zeros((8, 8))
    hit[2, 2] = 1.0  # nearest x8: pixels [16, 24) x [16, 24), the box exactly
    miss[6, 6] = 1.0  # far from its box
    boxes = pd.DataFrame(
        {
            "study_id": ["a", "b"],
            "finding": "Nodule",
            "x_min": 16.0,
            "y_min": 16.0,
            "x_max": 24.0,
            "y_max": 24.0,
        }
    )
    t = _check_result(job_localization({"a/Nodule": hit, "b/Nodule": miss}, boxes), tmp_path)
    iou = t[(t.rule == "IoU") & (t.finding == "Nodule")]
    assert len(iou) and (iou.acc == 0.5).all()  # one of the two images localised, at every T and threshold


def _iqa_pairs(tmp_path) -> pd.DataFrame:
    rng = np.random.default_rng(3)
    ref = rng.uniform(0, 255, (48, 48))
    rows = []
    for i, sigma in enumerate((2.0, 8.0, 20.0, 40.0)):
        r = write_image(tmp_path / f"ref{i}.png", ref, data_range=255, dtype="uint8")
        noisy = np.clip(ref + rng.normal(0, sigma, ref.shape), 0, 255)
        rows.append((r, write_image(tmp_path / f"img{i}.png", noisy, data_range=255, dtype="uint8")))
    return pd.DataFrame(rows, columns=["reference", "test"]).astype(str)


def test_iqa_scores(tmp_path):
    pairs = _iqa_pairs(tmp_path)
    t = _check_result(job_iqa_scores(pairs), tmp_path / "out")
    from PIL import Image

    for r, tst, v in t[t.metric == "psnr"][["reference", "test", "value"]].itertuples(index=False):
        a, b = (np.asarray(Image.open(p), dtype=float) for p in (r, tst))
        assert v == pytest.approx(10 * np.log10(255**2 / np.mean((a - b) ** 2)))
    assert t[t.metric == "psnr"].value.is_monotonic_decreasing  # more noise, lower PSNR


def test_metric_vs_expert(tmp_path):
    pairs = _iqa_pairs(tmp_path)
    from cxreval.iqa import score_pairs

    scores = score_pairs(pairs, ["psnr", "ssim"]).table
    ratings = pd.DataFrame(
        {
            "image": [f"img{i}" for i in range(4)] * 2,
            "rater": ["r1"] * 4 + ["r2"] * 4,
            "rating": [4, 3, 3, 1, 4, 4, 2, 1],
        }
    )
    t = _check_result(job_metric_vs_expert(ratings, scores), tmp_path / "out")
    z = ratings.assign(z=ratings.groupby("rater").rating.transform(lambda s: (s - s.mean()) / s.std(ddof=0)))
    zmos = z.groupby("image").z.mean().loc[[f"img{i}" for i in range(4)]]
    psnr = scores[scores.metric == "psnr"].value.to_numpy()
    assert t.set_index("metric").loc["psnr", "srcc"] == pytest.approx(spearmanr(psnr, zmos).statistic)
