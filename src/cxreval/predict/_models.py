"""Model specifications: ``xrv:<weights name>`` and ``torch:<checkpoint or YAML>``, loaded for inference.

``xrv:<name>``
    A TorchXRayVision classifier, built the way torchxrayvision builds it: ``xrv.models.get_model(name)``
    (``DenseNet(weights=name)`` / ``ResNet(weights=name)``) or, for ``jfhealthcare``,
    ``xrv.baseline_models.jfhealthcare.DenseNet()``. torchxrayvision downloads the weights file on first
    use into ``~/.torchxrayvision/models_data/`` (or ``weights_dir``); when that cannot happen (no
    internet), :func:`load_model` raises a :class:`~cxreval.exceptions.DataUnavailableError` naming the
    URL and the exact path where the file must be put. Outputs are ``model.targets`` in order; an output
    with an empty label (not trained by these weights) or without an operating point (its calibrated
    output is the constant 0.5) is left out and listed as such in the finding mapping. Scores are the
    model's own output: for the published weights, torchxrayvision's operating-point calibrated
    probabilities.

``torch:<path>``
    A user's model with a small YAML beside it (``model.pt`` -> ``model.yaml``), or the YAML itself::

        name: my-densenet            # the 'model' column (default: the file's stem)
        checkpoint: model.pt         # relative to the YAML (default: the spec's own file)
        format: state_dict           # torchscript (default without 'architecture') or state_dict
        architecture: torchxrayvision.models:DenseNet   # 'package.module:callable' or 'file.py:callable'
        architecture_kwargs: {weights: null, num_classes: 3}
        input: {size: 224, channels: 1, normalization: xrv, crop: center}   # see cxreval.predict.Preprocessing
                                     # or 'architecture': the built module's own `preprocessing` (a CLIP
                                     # processor; cxreval.predict.clip_head)
        findings: [Atelectasis, Effusion, ""]   # the output order; "" or null: an output to leave out
        apply_sigmoid: false         # true: scores are sigmoid(output)
        target_layer: features       # for --heatmaps (CAM needs an eager module, not TorchScript)
        classifier: classifier       # optional; default the last torch.nn.Linear

Every ``torch:`` model is checked with one forward pass of a blank input when it is loaded, so a wrong input
size, channel count or number of findings fails before any image is read.
"""

from __future__ import annotations

import contextlib
import os
import sys
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import pandas as pd

from .._typing import PathLike
from .._validation import read_yaml_file
from ..exceptions import DataUnavailableError, InvalidParameterError, SchemaError
from ..findings import canonical_finding
from ._images import exc_text
from ._imports import (
    import_callable,
    require_torch,
    require_xrv,
    torch_device,
)
from ._preprocess import Preprocessing

__all__ = [
    "MODEL_KINDS",
    "XRV_WEIGHTS",
    "ModelSpec",
    "LoadedModel",
    "parse_model_spec",
    "load_model",
    "WeightsLocation",
    "xrv_weights_path",
]

XRV_WEIGHTS: tuple[str, ...] = (
    "densenet121-res224-all",
    "densenet121-res224-nih",
    "densenet121-res224-pc",
    "densenet121-res224-chex",
    "densenet121-res224-rsna",
    "densenet121-res224-mimic_nb",
    "densenet121-res224-mimic_ch",
    "resnet50-res512-all",
    "jfhealthcare",
)
"""The TorchXRayVision classifier weights ``xrv:`` accepts (torchxrayvision 1.5.7)."""

_JF_URL = (
    "https://github.com/mlmed/torchxrayvision/releases/download/v1/"
    "baseline_models_jfhealthcare-DenseNet121_pre_train.pth"
)


@dataclass(frozen=True)
class ModelSpec:
    """A parsed ``--model`` value: ``kind`` is ``'xrv'``, ``'torch'`` or ``'clip'``, ``value`` the rest."""

    kind: str
    value: str

    def __str__(self) -> str:
        return f"{self.kind}:{self.value}"


MODEL_KINDS: tuple[str, ...] = ("xrv", "torch", "clip")
"""The ``--model KIND:VALUE`` kinds."""

_SPEC_FORMS = (
    "'xrv:<weights name>' (e.g. xrv:densenet121-res224-all), 'torch:<checkpoint or YAML path>', "
    "'clip:open_clip:ARCH:CHECKPOINT', 'clip:open_clip:local-dir:FOLDER', 'clip:open_clip:hf-hub:ORG/NAME', "
    "'clip:hf:FOLDER' or 'clip:hf:ORG/NAME'"
)


