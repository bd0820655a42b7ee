"""Zero-shot scoring with CLIP-style vision-language models: ``clip:open_clip:...`` and ``clip:hf:PATH``.

Specs
-----
``clip:open_clip:ARCH:FILE``
    An open_clip model: ``ARCH`` is one of open_clip's built-in model names (``ViT-B-32``) or the path of an
    open_clip model config (``.json``: ``embed_dim``, ``vision_cfg``, ``text_cfg``), ``FILE`` the checkpoint.
``clip:open_clip:local-dir:FOLDER``
    An open_clip model folder (``open_clip_config.json`` + weights), e.g. BiomedCLIP as downloaded from the Hub.
``clip:hf:FOLDER``
    A Hugging Face CLIP-style model folder (``config.json``, weights, tokenizer files,
    ``preprocessor_config.json``), loaded with ``transformers`` (``AutoModel``, ``AutoTokenizer``,
    ``AutoImageProcessor``) with ``local_files_only=True``.
``clip:open_clip:hf-hub:ORG/NAME``, ``clip:hf:ORG/NAME`` (or ``clip:hf:hf-hub:ORG/NAME``)
    A model on the Hugging Face Hub, by its id. cxreval first looks for the model's folder in
    :func:`hub_model_folder` (``$CXREVAL_CACHE/models/ORG/NAME``, default ``~/.cache/cxreval/models/ORG/NAME``)
    and loads it from there when it holds the model; otherwise open_clip (``create_model("hf-hub:ORG/NAME")``) or
    transformers (``from_pretrained("ORG/NAME")``) fetch it from the Hub into the Hugging Face cache. Offline (no
    network, ``HF_HUB_OFFLINE=1``) and without that folder, a :class:`~cxreval.exceptions.DataUnavailableError`
    names the folder to put the model's files in.

Files and folders are never downloaded: a missing one raises :class:`~cxreval.exceptions.DataUnavailableError`
saying what to put where.

Scores: the zero-shot rule
--------------------------
Each prompt is encoded and L2-normalised; ``f`` is the normalised image embedding. ``zero_shot_rule`` chooses
how a finding's score is made from its prompts (:mod:`.prompts`):

``softmax`` (the default; CheXzero, Tiu et al., 2022, *Nature Biomedical Engineering*)
    The positive prompts (``"atelectasis"``) and the negative prompts (``"no atelectasis"``) of a finding are
    each ensembled as in CLIP (Radford et al., 2021): the mean of their normalised embeddings, normalised again
    (``p``, ``n``). With ``t`` the temperature (the model's learned ``logit_scale.exp()`` unless the prompt file
    sets ``temperature``) the score is the softmax over the two sides, a number in (0, 1)::

        score = exp(t * f.p) / (exp(t * f.p) + exp(t * f.n))

    Every finding needs negative prompts.
``max-cosine`` (XQA, section 2: ``s_k = max_{t in T_k} S(v, l_t)``, "which serves as a logit")
    The largest cosine similarity between the image and the finding's positive prompts, each prompt on its
    own (no ensembling, no temperature, negative prompts unused), a number in [-1, 1]::

        score = max_t f.l_t

Both are rank-based for an AUC only within a finding: the softmax is a monotone function of ``f.p - f.n``, the
max-cosine of the best-matching prompt alone, so the two rules rank the images differently and give different
AUCs. ``models.json`` and ``run.json`` state the rule used.

Preprocessing
-------------
The model's own image processor (open_clip's validation transform built from the model's ``preprocess_cfg``;
the folder's ``AutoImageProcessor`` for ``hf``) is applied to an 8-bit RGB image: the stored values are scaled
to ``[0, 1]`` by the file's bit depth (``v / max``), averaged over colour channels, rounded to 8 bits
(``round(255 * x)``) and repeated in three channels. These models read 8-bit RGB images, so a 16-bit
radiograph is reduced to 8 bits here, and ``models.json`` says so.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..exceptions import DataUnavailableError, InvalidParameterError, SchemaError
from ..io.images import LoadedImage
from ._images import exc_text
from ._preprocess import scale_pixels
from ._prompts import PromptSet, load_prompts
from ._zero_shot import ZeroShotCLIP, encode_prompts, max_cosine_module, normalized_prompts

__all__: list[str] = []

CLIP_BACKENDS: tuple[str, ...] = ("open_clip", "hf")

ZERO_SHOT_RULES: tuple[str, ...] = ("softmax", "max-cosine")
"""How a zero-shot score is made from a finding's prompts (module docstring): CheXzero's and XQA's rules."""


