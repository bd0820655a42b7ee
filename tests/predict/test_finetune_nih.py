"""End to end on the 39 shared NIH radiographs: finetune (tiny CNN, CPU) -> predict --heatmaps -> localize ->
classify / rank.

Two tiny CNNs (different seeds) are fine-tuned on the NIH text-mined labels of three findings; the numbers carry
no clinical meaning (39 images). The test checks that each stage reads what the previous one wrote: the
checkpoint loads in ``predict``, its validation scores are the ones ``finetune`` logged, the maps are scored by
``localize`` against the radiologist boxes, and ``classify`` gives scikit-learn's AUC on the validation images.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import yaml

from cxreval.cli.main import main

from .conftest import ARCH

pytestmark = pytest.mark.slow

FINDINGS = ["Cardiomegaly", "Nodule", "Infiltration"]


def test_finetune_predict_localize_classify_rank(tmp_path, shared_data, metadata_dir, torch_mod):
    import torch
    from sklearn.metrics import roc_auc_score

    from cxreval.datasets import nih
    from cxreval.labels import write_labels

    images = shared_data / "images" / "nih"
    ids = sorted(p.name for p in images.glob("*.png"))
    assert len(ids) == 39
    tm = nih.load_labels().table
    tm = tm[tm.study_id.isin(ids) & tm.finding.isin(FINDINGS)]
    lpath = tmp_path / "labels.parquet"
    write_labels(tm, lpath)
    (tmp_path / "arch.py").write_text(ARCH)
    import importlib.util

    spec = importlib.util.spec_from_file_location("nih_ft_arch", tmp_path / "arch.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    torch.manual_seed(0)
    torch.save(mod.build(2).state_dict(), tmp_path / "base.pt")
    (tmp_path / "base.yaml").write_text(
        yaml.safe_dump(
            {
                "checkpoint": "base.pt",
                "architecture": "arch.py:build",
                "architecture_kwargs": {"n_out": 2},
                "input": {"size": 64, "channels": 1, "normalization": "xrv"},
                "findings": ["Mass", "Edema"],
                "target_layer": "features",
            }
        )
    )
    specs = []
    for seed in (0, 1):
        out = tmp_path / f"ft{seed}"
        assert (
            main(
                [
                    "finetune",
                    "--images",
                    str(images),
                    "--labels",
                    str(lpath),
                    "--model",
                    f"torch:{tmp_path / 'base.yaml'}",
                    "--epochs",
                    "3",
                    "--batch-size",
                    "8",
                    "--lr",
                    "1e-3",
                    "--val-fraction",
                    "0.3",
                    "--seed",
                    str(seed),
                    "--name",
                    f"tiny{seed}",
                    "--no-progress",
                    "--out",
                    str(out),
                ]
            )
            == 0
        )
        specs += ["--model", f"torch:{out / 'model.yaml'}"]
    log = pd.read_csv(tmp_path / "ft0" / "training.csv")
    assert set(log.finding) == {*FINDINGS, "macro"} and log.epoch.max() <= 3
    pred = tmp_path / "pred"
    assert (
        main(["predict", "--images", str(images), *specs, "--heatmaps", "--no-progress", "--out", str(pred)])
        == 0
    )
    p = pd.read_parquet(pred / "predictions.parquet")
    assert len(p) == 39 * 3 * 2
    # the logged validation scores are what predict gives with the written checkpoint
    vp = pd.read_csv(tmp_path / "ft0" / "val_predictions.csv")
    m = vp.merge(p, on=["study_id", "model", "finding"], suffixes=("_logged", ""))
    assert len(m) == len(vp) > 0
    np.testing.assert_allclose(m.score, m.score_logged, atol=1e-5)

    boxes = pd.read_csv(metadata_dir / "BBox_List_2017.csv.gz")
    boxes = boxes[boxes["Image Index"].isin(ids) & boxes["Finding Label"].isin(FINDINGS)]
    bpath = tmp_path / "boxes.csv"
    boxes.to_csv(bpath, index=False)
    loc = tmp_path / "loc"
    assert (
        main(
            [
                "localize",
                "--heatmaps",
                str(pred / "heatmaps" / "tiny0.npz"),
                "--boxes",
                str(bpath),
                "--out",
                str(loc),
            ]
        )
        == 0
    )
    lt = pd.read_csv(loc / "localization.csv", dtype={"threshold": str})
    assert {"Cardiomegaly", "Nodule"} <= set(lt.finding) and lt.acc.between(0, 1).all()

    cls = tmp_path / "cls"
    assert (
        main(
            [
                "classify",
                "-p",
                str(pred / "predictions.parquet"),
                "-l",
                str(lpath),
                "--n-resamples",
                "20",
                "--seed",
                "1",
                "--out",
                str(cls),
            ]
        )
        == 0
    )
    auc = pd.read_csv(cls / "auc.csv")
    lab = tm.assign(y=(tm.state == 2).astype(int))
    for (model, f), g in p.groupby(["model", "finding"]):
        j = g.merge(lab, on=["study_id", "finding"])
        row = auc[(auc.model == model) & (auc.finding == f)]
        assert row.auc.item() == pytest.approx(roc_auc_score(j.y, j.score), abs=1e-12)
    best = log[log.best & (log.finding != "macro")].dropna(subset=["val_auc"]).set_index("finding")
    val = set(pd.read_csv(tmp_path / "ft0" / "split.csv").query("split == 'val'").study_id)
    for f, r in best.iterrows():  # finetune's logged AUC = the AUC of predict's scores
        j = p[(p.model == "tiny0") & (p.finding == f) & p.study_id.isin(val)].merge(
            lab, on=["study_id", "finding"]
        )
        assert roc_auc_score(j.y, j.score) == pytest.approx(r.val_auc, abs=1e-12)
    rk = tmp_path / "rank"
    assert (
        main(
            [
                "rank",
                "-p",
                str(pred / "predictions.parquet"),
                "-l",
                str(lpath),
                "--n-resamples",
                "20",
                "--min-models",
                "2",
                "--out",
                str(rk),
            ]
        )
        == 0
    )
    assert set(pd.read_csv(rk / "rankings.csv").model) == {"tiny0", "tiny1"}


def test_googlenet_recipe_finetune_predict_localize(tmp_path, shared_data, metadata_dir, one_torch_thread):
    """ChestX-ray8's GoogLeNet trunk (random initialisation, 64 x 64 input, 1 epoch) on the 39 NIH radiographs:
    finetune -> predict --heatmaps -> localize against the radiologist boxes."""
    pytest.importorskip("torchvision", reason="the ChestX-ray8 recipe needs torchvision")
    from cxreval.datasets import nih
    from cxreval.labels import write_labels

    images = shared_data / "images" / "nih"
    ids = sorted(p.name for p in images.glob("*.png"))
    assert len(ids) == 39
    tm = nih.load_labels().table
    write_labels(tm[tm.study_id.isin(ids) & tm.finding.isin(FINDINGS)], tmp_path / "labels.parquet")
    out = tmp_path / "g"
    assert (
        main(
            [
                "finetune",
                "--images",
                str(images),
                "--labels",
                str(tmp_path / "labels.parquet"),
                "--recipe",
                "chestxray8",
                "--arch",
                "googlenet",
                "--input-size",
                "64",
                "--epochs",
                "1",
                "--batch-size",
                "8",
                "--val-fraction",
                "0.3",
                "--no-progress",
                "--out",
                str(out),
            ]
        )
        == 0
    )
    cfg = yaml.safe_load((out / "model.yaml").read_text())
    assert cfg["architecture_kwargs"]["arch"] == "googlenet" and cfg["target_layer"] == "transition"
    pred = tmp_path / "pred"
    assert (
        main(
            [
                "predict",
                "--images",
                str(images),
                "--model",
                f"torch:{out / 'model.yaml'}",
                "--heatmaps",
                "--batch-size",
                "8",
                "--no-progress",
                "--out",
                str(pred),
            ]
        )
        == 0
    )
    p = pd.read_parquet(pred / "predictions.parquet")
    assert len(p) == 39 * 3 and set(p.model) == {"chestxray8-googlenet"}
    vp = pd.read_csv(out / "val_predictions.csv")
    m = vp.merge(p, on=["study_id", "model", "finding"], suffixes=("_logged", ""))
    assert len(m) == len(vp) > 0
    np.testing.assert_allclose(m.score, m.score_logged, atol=1e-6)
    with np.load(pred / "heatmaps" / "chestxray8-googlenet.npz") as z:
        assert z[f"{ids[0]}/Nodule"].shape == (2, 2)  # 64 / stride 32
    boxes = pd.read_csv(metadata_dir / "BBox_List_2017.csv.gz")
    boxes[boxes["Image Index"].isin(ids) & boxes["Finding Label"].isin(FINDINGS)].to_csv(
        tmp_path / "b.csv", index=False
    )
    assert (
        main(
            [
                "localize",
                "--heatmaps",
                str(pred / "heatmaps" / "chestxray8-googlenet.npz"),
                "--boxes",
                str(tmp_path / "b.csv"),
                "--out",
                str(tmp_path / "loc"),
            ]
        )
        == 0
    )
    lt = pd.read_csv(tmp_path / "loc" / "localization.csv", dtype={"threshold": str})
    assert {"Cardiomegaly", "Nodule"} <= set(lt.finding) and lt.acc.between(0, 1).all()
