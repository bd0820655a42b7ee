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

__all__ = [
    "auc_covariance",
    "or_analysis",
    "ORResult",
    "dbm_analysis",
    "DBMResult",
    "model_vs_readers",
    "ModelVsReadersResult",
]

# binary readers' operating points against a model's ROC curve
from ._operating_points import MATCHINGS, PANEL, OperatingPointsResult, reader_operating_points  # noqa: E402

__all__ += ["MATCHINGS", "PANEL", "OperatingPointsResult", "reader_operating_points"]

# the ratings table, the references and the result of a reader study (the job: cxreval.jobs)
from ._ratings import (  # noqa: E402
    MODALITY,
    RATING_COLUMNS,
    READER,
    ReaderArrays,
    labels_to_ratings,
    read_ratings,
    reader_arrays,
    validate_ratings,
)
from ._references import LATENT, reference_truths  # noqa: E402
from ._result import READER_STUDY_COLUMNS, ReaderStudyResult  # noqa: E402

__all__ += [
    "LATENT",
    "RATING_COLUMNS",
    "READER_STUDY_COLUMNS",
    "ReaderStudyResult",
    "MODALITY",
    "READER",
    "ReaderArrays",
    "reader_arrays",
    "labels_to_ratings",
    "read_ratings",
    "validate_ratings",
    "reference_truths",
]

# simulation (Roe and Metz) and the size of a reader study from a pilot
from ._reader_weights import READER_WEIGHTS  # noqa: E402
from ._roe_metz import (  # noqa: E402
    ROE_METZ_SETTINGS,
    RoeMetzParameters,
    RoeMetzStudies,
    RoeMetzStudy,
    simulate_roe_metz,
    simulate_roe_metz_studies,
)
from ._sample_size import ANALYSES, MRMCSampleSizeResult, PilotVarianceComponents, mrmc_sample_size  # noqa: E402

__all__ += [
    "ROE_METZ_SETTINGS",
    "RoeMetzParameters",
    "RoeMetzStudies",
    "RoeMetzStudy",
    "simulate_roe_metz",
    "simulate_roe_metz_studies",
    "ANALYSES",
    "MRMCSampleSizeResult",
    "PilotVarianceComponents",
    "mrmc_sample_size",
    "READER_WEIGHTS",
]
