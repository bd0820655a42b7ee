"""The zero-shot modules of ``clip:`` models (see :mod:`cxreval.predict.clip`): prompt embeddings and the two
rules, CheXzero's softmax of positive vs negative prompt similarity (:data:`ZeroShotCLIP`) and XQA's max cosine
over a finding's prompts (:func:`max_cosine_module`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

__all__ = ["ZeroShotCLIP", "encode_prompts", "normalized_prompts", "max_cosine_module"]


def encode_prompts(encode_text: Any, texts: Sequence[str]) -> Any:
    """Normalised CLIP prompt-ensemble embedding of ``texts``: mean of the normalised embeddings, normalised."""
    import torch

    with torch.no_grad():
        e = encode_text(list(texts)).float()
        e = e / e.norm(dim=-1, keepdim=True)
        m = e.mean(dim=0)
        return m / m.norm()


def _hold(module: Any, image_encoder: Any, **buffers: Any) -> None:
    """Give a zero-shot ``module`` its image encoder (a submodule) and its prompt ``buffers`` (moved with it)."""
    module.image_encoder = image_encoder
    for name, value in buffers.items():
        module.register_buffer(name, value)


def _unit_features(module: Any, x: Any) -> Any:
    """The L2-normalised float image features of the batch ``x`` (``module.image_encoder``'s)."""
    f = module.image_encoder(x).float()
    return f / f.norm(dim=-1, keepdim=True)


def _zero_shot_module(image_encoder: Any, pos: Any, neg: Any, temperature: float) -> Any:
    import torch

    class ZeroShot(torch.nn.Module):
        """Image -> per-finding softmax of positive vs negative prompt similarity (see cxreval.predict.clip)."""

        def __init__(self) -> None:
            super().__init__()
            _hold(self, image_encoder, positive=pos, negative=neg)
            self.temperature = float(temperature)

        def forward(self, x: Any) -> Any:
            f = _unit_features(self, x)
            lp, ln = self.temperature * f @ self.positive.T, self.temperature * f @ self.negative.T
            return torch.softmax(torch.stack([lp, ln], dim=-1), dim=-1)[..., 0]

    return ZeroShot()


ZeroShotCLIP = _zero_shot_module
"""Build the zero-shot module from an image encoder, (K, D) positive/negative embeddings and a temperature."""


def normalized_prompts(encode_text: Any, texts: Sequence[str]) -> Any:
    """The L2-normalised embedding of each prompt of ``texts`` (``(T, D)``), not ensembled."""
    import torch

    with torch.no_grad():
        e = encode_text(list(texts)).float()
        return e / e.norm(dim=-1, keepdim=True)


def max_cosine_module(image_encoder: Any, prompts: Sequence[Any]) -> Any:
    """Image -> per-finding max over its prompts of cosine(image, prompt) (XQA's rule); ``prompts[k]``: the
    ``(T_k, D)`` normalised embeddings of finding ``k``."""
    import torch

    n = max(int(p.shape[0]) for p in prompts)
    emb = torch.zeros(len(prompts), n, int(prompts[0].shape[1]))
    mask = torch.zeros(len(prompts), n, dtype=torch.bool)
    for k, p in enumerate(prompts):
        emb[k, : p.shape[0]] = p
        mask[k, : p.shape[0]] = True

    class MaxCosine(torch.nn.Module):
        """Image -> per-finding max cosine over its positive prompts (see cxreval.predict.clip)."""

        def __init__(self) -> None:
            super().__init__()
            _hold(self, image_encoder, prompts=emb, mask=mask)

        def forward(self, x: Any) -> Any:
            f = _unit_features(self, x)
            c = torch.einsum("bd,ktd->bkt", f, self.prompts)
            return c.masked_fill(~self.mask, float("-inf")).amax(dim=-1)

    return MaxCosine()
