"""CAM and Grad-CAM heatmaps from a torch model (``cxreval predict --heatmaps``), in the layout ``cxreval localize`` reads.

The ChestX-ray8 paper makes its heatmaps as "the activations of the transition layer weighted by the
weights of the prediction layer": class activation mapping (CAM, Zhou et al. [1]_). For features
:math:`A \\in \\mathbb{R}^{C \\times h \\times w}` of one image at a named module (the *target layer*) and a
classifier weight matrix :math:`W \\in \\mathbb{R}^{K \\times C}`, the map of class :math:`c` is

.. math:: M^{\\mathrm{CAM}}_c = \\sum_k W_{ck} A_k .

Grad-CAM (Selvaraju et al. [2]_) weights the same features by the spatially averaged gradient of the
class score :math:`y_c` (the model's output before any softmax) and keeps the positive part,

.. math:: \\alpha_{ck} = \\frac{1}{hw} \\sum_{ij} \\frac{\\partial y_c}{\\partial A_{k,ij}}, \\qquad
          M^{\\mathrm{Grad\\text{-}CAM}}_c = \\mathrm{ReLU}\\Big(\\sum_k \\alpha_{ck} A_k\\Big).

For a head of global average pooling and a linear layer, :math:`\\alpha_{ck} = W_{ck} / (hw)`, so
Grad-CAM equals :math:`\\mathrm{ReLU}(M^{\\mathrm{CAM}}_c) / (hw)`.

Both return float64 maps of the feature-map size (``h x w``, e.g. 7 x 7 or 32 x 32): upsampling to
the image, normalisation and thresholds are the localization protocol's job (:mod:`cxreval.localization`).
:func:`cxreval.localization.save_heatmaps` writes maps to the ``.npz`` layout (keys ``"<image id>/<finding>"``) that
``cxreval localize --heatmaps`` reads.

torch is optional (``pip install cxreval[torch]``) and imported only when a function here runs;
without it they raise :class:`~cxreval.exceptions.DataUnavailableError`. Nothing is downloaded: the
model, with its weights, is the caller's.

Notes
-----
The features are the tensor the target layer returns, *as it stands after the forward pass*: when the
model's ``forward`` modifies that tensor in place (torchvision's DenseNet applies
``F.relu(features, inplace=True)`` to the output of ``features``), the maps use the modified values,
which are exactly what the pooling and the classifier see, and Grad-CAM's gradient is taken with
respect to them too. The model is put in evaluation mode for the computation (dropout off, batch
norm with running statistics) and its previous mode is restored afterwards; its parameters, their
``.grad`` and its device are left unchanged.

References
----------
.. [1] B. Zhou, A. Khosla, A. Lapedriza, A. Oliva, A. Torralba, "Learning Deep Features for
   Discriminative Localization", CVPR 2016. https://doi.org/10.1109/CVPR.2016.319
.. [2] R. R. Selvaraju, M. Cogswell, A. Das, R. Vedantam, D. Parikh, D. Batra, "Grad-CAM: Visual
   Explanations from Deep Networks via Gradient-based Localization", ICCV 2017.
   https://doi.org/10.1109/ICCV.2017.74
.. [3] X. Wang, Y. Peng, L. Lu, Z. Lu, M. Bagheri, R. M. Summers, "ChestX-ray8: Hospital-scale Chest
   X-ray Database and Benchmarks on Weakly-Supervised Classification and Localization of Common
   Thorax Diseases", CVPR 2017. https://doi.org/10.1109/CVPR.2017.369

Examples
--------
>>> import torch  # doctest: +SKIP
>>> model = torch.nn.Sequential(torch.nn.Conv2d(1, 4, 3, padding=1), torch.nn.ReLU(),
...                             torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(),
...                             torch.nn.Linear(4, 2))  # doctest: +SKIP
>>> x = torch.rand(3, 1, 16, 16)  # doctest: +SKIP
>>> class_activation_maps(model, x, target_layer="1").shape  # doctest: +SKIP
(3, 2, 16, 16)
>>> from cxreval.localization import save_heatmaps  # doctest: +SKIP
>>> save_heatmaps("maps.npz", grad_cam(model, x, target_layer="1"),
...               image_ids=["a.png", "b.png", "c.png"], findings=["Atelectasis", "Mass"])  # doctest: +SKIP
"""

from __future__ import annotations

import difflib
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike

from ..exceptions import DataUnavailableError, InvalidParameterError, SchemaError

if TYPE_CHECKING:
    import torch

