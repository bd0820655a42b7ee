"""The chain on the shared NIH radiographs: predict --heatmaps -> localize -> classify / rank.

Three self-made checkpoints (TinyCNN, trained on synthetic blobs; their outputs declared as Cardiomegaly,
Nodule and Pneumonia, the findings with radiologist boxes among these images) run on the 39 real NIH images.
The scores carry no clinical meaning; the test checks that every stage reads what the previous one wrote and
that the numbers equal independent computations.

References: the NIH text-mined labels (all 39 images) and an expert reference from the radiologist boxes of
``BBox_List_2017`` on the 12 boxed images (positive: the radiologist boxed that finding; negative: a boxed
image without a box for it). Google's expert labels cover only 1 of these 39 images, too few for an AUC.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import yaml

from cxreval.cli.main import main

pytestmark = pytest.mark.slow

FINDINGS = ["Cardiomegaly", "Nodule", "Pneumonia"]


def test_predict_localize_classify_rank(tmp_path, shared_data, metadata_dir, tiny_models, torch_mod):
    from sklearn.metrics import roc_auc_score

    from cxreval.datasets import nih
    from cxreval.labels import write_labels

    images = shared_data / "images" / "nih"
    ids = sorted(p.name for p in images.glob("*.png"))
    assert len(ids) == 39
    d, ymls = tiny_models
    specs = []
    for k, y in enumerate(ymls):
        cfg = yaml.safe_load(y.read_text())
        cfg.update(
            name=f"blob{k}",
            findings=FINDINGS,
            checkpoint=str(d / cfg["checkpoint"]),
            architecture=str(d / "tiny_arch.py") + ":build",
        )
        (tmp_path / f"blob{k}.yaml").write_text(yaml.safe_dump(cfg))
        specs += ["--model", f"torch:{tmp_path / f'blob{k}.yaml'}"]
    pred = tmp_path / "pred"
    assert (
        main(
            [
                "predict",
                "--images",
                str(images),
                *specs,
                "--heatmaps",
                "--batch-size",
                "16",
                "--no-progress",
                "--out",
                str(pred),
            ]
        )
        == 0
    )
    p = pd.read_parquet(pred / "predictions.parquet")
    assert len(p) == 39 * 3 * 3 and set(p.study_id) == set(ids)

    # localize: the maps against the radiologist boxes of these images
    boxes = pd.read_csv(metadata_dir / "BBox_List_2017.csv.gz")
    boxes = boxes[boxes["Image Index"].isin(ids) & boxes["Finding Label"].isin(FINDINGS)]
    assert len(boxes) == 9
    bpath = tmp_path / "boxes.csv"
    boxes.to_csv(bpath, index=False)
    loc = tmp_path / "loc"
    assert (
        main(
            [
                "localize",
                "--heatmaps",
                str(pred / "heatmaps" / "blob0.npz"),
                "--boxes",
                str(bpath),
                "--out",
                str(loc),
            ]
        )
        == 0
    )
    lt = pd.read_csv(loc / "localization.csv", dtype={"threshold": str})  # the threshold column is text
    assert set(lt.finding) >= set(FINDINGS)
    assert (lt[lt.finding.isin(FINDINGS)].n_boxes == 3).all()
    assert lt.acc.between(0, 1).all()
    # the same maps scored in-process give the same table (the .npz is read as written)
    from cxreval.datasets.nih_boxes import read_nih_boxes
    from cxreval.localization import LocalizationProtocol, evaluate_heatmaps

    with np.load(pred / "heatmaps" / "blob0.npz") as z:
        maps = {k: z[k] for k in z.files}
    direct = evaluate_heatmaps(maps, read_nih_boxes(bpath).table, protocol=LocalizationProtocol()).table
    m = lt.merge(direct, on=["finding", "T", "threshold", "rule"], suffixes=("", "_d"))
    assert len(m) == len(lt) and np.allclose(m.acc, m.acc_d, equal_nan=True)

    # classify / rank against text-mined and expert (radiologist boxes) references
    tm = nih.load_labels().table
    tm = tm[tm.study_id.isin(ids) & tm.finding.isin(FINDINGS)]
    allbox = pd.read_csv(metadata_dir / "BBox_List_2017.csv.gz")
    allbox = allbox[allbox["Image Index"].isin(ids)]
    boxed = sorted(allbox["Image Index"].unique())
    pid = tm.drop_duplicates("study_id").set_index("study_id").patient_id
    has = set(zip(allbox["Image Index"], allbox["Finding Label"]))
    ex = pd.DataFrame(
        [
            (s, pid[s], f, "radiologist_boxes", "positive" if (s, f) in has else "negative")
            for s in boxed
            for f in FINDINGS
        ],
        columns=["study_id", "patient_id", "finding", "source", "state"],
    )
    labels = pd.concat(
        [tm.assign(state=np.where(tm.state == 2, "positive", "negative")), ex], ignore_index=True
    )
    lpath = tmp_path / "labels.parquet"
    write_labels(labels[["study_id", "patient_id", "finding", "source", "state"]], lpath)
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
                "--studies",
                "each",
                "--out",
                str(cls),
            ]
        )
        == 0
    )  # each reference on its own studies
    auc = pd.read_csv(cls / "auc.csv")
    checked = 0
    for ref, lab in labels.groupby("source"):
        for (model, f), g in p.groupby(["model", "finding"]):
            j = g.merge(lab[lab.finding == f], on=["study_id", "finding"])
            y = (j.state == "positive").to_numpy()
            row = auc[(auc.model == model) & (auc.finding == f) & (auc.reference == ref)]
            assert len(row) == 1
            assert row.auc.iloc[0] == pytest.approx(roc_auc_score(y, j.score), abs=1e-12)
            assert row.n_pos.iloc[0] == y.sum() and row.n_neg.iloc[0] == (~y).sum()
            checked += 1
    assert checked == 2 * 3 * 3
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
                "--out",
                str(rk),
            ]
        )
        == 0
    )
    rc = pd.read_csv(rk / "rank_correlation.csv")
    assert (
        set(rc.finding) >= set(FINDINGS) and set(rc.method) == {"SRCC", "KRCC"} and (rc.n_models == 3).all()
    )
    assert set(zip(rc.reference_a, rc.reference_b)) == {("nih_textmined", "radiologist_boxes")}
    st = rc.statistic.dropna()
    assert st.between(-1, 1).all()
    rankings = pd.read_csv(rk / "rankings.csv")
    assert set(rankings.model) == {"blob0", "blob1", "blob2"}
