"""Fine-tuning on a user's labels (``cxreval finetune``): a ``torch:`` checkpoint that ``cxreval predict`` loads.

Inputs are a folder (or list) of images, read and preprocessed exactly as ``cxreval predict`` reads them, and a
long label table (``study_id, patient_id, finding, source, state``) whose ``study_id`` is the image id. Labels
become targets under the usual :class:`~cxreval.schema.LabelPolicy` (uncertain: exclude / zeros / ones;
not mentioned: negative / exclude); an excluded label adds nothing to the loss or the AUC.

The studies with both an image and labels are split by patient (:func:`cxreval.datasets.patient_split`, seeded
with the seed of ``rng``) into ``train`` and ``val``. Modes:

* ``linear-probe``: the network is frozen; the features entering its classifier are computed once per image
  (in batches), cached in the run folder (``features.npz``; ``features=`` reuses it in a later run) and a new
  linear classifier is fitted on them to convergence (:func:`~.probe.fit_linear_probe`: Newton's method,
  float64) on the loss plus ``weight_decay / 2 * ||W||^2`` (the bias is not penalised): for ``bce`` this is L2
  logistic regression per finding (scikit-learn's ``LogisticRegression(C=1 / (n * k * weight_decay))`` with
  ``n`` images and ``k`` findings, all labelled). The validation scores are the new classifier on the cached
  validation features. One row per finding in ``training.csv`` (epoch 1).
* ``last-layer``: a new classifier and the backbone's last stage (:func:`~.recipes.last_stage`, e.g. ``layer4``
  of a ResNet) are trained, the rest frozen (and in evaluation mode, so batch-norm statistics stay).
* ``full``: every parameter is trained.

``model`` is ``xrv:`` (a TorchXRayVision DenseNet), ``torch:`` (a state_dict with its architecture) or ``clip:``
(a vision-language model's image encoder with a linear classifier on its embedding, BenchX's protocols as in
XQA: ``linear-probe`` or ``full`` fine-tuning of the vision tower; :mod:`.clip_head`).

Gradient modes use Adam (``lr``, ``weight_decay``), mini-batches of ``batch_size`` in an order drawn from
the seed, and stop early when the macro validation AUC (mean over findings with both classes in ``val``) has
not improved for ``patience`` epochs; the best epoch's weights are written. ``--recipe chestxray8`` trains the
ChestX-ray8 network (:func:`~.recipes.chestxray8_net`) with W-CEL at the paper's 1024x1024 input.
``--recipe xrv --model xrv:NAME`` fine-tunes a TorchXRayVision DenseNet with torchxrayvision's training defaults
(:data:`~.recipes.XRV_DEFAULTS`: Adam with amsgrad, lr 1e-3, weight decay 1e-5, batch 64, task-weighted BCE,
random affine augmentation of the training images), each replaced by an option given explicitly.

Output folder: ``model.pt`` (state_dict) + ``model.yaml`` (``cxreval predict --model torch:OUT/model.yaml``),
``training.csv`` (epoch, finding, train_loss, val_loss, val_auc, ...), ``split.csv``, ``val_predictions.csv``
(the best epoch's validation scores, in the prediction format), ``finetune.json``, ``summary.md``, ``run.json``
and, for ``linear-probe``, ``features.npz``.
"""

from __future__ import annotations

import copy
import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from .._typing import PathLike, RNGLike
from .._validation import check_choice, normalize_rng
from ..exceptions import InvalidParameterError, SchemaError
from ..progress import Progress, as_progress
from ..results import TableResult
from ._finetune_data import TrainingTargets, _Images, _with_images, training_targets
from ._finetune_epochs import _aucs, _forward, _probe_head, _rows, _train_epoch
from ._finetune_net import _build, _features_key, _set_trainable, _write_model_yaml
from ._imports import require_torch, torch_device
from .losses import LOSSES, loss_function
from .recipes import XRV_DEFAULTS

__all__ = [
    "FINETUNE_MODES",
    "RECIPES",
    "TRAINING_COLUMNS",
    "FinetuneResult",
    "finetune",
    "TrainingTargets",
    "training_targets",
]

FINETUNE_MODES: tuple[str, ...] = ("linear-probe", "last-layer", "full")
RECIPES: tuple[str, ...] = ("chestxray8", "xrv")
TRAINING_COLUMNS: tuple[str, ...] = (
    "epoch",
    "finding",
    "train_loss",
    "val_loss",
    "val_auc",
    "n_val_pos",
    "n_val_neg",
    "best",
)


