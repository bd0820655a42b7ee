"""Optional adapters for deep IQA metrics that need downloaded network weights: LPIPS, DISTS, PaQ-2-PiQ.

These are not reimplemented: they call pyiqa (default) or piq, imported lazily, so cxreval itself never
needs torch. The grey image is scaled to [0, 1] by ``data_range`` and repeated to three channels (the
networks are trained on RGB), in float32 on the CPU. When the package, torch or the weights are not
available (offline, no cache) a :class:`~cxreval.exceptions.DataUnavailableError` says which and how to
get them.

References
----------
.. [1] R. Zhang, P. Isola, A. A. Efros, E. Shechtman and O. Wang, "The unreasonable effectiveness of deep
   features as a perceptual metric", CVPR 2018. doi:10.1109/CVPR.2018.00068
.. [2] K. Ding, K. Ma, S. Wang and E. P. Simoncelli, "Image quality assessment: unifying structure and
   texture similarity", IEEE TPAMI 44(5):2567-2581, 2022. doi:10.1109/TPAMI.2020.3045810
.. [3] Z. Ying, H. Niu, P. Gupta, D. Mahajan, D. Ghadiyaram and A. Bovik, "From patches to pictures
   (PaQ-2-PiQ): mapping the perceptual space of picture quality", CVPR 2020.
   doi:10.1109/CVPR42600.2020.00363
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Callable
from typing import Any

import numpy as np

from .._validation import check_choice
from ..exceptions import DataUnavailableError
from ._catalogue import builtin_metric
from ._image import check_data_range, check_image, check_pair

__all__ = ["lpips", "dists", "paq2piq"]

_HINT = (
    "install them in the environment (pip install torch torchvision; pip install pyiqa --no-deps or "
    "pip install piq) and make the weights available (a first run online downloads them into "
    "~/.cache/torch/hub)"
)


def _import(name: str) -> Any:
    try:
        return importlib.import_module(name)
    except Exception as exc:  # ImportError, or a broken torch install
        raise DataUnavailableError(
            f"This metric is an optional adapter that needs the package {name!r}, which "
            f"cannot be imported ({type(exc).__name__}: {exc}); {_HINT}."
        ) from exc


@functools.lru_cache(maxsize=8)
def _model(metric: str, backend: str) -> Any:
    torch = _import("torch")
    try:
        if backend == "pyiqa":
            pyiqa = _import("pyiqa")
            return pyiqa.create_metric(metric, device=torch.device("cpu"), as_loss=False)
        piq = _import("piq")
        cls = {"lpips": "LPIPS", "dists": "DISTS"}[metric]
        return getattr(piq, cls)(reduction="none")
    except DataUnavailableError:
        raise
    except Exception as exc:
        raise DataUnavailableError(
            f"The network weights of {metric!r} ({backend}) are unavailable: "
            f"{type(exc).__name__}: {exc}. {_HINT}."
        ) from exc


def _tensor(image: np.ndarray, data_range: float) -> Any:
    torch = _import("torch")
    t = torch.from_numpy(np.clip(image / data_range, 0.0, 1.0).astype(np.float32))
    return t[None, None].repeat(1, 3, 1, 1)


def _run_fr(metric: str, image_true: object, image_test: object, data_range: object, backend: str) -> float:
    x, y, dr = check_pair(image_true, image_test, data_range, func=metric, min_size=16)
    backend = check_choice(backend, ("pyiqa", "piq"), name="backend", func=metric)
    net = _model(metric, backend)
    torch = _import("torch")
    with torch.no_grad():
        out = net(_tensor(y, dr), _tensor(x, dr))
    return float(out.reshape(-1)[0])


def _fr_adapter(metric: str, title: str) -> Callable[..., float]:
    """The full-reference adapter function of ``metric`` (LPIPS and DISTS share signature and docstring)."""

    def adapter(
        image_true: np.ndarray, image_test: np.ndarray, *, data_range: float, backend: str = "pyiqa"
    ) -> float:
        return _run_fr(metric, image_true, image_test, data_range, backend)

    adapter.__name__ = adapter.__qualname__ = metric
    adapter.__doc__ = f"""{title}, an optional adapter.

    Parameters
    ----------
    image_true, image_test : array-like of shape (H, W)
    data_range : float
    backend : {{'pyiqa', 'piq'}}, default='pyiqa'

    Returns
    -------
    value : float
        0 for identical images; lower is better.

    Raises
    ------
    DataUnavailableError
        When torch, the backend or the network weights are unavailable.
    """
    return adapter


lpips = builtin_metric("lpips")(_fr_adapter("lpips", "Learned perceptual image patch similarity (LPIPS)"))
dists = builtin_metric("dists")(_fr_adapter("dists", "Deep image structure and texture similarity (DISTS)"))


@builtin_metric("paq2piq")
def paq2piq(image: np.ndarray, *, data_range: float) -> float:
    """PaQ-2-PiQ no-reference quality score, an optional adapter through pyiqa.

    Parameters
    ----------
    image : array-like of shape (H, W)
    data_range : float

    Returns
    -------
    value : float
        About 0..100; higher is better.

    Raises
    ------
    DataUnavailableError
        When torch, pyiqa or the network weights are unavailable.
    """
    x = check_image(image, func="paq2piq", min_size=16)
    dr = check_data_range(data_range, func="paq2piq")
    net = _model("paq2piq", "pyiqa")
    torch = _import("torch")
    with torch.no_grad():
        out = net(_tensor(x, dr))
    return float(out.reshape(-1)[0])
