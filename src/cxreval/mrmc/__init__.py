"""Multi-reader multi-case (MRMC) analysis of reader studies: is the model radiologist-level, under every reference?

Obuchowski–Rockette (OR) and Dorfman–Berbaum–Metz (DBM) analyses of readers' ratings by modality, with readers and
cases as random effects (Hillis's denominator degrees of freedom), the model against a panel of readers, and binary
readers' operating points on a model's ROC curve.
"""

# figures of merit, covariances, OR/DBM analyses and the model against the readers (arrays in, results out)
from ._dbm import DBMANOVA, DBMResult, dbm_analysis
from ._fom import COVARIANCE_METHODS, auc_covariance, empirical_auc, jackknife_auc
from ._model_vs_readers import ModelVsReadersResult, model_vs_readers
from ._or import ORComponents, ORResult, or_analysis
from ._results import (
    ModalityDifference,
    ModalityEstimate,
    MRMCAnalysis,
    MRMCTest,
    ReaderDifference,
    ReaderEstimate,
)

__all__: list[str] = [
    # figures of merit, covariances, OR/DBM analyses and the model against the readers
    "COVARIANCE_METHODS",
    "empirical_auc",
    "jackknife_auc",
    "auc_covariance",
    "or_analysis",
    "ORResult",
    "ORComponents",
    "dbm_analysis",
    "DBMResult",
    "DBMANOVA",
    "model_vs_readers",
    "ModelVsReadersResult",
    "MRMCAnalysis",
    "MRMCTest",
    "ModalityDifference",
    "ModalityEstimate",
    "ReaderDifference",
    "ReaderEstimate",
]

# simulation (Roe and Metz) and the size of a reader study from a pilot
from ._roe_metz import (  # noqa: E402
    ROE_METZ_SETTINGS,
    RoeMetzParameters,
    RoeMetzStudies,
    RoeMetzStudy,
    simulate_roe_metz,
    simulate_roe_metz_studies,
)
from ._sample_size import ANALYSES, MRMCSampleSizeResult, PilotVarianceComponents, mrmc_sample_size  # noqa: E402

__all__ += ["ROE_METZ_SETTINGS", "RoeMetzParameters", "RoeMetzStudies", "RoeMetzStudy", "simulate_roe_metz",
            "simulate_roe_metz_studies", "ANALYSES", "MRMCSampleSizeResult", "PilotVarianceComponents",
            "mrmc_sample_size"]
