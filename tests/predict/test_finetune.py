"""``cxreval finetune`` on a learnable synthetic task (a bright square means positive), with a tiny CNN.

References: a hand-computed W-CEL, scikit-learn's LogisticRegression on the same frozen features, scikit-learn's
roc_auc_score of the scores ``cxreval predict`` gives with the written checkpoint.
"""

from __future__ import annotations

import json
import math
import warnings

import numpy as np
import pandas as pd
import pytest
import yaml
from PIL import Image

from _factories import RecordedProgress
from cxreval.cli.main import main
from cxreval.exceptions import InvalidParameterError, SchemaError

from .conftest import ARCH


def square_images(d, n, *, size=32, rng=0):
    """8-bit noisy images; Mass: a bright 8x8 square somewhere; Effusion: the square lies in the left half."""
    g = np.random.default_rng(rng)
    d.mkdir(parents=True, exist_ok=True)
    rows = []
    for i in range(n):
        a = g.normal(90, 25, (size, size))
        has = i % 2 == 0
        left = False
        if has:
            r, c = g.integers(0, size - 8, 2)
            a[r : r + 8, c : c + 8] += 120
            left = c + 4 < size / 2
        Image.fromarray(np.clip(a, 0, 255).astype(np.uint8)).save(d / f"im{i:03d}.png")
        for f, pos in (("Mass", has), ("Effusion", left)):
            rows.append(
                {
                    "study_id": f"im{i:03d}.png",
                    "patient_id": f"p{i // 2}",
                    "finding": f,
                    "source": "synthetic",
                    "state": "positive" if pos else "negative",
                }
            )
    return pd.DataFrame(rows)


@pytest.fixture()
def task(tmp_path, torch_mod):
    import torch

    labels = square_images(tmp_path / "imgs", 60, rng=1)
    labels.to_csv(tmp_path / "labels.csv", index=False)
    (tmp_path / "arch.py").write_text(ARCH)
    spec = __import__("importlib.util").util.spec_from_file_location("ft_arch", tmp_path / "arch.py")
    mod = __import__("importlib.util").util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    torch.manual_seed(0)
    torch.save(mod.build(3).state_dict(), tmp_path / "base.pt")
    (tmp_path / "base.yaml").write_text(
        yaml.safe_dump(
            {
                "name": "base",
                "checkpoint": "base.pt",
                "architecture": "arch.py:build",
                "architecture_kwargs": {"n_out": 3},
                "input": {"size": 32, "channels": 1, "normalization": "xrv"},
                "findings": ["Atelectasis", "Nodule", "Mass"],
                "target_layer": "features",
            }
        )
    )
    return tmp_path


def test_wcel_equals_hand_computed(torch_mod):
    import torch

    from cxreval.predict.losses import bce_loss, wcel_loss

    z = torch.tensor([[0.5, -1.0, 2.0], [1.5, 0.0, -0.5], [-2.0, 1.0, 0.25]], dtype=torch.float64)
    y = torch.tensor([[1, 0, 0], [0, float("nan"), 1], [0, 0, 0]], dtype=torch.float64)
    ls = lambda v: math.log(1 / (1 + math.exp(-v)))  # noqa: E731   log sigmoid
    # |P| = 2 (0.5, -0.5), |N| = 6: beta_P = 8/2 = 4, beta_N = 8/6
    pos = -ls(0.5) - ls(-0.5)
    neg = -ls(1.0) - ls(-2.0) - ls(-1.5) - ls(2.0) - ls(-1.0) - ls(-0.25)
    want = (4 * pos + 8 / 6 * neg) / 3
    assert float(wcel_loss(z, y)) == pytest.approx(want, rel=1e-12)
    assert float(bce_loss(z, y)) == pytest.approx((pos + neg) / 8, rel=1e-12)
    assert float(wcel_loss(z, torch.zeros_like(y))) == pytest.approx(
        (9 / 9) * sum(-ls(-v) for v in z.ravel().tolist()) / 3, rel=1e-12
    )  # no positive: only negatives
    zg = z.clone().requires_grad_(True)
    none = wcel_loss(zg, torch.full_like(y, float("nan")))  # a batch with every label excluded
    none.backward()
    assert none.item() == 0.0 and zg.grad.abs().sum().item() == 0.0