def parse_model_spec(spec: str | ModelSpec) -> ModelSpec:
    """Parse ``xrv:<weights>``, ``torch:<path>`` or ``clip:...``; unknown weight names fail with the known ones."""
    if isinstance(spec, ModelSpec):
        return spec
    if not isinstance(spec, str) or ":" not in spec:
        raise InvalidParameterError(f"model={spec!r}: expected {_SPEC_FORMS}.")
    kind, value = spec.split(":", 1)
    kind = kind.strip().lower()
    if kind not in MODEL_KINDS:
        raise InvalidParameterError(f"model={spec!r}: unknown model kind {kind!r}; expected {_SPEC_FORMS}.")
    if not value.strip():
        raise InvalidParameterError(f"model={spec!r}: nothing after '{kind}:'; expected {_SPEC_FORMS}.")
    if kind == "xrv" and value not in XRV_WEIGHTS:
        raise InvalidParameterError(
            f"model={spec!r}: unknown TorchXRayVision weights {value!r}; known: {list(XRV_WEIGHTS)}."
        )
    if kind == "clip":
        from .clip import parse_clip_spec

        parse_clip_spec(value.strip(), spec=spec)
    return ModelSpec(kind, value.strip())


@dataclass(frozen=True)
class LoadedModel:
    """A model ready for inference.

    Attributes
    ----------
    name : str
        The ``model`` column of the predictions.
    spec : str
    module : torch.nn.Module
        In evaluation mode, on the requested device.
    preprocessing : Preprocessing
    outputs : tuple of str
        The model's output names, in output order.
    findings : tuple of (str or None)
        The canonical finding of each output; None for an output left out (see ``notes``).
    notes : tuple of str
        Per output: how the name was mapped, or why the output is left out.
    apply_sigmoid : bool
    target_layer, classifier : str or None
        Defaults for CAM heatmaps.
    weights_file : str or None
    """

    name: str
    spec: str
    module: Any
    preprocessing: Preprocessing
    outputs: tuple[str, ...]
    findings: tuple[str | None, ...]
    notes: tuple[str, ...]
    apply_sigmoid: bool = False
    target_layer: str | None = None
    classifier: str | None = None
    weights_file: str | None = None
    scripted: bool = False
    extra: Mapping[str, object] = field(default_factory=dict)

    @property
    def used(self) -> np.ndarray:
        """Indices of the outputs that are written (those with a finding)."""
        return np.array([i for i, f in enumerate(self.findings) if f is not None], dtype=np.int64)

    def mapping_table(self) -> pd.DataFrame:
        """``model, output_index, output_name, finding, written, note``: the finding mapping used."""
        return pd.DataFrame(
            {
                "model": self.name,
                "output_index": np.arange(len(self.outputs)),
                "output_name": list(self.outputs),
                "finding": [f or "" for f in self.findings],
                "written": [f is not None for f in self.findings],
                "note": list(self.notes),
            }
        )

    def describe(self) -> dict[str, object]:
        return {
            "name": self.name,
            "spec": self.spec,
            "preprocessing": self.preprocessing.to_dict(),
            "preprocessing_steps": self.preprocessing.steps(),
            "outputs": list(self.outputs),
            "findings": [f or "" for f in self.findings],
            "apply_sigmoid": self.apply_sigmoid,
            "target_layer": self.target_layer,
            "classifier": self.classifier,
            "weights_file": self.weights_file,
            **dict(self.extra),
        }


def _map_outputs(
    names: list[str | None], *, where: str, skip: Mapping[int, str] | None = None
) -> tuple[tuple[str | None, ...], tuple[str, ...]]:
    findings: list[str | None] = []
    notes: list[str] = []
    seen: dict[str, int] = {}
    for i, n in enumerate(names):
        if skip and i in skip:
            findings.append(None)
            notes.append(skip[i])
            continue
        if n is None or n.strip() == "":
            findings.append(None)
            notes.append("left out: output has no name (not trained by these weights)")
            continue
        c = canonical_finding(n, where=f"{where}, output {i}")
        if c in seen:
            raise SchemaError(
                f"{where}: outputs {seen[c]} ({names[seen[c]]!r}) and {i} ({n!r}) are both the finding "
                f"{c!r}; give each output a different finding (or '' to leave one out)."
            )
        seen[c] = i
        findings.append(c)
        notes.append("same name" if c == n else f"alias {n!r} -> {c!r} (cxreval.findings.ALIASES)")
    if not seen:
        raise SchemaError(f"{where}: no output has a finding name; nothing would be written.")
    return tuple(findings), tuple(notes)


