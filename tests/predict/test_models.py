"""Model specs: TorchXRayVision named weights (self-made files, no download), YAML-described torch models."""

from __future__ import annotations

import os

import numpy as np
import pytest
import yaml
from PIL import Image

from cxreval.exceptions import DataUnavailableError, InvalidParameterError, SchemaError
from cxreval.predict import load_model, predict
from cxreval.predict._models import XRV_WEIGHTS, parse_model_spec


def test_parse_spec():
    assert str(parse_model_spec("xrv:densenet121-res224-all")) == "xrv:densenet121-res224-all"
    assert parse_model_spec("torch:a/b.pt").kind == "torch"
    with pytest.raises(InvalidParameterError, match="unknown TorchXRayVision weights 'densenet-all'"):
        parse_model_spec("xrv:densenet-all")
    with pytest.raises(InvalidParameterError, match="expected 'xrv:<weights name>'"):
        parse_model_spec("densenet121-res224-all")


def test_weight_names_are_torchxrayvisions(xrv):
    named = [w for w in XRV_WEIGHTS if w != "jfhealthcare"]
    assert set(named) == {k for k in xrv.models.model_urls if k.startswith(("densenet", "resnet"))}


def test_missing_weights_say_where_to_put_the_file(tmp_path, xrv, monkeypatch):
    url = xrv.models.model_urls["densenet121-res224-nih"]["weights_url"]
    want = tmp_path / os.path.basename(url)
    with pytest.raises(DataUnavailableError) as ei:
        load_model("xrv:densenet121-res224-nih", weights_dir=tmp_path, download=False)
    assert url in str(ei.value) and str(want) in str(ei.value) and "weights_dir=" in str(ei.value)

    def no_network(u, filename):
        raise ConnectionError("network unreachable")

    monkeypatch.setattr(xrv.utils, "download", no_network)  # the real download path, failing as offline
    with pytest.raises(
        DataUnavailableError, match=r"the download failed \(ConnectionError: network unreachable\)"
    ) as ei:
        load_model("xrv:densenet121-res224-nih", weights_dir=tmp_path)
    assert str(want) in str(ei.value)
    assert ei.value.__cause__ is None and ei.value.__suppress_context__  # one error, no chained traceback
    with pytest.raises(
        DataUnavailableError, match=r"\.torchxrayvision/models_data/baseline_models_jfhealthcare"
    ):
        load_model("xrv:jfhealthcare", download=False)
    # a file that is there but broken is named as such
    want.write_bytes(b"not a checkpoint")
    with pytest.raises(DataUnavailableError, match="could not be loaded"):
        load_model("xrv:densenet121-res224-nih", weights_dir=tmp_path, download=False)


def test_predictions_equal_direct_xrv_forward(tmp_path, xrv_weights, xrv):
    """Named weights (a self-made file) -> cxreval predict vs the plain TorchXRayVision recipe, to 1e-5."""
    import torch
    import torchvision

    m = load_model("xrv:densenet121-res224-all", weights_dir=xrv_weights, download=False)
    assert m.preprocessing.size == 224 and m.preprocessing.normalization == "xrv"
    assert m.outputs == tuple(xrv.models.model_urls["all"]["labels"])
    t = m.mapping_table()
    row = t[t.output_name == "Pleural_Thickening"].iloc[0]
    assert row.finding == "Pleural Thickening" and "alias" in row.note and bool(row.written)
    assert m.target_layer == "features" and m.classifier == "classifier"
    g = np.random.default_rng(5)
    imgs = tmp_path / "imgs"
    imgs.mkdir()
    raw = {
        "a.png": g.integers(0, 256, (260, 240), dtype=np.uint8),
        "b.png": g.integers(0, 65536, (230, 250), dtype=np.uint16),
    }
    for k, v in raw.items():
        Image.fromarray(v).save(imgs / k)
    res = predict(
        imgs,
        ["xrv:densenet121-res224-all"],
        out=tmp_path / "out",
        weights_dir=xrv_weights,
        download=False,
        batch_size=2,
    )
    model = xrv.models.DenseNet(weights="densenet121-res224-all", cache_dir=str(xrv_weights)).eval()
    tf = torchvision.transforms.Compose([xrv.datasets.XRayCenterCrop(), xrv.datasets.XRayResizer(224)])
    x = np.stack([tf(xrv.datasets.normalize(v, np.iinfo(v.dtype).max)[None]) for v in raw.values()])
    with torch.no_grad():
        ref = model(torch.from_numpy(x)).numpy()
    names = [{"Pleural_Thickening": "Pleural Thickening"}.get(f, f) for f in model.targets]
    for k, r in zip(raw, ref):
        got = res.predictions[res.predictions.study_id == k].set_index("finding").score
        np.testing.assert_allclose(got.loc[names].to_numpy(), r, rtol=0, atol=1e-5)
        assert 0.02 < np.std(r) and (0 < r).all() and (r < 1).all()  # not saturated: a real comparison
    assert len(res.predictions) == 2 * 18


