"""Every result that owns its files draws a figure (``plot()`` -> a Plotly Figure with at least one trace) and
shows itself in Jupyter (``_repr_html_()``). The result classes are enumerated from ``TableResult``'s
subclasses after importing every cxreval module, so a new result without a builder here fails."""

from __future__ import annotations

import importlib
import pkgutil
from pathlib import Path

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import pytest
from PIL import Image

import cxreval
from _factories import STATES, label_table
from cxreval.results import TableResult

FINDINGS = ("Atelectasis", "Edema", "Cardiomegaly")


def _all_subclasses(cls: type) -> set[type]:
    out: set[type] = set()
    for sub in cls.__subclasses__():
        out |= {sub, *_all_subclasses(sub)}
    return out


def _result_classes() -> list[type]:
    for mod in pkgutil.walk_packages(cxreval.__path__, "cxreval."):
        if ".cli" in mod.name or mod.name.startswith(("cxreval.reader.app", "cxreval.reader.server")):
            continue
        try:
            importlib.import_module(mod.name)
        except ImportError:  # an optional dependency (torch, fastapi) is missing
            continue
    # a private base class (a shared figure of two results) is not a result of its own
    return sorted(
        (c for c in _all_subclasses(TableResult) if not c.__name__.startswith("_")), key=lambda c: c.__name__
    )


def _labels(seed: int = 0) -> pd.DataFrame:
    """CR, Rep1, Rep2 on 30 studies; the readers may leave a finding not mentioned, CR never."""
    return label_table(30, FINDINGS, states=STATES, reference_states=STATES[:3], seed=seed)


def _coded_labels() -> pd.DataFrame:
    from cxreval.labels import validate_label_table

    return validate_label_table(_labels())


def _predictions(labels: pd.DataFrame, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    cr = labels[labels.source == "CR"]
    pos = (cr.state == "positive").to_numpy(float)
    return pd.concat(
        [
            pd.DataFrame(
                {
                    "study_id": cr.study_id,
                    "model": m,
                    "finding": cr.finding,
                    "score": pos * k + rng.random(len(cr)),
                }
            )
            for m, k in (("m1", 1.0), ("m2", 0.5), ("m3", 0.2))
        ],
        ignore_index=True,
    )


def _auc():
    from cxreval.classification import evaluate_auc

    t = _labels()
    return evaluate_auc(_predictions(t), t, references=["CR", "Rep1"], n_resamples=20, rng=0)


def _boxes() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "study_id": ["a.png", "a.png", "b.png"],
            "finding": ["Mass", "Nodule", "Mass"],
            "x_min": [100.0, 500.0, 300.0],
            "y_min": [200.0, 400.0, 300.0],
            "x_max": [400.0, 600.0, 700.0],
            "y_max": [500.0, 520.0, 600.0],
        }
    )


def _images(tmp: Path) -> list[Path]:
    rng = np.random.default_rng(0)
    out = []
    for name in ("a.png", "b.png"):
        x = np.cumsum(rng.random((64, 64)), axis=1)
        Image.fromarray((x / x.max() * 60000).astype(np.uint16)).save(tmp / name)
        out.append(tmp / name)
    return out


RATINGS = pd.DataFrame(
    {"image": ["a", "b", "c", "d"] * 2, "rater": ["r1"] * 4 + ["r2"] * 4, "rating": [1, 2, 3, 4, 2, 2, 4, 4]}
)


def _iqa_scores() -> pd.DataFrame:
    refs = {"a": "R1", "b": "R1", "c": "R2", "d": "R2"}
    return pd.DataFrame(
        [
            {"reference": refs[i], "test": f"out/{i}.png", "metric": m, "value": v if m == "ssim" else 1 - v}
            for i, v in zip("abcd", [0.1, 0.5, 0.4, 0.9])
            for m in ("ssim", "rmse")
        ]
    )