@dataclass(frozen=True)
class FinetuneResult(TableResult):
    """The training log (``table``: :data:`TRAINING_COLUMNS`; ``finding`` :data:`~cxreval.schema.MACRO` = the mean AUC), the split and
    the best epoch's validation predictions."""

    table: pd.DataFrame
    split: pd.DataFrame
    val_predictions: pd.DataFrame
    best_epoch: int
    best_val_auc: float
    stopped: str
    settings: dict[str, Any] = field(default_factory=dict)

    FILES: ClassVar[dict[str, str]] = {
        "training": "training.csv",
        "split": "split.csv",
        "val_predictions": "val_predictions.csv",
    }
    COLUMNS: ClassVar[tuple[str, ...]] = TRAINING_COLUMNS

    def tables(self) -> dict[str, pd.DataFrame]:
        return {"training": self.table, "split": self.split, "val_predictions": self.val_predictions}

    def summary(self, title: str = "cxreval finetune") -> str:
        from ..io import markdown_table

        best = self.table[(self.table.epoch == self.best_epoch)]
        s = self.settings
        lines = [
            f"# {title}",
            "",
            f"Model: `{s.get('base')}`, mode {s.get('mode')}, loss {s.get('loss')}; "
            f"{s.get('n_train')} training and {s.get('n_val')} validation images (patient-level split, "
            f"seed {s.get('seed')}).",
            "",
            f"Stopped: {self.stopped}. Best epoch {self.best_epoch}: macro validation AUC "
            f"{self.best_val_auc:.4f}.",
            "",
            markdown_table(best[["finding", "val_auc", "n_val_pos", "n_val_neg"]]),
            *(
                [
                    "",
                    f"Left out: {s['n_labelled_without_image']} labelled studies without an image (e.g. "
                    f"`{s['labelled_without_image'][0]}`; finetune.json lists up to 100).",
                ]
                if s.get("n_labelled_without_image")
                else []
            ),
            "",
            f"The model for predict: `--model torch:{s.get('yaml', 'model.yaml')}`.",
        ]
        return "\n".join(lines) + "\n"

    def _figure(self) -> Any:
        """Validation AUC per finding against the epoch (the training log)."""
        from .._plots import lines

        return lines(
            self.table,
            x="epoch",
            y="val_auc",
            color="finding",
            title="Validation AUC by epoch",
            y_title="validation AUC",
        )


def _seed_of(rng: RNGLike) -> int:
    """The int seed of ``rng``: an int as given, one drawn from a Generator or from fresh entropy (None)."""
    if isinstance(rng, (int, np.integer)) and not isinstance(rng, bool) and int(rng) >= 0:
        return int(rng)
    return int(normalize_rng(rng).integers(2**31))


