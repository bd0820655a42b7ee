"""Metric selections: :func:`select_metrics` resolves ``'all'``, ``'full'``, ``'no'`` or names to registry names
(:class:`MetricSelection`), leaving out the metrics that need downloaded weights unless supplied."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ..exceptions import InvalidParameterError
from ._registry import get_metric, list_metrics

__all__ = ["select_metrics", "MetricSelection", "check_metric_names"]


_SELECTORS = ("all", "full", "no")


def check_metric_names(value: object, *, name: str, func: str, allow_none: bool = False) -> None:
    """Refuse ``value`` unless it is a sequence of metric names (each a str; one str is not a sequence of
    names), or None where ``allow_none``."""
    if value is None and allow_none:
        return
    if not (
        isinstance(value, Sequence) and not isinstance(value, str) and all(isinstance(m, str) for m in value)
    ):
        raise InvalidParameterError(
            f"The {name!r} parameter of {func} must be a sequence of metric names"
            f"{' or None' if allow_none else ''}. Got {value!r} instead."
        )


@dataclass(frozen=True)
class MetricSelection:
    """A resolved metric selection (:func:`select_metrics`).

    Attributes
    ----------
    names : tuple of str
        The metrics to score with, as the registry spells them.
    skipped : tuple of str
        Metrics a selector (``'all'``, ``'full'``, ``'no'``) left out because they need downloaded weights.
    """

    names: tuple[str, ...]
    skipped: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, object]:
        return {"metrics": list(self.names), "skipped": list(self.skipped)}


def select_metrics(
    metrics: str | Sequence[str] = "all", *, supplied: Sequence[str] = (), func: str = "select_metrics"
) -> MetricSelection:
    """Registry names of a metric selection, and the registered metrics a selector left out.

    Parameters
    ----------
    metrics : {'all', 'full', 'no'}, str or sequence of str, default='all'
        ``'all'``, ``'full'`` or ``'no'``: every registered metric (of that kind) except those that need
        downloaded network weights or model files (``needs_weights``: LPIPS, DISTS, PaQ-2-PiQ, NIQE), which
        are returned as skipped. Otherwise metric names, as a sequence or one comma-separated string; they are
        used as given (an adapter named explicitly is used), in that order, spelled as the registry spells them.
    supplied : sequence of str, default=()
        Metrics needing weights or a model file that the caller supplies (e.g. ``('niqe',)`` with a NIQE model
        in ``metric_options``): a selector includes them instead of skipping them.
    func : str, default='select_metrics'
        The function named in error messages.

    Returns
    -------
    selection : MetricSelection
        ``names``: the metrics to score with; ``skipped``: metrics a selector left out because they need
        downloaded weights (empty for explicit names).

    Raises
    ------
    InvalidParameterError
        An unknown name (with close names suggested), a name given twice, or an empty selection.

    Examples
    --------
    >>> select_metrics("psnr, SSIM").names
    ('psnr', 'ssim')
    >>> select_metrics("no")
    MetricSelection(names=('piqe', 'snr'), skipped=('niqe', 'paq2piq'))
    >>> select_metrics("no", supplied=["niqe"])
    MetricSelection(names=('niqe', 'piqe', 'snr'), skipped=('paq2piq',))
    """
    check_metric_names(supplied, name="supplied", func=func)
    try:
        given_models = {get_metric(m).name for m in supplied}
    except KeyError as exc:
        raise InvalidParameterError(f"The 'supplied' parameter of {func}: {exc.args[0]}") from None
    if isinstance(metrics, str) and metrics.strip().lower() in _SELECTORS:
        kind = metrics.strip().lower()
        every = list_metrics(reference=None if kind == "all" else kind)  # type: ignore[arg-type]
        usable = [n for n in every if not get_metric(n).needs_weights or n in given_models]
        return MetricSelection(tuple(usable), tuple(n for n in every if n not in usable))
    given = metrics.split(",") if isinstance(metrics, str) else metrics
    if isinstance(given, (bytes, Mapping)) or not isinstance(given, Sequence):
        raise InvalidParameterError(
            f"The 'metrics' parameter of {func} must be 'all', 'full', 'no', a comma-separated "
            f"string or a sequence of metric names. Got {metrics!r} instead."
        )
    names = []
    for m in given:
        if not isinstance(m, str):
            raise InvalidParameterError(
                f"The 'metrics' parameter of {func} must hold metric names (str). "
                f"Got {m!r} of type {type(m).__name__}."
            )
        if not m.strip():
            continue
        try:
            names.append(get_metric(m.strip()).name)
        except KeyError as exc:
            raise InvalidParameterError(f"The 'metrics' parameter of {func}: {exc.args[0]}") from None
    if not names:
        raise InvalidParameterError(
            f"The 'metrics' parameter of {func} names no metric. Got {metrics!r}; "
            f"list_metrics() gives the registered names."
        )
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise InvalidParameterError(f"The 'metrics' parameter of {func} names {twice} more than once.")
    return MetricSelection(tuple(names))
