"""Fixtures for `cxreval predict`: a tiny CNN trained on synthetic blobs, xrv weight files with fixed random weights.

Nothing is downloaded: TorchXRayVision architectures are built with ``weights=None`` and seeded random weights,
and saved under the file names torchxrayvision looks for, so the named-weights loading path runs for real.
"""

from __future__ import annotations

import os
import textwrap
from pathlib import Path

import numpy as np
import pytest

ARCH = textwrap.dedent('''
    import torch
    from torch import nn


    class TinyCNN(nn.Module):
        """conv-relu-pool-conv-relu (features, stride 2) -> global average pooling -> linear."""

        def __init__(self, n_out=3):
            super().__init__()
            self.features = nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                                          nn.Conv2d(8, 16, 3, padding=1), nn.ReLU())
            self.classifier = nn.Linear(16, n_out)

        def forward(self, x):
            a = self.features(x / 1024.0)          # inputs on the xrv scale [-1024, 1024]
            return self.classifier(a.mean(dim=(2, 3)))


    def build(n_out=3):
        return TinyCNN(n_out)
''')

BLOB_SIGMA = 2.0


def blob_images(
    n: int, size: int, *, rng: int, p_blob: float = 0.5
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """16-bit images: dim noisy background, and in about half of them a bright Gaussian blob.

    Returns (images uint16 (n, size, size), has_blob bool (n,), centres float (n, 2) as (row, col); NaN without blob).
    """
    g = np.random.default_rng(rng)
    yy, xx = np.mgrid[0:size, 0:size]
    imgs = np.empty((n, size, size), dtype=np.uint16)
    has = g.random(n) < p_blob
    centres = np.full((n, 2), np.nan)
    for i in range(n):
        v = 12000 + 3000 * g.standard_normal((size, size))
        if has[i]:
            cy, cx = g.uniform(0.2 * size, 0.8 * size, 2)
            centres[i] = cy, cx
            v += 45000 * np.exp(-((yy - cy) ** 2 + (xx - cx) ** 2) / (2 * BLOB_SIGMA**2))
        imgs[i] = np.clip(np.rint(v), 0, 65535).astype(np.uint16)
    return imgs, has, centres


def train_tiny(arch_file: Path, *, n_out: int, size: int, seed: int, steps: int = 30):
    """Train TinyCNN for a few steps: every output = 'the image has a blob'. Returns the module (eval mode)."""
    import importlib.util

    import torch

    spec = importlib.util.spec_from_file_location(f"tiny_arch_{seed}_{os.getpid()}", arch_file)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    torch.manual_seed(seed)
    net = mod.build(n_out)
    imgs, has, _ = blob_images(256, size, rng=seed)
    x = torch.from_numpy(((2 * (imgs.astype(np.float32) / 65535) - 1) * 1024)[:, None])
    y = torch.from_numpy(np.repeat(has[:, None], n_out, axis=1).astype(np.float32))
    opt = torch.optim.Adam(net.parameters(), lr=1e-2)
    g = torch.Generator().manual_seed(seed)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # a tiny net: threads only contend on a shared machine
    try:
        for _ in range(steps):
            idx = torch.randint(0, len(x), (32,), generator=g)
            loss = torch.nn.functional.binary_cross_entropy_with_logits(net(x[idx]), y[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
    finally:
        torch.set_num_threads(threads)
    return net.eval()


@pytest.fixture(scope="session")
def blobs():
    """The synthetic blob image generator (see blob_images)."""
    return blob_images


@pytest.fixture(scope="session")
def torch_mod():
    return pytest.importorskip("torch", reason="torch not installed (pip install 'cxreval[models]')")


@pytest.fixture(scope="session")
def xrv(torch_mod):
    try:
        import torchxrayvision
    except Exception as exc:  # ImportError, or torchvision not matching torch
        pytest.skip(f"torchxrayvision not importable ({type(exc).__name__}: {exc})")
    return torchxrayvision


@pytest.fixture(scope="session")
def tiny_models(tmp_path_factory, torch_mod):
    """Three TinyCNN checkpoints (seeds 0, 1, 2) as state_dict + YAML; outputs Atelectasis, Infiltrate, Pleural Effusion.

    Returns (folder, list of YAML paths).
    """
    import torch
    import yaml

    d = tmp_path_factory.mktemp("tiny")
    arch = d / "tiny_arch.py"
    arch.write_text(ARCH)
    ymls = []
    for seed in range(3):
        net = train_tiny(arch, n_out=3, size=32, seed=seed)
        torch.save(net.state_dict(), d / f"tiny{seed}.pt")
        cfg = {
            "name": f"tiny{seed}",
            "checkpoint": f"tiny{seed}.pt",
            "format": "state_dict",
            "architecture": "tiny_arch.py:build",
            "architecture_kwargs": {"n_out": 3},
            "input": {"size": 32, "channels": 1, "normalization": "xrv", "crop": "center"},
            "findings": ["Atelectasis", "Infiltrate", "Pleural Effusion"],
            "target_layer": "features",
        }
        (d / f"tiny{seed}.yaml").write_text(yaml.safe_dump(cfg))
        ymls.append(d / f"tiny{seed}.yaml")
    return d, ymls


@pytest.fixture(scope="session")
def xrv_weights(tmp_path_factory, xrv):
    """A weights folder holding a fixed-random DenseNet-121 under the file name of densenet121-res224-all."""
    import torch

    d = tmp_path_factory.mktemp("xrvw")
    torch.manual_seed(1234)
    net = xrv.models.DenseNet(weights=None, num_classes=18)
    with torch.no_grad():  # small logits, so calibrated outputs are not all 0 or 1
        net.classifier.weight.mul_(2e-3)
    url = xrv.models.model_urls["densenet121-res224-all"]["weights_url"]
    torch.save(net, d / os.path.basename(url))
    return d


@pytest.fixture(scope="session")
def open_clip_mod(torch_mod):
    try:
        import open_clip
    except Exception as exc:  # ImportError, or a torchvision not matching torch
        pytest.skip(f"open_clip not importable ({type(exc).__name__}: {exc}); pip install open_clip_torch")
    return open_clip


@pytest.fixture(scope="session")
def transformers_mod(torch_mod):
    try:
        import transformers
    except Exception as exc:  # ImportError, or a torch it does not support
        pytest.skip(f"transformers not importable ({type(exc).__name__}: {exc}); pip install transformers")
    return transformers


TINY_OPEN_CLIP = {
    "embed_dim": 16,
    "vision_cfg": {"image_size": 32, "layers": 1, "width": 32, "patch_size": 8, "head_width": 16},
    "text_cfg": {"context_length": 16, "vocab_size": 49408, "width": 32, "heads": 2, "layers": 1},
}


@pytest.fixture(scope="session")
def tiny_open_clip(tmp_path_factory, open_clip_mod):
    """A random-weight open_clip model: (config .json, checkpoint file), logit_scale set to 10."""
    import json

    import torch

    d = tmp_path_factory.mktemp("open_clip")
    cfg = d / "tinyclip.json"
    cfg.write_text(json.dumps(TINY_OPEN_CLIP))
    open_clip_mod.add_model_config(cfg)
    torch.manual_seed(7)
    m = open_clip_mod.create_model("tinyclip", pretrained=None)
    with torch.no_grad():
        m.logit_scale.fill_(np.log(10.0))
    torch.save(m.state_dict(), d / "tiny.pt")
    return cfg, d / "tiny.pt"


def _byte_vocab() -> tuple[dict[str, int], list[str]]:
    """A character-level CLIP BPE vocabulary (every byte, alone and word-final) with no merges."""
    bs = (
        list(range(ord("!"), ord("~") + 1))
        + list(range(ord("¡"), ord("¬") + 1))
        + list(range(ord("®"), ord("ÿ") + 1))
    )
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    chars = [chr(c) for c in cs]
    tokens = chars + [c + "</w>" for c in chars] + ["<|startoftext|>", "<|endoftext|>"]
    return {t: i for i, t in enumerate(tokens)}, ["#version: 0.2"]


@pytest.fixture(scope="session")
def tiny_hf_clip(tmp_path_factory, transformers_mod):
    """A random-weight Hugging Face CLIP folder (model, tokenizer, image processor) saved with save_pretrained."""
    import json

    import torch
    from transformers import CLIPConfig, CLIPImageProcessor, CLIPModel, CLIPTokenizer

    d = tmp_path_factory.mktemp("hf_clip")
    vocab, merges = _byte_vocab()
    (d / "vocab.json").write_text(json.dumps(vocab))
    (d / "merges.txt").write_text("\n".join(merges) + "\n")
    tok = CLIPTokenizer(str(d / "vocab.json"), str(d / "merges.txt"))
    cfg = CLIPConfig(
        text_config={
            "vocab_size": len(vocab),
            "hidden_size": 32,
            "intermediate_size": 64,
            "num_hidden_layers": 1,
            "num_attention_heads": 2,
            "max_position_embeddings": 64,
            "bos_token_id": vocab["<|startoftext|>"],
            "eos_token_id": vocab["<|endoftext|>"],
            "pad_token_id": vocab["<|endoftext|>"],
        },
        vision_config={
            "hidden_size": 32,
            "intermediate_size": 64,
            "num_hidden_layers": 1,
            "num_attention_heads": 2,
            "image_size": 40,
            "patch_size": 8,
        },
        projection_dim=16,
        logit_scale_init_value=float(np.log(20.0)),
    )
    torch.manual_seed(11)
    model = CLIPModel(cfg).eval()
    model.save_pretrained(d)
    tok.save_pretrained(d)
    CLIPImageProcessor(size={"shortest_edge": 40}, crop_size={"height": 40, "width": 40}).save_pretrained(d)
    return d


@pytest.fixture()
def one_torch_thread(torch_mod):
    """torch on one thread for the test: small networks only contend for the cores of a shared machine."""
    n = torch_mod.get_num_threads()
    torch_mod.set_num_threads(1)
    yield
    torch_mod.set_num_threads(n)
