"""A CLIP-style image encoder with a linear classifier: what ``cxreval finetune --model clip:...`` trains.

XQA's fine-tuned VLMs follow BenchX (Zhou et al., 2024): the pretrained image encoder of a vision-language model
with a linear classification layer on its image embedding, trained either as a *linear probe* (the encoder
frozen, only the layer fitted: ``--mode linear-probe``) or by *full fine-tuning* of the vision tower and the
layer together (``--mode full``). :func:`clip_classifier` builds that network from a ``clip:`` spec
(:mod:`.clip`): ``image_encoder`` (the model's own, whose output is the image embedding) and ``classifier``
(``torch.nn.Linear(embed_dim, n_out)``); its ``preprocessing`` is the model's own image processor.

``model.yaml`` written by ``finetune`` names it as ``architecture: cxreval.predict.clip_head:clip_classifier``
with ``architecture_kwargs: {spec: ..., n_out: ...}`` and ``input: architecture`` (the architecture's own
preprocessing), so ``cxreval predict --model torch:OUT/model.yaml`` rebuilds the encoder from the same local
files, loads the fine-tuned weights and reads the images as the model was trained on them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..exceptions import SchemaError

__all__: list[str] = []


def absolute_clip_spec(spec: str) -> str:
    """``spec`` with its file and folder paths made absolute (a ``model.yaml`` must not depend on the cwd)."""
    from .clip import ClipSpec, parse_clip_spec

    cs = parse_clip_spec(spec.partition(":")[2] if spec.startswith("clip:") else spec, spec=spec)
    if cs.arch in ("hf-hub", "hub"):
        return str(cs)  # a Hub id, not a path
    arch = cs.arch
    if arch.endswith(".json"):
        arch = str(Path(arch).expanduser().resolve())
    return str(ClipSpec(cs.backend, arch, str(Path(cs.path).expanduser().resolve())))


def clip_classifier(spec: str, n_out: int) -> Any:
    """The image encoder of the ``clip:`` model ``spec`` with a new linear classifier of ``n_out`` outputs."""
    import torch

    from .clip import load_clip, parse_clip_spec

    value = spec.partition(":")[2] if spec.startswith("clip:") else spec
    lc = load_clip(parse_clip_spec(value, spec=spec), spec=spec)
    prep = lc.preprocessing
    with torch.no_grad():
        lc.image_encoder.eval()
        e = lc.image_encoder(torch.zeros(1, prep.channels, prep.size, prep.size))
    if not isinstance(e, torch.Tensor) or e.ndim != 2:
        raise SchemaError(
            f"model={spec!r}: its image encoder returns {getattr(e, 'shape', type(e).__name__)} for "
            "one image, not an embedding (1, D)."
        )

    class ClipClassifier(torch.nn.Module):
        """image_encoder (the VLM's image embedding) -> classifier (linear)."""

        def __init__(self) -> None:
            super().__init__()
            self.image_encoder = lc.image_encoder
            self.classifier = torch.nn.Linear(int(e.shape[1]), int(n_out))
            self.preprocessing = prep
            self.clip = lc

        def forward(self, x: Any) -> Any:
            return self.classifier(self.image_encoder(x).float())

    return ClipClassifier()
