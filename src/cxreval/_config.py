"""Typed models of cxreval's YAML files: the reader study (``reader``), the labeller's rules (``labeller``), a
model's YAML (``predict``) and an IQA degradation plan (``iqa``).

Each file is one pydantic v2 model (a private ``_<format>_file.py`` module of its package, imported by the
function that reads the file, so ``import cxreval`` never loads pydantic): the fields declare the keys, their
types and defaults; a field validator holds the rule of one key, a model validator the rules that join keys.
:func:`validate_config` runs the model and turns any failure into one :class:`~cxreval.exceptions.SchemaError`
naming the file and the key. A validator raises the :class:`~cxreval.exceptions.CxrevalError` of its rule
itself (the message the user reads); ``where`` (the file, as messages name it) reaches it in the validation
context, ``info.context["where"]``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from .exceptions import CxrevalError, SchemaError

if TYPE_CHECKING:
    from pydantic import BaseModel, ValidationInfo

__all__ = ["validate_config", "where"]

M = TypeVar("M", bound="BaseModel")


def validate_config(
    model: type[M], data: object, *, where: str, context: Mapping[str, Any] | None = None
) -> M:
    """``data`` (a parsed YAML file) validated by the pydantic ``model``.

    Parameters
    ----------
    model : type of pydantic.BaseModel
        The file's model.
    data : object
        The parsed file.
    where : str
        The file as messages name it (``"study file s.yaml"``), given to the validators in the context.
    context : mapping, optional
        More context for the validators.

    Returns
    -------
    config : model

    Raises
    ------
    CxrevalError
        The error a validator raised (the first in the order of the model's fields), or a
        :class:`~cxreval.exceptions.SchemaError` "WHERE, key 'a.b': what pydantic found; got VALUE."
    """
    from pydantic import ValidationError

    try:
        return model.model_validate(data, context={"where": where, **(context or {})})
    except ValidationError as exc:
        errors = exc.errors()
        for err in errors:
            cause = (err.get("ctx") or {}).get("error")
            if isinstance(cause, CxrevalError):
                raise cause from None
        err = errors[0]
        key = ".".join(map(str, err["loc"]))
        raise SchemaError(f"{where}, key {key!r}: {err['msg']}; got {err['input']!r}.") from None


def where(info: ValidationInfo) -> str:
    """The file a validator checks, as messages name it (the ``where`` of :func:`validate_config`)."""
    context = info.context or {}
    return str(context.get("where", "configuration"))