__all__ = ["class_activation_maps", "grad_cam"]


def _torch() -> Any:
    try:
        import torch
    except ImportError as exc:
        raise DataUnavailableError("torch is not installed; pip install cxreval[torch]") from exc
    return torch


def _named_module(model: Any, name: object, *, param: str, func: str) -> Any:
    modules = dict(model.named_modules())
    if not isinstance(name, str) or not name or name not in modules:
        names = [n for n in modules if n]
        close = difflib.get_close_matches(str(name), names, n=5, cutoff=0.6)
        hint = (
            f"close names: {close}; " if close else ""
        ) + f"its top-level modules are {[n for n in names if '.' not in n][:20]}"
        raise InvalidParameterError(
            f"The '{param}' parameter of {func} must name a submodule of the model as a dotted path "
            f"(e.g. 'features.denseblock4'). Got {name!r}, which {type(model).__name__} does not have; {hint}."
        )
    return modules[name]


def _model_device(model: Any, device: object, *, func: str) -> Any:
    torch = _torch()
    if device is not None:
        try:
            return torch.device(device)
        except (RuntimeError, TypeError) as exc:
            raise InvalidParameterError(
                f"The 'device' parameter of {func} must be None or a torch device such as 'cpu' "
                f"or 'cuda:0'. Got {device!r} instead."
            ) from exc
    p = next(iter(model.parameters()), None)
    return p.device if p is not None else torch.device("cpu")


def _validate(
    model: Any, images: object, *, func: str, batch_size: object, device: object
) -> tuple[Any, Any, Any]:
    torch = _torch()
    if not isinstance(model, torch.nn.Module):
        raise InvalidParameterError(
            f"The 'model' parameter of {func} must be a torch.nn.Module. Got {type(model).__name__} instead."
        )
    if isinstance(batch_size, bool) or not isinstance(batch_size, (int, np.integer)) or batch_size < 1:
        raise InvalidParameterError(
            f"The 'batch_size' parameter of {func} must be an int >= 1. Got {batch_size!r} instead."
        )
    dev = _model_device(model, device, func=func)
    if isinstance(images, torch.Tensor):
        x = images.detach()
    else:
        try:
            x = torch.as_tensor(np.asarray(images, dtype=np.float64))
        except (TypeError, ValueError) as exc:
            raise SchemaError(
                f"'images' of {func} must be a numeric array or tensor of shape (N, C, H, W)."
            ) from exc
    if x.ndim != 4:
        hint = " (one image of shape (C, H, W): pass images[None])" if x.ndim == 3 else ""
        raise SchemaError(
            f"'images' of {func} must have shape (N, C, H, W); got shape {tuple(x.shape)}{hint}."
        )
    if x.shape[0] == 0:
        raise SchemaError(f"'images' of {func} holds no image; got shape {tuple(x.shape)}.")
    if not x.is_floating_point():
        x = x.double()
    bad = ~torch.isfinite(x)
    if bool(bad.any()):
        idx = tuple(int(v) for v in torch.nonzero(bad)[0])
        raise SchemaError(
            f"'images' of {func} must be finite; found {float(x[idx])!r} at index {idx} "
            f"({int(bad.sum())} non-finite value(s))."
        )
    p = next(iter(model.parameters()), None)
    dtype = p.dtype if p is not None and p.is_floating_point() else torch.float32
    return x, dev, dtype


def _classes(classes: object, n: int, *, func: str, what: str) -> np.ndarray:
    if classes is None:
        return np.arange(n)
    try:
        c = np.asarray(classes)
    except (TypeError, ValueError):
        c = np.asarray([None])
    if c.ndim == 0:
        c = c[None]
    if c.dtype.kind not in "iu" or c.ndim != 1 or c.size == 0 or c.min() < 0 or c.max() >= n:
        raise InvalidParameterError(
            f"The 'classes' parameter of {func} must be None or a non-empty sequence of "
            f"class indices in [0, {n - 1}] ({what} has {n} classes). "
            f"Got {classes!r} instead."
        )
    return c.astype(np.int64)