def test_full_finetune_learns_and_predict_reproduces_its_validation_auc(task, torch_mod):
    from sklearn.metrics import roc_auc_score

    from cxreval.predict import finetune, predict

    calls = RecordedProgress()
    res = finetune(
        task / "imgs",
        task / "labels.csv",
        out=task / "ft",
        model=f"torch:{task / 'base.yaml'}",
        mode="full",
        epochs=12,
        patience=12,
        lr=3e-3,
        batch_size=8,
        rng=0,
        val_fraction=0.3,
        progress=calls,
    )
    log = pd.read_csv(task / "ft" / "training.csv")
    assert list(log.columns) == [
        "epoch",
        "finding",
        "train_loss",
        "val_loss",
        "val_auc",
        "n_val_pos",
        "n_val_neg",
        "best",
    ]
    per_epoch = log[log.finding == "macro"].set_index("epoch")
    assert calls.tasks == [("cxreval finetune (epochs)", 12)] and calls.events == [(0, 1)] * len(per_epoch)
    assert per_epoch.val_loss.iloc[-1] < 0.8 * per_epoch.val_loss.iloc[0]  # validation loss goes down
    assert res.best_val_auc > 0.9 and per_epoch.val_auc.max() == res.best_val_auc
    split = pd.read_csv(task / "ft" / "split.csv")
    assert split.groupby("patient_id").split.nunique().max() == 1  # patient-level
    val = split[split.split == "val"].study_id.tolist()
    (task / "val.txt").write_text("\n".join(str(task / "imgs" / v) for v in val) + "\n")
    lst = pd.DataFrame({"path": [str(task / "imgs" / v) for v in val], "study_id": val})
    lst.to_csv(task / "val.csv", index=False)
    pr = predict(task / "val.csv", [f"torch:{task / 'ft' / 'model.yaml'}"], out=task / "pred").predictions
    vp = pd.read_csv(task / "ft" / "val_predictions.csv")
    m = pr.merge(vp, on=["study_id", "finding"], suffixes=("", "_logged"))
    assert len(m) == 2 * len(val)
    np.testing.assert_allclose(m.score, m.score_logged, atol=1e-5)
    lab = pd.read_csv(task / "labels.csv")
    best = log[(log.epoch == res.best_epoch) & (log.finding != "macro")].set_index("finding")
    for f in ("Mass", "Effusion"):
        j = pr[pr.finding == f].merge(lab[lab.finding == f], on=["study_id", "finding"])
        assert roc_auc_score(j.state == "positive", j.score) == pytest.approx(best.val_auc[f], abs=1e-12)
    js = json.loads((task / "ft" / "finetune.json").read_text())
    assert js["n_train"] + js["n_val"] == 60 and js["trained_modules"] == [""] and not js["interrupted"]