def require_open_clip() -> Any:
    from ._imports import import_optional, require_torchvision

    require_torchvision()  # open_clip imports it: its failure is the one to name
    return import_optional(
        "open_clip",
        "open_clip is not importable ({exc}); pip install open_clip_torch "
        "(see the README: cxreval[models] with the CPU torch wheel).",
    )


def require_transformers() -> Any:
    from ._imports import import_optional

    return import_optional(
        "transformers",
        "transformers is not importable ({exc}); pip install transformers "
        "(see the README: cxreval[models] with the CPU torch wheel).",
    )


@dataclass(frozen=True)
class ClipSpec:
    """A parsed ``clip:`` value: ``backend`` (``open_clip``/``hf``), ``arch`` (open_clip only) and ``path``."""

    backend: str
    arch: str
    path: str

    def __str__(self) -> str:
        return (
            f"clip:{self.backend}:{self.arch}:{self.path}"
            if self.backend == "open_clip"
            else f"clip:hf:{self.path}"
        )


_HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")


def _hub_id(repo: str, spec: str) -> str:
    if not _HUB_ID.match(repo) or ".." in repo:
        raise InvalidParameterError(f"model={spec!r}: {repo!r} is not a Hugging Face Hub id (ORG/NAME).")
    return repo


def parse_clip_spec(value: str, *, spec: str) -> ClipSpec:
    """``open_clip:ARCH:FILE`` / ``open_clip:local-dir:FOLDER`` / ``open_clip:hf-hub:ORG/NAME`` / ``hf:FOLDER`` /
    ``hf:ORG/NAME`` / ``hf:hf-hub:ORG/NAME`` (the part after ``clip:``). ``hf:X`` is a Hub id when ``X`` has the
    form ``ORG/NAME`` and no such folder exists here."""
    backend, _, rest = value.partition(":")
    rest = rest.strip()
    if backend == "hf" and rest:
        if rest.startswith("hf-hub:"):
            return ClipSpec("hf", "hub", _hub_id(rest[len("hf-hub:") :].strip(), spec))
        if _HUB_ID.match(rest) and not Path(rest).expanduser().exists():
            return ClipSpec("hf", "hub", rest)
        return ClipSpec("hf", "", rest)
    if backend == "open_clip":
        arch, _, path = rest.partition(":")
        if arch.strip() == "hf-hub" and path.strip():
            return ClipSpec("open_clip", "hf-hub", _hub_id(path.strip(), spec))
        if arch.strip() and path.strip():
            return ClipSpec("open_clip", arch.strip(), path.strip())
    raise InvalidParameterError(
        f"model={spec!r}: expected clip:open_clip:ARCH:CHECKPOINT, "
        "clip:open_clip:local-dir:FOLDER, clip:open_clip:hf-hub:ORG/NAME, clip:hf:FOLDER or "
        "clip:hf:ORG/NAME."
    )


def hub_model_folder(repo: str) -> Path:
    """Where cxreval looks for the files of the Hub model ``repo`` (``ORG/NAME``) before asking the Hub:
    ``<cache>/models/ORG/NAME`` (the cache of :func:`cxreval.datasets.resolve_cache_dir`)."""
    from ..datasets._fetch import resolve_cache_dir

    org, name = repo.split("/", 1)
    return resolve_cache_dir() / "models" / org / name


def _hub_unavailable(spec: str, repo: str, exc: BaseException, files: str) -> DataUnavailableError:
    folder = hub_model_folder(repo)
    return DataUnavailableError(
        f"model={spec!r}: {repo} is not in {folder} and could not be fetched from the Hugging Face Hub "
        f"({exc_text(exc)}). On a machine with internet access run huggingface_hub.snapshot_download({repo!r}, "
        f"local_dir=...) and put the folder's files ({files}) in {folder}, then run again."
    )


def to_rgb8(img: LoadedImage) -> Any:
    """The 8-bit RGB PIL image a CLIP processor reads (see the module docstring)."""
    from PIL import Image

    grey = scale_pixels(img, "unit")
    g8 = np.rint(np.clip(grey, 0.0, 1.0) * 255.0).astype(np.uint8)
    return Image.fromarray(np.repeat(g8[:, :, None], 3, axis=2), mode="RGB")


