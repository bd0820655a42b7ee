"""The steps of ``cxreval finetune``'s training: an epoch of mini-batches, the linear probe on the classifier's
inputs, the forward pass over the validation images, the validation AUCs and the rows of ``training.csv``."""

from __future__ import annotations

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