def test_linear_probe_equals_logistic_regression(task, torch_mod):
    import torch
    from sklearn.linear_model import LogisticRegression

    from cxreval.io.images import read_image
    from cxreval.predict import finetune, load_model
    from cxreval.predict._preprocess import preprocess_image

    wd = 1e-2
    finetune(
        task / "imgs",
        task / "labels.csv",
        out=task / "lp",
        model=f"torch:{task / 'base.yaml'}",
        mode="linear-probe",
        weight_decay=wd,
        rng=3,
    )
    split = pd.read_csv(task / "lp" / "split.csv")
    tr = split[split.split == "train"].study_id.tolist()
    base = load_model(f"torch:{task / 'base.yaml'}")
    x = torch.from_numpy(
        np.stack([preprocess_image(read_image(task / "imgs" / s), base.preprocessing) for s in tr])
    )
    with torch.no_grad():
        feats = base.module.features(x / 1024.0).mean(dim=(2, 3)).double().numpy()
    lab = pd.read_csv(task / "labels.csv").pivot(index="study_id", columns="finding", values="state")
    sd = torch.load(task / "lp" / "model.pt", weights_only=True)
    findings = yaml.safe_load((task / "lp" / "model.yaml").read_text())["findings"]
    assert findings == ["Mass", "Effusion"]
    n, k = len(tr), len(findings)
    for j, f in enumerate(findings):
        y = (lab.loc[tr, f] == "positive").to_numpy()
        lr = LogisticRegression(C=1 / (n * k * wd), tol=1e-10, max_iter=10000).fit(feats, y)
        np.testing.assert_allclose(
            sd["classifier.weight"][j].double().numpy(), lr.coef_[0], atol=2e-4, rtol=1e-3
        )
        assert float(sd["classifier.bias"][j]) == pytest.approx(lr.intercept_[0], abs=2e-4)
    # the backbone is unchanged
    assert torch.equal(sd["features.0.weight"], base.module.state_dict()["features.0.weight"])
    log = pd.read_csv(task / "lp" / "training.csv")
    assert log.epoch.unique().tolist() == [1]


def test_last_layer_interrupt_and_cli(task, torch_mod, capsys):
    import torch

    from cxreval.predict import finetune

    class StopAtEpoch2(RecordedProgress):  # Ctrl-C after the second epoch
        def advance(self, task, n=1):
            super().advance(task, n)
            if sum(1 for t, _ in self.events if t == task) == 2 and "epochs" in self.tasks[task][0]:
                raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        finetune(
            task / "imgs",
            task / "labels.csv",
            out=task / "a",
            model=f"torch:{task / 'base.yaml'}",
            mode="last-layer",
            epochs=5,
            progress=StopAtEpoch2(),
            rng=0,
        )
    assert not (task / "a").exists()
    with pytest.raises(KeyboardInterrupt):
        finetune(
            task / "imgs",
            task / "labels.csv",
            out=task / "b",
            model=f"torch:{task / 'base.yaml'}",
            mode="last-layer",
            loss="wcel",
            epochs=5,
            progress=StopAtEpoch2(),
            keep_interrupted=True,
            rng=0,
        )
    js = json.loads((task / "b" / "finetune.json").read_text())
    assert (
        js["interrupted"] and js["trained_modules"] == ["features.3", "classifier"] and js["loss"] == "wcel"
    )
    sd = torch.load(task / "b" / "model.pt", weights_only=True)
    base = torch.load(task / "base.pt", weights_only=True)
    assert torch.equal(sd["features.0.weight"], base["features.0.weight"])  # frozen
    assert not torch.equal(sd["features.3.weight"], base["features.3.weight"])  # trained
    args = [
        "finetune",
        "--images",
        str(task / "imgs"),
        "--labels",
        str(task / "labels.csv"),
        "--model",
        f"torch:{task / 'base.yaml'}",
        "--epochs",
        "2",
        "--no-progress",
    ]
    assert main([*args, "--out", str(task / "c")]) == 0
    assert "model in" in capsys.readouterr().out
    assert main([*args, "--source", "readers", "--out", str(task / "d")]) == 2
    assert "--source readers is not in the labels (--labels)" in capsys.readouterr().err
    assert main([*args, "--mode", "head", "--out", str(task / "d")]) == 2
    assert "--mode must be one of ['linear-probe', 'last-layer', 'full']" in capsys.readouterr().err
    assert main([*args[:5], "--out", str(task / "d")]) == 2  # neither --model nor --recipe
    assert "exactly one of --model" in capsys.readouterr().err
    assert not (task / "d").exists()
    pd.read_csv(task / "labels.csv").assign(state="positive").to_csv(task / "allpos.csv", index=False)
    with pytest.raises(SchemaError, match="no finding with both a positive and a negative"):
        finetune(task / "imgs", task / "allpos.csv", out=task / "e", model=f"torch:{task / 'base.yaml'}")
    with pytest.raises(InvalidParameterError, match="not labelled by source"):
        finetune(
            task / "imgs",
            task / "labels.csv",
            out=task / "e",
            model=f"torch:{task / 'base.yaml'}",
            findings=["Nodule"],
        )


