"""Networks ``cxreval finetune`` builds: the ChestX-ray8 baseline and a model with its classifier replaced.

:func:`chestxray8_net` is the unified network of ChestX-ray8 (Wang et al., 2017): an ImageNet-style
convolutional trunk from torchvision (its global pooling and fully connected layer removed), a *transition
layer* (here a 3x3 convolution to ``transition_channels`` maps, 1024 by default), a global pooling layer
(log-sum-exp pooling with ``r = 10``, the paper's best setting, or average / max) and a *prediction layer*
(one linear output per finding). Its CAM heatmaps are the transition layer's activations weighted by the
prediction layer's weights (``target_layer: transition``, ``classifier: classifier``), as in the paper. The
paper reads 1024x1024 images (its 32x32 maps for ResNet-50 come from that size and the trunk's stride 32).
GoogLeNet's trunk is torchvision's ``conv1`` ... ``inception5b`` (1024 maps, stride 32, the auxiliary heads
left out), preceded by torchvision's ``transform_input`` (its ImageNet weights read ``(x - 0.5) / 0.5``).

LSE pooling of a map ``x`` of ``S`` cells: ``(1 / r) * log(mean(exp(r * x)))``, computed as
``(logsumexp(r * x) - log S) / r``.

:func:`with_head` rebuilds any architecture and replaces its classifier (the layer named, or the last
``torch.nn.Linear``) by a new one with ``n_out`` outputs; the checkpoints written by ``cxreval finetune`` for
``xrv:`` and ``torch:`` models name it in their ``model.yaml``.
"""

from __future__ import annotations

import math
from typing import Any

from ..exceptions import InvalidParameterError, SchemaError

__all__: list[str] = []

RECIPE_ARCHS: tuple[str, ...] = (
    "resnet18",
    "resnet34",
    "resnet50",
    "resnet101",
    "vgg16",
    "alexnet",
    "googlenet",
    "densenet121",
)
"""torchvision trunks the ChestX-ray8 recipe accepts (the paper used AlexNet, GoogLeNet, VGGNet-16, ResNet-50)."""

_GOOGLENET_TRUNK = (
    "conv1",
    "maxpool1",
    "conv2",
    "conv3",
    "maxpool2",
    "inception3a",
    "inception3b",
    "maxpool3",
    "inception4a",
    "inception4b",
    "inception4c",
    "inception4d",
    "inception4e",
    "maxpool4",
    "inception5a",
    "inception5b",
)

POOLINGS: tuple[str, ...] = ("lse", "avg", "max")

XRV_DEFAULTS: dict[str, object] = {
    "mode": "full",
    "loss": "xrv",
    "optimizer": "Adam(amsgrad=True)",
    "lr": 1e-3,
    "weight_decay": 1e-5,
    "batch_size": 64,
    "augmentation": {"rotation_degrees": 45, "translate": 0.15, "scale": 0.15},
}
"""``--recipe xrv``: torchxrayvision's training defaults (``scripts/train_model.py`` and ``train_utils.train``,
torchxrayvision 1.x): Adam with ``amsgrad=True``, ``lr=0.001``, ``weight_decay=1e-5``, batches of 64, the
task-weighted BCE (``--taskweights``: :func:`~.losses.xrv_loss`) and, on every training image, torchvision's
``RandomAffine(45, translate=(0.15, 0.15), scale=(0.85, 1.15))`` (``--data_aug``; :func:`random_affine`). Like
torchxrayvision, the model kept is the one of the best mean validation AUC; torchxrayvision trains 400 epochs
without early stopping, cxreval stops after ``patience`` epochs without a better one (``epochs``/``patience``
keep their own defaults). Any option given explicitly replaces its default here."""


def torchvision_weights_url(arch: str) -> str:
    """The URL of torchvision's ImageNet weights for ``arch`` (what ``--weights`` should hold)."""
    from ._imports import require_torchvision

    torchvision = require_torchvision()

    w = torchvision.models.get_model_weights(arch)
    return str(w.DEFAULT.url)


