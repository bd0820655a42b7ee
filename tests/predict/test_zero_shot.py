"""Zero-shot scoring of CLIP-style models (``clip:open_clip:...``, ``clip:hf:...``) with tiny random-weight models.

The references are the libraries' own APIs, used directly: open_clip's ``create_model_and_transforms`` (its
validation transform, ``encode_image``, ``encode_text``) and transformers' ``CLIPModel.forward`` (its
``image_embeds``, ``text_embeds``) with the folder's own ``CLIPImageProcessor`` and tokenizer.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
import yaml
from PIL import Image

from cxreval.cli.main import main
from cxreval.exceptions import DataUnavailableError, InvalidParameterError, SchemaError
from cxreval.io.images import read_image
from cxreval.predict import load_model, load_prompts, predict
from cxreval.predict._models import parse_model_spec
from cxreval.predict._prompts import PROMPT_SETS

PROMPTS = {
    "findings": {
        "Atelectasis": {
            "positive": ["atelectasis", "collapsed lung"],
            "negative": ["no atelectasis", "normal lung volume"],
        },
        "Pleural Effusion": {
            "positive": ["pleural effusion", "fluid"],
            "negative": ["no pleural effusion", "clear angles"],
        },
    }
}


@pytest.fixture()
def grey_images(tmp_path):
    g = np.random.default_rng(3)
    d = tmp_path / "imgs"
    d.mkdir()
    Image.fromarray(g.integers(0, 256, (50, 44), dtype=np.uint8)).save(d / "a.png")
    Image.fromarray(g.integers(0, 256, (37, 61), dtype=np.uint8)).save(d / "b.png")
    Image.fromarray(g.integers(0, 65536, (48, 48), dtype=np.uint16)).save(d / "c.png")  # 16-bit
    (tmp_path / "prompts.yaml").write_text(yaml.safe_dump(PROMPTS))
    return d, tmp_path / "prompts.yaml"


def _rgb8(path):
    """The 8-bit RGB image cxreval hands a CLIP processor (for 8-bit grey PNGs: PIL's own convert)."""
    a = np.asarray(Image.open(path))
    if a.dtype == np.uint16:
        a = np.rint(a.astype(np.float64) / 65535 * 255).astype(np.uint8)
    return Image.fromarray(a).convert("RGB")


def _softmax_score(img_emb, pos_embs, neg_embs, t):
    def ens(e):
        e = e / np.linalg.norm(e, axis=1, keepdims=True)
        m = e.mean(0)
        return m / np.linalg.norm(m)

    f = img_emb / np.linalg.norm(img_emb)
    lp, ln = t * f @ ens(pos_embs), t * f @ ens(neg_embs)
    return np.exp(lp) / (np.exp(lp) + np.exp(ln))


def test_open_clip_scores_equal_direct_forward(tmp_path, grey_images, tiny_open_clip, open_clip_mod):
    import torch

    d, pfile = grey_images
    cfg, ckpt = tiny_open_clip
    spec = f"clip:open_clip:{cfg}:{ckpt}"
    res = predict(d, [spec], out=tmp_path / "out", prompts=pfile, batch_size=2)
    p = res.predictions
    assert sorted(p.finding.unique()) == ["Atelectasis", "Effusion"] and len(p) == 6
    model, _, pre = open_clip_mod.create_model_and_transforms("tinyclip", pretrained=str(ckpt))
    model.eval()
    tok = open_clip_mod.get_tokenizer("tinyclip")
    t = model.logit_scale.exp().item()
    assert t == pytest.approx(10.0)
    checked = 0
    for name in ("a.png", "b.png", "c.png"):
        x = pre(_rgb8(d / name))[None]
        with torch.no_grad():
            f = model.encode_image(x)[0].numpy()
            for finding, canon in (("Atelectasis", "Atelectasis"), ("Pleural Effusion", "Effusion")):
                e = PROMPTS["findings"][finding]
                pe = model.encode_text(tok(e["positive"])).numpy()
                ne = model.encode_text(tok(e["negative"])).numpy()
                want = _softmax_score(f.astype(np.float64), pe, ne, t)
                got = p[(p.study_id == name) & (p.finding == canon)].score.item()
                assert got == pytest.approx(want, abs=1e-5)
                checked += 1
    assert checked == 6 and p.score.std() > 1e-4  # the scores differ: a real comparison
    js = json.loads((tmp_path / "out" / "models.json").read_text())["models"][0]
    zs = js["zero_shot"]
    assert zs["prompts"]["Atelectasis"]["negative"] == ["no atelectasis", "normal lung volume"]
    assert zs["temperature"] == pytest.approx(10.0) and zs["temperature_from"] == "model logit_scale.exp()"
    assert (
        js["preprocessing"]["processor"] == "open_clip"
        and "interpolation=bicubic" in js["preprocessing_steps"][1]
    )


def test_open_clip_preprocessing_is_the_models_own(grey_images, tiny_open_clip, open_clip_mod):
    d, pfile = grey_images
    cfg, ckpt = tiny_open_clip
    m = load_model(f"clip:open_clip:{cfg}:{ckpt}", prompts=pfile)
    _, _, pre = open_clip_mod.create_model_and_transforms("tinyclip", pretrained=str(ckpt))
    for name in ("a.png", "b.png"):
        ref = pre(Image.open(d / name).convert("RGB")).numpy()
        np.testing.assert_array_equal(m.preprocessing.apply(read_image(d / name)), ref)
    assert m.preprocessing.to_dict()["size"] == 32


def test_hf_clip_scores_and_preprocessing(tmp_path, grey_images, tiny_hf_clip, transformers_mod):
    import torch
    from transformers import AutoTokenizer, CLIPImageProcessor, CLIPModel

    d, pfile = grey_images
    spec = f"clip:hf:{tiny_hf_clip}"
    m = load_model(spec, prompts=pfile)
    proc = CLIPImageProcessor.from_pretrained(tiny_hf_clip)
    for name in ("a.png", "b.png"):
        ref = proc(images=Image.open(d / name).convert("RGB"), return_tensors="np")["pixel_values"][0]
        np.testing.assert_array_equal(m.preprocessing.apply(read_image(d / name)), ref)
    res = predict(d, [spec], out=tmp_path / "out", prompts=pfile)
    p = res.predictions
    model = CLIPModel.from_pretrained(tiny_hf_clip).eval()
    tok = AutoTokenizer.from_pretrained(tiny_hf_clip)
    t = model.logit_scale.exp().item()
    assert t == pytest.approx(20.0)
    for name in ("a.png", "c.png"):
        pix = torch.from_numpy(proc(images=_rgb8(d / name), return_tensors="np")["pixel_values"])
        for finding, canon in (("Atelectasis", "Atelectasis"), ("Pleural Effusion", "Effusion")):
            e = PROMPTS["findings"][finding]
            embs = []
            for texts in (e["positive"], e["negative"]):
                enc = tok(texts, padding=True, return_tensors="pt")
                with torch.no_grad():
                    out = model(
                        input_ids=enc["input_ids"], attention_mask=enc["attention_mask"], pixel_values=pix
                    )
                embs.append(out.text_embeds.numpy())
            want = _softmax_score(out.image_embeds[0].numpy().astype(np.float64), embs[0], embs[1], t)
            got = p[(p.study_id == name) & (p.finding == canon)].score.item()
            assert got == pytest.approx(want, abs=1e-5)
    assert p.score.std() > 1e-4


def test_prompt_files_and_temperature(tmp_path, grey_images, tiny_open_clip, capsys):
    d, pfile = grey_images
    cfg, ckpt = tiny_open_clip
    assert set(PROMPT_SETS) == {"chestxray14", "chexpert", "xqa"}
    for name in ("chestxray14", "chexpert"):  # CheXzero-style: a negative for each
        ps = load_prompts(name)
        assert len(ps.findings) in (13, 14) and all(n[0].startswith("no ") for n in ps.negative)
    assert load_prompts(None).findings[2] == "Effusion"  # chestxray14 by default
    hot = tmp_path / "hot.yaml"
    hot.write_text(yaml.safe_dump({**PROMPTS, "temperature": 1.0}))
    cold = predict(d, [f"clip:open_clip:{cfg}:{ckpt}"], out=tmp_path / "t1", prompts=hot).predictions
    warm = predict(d, [f"clip:open_clip:{cfg}:{ckpt}"], out=tmp_path / "t10", prompts=pfile).predictions
    # the same cosines at temperature 1 and 10: logit(score) scales by 10
    lg = lambda s: np.log(s / (1 - s))  # noqa: E731
    np.testing.assert_allclose(
        lg(warm.score.to_numpy()), 10 * lg(cold.score.to_numpy()), rtol=1e-4, atol=1e-6
    )
    zs = json.loads((tmp_path / "t1" / "models.json").read_text())["models"][0]["zero_shot"]
    assert zs["temperature"] == 1.0 and zs["temperature_from"] == "prompt file"
    # the CLI, with a built-in prompt set
    assert (
        main(
            [
                "predict",
                "--images",
                str(d),
                "--model",
                f"clip:open_clip:{cfg}:{ckpt}",
                "--prompts",
                "chexpert",
                "--out",
                str(tmp_path / "cli"),
                "--no-progress",
            ]
        )
        == 0
    )
    assert "3 of 3 image(s) predicted by 1 model(s); 39 score(s)" in capsys.readouterr().out
    for bad, msg in [
        ({"findings": {"Atelectasis": {"negative": "x"}}}, "needs 'positive' prompts and optionally"),
        ({"findings": {"Atelectasis": {"positive": "x", "neg": "y"}}}, r"got \['neg', 'positive'\]"),
        ({"findings": {"Atelectasys": {"positive": "x", "negative": "y"}}}, "Did you mean 'Atelectasis'"),
        ({**PROMPTS, "temperature": 0}, "'temperature' must be a number > 0"),
    ]:
        hot.write_text(yaml.safe_dump(bad))
        with pytest.raises(SchemaError, match=msg):
            load_prompts(hot)
    with pytest.raises(SchemaError, match="not a built-in prompt set"):
        load_prompts("mimic")


def test_specs_and_offline_errors(tmp_path, grey_images, tiny_open_clip, transformers_mod):
    d, _ = grey_images
    cfg, ckpt = tiny_open_clip
    with pytest.raises(InvalidParameterError, match="unknown model kind 'keras'"):
        parse_model_spec("keras:foo")
    with pytest.raises(InvalidParameterError, match="expected clip:open_clip:ARCH:CHECKPOINT"):
        parse_model_spec("clip:open_clip:ViT-B-32")
    with pytest.raises(
        DataUnavailableError, match=f"the checkpoint {tmp_path / 'nope.pt'} is not there.*never downloads"
    ):
        load_model(f"clip:open_clip:ViT-B-32:{tmp_path / 'nope.pt'}")
    with pytest.raises(InvalidParameterError, match="'ViT-Q-99' is not an open_clip model name"):
        load_model(f"clip:open_clip:ViT-Q-99:{ckpt}")
    with pytest.raises(DataUnavailableError, match="open_clip_config.json is not there"):
        load_model(f"clip:open_clip:local-dir:{tmp_path}")
    with pytest.raises(
        DataUnavailableError, match=r"config.json is not there; put the Hugging Face model folder"
    ):
        load_model(f"clip:hf:{tmp_path / 'nothing'}")
    assert main(["predict", "--images", str(d), "--model", "keras:foo", "--out", str(tmp_path / "x")]) == 2
    assert not (tmp_path / "x").exists()