def test_chestxray8_recipe_tiny(task, torch_mod, capsys):
    pytest.importorskip("torchvision", reason="the ChestX-ray8 recipe needs torchvision")
    import torch
    import torchvision

    torch.manual_seed(5)
    torch.save(torchvision.models.resnet18(weights=None).state_dict(), task / "r18.pth")
    out = task / "cx8"
    assert (
        main(
            [
                "finetune",
                "--images",
                str(task / "imgs"),
                "--labels",
                str(task / "labels.csv"),
                "--recipe",
                "chestxray8",
                "--arch",
                "resnet18",
                "--weights",
                str(task / "r18.pth"),
                "--input-size",
                "64",
                "--epochs",
                "1",
                "--no-progress",
                "--out",
                str(out),
            ]
        )
        == 0
    )
    cfg = yaml.safe_load((out / "model.yaml").read_text())
    assert cfg["input"] == {"size": 64, "channels": 3, "normalization": "imagenet", "crop": "center"}
    assert cfg["target_layer"] == "transition" and cfg["architecture_kwargs"]["pooling"] == "lse"
    js = json.loads((out / "finetune.json").read_text())
    assert js["loss"] == "wcel" and js["init_weights"] == str(task / "r18.pth")
    assert (
        main(
            [
                "predict",
                "--images",
                str(task / "imgs"),
                "--model",
                f"torch:{out / 'model.yaml'}",
                "--heatmaps",
                "--no-progress",
                "--out",
                str(task / "p"),
            ]
        )
        == 0
    )
    with np.load(task / "p" / "heatmaps" / "chestxray8-resnet18.npz") as z:
        assert z["im000.png/Mass"].shape == (2, 2)  # 64 / stride 32
    with pytest.raises(SchemaError, match="not torchvision resnet50 weights"):
        from cxreval.predict import finetune

        finetune(
            task / "imgs",
            task / "labels.csv",
            out=task / "x",
            recipe="chestxray8",
            arch="resnet50",
            weights=task / "r18.pth",
            input_size=64,
            rng=0,
        )


@pytest.mark.slow
def test_xrv_densenet_last_layer_reloads(task, xrv_weights, xrv):
    """xrv:densenet121-res224-all (self-made weights file): a new head + denseblock4 trained; predict reloads it."""
    import torch

    from cxreval.predict import finetune, load_model

    res = finetune(
        task / "imgs",
        task / "labels.csv",
        out=task / "x",
        model="xrv:densenet121-res224-all",
        weights_dir=xrv_weights,
        download=False,
        mode="last-layer",
        epochs=1,
        batch_size=16,
        rng=0,
    )
    assert res.settings["trained_modules"] == ["features.denseblock4", "classifier"]
    cfg = yaml.safe_load((task / "x" / "model.yaml").read_text())
    assert cfg["architecture_kwargs"]["architecture"] == "torchxrayvision.models:DenseNet"
    assert cfg["input"]["size"] == 224 and cfg["findings"] == ["Mass", "Effusion"]
    m = load_model(f"torch:{task / 'x' / 'model.yaml'}")
    base = load_model("xrv:densenet121-res224-all", weights_dir=xrv_weights, download=False)
    sd, bsd = m.module.state_dict(), base.module.state_dict()
    assert torch.equal(
        sd["features.denseblock1.denselayer1.conv1.weight"],
        bsd["features.denseblock1.denselayer1.conv1.weight"],
    )
    assert not torch.equal(
        sd["features.denseblock4.denselayer1.conv1.weight"],
        bsd["features.denseblock4.denselayer1.conv1.weight"],
    )
    vp = pd.read_csv(task / "x" / "val_predictions.csv")
    assert vp.model.unique().tolist() == ["finetuned-densenet121-res224-all"] and vp.score.between(0, 1).all()