@dataclass(frozen=True)
class ProcessorPreprocessing:
    """A model's own image processor, applied to :func:`to_rgb8` of an image.

    ``settings`` (the processor's configuration as ``(key, value)`` text pairs) is what makes two of these
    equal (models with equal settings share one read of each image); ``processor`` is the callable itself.
    """

    kind: str
    source: str
    size: int
    settings: tuple[tuple[str, str], ...]
    processor: Any = field(compare=False, hash=False, repr=False)
    channels: int = 3

    def apply(self, img: LoadedImage) -> np.ndarray:
        pil = to_rgb8(img)
        if self.kind == "open_clip":
            x = self.processor(pil).numpy()
        else:
            x = np.asarray(self.processor(images=pil, return_tensors="np")["pixel_values"][0])
        return np.ascontiguousarray(x, dtype=np.float32)

    def to_dict(self) -> dict[str, object]:
        return {
            "processor": self.kind,
            "source": self.source,
            "size": int(self.size),
            "config": dict(self.settings),
        }

    def steps(self) -> list[str]:
        return [
            "grey, 8-bit RGB: round(255 * mean over colour channels of v / max), repeated in 3 channels "
            "(CLIP processors read 8-bit RGB; a 16-bit image loses its low bits here)",
            f"the model's own processor ({self.kind}, {self.source}): "
            + "; ".join(f"{k}={v}" for k, v in self.settings),
        ]


def _open_clip_processor(open_clip: Any, model: Any, source: str) -> ProcessorPreprocessing:
    from open_clip.transform import PreprocessCfg, image_transform_v2

    cfg = open_clip.get_model_preprocess_cfg(model)
    pp = PreprocessCfg(**{k: v for k, v in cfg.items() if k in PreprocessCfg.__dataclass_fields__})
    tf = image_transform_v2(pp, is_train=False)
    size = pp.size if isinstance(pp.size, int) else int(max(pp.size))
    return ProcessorPreprocessing(
        "open_clip", source, size, tuple((k, str(v)) for k, v in sorted(cfg.items())), tf
    )


_HF_KEYS = (
    "do_resize",
    "size",
    "resample",
    "do_center_crop",
    "crop_size",
    "do_rescale",
    "rescale_factor",
    "do_normalize",
    "image_mean",
    "image_std",
    "do_convert_rgb",
)


def _hf_processor(proc: Any, source: str) -> ProcessorPreprocessing:
    d = proc.to_dict()
    crop = d.get("crop_size") or d.get("size") or {}
    size = int(crop.get("height", crop.get("shortest_edge", 0))) if isinstance(crop, Mapping) else int(crop)
    settings = tuple((k, str(d[k])) for k in _HF_KEYS if k in d)
    return ProcessorPreprocessing("hf", f"{type(proc).__name__} of {source}", size, settings, proc)


def _hf_image_module(model: Any) -> Any:
    import torch

    class HFImageEncoder(torch.nn.Module):
        """``get_image_features`` of a Hugging Face CLIP-style model as a module."""

        def __init__(self, m: Any) -> None:
            super().__init__()
            self.model = m

        def forward(self, x: Any) -> Any:
            return _features(self.model.get_image_features(pixel_values=x))

    return HFImageEncoder(model)


def _features(out: Any) -> Any:
    """A features tensor from ``get_*_features`` (a tensor, or an output object in newer transformers)."""
    import torch

    if isinstance(out, torch.Tensor):
        return out
    for k in ("image_embeds", "text_embeds", "pooler_output"):
        v = getattr(out, k, None)
        if isinstance(v, torch.Tensor):
            return v
    raise SchemaError(f"the model's feature method returned {type(out).__name__}, not a tensor.")


@dataclass(frozen=True)
class LoadedClip:
    """What :func:`load_clip` builds: the image encoder, the text encoder (a function of a list of texts),
    the processor, the learned temperature and a description for ``models.json``."""

    image_encoder: Any
    encode_text: Any
    preprocessing: ProcessorPreprocessing
    logit_scale: float
    name: str
    weights_file: str
    extra: Mapping[str, object]


def _quiet() -> Any:
    return contextlib.redirect_stdout(io.StringIO() if sys.stdout is None else sys.stderr)


