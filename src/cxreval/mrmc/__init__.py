"""Multi-reader multi-case (MRMC) analysis of reader studies: is the model radiologist-level, under every reference?

Obuchowski–Rockette (OR) and Dorfman–Berbaum–Metz (DBM) analyses of readers' ratings by modality, with readers and
cases as random effects (Hillis's denominator degrees of freedom), the model against a panel of readers, and binary
readers' operating points on a model's ROC curve.
"""

__all__: list[str] = []

# simulation (Roe and Metz) and the size of a reader study from a pilot
from ._roe_metz import (
    ROE_METZ_SETTINGS,
    RoeMetzParameters,
    RoeMetzStudies,
    RoeMetzStudy,
    simulate_roe_metz,
    simulate_roe_metz_studies,
)

__all__ += ["ROE_METZ_SETTINGS", "RoeMetzParameters", "RoeMetzStudies", "RoeMetzStudy", "simulate_roe_metz",
            "simulate_roe_metz_studies"]
from ._sample_size import ANALYSES, MRMCSampleSizeResult, PilotVarianceComponents, mrmc_sample_size

__all__ += ["ANALYSES", "MRMCSampleSizeResult", "PilotVarianceComponents", "mrmc_sample_size"]