class WeightsLocation(NamedTuple):
    """What :func:`xrv_weights_path` returns: the URL of a weights file and where torchxrayvision keeps it."""

    url: str
    path: Path


def xrv_weights_path(name: str, *, weights_dir: PathLike | None = None) -> WeightsLocation:
    """(URL, local path) where torchxrayvision looks for the weights file of ``name``."""
    xrv = require_xrv()
    if name == "jfhealthcare":
        return WeightsLocation(
            _JF_URL, Path("~/.torchxrayvision/models_data").expanduser() / os.path.basename(_JF_URL)
        )
    url = xrv.models.model_urls[name]["weights_url"]
    folder = Path(weights_dir).expanduser() if weights_dir is not None else Path(xrv.utils.get_cache_dir())
    return WeightsLocation(url, folder / os.path.basename(url))


def _no_weights_message(name: str, url: str, path: Path, why: str) -> str:
    return (
        f"TorchXRayVision weights {name!r}: {why}. Download {url} on a machine with internet access and put "
        f"the file at {path}"
        + (
            " (or put it in a folder of your choice and pass weights_dir=FOLDER)"
            if name != "jfhealthcare"
            else ""
        )
        + ", then run again."
    )


def _load_xrv(name: str, *, weights_dir: PathLike | None, download: bool) -> tuple[Any, Path, str]:
    xrv = require_xrv()
    if name == "jfhealthcare" and weights_dir is not None:
        raise InvalidParameterError(
            "xrv:jfhealthcare always reads its weights from ~/.torchxrayvision/models_data "
            "(torchxrayvision offers no other folder); drop weights_dir=."
        )
    url, path = xrv_weights_path(name, weights_dir=weights_dir)
    if not path.is_file() and not download:
        raise DataUnavailableError(
            _no_weights_message(name, url, path, "the weights file is not there and downloading is off")
        )
    try:
        with contextlib.redirect_stdout(sys.stderr):  # torchxrayvision prints progress to stdout
            if name == "jfhealthcare":
                module = xrv.baseline_models.jfhealthcare.DenseNet()
            else:
                module = xrv.models.get_model(
                    name, cache_dir=None if weights_dir is None else str(weights_dir)
                )
    except Exception as exc:  # download errors come as requests/OS/HTTP errors
        if not path.is_file():
            raise DataUnavailableError(  # the failure summarised: without requests' chained traceback
                _no_weights_message(name, url, path, f"the download failed ({exc_text(exc)})")
            ) from None
        raise DataUnavailableError(
            f"TorchXRayVision weights {name!r}: the file {path} could not be loaded "
            f"({exc_text(exc)}); it may be truncated or not the file from {url}. "
            "Delete it and download it again."
        ) from exc
    return module, path, url


def _xrv_model(spec: ModelSpec, *, weights_dir: PathLike | None, download: bool) -> LoadedModel:
    xrv = require_xrv()
    module, path, url = _load_xrv(spec.value, weights_dir=weights_dir, download=download)
    targets = list(module.targets)
    skip: dict[int, str] = {}
    th = getattr(module, "op_threshs", None)
    if th is not None:
        t = th.detach().cpu().numpy()
        skip = {
            i: "left out: no operating point in torchxrayvision (its calibrated output is the constant 0.5)"
            for i in range(len(targets))
            if targets[i] and not np.isfinite(t[i])
        }
    findings, notes = _map_outputs(list(targets), where=f"model xrv:{spec.value}", skip=skip)
    if isinstance(module, xrv.models.DenseNet):
        size, target, clf = 224, "features", "classifier"
    elif isinstance(module, xrv.models.ResNet):
        size, target, clf = 512, "model.layer4", "model.fc"
    else:  # jfhealthcare: resized to 512 in its forward
        size, target, clf = 512, None, None
    size = int(getattr(module, "input_resolution", size))
    return LoadedModel(
        spec.value,
        str(spec),
        module,
        Preprocessing(size=size, channels=1, normalization="xrv"),
        tuple(map(str, targets)),
        findings,
        notes,
        False,
        target,
        clf,
        str(path),
        extra={"weights_url": url, "torchxrayvision": getattr(xrv, "__version__", "")},
    )


