"""Label fusion: one consensus label from several readers.

Estimators follow crowd-kit's API (hyper-parameters in the constructor; ``fit``, ``fit_predict``,
``fit_predict_proba``; fitted state in attributes ending in ``_``) on the long annotation table
``study_id, reader, label`` (optionally ``finding``) with the 3-state labels ``NEG=0 / UNC=1 / POS=2``:

=========  =========================  ===================================================
name       estimator                  rule
=========  =========================  ===================================================
``mv``     :class:`MajorityVote`      most votes; ties → uncertain
``or``     :class:`FuseOr`            largest state (any positive → positive)
``and``    :class:`FuseAnd`           smallest state (positive only if all positive)
``ds``     :class:`DawidSkene`        EM with a confusion matrix per reader
``mace``   :class:`MACE`              reader competence + spamming distribution
``nn``     :class:`NeuralFusion`      MLP from all readers' labels to a reference (supervised)
``nn_ps``  :class:`NeuralFusionPS`    NN Fusion + specialists for the selection findings
=========  =========================  ===================================================

Every estimator gives the same output for any order of the input rows, and the same output for the
same ``rng``.
"""

from ._base import (
    ANNOTATION_COLUMNS,
    STATES,
    BaseFusion,
    FusionResult,
    annotations_from_labels,
    encode_annotations,
    fuse_label_table,
    get_fusion,
    list_fusion,
    register_fusion,
)
from .dawid_skene import DawidSkene
from .mace import MACE
from .majority_vote import FuseAnd, FuseOr, MajorityVote
from .neural import NeuralFusion, NeuralFusionPS

__all__ = [
    "ANNOTATION_COLUMNS",
    "STATES",
    "BaseFusion",
    "FusionResult",
    "annotations_from_labels",
    "fuse_label_table",
    "encode_annotations",
    "get_fusion",
    "list_fusion",
    "register_fusion",
    "MajorityVote",
    "FuseOr",
    "FuseAnd",
    "DawidSkene",
    "MACE",
    "NeuralFusion",
    "NeuralFusionPS",
]