@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # torch.jit is deprecated in torch >= 2.12
def test_yaml_torch_models(tmp_path, xrv):
    """weights=None xrv DenseNet as state_dict + YAML; TorchScript; YAML errors before any image is read."""
    import torch

    torch.manual_seed(3)
    net = xrv.models.DenseNet(weights=None, num_classes=4, drop_rate=0).eval()
    torch.save({"state_dict": {"module." + k: v for k, v in net.state_dict().items()}}, tmp_path / "d.pt")
    cfg = {
        "architecture": "torchxrayvision.models:DenseNet",
        "architecture_kwargs": {"weights": None, "num_classes": 4},
        "input": {"size": 32, "channels": 1, "normalization": "xrv"},
        "findings": ["Infiltrate", "Effusion", "", "nodule"],
    }
    (tmp_path / "d.yaml").write_text(yaml.safe_dump(cfg))
    m = load_model(f"torch:{tmp_path / 'd.pt'}")
    assert (
        m.name == "d"
        and m.findings == ("Infiltration", "Effusion", None, "Nodule")
        and m.used.tolist() == [0, 1, 3]
    )
    x = torch.rand(2, 1, 32, 32) * 2048 - 1024
    with torch.no_grad():
        np.testing.assert_allclose(m.module(x).numpy(), net(x).numpy(), atol=1e-6)
    scripted = torch.jit.script(
        torch.nn.Sequential(torch.nn.Conv2d(1, 2, 3), torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten())
    )
    scripted.save(str(tmp_path / "s.ts"))
    (tmp_path / "s.yaml").write_text(yaml.safe_dump({"input": {"size": 8}, "findings": ["Mass", "Nodule"]}))
    assert load_model(f"torch:{tmp_path / 's.ts'}").scripted
    for bad, msg in [
        ({"findings": ["Mass", "Nodule", "Hernia"]}, r"returns shape \(1, 2\) .* expected \(1, 3\)"),
        ({"findings": ["Mass", "Nodul"]}, "Unknown finding name 'Nodul'.*Did you mean 'Nodule'"),
        ({"findings": ["Effusion", "Pleural Effusion"]}, "both the finding 'Effusion'"),
        ({"findings": ["Mass", "Nodule"], "colour": 1}, r"unknown key\(s\) \['colour'\]"),
    ]:
        (tmp_path / "s.yaml").write_text(yaml.safe_dump({"input": {"size": 8}, **bad}))
        with pytest.raises(SchemaError, match=msg):
            load_model(f"torch:{tmp_path / 's.ts'}")
    (tmp_path / "s.yaml").unlink()
    with pytest.raises(SchemaError, match="the YAML describing it .* does not exist"):
        load_model(f"torch:{tmp_path / 's.ts'}")
    cfg["input"]["size"] = 0
    (tmp_path / "d.yaml").write_text(yaml.safe_dump(cfg))
    with pytest.raises(InvalidParameterError, match="'size' parameter"):
        load_model(f"torch:{tmp_path / 'd.pt'}")


@pytest.mark.slow
def test_resnet_named_weights(tmp_path, xrv):
    """resnet50-res512-all from a self-made state_dict: 512 input, outputs without operating point left out."""
    import torch
    import torchvision

    torch.manual_seed(0)
    net = torchvision.models.resnet50(num_classes=18, weights=None)
    net.conv1 = torch.nn.Conv2d(1, 64, kernel_size=7, stride=2, padding=3, bias=False)
    url = xrv.models.model_urls["resnet50-res512-all"]["weights_url"]
    torch.save(net.state_dict(), tmp_path / os.path.basename(url))
    m = load_model("xrv:resnet50-res512-all", weights_dir=tmp_path, download=False)
    assert m.preprocessing.size == 512 and (m.target_layer, m.classifier) == ("model.layer4", "model.fc")
    left_out = [o for o, f in zip(m.outputs, m.findings) if f is None]
    assert left_out == ["Lung Lesion", "Enlarged Cardiomediastinum"]  # NaN operating points in xrv 1.5.7
    assert "no operating point" in m.mapping_table().set_index("output_name").loc["Lung Lesion", "note"]
    from cxreval.predict._runner import check_heatmap_models

    assert check_heatmap_models([m], target_layer=None) == ["model.layer4"]
