"""Model predictions and CAM heatmaps on a user's own radiographs (``cxreval predict``), and fine-tuning
(``cxreval finetune``).

The jobs, the loaders and their results are exported here (the implementation modules are private): finding the images
(:func:`list_images`; each read at full bit depth by :func:`cxreval.io.images.read_image`), each model's input
step by step as the model was trained (:class:`Preprocessing`, :func:`preprocess_image`), the ``xrv:<weights>``,
``torch:<checkpoint>`` (+ YAML) and ``clip:...`` specs (:func:`load_model`), prompt files (:func:`load_prompts`),
batched, resumable inference and its output files (:func:`predict`, :func:`run_predictions`,
:func:`write_outputs`; the resume store :class:`PartialStore`), CAM and Grad-CAM heatmaps
(:func:`class_activation_maps`, :func:`grad_cam`), and :func:`finetune` (with the linear probe's fit
on cached features, :func:`fit_linear_probe`). The public modules :mod:`.clip` (zero-shot scoring of CLIP-style
models), :mod:`.clip_head`, :mod:`.losses`, :mod:`.recipes` (the ChestX-ray8 baseline, torchxrayvision's
defaults) and :mod:`.shards` (``predict --executor``) are the homes of their own names.

torch, torchvision, torchxrayvision, open_clip_torch and transformers are optional
(``pip install 'cxreval[models]'``) and imported only when a model is loaded; without them a clear
:class:`~cxreval.exceptions.DataUnavailableError` is raised.
"""

from __future__ import annotations

from ._finetune import FinetuneResult, finetune
from ._models import LoadedModel, load_model
from ._probe import LinearProbe, fit_linear_probe
from ._prompts import load_prompts
from ._runner import PredictResult, predict

__all__ = [
    "LoadedModel",
    "load_model",
    "load_prompts",
    "PredictResult",
    "predict",
    "LinearProbe",
    "fit_linear_probe",
    "finetune",
    "FinetuneResult",
]