def _trunk(arch: str, weights: str | None) -> tuple[Any, int]:
    import torch

    from ._imports import require_torchvision

    if arch not in RECIPE_ARCHS:
        raise InvalidParameterError(f"arch={arch!r}: expected one of {list(RECIPE_ARCHS)}.")
    torchvision = require_torchvision()
    sd = None
    if weights is not None:
        try:
            sd = torch.load(str(weights), map_location="cpu", weights_only=True)
        except (RuntimeError, OSError, ValueError) as exc:
            raise SchemaError(
                f"weights={str(weights)!r}: not a torch state_dict file ({type(exc).__name__}: "
                f"{str(exc).splitlines()[0][:300]}); expected the file at "
                f"{torchvision_weights_url(arch)}."
            ) from exc
    if arch == "googlenet":  # torchvision's ImageNet file holds the auxiliary heads too
        aux = isinstance(sd, dict) and any(str(k).startswith("aux1.") for k in sd)
        net = torchvision.models.googlenet(weights=None, aux_logits=aux, init_weights=sd is None)
    else:
        net = getattr(torchvision.models, arch)(weights=None)
    if sd is not None:
        try:
            net.load_state_dict(sd, strict=True)
        except (RuntimeError, OSError, ValueError) as exc:
            raise SchemaError(
                f"weights={str(weights)!r}: not torchvision {arch} weights ({type(exc).__name__}: "
                f"{str(exc).splitlines()[0][:300]}); expected the file at "
                f"{torchvision_weights_url(arch)}."
            ) from exc
    if arch.startswith("resnet"):
        return torch.nn.Sequential(*list(net.children())[:-2]), int(net.fc.in_features)
    if arch == "densenet121":
        return torch.nn.Sequential(net.features, torch.nn.ReLU()), int(net.classifier.in_features)
    if arch == "googlenet":
        from collections import OrderedDict

        layers = [("imagenet_to_googlenet", _googlenet_input())] + [
            (n, getattr(net, n)) for n in _GOOGLENET_TRUNK
        ]
        return torch.nn.Sequential(OrderedDict(layers)), 1024
    return net.features, 512 if arch == "vgg16" else 256


def random_affine(
    x: Any, gen: Any, *, degrees: float = 45.0, translate: float = 0.15, scale: float = 0.15
) -> Any:
    """torchvision's ``RandomAffine(degrees, translate=(t, t), scale=(1 - s, 1 + s))`` on each image of the batch
    ``x`` (``(B, C, H, W)``), its parameters drawn as ``RandomAffine.get_params`` draws them but from the numpy
    generator ``gen`` (reproducible from ``seed``): nearest-neighbour interpolation, filled with 0 (the middle
    of the xrv scale)."""
    import torch
    from torchvision.transforms import InterpolationMode
    from torchvision.transforms.functional import affine

    out = torch.empty_like(x)
    h, w = int(x.shape[-2]), int(x.shape[-1])
    for i in range(x.shape[0]):
        angle = float(gen.uniform(-degrees, degrees))
        tx = int(round(float(gen.uniform(-translate * w, translate * w))))
        ty = int(round(float(gen.uniform(-translate * h, translate * h))))
        sc = float(gen.uniform(1 - scale, 1 + scale))
        out[i] = affine(
            x[i],
            angle=angle,
            translate=[tx, ty],
            scale=sc,
            shear=[0.0, 0.0],
            interpolation=InterpolationMode.NEAREST,
            fill=0.0,
        )
    return out


def _googlenet_input() -> Any:
    import torch

    class GoogLeNetInput(torch.nn.Module):
        """ImageNet-normalised input -> the ``(x - 0.5) / 0.5`` input torchvision's GoogLeNet weights were trained
        on (torchvision's ``transform_input``, which it turns on with those weights); no parameters."""

        def __init__(self) -> None:
            super().__init__()
            self.register_buffer(
                "scale", torch.tensor([0.229, 0.224, 0.225]).view(1, 3, 1, 1) / 0.5, persistent=False
            )
            self.register_buffer(
                "shift", (torch.tensor([0.485, 0.456, 0.406]).view(1, 3, 1, 1) - 0.5) / 0.5, persistent=False
            )

        def forward(self, x: Any) -> Any:
            return x * self.scale + self.shift

    return GoogLeNetInput()


