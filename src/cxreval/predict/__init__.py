"""Model predictions and CAM heatmaps on a user's own radiographs (``cxreval predict``).

* :mod:`.images`: find images (each read at full bit depth by :func:`cxreval.io.images.read_image`);
* :mod:`.preprocess`: each model's input, step by step, as the model was trained;
* :mod:`.models`: ``xrv:<weights>``, ``torch:<checkpoint>`` (+ YAML) and ``clip:...`` specs;
* :mod:`.clip`, :mod:`.prompts`: zero-shot scoring of CLIP-style models with per-finding prompt files;
* :mod:`.runner`: batched, resumable inference and the output files; :mod:`.store`: the resume store;
  :mod:`.shards`: the same over an executor (``predict --executor``);
* :mod:`.finetune` (with :mod:`.losses`, :mod:`.recipes`, :mod:`.probe`, :mod:`.clip_head`): ``cxreval finetune``,
  the ChestX-ray8 baseline, the linear probe's fit on cached features and CLIP image encoders with a classifier.

torch, torchvision, torchxrayvision, open_clip_torch and transformers are optional
(``pip install 'cxreval[models]'``) and imported only when a model is loaded; without them a clear
:class:`~cxreval.exceptions.DataUnavailableError` is raised.
"""

from __future__ import annotations

from .images import ImageItem, ImageList, list_images
from .models import (
    MODEL_KINDS,
    XRV_WEIGHTS,
    LoadedModel,
    ModelSpec,
    load_model,
    parse_model_spec,
    xrv_weights_path,
)
from .preprocess import NORMALIZATIONS, Preprocessing, preprocess_image
from .probe import LinearProbe, fit_linear_probe
from .prompts import PROMPT_SETS, PromptSet, load_prompts
from .runner import CAM_METHODS, PredictResult, partial_path, predict, run_predictions, write_outputs
from .store import NpzWriter, PartialStore

__all__ = [
    "ImageItem", "ImageList", "list_images", "MODEL_KINDS", "PROMPT_SETS", "PromptSet", "load_prompts", "XRV_WEIGHTS", "LoadedModel", "ModelSpec", "load_model", "parse_model_spec", "xrv_weights_path",
    "NORMALIZATIONS", "Preprocessing", "preprocess_image", "CAM_METHODS", "PredictResult", "partial_path", "predict",
    "run_predictions", "write_outputs", "NpzWriter", "PartialStore", "LinearProbe", "fit_linear_probe",
]
