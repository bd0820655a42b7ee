"""Hub names of ``clip:`` models (``clip:open_clip:hf-hub:ORG/NAME``, ``clip:hf:ORG/NAME``): offline and not placed,
exit 2 naming the folder to put the model in; placed there, they load from it (the same scores as the folder
given by path). The Hub is made unreachable with ``HF_HUB_OFFLINE``; nothing is downloaded."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest
import yaml
from PIL import Image

from cxreval.cli.main import main
from cxreval.predict import load_model, predict
from cxreval.predict.clip import hub_model_folder, parse_clip_spec

from .conftest import TINY_OPEN_CLIP

PROMPTS = {
    "findings": {
        "Atelectasis": {"positive": ["atelectasis", "collapsed lung"], "negative": ["no atelectasis"]},
        "Edema": {"positive": ["edema"], "negative": ["no edema"]},
    }
}


@pytest.fixture()
def offline(tmp_path, monkeypatch):
    """No Hub: HF_HUB_OFFLINE, an empty Hugging Face cache, cxreval's cache in tmp_path."""
    import huggingface_hub.constants as hc

    monkeypatch.setenv("CXREVAL_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    monkeypatch.setattr(hc, "HF_HUB_OFFLINE", True)
    d = tmp_path / "imgs"
    d.mkdir()
    g = np.random.default_rng(2)
    for i in range(3):
        Image.fromarray(g.integers(0, 256, (40, 40), dtype=np.uint8)).save(d / f"i{i}.png")
    (tmp_path / "p.yaml").write_text(yaml.safe_dump(PROMPTS))
    return d, tmp_path / "p.yaml"


def test_hub_specs_parse():
    cs = parse_clip_spec(
        "open_clip:hf-hub:microsoft/BiomedCLIP-PubMedBERT_256-vit_base_patch16_224", spec="x"
    )
    assert (cs.backend, cs.arch, cs.path) == (
        "open_clip",
        "hf-hub",
        "microsoft/BiomedCLIP-PubMedBERT_256-vit_base_patch16_224",
    )
    assert (
        str(parse_clip_spec("hf:openai/clip-vit-base-patch32", spec="x"))
        == "clip:hf:openai/clip-vit-base-patch32"
    )
    assert parse_clip_spec("hf:hf-hub:org/name", spec="x").arch == "hub"
    assert parse_clip_spec("hf:/abs/folder", spec="x").arch == ""


def test_hf_hub_id_offline_names_the_folder_then_loads_from_it(tmp_path, offline, tiny_hf_clip, capsys):
    d, pfile = offline
    folder = hub_model_folder("someorg/tiny-clip")
    assert folder == tmp_path / "cache" / "models" / "someorg" / "tiny-clip"
    args = ["predict", "--images", str(d), "--prompts", str(pfile), "--no-progress"]
    assert main([*args, "--model", "clip:hf:someorg/tiny-clip", "--out", str(tmp_path / "a")]) == 2
    err = capsys.readouterr().err
    assert (
        "put the folder's files (config.json, model.safetensors" in err
        and f"in {folder}, then run again" in err
    )
    assert "internal error" not in err and not (tmp_path / "a").exists()
    shutil.copytree(tiny_hf_clip, folder)  # placed where the message says
    assert main([*args, "--model", "clip:hf:someorg/tiny-clip", "--out", str(tmp_path / "a")]) == 0
    by_path = predict(d, [f"clip:hf:{tiny_hf_clip}"], out=tmp_path / "b", prompts=pfile).predictions
    by_id = predict(d, ["clip:hf:someorg/tiny-clip"], out=tmp_path / "c", prompts=pfile).predictions
    np.testing.assert_array_equal(by_id.score.to_numpy(), by_path.score.to_numpy())


def test_open_clip_hub_name_offline_names_the_folder_then_loads_from_it(
    tmp_path, offline, tiny_open_clip, capsys
):
    import torch

    d, pfile = offline
    spec = "clip:open_clip:hf-hub:someorg/tiny-open-clip"
    folder = hub_model_folder("someorg/tiny-open-clip")
    assert (
        main(
            [
                "predict",
                "--images",
                str(d),
                "--prompts",
                str(pfile),
                "--model",
                spec,
                "--no-progress",
                "--out",
                str(tmp_path / "a"),
            ]
        )
        == 2
    )
    err = capsys.readouterr().err
    assert (
        "open_clip_config.json and open_clip_pytorch_model.bin" in err
        and f"in {folder}, then run again" in err
    )
    assert "internal error" not in err
    folder.mkdir(parents=True)  # an open_clip Hub folder: config + weights
    (folder / "open_clip_config.json").write_text(
        json.dumps({"model_cfg": TINY_OPEN_CLIP, "preprocess_cfg": {}})
    )
    _, ckpt = tiny_open_clip
    torch.save(torch.load(ckpt, weights_only=True), folder / "open_clip_pytorch_model.bin")
    m = load_model(spec, prompts=pfile)
    assert m.weights_file == str(folder)
    cfg, _ = tiny_open_clip
    by_path = predict(d, [f"clip:open_clip:{cfg}:{ckpt}"], out=tmp_path / "b", prompts=pfile).predictions
    by_id = predict(d, [spec], out=tmp_path / "c", prompts=pfile).predictions
    np.testing.assert_allclose(by_id.score.to_numpy(), by_path.score.to_numpy(), atol=1e-6)
