"""The typed model of a ``torch:`` model's YAML file (the format in :mod:`cxreval.predict`), pydantic v2.

The fields are the file's keys; a field validator holds the rule of one key, the model validator the rules that
join keys (the checkpoint, given or beside the YAML; the format and what it needs). Refusals are one
:class:`~cxreval.exceptions.SchemaError` naming the model and its YAML (an ``input`` the preprocessing refuses
is its :class:`~cxreval.exceptions.InvalidParameterError`); see :func:`cxreval._config.validate_config`. Loading
the module (TorchScript, or the architecture and its state_dict) is ``_torch_model``'s, in ``_models.py``.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator, model_validator

from .._config import where
from ..exceptions import SchemaError
from ._preprocess import Preprocessing

__all__ = ["ModelFile", "KEYS"]

KEYS = (
    "name",
    "checkpoint",
    "format",
    "architecture",
    "architecture_kwargs",
    "input",
    "findings",
    "apply_sigmoid",
    "target_layer",
    "classifier",
    "output",
)
"""The keys of a model's YAML file."""


class ModelFile(BaseModel):
    """A model YAML's keys, typed and checked. ``input`` is the :class:`Preprocessing`, or ``'architecture'``
    (the built module's own ``preprocessing``); ``checkpoint`` the weights file, resolved and present."""

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    input: Preprocessing | str
    findings: tuple[Any, ...]
    checkpoint: Path = Field(default=None, validate_default=True)
    format: Any = None
    architecture: Any = None
    architecture_kwargs: Any = None
    name: Any = None
    apply_sigmoid: Any = False
    target_layer: Any = None
    classifier: Any = None
    output: Any = None

    @field_validator("input", mode="before")
    @classmethod
    def _input(cls, value: Any, info: ValidationInfo) -> Preprocessing | str:
        if value == "architecture":  # the architecture's own `preprocessing` (a CLIP processor)
            return "architecture"
        return Preprocessing.from_dict(value, where=where(info))

    @field_validator("findings", mode="before")
    @classmethod
    def _findings(cls, value: Any, info: ValidationInfo) -> tuple[Any, ...]:
        if not isinstance(value, list) or not value:
            raise SchemaError(
                f"{where(info)}: 'findings' must be a non-empty list (the model's outputs in order)."
            )
        return tuple(value)

    @field_validator("checkpoint", mode="before")
    @classmethod
    def _checkpoint(cls, value: Any, info: ValidationInfo) -> Path:
        """The weights file: as the YAML gives it (relative to the YAML's folder), else the path the model was
        named by (the validation context's ``checkpoint``)."""
        context = info.context or {}
        ckpt: Path | None = context.get("checkpoint")
        if value is not None:
            c = Path(str(value)).expanduser()
            ckpt = c if c.is_absolute() else Path(context["yaml"]).parent / c
        if ckpt is None:
            raise SchemaError(f"{where(info)}: give 'checkpoint' (the weights file) in the YAML.")
        if not ckpt.is_file():
            raise SchemaError(f"{where(info)}: checkpoint file {ckpt} does not exist.")
        return ckpt

    @model_validator(mode="before")
    @classmethod
    def _keys(cls, value: Any, info: ValidationInfo) -> Any:
        at = where(info)
        if not isinstance(value, Mapping):
            raise SchemaError(f"{at}: must be a YAML mapping.")
        unknown = set(value) - set(KEYS)
        if unknown:
            raise SchemaError(f"{at}: unknown key(s) {sorted(unknown)}; expected some of {sorted(KEYS)}.")
        for k in ("input", "findings"):
            if k not in value:
                raise SchemaError(f"{at}: the key {k!r} is required.")
        return dict(value)

    @model_validator(mode="after")
    def _joined(self, info: ValidationInfo) -> ModelFile:
        """The format is known and has what it needs."""
        at, fmt = where(info), self.weights_format
        if fmt not in ("torchscript", "state_dict"):
            raise SchemaError(f"{at}: 'format' must be 'torchscript' or 'state_dict'; got {fmt!r}.")
        if fmt == "torchscript" and self.input == "architecture":
            raise SchemaError(
                f"{at}: 'input: architecture' needs format state_dict and an architecture whose module "
                "has a 'preprocessing'."
            )
        if fmt == "state_dict" and "architecture" not in self.model_fields_set:
            raise SchemaError(
                f"{at}: format state_dict needs 'architecture' (the callable that builds the module)."
            )
        return self

    @property
    def weights_format(self) -> object:
        """``format``, by default ``state_dict`` with an ``architecture`` and ``torchscript`` without."""
        if "format" in self.model_fields_set:
            return self.format
        return "state_dict" if "architecture" in self.model_fields_set else "torchscript"