class _Capture:
    """A forward hook on the target layer that keeps its (4-D) output tensor."""

    def __init__(self, module: Any, *, name: str, func: str) -> None:
        self.name, self.func, self.out = name, func, None
        self.handle = module.register_forward_hook(self)

    def __call__(self, module: Any, inputs: Any, output: Any) -> None:
        self.out = output

    def take(self) -> Any:
        torch = _torch()
        a, self.out = self.out, None
        if a is None:
            raise InvalidParameterError(
                f"target layer {self.name!r} did not run in the model's forward pass "
                f"({self.func}); name a module that the forward pass calls."
            )
        if not isinstance(a, torch.Tensor) or a.ndim != 4:
            got = f"shape {tuple(a.shape)}" if isinstance(a, torch.Tensor) else f"a {type(a).__name__}"
            raise InvalidParameterError(
                f"target layer {self.name!r} must output a tensor of shape (N, C, h, w) "
                f"for {self.func}; it output {got}. Name a convolutional stage "
                "(e.g. 'features' or 'features.denseblock4')."
            )
        return a


@contextmanager
def _hooked(model: Any, target_layer: str, *, func: str) -> Iterator[_Capture]:
    """``model`` in evaluation mode with a :class:`_Capture` on ``target_layer``; on exit the hook is removed
    and the model's training mode restored (also when an error is raised)."""
    layer = _named_module(model, target_layer, param="target_layer", func=func)
    cap = _Capture(layer, name=target_layer, func=func)
    was_training = model.training
    try:
        model.eval()
        yield cap
    finally:
        cap.handle.remove()
        model.train(was_training)


def _scores(y: Any, n: int, *, func: str) -> Any:
    torch = _torch()
    if not isinstance(y, torch.Tensor) or y.ndim != 2 or y.shape[0] != n:
        got = f"shape {tuple(y.shape)}" if isinstance(y, torch.Tensor) else f"a {type(y).__name__}"
        raise InvalidParameterError(
            f"{func} needs a model whose forward returns class scores of shape "
            f"(N, K) = ({n}, K); it returned {got}."
        )
    return y


def _classifier_weights(model: Any, classifier: object, *, func: str) -> tuple[str, np.ndarray]:
    torch = _torch()
    if classifier is None:
        linear = [n for n, m in model.named_modules() if isinstance(m, torch.nn.Linear)]
        if not linear:
            raise InvalidParameterError(
                f"{func}: the model has no torch.nn.Linear module to take the class "
                "weights from; name the classifier with classifier='...'."
            )
        classifier = linear[-1]
    mod = _named_module(model, classifier, param="classifier", func=func)
    if isinstance(mod, torch.nn.Linear):
        w = mod.weight
    elif isinstance(mod, torch.nn.Conv2d) and tuple(mod.kernel_size) == (1, 1) and mod.groups == 1:
        w = mod.weight[:, :, 0, 0]
    else:
        raise InvalidParameterError(
            f"classifier {classifier!r} of {func} must be a torch.nn.Linear or a 1x1 "
            f"torch.nn.Conv2d; it is a {type(mod).__name__}."
        )
    return str(classifier), w.detach().to("cpu", torch.float64).numpy()


def class_activation_maps(
    model: Any,
    images: ArrayLike | torch.Tensor,
    *,
    target_layer: str,
    classifier: str | None = None,
    classes: Sequence[int] | None = None,
    batch_size: int = 16,
    device: str | torch.device | None = None,
) -> np.ndarray:
    """Class activation maps (CAM): the target layer's features weighted by the classifier's class weights.

    :math:`M_c = \\sum_k W_{ck} A_k` for features :math:`A` of shape ``(C, h, w)`` and class weights
    :math:`W` of shape ``(K, C)``; the bias is not added and no ReLU is applied (the protocol min-max
    normalises each map). For a head ``A -> global average pooling -> classifier``, the spatial mean
    of :math:`M_c` plus the bias is the class score.

    Parameters
    ----------
    model : torch.nn.Module
    images : array-like or torch.Tensor of shape (N, C, H, W)
        Preprocessed as the model expects (cast to the model's dtype).
    target_layer : str
        Dotted module path, as in ``model.named_modules()`` (``"features"``, ``"features.denseblock4"``,
        ``"layer4"``). Its output must be ``(N, C_feat, h, w)`` with ``C_feat`` the classifier's inputs.
    classifier : str or None, default=None
        Dotted path of the prediction layer (a ``Linear`` or 1x1 ``Conv2d``); None takes the model's last
        ``torch.nn.Linear``.
    classes : sequence of int or None, default=None
        Rows of the classifier's weight; None means all.
    batch_size : int, default=16
        Images per forward pass; the maps do not depend on it.
    device : str, torch.device or None, default=None
        Where the images go; None means the device of the model's parameters (cpu for a new model).
        The model is not moved.

    Returns
    -------
    maps : numpy.ndarray of float64, shape (N, len(classes), h, w)

    Raises
    ------
    DataUnavailableError
        If torch is not installed.
    InvalidParameterError
        For an unknown target layer or classifier (with close names), a target layer whose output is not
        4-D, a channel count that differs from the classifier's, or class indices out of range.
    SchemaError
        If ``images`` is not a finite (N, C, H, W) array.
    """
    torch = _torch()
    func = "class_activation_maps"
    x, dev, dtype = _validate(model, images, func=func, batch_size=batch_size, device=device)
    cname, W = _classifier_weights(model, classifier, func=func)
    cls = _classes(classes, W.shape[0], func=func, what=f"classifier {cname!r}")
    Wc = W[cls]
    out = []
    with _hooked(model, target_layer, func=func) as cap, torch.no_grad():
        for i in range(0, x.shape[0], int(batch_size)):
            model(x[i : i + batch_size].to(dev, dtype))
            a = cap.take().to("cpu", torch.float64).numpy()
            if a.shape[1] != W.shape[1]:
                raise InvalidParameterError(
                    f"target layer {target_layer!r} outputs {a.shape[1]} channels but the classifier has "
                    f"{W.shape[1]} inputs; name the layer whose (pooled) output the classifier reads."
                )
            out.append(np.einsum("kc,nchw->nkhw", Wc, a))
    return np.concatenate(out)