def finetune(
    images: PathLike,
    labels: PathLike,
    *,
    out: PathLike,
    model: str | None = None,
    recipe: str | None = None,
    arch: str = "resnet50",
    weights: PathLike | None = None,
    mode: str = "full",
    loss: str | None = None,
    findings: Sequence[str] | None = None,
    source: str | None = None,
    policy: str = "exclude",
    not_mentioned: str = "negative",
    state_encoding: str | None = None,
    val_fraction: float = 0.2,
    epochs: int = 10,
    patience: int = 3,
    batch_size: int | None = None,
    lr: float | None = None,
    weight_decay: float | None = None,
    rng: RNGLike = None,
    device: str = "cpu",
    input_size: int | None = None,
    name: str | None = None,
    keep_interrupted: bool = False,
    overwrite: bool = False,
    weights_dir: PathLike | None = None,
    download: bool = True,
    dicom_window: str = "none",
    features: PathLike | None = None,
    argv: Sequence[str] | None = None,
    progress: Progress | None = None,
) -> FinetuneResult:
    """Fine-tune ``model`` (or train ``recipe``) on ``labels`` and write ``out`` atomically (module docstring).

    ``progress`` (:class:`cxreval.progress.Progress`) gets a task counting the epochs, advanced after each.
    ``rng`` (None: fresh entropy; an int reproduces, as ``--seed``) seeds the split, the initialisation, the
    batch order and the augmentation: an int is used as the seed, a Generator draws one, and the seed used is
    written to ``finetune.json`` and ``summary.md``. On Ctrl-C the folder is written with the
    best epoch so far when ``keep_interrupted`` (and ``finetune.json`` says it was interrupted), else nothing is
    written; the KeyboardInterrupt is re-raised. ``features`` (``linear-probe`` only): the ``features.npz`` of an
    earlier linear probe of the same model on the same images, reused instead of computing them again.
    """
    from scipy.special import expit

    from ..datasets import patient_split
    from ..labels import read_labels
    from ..outputs import output_folder
    from ..outputs._folder import check_output_path
    from ..schema._states import LabelPolicy
    from ._images import list_images

    func = "finetune"
    seed = _seed_of(rng)
    _check_model(model, recipe, mode=mode, func=func)
    xrv_recipe = recipe == "xrv"
    loss, batch_size, weight_decay = _training_options(
        recipe,
        mode,
        loss=loss,
        batch_size=batch_size,
        weight_decay=weight_decay,
        features=features,
        func=func,
    )
    pol = LabelPolicy(policy, not_mentioned)
    _check_numbers(epochs, patience, batch_size, val_fraction, lr, weight_decay)
    progress = as_progress(progress, func=func)
    torch = require_torch()  # (after the checks of the options: a bad option is named without torch)
    dev = torch_device(device)
    if weights is not None and not Path(weights).is_file():
        raise SchemaError(f"weights={str(weights)!r} does not exist.")
    inputs = (
        [Path(labels)]
        + ([Path(weights)] if weights is not None else [])
        + ([Path(features)] if features is not None else [])
    )
    check_output_path(out, overwrite=overwrite, inputs=[*inputs, Path(images)])
    lab = read_labels(Path(labels), state_encoding=state_encoding).table
    targets, fnames, source = training_targets(lab, findings=findings, source=source, policy=pol)
    listing = list_images(images)
    by_id = {it.study_id: it for it in listing.items}
    targets, no_image_ids = _with_images(targets, by_id, labels=labels, images=listing.source)
    if len(targets) < 2:
        raise SchemaError(
            f"images={str(listing.source)!r} and labels={str(labels)!r}: {len(targets)} image id(s) are labelled "
            f"(image ids look like {list(by_id)[:2]}, label study_ids like "
            f"{lab.study_id.head(2).tolist()}); at least 2 are needed."
        )
    sp = patient_split(
        targets[["study_id", "patient_id"]],
        fractions=(1 - val_fraction, val_fraction),
        names=("train", "val"),
        rng=seed,
    ).assignments
    tr = np.flatnonzero(sp["split"].to_numpy() == "train")
    va = np.flatnonzero(sp["split"].to_numpy() == "val")
    y_all = targets[fnames].to_numpy(dtype=float)
    _, npos, nneg = _aucs(y_all[va], np.zeros((len(va), len(fnames))))
    if not len(tr) or not any(p and n for p, n in zip(npos, nneg)):
        raise SchemaError(
            f"the validation part ({len(va)} image(s) of {sp.patient_id[va].nunique()} patient(s)) has "
            "no finding with both a positive and a negative label, so no validation AUC; use more "
            "images or a larger val_fraction."
        )
    with output_folder(
        out,
        overwrite=overwrite,
        inputs=inputs,
        argv=argv,
        meta={"seed": seed, "mode": mode},
        protect=[Path(images)],
    ) as d:
        torch.manual_seed(seed)
        net = _build(
            model,
            "chestxray8" if recipe == "chestxray8" else None,
            arch=arch,
            weights=None if weights is None else str(weights),
            n_out=len(fnames),
            input_size=input_size,
            weights_dir=weights_dir,
            download=download,
        )
        module = net.module.to(dev)
        head = module.get_submodule(net.head)
        trained = _set_trainable(module, net.head, mode)
        chosen = [by_id[s] for s in targets.study_id]
        fkey = _features_key(net, dicom_window)
        cached = None
        if features is not None:  # checked before any image is read
            from ._probe import load_features

            cached = load_features(features, list(targets.study_id), [str(it.path) for it in chosen], fkey)
        data = None if cached is not None else _Images(chosen, net.prep, dicom_window=dicom_window)
        from .losses import xrv_task_weights

        task_weights = xrv_task_weights(y_all[tr]) if loss == "xrv" else None
        lf = loss_function(loss, task_weights=task_weights)
        y_t = torch.tensor(y_all)
        lr = lr if lr is not None else (1e-4 if mode == "full" and not xrv_recipe else 1e-3)
        rows: list[dict[str, Any]] = []
        best: tuple[float, int, dict[str, Any] | None, np.ndarray | None] = (-np.inf, 0, None, None)
        stopped, interrupted = f"{epochs} epoch(s)", False
        gen = np.random.default_rng(seed)
        opt = torch.optim.Adam(
            [p for p in module.parameters() if p.requires_grad],
            lr=lr,
            weight_decay=weight_decay,
            amsgrad=xrv_recipe,
        )
        aug_gen = np.random.default_rng([seed, 1])  # the xrv recipe's augmentation draws
        try:
            if mode == "linear-probe":
                module.eval()
                feats, train_loss, stopped = _probe_head(
                    module,
                    net.head,
                    cached,
                    data,
                    d,
                    study_ids=list(targets.study_id),
                    paths=[str(it.path) for it in chosen],
                    fkey=fkey,
                    y_train=y_all[tr],
                    tr=tr,
                    findings=fnames,
                    loss=loss,
                    weight_decay=weight_decay,
                    batch_size=batch_size,
                    device=dev,
                )
                epochs = 1
            epoch_task = progress.add("cxreval finetune (epochs)", total=epochs)
            for epoch in range(1, epochs + 1):
                if mode != "linear-probe":
                    module.train(mode == "full")
                    for t in trained:
                        module.get_submodule(t).train()
                    assert data is not None  # read unless cached features were given (linear-probe only)
                    train_loss = _train_epoch(
                        module,
                        data,
                        gen.permutation(tr),
                        y_t,
                        lf,
                        opt,
                        batch_size=batch_size,
                        device=dev,
                        augment=aug_gen if xrv_recipe else None,
                    )
                module.eval()
                if mode == "linear-probe":  # the head on the cached features, as the model runs it
                    with torch.inference_mode():
                        zv = head(torch.from_numpy(feats[va]).to(dev)).double().cpu().numpy()
                else:
                    assert data is not None  # read unless cached features were given (linear-probe only)
                    zv = _forward(module, data, va, batch_size=batch_size, device=dev)
                val_loss = float(lf(torch.from_numpy(zv), y_t[va]))
                sv = expit(zv)
                aucs, npos, nneg = _aucs(y_all[va], sv)
                rows += _rows(epoch, fnames, train_loss, val_loss, aucs, npos, nneg)
                macro = rows[-1]["val_auc"]
                if macro > best[0]:
                    best = (
                        macro,
                        epoch,
                        copy.deepcopy({k: v.cpu() for k, v in module.state_dict().items()}),
                        sv,
                    )
                progress.advance(epoch_task)
                if epoch - best[1] >= patience and epoch < epochs:
                    stopped = f"early stopping at epoch {epoch} ({patience} epoch(s) without a better macro validation AUC)"
                    break
        except KeyboardInterrupt:
            if not keep_interrupted or best[2] is None:
                raise
            interrupted, stopped = (
                True,
                f"interrupted after epoch {best[1] if not rows else rows[-1]['epoch']}",
            )
        if best[2] is None:
            raise SchemaError("no epoch gave a finite macro validation AUC; nothing to write.")
        log = pd.DataFrame(rows, columns=list(TRAINING_COLUMNS))
        log["best"] = log["epoch"] == best[1]
        mname = name or (
            f"chestxray8-{arch}"
            if recipe == "chestxray8"
            else f"finetuned-{Path(str(net.base)).stem.split(':')[-1]}"
        )
        vp = pd.DataFrame(
            {
                "study_id": np.repeat(targets.study_id.to_numpy()[va], len(fnames)),
                "model": mname,
                "finding": np.tile(np.asarray(fnames, dtype=object), len(va)),
                "score": np.asarray(best[3]).ravel(),
            }
        )
        settings = {
            "base": net.base,
            "mode": mode,
            "loss": loss,
            "seed": seed,
            "source": source,
            "findings": fnames,
            "policy": {"uncertain": pol.uncertain, "not_mentioned": pol.not_mentioned},
            "lr": lr,
            "weight_decay": weight_decay,
            "batch_size": batch_size,
            "epochs": epochs,
            "patience": patience,
            "val_fraction": val_fraction,
            "device": str(dev),
            "trained_modules": trained,
            "init_weights": net.weights,
            "n_train": int(len(tr)),
            "n_val": int(len(va)),
            "n_labelled_without_image": len(no_image_ids),
            "labelled_without_image": no_image_ids[:100],
            "n_images_without_labels": int(len(listing.items) - len(targets)),
            "interrupted": interrupted,
            "yaml": str(Path(out) / "model.yaml"),
            "recipe": recipe,
            "optimizer": "Adam(amsgrad=True)" if xrv_recipe else "Adam",
            "augmentation": XRV_DEFAULTS["augmentation"] if xrv_recipe else None,
            "task_weights": None if task_weights is None else dict(zip(fnames, task_weights.tolist())),
        }
        res = FinetuneResult(log, sp, vp, best[1], float(best[0]), stopped, settings)
        torch.save(best[2], d / "model.pt")
        _write_model_yaml(d / "model.yaml", mname, net, fnames)
        res.save(d)
        (d / "finetune.json").write_text(
            json.dumps(
                {**settings, "best_epoch": best[1], "best_val_auc": best[0], "stopped": stopped},
                indent=2,
                default=str,
            )
            + "\n"
        )
        (d / "summary.md").write_text(res.summary())
    if interrupted:
        raise KeyboardInterrupt
    return res


