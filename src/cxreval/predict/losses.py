"""Training losses of ``cxreval finetune`` on multi-label logits with missing labels.

Both take logits ``z`` (``(n, k)``) and targets ``y`` (``(n, k)``: 1 positive, 0 negative, NaN excluded by the
label policy); excluded entries add nothing.

``bce``
    The mean binary cross-entropy over the labelled entries.
``wcel``
    ChestX-ray8's weighted cross-entropy (Wang et al., 2017), which balances the sparse positive labels:
    per image ``beta_P * sum_{c: y=1} -ln sigmoid(z_c) + beta_N * sum_{c: y=0} -ln(1 - sigmoid(z_c))`` with
    ``beta_P = (|P| + |N|) / |P|`` and ``beta_N = (|P| + |N|) / |N|``, where ``|P|`` and ``|N|`` are the numbers
    of positive and negative labels in the batch (all findings together). The batch loss is the mean of the
    images' losses. A side with no label in the batch adds nothing.
``xrv``
    torchxrayvision's training loss (``scripts/train_model.py`` with ``--taskweights``, its default): per
    finding the mean binary cross-entropy over its labelled entries, weighted by a *task weight* and summed over
    findings. The task weights come from the training labels once: with ``P_t`` the positives of finding ``t``,
    ``w_t = (max P - P_t + mean P) / max(max P - P + mean P)``, so rarer findings weigh more
    (:func:`xrv_task_weights`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__: list[str] = []

LOSSES: tuple[str, ...] = ("bce", "wcel", "xrv")


def bce_loss(z: Any, y: Any) -> Any:
    """Mean binary cross-entropy of the logits ``z`` over the labelled entries of ``y``."""
    import torch

    known = ~torch.isnan(y)
    if not bool(known.any()):
        return z.sum() * 0.0
    return torch.nn.functional.binary_cross_entropy_with_logits(z[known], y[known], reduction="mean")


def wcel_loss(z: Any, y: Any) -> Any:
    """ChestX-ray8's W-CEL (see the module docstring) of the logits ``z``."""
    import torch
    from torch.nn.functional import logsigmoid

    pos, neg = y == 1, y == 0  # NaN compares False: excluded
    n_p, n_n = pos.sum(), neg.sum()
    total = (n_p + n_n).to(z.dtype)
    zero = torch.zeros((), dtype=z.dtype, device=z.device)
    lp = torch.where(pos, -logsigmoid(z), zero).sum()
    ln = torch.where(neg, -logsigmoid(-z), zero).sum()
    out = z.sum() * 0.0  # keeps the graph when the batch has no label at all
    if int(n_p):
        out = out + total / n_p * lp
    if int(n_n):
        out = out + total / n_n * ln
    return out / z.shape[0]


def xrv_task_weights(y: np.ndarray) -> np.ndarray:
    """torchxrayvision's task weights from training targets ``y`` (``(n, k)``, NaN excluded): see the module docstring."""
    pos = np.nansum(np.asarray(y, dtype=float), axis=0)
    w = pos.max() - pos + pos.mean()
    return w / w.max() if w.max() > 0 else np.ones_like(w)


def xrv_loss(z: Any, y: Any, task_weights: Any) -> Any:
    """torchxrayvision's task-weighted BCE (module docstring) of the logits ``z``."""
    import torch

    out = z.sum() * 0.0
    for t in range(y.shape[1]):
        known = ~torch.isnan(y[:, t])
        if bool(known.any()):
            out = out + float(task_weights[t]) * torch.nn.functional.binary_cross_entropy_with_logits(
                z[known, t], y[known, t], reduction="mean"
            )
    return out


def loss_function(name: str, *, task_weights: np.ndarray | None = None) -> Any:
    """The loss ``name`` as a function of ``(z, y)``; ``xrv`` needs the training set's ``task_weights``."""
    if name == "xrv":
        if task_weights is None:
            raise ValueError("loss 'xrv' needs task_weights (xrv_task_weights of the training targets)")
        return lambda z, y: xrv_loss(z, y, task_weights)
    return {"bce": bce_loss, "wcel": wcel_loss}[name]
