"""Label fusion: one consensus label from several readers.

Estimators follow crowd-kit's API (hyper-parameters in the constructor; ``fit``, ``fit_predict``,
``fit_predict_proba``; fitted state in attributes ending in ``_``) on the long annotation table
``study_id, source, state`` (optionally ``finding``) with the 3-state labels ``NEG=0 / UNC=1 / POS=2``
(:mod:`cxreval.fusion._base`; the sources fused are the *readers*):

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
same ``rng``. :func:`fuse_labels` runs several methods on a long label table and returns a
:class:`FusionResult`, which owns the files written (``FusionResult.FILES``, ``save(folder)``); scoring them
against a reference source is the job of ``cxreval fuse`` and the demo, :func:`cxreval.jobs.fuse_and_compare`.

Per-reader estimates on VinDr-CXR (a caveat, not reader skill)
-------------------------------------------------------------
VinDr-CXR (:func:`cxreval.datasets.vindr.read_vindr`) has 17 readers, 3 per image, assigned in blocks:
R1–R7 never mark a finding (R2 once), and every image on which R8–R10 mark a finding was read by exactly
R8 + R9 + R10. Fitted per finding on all 15,000 images, Dawid–Skene gives R1–R7 a sensitivity of 0 and a
specificity of 1, R8–R10 sensitivities of 0.74–0.82 and specificities of 0.97–0.99, R11–R17 sensitivities
of 0.05–0.20; MACE gives R1–R7 and R11–R17 a competence of 0 and R8–R10 about 0.1–0.2. These numbers
say which images each reader was given (normal ones, or the abnormal block), not how well they read:
a reader who only ever sees normal images and says "negative" cannot be told apart from one who would
miss every finding. Fused labels on VinDr are driven by R8–R10: over all (image, finding) items MACE
is close to FUSE_OR (micro kappa 0.99), DS to majority vote (0.93).
"""

# the method modules register their methods when imported (get_fusion, list_fusion)
from . import _neural  # noqa: F401
from ._base import BaseFusion, get_fusion, list_fusion, register_fusion
from ._dawid_skene import DawidSkene
from ._label_table import fuse_labels
from ._mace import MACE
from ._majority_vote import MajorityVote
from ._result import FusionResult

__all__ = [
    "BaseFusion",
    "FusionResult",
    "fuse_labels",
    "get_fusion",
    "list_fusion",
    "register_fusion",
    "MajorityVote",
    "DawidSkene",
    "MACE",
]