def _degraded(tmp: Path):
    from cxreval.iqa import degrade_folder

    src = tmp / "src"
    src.mkdir(exist_ok=True)
    for p in _images(src):
        p.rename(src / p.name)
    plan = {
        "seed": 1,
        "degradations": [
            {"name": "blur", "transform": "gaussian_blur", "params": {"sigma": 1.0}},
            {"name": "noise", "transform": "gaussian_noise", "params": {"sigma": 0.05}},
        ],
    }
    return tmp / "deg", degrade_folder(src, plan, tmp / "deg")


def _scores_result(tmp: Path):
    from cxreval.iqa import score_pairs
    from cxreval.iqa._scoring import select_metrics

    out, deg = _degraded(tmp)
    sel = select_metrics("psnr,ssim,gmsd")
    return score_pairs(deg.pairs(), sel.names, base_dir=out)


def _data_entry(tmp: Path) -> Path:
    p = tmp / "Data_Entry.csv"
    p.write_text(
        "Image Index,Finding Labels,Follow-up #,Patient ID,Patient Age,Patient Gender,View Position\n"
        "00000001_000.png,Cardiomegaly,0,1,57,M,PA\n00000001_001.png,Cardiomegaly|Emphysema,1,1,58,M,PA\n"
        "00000002_000.png,No Finding,0,2,81,M,AP\n00000003_000.png,Hernia,0,3,77,F,PA\n"
    )
    return p