def grad_cam(
    model: Any,
    images: ArrayLike | torch.Tensor,
    *,
    target_layer: str,
    classes: Sequence[int] | None = None,
    batch_size: int = 16,
    device: str | torch.device | None = None,
) -> np.ndarray:
    """Grad-CAM: the target layer's features weighted by the spatially averaged gradient of the class score.

    :math:`\\alpha_{ck} = \\operatorname{mean}_{ij} \\partial y_c / \\partial A_{k,ij}` and
    :math:`M_c = \\mathrm{ReLU}(\\sum_k \\alpha_{ck} A_k)`, with :math:`y_c` the model's output for class
    ``c`` (a score before any softmax). The gradients of one batch are taken from the sum of the
    batch's scores, which equals each image's own gradient when the model treats images independently
    in evaluation mode (as convolutional classifiers do); ``batch_size=1`` makes no such assumption.

    Parameters
    ----------
    model : torch.nn.Module
        Returns class scores of shape (N, K).
    images : array-like or torch.Tensor of shape (N, C, H, W)
    target_layer : str
        Dotted module path whose output is ``(N, C_feat, h, w)``.
    classes : sequence of int or None, default=None
        Output columns; None means all K.
    batch_size : int, default=16
    device : str, torch.device or None, default=None
        Where the images go; None means the device of the model's parameters. The model is not moved.

    Returns
    -------
    maps : numpy.ndarray of float64, shape (N, len(classes), h, w)
        Non-negative.

    Raises
    ------
    DataUnavailableError
        If torch is not installed.
    InvalidParameterError
        For an unknown target layer (with close names), a target layer that is not 4-D or that the score
        does not depend on, a model output that is not (N, K), or class indices out of range.
    SchemaError
        If ``images`` is not a finite (N, C, H, W) array.
    """
    torch = _torch()
    func = "grad_cam"
    x, dev, dtype = _validate(model, images, func=func, batch_size=batch_size, device=device)
    out = []
    with _hooked(model, target_layer, func=func) as cap, torch.enable_grad():
        for i in range(0, x.shape[0], int(batch_size)):
            xb = x[i : i + batch_size].to(dev, dtype).requires_grad_(True)
            y = _scores(model(xb), xb.shape[0], func=func)
            a = cap.take()
            cls = _classes(classes, y.shape[1], func=func, what="the model's output")
            A = a.detach().to("cpu", torch.float64)
            maps = torch.empty((A.shape[0], cls.size) + tuple(A.shape[2:]), dtype=torch.float64)
            for j, c in enumerate(cls):
                (g,) = torch.autograd.grad(
                    y[:, int(c)].sum(), a, retain_graph=j < cls.size - 1, allow_unused=True
                )
                if g is None:
                    raise InvalidParameterError(
                        f"the model's scores do not depend on target layer "
                        f"{target_layer!r}; name a layer on the path to the output."
                    )
                alpha = g.detach().to("cpu", torch.float64).mean(dim=(2, 3))
                maps[:, j] = torch.relu(torch.einsum("nc,nchw->nhw", alpha, A))
            out.append(maps.numpy())
            del y, a
    return np.concatenate(out)
