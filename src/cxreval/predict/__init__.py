"""Model predictions and CAM heatmaps on a user's own radiographs (``cxreval predict``), and fine-tuning
(``cxreval finetune``).

Every public name is exported here (the implementation modules are private): finding the images
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

from ._cam import class_activation_maps, grad_cam
from ._finetune import (
    FINETUNE_MODES,
    RECIPES,
    TRAINING_COLUMNS,
    FinetuneResult,
    TrainingTargets,
    finetune,
    training_targets,
)
from ._images import ImageItem, ImageList, exc_text, list_images
from ._models import (
    MODEL_KINDS,
    XRV_VERSION,
    XRV_WEIGHTS,
    LoadedModel,
    ModelSpec,
    WeightsLocation,
    broken_import_message,
    import_callable,
    import_optional,
    load_model,
    parse_model_spec,
    require_torch,
    require_torchvision,
    require_xrv,
    torch_device,
    xrv_weights_path,
)
from ._preprocess import (
    CROPS,
    IMAGENET_MEAN,
    IMAGENET_STD,
    NORMALIZATIONS,
    Preprocessing,
    center_crop,
    preprocess_image,
    resize,
    scale_pixels,
)
from ._probe import FEATURES_FILE, LinearProbe, entry_weights, fit_linear_probe, load_features, save_features
from ._prompts import PROMPT_SETS, PromptSet, load_prompts, prompt_file
from ._runner import (
    CAM_METHODS,
    BatchPredictions,
    PredictResult,
    RunStats,
    check_heatmap_models,
    loaded_batches,
    model_file_name,
    model_groups,
    partial_path,
    predict,
    predict_batch,
    run_predictions,
    store_config,
    write_outputs,
)
from ._store import NpzWriter, PartialStore, Shard

__all__ = [
    "ImageItem",
    "ImageList",
    "list_images",
    "exc_text",
    "MODEL_KINDS",
    "XRV_WEIGHTS",
    "XRV_VERSION",
    "LoadedModel",
    "ModelSpec",
    "load_model",
    "parse_model_spec",
    "WeightsLocation",
    "xrv_weights_path",
    "require_torch",
    "require_torchvision",
    "require_xrv",
    "torch_device",
    "broken_import_message",
    "import_optional",
    "import_callable",
    "PROMPT_SETS",
    "PromptSet",
    "load_prompts",
    "prompt_file",
    "NORMALIZATIONS",
    "CROPS",
    "IMAGENET_MEAN",
    "IMAGENET_STD",
    "Preprocessing",
    "preprocess_image",
    "scale_pixels",
    "center_crop",
    "resize",
    "CAM_METHODS",
    "class_activation_maps",
    "grad_cam",
    "PredictResult",
    "RunStats",
    "partial_path",
    "predict",
    "run_predictions",
    "write_outputs",
    "store_config",
    "model_file_name",
    "check_heatmap_models",
    "BatchPredictions",
    "predict_batch",
    "model_groups",
    "loaded_batches",
    "NpzWriter",
    "PartialStore",
    "Shard",
    "LinearProbe",
    "fit_linear_probe",
    "entry_weights",
    "save_features",
    "load_features",
    "FEATURES_FILE",
    "finetune",
    "FinetuneResult",
    "FINETUNE_MODES",
    "RECIPES",
    "TRAINING_COLUMNS",
    "TrainingTargets",
    "training_targets",
]
