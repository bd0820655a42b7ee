"""``cxreval finetune --model clip:...`` (BenchX's protocols in XQA): a linear probe on the frozen image embedding
and full fine-tuning of the vision tower, on a learnable synthetic task (a bright square means Mass), with tiny
random-weight open_clip and Hugging Face CLIP models; ``predict`` on the written ``model.yaml`` gives back the
logged validation scores and AUCs (scikit-learn's ``roc_auc_score`` of ``predict``'s scores).
"""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest
import yaml

from cxreval.cli.main import main
from cxreval.exceptions import InvalidParameterError

from .test_finetune import square_images


@pytest.fixture()
def squares(tmp_path):
    square_images(tmp_path / "imgs", 48, rng=3).to_csv(tmp_path / "labels.csv", index=False)
    return tmp_path


def _check_predict_reproduces(tmp, out, res):
    """predict on OUT/model.yaml over the validation images: the logged scores and per-finding AUCs."""
    from sklearn.metrics import roc_auc_score

    from cxreval.predict import predict

    split = pd.read_csv(out / "split.csv")
    val = split[split.split == "val"].study_id.tolist()
    pd.DataFrame({"path": [str(tmp / "imgs" / v) for v in val], "study_id": val}).to_csv(
        out / "val.csv", index=False
    )
    pr = predict(
        out / "val.csv", [f"torch:{out / 'model.yaml'}"], out=out.with_name(out.name + "-pred")
    ).predictions
    vp = pd.read_csv(out / "val_predictions.csv")
    m = pr.merge(vp, on=["study_id", "finding"], suffixes=("", "_logged"))
    assert len(m) == 2 * len(val)
    np.testing.assert_allclose(m.score, m.score_logged, atol=1e-6)
    lab = pd.read_csv(tmp / "labels.csv")
    log = pd.read_csv(out / "training.csv")
    best = log[(log.epoch == res.best_epoch) & (log.finding != "macro")].set_index("finding")
    for f in ("Mass", "Effusion"):
        j = pr[pr.finding == f].merge(lab[lab.finding == f], on=["study_id", "finding"])
        assert roc_auc_score(j.state == "positive", j.score) == pytest.approx(best.val_auc[f], abs=1e-6)
    return log


def test_open_clip_linear_probe_and_full_finetune(squares, tiny_open_clip, capsys, one_torch_thread):
    import torch

    from cxreval.predict import finetune

    cfg, ckpt = tiny_open_clip
    spec = f"clip:open_clip:{cfg}:{ckpt}"
    lp = finetune(
        squares / "imgs",
        squares / "labels.csv",
        out=squares / "lp",
        model=spec,
        mode="linear-probe",
        weight_decay=1e-3,
        val_fraction=0.3,
        rng=1,
    )
    y = yaml.safe_load((squares / "lp" / "model.yaml").read_text())
    assert y["architecture"] == "cxreval.predict.clip_head:clip_classifier" and y["input"] == "architecture"
    assert y["architecture_kwargs"] == {"spec": f"clip:open_clip:{cfg}:{ckpt}", "n_out": 2}
    log = _check_predict_reproduces(squares, squares / "lp", lp)
    # the zero classifier's validation BCE is ln 2 exactly; the probe lowers it
    assert log.val_loss.iloc[0] < 0.85 * math.log(2) and lp.best_val_auc > 0.75
    sd = torch.load(squares / "lp" / "model.pt", weights_only=True)
    base = torch.load(ckpt, weights_only=True)
    assert torch.equal(sd["image_encoder.conv1.weight"], base["visual.conv1.weight"])  # the encoder is frozen
    with np.load(squares / "lp" / "features.npz") as z:
        assert z["features"].shape == (48, 16)  # the image embedding

    full = finetune(
        squares / "imgs",
        squares / "labels.csv",
        out=squares / "full",
        model=spec,
        mode="full",
        epochs=6,
        patience=6,
        lr=2e-3,
        batch_size=8,
        weight_decay=0.0,
        val_fraction=0.3,
        rng=1,
    )
    log = _check_predict_reproduces(squares, squares / "full", full)
    per_epoch = log[log.finding == "macro"].set_index("epoch")
    assert per_epoch.val_loss.iloc[-1] < 0.8 * per_epoch.val_loss.iloc[0]  # validation loss goes down
    sd = torch.load(squares / "full" / "model.pt", weights_only=True)
    assert not torch.equal(
        sd["image_encoder.conv1.weight"], base["visual.conv1.weight"]
    )  # the vision tower trained
    js = json.loads((squares / "full" / "finetune.json").read_text())
    assert js["trained_modules"] == [""] and js["base"] == spec and js["loss"] == "bce"

    with pytest.raises(InvalidParameterError, match="mode='linear-probe' .* or mode='full'"):
        finetune(squares / "imgs", squares / "labels.csv", out=squares / "x", model=spec, mode="last-layer")
    # the CLI, with W-CEL
    assert (
        main(
            [
                "finetune",
                "--images",
                str(squares / "imgs"),
                "--labels",
                str(squares / "labels.csv"),
                "--model",
                spec,
                "--mode",
                "linear-probe",
                "--loss",
                "wcel",
                "--no-progress",
                "--out",
                str(squares / "cli"),
            ]
        )
        == 0
    )
    assert "model in" in capsys.readouterr().out
    assert json.loads((squares / "cli" / "finetune.json").read_text())["loss"] == "wcel"


def test_hf_clip_linear_probe_and_full_finetune(squares, tiny_hf_clip, one_torch_thread):
    from cxreval.predict import finetune

    spec = f"clip:hf:{tiny_hf_clip}"
    lp = finetune(
        squares / "imgs",
        squares / "labels.csv",
        out=squares / "lp",
        model=spec,
        mode="linear-probe",
        weight_decay=1e-3,
        val_fraction=0.3,
        rng=2,
    )
    log = _check_predict_reproduces(squares, squares / "lp", lp)
    assert log.val_loss.iloc[0] < 0.85 * math.log(2)
    full = finetune(
        squares / "imgs",
        squares / "labels.csv",
        out=squares / "full",
        model=spec,
        mode="full",
        epochs=4,
        patience=4,
        lr=2e-3,
        batch_size=8,
        weight_decay=0.0,
        val_fraction=0.3,
        rng=2,
    )
    log = _check_predict_reproduces(squares, squares / "full", full)
    per_epoch = log[log.finding == "macro"].set_index("epoch")
    assert per_epoch.val_loss.iloc[-1] < per_epoch.val_loss.iloc[0]
