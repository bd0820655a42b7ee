"""Multi-reader multi-case (MRMC) analysis of reader studies: is the model radiologist-level, under every reference?

Obuchowski–Rockette (OR) and Dorfman–Berbaum–Metz (DBM) analyses of readers' ratings by modality, with readers and
cases as random effects (Hillis's denominator degrees of freedom), the model against a panel of readers, and binary
readers' operating points on a model's ROC curve.
"""

__all__: list[str] = []

# binary readers' operating points against a model's ROC curve
from ._operating_points import MATCHINGS, PANEL, OperatingPointsResult, reader_operating_points  # noqa: E402

__all__ += ["MATCHINGS", "PANEL", "OperatingPointsResult", "reader_operating_points"]