def test_a_labelled_study_without_an_image_is_named_not_dropped_in_silence(tmp_path):
    """The labelled studies that have no image are left out with a warning naming how many and one of them, and
    their ids are returned (finetune.json lists them); a study with an image is kept as it is."""
    from cxreval.exceptions import CxrevalWarning
    from cxreval.predict._finetune import _with_images

    targets = pd.DataFrame(
        {
            "study_id": ["a.png", "b.png", "c.png", "d.png"],
            "patient_id": ["p1", "p1", "p2", "p3"],
            "Mass": [1.0, 0.0, 1.0, 0.0],
        }
    )
    with pytest.warns(
        CxrevalWarning,
        match=r"2 of the 4 labelled studies .* have no image in images='imgs', e\.g\. "
        r"'b\.png'; they are left out of training and validation",
    ):
        kept, missing = _with_images(targets, {"a.png", "c.png"}, labels="labels.csv", images="imgs")
    assert kept["study_id"].tolist() == ["a.png", "c.png"] and missing == ["b.png", "d.png"]
    assert kept["Mass"].tolist() == [1.0, 1.0]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # every study imaged: no warning
        kept, missing = _with_images(targets, {"a.png", "b.png", "c.png", "d.png"}, labels="l", images="i")
    assert len(kept) == 4 and missing == []


@pytest.mark.parametrize(
    ("option", "value"),
    [("--lr", "-1"), ("--lr", "0"), ("--lr", "inf"), ("--weight-decay", "-0.1"), ("--weight-decay", "nan")],
)
def test_learning_rate_and_weight_decay_are_checked_before_torch(tmp_path, capsys, option, value):
    """Named as the command's options, with or without torch installed (the check comes first)."""
    (tmp_path / "imgs").mkdir()
    args = [
        "finetune",
        "--images",
        str(tmp_path / "imgs"),
        "--labels",
        str(tmp_path / "labels.csv"),
        "--model",
        f"torch:{tmp_path / 'm.yaml'}",
        option,
        value,
        "-o",
        str(tmp_path / "out"),
    ]
    assert main(args) == 2
    err = capsys.readouterr().err.strip()
    assert (
        err.startswith(f"cxreval: error: {option} must be a finite number") and len(err.splitlines()) == 1
    ), err
    assert not (tmp_path / "out").exists()


def test_finetune_json_and_summary_list_the_studies_without_an_image(task, torch_mod, capsys):
    labels = pd.read_csv(task / "labels.csv")
    extra = labels[labels.study_id == "im000.png"].assign(study_id="absent.png", patient_id="p99")
    pd.concat([labels, extra]).to_csv(task / "more.csv", index=False)
    args = [
        "finetune",
        "--images",
        str(task / "imgs"),
        "--labels",
        str(task / "more.csv"),
        "--model",
        f"torch:{task / 'base.yaml'}",
        "--mode",
        "linear-probe",
        "--no-progress",
        "--out",
        str(task / "o"),
    ]
    assert main(args) == 0
    err = capsys.readouterr().err
    assert "cxreval: warning: 1 of the 61 labelled studies" in err and "'absent.png'" in err, err
    js = json.loads((task / "o" / "finetune.json").read_text())
    assert js["n_labelled_without_image"] == 1 and js["labelled_without_image"] == ["absent.png"]
    assert (
        "Left out: 1 labelled studies without an image (e.g. `absent.png`"
        in (task / "o" / "summary.md").read_text()
    )
