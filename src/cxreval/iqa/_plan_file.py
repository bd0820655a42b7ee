"""The typed model of an IQA degradation plan (:func:`cxreval.iqa.read_plan`), pydantic v2.

A plan is a mapping with a non-empty ``degradations`` list, an optional ``seed`` (an int >= 0) and
``output_dtype`` (``same``, ``uint8``, ``uint16``, ``float32``); other keys are ignored. Each degradation is a
mapping with a ``transform`` of :data:`~cxreval.iqa.TRANSFORMS`, optional ``params`` (a list value is a grid: one
degradation per combination), ``name`` (of a single combination; default ``transform_k1v1_...``) and ``seed``.
Every name is unique and a valid file name, and every entry is tried once on a small image before any image is
written. Refusals are one :class:`~cxreval.exceptions.SchemaError` naming the plan
(:func:`cxreval._config.validate_config`).
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, ValidationInfo, field_validator, model_validator

from .._config import where
from ..exceptions import InvalidParameterError, SchemaError
from ._degrade import TRANSFORMS, apply_degradation

__all__ = ["PlanFile", "PlanEntry"]


class PlanEntry(BaseModel):
    """One degradation of the plan: one combination of its parameters."""

    model_config = ConfigDict(frozen=True)

    name: str
    transform: str
    params: dict[Any, Any]
    seed: Any = None


class PlanFile(BaseModel):
    """A degradation plan's keys, typed and checked; ``degradations`` expanded to one entry per combination."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    seed: int = 0
    output_dtype: Literal["same", "uint8", "uint16", "float32"] = "same"
    degradations: tuple[PlanEntry, ...]

    @model_validator(mode="before")
    @classmethod
    def _shape(cls, value: Any, info: ValidationInfo) -> Any:
        if (
            not isinstance(value, Mapping)
            or not isinstance(value.get("degradations"), Sequence)
            or not value["degradations"]
        ):
            raise SchemaError(f"{where(info)}: a plan is a mapping with a non-empty 'degradations' list.")
        return value

    @field_validator("seed", mode="before")
    @classmethod
    def _seed(cls, value: Any, info: ValidationInfo) -> int:
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise SchemaError(f"{where(info)}: 'seed' must be a non-negative int. Got {value!r}.")
        return value

    @field_validator("output_dtype", mode="before")
    @classmethod
    def _output_dtype(cls, value: Any, info: ValidationInfo) -> str:
        dtype = str(value)
        if dtype not in ("same", "uint8", "uint16", "float32"):
            raise SchemaError(
                f"{where(info)}: 'output_dtype' must be one of same, uint8, uint16, float32. Got {dtype!r}."
            )
        return dtype

    @field_validator("degradations", mode="before")
    @classmethod
    def _entries(cls, value: Sequence[Any], info: ValidationInfo) -> tuple[PlanEntry, ...]:
        at = where(info)
        entries: list[PlanEntry] = []
        for i, e in enumerate(value):
            if not isinstance(e, Mapping) or "transform" not in e:
                raise SchemaError(f"{at}: degradation #{i} must be a mapping with a 'transform'. Got {e!r}.")
            t = str(e["transform"])
            if t not in TRANSFORMS:
                raise SchemaError(
                    f"{at}: degradation #{i} has unknown transform {t!r}; expected one of {sorted(TRANSFORMS)}."
                )
            try:
                params = dict(e.get("params") or {})
            except (TypeError, ValueError):
                raise SchemaError(
                    f"{at}: degradation #{i} ({t}) 'params' must be a mapping of parameter names to values. "
                    f"Got {e.get('params')!r}."
                ) from None
            grids = [v if isinstance(v, list) else [v] for v in params.values()]
            combos = list(itertools.product(*grids))
            for combo in combos:
                combo_params = dict(zip(params, combo))
                for k, v in combo_params.items():
                    if isinstance(v, float) and not np.isfinite(v):
                        raise SchemaError(
                            f"{at}: degradation #{i} ({t}) has {k}: {v!r}; parameters must be finite."
                        )
                name = str(e["name"]) if "name" in e and len(combos) == 1 else _name(t, combo_params)
                if name.strip() in ("", ".", "..") or any(c in name for c in "/\\\0"):
                    raise SchemaError(
                        f"{at}: degradation #{i} has the name {name!r}; a degradation name becomes a "
                        f"file name, so it must be non-empty, not '.' or '..', without '/', '\\' or NUL."
                    )
                entries.append(PlanEntry(name=name, transform=t, params=combo_params, seed=e.get("seed")))
        return tuple(entries)

    @model_validator(mode="after")
    def _runs(self, info: ValidationInfo) -> PlanFile:
        """Names unique; every entry tried once on a small image before any image is written."""
        names = [e.name for e in self.degradations]
        dup = sorted({n for n in names if names.count(n) > 1})
        if dup:
            raise SchemaError(f"{where(info)}: degradation names must be unique; repeated: {dup}.")
        probe = np.linspace(0.0, 1.0, 64).reshape(8, 8)
        for e in self.degradations:
            try:
                apply_degradation(probe, e.transform, e.params, data_range=1.0, rng=0)
            except InvalidParameterError as exc:
                raise SchemaError(f"{where(info)}: degradation {e.name!r}: {exc}") from None
        return self


def _name(transform: str, params: Mapping[str, object]) -> str:
    return "_".join([transform] + [f"{k}{v}" for k, v in params.items()])