def _load_open_clip(cs: ClipSpec, spec: str) -> LoadedClip:
    open_clip = require_open_clip()
    import torch

    hub = cs.arch == "hf-hub"
    if hub and (hub_model_folder(cs.path) / "open_clip_config.json").is_file():
        name, pretrained, weights = (
            f"local-dir:{hub_model_folder(cs.path)}",
            None,
            str(hub_model_folder(cs.path)),
        )
    elif hub:
        name, pretrained, weights = f"hf-hub:{cs.path}", None, f"hf-hub:{cs.path}"
    elif cs.arch == "local-dir":
        folder = Path(cs.path).expanduser()
        if not (folder / "open_clip_config.json").is_file():
            raise DataUnavailableError(
                f"model={str(spec)!r}: {folder / 'open_clip_config.json'} is not there; put the "
                "open_clip model folder (open_clip_config.json and its weights file, e.g. "
                "open_clip_pytorch_model.bin from the model's Hub page) at "
                f"{folder}, then run again."
            )
        name, pretrained, weights = f"local-dir:{folder}", None, str(folder)
    else:
        ckpt = Path(cs.path).expanduser()
        if not ckpt.is_file():
            raise DataUnavailableError(
                f"model={str(spec)!r}: the checkpoint {ckpt} is not there; cxreval never downloads "
                f"weights: download the open_clip checkpoint for {cs.arch} and put it at "
                f"{ckpt}, then run again."
            )
        name = cs.arch
        if cs.arch.endswith(".json"):
            cfg = Path(cs.arch).expanduser()
            if not cfg.is_file():
                raise SchemaError(f"model={str(spec)!r}: the open_clip model config {cfg} does not exist.")
            open_clip.add_model_config(cfg)
            name = cfg.stem
        elif cs.arch not in open_clip.list_models():
            raise InvalidParameterError(
                f"model={str(spec)!r}: {cs.arch!r} is not an open_clip model name (open_clip."
                "list_models()) nor a .json model config."
            )
        pretrained, weights = str(ckpt), str(ckpt)
    try:
        with _quiet():
            model = open_clip.create_model(name, pretrained=pretrained, device="cpu", pretrained_text=False)
            tokenizer = open_clip.get_tokenizer(name)
    except Exception as exc:  # the Hub's network and offline errors are of many kinds
        if name.startswith("hf-hub:"):
            raise _hub_unavailable(
                str(spec),
                cs.path,
                exc,
                "open_clip_config.json and open_clip_pytorch_model.bin or open_clip_model.safetensors",
            ) from exc
        if not isinstance(exc, (OSError, RuntimeError, ValueError, KeyError)):
            raise

        raise DataUnavailableError(
            f"model={str(spec)!r}: open_clip could not build the model from local files "
            f"({exc_text(exc)}); a text tower or tokenizer named by the config must be in the "
            "Hugging Face cache (HF_HOME) already, since cxreval runs offline."
        ) from exc
    model.eval()
    prep = _open_clip_processor(open_clip, model, weights)

    def encode_text(texts: list[str]) -> Any:
        return model.encode_text(tokenizer(texts))

    scale = float(model.logit_scale.exp().item())
    return LoadedClip(
        model.visual,
        encode_text,
        prep,
        scale,
        Path(weights).stem,
        weights,
        {
            "open_clip": getattr(open_clip, "__version__", ""),
            "arch": cs.arch,
            "torch_version": torch.__version__,
        },
    )


def _load_hf(cs: ClipSpec, spec: str) -> LoadedClip:
    transformers = require_transformers()
    hub = cs.arch == "hub"
    folder = hub_model_folder(cs.path) if hub else Path(cs.path).expanduser()
    if hub and not (folder / "config.json").is_file():  # not placed here: ask the Hub
        try:
            with _quiet():
                model = transformers.AutoModel.from_pretrained(cs.path)
                tok = transformers.AutoTokenizer.from_pretrained(cs.path)
                proc = transformers.AutoImageProcessor.from_pretrained(cs.path)
        except Exception as exc:  # the Hub's network and offline errors are of many kinds
            raise _hub_unavailable(
                str(spec),
                cs.path,
                exc,
                "config.json, model.safetensors, the tokenizer files and preprocessor_config.json",
            ) from exc
        return _hf_loaded(transformers, model, tok, proc, spec, source=cs.path, name=cs.path.split("/")[-1])
    if not (folder / "config.json").is_file():
        raise DataUnavailableError(
            f"model={str(spec)!r}: {folder / 'config.json'} is not there; put the Hugging Face "
            "model folder (config.json, model.safetensors, the tokenizer files and "
            f"preprocessor_config.json, e.g. huggingface_hub.snapshot_download(ORG/NAME, "
            f"local_dir='{folder}') on a machine with internet access) there, then run again."
        )
    try:
        with _quiet():
            model = transformers.AutoModel.from_pretrained(str(folder), local_files_only=True)
            tok = transformers.AutoTokenizer.from_pretrained(str(folder), local_files_only=True)
            proc = transformers.AutoImageProcessor.from_pretrained(str(folder), local_files_only=True)
    except (OSError, ValueError, KeyError) as exc:
        raise DataUnavailableError(
            f"model={str(spec)!r}: transformers could not load {folder} offline ({exc_text(exc)}); "
            "the folder must hold the model, tokenizer and preprocessor_config.json "
            "files."
        ) from exc
    return _hf_loaded(transformers, model, tok, proc, spec, source=str(folder), name=folder.name)