def chestxray8_net(
    arch: str = "resnet50",
    n_out: int = 8,
    *,
    transition_channels: int = 1024,
    pooling: str = "lse",
    lse_r: float = 10.0,
    weights: str | None = None,
) -> Any:
    """The ChestX-ray8 network (see the module docstring); ``weights``: a torchvision state_dict file for the trunk."""
    import torch

    if pooling not in POOLINGS:
        raise InvalidParameterError(f"pooling {pooling!r}: expected one of {list(POOLINGS)}.")
    trunk, c = _trunk(arch, weights)

    class ChestXray8Net(torch.nn.Module):
        """trunk -> transition (3x3 conv) -> global pooling -> prediction layer (linear)."""

        def __init__(self) -> None:
            super().__init__()
            self.features = trunk
            self.transition = torch.nn.Conv2d(c, transition_channels, kernel_size=3, padding=1)
            self.classifier = torch.nn.Linear(transition_channels, n_out)

        def forward(self, x: Any) -> Any:
            a = self.transition(self.features(x))
            if pooling == "lse":
                s = a.flatten(2)
                p = (torch.logsumexp(lse_r * s, dim=2) - math.log(s.shape[2])) / lse_r
            elif pooling == "avg":
                p = a.mean(dim=(2, 3))
            else:
                p = a.amax(dim=(2, 3))
            return self.classifier(p)

    return ChestXray8Net()


def find_classifier(module: Any, name: str | None = None) -> str:
    """The name of the classifier: ``name`` if given (checked), else the last ``torch.nn.Linear``."""
    import torch

    mods = dict(module.named_modules())
    if name:
        if not isinstance(mods.get(name), torch.nn.Linear):
            raise SchemaError(f"classifier {name!r}: the model has no torch.nn.Linear of that name.")
        return name
    lin = [n for n, m in mods.items() if isinstance(m, torch.nn.Linear)]
    if not lin:
        raise SchemaError(
            "the model has no torch.nn.Linear layer to replace; name its classifier in the YAML."
        )
    return lin[-1]


def replace_head(module: Any, name: str, n_out: int) -> Any:
    """Replace the linear layer ``name`` of ``module`` by a new ``Linear(in_features, n_out)``; return the new one."""
    import torch

    old = module.get_submodule(name)
    new = torch.nn.Linear(old.in_features, n_out, bias=old.bias is not None)
    parent_name, _, attr = name.rpartition(".")
    setattr(module.get_submodule(parent_name) if parent_name else module, attr, new)
    return new


def with_head(
    architecture: str,
    n_out: int,
    classifier: str | None = None,
    architecture_kwargs: dict[str, Any] | None = None,
) -> Any:
    """Build ``architecture`` (``package.module:callable`` or ``/abs/file.py:callable``), replace its classifier."""
    from pathlib import Path

    from ._imports import import_callable

    build = import_callable(architecture, base=Path("/"), where=f"architecture {architecture!r}")
    module = build(**(architecture_kwargs or {}))
    if hasattr(module, "op_threshs"):  # torchxrayvision: calibration of the old outputs
        module.op_threshs = None
    replace_head(module, find_classifier(module, classifier), n_out)
    return module


def last_stage(module: Any, head: str) -> str:
    """The backbone's last stage: descending from the root, the last child (outside the head) holding a
    convolution or linear layer, until a level has more than one such child."""
    import torch

    def has_layers(m: Any) -> bool:
        return any(isinstance(x, (torch.nn.Conv2d, torch.nn.Linear)) for x in m.modules())

    prefix, node = "", module
    while True:
        kids = [
            (n, c)
            for n, c in node.named_children()
            if has_layers(c) and not (f"{prefix}{n}" == head or head.startswith(f"{prefix}{n}."))
        ]
        if not kids:
            return prefix.rstrip(".")
        n, c = kids[-1]
        if len(kids) > 1 or not any(True for _ in c.children()):
            return f"{prefix}{n}"
        prefix, node = f"{prefix}{n}.", c
