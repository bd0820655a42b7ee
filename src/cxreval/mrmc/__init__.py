"""Multi-reader multi-case (MRMC) analysis of reader studies: is the model radiologist-level, under every reference?

Obuchowski–Rockette (OR) and Dorfman–Berbaum–Metz (DBM) analyses of readers' ratings by modality, with readers and
cases as random effects (Hillis's denominator degrees of freedom), the model against a panel of readers, and binary
readers' operating points on a model's ROC curve.

The job of ``cxreval mrmc``, :func:`cxreval.jobs.evaluate_reader_study`, runs them per finding under every named
reference (a label source, or the latent truth of several sources, :func:`reference_truths`) and says under which
references the model is non-inferior to the readers; its result is :class:`ReaderStudyResult`. The ratings table is long: ``reader, modality, study_id, finding, rating`` (:func:`validate_ratings`).
"""

# figures of merit, covariances, OR/DBM analyses and the model against the readers (arrays in, results out)
from ._dbm import DBMResult, dbm_analysis
from ._fom import auc_covariance
from ._model_vs_readers import ModelVsReadersResult, model_vs_readers
from ._or import ORResult, or_analysis
from ._ratings import labels_to_ratings
from ._roe_metz import ROE_METZ_SETTINGS, RoeMetzStudies, simulate_roe_metz, simulate_roe_metz_studies
from ._sample_size import MRMCSampleSizeResult, PilotVarianceComponents, mrmc_sample_size

__all__ = [
    "auc_covariance",
    "or_analysis",
    "ORResult",
    "dbm_analysis",
    "DBMResult",
    "model_vs_readers",
    "ModelVsReadersResult",
    "labels_to_ratings",
    "ROE_METZ_SETTINGS",
    "RoeMetzStudies",
    "simulate_roe_metz",
    "simulate_roe_metz_studies",
    "MRMCSampleSizeResult",
    "PilotVarianceComponents",
    "mrmc_sample_size",
]