def _hf_loaded(
    transformers: Any, model: Any, tok: Any, proc: Any, spec: str, *, source: str, name: str
) -> LoadedClip:
    for meth in ("get_image_features", "get_text_features"):
        if not hasattr(model, meth):
            raise SchemaError(
                f"model={str(spec)!r}: {type(model).__name__} has no {meth}; a CLIP-style model "
                "(image and text towers) is expected."
            )
    model.eval()
    import torch

    def encode_text(texts: list[str]) -> Any:
        t = tok(texts, padding=True, return_tensors="pt")
        return _features(
            model.get_text_features(input_ids=t["input_ids"], attention_mask=t["attention_mask"])
        )

    scale = float(model.logit_scale.exp().item()) if hasattr(model, "logit_scale") else 100.0
    return LoadedClip(
        _hf_image_module(model),
        encode_text,
        _hf_processor(proc, source),
        scale,
        name,
        source,
        {
            "transformers": transformers.__version__,
            "model_class": type(model).__name__,
            "torch_version": torch.__version__,
        },
    )


def load_clip(cs: ClipSpec, *, spec: str) -> LoadedClip:
    """Load a CLIP-style model from local files (see the module docstring)."""
    return _load_open_clip(cs, spec) if cs.backend == "open_clip" else _load_hf(cs, spec)


def zero_shot_model(
    spec: str,
    value: str,
    *,
    prompts: str | os.PathLike[str] | PromptSet | None,
    zero_shot_rule: str = "softmax",
) -> dict[str, Any]:
    """The parts of a :class:`~cxreval.predict.LoadedModel` for a ``clip:`` spec (see the module docstring)."""
    import torch

    from .._validation import check_choice

    check_choice(zero_shot_rule, ZERO_SHOT_RULES, name="zero_shot_rule", func="predict")
    cs = parse_clip_spec(value, spec=spec)
    ps = prompts if isinstance(prompts, PromptSet) else load_prompts(prompts)
    missing = ps.without_negatives()
    if zero_shot_rule == "softmax" and missing:
        raise SchemaError(
            f"prompt file {ps.source}: {list(missing)[:5]} {'has' if len(missing) == 1 else 'have'} no "
            "negative prompts, which zero_shot_rule='softmax' (CheXzero's rule) needs; add 'negative: "
            "[...]' to each finding or use zero_shot_rule='max-cosine' (XQA's rule)."
        )
    lc = load_clip(cs, spec=spec)
    zs: dict[str, object] = {"rule": zero_shot_rule, "prompts": ps.to_dict(), "prompt_file": ps.source}
    if zero_shot_rule == "softmax":
        pos = torch.stack([encode_prompts(lc.encode_text, p) for p in ps.positive])
        neg = torch.stack([encode_prompts(lc.encode_text, n) for n in ps.negative])
        t = ps.temperature if ps.temperature is not None else lc.logit_scale
        module = ZeroShotCLIP(lc.image_encoder, pos, neg, t)
        zs.update(
            {
                "temperature": t,
                "temperature_from": "prompt file"
                if ps.temperature is not None
                else "model logit_scale.exp()",
                "ensemble": "mean of normalised prompt embeddings, normalised",
                "score": "softmax over (positive, negative) of temperature * cosine (CheXzero)",
            }
        )
    else:
        module = max_cosine_module(
            lc.image_encoder, [normalized_prompts(lc.encode_text, p) for p in ps.positive]
        )
        zs.update(
            {
                "temperature": None,
                "ensemble": "none: each prompt on its own",
                "score": "max over the positive prompts of cosine(image, prompt) (XQA); negative prompts unused",
            }
        )
    extra = {**lc.extra, "zero_shot": zs}
    return {
        "name": lc.name,
        "module": module,
        "preprocessing": lc.preprocessing,
        "outputs": ps.findings,
        "weights_file": lc.weights_file,
        "extra": json.loads(json.dumps(extra, default=str)),
        "clip": lc,
    }
