"""The two zero-shot rules of ``clip:`` models: XQA's max-cosine and CheXzero's softmax (cxreval.predict.clip).

The max-cosine references are computed by hand from the libraries' own APIs: open_clip's
``create_model_and_transforms`` (``encode_image``, ``encode_text``) and transformers' ``CLIPModel.forward``
(``image_embeds``, ``text_embeds``), each prompt embedded on its own, ``max_t cos(image, prompt)``.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
import yaml
from PIL import Image

from cxreval.cli.main import main
from cxreval.exceptions import InvalidParameterError, SchemaError
from cxreval.findings import XQA
from cxreval.predict import load_model, load_prompts, predict

POSITIVE_ONLY = {
    "findings": {
        "Atelectasis": {"positive": ["atelectasis", "collapsed lung", "mild subsegmental atelectasis"]},
        "Pleural Effusion": {"positive": ["pleural effusion", "fluid"], "negative": ["no pleural effusion"]},
    }
}


@pytest.fixture()
def images(tmp_path):
    g = np.random.default_rng(5)
    d = tmp_path / "imgs"
    d.mkdir()
    for i in range(4):
        Image.fromarray(g.integers(0, 256, (48, 40 + 4 * i), dtype=np.uint8)).save(d / f"i{i}.png")
    (tmp_path / "pos.yaml").write_text(yaml.safe_dump(POSITIVE_ONLY))
    return d, tmp_path / "pos.yaml"


def _cos_max(img, texts):
    f = img / np.linalg.norm(img)
    t = texts / np.linalg.norm(texts, axis=1, keepdims=True)
    return float((t @ f).max())


CANON = {"Atelectasis": "Atelectasis", "Pleural Effusion": "Effusion"}


def test_max_cosine_equals_hand_computation_open_clip(tmp_path, images, tiny_open_clip, open_clip_mod):
    import torch

    d, pfile = images
    cfg, ckpt = tiny_open_clip
    res = predict(
        d,
        [f"clip:open_clip:{cfg}:{ckpt}"],
        out=tmp_path / "out",
        prompts=pfile,
        zero_shot_rule="max-cosine",
        batch_size=3,
    )
    p = res.predictions
    model, _, pre = open_clip_mod.create_model_and_transforms("tinyclip", pretrained=str(ckpt))
    model.eval()
    tok = open_clip_mod.get_tokenizer("tinyclip")
    n = 0
    for i in range(4):
        name = f"i{i}.png"
        with torch.no_grad():
            f = model.encode_image(pre(Image.open(d / name).convert("RGB"))[None])[0].double().numpy()
            for finding, e in POSITIVE_ONLY["findings"].items():
                te = model.encode_text(tok(e["positive"])).double().numpy()
                got = p[(p.study_id == name) & (p.finding == CANON[finding])].score.item()
                assert got == pytest.approx(_cos_max(f, te), abs=1e-6)
                n += 1
    assert n == 8 and p.score.std() > 1e-4 and p.score.between(-1, 1).all()
    zs = json.loads((tmp_path / "out" / "models.json").read_text())["models"][0]["zero_shot"]
    assert zs["rule"] == "max-cosine" and zs["temperature"] is None and "XQA" in zs["score"]
    run = json.loads((tmp_path / "out" / "run.json").read_text())
    assert run["zero_shot_rule"] == "max-cosine"


def test_max_cosine_equals_hand_computation_hf_clip(tmp_path, images, tiny_hf_clip, transformers_mod):
    import torch
    from transformers import AutoTokenizer, CLIPImageProcessor, CLIPModel

    d, pfile = images
    p = predict(
        d, [f"clip:hf:{tiny_hf_clip}"], out=tmp_path / "out", prompts=pfile, zero_shot_rule="max-cosine"
    ).predictions
    model = CLIPModel.from_pretrained(tiny_hf_clip).eval()
    tok = AutoTokenizer.from_pretrained(tiny_hf_clip)
    proc = CLIPImageProcessor.from_pretrained(tiny_hf_clip)
    for i in (0, 3):
        name = f"i{i}.png"
        pix = torch.from_numpy(
            proc(images=Image.open(d / name).convert("RGB"), return_tensors="np")["pixel_values"]
        )
        for finding, e in POSITIVE_ONLY["findings"].items():
            enc = tok(e["positive"], padding=True, return_tensors="pt")
            with torch.no_grad():
                out = model(
                    input_ids=enc["input_ids"], attention_mask=enc["attention_mask"], pixel_values=pix
                )
            want = _cos_max(out.image_embeds[0].double().numpy(), out.text_embeds.double().numpy())
            got = p[(p.study_id == name) & (p.finding == CANON[finding])].score.item()
            assert got == pytest.approx(want, abs=1e-6)
    assert p.score.std() > 1e-4


def test_softmax_needs_negatives_and_rules_differ(tmp_path, images, tiny_open_clip, capsys):
    d, pfile = images
    cfg, ckpt = tiny_open_clip
    spec = f"clip:open_clip:{cfg}:{ckpt}"
    with pytest.raises(
        SchemaError,
        match=r"\['Atelectasis'\] has no negative prompts, which "
        "zero_shot_rule='softmax'.*zero_shot_rule='max-cosine'",
    ):
        load_model(spec, prompts=pfile)
    with pytest.raises(
        InvalidParameterError, match="'zero_shot_rule' parameter of load_model must be one of"
    ):
        load_model(spec, prompts=pfile, zero_shot_rule="cosine")
    # the same model and prompt file: the two rules are different scores
    soft = predict(d, [spec], out=tmp_path / "s", prompts="chestxray14").predictions
    cos = predict(
        d, [spec], out=tmp_path / "c", prompts="chestxray14", zero_shot_rule="max-cosine"
    ).predictions
    assert soft.score.between(0, 1).all() and not np.allclose(soft.score, cos.score)
    assert json.loads((tmp_path / "s" / "run.json").read_text())["zero_shot_rule"] == "softmax"  # the default
    # the CLI
    base = ["predict", "--images", str(d), "--model", spec, "--no-progress"]
    assert main([*base, "--prompts", "xqa", "--out", str(tmp_path / "x")]) == 2
    assert "--zero-shot-rule max-cosine" in capsys.readouterr().err and not (tmp_path / "x").exists()
    assert (
        main([*base, "--prompts", "xqa", "--zero-shot-rule", "max-cosine", "--out", str(tmp_path / "x")]) == 0
    )
    assert "4 of 4 image(s) predicted by 1 model(s); 48 score(s)" in capsys.readouterr().out
    assert main([*base, "--zero-shot-rule", "mean", "--out", str(tmp_path / "y")]) == 2
    assert "--zero-shot-rule must be one of ['softmax', 'max-cosine']" in capsys.readouterr().err


def test_xqa_prompt_file_covers_the_twelve_findings():
    ps = load_prompts("xqa")
    assert ps.findings == XQA and len(XQA) == 12
    assert ps.without_negatives() == XQA  # positive prompts only
    assert "mild subsegmental atelectasis" in ps.positive[0] and "persistent atelectasis" in ps.positive[0]
    spoken = {"Effusion": "pleural effusion", "Pleural Other": "pleural lesion"}
    for f, pos in zip(ps.findings, ps.positive):  # the finding's own name is one of its prompts
        assert len(pos) >= 4 and len(set(pos)) == len(pos) and spoken.get(f, f.lower()) in pos