def _check_model(model: str | None, recipe: str | None, *, mode: str, func: str) -> None:
    """Check ``mode`` and ``recipe``: exactly one of ``model`` and the chestxray8 recipe, and a model the recipe
    and the mode fit."""
    check_choice(mode, FINETUNE_MODES, name="mode", func=func)
    if recipe is not None:
        check_choice(recipe, RECIPES, name="recipe", func=func)
    if (model is None) != (recipe == "chestxray8"):
        raise InvalidParameterError(
            "finetune needs exactly one of model= (xrv:, torch:, clip:) and "
            "recipe='chestxray8' (recipe='xrv' goes with model='xrv:...')."
        )
    if recipe == "chestxray8":
        from ._imports import require_torchvision

        require_torchvision()  # an environment problem is named before any work
    else:
        from ._models import parse_model_spec

        assert model is not None  # exactly one of model and recipe (checked above)
        if recipe == "xrv" and parse_model_spec(model).kind != "xrv":
            raise InvalidParameterError(
                f"recipe='xrv' with model={str(model)!r}: the xrv recipe fine-tunes a "
                "TorchXRayVision model (model='xrv:densenet121-res224-all', ...)."
            )
        if parse_model_spec(model).kind == "clip" and mode == "last-layer":
            raise InvalidParameterError(
                f"model={str(model)!r} with mode='last-layer': a clip: model is fine-tuned as "
                "BenchX does, mode='linear-probe' (frozen image encoder) or mode='full' (the "
                "vision tower and the classifier)."
            )


