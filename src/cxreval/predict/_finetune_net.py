"""The network ``cxreval finetune`` trains: a model spec (``xrv:``, ``torch:``, ``clip:``) rebuilt with a new
classifier, or the ChestX-ray8 recipe's network, with what ``model.yaml`` needs to rebuild it."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..exceptions import InvalidParameterError, SchemaError
from ._preprocess import Preprocessing

__all__: list[str] = []


@dataclass
class _Net:
    module: Any
    prep: Preprocessing
    architecture: str
    architecture_kwargs: dict[str, Any]
    head: str
    target_layer: str | None
    base: str
    weights: str | None


def _input_dict(prep: Any) -> dict[str, Any] | str:
    if not isinstance(prep, Preprocessing):  # a CLIP processor: the architecture's own (clip_head)
        return "architecture"
    norm: Any = (
        {"mean": list(prep.mean), "std": list(prep.std)}
        if prep.normalization == "custom"
        else prep.normalization
    )
    return {"size": int(prep.size), "channels": int(prep.channels), "normalization": norm, "crop": prep.crop}


def _build(
    model: str | None,
    recipe: str | None,
    *,
    arch: str,
    weights: str | None,
    n_out: int,
    input_size: int | None,
    weights_dir: Any,
    download: bool,
) -> _Net:
    from ._models import load_model, parse_model_spec
    from .recipes import chestxray8_net, find_classifier, replace_head

    if recipe is not None:
        kw = {"arch": arch, "n_out": n_out, "transition_channels": 1024, "pooling": "lse", "lse_r": 10.0}
        net = chestxray8_net(**kw, weights=weights)  # type: ignore[arg-type]
        prep = Preprocessing(size=input_size or 1024, channels=3, normalization="imagenet")
        return _Net(
            net,
            prep,
            "cxreval.predict.recipes:chestxray8_net",
            kw,
            "classifier",
            "transition",
            f"recipe chestxray8 ({arch})",
            weights,
        )
    assert model is not None  # finetune passes exactly one of model and recipe
    ms = parse_model_spec(model)
    if ms.kind == "clip":
        from .clip_head import absolute_clip_spec, clip_classifier

        spec = absolute_clip_spec(str(ms))
        module = clip_classifier(spec, n_out)
        return _Net(
            module,
            module.preprocessing,
            "cxreval.predict.clip_head:clip_classifier",
            {"spec": spec, "n_out": n_out},
            "classifier",
            None,
            spec,
            module.clip.weights_file,
        )
    lm = load_model(ms, weights_dir=weights_dir, download=download)
    if lm.scripted:
        raise InvalidParameterError(
            f"model={str(model)!r}: a TorchScript model cannot be rebuilt for training; give it "
            "as a state_dict with 'architecture' in its YAML."
        )
    if ms.kind == "xrv":
        import torchxrayvision as xrv

        if not isinstance(lm.module, xrv.models.DenseNet):
            raise InvalidParameterError(
                f"model={str(model)!r}: only the TorchXRayVision DenseNets can be fine-tuned."
            )
        ref, kwargs = "torchxrayvision.models:DenseNet", {"weights": None}
    else:
        cfg_path = Path(str(lm.extra["yaml"]))
        from .._validation import read_yaml_file

        cfg = read_yaml_file(cfg_path, what="Model YAML")
        if not isinstance(cfg, dict) or "architecture" not in cfg:  # load_model has checked it already
            raise SchemaError(
                f"model={str(model)!r}: {cfg_path} gives no 'architecture' to rebuild the model from."
            )
        ref = str(cfg["architecture"])
        mod, _, attr = ref.rpartition(":")
        if mod.endswith(".py") and not Path(mod).is_absolute():
            ref = f"{(cfg_path.parent / mod).resolve()}:{attr}"
        kwargs = dict(cfg.get("architecture_kwargs") or {})
    module = lm.module
    if hasattr(module, "op_threshs"):
        module.op_threshs = None
    head = find_classifier(module, lm.classifier)
    replace_head(module, head, n_out)
    return _Net(
        module,
        lm.preprocessing,
        "cxreval.predict.recipes:with_head",
        {"architecture": ref, "architecture_kwargs": kwargs, "classifier": head, "n_out": n_out},
        head,
        lm.target_layer,
        str(ms),
        lm.weights_file,
    )


def _set_trainable(module: Any, head: str, mode: str) -> list[str]:
    """Freeze ``module`` but for the submodules ``mode`` trains (returned): the classifier ``head``
    (``linear-probe``), the last stage and the classifier (``last-layer``), everything (``full``)."""
    from .recipes import last_stage

    trained = {
        "linear-probe": [head],
        "last-layer": [last_stage(module, head), head],
        "full": [""],
    }[mode]
    for p in module.parameters():
        p.requires_grad_(mode == "full")
    for t in trained:
        for p in module.get_submodule(t).parameters():
            p.requires_grad_(True)
    return trained


def _features_key(net: _Net, dicom_window: str) -> dict[str, Any]:
    """What cached features (``features.npz``) depend on: the base model, its weights file, the preprocessing,
    the classifier and the DICOM window."""
    wfile = Path(str(net.weights)) if net.weights else None
    return {
        "base": net.base,
        "weights": net.weights,
        "preprocessing": net.prep.to_dict(),
        "head": net.head,
        "dicom_window": dicom_window,
        "weights_file": [wfile.stat().st_size, wfile.stat().st_mtime_ns]
        if wfile is not None and wfile.is_file()
        else None,
    }


def _write_model_yaml(path: Path, name: str, net: _Net, findings: list[str]) -> None:
    """Write ``model.yaml``: how ``cxreval predict --model torch:model.yaml`` rebuilds the trained network."""
    cfg = {
        "name": name,
        "checkpoint": "model.pt",
        "format": "state_dict",
        "architecture": net.architecture,
        "architecture_kwargs": net.architecture_kwargs,
        "input": _input_dict(net.prep),
        "findings": findings,
        "apply_sigmoid": True,
        "target_layer": net.target_layer,
        "classifier": net.head,
    }
    import yaml

    path.write_text(yaml.safe_dump(cfg, sort_keys=False))
