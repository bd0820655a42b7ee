"""Statistical kernels the analyses share: rank correlations, the AUC kernel, the latent-class EM, normal scores.

Each analysis package (classification, ranking, latent, fusion, mrmc, planning, iqa, ...) imports these from
here, never from another analysis package.
"""

from __future__ import annotations

__all__: list[str] = []