def _state_dict(obj: object, *, where: str) -> dict[str, Any]:
    torch = require_torch()
    for key in ("state_dict", "model_state_dict", "model"):
        if isinstance(obj, Mapping) and key in obj and isinstance(obj[key], Mapping):
            obj = obj[key]
            break
    if not isinstance(obj, Mapping) or not obj or not all(isinstance(v, torch.Tensor) for v in obj.values()):
        raise SchemaError(
            f"{where}: the checkpoint is not a state_dict (a mapping of parameter names to tensors, "
            "possibly under 'state_dict')."
        )
    sd = dict(obj)
    if all(k.startswith("module.") for k in sd):  # saved from nn.DataParallel
        sd = {k[len("module.") :]: v for k, v in sd.items()}
    return sd


def _torch_model(spec: ModelSpec) -> LoadedModel:
    torch = require_torch()

    p = Path(spec.value).expanduser()
    if p.suffix.lower() in (".yaml", ".yml"):
        cfg_path, ckpt = p, None
    else:
        cands = [p.with_suffix(".yaml"), p.with_suffix(".yml")]
        cfg_path = next((c for c in cands if c.is_file()), cands[0])
        ckpt = p
    where = f"model {spec} (YAML {cfg_path})"
    if not cfg_path.is_file():
        raise SchemaError(
            f"model {spec}: the YAML describing it ({cfg_path}) does not exist; it must give input "
            "size, channels, normalization and the output findings in order (see cxreval.predict)."
        )
    from .._config import validate_config
    from ._model_file import ModelFile

    cfg = validate_config(
        ModelFile,
        read_yaml_file(cfg_path, what="Model YAML"),
        where=where,
        context={"yaml": cfg_path, "checkpoint": ckpt},
    )
    ckpt = cfg.checkpoint
    from_arch = cfg.input == "architecture"
    prep: Any = None if isinstance(cfg.input, str) else cfg.input
    fl, fmt = cfg.findings, cfg.weights_format
    if fmt == "torchscript":
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", DeprecationWarning)
                module = torch.jit.load(str(ckpt), map_location="cpu")
        except (RuntimeError, ValueError) as exc:
            raise SchemaError(
                f"{where}: {ckpt} is not a TorchScript file ({exc_text(exc)}); for a state_dict set "
                "format: state_dict and architecture."
            ) from exc
    else:
        build = import_callable(cfg.architecture, base=cfg_path.parent, where=where)
        kwargs = cfg.architecture_kwargs or {}
        if not isinstance(kwargs, Mapping):
            raise SchemaError(f"{where}: 'architecture_kwargs' must be a mapping.")
        with contextlib.redirect_stdout(sys.stderr):
            module = build(**kwargs)
        if not isinstance(module, torch.nn.Module):
            raise SchemaError(
                f"{where}: architecture {cfg.architecture!r} returned {type(module).__name__}, "
                "not a torch.nn.Module."
            )
        try:
            obj = torch.load(str(ckpt), map_location="cpu", weights_only=True)
        except Exception as exc:  # pickle / zip errors of many kinds
            raise SchemaError(
                f"{where}: cannot read checkpoint {ckpt} with torch.load(weights_only=True) "
                f"({exc_text(exc)})."
            ) from exc
        try:
            module.load_state_dict(_state_dict(obj, where=f"{where}, checkpoint {ckpt}"), strict=True)
        except RuntimeError as exc:
            raise SchemaError(
                f"{where}: checkpoint {ckpt} does not fit the architecture: {exc_text(exc)}"
            ) from exc
        if from_arch:
            prep = getattr(module, "preprocessing", None)
            if prep is None or not hasattr(prep, "apply"):
                raise SchemaError(
                    f"{where}: 'input: architecture' but the module built by {cfg.architecture!r} "
                    "has no 'preprocessing'; give input: {size, channels, normalization}."
                )
    findings, notes = _map_outputs([None if f is None else str(f) for f in fl], where=where)
    name = str(cfg.name or ckpt.stem)
    return LoadedModel(
        name,
        str(spec),
        module,
        prep,
        tuple("" if f is None else str(f) for f in fl),
        findings,
        notes,
        bool(cfg.apply_sigmoid),
        cfg.target_layer,
        cfg.classifier,
        str(ckpt),
        scripted=fmt == "torchscript",
        extra={"format": fmt, "yaml": str(cfg_path)},
    )


