"""The IQA metric registry: metrics register beside their code with typed, frozen metadata (the built-in
ones through :func:`._catalogue.builtin_metric`, their metadata one table).

A full-reference metric is ``f(image_true, image_test, *, data_range, **options) -> float``; a
no-reference metric is ``f(image, *, data_range, **options) -> float``. Images are single-channel float
arrays; ``data_range`` is the span of values the image type can take (255 for 8-bit, 65535 for 16-bit,
1.0 for float images in [0, 1]) and is never guessed from the data.

Examples
--------
>>> from cxreval.iqa import get_metric, list_metrics
>>> spec = get_metric("psnr")
>>> spec.reference, spec.higher_is_better
('full', True)
>>> list_metrics(reference="no")
['niqe', 'paq2piq', 'piqe', 'snr']
"""

from __future__ import annotations

import fnmatch
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from .._validation import did_you_mean
from ..exceptions import UnknownNameError

__all__ = ["MetricSpec", "register_iqa", "get_metric", "list_metrics", "metric_sign", "identity_sections"]

Reference = Literal["full", "no"]


@dataclass(frozen=True)
class MetricSpec:
    """Metadata of a registered IQA metric.

    Attributes
    ----------
    name : str
        Registry name (lower case, e.g. ``"ms_ssim"``).
    func : callable
        The metric function.
    reference : {'full', 'no'}
        Full-reference (needs the reference image) or no-reference.
    higher_is_better : bool
        Direction of quality.
    value_range : tuple of float
        Range of the score (``inf`` where unbounded).
    description : str
        One line: what it measures and its reference.
    needs_weights : bool
        True for metrics that need downloaded network weights or model parameters (optional adapters).
    """

    name: str
    func: Callable[..., float]
    reference: Reference
    higher_is_better: bool
    value_range: tuple[float, float]
    description: str = ""
    needs_weights: bool = False

    def __call__(self, *images: object, **kwargs: object) -> float:
        return self.func(*images, **kwargs)

    def to_dict(self) -> dict[str, object]:
        return {
            "name": self.name,
            "reference": self.reference,
            "higher_is_better": self.higher_is_better,
            "value_range": list(self.value_range),
            "description": self.description,
            "needs_weights": self.needs_weights,
        }


_REGISTRY: dict[str, MetricSpec] = {}


def identity_sections(
    func_name: str, identical: float, higher_is_better: bool, *, scale: float = 1.0, size: int = 64
) -> str:
    """The ``Returns`` and ``Examples`` docstring sections of a full-reference metric that gives ``identical``
    for an image compared with itself: its value, its direction, and a doctest on a random ``size x size``
    image in ``[0, scale]`` (:func:`register_iqa` appends them; one owner for the sections every such metric
    shares)."""
    better = "higher" if higher_is_better else "lower"
    return (
        f"\n\n    Returns\n    -------\n    value : float\n        {identical:g} for identical images; {better} is "
        f"better.\n\n    Examples\n    --------\n    >>> import numpy as np\n"
        f"    >>> x = np.random.default_rng(0).uniform(0, {scale:g}, ({size}, {size}))\n"
        f"    >>> round({func_name}(x, x, data_range={scale!r}), 6)\n    {float(identical)!r}\n"
    )


def register_iqa(
    name: str,
    *,
    reference: Reference,
    higher_is_better: bool,
    value_range: tuple[float, float] = (0.0, float("inf")),
    description: str = "",
    needs_weights: bool = False,
    identical: float | None = None,
    example_scale: float = 1.0,
    example_size: int = 64,
) -> Callable[[Callable[..., float]], Callable[..., float]]:
    """Decorator registering an IQA metric under ``name`` (a duplicate name is a programming error).

    With ``identical`` (the value of an image compared with itself), the function's docstring gets the
    ``Returns`` and ``Examples`` sections of :func:`identity_sections` (``example_scale``, ``example_size``:
    the example image's range and size).
    """
    if reference not in ("full", "no"):
        raise ValueError(f"reference must be 'full' or 'no', got {reference!r}")

    def deco(func: Callable[..., float]) -> Callable[..., float]:
        if identical is not None:
            func.__doc__ = (func.__doc__ or "").rstrip() + identity_sections(
                func.__name__, identical, higher_is_better, scale=example_scale, size=example_size
            )
        key = name.lower()
        if key in _REGISTRY and _REGISTRY[key].func is not func:
            raise ValueError(f"IQA metric {key!r} is registered twice")
        _REGISTRY[key] = MetricSpec(
            key,
            func,
            reference,
            higher_is_better,
            tuple(value_range),  # type: ignore[arg-type]
            description,
            needs_weights,
        )
        return func

    return deco


def _ensure_loaded() -> None:
    # importing the package imports every metric module, which registers its metrics
    from .. import iqa  # noqa: F401


def get_metric(name: str) -> MetricSpec:
    """The :class:`MetricSpec` registered as ``name``.

    Raises
    ------
    UnknownNameError
        For an unknown name (also a ``KeyError``), with close names suggested.
    """
    _ensure_loaded()
    key = str(name).lower()
    if key not in _REGISTRY:
        hint = did_you_mean(key, _REGISTRY, n=3, cutoff=0.5)
        raise UnknownNameError(
            f"Unknown IQA metric {name!r}; list_metrics() gives the {len(_REGISTRY)} registered.{hint}"
        )
    return _REGISTRY[key]


def list_metrics(reference: Reference | None = None, pattern: str = "*") -> list[str]:
    """Registered metric names, sorted; filtered by ``reference`` and a glob ``pattern``."""
    _ensure_loaded()
    return sorted(
        k
        for k, s in _REGISTRY.items()
        if (reference is None or s.reference == reference) and fnmatch.fnmatch(k, pattern)
    )


def metric_sign(metric: str, *, where: str = "scores") -> float:
    """``+1.0`` for a metric registered as higher-is-better, ``-1.0`` for lower-is-better.

    Raises
    ------
    UnknownNameError
        A metric that is not registered: its direction is unknown (never guessed).
    """
    try:
        return 1.0 if get_metric(metric).higher_is_better else -1.0
    except UnknownNameError as exc:
        raise UnknownNameError(
            f"{where}: the direction of metric {metric!r} is unknown ({exc.args[0]}); "
            "register it with register_iqa(..., higher_is_better=...), or pass "
            "orient=False to correlate the values as they are."
        ) from None
