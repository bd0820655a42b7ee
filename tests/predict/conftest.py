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


def blob_images(n: int, size: int, *, rng: int, p_blob: float = 0.5) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
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
            v += 45000 * np.exp(-((yy - cy) ** 2 + (xx - cx) ** 2) / (2 * BLOB_SIGMA ** 2))
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
    torch.set_num_threads(1)                     # a tiny net: threads only contend on a shared machine
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
        cfg = {"name": f"tiny{seed}", "checkpoint": f"tiny{seed}.pt", "format": "state_dict",
               "architecture": "tiny_arch.py:build", "architecture_kwargs": {"n_out": 3},
               "input": {"size": 32, "channels": 1, "normalization": "xrv", "crop": "center"},
               "findings": ["Atelectasis", "Infiltrate", "Pleural Effusion"], "target_layer": "features"}
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
    with torch.no_grad():                    # small logits, so calibrated outputs are not all 0 or 1
        net.classifier.weight.mul_(2e-3)
    url = xrv.models.model_urls["densenet121-res224-all"]["weights_url"]
    torch.save(net, d / os.path.basename(url))
    return d
