"""Importing what models need: torch and a torch device, the optional packages (torchvision, torchxrayvision),
with a message naming the fix when one is missing or does not match torch, and a model's architecture callable
(``package.module:callable`` or ``file.py:callable``)."""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import re
from pathlib import Path
from typing import Any

from ..exceptions import DataUnavailableError, InvalidParameterError, SchemaError
from ._images import exc_text

__all__ = [
    "XRV_VERSION",
    "require_torch",
    "torch_device",
    "require_xrv",
    "require_torchvision",
    "broken_import_message",
    "import_optional",
    "import_callable",
]


XRV_VERSION = "1.5.7"


def torch_device(device: str) -> Any:
    """``torch.device(device)``, checked: an unknown name or CUDA absent -> :class:`InvalidParameterError`."""
    torch = require_torch()
    try:
        dev = torch.device(device)
    except (RuntimeError, TypeError) as exc:
        raise InvalidParameterError(f"device={device!r}: expected cpu, cuda or cuda:N.") from exc
    if dev.type == "cuda" and not torch.cuda.is_available():
        raise InvalidParameterError(
            f"device={str(device)!r}: CUDA is not available to torch on this machine; use cpu."
        )
    return dev


def require_torch() -> Any:
    try:
        import torch
    except ImportError as exc:
        raise DataUnavailableError(
            "torch is not installed; pip install 'cxreval[models]' "
            "(torch, torchvision, torchxrayvision) to run models."
        ) from exc
    return torch


def broken_import_message(what: str, exc: BaseException) -> str:
    """The message for a package that is installed but fails to import (``exc`` not an ImportError): usually a
    torchvision built for another torch (PyPI's CUDA wheel beside a CPU torch: ``operator torchvision::nms does
    not exist``), whose fix is the matching pair of wheels from one index."""
    import torch

    tv = "unknown"
    with contextlib.suppress(Exception):
        from importlib.metadata import version

        tv = version("torchvision")
    base = str(torch.__version__).split("+")[0]
    return (
        f"{what} cannot be imported ({exc_text(exc)}): torchvision {tv} does not match torch {torch.__version__} "
        "(a wheel built for another torch or CUDA). Install the matching pair from one index, e.g. pip install "
        f"--force-reinstall torch=={base} torchvision --index-url https://download.pytorch.org/whl/cpu (the CPU "
        "wheels; pick the torchvision release paired with this torch at "
        "https://pytorch.org/get-started/previous-versions/), then run again."
    )


def require_torchvision() -> Any:
    """``torchvision``, or a :class:`DataUnavailableError` naming the fix (not installed / not matching torch)."""
    require_torch()
    return import_optional(
        "torchvision",
        "torchvision is not installed ({exc}); pip install 'cxreval[models]' "
        "(torch, torchvision and torchxrayvision from the same index).",
    )


def import_optional(name: str, missing: str) -> Any:
    """The optional package ``name``, imported; a :class:`DataUnavailableError` when it is not installed
    (``missing``, its ``{exc}`` the import error) or installed but failing to import (a RuntimeError such as
    "operator torchvision::nms does not exist", an AttributeError, an OSError: :func:`broken_import_message`)."""
    try:
        return __import__(name)
    except ImportError as exc:
        raise DataUnavailableError(missing.format(exc=exc_text(exc))) from exc
    except Exception as exc:  # a broken dependency raises at import time
        raise DataUnavailableError(broken_import_message(name, exc)) from exc


def require_xrv() -> Any:
    require_torchvision()  # torchxrayvision imports it: its failure is the one to name
    return import_optional(
        "torchxrayvision",
        "torchxrayvision is not importable ({exc}); pip install 'cxreval[models]' "
        f"(torchxrayvision=={XRV_VERSION} and a torchvision that matches torch).",
    )


def import_callable(ref: str, *, base: Path, where: str) -> Any:
    if not isinstance(ref, str) or ":" not in ref:
        raise SchemaError(
            f"{where}: 'architecture' must be 'package.module:callable' or 'file.py:callable'; got {ref!r}."
        )
    mod_name, attr = ref.rsplit(":", 1)
    try:
        if mod_name.endswith(".py"):
            file = Path(mod_name) if Path(mod_name).is_absolute() else base / mod_name
            if not file.is_file():
                raise SchemaError(f"{where}: architecture file {file} does not exist.")
            uniq = "cxreval_user_arch_" + re.sub(r"\W", "_", str(file.resolve()))
            sp = importlib.util.spec_from_file_location(uniq, file)
            module = importlib.util.module_from_spec(sp)  # type: ignore[arg-type]
            sp.loader.exec_module(module)  # type: ignore[union-attr]
        else:
            module = importlib.import_module(mod_name)
    except ImportError as exc:
        raise SchemaError(
            f"{where}: cannot import the architecture module {mod_name!r} ({exc_text(exc)})."
        ) from exc
    except RuntimeError as exc:  # e.g. a torchvision that does not match torch, imported by the module
        if "torchvision" in str(exc):
            raise DataUnavailableError(
                broken_import_message(f"the architecture module {mod_name!r}", exc)
            ) from exc
        raise SchemaError(
            f"{where}: importing the architecture module {mod_name!r} fails ({exc_text(exc)})."
        ) from exc
    fn = getattr(module, attr, None)
    if not callable(fn):
        raise SchemaError(f"{where}: {mod_name!r} has no callable {attr!r}.")
    return fn