def _clip_model(spec: ModelSpec, *, prompts: Any, zero_shot_rule: str) -> LoadedModel:
    require_torch()
    from .clip import zero_shot_model

    parts = zero_shot_model(str(spec), spec.value, prompts=prompts, zero_shot_rule=zero_shot_rule)
    outs = tuple(parts["outputs"])
    findings, notes = _map_outputs(list(outs), where=f"model {spec}")
    return LoadedModel(
        parts["name"],
        str(spec),
        parts["module"],
        parts["preprocessing"],
        outs,
        findings,
        notes,
        False,
        None,
        None,
        parts["weights_file"],
        extra=parts["extra"],
    )


def load_model(
    spec: str | ModelSpec,
    *,
    device: str = "cpu",
    weights_dir: PathLike | None = None,
    download: bool = True,
    prompts: str | os.PathLike[str] | Any = None,
    zero_shot_rule: str = "softmax",
) -> LoadedModel:
    """Load a model from its spec, put it in evaluation mode on ``device`` and check it with a blank input.

    Parameters
    ----------
    spec : str or ModelSpec
        ``xrv:<weights name>`` (one of :data:`XRV_WEIGHTS`) or ``torch:<checkpoint or YAML path>``.
    device : str, default='cpu'
        ``cpu``, ``cuda`` or ``cuda:N``.
    weights_dir : path, optional
        Folder holding TorchXRayVision weight files (default torchxrayvision's ``~/.torchxrayvision/models_data``).
    download : bool, default=True
        Let torchxrayvision download missing weights; False fails at once, naming where to put the file.
    prompts : str, path or PromptSet, optional
        For ``clip:`` models: a built-in prompt set (``chestxray14``, the default, or ``chexpert``) or a prompt
        YAML (:mod:`cxreval.predict`).
    zero_shot_rule : {'softmax', 'max-cosine'}, default='softmax'
        For ``clip:`` models: CheXzero's softmax of positive vs negative prompts, or XQA's maximum cosine over the
        positive prompts (:mod:`cxreval.predict.clip`).

    Raises
    ------
    DataUnavailableError
        torch / torchxrayvision missing, or weights neither present nor downloadable (the message says
        where to put the file).
    SchemaError
        A YAML, checkpoint or architecture that does not fit, unknown finding names, or a number of outputs
        different from the number of findings.
    InvalidParameterError
        An unknown spec or device.
    """
    ms = parse_model_spec(spec)  # an unknown kind is named before torch is looked for
    from .._validation import check_choice
    from .clip import ZERO_SHOT_RULES

    check_choice(zero_shot_rule, ZERO_SHOT_RULES, name="zero_shot_rule", func="load_model")
    torch = require_torch()
    dev = torch_device(device)
    if ms.kind == "clip":
        lm = _clip_model(ms, prompts=prompts, zero_shot_rule=zero_shot_rule)
    else:
        lm = (
            _xrv_model(ms, weights_dir=weights_dir, download=download)
            if ms.kind == "xrv"
            else _torch_model(ms)
        )
    lm.module.to(dev).eval()
    if ms.kind in (
        "xrv",
        "clip",
    ):  # torchxrayvision's own architectures: output count = len(targets) by construction
        return lm
    prep = lm.preprocessing
    lo, hi = (
        (-1024.0, 1024.0) if getattr(prep, "normalization", None) == "xrv" else (0.0, 1.0)
    )  # a ramp over the input range
    x = torch.linspace(lo, hi, prep.channels * prep.size * prep.size, device=dev).reshape(
        1, prep.channels, prep.size, prep.size
    )
    try:
        with torch.no_grad(), contextlib.redirect_stdout(sys.stderr):
            y = lm.module(x)
    except Exception as exc:  # shape / dtype errors of the user's model
        raise SchemaError(
            f"model {lm.spec}: a blank input of shape {tuple(x.shape)} (from its preprocessing) "
            f"fails in its forward pass ({exc_text(exc)})."
        ) from exc
    if not isinstance(y, torch.Tensor) or y.ndim != 2 or y.shape[1] != len(lm.outputs):
        got = f"shape {tuple(y.shape)}" if isinstance(y, torch.Tensor) else type(y).__name__
        raise SchemaError(
            f"model {lm.spec}: its forward pass returns {got} for one image; expected (1, "
            f"{len(lm.outputs)}), one score per listed finding {list(lm.outputs)}."
        )
    return lm