def _training_options(
    recipe: str | None,
    mode: str,
    *,
    loss: str | None,
    batch_size: int | None,
    weight_decay: float | None,
    features: PathLike | None,
    func: str,
) -> tuple[str, int, float]:
    """``(loss, batch_size, weight_decay)``, each the recipe's default where not given; ``features`` checked."""
    xrv_recipe = recipe == "xrv"
    loss = loss or ("wcel" if recipe == "chestxray8" else "xrv" if xrv_recipe else "bce")
    check_choice(loss, LOSSES, name="loss", func=func)
    batch_size = batch_size if batch_size is not None else (64 if xrv_recipe else 16)
    weight_decay = weight_decay if weight_decay is not None else (1e-5 if xrv_recipe else 1e-4)
    if features is not None and mode != "linear-probe":
        raise InvalidParameterError(
            f"features={str(features)!r}: cached features are used by mode='linear-probe' only."
        )
    if features is not None and not Path(features).is_file():
        raise SchemaError(f"features={str(features)!r} does not exist.")
    return loss, batch_size, weight_decay


def _check_numbers(
    epochs: int, patience: int, batch_size: int, val_fraction: float, lr: float | None, weight_decay: float, /
) -> None:
    """Check the counts (ints >= 1), ``val_fraction`` in (0, 1), ``lr`` > 0 and ``weight_decay`` >= 0."""
    for n, v, lo in (("epochs", epochs, 1), ("patience", patience, 1), ("batch_size", batch_size, 1)):
        if isinstance(v, bool) or not isinstance(v, int) or v < lo:
            raise InvalidParameterError(f"The '{n}' parameter of finetune must be an int >= {lo}. Got {v!r}.")
    if not 0 < val_fraction < 1:
        raise InvalidParameterError(
            f"The 'val_fraction' parameter of finetune must be in (0, 1). Got {val_fraction!r}."
        )
    for rate, value, low in (("lr", lr, "> 0"), ("weight_decay", weight_decay, ">= 0")):
        number = isinstance(value, (int, float, np.floating)) and not isinstance(value, bool)
        if value is not None and not (
            number and math.isfinite(value) and (value > 0 if rate == "lr" else value >= 0)
        ):
            raise InvalidParameterError(
                f"The '{rate}' parameter of finetune must be a finite number {low}. Got {value!r}."
            )
