"""The columns of result tables that several packages write or read: ``agreement.csv`` (agreement between
label sources, also the base of ``fusion_agreement.csv``) and ``reader_accuracy.csv`` (each reader's
sensitivity and specificity under the latent-class model, written by ``classify --latent-truth`` and ``fuse``)."""

from __future__ import annotations

from ._columns import FINDING

__all__ = ["AGREEMENT_COLUMNS", "READER_ACCURACY_COLUMNS"]

AGREEMENT_COLUMNS: tuple[str, ...] = (
    "pair",
    "finding",
    "kappa_w",
    "kappa_low",
    "kappa_high",
    "f1_w",
    "f1_low",
    "f1_high",
    "n",
    "finding_set",
)
"""Columns of :func:`cxreval.agreement.compute_agreement`'s table (``agreement.csv``)."""

READER_ACCURACY_COLUMNS: tuple[str, ...] = (
    FINDING,
    "source",
    "sensitivity",
    "sensitivity_low",
    "sensitivity_high",
    "specificity",
    "specificity_low",
    "specificity_high",
    "n_labelled",
    "fixed",
)
"""Columns of ``reader_accuracy.csv`` (written by ``classify --latent-truth`` and ``fuse``; read back by
``--reader-accuracy``): each reader's sensitivity and specificity per finding under the readers-only
latent-class model, with patient-bootstrap percentile intervals; ``fixed``: given, not estimated."""
