"""CAM / Grad-CAM against closed forms on tiny hand-set models; the .npz writer read by `cxreval localize`."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

torch = pytest.importorskip("torch")
nn = torch.nn

from cxreval.cli.main import main  # noqa: E402
from cxreval.exceptions import DataUnavailableError, InvalidParameterError, SchemaError  # noqa: E402
from cxreval.localization._heatmap_keys import save_heatmaps  # noqa: E402
from cxreval.predict import _cam as cam_mod  # noqa: E402
from cxreval.predict._cam import class_activation_maps, grad_cam  # noqa: E402

# features: 1x1 conv (2 -> 3 channels, hand-set) -> ReLU -> 2x2 average pooling; head: GAP -> linear (3 -> 2)
CONV_W = np.array([[1.0, -0.5], [0.25, 2.0], [-1.0, 1.0]])
CONV_B = np.array([0.1, -0.3, 0.2])
LIN_W = np.array([[1.5, -2.0, 0.5], [-0.5, 1.0, 3.0]])
LIN_B = np.array([0.7, -0.2])


class Tiny(nn.Module):
    def __init__(self, inplace_tail: bool = False, dropout: float = 0.0) -> None:
        super().__init__()
        self.inplace_tail = inplace_tail
        layers = [nn.Conv2d(2, 3, 1)] + ([] if inplace_tail else [nn.ReLU()]) + [nn.AvgPool2d(2)]
        self.features = nn.Sequential(*layers)
        self.drop = nn.Dropout(dropout)
        self.classifier = nn.Linear(3, 2)
        self.double()  # before setting the weights: 0.1 is not a float32
        with torch.no_grad():
            self.features[0].weight.copy_(torch.tensor(CONV_W)[:, :, None, None])
            self.features[0].bias.copy_(torch.tensor(CONV_B))
            self.classifier.weight.copy_(torch.tensor(LIN_W))
            self.classifier.bias.copy_(torch.tensor(LIN_B))

    def forward(self, x):
        f = self.features(x)
        if self.inplace_tail:  # torchvision DenseNet: F.relu(features, inplace=True) after the hook
            f = torch.nn.functional.relu(f, inplace=True)
        return self.classifier(self.drop(f.mean(dim=(2, 3))))


def features_np(x, relu_before_pool=True):
    """The closed form of Tiny's features: relu(1x1 conv) then 2x2 mean (or pool first, then relu)."""
    a = np.einsum("kc,nchw->nkhw", CONV_W, x) + CONV_B[None, :, None, None]
    if relu_before_pool:
        a = np.maximum(a, 0)
    n, k, h, w = a.shape
    a = a.reshape(n, k, h // 2, 2, w // 2, 2).mean(axis=(3, 5))
    return a if relu_before_pool else np.maximum(a, 0)


@pytest.fixture
def images():
    return np.random.default_rng(0).normal(size=(5, 2, 8, 8))


def test_cam_closed_form(images):
    model = Tiny()
    maps = class_activation_maps(model, images, target_layer="features")
    A = features_np(images)
    expected = np.einsum("ck,nkhw->nchw", LIN_W, A)  # CAM = sum_k w_ck A_k, no bias, no ReLU
    assert maps.shape == (5, 2, 4, 4) and maps.dtype == np.float64
    np.testing.assert_allclose(maps, expected, rtol=1e-12, atol=1e-12)
    assert (maps < 0).any()  # raw CAM keeps its sign
    logits = model(torch.tensor(images)).detach().numpy()  # GAP head: mean of CAM + bias = score
    np.testing.assert_allclose(maps.mean(axis=(2, 3)) + LIN_B, logits, rtol=1e-12)
    # explicit classifier and a class subset give the same columns
    sub = class_activation_maps(model, images, target_layer="features", classifier="classifier", classes=[1])
    np.testing.assert_array_equal(sub[:, 0], maps[:, 1])


def test_grad_cam_equals_relu_cam_over_hw_for_gap_linear(images):
    model = Tiny()
    c = class_activation_maps(model, images, target_layer="features")
    g = grad_cam(model, images, target_layer="features")
    np.testing.assert_allclose(g, np.maximum(c, 0) / (4 * 4), rtol=1e-12, atol=1e-15)
    assert (g >= 0).all() and (g > 0).any() and (c < 0).any()
    # an earlier layer (before pooling): 8x8 maps
    g8 = grad_cam(model, images, target_layer="features.1")
    A = np.maximum(np.einsum("kc,nchw->nkhw", CONV_W, images) + CONV_B[None, :, None, None], 0)
    # y_c = sum_k W_ck mean(pool(A_k)) = sum_k W_ck mean(A_k) -> alpha_ck = W_ck / 64
    np.testing.assert_allclose(g8, np.maximum(np.einsum("ck,nkhw->nchw", LIN_W, A), 0) / 64, rtol=1e-12)


class SpatialHead(nn.Module):
    """Scores that weight every feature position differently: Grad-CAM's alpha is the mean of V over positions."""

    def __init__(self, V):
        super().__init__()
        self.features = nn.Conv2d(2, 3, 1)
        self.head = nn.Linear(3 * 4 * 4, 2, bias=False)
        self.double()
        with torch.no_grad():
            self.features.weight.copy_(torch.tensor(CONV_W)[:, :, None, None])
            self.features.bias.copy_(torch.tensor(CONV_B))
            self.head.weight.copy_(torch.tensor(V.reshape(2, -1)))

    def forward(self, x):
        return self.head(self.features(x).flatten(1))


def test_grad_cam_closed_form_spatial_head():
    rng = np.random.default_rng(1)
    x = rng.normal(size=(3, 2, 4, 4))
    V = rng.normal(size=(2, 3, 4, 4))
    g = grad_cam(SpatialHead(V), x, target_layer="features", classes=[1, 0])
    A = np.einsum("kc,nchw->nkhw", CONV_W, x) + CONV_B[None, :, None, None]
    alpha = V.mean(axis=(2, 3))  # dy_c/dA_k,ij = V_c,k,ij
    expected = np.maximum(np.einsum("ck,nkhw->nchw", alpha, A), 0)[:, [1, 0]]
    np.testing.assert_allclose(g, expected, rtol=1e-12, atol=1e-15)


def test_inplace_relu_after_target_layer(images):
    # DenseNet-style: the hooked tensor is modified in place by forward; maps see what the classifier sees
    model = Tiny(inplace_tail=True)
    c = class_activation_maps(model, images, target_layer="features")
    A = features_np(images, relu_before_pool=False)
    np.testing.assert_allclose(c, np.einsum("ck,nkhw->nchw", LIN_W, A), rtol=1e-12, atol=1e-12)
    logits = model(torch.tensor(images)).detach().numpy()
    np.testing.assert_allclose(c.mean(axis=(2, 3)) + LIN_B, logits, rtol=1e-12)
    g = grad_cam(model, images, target_layer="features")
    np.testing.assert_allclose(g, np.maximum(c, 0) / 16, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("fn", [class_activation_maps, grad_cam])
def test_batch_equals_single_and_inputs(fn, images):
    model = Tiny(dropout=0.5)
    model.train()  # eval() inside: dropout off, mode restored
    full = fn(model, images, target_layer="features")
    for bs in (1, 2, 5, 64):
        np.testing.assert_allclose(
            fn(model, images, target_layer="features", batch_size=bs), full, rtol=1e-13
        )
    single = np.concatenate(
        [fn(model, images[i : i + 1], target_layer="features") for i in range(len(images))]
    )
    np.testing.assert_allclose(single, full, rtol=1e-13)
    np.testing.assert_array_equal(
        fn(model, torch.tensor(images), target_layer="features", device="cpu"), full
    )
    assert model.training and all(p.grad is None for p in model.parameters())
    assert not model.features._forward_hooks  # hooks removed
    # float32 model: images are cast; same maps up to float32 precision
    f32 = fn(Tiny().float(), images.astype(np.float32), target_layer="features")
    assert f32.dtype == np.float64
    np.testing.assert_allclose(f32, full, rtol=1e-5, atol=1e-6)


def test_frozen_model_grad_cam(images):
    model = Tiny()
    for p in model.parameters():
        p.requires_grad_(False)
    np.testing.assert_allclose(
        grad_cam(model, images, target_layer="features"),
        grad_cam(Tiny(), images, target_layer="features"),
        rtol=1e-13,
    )


def test_errors(images):
    model = Tiny()
    with pytest.raises(InvalidParameterError, match=r"Got 'featurs'.*close names: \['features'"):
        class_activation_maps(model, images, target_layer="featurs")
    with pytest.raises(
        InvalidParameterError,
        match=r"Got 'layer4', which Tiny does not have; its top-level "
        r"modules are \['features', 'drop', 'classifier'\]",
    ):
        grad_cam(model, images, target_layer="layer4")
    with pytest.raises(
        InvalidParameterError,
        match=r"target layer 'classifier' must output a tensor of shape "
        r"\(N, C, h, w\).*shape \(5, 2\)",
    ):
        grad_cam(model, images, target_layer="classifier")
    with pytest.raises(
        InvalidParameterError,
        match=r"target layer 'features' outputs 3 channels but the "
        r"classifier has 48 inputs",
    ):
        class_activation_maps(
            SpatialHead(np.ones((2, 3, 4, 4))), images[:, :, :4, :4], target_layer="features"
        )
    with pytest.raises(
        InvalidParameterError, match=r"classifier 'features' of class_activation_maps must be"
    ):
        class_activation_maps(model, images, target_layer="features", classifier="features")
    with pytest.raises(InvalidParameterError, match=r"class indices in \[0, 1\].*Got \[2\]"):
        grad_cam(model, images, target_layer="features", classes=[2])
    with pytest.raises(SchemaError, match=r"shape \(N, C, H, W\); got shape \(2, 8, 8\).*images\[None\]"):
        grad_cam(model, images[0], target_layer="features")
    bad = images.copy()
    bad[1, 0, 2, 3] = np.nan
    with pytest.raises(SchemaError, match=r"must be finite; found nan at index \(1, 0, 2, 3\)"):
        class_activation_maps(model, bad, target_layer="features")
    with pytest.raises(
        InvalidParameterError, match=r"'model' parameter of grad_cam must be a torch.nn.Module"
    ):
        grad_cam(lambda x: x, images, target_layer="features")
    with pytest.raises(
        InvalidParameterError, match=r"'batch_size' parameter of grad_cam must be an int >= 1"
    ):
        grad_cam(model, images, target_layer="features", batch_size=0)
    unused = SpatialHead(np.ones((2, 3, 4, 4)))
    unused.spare = nn.Conv2d(1, 1, 1)
    with pytest.raises(
        InvalidParameterError, match=r"target layer 'spare' did not run in the model's forward pass"
    ):
        grad_cam(unused, images[:, :, :4, :4], target_layer="spare")


def test_no_torch(monkeypatch, images):
    monkeypatch.setitem(sys.modules, "torch", None)  # `import torch` raises ImportError
    with pytest.raises(DataUnavailableError, match=r"torch is not installed; pip install cxreval\[torch\]"):
        cam_mod.grad_cam(None, images, target_layer="features")
    # the package itself never needs torch
    code = (
        "import sys; sys.modules['torch'] = None; import cxreval.predict as P; "
        "assert 'predict' in P.__all__; print('ok')"
    )
    assert (
        subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True
        ).stdout.strip()
        == "ok"
    )


def test_end_to_end_cxreval_localize(tmp_path):
    # 32x32 images -> 8x8 feature maps; each feature cell is 128 px of a 1024 px image. Image 'hit.png' lights
    # feature cells rows 2-3, cols 4-5 (pixels x 512-768, y 256-512), where its reference box is; 'miss.png'
    # lights cells far from its box.
    model = Tiny()
    model.features[2] = nn.AvgPool2d(4)
    x = np.zeros((2, 2, 32, 32))
    x[0, 0, 8:16, 16:24] = 1.0
    x[1, 0, 24:32, 0:8] = 1.0
    maps = grad_cam(model, x, target_layer="features")
    assert maps.shape == (2, 2, 8, 8)
    assert set(zip(*np.nonzero(maps[0, 0] == maps[0, 0].max()))) == {(2, 4), (2, 5), (3, 4), (3, 5)}
    npz = tmp_path / "cam.npz"
    save_heatmaps(
        npz, maps, image_ids=["hit.png", "miss.png"], findings=["Atelectasis", "Pleural_Thickening"]
    )
    boxes = tmp_path / "bbox.csv"
    boxes.write_text(
        "Image Index,Finding Label,Bbox [x,y,w,h],,,\n"
        "hit.png,Atelectasis,512,256,256,256\nmiss.png,Atelectasis,512,256,256,256\n"
    )
    out = tmp_path / "out"
    assert main(["localize", "--heatmaps", str(npz), "--boxes", str(boxes), "--out", str(out)]) == 0
    loc = pd.read_csv(out / "localization.csv")
    row = loc[
        (loc.finding == "Atelectasis") & (loc.threshold == 180) & (loc.rule == "IoBB") & (loc["T"] == 0.9)
    ]
    assert row[["acc", "afp", "n_boxes", "n_images"]].iloc[0].tolist() == [0.5, 0.5, 2, 2]
    det = pd.read_csv(out / "boxes.csv")
    hit = det[(det.study_id == "hit.png") & (det.threshold == 180)]
    assert len(hit) == 1 and hit.iobb.item() == 1.0  # detected box inside the reference box
    assert (det.finding == "Atelectasis").all()  # the Pleural Thickening maps have no boxes
    assert "without a reference box not scored" in (out / "summary.md").read_text()


def test_grad_cam_matches_retain_grad_on_a_cnn_with_batchnorm():
    # an independent computation: one image at a time, .backward() and retain_grad() on the hooked output
    torch.manual_seed(0)
    model = nn.Sequential(
        nn.Conv2d(1, 4, 3, padding=1),
        nn.BatchNorm2d(4),
        nn.ReLU(inplace=True),
        nn.Conv2d(4, 6, 3, stride=2, padding=1),
        nn.BatchNorm2d(6),
        nn.ReLU(),
        nn.AdaptiveAvgPool2d(2),
        nn.Flatten(),
        nn.Linear(24, 3),
    ).double()
    model.train()
    model(torch.randn(8, 1, 12, 12, dtype=torch.float64))  # non-trivial running statistics
    x = np.random.default_rng(2).normal(size=(4, 1, 12, 12))
    got = grad_cam(model, x, target_layer="4", batch_size=3)
    assert got.shape == (4, 3, 6, 6) and model.training
    model.eval()
    for n in range(4):
        for c in range(3):
            store: dict = {}
            h = model[4].register_forward_hook(lambda m, i, o, store=store: store.setdefault("a", o))
            y = model(torch.tensor(x[n : n + 1]))
            h.remove()
            a = store["a"]
            a.retain_grad()
            y[0, c].backward()
            w = a.grad[0].mean(dim=(1, 2))
            ref = torch.relu((w[:, None, None] * a[0]).sum(0)).detach().numpy()
            np.testing.assert_allclose(got[n, c], ref, rtol=1e-10, atol=1e-13)
    assert (got > 0).any()
