"""The steps of ``cxreval finetune``'s training: an epoch of mini-batches, the linear probe on the classifier's
inputs, the forward pass over the validation images, the validation AUCs and the rows of ``training.csv``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from ..schema import MACRO
from ._finetune_data import _Images

__all__: list[str] = []


def _aucs(y: np.ndarray, s: np.ndarray) -> tuple[list[float], list[int], list[int]]:
    from ..classification import roc_auc_score

    out, npos, nneg = [], [], []
    for j in range(y.shape[1]):
        k = ~np.isnan(y[:, j])
        yy = y[k, j]
        npos.append(int((yy == 1).sum()))
        nneg.append(int((yy == 0).sum()))
        out.append(float(roc_auc_score(yy.astype(int), s[k, j])) if npos[-1] and nneg[-1] else float("nan"))
    return out, npos, nneg


def _forward(module: Any, data: _Images, idx: np.ndarray, *, batch_size: int, device: Any) -> np.ndarray:
    import torch

    outs = []
    with torch.inference_mode():
        for i in range(0, len(idx), batch_size):
            outs.append(
                module(torch.from_numpy(data.batch(idx[i : i + batch_size])).to(device))
                .double()
                .cpu()
                .numpy()
            )
    return np.concatenate(outs)


def _head_inputs(
    module: Any, head: str, data: _Images, idx: np.ndarray, *, batch_size: int, device: Any
) -> np.ndarray:
    """The inputs of the classifier ``head`` for the images ``idx`` (float32, as the classifier reads them)."""
    got: list[Any] = []
    h = module.get_submodule(head).register_forward_hook(
        lambda m, a, o: got.append(a[0].detach().float().cpu())
    )
    try:
        _forward(module, data, idx, batch_size=batch_size, device=device)
    finally:
        h.remove()
    return np.concatenate([g.numpy() for g in got]) if got else np.zeros((0, 0), dtype=np.float32)


def _rows(
    epoch: int,
    findings: list[str],
    train_loss: float,
    val_loss: float,
    aucs: list[float],
    npos: list[int],
    nneg: list[int],
) -> list[dict[str, Any]]:
    rows = [
        {
            "epoch": epoch,
            "finding": f,
            "train_loss": train_loss,
            "val_loss": val_loss,
            "val_auc": a,
            "n_val_pos": p,
            "n_val_neg": n,
            "best": False,
        }
        for f, a, p, n in zip(findings, aucs, npos, nneg)
    ]
    ok = [a for a in aucs if np.isfinite(a)]
    rows.append(
        {
            "epoch": epoch,
            "finding": MACRO,
            "train_loss": train_loss,
            "val_loss": val_loss,
            "val_auc": float(np.mean(ok)) if ok else float("nan"),
            "n_val_pos": sum(npos),
            "n_val_neg": sum(nneg),
            "best": False,
        }
    )
    return rows


def _train_epoch(
    module: Any,
    data: _Images,
    order: np.ndarray,
    y_t: Any,
    lf: Any,
    opt: Any,
    *,
    batch_size: int,
    device: Any,
    augment: np.random.Generator | None,
) -> float:
    """One epoch of mini-batches of ``batch_size`` images in ``order``; the mean training loss. ``augment``: the
    generator of the xrv recipe's random affine augmentation (None: no augmentation)."""
    import torch

    tot = 0.0
    for i in range(0, len(order), batch_size):
        idx = order[i : i + batch_size]
        xb = torch.from_numpy(data.batch(idx))
        if augment is not None:
            from .recipes import random_affine

            xb = random_affine(xb, augment)
        z = module(xb.to(device))
        v = lf(z, y_t[idx].to(z.dtype).to(device))
        opt.zero_grad()
        v.backward()
        opt.step()
        tot += v.item() * len(idx)
    return tot / len(order)


def _probe_head(
    module: Any,
    head_name: str,
    cached: np.ndarray | None,
    data: _Images | None,
    folder: Path,
    *,
    study_ids: list[str],
    paths: list[str],
    fkey: dict[str, Any],
    y_train: np.ndarray,
    tr: np.ndarray,
    findings: list[str],
    loss: str,
    weight_decay: float,
    batch_size: int,
    device: Any,
) -> tuple[np.ndarray, float, str]:
    """The linear probe: the classifier's inputs of every image (``cached``, or computed in batches) saved in
    ``folder``, a new classifier fitted on the training part's and copied into the head; ``(features, training
    loss, how it stopped)``."""
    import torch

    from ._probe import FEATURES_FILE, fit_linear_probe, save_features

    head = module.get_submodule(head_name)
    if cached is not None:
        feats = cached
    else:  # every image once, in batches
        assert data is not None  # read when no cached features were given
        feats = _head_inputs(
            module, head_name, data, np.arange(len(study_ids)), batch_size=batch_size, device=device
        )
    save_features(folder / FEATURES_FILE, feats, study_ids, paths, fkey)
    fit = fit_linear_probe(feats[tr], y_train, loss=loss, weight_decay=weight_decay)
    with torch.no_grad():
        head.weight.copy_(torch.from_numpy(fit.weight).to(head.weight.dtype))
        if head.bias is not None:
            head.bias.copy_(torch.from_numpy(fit.bias).to(head.bias.dtype))
    bad = [f for f, ok in zip(findings, fit.converged) if not ok]
    stopped = (
        f"converged (Newton's method on {feats.shape[1]} cached features; {max(fit.iterations)} step(s))"
        if not bad
        else f"Newton's method stopped after {max(fit.iterations)} steps without converging for {bad} "
        "(one class only in the training part?)"
    )
    return feats, fit.loss, stopped
