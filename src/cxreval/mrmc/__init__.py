"""Multi-reader multi-case (MRMC) analysis of reader studies: is the model radiologist-level, under every reference?

Obuchowski–Rockette (OR) and Dorfman–Berbaum–Metz (DBM) analyses of readers' ratings by modality, with readers and
cases as random effects (Hillis's denominator degrees of freedom), the model against a panel of readers, and binary
readers' operating points on a model's ROC curve.

The job, :func:`evaluate_reader_study` (``cxreval mrmc``), runs them per finding under every named reference (a label
source, or the latent truth of several sources) and says under which references the model is non-inferior to the
readers. The ratings table is long: ``reader, modality, study_id, finding, rating`` (:func:`validate_ratings`).
"""

# binary readers' operating points against a model's ROC curve
from ._operating_points import MATCHINGS, PANEL, OperatingPointsResult, reader_operating_points

__all__ = ["MATCHINGS", "PANEL", "OperatingPointsResult", "reader_operating_points"]

# the job: a reader study per finding under every reference (cxreval mrmc)
from ._job import COVARIANCES, STUDY_DESIGNS, evaluate_reader_study, evaluate_reader_study_files  # noqa: E402
from ._ratings import RATING_COLUMNS, labels_to_ratings, read_ratings, validate_ratings  # noqa: E402
from ._references import LATENT  # noqa: E402
from ._result import READER_STUDY_COLUMNS, ReaderStudyResult  # noqa: E402

__all__ += ["COVARIANCES", "LATENT", "RATING_COLUMNS", "READER_STUDY_COLUMNS", "ReaderStudyResult", "STUDY_DESIGNS",
            "evaluate_reader_study", "evaluate_reader_study_files", "labels_to_ratings", "read_ratings",
            "validate_ratings"]