def _build(name: str, tmp: Path):
    if name == "AUCResult":
        return _auc()
    if name == "AUCTableResult":
        from cxreval.ranking._published import XQA_AUC_TABLES, read_auc_table

        return read_auc_table(XQA_AUC_TABLES)
    if name == "RankingStabilityResult":
        from cxreval.ranking import compare_rankings

        return compare_rankings(_auc())
    if name == "ReferenceComparison":
        from cxreval.jobs import compare_references
        from cxreval.options import Resampling

        t = _labels()
        return compare_references(
            _predictions(t), t, references=["CR", "Rep1"], resampling=Resampling(n_resamples=20, rng=0)
        )
    if name == "SubgroupResult":
        from cxreval.options import Resampling
        from cxreval.subgroups import evaluate_subgroups

        t = _labels()
        preds = _predictions(t)
        ids = sorted(set(t["study_id"]))
        meta = pd.DataFrame({"study_id": ids, "sex": ["F", "M"] * (len(ids) // 2) + ["F"] * (len(ids) % 2)})
        return evaluate_subgroups(
            preds,
            t,
            meta,
            by=["sex"],
            references=["CR", "Rep1"],
            calibration=False,
            resampling=Resampling(n_resamples=20, rng=0),
            min_cases=1,  # the fixture's groups are small: estimable gaps to plot
        )
    if name == "OperatingPointResult":
        from cxreval.classification import evaluate_operating_points

        t = _labels()
        preds = _predictions(t)
        preds["score"] = 1.0 / (1.0 + np.exp(-preds["score"]))  # probabilities, as a decision curve needs
        return evaluate_operating_points(
            preds,
            t,
            operating_points=["specificity=0.8", "youden"],
            decision_curve="0.1:0.5:0.1",
            references=["CR", "Rep1"],
            n_resamples=20,
            rng=0,
        )
    if name == "ClassifierEvaluation":
        from cxreval.jobs import evaluate_classifiers
        from cxreval.options import Resampling

        t = _labels()
        return evaluate_classifiers(
            _predictions(t), t, references=["CR", "Rep1"], resampling=Resampling(n_resamples=20, rng=0)
        )
    if name in {
        "AgreementTableResult",
        "PrevalenceResult",
        "FlowsResult",
        "OmissionsResult",
        "SourceComparisonResult",
    }:
        from cxreval import agreement as a

        t = _labels()
        return {
            "AgreementTableResult": lambda: a.compute_agreement(t, "CR:Rep1,CR:Rep2"),
            "PrevalenceResult": lambda: a.compute_prevalence(t),
            "FlowsResult": lambda: a.compute_flows(t, "CR:Rep1"),
            "OmissionsResult": lambda: a.compute_flows(t, "CR:Rep1").omissions(),
            "SourceComparisonResult": lambda: a.compare_sources(t, "CR:Rep1,CR:Rep2"),
        }[name]()
    if name == "FusionResult":
        from cxreval.jobs import fuse_and_compare

        return fuse_and_compare(_coded_labels(), ["Rep1", "Rep2"], ["mv", "ds"], adjudicated="CR", rng=0)
    if name == "DatasetExport":
        from cxreval.datasets import export_dataset

        return export_dataset("chestxray14", _data_entry(tmp))
    if name == "DatasetSplit":
        from cxreval.datasets import split_dataset

        return split_dataset("chestxray14", _data_entry(tmp), fractions=(0.5, 0.5), names=("a", "b"), rng=0)
    if name == "DatasetAudit":
        from cxreval.datasets.audit import audit_chestxray14

        bb = tmp / "BBox.csv"
        bb.write_text(
            "Image Index,Finding Label,Bbox [x,y,w,h],,,\n00000001_000.png,Cardiomegaly,10,20,30,40\n"
        )
        return audit_chestxray14(path=_data_entry(tmp), bbox_path=bb)
    if name == "LocalizationResult":
        from cxreval.localization import LocalizationProtocol, evaluate_heatmaps

        rng = np.random.default_rng(0)
        maps = {
            f"{s}/{f}": rng.random((16, 16))
            for s, f in _boxes()[["study_id", "finding"]].itertuples(index=False)
        }
        return evaluate_heatmaps(maps, _boxes(), protocol=LocalizationProtocol(image_shape=(1024, 1024)))
    if name == "HeatmapBoxesResult":
        from cxreval.localization import heatmaps_to_boxes

        return heatmaps_to_boxes(np.random.default_rng(0).random((3, 8, 8)), image_shape=(32, 32))
    if name == "SynthResult":
        from cxreval.localization import simulate_localization

        return simulate_localization(1, per_size=2)
    if name == "LocalizationStudy":
        from cxreval.localization import simulate_localization_study

        return simulate_localization_study(_boxes(), rng=0, per_size=2)
    if name == "RealBoxesResult":
        from cxreval.localization._real_boxes import simulate_localization_on_boxes

        return simulate_localization_on_boxes(_boxes(), rng=0)
    if name == "OverlayResult":
        from cxreval.localization._overlays import overlay_boxes

        return overlay_boxes(_images(tmp), _boxes(), rng=0)
    if name == "ReportLabelsResult":
        from cxreval.labeller import label_reports

        return label_reports(
            pd.DataFrame(
                {
                    "study_id": ["a", "b", "c"],
                    "text": [
                        "FINDINGS: Small left effusion. IMPRESSION: Effusion.",
                        "No edema. Possible atelectasis.",
                        "Cardiomegaly.",
                    ],
                }
            )
        )
    if name == "LabellerValidationResult":
        from cxreval.labeller import compute_precision_recall

        t = _labels()
        t = t[t.state != "not_mentioned"]
        return compute_precision_recall(t, reference="CR", predicted="Rep1", n_resamples=20, rng=0)
    if name == "ZMOSResult":
        from cxreval.iqa._expert import zscores

        return zscores(RATINGS)
    if name == "MetricAgreementResult":
        from cxreval.iqa import metric_agreement
        from cxreval.iqa._expert import zscores

        return metric_agreement(_iqa_scores(), zscores(RATINGS).zmos, n_resamples=20, rng=0)
    if name == "ExpertAgreementResult":
        from cxreval.iqa import compare_with_experts

        return compare_with_experts(RATINGS, _iqa_scores(), n_resamples=20, rng=0)
    if name == "ScoresResult":
        return _scores_result(tmp)
    if name == "MetricComparisonResult":
        from cxreval.iqa import compare_metrics

        return compare_metrics(_scores_result(tmp).table)
    if name == "DegradeResult":
        return _degraded(tmp)[1]
    if name == "SeparabilityResult":
        from cxreval.classification import compare_best_models

        return compare_best_models(_auc())
    if name == "FinetuneResult":
        from cxreval.predict import FinetuneResult
        from cxreval.predict._finetune import TRAINING_COLUMNS

        log = pd.DataFrame(
            [
                {
                    "epoch": e,
                    "finding": f,
                    "train_loss": 1 / e,
                    "val_loss": 1.1 / e,
                    "val_auc": 0.5 + e / 10,
                    "n_val_pos": 3,
                    "n_val_neg": 5,
                    "best": e == 3,
                }
                for e in (1, 2, 3)
                for f in ("Effusion", "macro")
            ],
            columns=list(TRAINING_COLUMNS),
        )
        return FinetuneResult(
            log,
            pd.DataFrame({"study_id": ["a"], "split": ["train"]}),
            pd.DataFrame({"study_id": ["a"], "finding": ["Effusion"], "score": [0.3]}),
            best_epoch=3,
            best_val_auc=0.8,
            stopped="after the last epoch",
        )
    if name in {"RelabelPlanResult", "TwoPhaseAUCResult"}:
        from cxreval.planning import plan_relabelling, simulate_study_set

        ss = simulate_study_set(
            40, auc=[0.85, 0.75], sensitivity=[0.8], specificity=[0.85], prevalence=0.3, rng=0
        )
        plan = plan_relabelling(
            ss.predictions,
            ss.labels[ss.labels.source != "truth"],
            reference="ref0",
            budget=8,
            n_draws=10,
            rng=0,
        )
        return plan if name == "RelabelPlanResult" else plan.estimate
    if name == "DesignAUCResult":
        from cxreval.planning import evaluate_design_auc, simulate_study_set

        ss = simulate_study_set(
            60, auc=[0.85, 0.75], sensitivity=[0.8], specificity=[0.85], prevalence=0.3, rng=0
        )
        cheap = ss.labels[ss.labels.source != "truth"]
        expert = ss.labels[ss.labels.source == "truth"].assign(source="expert")
        design = pd.DataFrame({"study_id": ss.truth.index, "inclusion_probability": 1.0, "random_part": True})
        return evaluate_design_auc(
            ss.predictions,
            pd.concat([cheap, expert]),
            reference="ref0",
            expert="expert",
            design=design,
        )
    if name == "LatentAUCResult":
        from cxreval.latent import evaluate_latent_auc

        labs = _labels()
        return evaluate_latent_auc(
            _predictions(labs), labs, readers=["CR", "Rep1", "Rep2"], n_resamples=5, rng=0
        )
    if name == "ReaderStudyResult":
        from cxreval.jobs import evaluate_reader_study

        rng = np.random.default_rng(0)
        truth = rng.integers(0, 2, 40)
        ratings = pd.DataFrame(
            [
                {
                    "reader": r,
                    "modality": m,
                    "study_id": f"s{i}",
                    "finding": "Effusion",
                    "rating": float(t + rng.normal()),
                }
                for r in ("a", "b")
                for m in ("A", "B")
                for i, t in enumerate(truth)
            ]
        )
        labels = pd.DataFrame(
            {
                "study_id": [f"s{i}" for i in range(40)],
                "patient_id": [f"p{i}" for i in range(40)],
                "finding": "Effusion",
                "source": "gt",
                "state": ["positive" if t else "negative" for t in truth],
            }
        )
        return evaluate_reader_study(ratings, labels, references=["gt"])
    if name == "ReaderStudyPlanResult":
        from cxreval.jobs import plan_reader_study
        from cxreval.mrmc import simulate_roe_metz

        sim = simulate_roe_metz(n_readers=4, n_cases_negative=30, n_cases_positive=30, rng=0)
        ratings = pd.DataFrame(
            [
                {
                    "reader": f"r{r}",
                    "modality": f"m{m}",
                    "study_id": f"s{i}",
                    "finding": "Effusion",
                    "rating": float(sim.ratings[m, r, i]),
                }
                for m in range(2)
                for r in range(4)
                for i in range(60)
            ]
        )
        labels = pd.DataFrame(
            {
                "study_id": [f"s{i}" for i in range(60)],
                "patient_id": [f"p{i}" for i in range(60)],
                "finding": "Effusion",
                "source": "gt",
                "state": ["positive" if t else "negative" for t in sim.truth],
            }
        )
        return plan_reader_study(ratings, labels, reference="gt", effect=0.05, rng=0)
    raise AssertionError(f"{name} is a TableResult without a builder in {__file__}: add one, with plot()")


def _n_points(trace) -> int:
    if isinstance(trace, go.Sankey):
        return len(trace.link.value)
    vals = [getattr(trace, k, None) for k in ("x", "y", "z")]
    return max((len(v) for v in vals if v is not None), default=0)


@pytest.mark.parametrize("cls", _result_classes(), ids=lambda c: c.__name__)
def test_every_result_plots_and_renders_html(cls, tmp_path):
    res = _build(cls.__name__, tmp_path)
    assert type(res) is cls
    fig = res.plot()
    assert isinstance(fig, go.Figure) and len(fig.data) >= 1
    assert any(_n_points(tr) for tr in fig.data), "every trace is empty"
    html = res._repr_html_()
    assert html.startswith("<div class='cxreval-result'>") and "<table" in html and cls.__name__ in html


def test_every_result_class_is_found():
    names = {c.__name__ for c in _result_classes()}
    assert {
        "AUCResult",
        "RankingStabilityResult",
        "FusionResult",
        "LocalizationResult",
        "ScoresResult",
        "OverlayResult",
        "DatasetAudit",
    } <= names and len(names) >= 23


def test_auc_figure_draws_the_table_values():
    res = _auc()
    fig = res.plot()
    xs = np.concatenate([np.asarray(tr.x, float) for tr in fig.data])
    np.testing.assert_allclose(np.sort(xs), np.sort(res.table["auc"].to_numpy(float)))
    assert {tr.name for tr in fig.data} == set(res.table["reference"])


def test_bump_chart_draws_the_ranks():
    from cxreval.ranking import compare_rankings

    res = compare_rankings(_auc())
    fig = res.plot()
    r = res.rankings
    r = r[r.finding == "macro"]  # the first panel (the menu switches finding)
    shown = [tr for tr in fig.data if tr.visible is not False]
    got = {tr.name: sorted(tr.y) for tr in shown}
    assert got == {m: sorted(g["rank"]) for m, g in r.groupby("model")}
    assert sum(len(tr.y) for tr in fig.data) == len(res.rankings)  # every finding's ranks are drawn


def test_sankey_flows_sum_to_the_flow_counts():
    from cxreval.agreement import compute_flows

    res = compute_flows(_labels(), "CR:Rep1")
    panels = res.plot().data  # one Sankey per pair and finding, switched by the menu
    assert all(isinstance(sk, go.Sankey) for sk in panels)
    assert sum(sum(sk.link.value) for sk in panels) == res.table["count"].sum()


def test_html_shows_the_table_head_and_is_escaped():
    from cxreval.agreement import compute_prevalence

    res = compute_prevalence(_labels().assign(source=lambda d: d.source.replace("CR", "<CR>")))
    html = res._repr_html_()
    assert "&lt;CR&gt;" in html and "<CR>" not in html
    assert html.count("<tr") == 1 + 5 and f"{len(res.table) - 5} more rows" in html


def test_fusion_without_a_reference_plots_the_fused_positive_fraction():
    from cxreval.fusion import fuse_labels

    res = fuse_labels(_coded_labels(), ["Rep1", "Rep2"], ["mv", "or"], rng=0)
    pd.testing.assert_frame_equal(res.table, res.fused_labels())  # without a reference: the fused labels
    assert list(res.table.columns) == list(res.FILE_COLUMNS["fused_labels"])
    fig = res.plot()
    lab = res.labels
    want = lab[lab.source == "fused_or"].groupby("finding")["state"].apply(lambda s: (s == 2).mean() * 100)
    (bar,) = [tr for tr in fig.data if tr.name == "fused_or"]
    assert dict(zip(bar.x, bar.y)) == pytest.approx(want.to_dict())
    assert "<table" in res._repr_html_()
